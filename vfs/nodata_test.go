package vfs_test

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// TestNoDataRapid runs one sequence of calls on two file systems: in one,
// every write of the sequence's payload-free kind carries WriteNoData and
// bytes that are not zeros, in the other the same writes carry zeros; and
// "populate" is Populate and an fsync in one, a write of zeros and an fsync
// in the other. After each step the two agree on everything: bytes, stat,
// SEEK_DATA/SEEK_HOLE, the pending changes a crash explorer sees (in order;
// their sequence numbers may differ), and what a
// power cut leaves.
func TestNoDataRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const bs = 4096
		opts := []vfs.Option{vfs.WithMaxFileSize(64 * bs), vfs.WithWriteCache(rapid.Bool().Draw(t, "writeCache"))}
		fa, fb := vfs.New(opts...), vfs.New(opts...)
		a, _, err := fa.Root().Open("f", unix.O_CREAT|unix.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := fb.Root().Open("f", unix.O_CREAT|unix.O_RDWR, 0o644)
		for _, fs := range []*vfs.FS{fa, fb} {
			if err := fs.Root().Fsync(nil); err != nil { // the name survives a crash
				t.Fatal(err)
			}
		}
		offGen := rapid.Int64Range(0, 40*bs)
		lenGen := rapid.Int64Range(1, 3*bs)
		modeGen := rapid.SampledFrom([]vfs.WriteMode{0, vfs.WriteDirect, vfs.WriteSync, vfs.WriteDSync, vfs.WriteAppend})
		both := func(name string, f func(i *vfs.Inode) error) {
			ea, eb := f(a), f(b)
			if ea != eb {
				t.Fatalf("%s: %v and %v", name, ea, eb)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"writeNoData": func(t *rapid.T) {
				off, n, how := offGen.Draw(t, "off"), lenGen.Draw(t, "n"), modeGen.Draw(t, "how")
				p := bytes.Repeat([]byte{byte(rapid.IntRange(1, 255).Draw(t, "c"))}, int(n))
				na, ea, erra := a.Write(p, off, how|vfs.WriteNoData, nil)
				nb, eb, errb := b.Write(make([]byte, n), off, how, nil)
				if na != nb || ea != eb || erra != errb {
					t.Fatalf("write: %d %d %v, %d %d %v", na, ea, erra, nb, eb, errb)
				}
			},
			"writeData": func(t *rapid.T) {
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				p := bytes.Repeat([]byte{byte(rapid.IntRange(1, 255).Draw(t, "c"))}, int(n))
				both("write", func(i *vfs.Inode) error { _, err := i.WriteAt(p, off); return err })
			},
			"populate": func(t *rapid.T) {
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				if err := a.Populate(off, n); err != nil {
					t.Fatal(err)
				}
				if _, err := b.WriteAt(make([]byte, n), off); err != nil {
					t.Fatal(err)
				}
				both("fsync", func(i *vfs.Inode) error { return i.Fsync(nil) })
			},
			"truncate": func(t *rapid.T) {
				n := offGen.Draw(t, "size")
				both("truncate", func(i *vfs.Inode) error { return i.Truncate(n) })
			},
			"fallocate": func(t *rapid.T) {
				mode := rapid.SampledFrom([]uint32{0, vfs.FallocKeepSize, vfs.FallocPunchHole | vfs.FallocKeepSize, vfs.FallocZeroRange}).Draw(t, "mode")
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				both("fallocate", func(i *vfs.Inode) error { return i.Fallocate(mode, off, n) })
			},
			"sync": func(t *rapid.T) {
				switch rapid.IntRange(0, 2).Draw(t, "how") {
				case 0:
					both("fsync", func(i *vfs.Inode) error { return i.Fsync(nil) })
				case 1:
					both("fdatasync", func(i *vfs.Inode) error { return i.Fdatasync(nil) })
				case 2:
					off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
					both("sync_file_range", func(i *vfs.Inode) error { return i.SyncFileRange(off, n) })
				}
			},
			"": func(t *rapid.T) {
				var sa, sb vfs.Stat
				a.Stat(&sa)
				b.Stat(&sb)
				if sa != sb {
					t.Fatalf("stat %+v, %+v", sa, sb)
				}
				if !bytes.Equal(readAllOf(a), readAllOf(b)) {
					t.Fatalf("the bytes differ")
				}
				for off := int64(0); off < sa.Size; off += bs / 2 {
					da, _ := a.SeekData(off)
					db, _ := b.SeekData(off)
					ha, _ := a.SeekHole(off)
					hb, _ := b.SeekHole(off)
					if da != db || ha != hb {
						t.Fatalf("at %d: SEEK_DATA %d and %d, SEEK_HOLE %d and %d", off, da, db, ha, hb)
					}
				}
				pa, pb := fa.Pending(), fb.Pending()
				if len(pa) != len(pb) {
					t.Fatalf("pending %v, %v", pa, pb)
				}
				for k := range pa {
					x, y := pa[k], pb[k]
					if x.Kind != y.Kind || x.Off != y.Off || x.Len != y.Len || x.Size != y.Size {
						t.Fatalf("pending %d: %+v, %+v", k, x, y)
					}
				}
				ca, cb := fa.Crash(), fb.Crash()
				ia, erra := ca.Root().Resolve("f", true)
				ib, errb := cb.Root().Resolve("f", true)
				if erra != nil || errb != nil {
					t.Fatalf("after a crash: %v, %v", erra, errb)
				}
				{
					var ta, tb vfs.Stat
					ia.Stat(&ta)
					ib.Stat(&tb)
					if ta.Size != tb.Size || ta.Blocks != tb.Blocks || !bytes.Equal(readAllOf(ia), readAllOf(ib)) {
						t.Fatalf("after a crash: %+v, %+v", ta, tb)
					}
				}
			},
		})
	})
}

func readAllOf(i *vfs.Inode) []byte {
	p := make([]byte, i.Size())
	n, _ := i.ReadAt(p, 0)
	return p[:n]
}

package vfs_test

import (
	"bytes"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// snapshot returns every name under the root of fs with what it holds: "dir",
// "file:" + content, or "link:" + target. Keys are absolute paths.
func snapshot(t require.TestingT, fs *vfs.FS) map[string]string {
	out := map[string]string{}
	walkTree(t, fs, func(cp string, c *vfs.Inode) {
		switch {
		case c.IsDir():
			out[cp] = "dir"
		case c.IsSymlink():
			out[cp] = "link:" + c.Target()
		default:
			b := make([]byte, c.Size())
			_, err := c.ReadAt(b, 0)
			require.NoError(t, err)
			out[cp] = "file:" + string(b)
		}
	})
	return out
}

// walkTree calls fn for every name under the root of fs, depth first in name
// order, with its absolute path and its inode.
func walkTree(t require.TestingT, fs *vfs.FS, fn func(p string, c *vfs.Inode)) {
	var walk func(dir *vfs.Inode, p string)
	walk = func(dir *vfs.Inode, p string) {
		ents, err := dir.Dirents()
		require.NoError(t, err)
		for _, e := range ents[2:] {
			c, err := dir.Resolve(e.Name, false)
			require.NoError(t, err)
			cp := path.Join(p, e.Name)
			fn(cp, c)
			if c.IsDir() {
				walk(c, cp)
			}
		}
	}
	walk(fs.Root(), "/")
}

// durOracle is the test's own statement of the durability rules of doc.go, built
// from the operations alone: per file, its content at its last fsync/fdatasync
// (plus the O_DIRECT blocks the device flushed); per name, durable once a sync of
// its directory committed it, namespace operations committing in order (the
// journal): syncing a directory commits every operation up to the last one that
// touches it.
type durOracle struct {
	bs         int64
	writeCache bool
	root       uint64
	// Running state.
	names   map[uint64]map[string]uint64 // directory → name → inode
	isDir   map[uint64]bool
	content map[uint64][]byte
	// Durable state.
	durNames map[uint64]map[string]uint64
	durData  map[uint64][]byte // may extend past durSize (flushed O_DIRECT blocks)
	durSize  map[uint64]int64
	log      []logOp
	devCache []devBlock // O_DIRECT blocks in the device's write cache
}

type logOp struct {
	dirs  []uint64
	apply func(dur map[uint64]map[string]uint64)
}

type devBlock struct {
	ino   uint64
	block int64
	data  []byte
}

func newDurOracle(fs *vfs.FS) *durOracle {
	r := fs.Root().Ino()
	return &durOracle{
		bs: fs.BlockSize(), writeCache: fs.WriteCache(), root: r,
		names: map[uint64]map[string]uint64{r: {}}, isDir: map[uint64]bool{r: true}, content: map[uint64][]byte{},
		durNames: map[uint64]map[string]uint64{r: {}}, durData: map[uint64][]byte{}, durSize: map[uint64]int64{},
	}
}

func (o *durOracle) logOp(dirs []uint64, apply func(dur map[uint64]map[string]uint64)) {
	o.log = append(o.log, logOp{dirs, apply})
}

func (o *durOracle) created(dir uint64, name string, ino uint64, isDir bool) {
	o.names[dir][name] = ino
	o.isDir[ino] = isDir
	if isDir {
		o.names[ino] = map[string]uint64{}
	}
	o.logOp([]uint64{dir}, func(dur map[uint64]map[string]uint64) {
		dur[dir][name] = ino
		if isDir && dur[ino] == nil {
			dur[ino] = map[string]uint64{}
		}
	})
}

func (o *durOracle) removed(dir uint64, name string) {
	delete(o.names[dir], name)
	o.logOp([]uint64{dir}, func(dur map[uint64]map[string]uint64) { delete(dur[dir], name) })
}

func (o *durOracle) renamed(d1 uint64, n1 string, d2 uint64, n2 string) {
	ino := o.names[d1][n1]
	delete(o.names[d1], n1)
	o.names[d2][n2] = ino
	o.logOp([]uint64{d1, d2}, func(dur map[uint64]map[string]uint64) {
		if dur[d1][n1] == ino {
			delete(dur[d1], n1)
		}
		dur[d2][n2] = ino
	})
}

func (o *durOracle) ensureDirs(dur map[uint64]map[string]uint64) {
	for _, op := range o.log {
		for _, d := range op.dirs {
			if dur[d] == nil {
				dur[d] = map[string]uint64{}
			}
		}
	}
}

// commit applies the log up to the last operation touching dir (all with dir 0).
func (o *durOracle) commit(dir uint64) {
	last := len(o.log) - 1
	for dir != 0 && last >= 0 && !slices.Contains(o.log[last].dirs, dir) {
		last--
	}
	o.ensureDirs(o.durNames)
	for _, op := range o.log[:last+1] {
		op.apply(o.durNames)
	}
	o.log = slices.Delete(o.log, 0, last+1)
}

func (o *durOracle) flush() {
	for _, b := range o.devCache {
		d := o.durData[b.ino]
		if end := (b.block + 1) * o.bs; int64(len(d)) < end {
			d = append(d, make([]byte, end-int64(len(d)))...)
		}
		copy(d[b.block*o.bs:], b.data)
		o.durData[b.ino] = d
	}
	o.devCache = nil
}

func (o *durOracle) fsyncFile(ino uint64) {
	o.flush()
	o.durData[ino] = slices.Clone(o.content[ino])
	o.durSize[ino] = int64(len(o.content[ino]))
}

func (o *durOracle) sync() {
	o.flush()
	o.commit(0)
	for ino := range o.content {
		o.fsyncFile(ino)
	}
}

// direct records an O_DIRECT write of [off, off+n): its blocks, as the page cache
// holds them now, go to the device cache (or to media without a write cache).
func (o *durOracle) direct(ino uint64, off, n int64) {
	c := o.content[ino]
	for b := off / o.bs; b <= (off+n-1)/o.bs; b++ {
		blk := make([]byte, o.bs)
		if b*o.bs < int64(len(c)) {
			copy(blk, c[b*o.bs:])
		}
		o.devCache = append(o.devCache, devBlock{ino, b, blk})
	}
	if !o.writeCache {
		o.flush()
	}
}

// tree renders a namespace with contents as snapshot does.
func (o *durOracle) tree(names map[uint64]map[string]uint64, file func(ino uint64) string) map[string]string {
	out := map[string]string{}
	var walk func(dir uint64, p string)
	walk = func(dir uint64, p string) {
		for name, ino := range names[dir] {
			cp := path.Join(p, name)
			if o.isDir[ino] {
				out[cp] = "dir"
				walk(ino, cp)
			} else {
				out[cp] = "file:" + file(ino)
			}
		}
	}
	walk(o.root, "/")
	return out
}

func (o *durOracle) running() map[string]string {
	return o.tree(o.names, func(ino uint64) string { return string(o.content[ino]) })
}

func (o *durOracle) durable() map[string]string {
	return o.tree(o.durNames, func(ino uint64) string {
		d, size := o.durData[ino], o.durSize[ino]
		if int64(len(d)) < size {
			d = append(slices.Clone(d), make([]byte, size-int64(len(d)))...)
		}
		return string(d[:size])
	})
}

// paths lists the running names, sorted, each with its directory and inode.
type entry struct {
	path string
	dir  uint64
	name string
	ino  uint64
}

func (o *durOracle) entries(wantDir bool) []entry {
	var out []entry
	var walk func(dir uint64, p string)
	walk = func(dir uint64, p string) {
		for _, name := range slices.Sorted(maps.Keys(o.names[dir])) {
			ino := o.names[dir][name]
			cp := path.Join(p, name)
			if o.isDir[ino] == wantDir {
				out = append(out, entry{cp, dir, name, ino})
			}
			if o.isDir[ino] {
				walk(ino, cp)
			}
		}
	}
	if wantDir {
		out = append(out, entry{"/", o.root, "", o.root})
	}
	walk(o.root, "/")
	return out
}

func diffTrees(got, want map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(got)) {
		g, w := got[k], want[k]
		if w != g {
			at := 0
			for at < len(g) && at < len(w) && g[at] == w[at] {
				at++
			}
			fmt.Fprintf(&b, "  %s: got %d bytes, want %d; first difference at %d: got %.24q, want %.24q\n",
				k, len(g), len(w), at, g[at:], w[at:])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if _, ok := got[k]; !ok {
			fmt.Fprintf(&b, "  %s: missing, want %.40q\n", k, want[k])
		}
	}
	return b.String()
}

// TestDurabilityRapid: after any sequence of operations, Crash() leaves exactly
// what the oracle says is durable, CrashWith keeping everything leaves the running
// state, and RandomCrash is deterministic.
func TestDurabilityRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const bs = 512 // the unit of offsets; the block size varies
		fs := vfs.New(vfs.WithBlockSize(rapid.SampledFrom([]int64{512, 1024, 4096}).Draw(t, "blockSize")),
			vfs.WithWriteCache(rapid.Bool().Draw(t, "writeCache")))
		o := newDurOracle(fs)
		inodes := map[uint64]*vfs.Inode{fs.Root().Ino(): fs.Root()}
		names := rapid.SampledFrom([]string{"a", "b", "c"})
		pick := func(t *rapid.T, dirs bool, label string) (entry, bool) {
			es := o.entries(dirs)
			if len(es) == 0 {
				return entry{}, false
			}
			return rapid.SampledFrom(es).Draw(t, label), true
		}
		target := func(t *rapid.T) (uint64, string, string) {
			d, _ := pick(t, true, "dir")
			n := names.Draw(t, "name")
			return d.ino, n, path.Join(d.path, n)
		}
		t.Repeat(map[string]func(*rapid.T){
			"create": func(t *rapid.T) {
				dir, name, p := target(t)
				if _, ok := o.names[dir][name]; ok {
					t.Skip("exists")
				}
				ino, created, err := fs.Root().Open(p, unix.O_CREAT|unix.O_RDWR, 0o644)
				if err != nil || !created {
					t.Fatalf("create %s: %v", p, err)
				}
				inodes[ino.Ino()] = ino
				o.created(dir, name, ino.Ino(), false)
				o.content[ino.Ino()] = nil
			},
			"mkdir": func(t *rapid.T) {
				dir, name, p := target(t)
				if _, ok := o.names[dir][name]; ok {
					t.Skip("exists")
				}
				if strings.Count(p, "/") > 3 {
					t.Skip("deep enough")
				}
				if err := fs.Root().Mkdir(p, 0o755); err != nil {
					t.Fatalf("mkdir %s: %v", p, err)
				}
				ino, _ := fs.Root().Resolve(p, false)
				inodes[ino.Ino()] = ino
				o.created(dir, name, ino.Ino(), true)
			},
			"write": func(t *rapid.T) {
				f, ok := pick(t, false, "file")
				if !ok {
					t.Skip("no file")
				}
				off := rapid.Int64Range(0, 6*bs).Draw(t, "off")
				n := rapid.Int64Range(1, 2*bs).Draw(t, "n")
				how := rapid.SampledFrom([]vfs.WriteMode{0, 0, 0, vfs.WriteDirect, vfs.WriteDSync, vfs.WriteSync}).Draw(t, "how")
				p := bytes.Repeat([]byte{byte(rapid.IntRange('A', 'Z').Draw(t, "c"))}, int(n))
				if _, _, err := inodes[f.ino].Write(p, off, how, nil); err != nil {
					t.Fatal(err)
				}
				c := o.content[f.ino]
				if int64(len(c)) < off+n {
					c = append(c, make([]byte, off+n-int64(len(c)))...)
				}
				copy(c[off:], p)
				o.content[f.ino] = c
				switch how {
				case vfs.WriteDirect:
					o.direct(f.ino, off, n)
				case vfs.WriteDSync, vfs.WriteSync:
					o.fsyncFile(f.ino)
				}
			},
			"truncate": func(t *rapid.T) {
				f, ok := pick(t, false, "file")
				if !ok {
					t.Skip("no file")
				}
				size := rapid.Int64Range(0, 6*bs).Draw(t, "size")
				if err := inodes[f.ino].Truncate(size); err != nil {
					t.Fatal(err)
				}
				c := o.content[f.ino]
				if int64(len(c)) < size {
					c = append(c, make([]byte, size-int64(len(c)))...)
				}
				o.content[f.ino] = c[:size]
			},
			"rename": func(t *rapid.T) {
				src, ok := pick(t, rapid.Bool().Draw(t, "dir"), "src")
				if !ok || src.path == "/" {
					t.Skip("nothing to rename")
				}
				dir, name, p := target(t)
				err := fs.Root().Rename(src.path, fs.Root(), p, 0)
				if err != nil {
					t.Skip(fmt.Sprintf("rename %s %s: %v", src.path, p, err))
				}
				if old, ok := o.names[dir][name]; ok && old == src.ino {
					return // same inode: nothing happens
				}
				o.renamed(src.dir, src.name, dir, name)
			},
			"link": func(t *rapid.T) {
				f, ok := pick(t, false, "file")
				if !ok {
					t.Skip("no file")
				}
				dir, name, p := target(t)
				if _, ok := o.names[dir][name]; ok {
					t.Skip("exists")
				}
				if err := fs.Root().Link(f.path, fs.Root(), p, false); err != nil {
					t.Fatalf("link %s %s: %v", f.path, p, err)
				}
				o.created(dir, name, f.ino, false)
			},
			"unlink": func(t *rapid.T) {
				f, ok := pick(t, false, "file")
				if !ok {
					t.Skip("no file")
				}
				if err := fs.Root().Unlink(f.path); err != nil {
					t.Fatal(err)
				}
				o.removed(f.dir, f.name)
			},
			"rmdir": func(t *rapid.T) {
				d, _ := pick(t, true, "dir")
				if d.path == "/" || len(o.names[d.ino]) > 0 {
					t.Skip("root or not empty")
				}
				if err := fs.Root().Rmdir(d.path); err != nil {
					t.Fatal(err)
				}
				o.removed(d.dir, d.name)
			},
			"fsync": func(t *rapid.T) {
				f, ok := pick(t, false, "file")
				if !ok {
					t.Skip("no file")
				}
				var err error
				if rapid.Bool().Draw(t, "datasync") {
					err = inodes[f.ino].Fdatasync(nil)
				} else {
					err = inodes[f.ino].Fsync(nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				o.fsyncFile(f.ino)
			},
			"fsync dir": func(t *rapid.T) {
				d, _ := pick(t, true, "dir")
				if err := inodes[d.ino].Fsync(nil); err != nil {
					t.Fatal(err)
				}
				o.flush()
				o.commit(d.ino)
			},
			"sync": func(t *rapid.T) {
				if err := fs.Sync(); err != nil {
					t.Fatal(err)
				}
				o.sync()
			},
			"": func(t *rapid.T) {
				if d := diffTrees(snapshot(t, fs), o.running()); d != "" {
					t.Fatalf("running state differs from the oracle:\n%s", d)
				}
				if d := diffTrees(snapshot(t, fs.Crash()), o.durable()); d != "" {
					t.Fatalf("Crash() differs from the oracle's durable state:\n%s", d)
				}
				all := make([]vfs.Survival, len(fs.Pending()))
				for k := range all {
					all[k].Keep = true
				}
				c, err := fs.CrashWith(all)
				if err != nil {
					t.Fatal(err)
				}
				if d := diffTrees(snapshot(t, c), o.running()); d != "" {
					t.Fatalf("CrashWith(everything) differs from the running state:\n%s", d)
				}
				seed := rapid.Uint64().Draw(t, "seed")
				m := rapid.SampledFrom([]vfs.Model{vfs.Strict, vfs.Prefix, vfs.Subset, vfs.Torn}).Draw(t, "model")
				a, b := snapshot(t, fs.RandomCrash(m, seed)), snapshot(t, fs.RandomCrash(m, seed))
				if d := diffTrees(a, b); d != "" {
					t.Fatalf("RandomCrash(%v, %d) is not deterministic:\n%s", m, seed, d)
				}
			},
		})
	})
}

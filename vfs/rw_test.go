package vfs_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// newFile returns a fresh regular file /f of a new file system.
func newFile(t testing.TB, opts ...vfs.Option) (*vfs.FS, *vfs.Inode) {
	t.Helper()
	fs := vfs.New(opts...)
	ino, created, err := fs.Root().Open("f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	require.True(t, created)
	return fs, ino
}

func readAll(t testing.TB, ino *vfs.Inode) []byte {
	t.Helper()
	b := make([]byte, ino.Size())
	n, err := ino.ReadAt(b, 0)
	require.NoError(t, err)
	require.Equal(t, len(b), n)
	return b
}

func blocks(ino *vfs.Inode) int64 {
	var st vfs.Stat
	ino.Stat(&st)
	return st.Blocks
}

// seeks lists SEEK_DATA and SEEK_HOLE answers from off (-1 for ENXIO).
func seeks(ino *vfs.Inode, off int64) [2]int64 {
	d, err := ino.SeekData(off)
	if err != nil {
		d = -1
	}
	h, err := ino.SeekHole(off)
	if err != nil {
		h = -1
	}
	return [2]int64{d, h}
}

func TestWriteFarPastEndMakesHole(t *testing.T) {
	_, f := newFile(t)
	n, err := f.WriteAt([]byte("head"), 0)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	n, err = f.WriteAt([]byte("tail"), 100*gib)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.Equal(t, 100*gib+4, f.Size())
	require.Equal(t, int64(16), blocks(f), "two 4 KiB blocks, nothing for the gap")
	require.Equal(t, [2]int64{0, 4096}, seeks(f, 0))
	require.Equal(t, [2]int64{100 * gib, 4096}, seeks(f, 4096))
	require.Equal(t, [2]int64{100 * gib, 100*gib + 4}, seeks(f, 100*gib))
	require.Equal(t, [2]int64{-1, -1}, seeks(f, 100*gib+4))
	b := make([]byte, 8)
	n, err = f.ReadAt(b, 50*gib)
	require.NoError(t, err)
	require.Equal(t, 8, n)
	require.Equal(t, make([]byte, 8), b)
	n, err = f.ReadAt(b, 100*gib)
	require.NoError(t, err)
	require.Equal(t, 4, n, "short at end of file")
	require.Equal(t, "tail", string(b[:n]))
	n, err = f.ReadAt(b, 200*gib)
	require.NoError(t, err)
	require.Equal(t, 0, n)
}

func TestTruncate(t *testing.T) {
	_, f := newFile(t)
	_, err := f.WriteAt(bytes.Repeat([]byte{'x'}, 10000), 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(5000))
	require.Equal(t, int64(5000), f.Size())
	require.Equal(t, int64(16), blocks(f))
	require.NoError(t, f.Truncate(1*mib)) // up: a hole, the dropped bytes do not come back
	got := readAll(t, f)
	require.Equal(t, bytes.Repeat([]byte{'x'}, 5000), got[:5000])
	require.Equal(t, make([]byte, mib-5000), got[5000:])
	require.Equal(t, int64(16), blocks(f))
	require.Equal(t, [2]int64{-1, -1}, seeks(f, mib), "SEEK at EOF")
	require.Equal(t, [2]int64{0, 8192}, seeks(f, 0))
	require.NoError(t, f.Truncate(0))
	require.Equal(t, int64(0), blocks(f))
	require.Equal(t, unix.EINVAL, f.Truncate(-1))
	require.Equal(t, unix.EFBIG, f.Truncate(f.FS().MaxFileSize()+1))
	require.NoError(t, f.Truncate(f.FS().MaxFileSize()))
}

func TestMaxFileSize(t *testing.T) {
	fs, f := newFile(t)
	max := fs.MaxFileSize()
	require.Equal(t, int64(1)<<44-4096, max, "ext4 with 4 KiB blocks")
	_, err := f.WriteAt([]byte("x"), max)
	require.Equal(t, unix.EFBIG, err)
	n, err := f.WriteAt([]byte("xy"), max-1)
	require.NoError(t, err)
	require.Equal(t, 1, n, "cut short at s_maxbytes")
	require.Equal(t, max, f.Size())
	require.Equal(t, unix.EFBIG, f.Fallocate(0, max-4096, 8192))
	require.Equal(t, unix.EFBIG, f.Fallocate(vfs.FallocPunchHole|vfs.FallocKeepSize, max-4096, 8192))
	require.Equal(t, unix.EFBIG, f.Fallocate(vfs.FallocZeroRange, max-4096, 8192))
	_, _, err = f.Write([]byte("z"), 0, vfs.WriteAppend, nil)
	require.Equal(t, unix.EFBIG, err)
	_, err = f.WriteAt([]byte("x"), -1)
	require.Equal(t, unix.EINVAL, err)
	_, err = f.ReadAt(make([]byte, 1), -1)
	require.Equal(t, unix.EINVAL, err)

	small, g := newFile(t, vfs.WithMaxFileSize(1*mib))
	require.Equal(t, mib, small.MaxFileSize())
	_, err = g.WriteAt([]byte("x"), mib)
	require.Equal(t, unix.EFBIG, err)
}

func TestFallocateModes(t *testing.T) {
	const bs = 4096
	type step struct {
		mode   uint32
		off, n int64
	}
	for _, c := range []struct {
		name   string
		steps  []step
		size   int64
		blocks int64 // in 512-byte units
		seek0  [2]int64
		err    error
	}{
		{"default grows the size, reads zeros", []step{{0, 0, 3 * bs}}, 3 * bs, 24, [2]int64{-1 + 0, 3 * bs}, nil},
		{"KEEP_SIZE allocates beyond EOF", []step{{vfs.FallocKeepSize, 0, 3 * bs}}, 16 * bs, 24 + 0, [2]int64{4 * bs, 8 * bs}, nil},
		{"PUNCH_HOLE|KEEP_SIZE frees whole blocks", []step{{vfs.FallocPunchHole | vfs.FallocKeepSize, 4 * bs, 4 * bs}}, 16 * bs, 0, [2]int64{8 * bs, 4 * bs}, nil},
		{"PUNCH_HOLE needs KEEP_SIZE", []step{{vfs.FallocPunchHole, 0, bs}}, 16 * bs, 0, [2]int64{}, unix.EOPNOTSUPP},
		{"ZERO_RANGE past EOF grows", []step{{vfs.FallocZeroRange, 15 * bs, 4 * bs}}, 19 * bs, 0, [2]int64{}, nil},
		{"ZERO_RANGE|KEEP_SIZE keeps size", []step{{vfs.FallocZeroRange | vfs.FallocKeepSize, 15 * bs, 4 * bs}}, 16 * bs, 0, [2]int64{}, nil},
		{"zero length", []step{{0, 0, 0}}, 16 * bs, 0, [2]int64{}, unix.EINVAL},
		{"negative offset", []step{{0, -1, 10}}, 16 * bs, 0, [2]int64{}, unix.EINVAL},
		{"unknown mode", []step{{0x100, 0, 10}}, 16 * bs, 0, [2]int64{}, unix.EOPNOTSUPP},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, f := newFile(t)
			if c.name[0] != 'd' {
				// A file with data in blocks 4..7 and 16 blocks long.
				_, err := f.WriteAt(bytes.Repeat([]byte{'d'}, 4*bs), 4*bs)
				require.NoError(t, err)
				require.NoError(t, f.Truncate(16*bs))
			}
			before := readAll(t, f)
			var err error
			for _, s := range c.steps {
				err = f.Fallocate(s.mode, s.off, s.n)
			}
			require.Equal(t, c.err, err)
			require.Equal(t, c.size, f.Size())
			got := readAll(t, f)
			s := c.steps[0]
			want := append([]byte(nil), before...)
			if c.size > int64(len(want)) {
				want = append(want, make([]byte, c.size-int64(len(want)))...)
			}
			if err == nil && s.mode&(vfs.FallocPunchHole|vfs.FallocZeroRange) != 0 {
				clear(want[s.off:min(s.off+s.n, c.size)])
			}
			require.Equal(t, want, got)
			switch c.name {
			case "default grows the size, reads zeros":
				require.Equal(t, c.blocks, blocks(f))
				// Unwritten extents are holes for SEEK_DATA on ext4 unless their pages
				// are cached, and readAll above just read them.
				require.Equal(t, int64(0), seeks(f, 0)[0])
			case "KEEP_SIZE allocates beyond EOF":
				require.Equal(t, int64(56), blocks(f), "4 written + 3 unwritten blocks = 7 × 8")
			case "PUNCH_HOLE|KEEP_SIZE frees whole blocks":
				require.Equal(t, int64(0), blocks(f))
				require.Equal(t, [2]int64{-1, 0}, seeks(f, 0))
			}
		})
	}
}

func TestSeekDataHole(t *testing.T) {
	_, f := newFile(t)
	const bs = 4096
	// Data in [8K, 12K) and [40K, 41K), file 64 KiB.
	_, err := f.WriteAt(bytes.Repeat([]byte{1}, bs), 2*bs)
	require.NoError(t, err)
	_, err = f.WriteAt(bytes.Repeat([]byte{1}, 1024), 10*bs)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(16*bs))
	for _, c := range []struct {
		off  int64
		want [2]int64
	}{
		{0, [2]int64{2 * bs, 0}},
		{2*bs - 1, [2]int64{2 * bs, 2*bs - 1}},
		{2 * bs, [2]int64{2 * bs, 3 * bs}},
		{2*bs + 100, [2]int64{2*bs + 100, 3 * bs}},
		{3 * bs, [2]int64{10 * bs, 3 * bs}},
		{10*bs + 2000, [2]int64{10*bs + 2000, 11 * bs}}, // a partly written block is data to its end
		{11 * bs, [2]int64{-1, 11 * bs}},
		{16*bs - 1, [2]int64{-1, 16*bs - 1}},
		{16 * bs, [2]int64{-1, -1}},
		{-1, [2]int64{-1, -1}},
	} {
		require.Equal(t, c.want, seeks(f, c.off), "off %d", c.off)
	}
	// A directory answers as a file of one block of data.
	fs := f.FS()
	require.NoError(t, fs.Root().Mkdir("d", 0o755))
	d, _ := fs.Root().Resolve("d", true)
	require.Equal(t, [2]int64{0, 4096}, seeks(d, 0))
}

// TestReadCachesUnwritten: a read of an unwritten (fallocated) block puts its page
// in the page cache, and SEEK_DATA then reports it as data (Linux 6.18, ext4).
func TestReadCachesUnwritten(t *testing.T) {
	_, f := newFile(t)
	require.NoError(t, f.Fallocate(0, 0, 16384))
	require.Equal(t, [2]int64{-1, 0}, seeks(f, 0))
	_, err := f.ReadAt(make([]byte, 100), 4096)
	require.NoError(t, err)
	require.Equal(t, [2]int64{4096, 0}, seeks(f, 0))
	require.Equal(t, [2]int64{4096, 8192}, seeks(f, 4096))
}

func TestReadWriteNotRegular(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	_, err := r.ReadAt(make([]byte, 1), 0)
	require.Equal(t, unix.EISDIR, err)
	_, err = r.WriteAt([]byte("x"), 0)
	require.Equal(t, unix.EISDIR, err)
	require.Equal(t, unix.EISDIR, r.Truncate(0))
	require.Equal(t, unix.EISDIR, r.Fallocate(0, 0, 1))
	require.NoError(t, r.Symlink("x", "l"))
	l, err := r.Resolve("l", false)
	require.NoError(t, err)
	_, err = l.ReadAt(make([]byte, 1), 0)
	require.Equal(t, unix.EINVAL, err)
}

func TestAppend(t *testing.T) {
	_, f := newFile(t)
	_, _, err := f.Write([]byte("abc"), 0, 0, nil)
	require.NoError(t, err)
	n, end, err := f.Write([]byte("de"), 0, vfs.WriteAppend, nil)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, int64(5), end)
	require.Equal(t, "abcde", string(readAll(t, f)))
}

// TestInodeDataRapid drives the inode data API with random operations and compares
// every read with a plain byte slice. SEEK_DATA/SEEK_HOLE answers are checked for
// consistency: between a hole's start and the next data everything reads zero.
func TestInodeDataRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const bs = 4096
		// The same oracle for every block size and write cache setting: what
		// reads see never depends on them.
		fs := vfs.New(vfs.WithMaxFileSize(64*bs),
			vfs.WithBlockSize(rapid.SampledFrom([]int64{512, 1024, 4096, 65536}).Draw(t, "blockSize")),
			vfs.WithWriteCache(rapid.Bool().Draw(t, "writeCache")))
		ino, _, err := fs.Root().Open("f", unix.O_CREAT|unix.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		var oracle []byte
		max := fs.MaxFileSize()
		offGen := rapid.Int64Range(0, 40*bs)
		lenGen := rapid.Int64Range(1, 3*bs)
		grow := func(n int64) {
			if n > int64(len(oracle)) {
				oracle = append(oracle, make([]byte, n-int64(len(oracle)))...)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"write": func(t *rapid.T) {
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				p := bytes.Repeat([]byte{byte(rapid.IntRange(1, 255).Draw(t, "c"))}, int(n))
				got, err := ino.WriteAt(p, off)
				if err != nil || got != int(n) {
					t.Fatalf("write: %d, %v", got, err)
				}
				grow(off + n)
				copy(oracle[off:], p)
			},
			"append": func(t *rapid.T) {
				p := []byte("appended")
				n, end, err := ino.Write(p, 12345, vfs.WriteAppend, nil)
				if int64(len(oracle)) >= max {
					if err != unix.EFBIG {
						t.Fatalf("append at the limit: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				oracle = append(oracle, p[:n]...)
				if end != int64(len(oracle)) {
					t.Fatalf("end %d, want %d", end, len(oracle))
				}
			},
			"truncate": func(t *rapid.T) {
				n := offGen.Draw(t, "size")
				if err := ino.Truncate(n); err != nil {
					t.Fatal(err)
				}
				if n < int64(len(oracle)) {
					oracle = oracle[:n]
				}
				grow(n)
			},
			"fallocate": func(t *rapid.T) {
				mode := rapid.SampledFrom([]uint32{0, vfs.FallocKeepSize, vfs.FallocPunchHole | vfs.FallocKeepSize,
					vfs.FallocZeroRange, vfs.FallocZeroRange | vfs.FallocKeepSize}).Draw(t, "mode")
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				if err := ino.Fallocate(mode, off, n); err != nil {
					t.Fatal(err)
				}
				end := min(off+n, int64(len(oracle)))
				if mode&(vfs.FallocPunchHole|vfs.FallocZeroRange) != 0 && off < end {
					clear(oracle[off:end])
				}
				if mode&vfs.FallocKeepSize == 0 {
					grow(off + n)
				}
			},
			"sync": func(t *rapid.T) {
				// Syncing changes nothing that reads see (the data is shared with
				// the durable level copy-on-write).
				var err error
				switch rapid.IntRange(0, 2).Draw(t, "how") {
				case 0:
					err = ino.Fsync(nil)
				case 1:
					err = ino.SyncFileRange(0, 0)
				case 2:
					_ = fs.Crash()
				}
				if err != nil {
					t.Fatal(err)
				}
			},
			"efbig": func(t *rapid.T) {
				n, err := ino.WriteAt([]byte("xy"), max-1)
				if err != nil || n != 1 {
					t.Fatalf("write across the limit: %d, %v", n, err)
				}
				grow(max)
				oracle[max-1] = 'x'
				if _, err := ino.WriteAt([]byte("x"), max); err != unix.EFBIG {
					t.Fatalf("write at the limit: %v", err)
				}
			},
			"read": func(t *rapid.T) {
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				p := make([]byte, n)
				got, err := ino.ReadAt(p, off)
				if err != nil {
					t.Fatal(err)
				}
				want := []byte{}
				if off < int64(len(oracle)) {
					want = oracle[off:min(off+n, int64(len(oracle)))]
				}
				if !bytes.Equal(p[:got], want) {
					t.Fatalf("read [%d,+%d): got %d bytes differing from the oracle's %d", off, n, got, len(want))
				}
			},
			"": func(t *rapid.T) {
				if ino.Size() != int64(len(oracle)) {
					t.Fatalf("size %d, oracle %d", ino.Size(), len(oracle))
				}
				// Holes read as zeros; data and holes alternate as SEEK_* says.
				size := int64(len(oracle))
				for off := int64(0); off < size; {
					h, err := ino.SeekHole(off)
					if err != nil || h < off || h > size {
						t.Fatalf("SEEK_HOLE(%d) = %d, %v (size %d)", off, h, err, size)
					}
					if h == size {
						break
					}
					d, err := ino.SeekData(h)
					if err != nil {
						d = size
					}
					if d <= h && d != size {
						t.Fatalf("SEEK_DATA(%d) = %d", h, d)
					}
					if !bytes.Equal(oracle[h:d], make([]byte, d-h)) {
						t.Fatalf("hole [%d,%d) holds data", h, d)
					}
					off = d
				}
				got := make([]byte, size)
				if n, err := ino.ReadAt(got, 0); err != nil || int64(n) != size || !bytes.Equal(got, oracle) {
					t.Fatalf("content differs from the oracle")
				}
			},
		})
	})
}

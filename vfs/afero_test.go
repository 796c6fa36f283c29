package vfs_test

import (
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"runtime"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/spf13/afero"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

func TestAferoFSTest(t *testing.T) {
	fs := vfs.New()
	files := map[string]string{
		"hello.txt":         "hello, world\n",
		"dir/a":             "a",
		"dir/sub/b":         "bb",
		"dir/sub/deeper/c":  "",
		"empty-dir/.keep":   "k",
		"big/file":          string(make([]byte, 100000)),
		"sparse/after-hole": "",
	}
	for name, content := range files {
		require.NoError(t, fs.MkdirAll("/"+dirOf(name), 0o755))
		require.NoError(t, afero.WriteFile(fs, "/"+name, []byte(content), 0o644))
	}
	f, err := fs.OpenFile("/sparse/after-hole", os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("end"), 1<<20)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, fs.Mkdir("/emptydir", 0o700))
	var names []string
	for name := range files {
		names = append(names, name)
	}
	names = append(names, "emptydir")
	require.NoError(t, fstest.TestFS(afero.NewIOFS(fs), names...))
}

func dirOf(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[:i]
		}
	}
	return ""
}

func TestAferoErrors(t *testing.T) {
	fs := vfs.New()
	_, err := fs.Open("/nope")
	require.True(t, errors.Is(err, iofs.ErrNotExist))
	var pe *iofs.PathError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, unix.ENOENT, pe.Err, "the bare errno inside")
	require.NoError(t, fs.Mkdir("/d", 0o755))
	err = fs.Mkdir("/d", 0o755)
	require.True(t, errors.Is(err, iofs.ErrExist))
	_, err = fs.OpenFile("/d", os.O_WRONLY, 0)
	require.ErrorIs(t, err, unix.EISDIR)
	f, err := fs.Create("/f")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.ErrorIs(t, f.Close(), os.ErrClosed)
	_, err = f.Write([]byte("x"))
	require.ErrorIs(t, err, os.ErrClosed)
	r, err := fs.Open("/f")
	require.NoError(t, err)
	_, err = r.Write([]byte("x"))
	require.ErrorIs(t, err, unix.EBADF)
	require.NoError(t, fs.RemoveAll("/d"))
	require.NoError(t, fs.RemoveAll("/nope"))
	require.Equal(t, "iosim", fs.Name())
}

// TestAferoOffsets: ReadAt and WriteAt never move the shared offset; a negative
// offset is EINVAL, not a panic; O_APPEND applies to every write.
func TestAferoOffsets(t *testing.T) {
	fs := vfs.New()
	f, err := fs.Create("/f")
	require.NoError(t, err)
	_, err = f.WriteString("0123456789")
	require.NoError(t, err)
	_, err = f.Seek(2, io.SeekStart)
	require.NoError(t, err)
	b := make([]byte, 3)
	_, err = f.ReadAt(b, 5)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("xy"), 8)
	require.NoError(t, err)
	n, err := f.Read(b)
	require.NoError(t, err)
	require.Equal(t, "234", string(b[:n]), "the offset was not moved by ReadAt/WriteAt")

	_, err = f.ReadAt(b, -1)
	require.ErrorIs(t, err, unix.EINVAL)
	_, err = f.WriteAt(b, -1)
	require.ErrorIs(t, err, unix.EINVAL)
	_, err = f.Seek(-100, io.SeekCurrent)
	require.ErrorIs(t, err, unix.EINVAL)
	_, err = f.Seek(0, 7)
	require.ErrorIs(t, err, unix.EINVAL)
	off, err := f.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	require.Equal(t, int64(5), off, "a failed seek leaves the offset")
	n, err = f.ReadAt(make([]byte, 5), 8)
	require.Equal(t, 2, n)
	require.Equal(t, io.EOF, err)
	require.NoError(t, f.Close())

	a, err := fs.OpenFile("/f", os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = a.WriteString("A")
	require.NoError(t, err)
	_, err = a.Seek(0, io.SeekStart)
	require.NoError(t, err)
	_, err = a.WriteString("B")
	require.NoError(t, err)
	_, err = a.WriteAt([]byte("C"), 0)
	require.Error(t, err, "as os.File, WriteAt refuses O_APPEND")
	// Another description appending meanwhile: still at the end.
	o, err := fs.OpenFile("/f", os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = o.WriteString("O")
	require.NoError(t, err)
	_, err = a.WriteString("D")
	require.NoError(t, err)
	got, err := afero.ReadFile(fs, "/f")
	require.NoError(t, err)
	require.Equal(t, "01234567xyABOD", string(got))
}

func TestAferoRenameDirectoryMovesChildren(t *testing.T) {
	fs := vfs.New()
	require.NoError(t, fs.MkdirAll("/a/b/c", 0o755))
	require.NoError(t, afero.WriteFile(fs, "/a/b/c/f", []byte("x"), 0o644))
	require.NoError(t, fs.Rename("/a", "/z"))
	got, err := afero.ReadFile(fs, "/z/b/c/f")
	require.NoError(t, err)
	require.Equal(t, "x", string(got))
	_, err = fs.Stat("/a/b/c/f")
	require.ErrorIs(t, err, iofs.ErrNotExist)
	_, err = fs.Stat("/a")
	require.ErrorIs(t, err, iofs.ErrNotExist)
	names, err := afero.ReadDir(fs, "/z/b")
	require.NoError(t, err)
	require.Len(t, names, 1)
	require.Equal(t, "c", names[0].Name())
	var le *os.LinkError
	require.ErrorAs(t, fs.Rename("/nope", "/x"), &le)
}

// TestAferoSyncIsDurable: File.Sync is fsync, and Sync of an opened directory
// makes its entries durable.
func TestAferoSyncIsDurable(t *testing.T) {
	fs := vfs.New()
	require.NoError(t, fs.Mkdir("/d", 0o755))
	f, err := fs.Create("/d/f")
	require.NoError(t, err)
	_, err = f.WriteString("durable")
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	require.Empty(t, snapshot(t, fs.Crash()), "no durable name yet")
	root, err := fs.Open("/")
	require.NoError(t, err)
	require.NoError(t, root.Sync())
	require.Equal(t, map[string]string{"/d": "dir"}, snapshot(t, fs.Crash()))
	d, err := fs.Open("/d")
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	require.Equal(t, map[string]string{"/d": "dir", "/d/f": "file:durable"}, snapshot(t, fs.Crash()))
	_, err = f.WriteString(" and lost")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.Equal(t, "file:durable", snapshot(t, fs.Crash())["/d/f"])

	// O_SYNC: every write is durable.
	s, err := fs.OpenFile("/d/f", os.O_WRONLY|os.O_SYNC, 0)
	require.NoError(t, err)
	_, err = s.WriteAt([]byte("D"), 0)
	require.NoError(t, err)
	require.Equal(t, "file:Durable and lost", snapshot(t, fs.Crash())["/d/f"])
}

// TestAferoSparseWrite: a write far past the end makes a hole; memory does not
// grow with the gap (afero's MemMapFs allocates it).
func TestAferoSparseWrite(t *testing.T) {
	fs := vfs.New()
	f, err := fs.Create("/f")
	require.NoError(t, err)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = f.WriteAt([]byte("x"), 1<<40)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("y"), 1<<30)
	require.NoError(t, err)
	runtime.ReadMemStats(&after)
	require.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(1<<20))
	fi, err := f.Stat()
	require.NoError(t, err)
	require.Equal(t, int64(1<<40+1), fi.Size())
	require.Equal(t, int64(16), fi.Sys().(*vfs.Stat).Blocks)
	b := make([]byte, 4)
	_, err = f.ReadAt(b, 1<<39)
	require.NoError(t, err)
	require.Equal(t, make([]byte, 4), b)
	runtime.KeepAlive(f)
}

func TestAferoReaddirAndStat(t *testing.T) {
	fs := vfs.New()
	for _, n := range []string{"/c", "/a", "/b"} {
		require.NoError(t, afero.WriteFile(fs, n, []byte(n), 0o640))
	}
	require.NoError(t, fs.SymlinkIfPossible("a", "/l"))
	d, err := fs.Open("/")
	require.NoError(t, err)
	first, err := d.Readdirnames(2)
	require.NoError(t, err)
	rest, err := d.Readdirnames(10)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b", "c", "l"}, append(first, rest...))
	_, err = d.Readdirnames(1)
	require.Equal(t, io.EOF, err)
	fi, _, err := fs.LstatIfPossible("/l")
	require.NoError(t, err)
	require.Equal(t, os.ModeSymlink, fi.Mode()&os.ModeType)
	fi, err = fs.Stat("/l")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode())
	target, err := fs.ReadlinkIfPossible("/l")
	require.NoError(t, err)
	require.Equal(t, "a", target)
	require.NoError(t, fs.Chmod("/a", 0o600|os.ModeSetuid))
	fi, err = fs.Stat("/a")
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600)|os.ModeSetuid, fi.Mode())
}

// TestAferoConcurrentAt: ReadAt/WriteAt on one File from many goroutines while
// another uses Read/Seek: no race (go test -race), no offset disturbed.
func TestAferoConcurrentAt(t *testing.T) {
	fs := vfs.New()
	f, err := fs.Create("/f")
	require.NoError(t, err)
	require.NoError(t, f.Truncate(64*4096))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for k := range 200 {
				off := int64((g*200+k)%64) * 4096
				if g%2 == 0 {
					buf[0] = byte(g)
					if _, err := f.WriteAt(buf, off); err != nil {
						t.Error(err)
						return
					}
				} else if _, err := f.ReadAt(buf, off); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for k := range 500 {
		off, err := f.Seek(int64(k%10), io.SeekStart)
		require.NoError(t, err)
		require.Equal(t, int64(k%10), off)
		_, err = f.Read(make([]byte, 1))
		require.NoError(t, err)
		cur, err := f.Seek(0, io.SeekCurrent)
		require.NoError(t, err)
		require.Equal(t, int64(k%10+1), cur)
	}
	wg.Wait()
}

// TestDirentsFollowChanges: the sorted listing a directory keeps between
// changes is never stale: after every create, remove and rename, Dirents and
// Readdir give exactly the names an oracle map holds, sorted.
func TestDirentsFollowChanges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fs := vfs.New()
		require.NoError(t, fs.Mkdir("/d", 0o755))
		want := map[string]bool{}
		names := []string{"a", "b", "c", "d", "e"}
		for range rapid.IntRange(1, 30).Draw(t, "steps") {
			n := rapid.SampledFrom(names).Draw(t, "name")
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				f, err := fs.Create("/d/" + n)
				require.NoError(t, err)
				require.NoError(t, f.Close())
				want[n] = true
			case 1:
				err := fs.Remove("/d/" + n)
				require.Equal(t, want[n], err == nil)
				delete(want, n)
			case 2:
				to := rapid.SampledFrom(names).Draw(t, "to")
				err := fs.Rename("/d/"+n, "/d/"+to)
				require.Equal(t, want[n], err == nil)
				if err == nil && n != to {
					delete(want, n)
					want[to] = true
				}
			}
			var sorted []string
			for _, n := range names {
				if want[n] {
					sorted = append(sorted, n)
				}
			}
			d, err := fs.Root().Resolve("/d", true)
			require.NoError(t, err)
			ents, err := d.Dirents()
			require.NoError(t, err)
			var got []string
			for _, e := range ents[2:] {
				got = append(got, e.Name)
			}
			require.Equal(t, sorted, got)
			f, err := fs.Open("/d")
			require.NoError(t, err)
			fis, err := f.Readdir(-1)
			require.NoError(t, err)
			got = got[:0]
			for _, fi := range fis {
				got = append(got, fi.Name())
			}
			require.Equal(t, sorted, append([]string(nil), got...))
			require.NoError(t, f.Close())
		}
	})
}

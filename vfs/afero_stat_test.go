package vfs_test

import (
	"os"
	"testing"
	"time"

	"github.com/spf13/afero"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// TestAferoStatFollowsChanges: a File opened for reading answers Stat from
// what its open saw while nothing changed; after any change, through any
// path (a write or truncate through another File, a chmod, chown or chtimes,
// a link or removal of a name, a rename, a read or listing that moves atime,
// an fsync or sync, a periodic commit or writeback coming due), its Stat is
// what a stat of the inode reports at that moment.
func TestAferoStatFollowsChanges(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var opts []vfs.Option
		if rapid.Bool().Draw(t, "short periodic commit") {
			opts = append(opts, drawShortCommit(t))
		}
		fs := vfs.New(opts...)
		require.NoError(t, fs.Mkdir("/d", 0o755))
		names := []string{"/d/a", "/d/b", "/c"}
		type open struct {
			f   *vfs.File
			ino *vfs.Inode
		}
		var readers []open
		var writers []*vfs.File
		for range rapid.IntRange(1, 50).Draw(t, "steps") {
			name := rapid.SampledFrom(names).Draw(t, "name")
			other := rapid.SampledFrom(names).Draw(t, "other")
			switch rapid.IntRange(0, 13).Draw(t, "op") {
			case 0:
				if f, err := fs.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644); err == nil {
					writers = append(writers, f.(*vfs.File))
				}
			case 1, 2:
				flag := os.O_RDONLY
				if rapid.Bool().Draw(t, "truncate") {
					flag |= os.O_TRUNC // truncates, as on Linux, and reads the clock
				}
				if rapid.Bool().Draw(t, "create") {
					flag |= os.O_CREATE
				}
				if f, err := fs.OpenFile(name, flag, 0); err == nil {
					vf := f.(*vfs.File)
					readers = append(readers, open{vf, vf.Inode()})
				}
			case 3:
				if len(writers) > 0 {
					w := rapid.SampledFrom(writers).Draw(t, "writer")
					// every other block: extents enough for an extent-tree block
					off := 8192 * int64(rapid.IntRange(0, 12).Draw(t, "block pair"))
					_, _ = w.WriteAt(make([]byte, rapid.IntRange(1, 9000).Draw(t, "n")), off)
				}
			case 4:
				if len(writers) > 0 {
					_ = rapid.SampledFrom(writers).Draw(t, "writer").Truncate(int64(rapid.IntRange(0, 20000).Draw(t, "size")))
				}
			case 5:
				_ = fs.Chmod(name, os.FileMode(rapid.IntRange(0, 0o777).Draw(t, "mode")))
			case 6:
				_ = fs.Chown(name, rapid.IntRange(0, 3).Draw(t, "uid"), -1)
			case 7:
				_ = fs.Chtimes(name, time.Unix(int64(rapid.IntRange(0, 1e9).Draw(t, "atime")), 0), time.Time{})
			case 8:
				_ = fs.Root().Link(name, fs.Root(), other, false)
			case 9:
				_ = fs.Remove(name)
			case 10:
				_ = fs.Rename(name, other)
			case 11:
				if len(readers) > 0 {
					r := rapid.SampledFrom(readers).Draw(t, "reader")
					_, _ = r.f.ReadAt(make([]byte, 10), 0)
				}
				if d, err := fs.Open("/d"); err == nil {
					_, _ = d.Readdir(-1)
					_ = d.Close()
				}
			case 12:
				if len(writers) > 0 && rapid.Bool().Draw(t, "fsync") {
					_ = rapid.SampledFrom(writers).Draw(t, "writer").Sync()
				} else {
					require.NoError(t, fs.Sync())
				}
			case 13:
				if len(writers) > 0 {
					w := rapid.SampledFrom(writers).Draw(t, "writer")
					_ = w.Inode().Fallocate(vfs.FallocKeepSize, 0, int64(rapid.IntRange(1, 40000).Draw(t, "len")))
				}
			}
			for _, r := range readers {
				fi, err := r.f.Stat()
				require.NoError(t, err)
				var want vfs.Stat
				r.ino.Stat(&want)
				require.Equal(t, want, *fi.Sys().(*vfs.Stat))
				require.Equal(t, want.Size, fi.Size())
			}
		}
	})
}

// TestAferoStatSnapshotsStayPrivate: FileInfos that Stat hands out may be
// one shared snapshot (the opens of an inode share one while nothing
// changes), so what a caller does to the *Stat that Sys returns must not show
// in the FileInfo of another File, or of a later Stat.
func TestAferoStatSnapshotsStayPrivate(t *testing.T) {
	fs := vfs.New()
	require.NoError(t, afero.WriteFile(fs, "/f", []byte("hello"), 0o644))
	a, err := fs.Open("/f")
	require.NoError(t, err)
	b, err := fs.Open("/f")
	require.NoError(t, err)
	fa, err := a.Stat()
	require.NoError(t, err)
	st := fa.Sys().(*vfs.Stat)
	st.Size, st.Mode = 1<<40, vfs.S_IFDIR
	for _, f := range []afero.File{a, b} {
		fi, err := f.Stat()
		require.NoError(t, err)
		require.Equal(t, int64(5), fi.Size())
		require.Equal(t, int64(5), fi.Sys().(*vfs.Stat).Size)
		require.False(t, fi.IsDir())
	}
	require.Equal(t, int64(5), fa.Size(), "a FileInfo is a snapshot: Sys gives a copy of it")
}

// drawShortCommit draws a periodic commit and writeback expiry of some
// microseconds: with the default clock's ticks, they come due in a test.
func drawShortCommit(t *rapid.T) vfs.Option {
	return vfs.WithPeriodicCommit(time.Duration(rapid.IntRange(5, 50).Draw(t, "commit µs"))*time.Microsecond,
		time.Duration(rapid.IntRange(5, 50).Draw(t, "expire µs"))*time.Microsecond)
}

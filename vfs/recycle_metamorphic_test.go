package vfs_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/spf13/afero"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// TestCancelAndRecycleChangeNothingSeen runs one random sequence of afero
// calls — creates, partial and overlapping writes, truncations, renames,
// removals, reopenings, closes, fsyncs and syncs, in a directory made durable
// or still pending — on a file system that cancels creates with removes and
// recycles the memory of the files cancelled, and on one that does neither
// (WithCancel(false)), under a write cache, a short periodic commit or
// neither. What a program sees must not differ: every name's content, every
// open File's bytes, size and blocks. And a frozen snapshot, every change
// kept, still reads what the files held when it was taken, however much
// memory was recycled since.
func TestCancelAndRecycleChangeNothingSeen(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var opts []vfs.Option
		switch rapid.IntRange(0, 2).Draw(t, "config") {
		case 1:
			opts = append(opts, vfs.WithWriteCache(true))
		case 2:
			opts = append(opts, drawShortCommit(t))
		}
		on := vfs.New(opts...)
		off := vfs.New(append(opts[:len(opts):len(opts)], vfs.WithCancel(false))...)
		both := []*vfs.FS{on, off}
		for _, fs := range both {
			require.NoError(t, fs.Mkdir("/d", 0o755))
		}
		if rapid.Bool().Draw(t, "durable dir") {
			for _, fs := range both {
				require.NoError(t, fs.Sync())
			}
		}
		names := []string{"/a", "/b", "/d/c", "/d/e"}
		type pair [2]afero.File
		var files []pair
		type frozen struct {
			st    *vfs.CrashState
			files map[string]string
		}
		var snaps []frozen
		fill := byte('A')
		for range rapid.IntRange(1, 50).Draw(t, "steps") {
			name := rapid.SampledFrom(names).Draw(t, "name")
			other := rapid.SampledFrom(names).Draw(t, "other")
			var errs [2]string
			each := func(fn func(i int, fs *vfs.FS) error) {
				for i, fs := range both {
					errs[i] = fmt.Sprint(fn(i, fs))
				}
				require.Equal(t, errs[0], errs[1])
			}
			switch op := rapid.IntRange(0, 10).Draw(t, "op"); op {
			case 0, 1: // create, or open for writing
				flag := os.O_RDWR | os.O_CREATE
				if rapid.Bool().Draw(t, "truncate") {
					flag |= os.O_TRUNC
				}
				var p pair
				each(func(i int, fs *vfs.FS) (err error) {
					p[i], err = fs.OpenFile(name, flag, 0o644)
					return err
				})
				if p[0] != nil {
					files = append(files, p)
				}
			case 2, 3: // a write anywhere in the first blocks
				if len(files) == 0 {
					continue
				}
				p := rapid.SampledFrom(files).Draw(t, "file")
				off := int64(rapid.IntRange(0, 3*4096).Draw(t, "off"))
				b := make([]byte, rapid.IntRange(1, 2*4096).Draw(t, "n"))
				for j := range b {
					b[j] = fill + byte(j%7)
				}
				fill = fill%26 + 'A'
				each(func(i int, _ *vfs.FS) error { _, err := p[i].WriteAt(b, off); return err })
			case 4:
				if len(files) == 0 {
					continue
				}
				p := rapid.SampledFrom(files).Draw(t, "file")
				size := int64(rapid.IntRange(0, 4*4096).Draw(t, "size"))
				each(func(i int, _ *vfs.FS) error { return p[i].Truncate(size) })
			case 5:
				if len(files) == 0 {
					continue
				}
				p := rapid.SampledFrom(files).Draw(t, "file")
				each(func(i int, _ *vfs.FS) error { return p[i].Close() })
			case 6:
				each(func(_ int, fs *vfs.FS) error { return fs.Remove(name) })
			case 7:
				each(func(_ int, fs *vfs.FS) error { return fs.Rename(name, other) })
			case 8:
				if len(files) > 0 && rapid.Bool().Draw(t, "fsync") {
					p := rapid.SampledFrom(files).Draw(t, "file")
					each(func(i int, _ *vfs.FS) error { return p[i].Sync() })
				} else {
					each(func(_ int, fs *vfs.FS) error { return fs.Sync() })
				}
			case 9: // open for reading
				var p pair
				each(func(i int, fs *vfs.FS) (err error) {
					p[i], err = fs.Open(name)
					return err
				})
				if p[0] != nil {
					files = append(files, p)
				}
			case 10: // a frozen snapshot of on, every change kept
				snap := on.Snapshot()
				st := snap.State()
				for _, p := range snap.Pending() {
					st.Apply(p)
				}
				seen := map[string]string{}
				for _, n := range names {
					if b, err := afero.ReadFile(on, n); err == nil {
						seen[n] = string(b)
					}
				}
				snaps = append(snaps, frozen{st, seen})
			}
			for _, n := range names {
				var got [2]string
				for i, fs := range both {
					b, err := afero.ReadFile(fs, n)
					got[i] = fmt.Sprintf("%q %v", b, err)
				}
				require.Equal(t, got[0], got[1], "the content of %s", n)
			}
			for _, p := range files {
				var got [2]string
				for i := range 2 {
					b := make([]byte, 5*4096)
					n, err := p[i].ReadAt(b, 0)
					if err == io.EOF {
						err = nil
					}
					fi, serr := p[i].Stat()
					got[i] = fmt.Sprintf("%q %v", b[:n], err)
					if serr == nil {
						got[i] += fmt.Sprintf(" size %d blocks %d", fi.Size(), fi.Sys().(*vfs.Stat).Blocks)
					}
				}
				require.Equal(t, got[0], got[1], "what an open File reads")
			}
		}
		for _, s := range snaps {
			for n, want := range s.files {
				got, err := s.st.ReadFile(n)
				require.NoError(t, err)
				require.Equal(t, want, string(got), "a frozen snapshot reads what %s held", n)
			}
		}
	})
}

// TestRecycleSparesASnapshotsBlocks: a file written, frozen in a snapshot,
// written again in one block (its data then shares the snapshot's other
// buffers and its other chunks copy-on-write),
// closed and removed has its create cancelled and its memory recycled; the
// buffers and chunks it shares with the snapshot must not be among that memory, however
// the next files overwrite what the pool gives them.
func TestRecycleSparesASnapshotsBlocks(t *testing.T) {
	fs := vfs.New()
	f, err := fs.Create("/a")
	require.NoError(t, err)
	old := bytes.Repeat([]byte("old!"), 80*4096/4) // more than one chunk
	_, err = f.Write(old)
	require.NoError(t, err)
	snap := fs.Snapshot()
	_, err = f.WriteAt([]byte("new"), 4096+10) // one block written anew, in the first chunk
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, fs.Remove("/a"))
	for range 8 { // other files take the memory and overwrite it
		g, err := fs.Create("/g")
		require.NoError(t, err)
		_, err = g.Write(bytes.Repeat([]byte{'x'}, 4*4096))
		require.NoError(t, err)
		require.NoError(t, g.Close())
		require.NoError(t, fs.Remove("/g"))
	}
	st := snap.State() // its bytes are read from the snapshot only now
	for _, p := range snap.Pending() {
		st.Apply(p)
	}
	got, err := st.ReadFile("/a")
	require.NoError(t, err)
	require.True(t, bytes.Equal(old, got), "the snapshot reads what the file held")
}

package vfs_test

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// TestRecycleKeepsWhatIsReachable: files are created, written, opened again,
// closed, removed and their inodes taken, at random, while others reuse the
// memory of the files nothing reaches any more: every open File, every inode
// taken from an open File or by Resolve, and every frozen snapshot still
// reads what it read before, and a closed File's Stat what it would have.
func TestRecycleKeepsWhatIsReachable(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fs := vfs.New()
		names := []string{"/a", "/b", "/c"}
		type handle struct {
			f       *vfs.File
			content *[]byte // the file's content, shared by its handles
			closed  bool
		}
		var handles []*handle
		byName := map[string]*[]byte{}
		type held struct {
			ino     *vfs.Inode
			content *[]byte
		}
		var inodes []held
		type frozen struct {
			st    *vfs.CrashState
			files map[string][]byte
		}
		var snaps []frozen
		fill := byte('A')
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			name := rapid.SampledFrom(names).Draw(t, "name")
			switch rapid.IntRange(0, 8).Draw(t, "op") {
			case 0, 1: // create (truncates an existing file)
				f, err := fs.Create(name)
				require.NoError(t, err)
				c := byName[name]
				if c == nil {
					c = new([]byte)
					byName[name] = c
				}
				*c = nil
				handles = append(handles, &handle{f: f.(*vfs.File), content: c})
			case 2: // open again
				if c := byName[name]; c != nil {
					f, err := fs.OpenFile(name, os.O_RDWR, 0)
					require.NoError(t, err)
					handles = append(handles, &handle{f: f.(*vfs.File), content: c})
				}
			case 3, 4: // write whole blocks of one byte at the end
				if len(handles) == 0 {
					continue
				}
				h := rapid.SampledFrom(handles).Draw(t, "handle")
				if h.closed {
					continue
				}
				b := bytes.Repeat([]byte{fill}, 4096*rapid.IntRange(1, 2).Draw(t, "blocks"))
				fill = fill%26 + 'A'
				_, err := h.f.WriteAt(b, int64(len(*h.content)))
				require.NoError(t, err)
				*h.content = append(*h.content, b...)
			case 5: // close
				if len(handles) == 0 {
					continue
				}
				h := rapid.SampledFrom(handles).Draw(t, "handle")
				if !h.closed {
					require.NoError(t, h.f.Close())
					h.closed = true
					require.Nil(t, h.f.Inode())
				}
			case 6: // remove
				if byName[name] != nil {
					require.NoError(t, fs.Remove(name))
					delete(byName, name)
				}
			case 7: // hold the inode, through an open File or by path
				if rapid.Bool().Draw(t, "by path") {
					if c := byName[name]; c != nil {
						ino, err := fs.Root().Resolve(name, true)
						require.NoError(t, err)
						inodes = append(inodes, held{ino, c})
					}
				} else if len(handles) > 0 {
					if h := rapid.SampledFrom(handles).Draw(t, "handle"); !h.closed {
						inodes = append(inodes, held{h.f.Inode(), h.content})
					}
				}
			case 8: // a frozen snapshot, every pending change kept
				snap := fs.Snapshot()
				st := snap.State()
				for _, p := range snap.Pending() {
					st.Apply(p)
				}
				files := map[string][]byte{}
				for n, c := range byName {
					files[n] = append([]byte(nil), *c...)
				}
				snaps = append(snaps, frozen{st, files})
			}
			for _, h := range inodes {
				require.Equal(t, int64(len(*h.content)), h.ino.Size())
				got := make([]byte, len(*h.content))
				_, err := h.ino.ReadAt(got, 0)
				require.NoError(t, err)
				require.Equal(t, string(*h.content), string(got), "a held inode reads its file")
			}
			for _, h := range handles {
				if h.closed {
					fi, err := h.f.Stat()
					require.NoError(t, err)
					size := int64(len(*h.content))
					require.Equal(t, size, fi.Size())
					require.Equal(t, size/4096*8, fi.Sys().(*vfs.Stat).Blocks)
					continue
				}
				got := make([]byte, len(*h.content))
				_, err := h.f.ReadAt(got, 0)
				if len(got) > 0 {
					require.NoError(t, err)
				}
				require.Equal(t, string(*h.content), string(got), "an open File reads its file")
			}
		}
		for _, s := range snaps {
			for n, want := range s.files {
				got, err := s.st.ReadFile(n)
				require.NoError(t, err)
				require.Equal(t, string(want), string(got), "a snapshot reads what the file held")
			}
		}
	})
}

// TestRecycleReadRacingClose: a read racing with the Close and removal of its
// file, whose memory then serves other files, returns the file's own bytes or
// os.ErrClosed, never another file's (nor the zeros of a recycled one: the
// race detector's scheduling makes the reader meet the window often).
func TestRecycleReadRacingClose(t *testing.T) {
	fs := vfs.New()
	for k := range 2000 {
		mine := bytes.Repeat([]byte{'m'}, 4096)
		f, err := fs.Create("/f")
		require.NoError(t, err)
		_, err = f.Write(mine)
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for {
				_, err := f.ReadAt(buf, 0)
				if errors.Is(err, os.ErrClosed) {
					return
				}
				if err != nil || !bytes.Equal(buf, mine) {
					t.Errorf("round %d: read %q..., %v", k, buf[:8], err)
					return
				}
			}
		}()
		require.NoError(t, f.Close())
		require.NoError(t, fs.Remove("/f"))
		for range 4 { // other files take the memory
			g, err := fs.Create("/g")
			require.NoError(t, err)
			_, err = g.Write(bytes.Repeat([]byte{'o'}, 4096))
			require.NoError(t, err)
			require.NoError(t, g.Close())
			require.NoError(t, fs.Remove("/g"))
		}
		wg.Wait()
	}
}

// TestRecycleWrittenZeros: a file laid out with zeros (chunks without a
// buffer table) is recycled like any other, and the files that take its
// memory read what they wrote.
func TestRecycleWrittenZeros(t *testing.T) {
	fs := vfs.New()
	for k := range 4 {
		f, err := fs.Create("/z")
		require.NoError(t, err)
		_, err = f.Write(make([]byte, 40*4096)) // two chunks, no buffer
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, fs.Remove("/z"))
		want := bytes.Repeat([]byte{byte('a' + k)}, 3*4096)
		g, err := fs.Create("/g")
		require.NoError(t, err)
		_, err = g.WriteAt(want, 4096)
		require.NoError(t, err)
		got := make([]byte, 4*4096)
		_, err = g.ReadAt(got, 0)
		require.NoError(t, err)
		require.Equal(t, append(make([]byte, 4096), want...), got)
		require.NoError(t, g.Close())
		require.NoError(t, fs.Remove("/g"))
	}
}

package sim

import (
	"bytes"
	"testing"

	"github.com/spf13/afero"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// TestTypedRouteMatchesCallRoute checks that the facade's typed entry points
// (taken when a Process is bound to the kernel with a constant cost model) and
// the Call route (taken through any Handler) are the same: the same random
// sequence of the routed calls (open, close, read, write, pread, pwrite, lseek,
// fcntl with an integer argument), mixed with calls that only have the Call
// route (dup2, ftruncate, unlink, fstat), gives the same results, errnos and
// bytes on two kernels, the same virtual clock, and the same files.
func TestTypedRouteMatchesCallRoute(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		kt := New(vfs.New(), WithNofile(8))
		kc := New(vfs.New(), WithNofile(8))
		typed := kt.Spawn()
		require.NotNil(rt, typed.direct(), "a Process bound to the kernel takes the typed route")
		tc, err := kc.SpawnPid(0)
		require.NoError(rt, err)
		viaCall := NewProcess(HandlerFunc(kc.Syscall), tc)
		require.Nil(rt, viaCall.direct())
		for _, p := range []*Process{typed, viaCall} {
			require.NoError(rt, p.Mkdir("/d", 0o755))
		}

		paths := []string{"/f", "/g", "/d", "/d/h", "/missing/x", ""}
		fds := rapid.IntRange(-1, 9)
		offs := rapid.SampledFrom([]int64{-1, 0, 1, 511, 4096, 5000, 1 << 20})
		both := func(rt *rapid.T, what string, do func(p *Process) (int64, error, []byte)) {
			r1, e1, b1 := do(typed)
			r2, e2, b2 := do(viaCall)
			require.Equal(rt, e2, e1, "%s: errno", what)
			require.Equal(rt, r2, r1, "%s: result", what)
			require.True(rt, bytes.Equal(b1, b2), "%s: bytes", what)
			require.Equal(rt, kc.Now(), kt.Now(), "%s: virtual clock", what)
		}
		rt.Repeat(map[string]func(*rapid.T){
			"open": func(rt *rapid.T) {
				path := rapid.SampledFrom(paths).Draw(rt, "path")
				flags := rapid.SampledFrom([]int{
					unix.O_RDONLY, unix.O_WRONLY, unix.O_RDWR, unix.O_RDWR | unix.O_CREAT,
					unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC, unix.O_RDWR | unix.O_APPEND | unix.O_CREAT,
					unix.O_CREAT | unix.O_EXCL | unix.O_WRONLY, unix.O_RDONLY | unix.O_DIRECTORY,
					unix.O_RDONLY | unix.O_CLOEXEC, unix.O_PATH, unix.O_RDWR | unix.O_DIRECT,
				}).Draw(rt, "flags")
				both(rt, "open", func(p *Process) (int64, error, []byte) {
					fd, err := p.Open(path, flags, 0o644)
					return int64(fd), err, nil
				})
			},
			"close": func(rt *rapid.T) {
				fd := fds.Draw(rt, "fd")
				both(rt, "close", func(p *Process) (int64, error, []byte) { return 0, p.Close(fd), nil })
			},
			"read": func(rt *rapid.T) {
				fd, n := fds.Draw(rt, "fd"), rapid.IntRange(0, 5000).Draw(rt, "n")
				both(rt, "read", func(p *Process) (int64, error, []byte) {
					b := make([]byte, n)
					got, err := p.Read(fd, b)
					return int64(got), err, b
				})
			},
			"pread": func(rt *rapid.T) {
				fd, n, off := fds.Draw(rt, "fd"), rapid.IntRange(0, 5000).Draw(rt, "n"), offs.Draw(rt, "off")
				both(rt, "pread", func(p *Process) (int64, error, []byte) {
					b := make([]byte, n)
					got, err := p.Pread(fd, b, off)
					return int64(got), err, b
				})
			},
			"write": func(rt *rapid.T) {
				fd, data := fds.Draw(rt, "fd"), rapid.SliceOfN(rapid.Byte(), 0, 5000).Draw(rt, "data")
				both(rt, "write", func(p *Process) (int64, error, []byte) {
					got, err := p.Write(fd, data)
					return int64(got), err, nil
				})
			},
			"pwrite": func(rt *rapid.T) {
				fd, off := fds.Draw(rt, "fd"), offs.Draw(rt, "off")
				data := rapid.SliceOfN(rapid.Byte(), 0, 5000).Draw(rt, "data")
				both(rt, "pwrite", func(p *Process) (int64, error, []byte) {
					got, err := p.Pwrite(fd, data, off)
					return int64(got), err, nil
				})
			},
			"lseek": func(rt *rapid.T) {
				fd, off, whence := fds.Draw(rt, "fd"), offs.Draw(rt, "off"), rapid.IntRange(-1, 5).Draw(rt, "whence")
				both(rt, "lseek", func(p *Process) (int64, error, []byte) {
					got, err := p.Seek(fd, off, whence)
					return got, err, nil
				})
			},
			"fcntl": func(rt *rapid.T) {
				fd := fds.Draw(rt, "fd")
				cmd := rapid.SampledFrom([]int{unix.F_GETFD, unix.F_SETFD, unix.F_GETFL, unix.F_SETFL,
					unix.F_DUPFD, unix.F_DUPFD_CLOEXEC, unix.F_SETLK, 9999}).Draw(rt, "cmd")
				arg := rapid.SampledFrom([]int{0, 1, 3, unix.O_APPEND, unix.O_DIRECT, unix.O_NONBLOCK}).Draw(rt, "arg")
				both(rt, "fcntl", func(p *Process) (int64, error, []byte) {
					got, err := p.FcntlInt(uintptr(fd), cmd, arg)
					return int64(got), err, nil
				})
			},
			"dup2": func(rt *rapid.T) {
				oldfd, newfd := fds.Draw(rt, "old"), fds.Draw(rt, "new")
				both(rt, "dup2", func(p *Process) (int64, error, []byte) { return 0, p.Dup2(oldfd, newfd), nil })
			},
			"ftruncate": func(rt *rapid.T) {
				fd, size := fds.Draw(rt, "fd"), offs.Draw(rt, "size")
				both(rt, "ftruncate", func(p *Process) (int64, error, []byte) { return 0, p.Ftruncate(fd, size), nil })
			},
			"unlink": func(rt *rapid.T) {
				path := rapid.SampledFrom(paths).Draw(rt, "path")
				both(rt, "unlink", func(p *Process) (int64, error, []byte) { return 0, p.Unlink(path), nil })
			},
			"fstat": func(rt *rapid.T) {
				fd := fds.Draw(rt, "fd")
				both(rt, "fstat", func(p *Process) (int64, error, []byte) {
					var st unix.Stat_t
					err := p.Fstat(fd, &st)
					return st.Size, err, []byte{byte(st.Mode >> 12), byte(st.Blocks)}
				})
			},
		})
		for _, path := range []string{"/f", "/g", "/d/h"} {
			want, errc := afero.ReadFile(kc.FS(), path)
			got, errt := afero.ReadFile(kt.FS(), path)
			require.Equal(rt, errc, errt, path)
			require.True(rt, bytes.Equal(want, got), "%s: contents", path)
		}
	})
}

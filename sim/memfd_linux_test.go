package sim_test

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestMemfdMatchesKernel: memfd_create's checks and the file it makes, on this
// machine's kernel and on the model.
func TestMemfdMatchesKernel(t *testing.T) {
	type sys struct {
		memfd func(name string, flags int) (int, error)
		p     interface {
			Write(int, []byte) (int, error)
			Pread(int, []byte, int64) (int, error)
			Ftruncate(int, int64) error
			Fstat(int, *unix.Stat_t) error
			FcntlInt(uintptr, int, int) (int, error)
			Close(int) error
		}
	}
	script := func(s sys) string {
		var out strings.Builder
		put := func(call string, v any, err error) {
			if err != nil {
				fmt.Fprintf(&out, "%s: %s\n", call, unix.ErrnoName(err.(syscall.Errno)))
				return
			}
			fmt.Fprintf(&out, "%s: %v\n", call, v)
		}
		fd, err := s.memfd("x", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
		put("memfd_create", 0, err)
		var st unix.Stat_t
		err = s.p.Fstat(fd, &st)
		put("fstat", fmt.Sprintf("mode=%o nlink=%d size=%d", st.Mode, st.Nlink, st.Size), err)
		fl, err := s.p.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		put("F_GETFL", fmt.Sprintf("%#x", fl), err)
		n, err := s.p.Write(fd, []byte("hello"))
		put("write", n, err)
		b := make([]byte, 10)
		n, err = s.p.Pread(fd, b, 1)
		put("pread", string(b[:n]), err)
		put("ftruncate", 0, s.p.Ftruncate(fd, 100))
		err = s.p.Fstat(fd, &st)
		put("fstat", fmt.Sprintf("size=%d", st.Size), err)
		put("close", 0, s.p.Close(fd))
		_, err = s.memfd(strings.Repeat("n", 250), 0)
		put("name too long", 0, err)
		fd, err = s.memfd(strings.Repeat("n", 249), unix.MFD_CLOEXEC)
		put("name of 249", 0, err)
		if err == nil {
			s.p.Close(fd)
		}
		_, err = s.memfd("x", 0x100)
		put("unknown flag", 0, err)
		_, err = s.memfd("x", unix.MFD_EXEC|unix.MFD_NOEXEC_SEAL)
		put("exec and noexec", 0, err)
		return out.String()
	}
	want := script(sys{memfd: func(n string, f int) (int, error) { return unix.MemfdCreate(n, f|unix.MFD_CLOEXEC) }, p: osProc{}})
	p := sim.New(vfs.New()).Spawn()
	got := script(sys{memfd: func(n string, f int) (int, error) {
		c := sim.Call{Nr: sim.SYS_MEMFD_CREATE, Path: n}
		c.Args[1] = int64(f)
		r := p.Syscall(c)
		return int(r.Ret), r.Err()
	}, p: p})
	require.Equal(t, want, got)
	require.Contains(t, want, "mode=100777 nlink=0")
}

// osProc is the kernel with the facade's method names.
type osProc struct{}

func (osProc) Write(fd int, b []byte) (int, error)          { return unix.Write(fd, b) }
func (osProc) Pread(fd int, b []byte, o int64) (int, error) { return unix.Pread(fd, b, o) }
func (osProc) Ftruncate(fd int, n int64) error              { return unix.Ftruncate(fd, n) }
func (osProc) Fstat(fd int, st *unix.Stat_t) error          { return unix.Fstat(fd, st) }
func (osProc) FcntlInt(fd uintptr, c, a int) (int, error)   { return unix.FcntlInt(fd, c, a) }
func (osProc) Close(fd int) error                           { return unix.Close(fd) }

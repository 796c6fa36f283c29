package sim_test

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// magic is what the /proc/self/fd and futimens tests need of both sides.
type magic interface {
	Open(path string, mode int, perm uint32) (int, error)
	Write(fd int, b []byte) (int, error)
	Read(fd int, b []byte) (int, error)
	Chmod(path string, mode uint32) error
	Fstat(fd int, st *unix.Stat_t) error
	Close(fd int) error
}

type realMagic struct{ dir string }

func (r realMagic) Open(p string, mode int, perm uint32) (int, error) {
	if p[0] != '/' {
		p = filepath.Join(r.dir, p)
	}
	return unix.Open(p, mode, perm)
}
func (realMagic) Write(fd int, b []byte) (int, error) { return unix.Write(fd, b) }
func (realMagic) Read(fd int, b []byte) (int, error)  { return unix.Read(fd, b) }
func (realMagic) Chmod(p string, mode uint32) error   { return unix.Chmod(p, mode) }
func (realMagic) Fstat(fd int, st *unix.Stat_t) error { return unix.Fstat(fd, st) }
func (realMagic) Close(fd int) error                  { return unix.Close(fd) }
func futimens(s any, fd int, ts []unix.Timespec) error {
	if p, ok := s.(*sim.Process); ok {
		return p.Futimens(fd, ts)
	}
	return unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH)
}

func magicScript(t *testing.T, s magic) []string {
	var out []string
	note := func(format string, a ...any) { out = append(out, fmt.Sprintf(format, a...)) }
	fd, err := s.Open("f", unix.O_RDWR|unix.O_CREAT|unix.O_TRUNC, 0o600)
	require.NoError(t, err)
	_, err = s.Write(fd, []byte("hello"))
	require.NoError(t, err)
	self := "/proc/self/fd/" + strconv.Itoa(fd)
	note("chmod: %v", s.Chmod(self, 0o751))
	var st unix.Stat_t
	require.NoError(t, s.Fstat(fd, &st))
	note("mode %o", st.Mode&0o7777)
	fd2, err := s.Open(self, unix.O_RDONLY, 0)
	note("reopen: %v", err)
	if err == nil {
		b := make([]byte, 16)
		n, err := s.Read(fd2, b)
		note("read from 0 of the new description: %q %v", b[:n], err)
		note("close: %v", s.Close(fd2))
	}
	_, err = s.Open(self+"/x", unix.O_RDONLY, 0)
	note("through: %v", err)
	note("futimens: %v", futimens(s, fd, []unix.Timespec{{Sec: 5}, {Sec: 7}}))
	require.NoError(t, s.Fstat(fd, &st))
	note("times %d %d", st.Atim.Sec, st.Mtim.Sec)
	note("close: %v", s.Close(fd))
	return out
}

// TestProcSelfFdMatchesKernel: /proc/self/fd/N names what fd N refers to (chmod
// through it, reopen it), and futimens works on the fd, as on the kernel here.
func TestProcSelfFdMatchesKernel(t *testing.T) {
	want := magicScript(t, realMagic{t.TempDir()})
	got := magicScript(t, sim.New(vfs.New()).Spawn())
	require.Equal(t, want, got)
	t.Log(want)
}

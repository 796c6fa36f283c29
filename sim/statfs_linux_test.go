package sim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestStatfsMatchesKernel: statfs and fstatfs errors, and what the figures
// that do not depend on the host's disk say (pipefs and sockfs magic numbers,
// f_namelen), on this machine's kernel and on the model.
func TestStatfsMatchesKernel(t *testing.T) {
	type sys struct {
		statfs  func(string, *unix.Statfs_t) error
		fstatfs func(int, *unix.Statfs_t) error
		create  func(string) (int, error)
		pipe    func() ([2]int, error)
		sock    func() ([2]int, error)
	}
	script := func(s sys) string {
		var out strings.Builder
		var st unix.Statfs_t
		put := func(call string, err error, what string) {
			if err != nil {
				fmt.Fprintf(&out, "%s: %s\n", call, unix.ErrnoName(err.(syscall.Errno)))
				return
			}
			fmt.Fprintf(&out, "%s: %s\n", call, what)
		}
		fd, err := s.create("f")
		require.NoError(t, err)
		err = s.statfs("f", &st)
		put("statfs f", err, fmt.Sprintf("namelen=%d", st.Namelen))
		err = s.fstatfs(fd, &st)
		put("fstatfs f", err, fmt.Sprintf("namelen=%d", st.Namelen))
		put("statfs none", s.statfs("none", &st), "")
		put("statfs f/x", s.statfs("f/x", &st), "")
		put("fstatfs bad fd", s.fstatfs(999, &st), "")
		p, err := s.pipe()
		require.NoError(t, err)
		err = s.fstatfs(p[0], &st)
		put("fstatfs pipe", err, fmt.Sprintf("type=%#x", st.Type))
		sp, err := s.sock()
		require.NoError(t, err)
		err = s.fstatfs(sp[1], &st)
		put("fstatfs socket", err, fmt.Sprintf("type=%#x", st.Type))
		return out.String()
	}
	dir := t.TempDir()
	rp := func(p string) string { return filepath.Join(dir, p) }
	var closers []int
	defer func() {
		for _, fd := range closers {
			unix.Close(fd)
		}
	}()
	want := script(sys{
		statfs:  func(p string, st *unix.Statfs_t) error { return unix.Statfs(rp(p), st) },
		fstatfs: unix.Fstatfs,
		create: func(p string) (int, error) {
			fd, err := unix.Open(rp(p), unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
			closers = append(closers, fd)
			return fd, err
		},
		pipe: func() ([2]int, error) {
			p := make([]int, 2)
			err := unix.Pipe2(p, unix.O_CLOEXEC)
			closers = append(closers, p...)
			return [2]int{p[0], p[1]}, err
		},
		sock: func() ([2]int, error) {
			sp, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
			closers = append(closers, sp[:]...)
			return sp, err
		},
	})
	p := sim.New(vfs.New()).Spawn()
	call := func(nr sim.Sysno, path string, fd int, st *unix.Statfs_t) error {
		c := sim.Call{Nr: nr, Path: path, Obj: st}
		c.Args[0] = int64(fd)
		return p.Syscall(c).Err()
	}
	got := script(sys{
		statfs:  func(path string, st *unix.Statfs_t) error { return call(sim.SYS_STATFS, path, 0, st) },
		fstatfs: func(fd int, st *unix.Statfs_t) error { return call(sim.SYS_FSTATFS, "", fd, st) },
		create:  func(path string) (int, error) { return p.Open(path, unix.O_CREAT|unix.O_RDWR, 0o644) },
		pipe: func() ([2]int, error) {
			var fds [2]int
			return fds, p.Pipe2(&fds, 0)
		},
		sock: func() ([2]int, error) { return p.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0) },
	})
	require.Equal(t, want, got)
	require.Contains(t, want, "type=0x50495045")
}

// TestStatfsCapacity: with WithCapacity, statfs reports the capacity and the
// blocks a write takes.
func TestStatfsCapacity(t *testing.T) {
	p := sim.New(vfs.New(vfs.WithCapacity(1 << 20))).Spawn()
	var st unix.Statfs_t
	require.NoError(t, p.Syscall(sim.Call{Nr: sim.SYS_STATFS, Path: "/", Obj: &st}).Err())
	require.EqualValues(t, 0xEF53, st.Type)
	require.EqualValues(t, 4096, st.Bsize)
	require.EqualValues(t, 256, st.Blocks)
	require.EqualValues(t, 256, st.Bfree)
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, make([]byte, 3*4096))
	require.NoError(t, err)
	require.NoError(t, p.Fsync(fd))
	require.NoError(t, p.Syscall(sim.Call{Nr: sim.SYS_STATFS, Path: "/f", Obj: &st}).Err())
	require.EqualValues(t, 253, st.Bfree)
	require.Equal(t, unix.EFAULT, p.Syscall(sim.Call{Nr: sim.SYS_STATFS, Path: "/f"}).Err())
}

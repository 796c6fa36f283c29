package sim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestGetxattrUtimesMatchKernel: getxattr, lgetxattr, fgetxattr and the
// list calls on files without attributes, and utime, utimes and futimesat,
// on this machine's kernel and on the model: the same results and times.
func TestGetxattrUtimesMatchKernel(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Setxattr(dir, "system.posix_acl_access", acl(2, [3]uint32{1, 7, 0}, [3]uint32{4, 5, 0}, [3]uint32{0x20, 5, 0}), 0); err != nil || unix.Geteuid() != 0 {
		t.Skipf("POSIX ACLs as root are not available here (%v)", err)
	}
	if n, err := unix.Listxattr(dir, nil); err != nil || n != 0 {
		t.Skipf("files here have attributes (%d, %v): security labels", n, err)
	}
	type sys struct {
		p     func(string) string
		open  func(string, int) (int, error)
		getx  func(path, name string, b []byte) (int, error)
		lget  func(path, name string, b []byte) (int, error)
		fget  func(fd int, name string, b []byte) (int, error)
		list  func(path string, b []byte) (int, error)
		llst  func(path string, b []byte) (int, error)
		flst  func(fd int, b []byte) (int, error)
		stat  func(path string, st *unix.Stat_t) error
		call  func(nr sim.Sysno, dirfd int, path string, times any) error
		close func(fd int) error
	}
	script := func(s sys) string {
		var out strings.Builder
		put := func(call string, n int, err error) {
			if err != nil {
				fmt.Fprintf(&out, "%s: %s\n", call, unix.ErrnoName(err.(syscall.Errno)))
				return
			}
			fmt.Fprintf(&out, "%s: %d\n", call, n)
		}
		fd, err := s.open("f", unix.O_CREAT|unix.O_RDWR)
		require.NoError(t, err)
		buf := make([]byte, 64)
		// (user.* names are EOPNOTSUPP in the model, as on a file system
		// without user xattrs: not compared.)
		for _, name := range []string{"system.posix_acl_access", "system.posix_acl_default", "", strings.Repeat("u", 256)} {
			n, err := s.getx("f", name, buf)
			put("getxattr "+name, n, err)
			n, err = s.lget("link", name, buf)
			put("lgetxattr link "+name, n, err)
			n, err = s.fget(fd, name, buf)
			put("fgetxattr "+name, n, err)
		}
		n, err := s.getx("none", "user.x", buf)
		put("getxattr none", n, err)
		n, err = s.fget(999, "system.posix_acl_access", buf)
		put("fgetxattr bad fd", n, err)
		n, err = s.list("f", buf)
		put("listxattr", n, err)
		n, err = s.llst("link", buf)
		put("llistxattr", n, err)
		n, err = s.flst(fd, buf)
		put("flistxattr", n, err)
		n, err = s.list("none", buf)
		put("listxattr none", n, err)

		var st unix.Stat_t
		times := func(call string, err error) {
			put(call, 0, err)
			require.NoError(t, s.stat("f", &st))
			fmt.Fprintf(&out, "  atime=%d.%09d mtime=%d.%09d\n", st.Atim.Sec, st.Atim.Nsec, st.Mtim.Sec, st.Mtim.Nsec)
		}
		times("utime", s.call(sim.SYS_UTIME, unix.AT_FDCWD, "f", &unix.Utimbuf{Actime: 1000, Modtime: 2000}))
		times("utimes", s.call(sim.SYS_UTIMES, unix.AT_FDCWD, "f", &[2]unix.Timeval{{Sec: 3000, Usec: 5}, {Sec: 4000, Usec: 999999}}))
		times("utimes bad usec", s.call(sim.SYS_UTIMES, unix.AT_FDCWD, "f", &[2]unix.Timeval{{Sec: 5000, Usec: 1000000}, {}}))
		put("utimes bad usec, no file", 0, s.call(sim.SYS_UTIMES, unix.AT_FDCWD, "none", &[2]unix.Timeval{{Usec: -1}, {}}))
		put("utime none", 0, s.call(sim.SYS_UTIME, unix.AT_FDCWD, "none", &unix.Utimbuf{}))
		times("futimesat", s.call(sim.SYS_FUTIMESAT, unix.AT_FDCWD, "f", &[2]unix.Timeval{{Sec: 6000}, {Sec: 7000, Usec: 1}}))
		require.NoError(t, s.close(fd))
		put("futimesat bad dirfd", 0, s.call(sim.SYS_FUTIMESAT, 999, "f", &[2]unix.Timeval{}))
		return out.String()
	}

	rp := func(p string) string { return filepath.Join(dir, p) }
	require.NoError(t, unix.Symlink("f", rp("link")))
	want := script(sys{
		p:     rp,
		open:  func(p string, fl int) (int, error) { return unix.Open(rp(p), fl|unix.O_CLOEXEC, 0o644) },
		getx:  func(p, n string, b []byte) (int, error) { return unix.Getxattr(rp(p), n, b) },
		lget:  func(p, n string, b []byte) (int, error) { return unix.Lgetxattr(rp(p), n, b) },
		fget:  unix.Fgetxattr,
		list:  func(p string, b []byte) (int, error) { return unix.Listxattr(rp(p), b) },
		llst:  func(p string, b []byte) (int, error) { return unix.Llistxattr(rp(p), b) },
		flst:  unix.Flistxattr,
		stat:  func(p string, st *unix.Stat_t) error { return unix.Stat(rp(p), st) },
		close: unix.Close,
		call: func(nr sim.Sysno, dirfd int, p string, times any) error {
			// The calls themselves: x/sys/unix's Utimes and Futimesat are
			// utimensat underneath.
			if dirfd == unix.AT_FDCWD {
				p = rp(p)
			}
			b, err := unix.BytePtrFromString(p)
			require.NoError(t, err)
			var e syscall.Errno
			switch nr {
			case sim.SYS_UTIME:
				_, _, e = unix.Syscall(unix.SYS_UTIME, uintptr(unsafe.Pointer(b)), uintptr(unsafe.Pointer(times.(*unix.Utimbuf))), 0)
			case sim.SYS_UTIMES:
				_, _, e = unix.Syscall(unix.SYS_UTIMES, uintptr(unsafe.Pointer(b)), uintptr(unsafe.Pointer(times.(*[2]unix.Timeval))), 0)
			default:
				_, _, e = unix.Syscall(unix.SYS_FUTIMESAT, uintptr(dirfd), uintptr(unsafe.Pointer(b)), uintptr(unsafe.Pointer(times.(*[2]unix.Timeval))))
			}
			if e != 0 {
				return e
			}
			return nil
		},
	})

	pr := sim.New(vfs.New()).Spawn()
	mp := func(p string) string { return p } // relative to the cwd, /
	require.NoError(t, pr.Symlink("f", "link"))
	sc := func(nr sim.Sysno, path string, fd int, obj any) (int, error) {
		c := sim.Call{Nr: nr, Path: mp(path), Obj: obj}
		if path == "" {
			c.Path = ""
		}
		c.Args[0] = int64(fd)
		r := pr.Syscall(c)
		return int(r.Ret), r.Err()
	}
	xattr := func(nr sim.Sysno, p string, fd int, name string, b []byte) (int, error) {
		c := sim.Call{Nr: nr, Path: mp(p), Path2: name, Buf: b}
		if p == "" {
			c.Path = ""
		}
		c.Args[0], c.Args[3] = int64(fd), int64(len(b))
		r := pr.Syscall(c)
		return int(r.Ret), r.Err()
	}
	got := script(sys{
		p:     mp,
		open:  func(p string, fl int) (int, error) { return pr.Open(mp(p), fl, 0o644) },
		getx:  func(p, n string, b []byte) (int, error) { return xattr(sim.SYS_GETXATTR, p, 0, n, b) },
		lget:  func(p, n string, b []byte) (int, error) { return xattr(sim.SYS_LGETXATTR, p, 0, n, b) },
		fget:  func(fd int, n string, b []byte) (int, error) { return xattr(sim.SYS_FGETXATTR, "", fd, n, b) },
		list:  func(p string, b []byte) (int, error) { return xattr(sim.SYS_LISTXATTR, p, 0, "", b) },
		llst:  func(p string, b []byte) (int, error) { return xattr(sim.SYS_LLISTXATTR, p, 0, "", b) },
		flst:  func(fd int, b []byte) (int, error) { return xattr(sim.SYS_FLISTXATTR, "", fd, "", b) },
		stat:  func(p string, st *unix.Stat_t) error { return pr.Stat(mp(p), st) },
		close: pr.Close,
		call: func(nr sim.Sysno, dirfd int, p string, times any) error {
			if nr == sim.SYS_FUTIMESAT {
				c := sim.Call{Nr: nr, Path: mp(p), Obj: times}
				c.Args[0] = int64(dirfd)
				return pr.Syscall(c).Err()
			}
			_, err := sc(nr, p, 0, times)
			return err
		},
	})
	require.Equal(t, want, got)
	require.Contains(t, want, "ENODATA")
}

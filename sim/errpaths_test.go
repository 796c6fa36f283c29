//go:build linux

package sim_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"iosim/sim"
)

// The fds every error-path row starts with, as offsets from the baseline fd (see
// oskernel_linux_test.go): both sides open them in this order.
const (
	fdRW     = iota // /f, O_RDWR; /f holds 5000 bytes
	fdRO            // /f, O_RDONLY
	fdWO            // /f, O_WRONLY
	fdDir           // /d, O_RDONLY|O_DIRECTORY
	fdEmpty         // /empty, O_RDWR; empty
	fdPath          // /f, O_PATH
	fdClosed = 10   // never opened
)

// errEnv is what a row's call sees: the side it runs on and its fds.
type errEnv struct {
	s      sys
	base   int
	nofile int
}

func (e errEnv) fd(i int) int { return e.base + i }

// setupErrpaths builds the starting state of every row on one side: /d/sub/x, an
// empty dir /e, /f (5000 bytes), /empty, symlinks /lf -> f, /loop1 <-> /loop2,
// /self -> self, /dang -> nx (dangling), and the fds above.
func setupErrpaths(t failer, s sys) {
	t.Helper()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("setup: %s: %s", what, errName(err))
		}
	}
	must("mkdir /d", s.Mkdir("/d", 0o755))
	must("mkdir /d/sub", s.Mkdir("/d/sub", 0o755))
	must("mkdir /e", s.Mkdir("/e", 0o755))
	fd, err := s.Creat("/d/sub/x", 0o644)
	must("creat /d/sub/x", err)
	must("close", s.Close(fd))
	fd, err = s.Creat("/f", 0o644)
	must("creat /f", err)
	_, err = s.Write(fd, pattern(5000, 3))
	must("write /f", err)
	must("close", s.Close(fd))
	for _, l := range [][2]string{{"f", "/lf"}, {"loop2", "/loop1"}, {"loop1", "/loop2"}, {"self", "/self"}, {"nx", "/dang"}} {
		must("symlink "+l[1], s.Symlink(l[0], l[1]))
	}
	for _, o := range []struct {
		path  string
		flags int
	}{
		{"/f", unix.O_RDWR},
		{"/f", unix.O_RDONLY},
		{"/f", unix.O_WRONLY},
		{"/d", unix.O_RDONLY | unix.O_DIRECTORY},
		{"/empty", unix.O_RDWR | unix.O_CREAT},
		{"/f", unix.O_PATH},
	} {
		_, err := s.Open(o.path, o.flags, 0o644)
		must("open "+o.path, err)
	}
}

// maxBytes is ext4's s_maxbytes with 4 KiB blocks: 16 TiB - 4 KiB.
const maxBytes = 1<<44 - 4096

// TestErrorPaths runs each row on the real kernel and on the model, from the same
// starting state, and asserts the expected errno (or success and return value) on
// both, so the table cannot drift from what this kernel does.
func TestErrorPaths(t *testing.T) {
	h := newHost(t)
	long := "/" + strings.Repeat("a", 256)       // one component over NAME_MAX
	longPath := "/" + strings.Repeat("a/", 2500) // over PATH_MAX
	rd := func(e errEnv, fd int, n int) (int64, error) {
		r, err := e.s.Read(e.fd(fd), make([]byte, n))
		return int64(r), err
	}
	wr := func(e errEnv, fd int, n int) (int64, error) {
		r, err := e.s.Write(e.fd(fd), make([]byte, n))
		return int64(r), err
	}
	open := func(e errEnv, path string, flags int) (int64, error) {
		r, err := e.s.Open(path, flags, 0o644)
		return int64(r), err
	}
	seek := func(e errEnv, fd int, off int64, whence int) (int64, error) {
		return e.s.Seek(e.fd(fd), off, whence)
	}
	e0 := func(err error) (int64, error) { return 0, err }
	fcntl := func(e errEnv, fd int, cmd, arg int) (int64, error) {
		r, err := e.s.FcntlInt(uintptr(fd), cmd, arg)
		return int64(r), err
	}
	type row = errRow
	rows := []row{
		// EBADF
		{name: "close/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Close(e.fd(fdClosed))) }},
		{name: "close/negative", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Close(-1)) }},
		{name: "close/twice", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			e.s.Close(e.fd(fdEmpty))
			return e0(e.s.Close(e.fd(fdEmpty)))
		}},
		{name: "read/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) { return rd(e, fdClosed, 10) }},
		{name: "read/negative", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Read(-1, make([]byte, 1))
			return int64(r), err
		}},
		{name: "read/O_WRONLY", want: unix.EBADF, do: func(e errEnv) (int64, error) { return rd(e, fdWO, 10) }},
		{name: "read/O_WRONLY zero bytes", want: unix.EBADF, do: func(e errEnv) (int64, error) { return rd(e, fdWO, 0) }},
		{name: "read/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return rd(e, fdPath, 10) }},
		{name: "pread/O_WRONLY", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pread(e.fd(fdWO), make([]byte, 10), 0)
			return int64(r), err
		}},
		{name: "write/O_RDONLY", want: unix.EBADF, do: func(e errEnv) (int64, error) { return wr(e, fdRO, 10) }},
		{name: "write/O_RDONLY zero bytes", want: unix.EBADF, do: func(e errEnv) (int64, error) { return wr(e, fdRO, 0) }},
		{name: "write/dir", want: unix.EBADF, do: func(e errEnv) (int64, error) { return wr(e, fdDir, 10) }},
		{name: "write/closed", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			e.s.Close(e.fd(fdRW))
			return wr(e, fdRW, 10)
		}},
		{name: "pwrite/O_RDONLY", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pwrite(e.fd(fdRO), make([]byte, 10), 0)
			return int64(r), err
		}},
		{name: "writev/O_RDONLY", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Writev(e.fd(fdRO), [][]byte{make([]byte, 3)})
			return int64(r), err
		}},
		{name: "lseek/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) { return seek(e, fdClosed, 0, unix.SEEK_SET) }},
		{name: "fstat/negative", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			return e0(e.s.Fstat(-1, &st))
		}},
		{name: "fsync/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Fsync(e.fd(fdClosed))) }},
		// O_PATH descriptors: fdget() refuses them (EBADF) in everything but the
		// calls that use fdget_raw (fstat, fcntl, dup, close, fchdir, *at dirfds).
		{name: "fsync/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Fsync(e.fd(fdPath))) }},
		{name: "fdatasync/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Fdatasync(e.fd(fdPath))) }},
		{name: "lseek/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return seek(e, fdPath, 0, unix.SEEK_SET) }},
		{name: "ftruncate/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Ftruncate(e.fd(fdPath), 0)) }},
		{name: "fallocate/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Fallocate(e.fd(fdPath), 0, 0, 10)) }},
		{name: "pread/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pread(e.fd(fdPath), make([]byte, 10), 0)
			return int64(r), err
		}},
		{name: "write/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return wr(e, fdPath, 1) }},
		{name: "fstat/O_PATH", ret: -1, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			if err := e.s.Fstat(e.fd(fdPath), &st); err != nil {
				return 0, err
			}
			return st.Size, nil
		}},
		// O_PATH keeps only O_PATH_FLAGS: no O_LARGEFILE.
		{name: "fcntl/O_PATH F_GETFL", ret: unix.O_PATH, do: func(e errEnv) (int64, error) { return fcntl(e, e.fd(fdPath), unix.F_GETFL, 0) }},
		{name: "dup/O_PATH", ret: -1, do: func(e errEnv) (int64, error) {
			r, err := e.s.Dup(e.fd(fdPath))
			return int64(r), err
		}},
		{name: "openat/O_PATH file dirfd", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			r, err := e.s.Openat(e.fd(fdPath), "x", unix.O_RDONLY, 0)
			return int64(r), err
		}},
		{name: "ftruncate/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Ftruncate(e.fd(fdClosed), 0)) }},
		{name: "fallocate/O_RDONLY", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			return e0(e.s.Fallocate(e.fd(fdRO), 0, 0, 4096))
		}},
		{name: "dup/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Dup(e.fd(fdClosed))
			return int64(r), err
		}},
		{name: "dup2/never-opened old", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Dup2(e.fd(fdClosed), e.fd(fdClosed+1))) }},
		{name: "Dup2 facade/never-opened same", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Dup2(e.fd(fdClosed), e.fd(fdClosed))) }},
		{name: "dup2/negative new", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Dup2(e.fd(fdRW), -1)) }},
		{name: "dup2/new at RLIMIT_NOFILE", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Dup2(e.fd(fdRW), e.nofile)) }},
		{name: "dup3/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Dup3(e.fd(fdClosed), e.fd(fdClosed+1), 0)) }},
		{name: "fcntl/never-opened F_GETFL", want: unix.EBADF, do: func(e errEnv) (int64, error) { return fcntl(e, e.fd(fdClosed), unix.F_GETFL, 0) }},
		{name: "openat/never-opened dirfd", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Openat(e.fd(fdClosed), "x", unix.O_RDONLY, 0)
			return int64(r), err
		}},
		{name: "openat/negative dirfd", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Openat(-1, "x", unix.O_RDONLY, 0)
			return int64(r), err
		}},
		{name: "openat/bad dirfd absolute path ignored", ret: -1, do: func(e errEnv) (int64, error) {
			_, err := e.s.Openat(e.fd(fdClosed), "/f", unix.O_RDONLY, 0)
			return 0, err
		}},

		// EISDIR
		{name: "read/dir", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return rd(e, fdDir, 10) }},
		{name: "read/dir zero bytes", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return rd(e, fdDir, 0) }},
		{name: "pread/dir", want: unix.EISDIR, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pread(e.fd(fdDir), make([]byte, 10), 0)
			return int64(r), err
		}},
		{name: "readv/dir", want: unix.EISDIR, do: func(e errEnv) (int64, error) {
			r, err := e.s.Readv(e.fd(fdDir), [][]byte{make([]byte, 10)})
			return int64(r), err
		}},
		// vfs_readv returns 0 for no bytes before the file's read_iter says EISDIR.
		{name: "readv/dir no bytes", ret: 0, do: func(e errEnv) (int64, error) {
			r, err := e.s.Readv(e.fd(fdDir), [][]byte{{}})
			return int64(r), err
		}},
		{name: "preadv/dir no iovecs", ret: 0, do: func(e errEnv) (int64, error) {
			r, err := e.s.Preadv(e.fd(fdDir), nil, 0)
			return int64(r), err
		}},
		{name: "preadv/dir no bytes negative offset", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			r, err := e.s.Preadv(e.fd(fdDir), nil, -1)
			return int64(r), err
		}},
		{name: "readv/O_WRONLY no bytes", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			r, err := e.s.Readv(e.fd(fdWO), nil)
			return int64(r), err
		}},
		{name: "open/dir O_WRONLY", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return open(e, "/d", unix.O_WRONLY) }},
		{name: "open/dir O_RDWR", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return open(e, "/d", unix.O_RDWR) }},
		{name: "open/dir O_CREAT", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return open(e, "/d", unix.O_RDONLY|unix.O_CREAT) }},
		{name: "open/dir O_TRUNC", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return open(e, "/d", unix.O_RDONLY|unix.O_TRUNC) }},
		{name: "truncate/dir", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Truncate("/d", 0)) }},
		{name: "unlink/dir", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Unlink("/d")) }},
		{name: "rename/file over dir", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/f", "/e")) }},

		// EINVAL
		{name: "lseek/negative SEEK_SET", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return seek(e, fdRW, -1, unix.SEEK_SET) }},
		{name: "lseek/negative SEEK_CUR", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return seek(e, fdRW, -1, unix.SEEK_CUR) }},
		{name: "lseek/negative SEEK_END", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return seek(e, fdRW, -5001, unix.SEEK_END) }},
		{name: "lseek/bad whence", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return seek(e, fdRW, 0, 5) }},
		{name: "lseek/bad whence dir", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return seek(e, fdDir, 0, 5) }},
		{name: "lseek/negative SEEK_DATA", want: unix.ENXIO, do: func(e errEnv) (int64, error) { return seek(e, fdRW, -1, unix.SEEK_DATA) }},
		{name: "pread/negative offset", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pread(e.fd(fdRW), make([]byte, 10), -1)
			return int64(r), err
		}},
		{name: "pwrite/negative offset", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pwrite(e.fd(fdRW), make([]byte, 10), -1)
			return int64(r), err
		}},
		{name: "preadv/negative offset", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			r, err := e.s.Preadv(e.fd(fdRW), [][]byte{make([]byte, 10)}, -1)
			return int64(r), err
		}},
		{name: "readv/too many iovecs", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			r, err := e.s.Readv(e.fd(fdRW), make([][]byte, 1025))
			return int64(r), err
		}},
		{name: "dup3/same fd", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Dup3(e.fd(fdRW), e.fd(fdRW), 0)) }},
		{name: "dup3/bad flags", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Dup3(e.fd(fdRW), e.fd(fdClosed), unix.O_APPEND)) }},
		// x/sys/unix.Dup2 is dup3(old, new, 0) on linux, and the facade mirrors it.
		{name: "Dup2 facade/same fd", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Dup2(e.fd(fdRW), e.fd(fdRW))) }},
		// The dup2(2) syscall itself returns the fd.
		{name: "dup2 syscall/same fd", ret: -1, do: func(e errEnv) (int64, error) { return rawDup2(e.s, e.fd(fdRW), e.fd(fdRW)) }},
		{name: "dup2 syscall/same closed fd", want: unix.EBADF, do: func(e errEnv) (int64, error) { return rawDup2(e.s, e.fd(fdClosed), e.fd(fdClosed)) }},
		{name: "fcntl/F_DUPFD at RLIMIT_NOFILE", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			return fcntl(e, e.fd(fdRW), unix.F_DUPFD, e.nofile)
		}},
		{name: "fcntl/F_DUPFD negative", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return fcntl(e, e.fd(fdRW), unix.F_DUPFD, -1) }},
		{name: "fcntl/F_DUPFD below limit", ret: -1, do: func(e errEnv) (int64, error) {
			return fcntl(e, e.fd(fdRW), unix.F_DUPFD, e.nofile-1)
		}},
		{name: "fcntl/bad cmd", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return fcntl(e, e.fd(fdRW), 9999, 0) }},
		{name: "ftruncate/negative", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Ftruncate(e.fd(fdRW), -1)) }},
		{name: "ftruncate/O_RDONLY", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Ftruncate(e.fd(fdRO), 0)) }},
		{name: "ftruncate/dir", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Ftruncate(e.fd(fdDir), 0)) }},
		{name: "truncate/negative", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Truncate("/f", -1)) }},
		// do_sys_truncate checks the length before it looks the path up.
		{name: "truncate/negative missing path", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Truncate("/nx", -1)) }},
		{name: "truncate/negative dir", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Truncate("/d", -1)) }},
		{name: "stat/dir size", ret: 4096, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			err := e.s.Stat("/d", &st)
			return st.Size, err
		}},
		{name: "fallocate/len 0", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Fallocate(e.fd(fdRW), 0, 0, 0)) }},
		{name: "fallocate/negative offset", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Fallocate(e.fd(fdRW), 0, -1, 10)) }},
		{name: "fallocate/PUNCH_HOLE without KEEP_SIZE", want: unix.EOPNOTSUPP, do: func(e errEnv) (int64, error) {
			return e0(e.s.Fallocate(e.fd(fdRW), unix.FALLOC_FL_PUNCH_HOLE, 0, 10))
		}},
		{name: "fallocate/dir", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.s.Fallocate(e.fd(fdDir), 0, 0, 10)) }},
		{name: "open/O_CREAT|O_DIRECTORY new", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			return open(e, "/new", unix.O_CREAT|unix.O_DIRECTORY)
		}},
		{name: "open/O_CREAT|O_DIRECTORY existing dir", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			return open(e, "/d", unix.O_CREAT|unix.O_DIRECTORY)
		}},
		{name: "rename/dir into itself", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/d", "/d/sub/y")) }},
		{name: "rmdir/dot", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return e0(e.s.Rmdir("/d/.")) }},
		{name: "readlink/not a symlink", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			r, err := e.s.Readlink("/f", make([]byte, 100))
			return int64(r), err
		}},

		// O_DIRECT: offset, length and buffer address must be multiples of 512 here
		// (statx dio_mem_align = dio_offset_align = 512), but I/O of no bytes is 0.
		{name: "pwrite/O_DIRECT unaligned offset", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pwrite(fd, alignedBuf(4096, 0), 100)
			return int64(r), err
		}},
		{name: "pwrite/O_DIRECT misaligned buffer", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pwrite(fd, alignedBuf(4096, 4), 0)
			return int64(r), err
		}},
		{name: "pread/O_DIRECT unaligned offset past EOF", ret: 0, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pread(fd, alignedBuf(4096, 0), 100000)
			return int64(r), err
		}},
		{name: "pread/O_DIRECT unaligned over a hole", ret: 100, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			if err := e.s.Ftruncate(fd, 1<<20); err != nil {
				return 0, err
			}
			r, err := e.s.Pread(fd, alignedBuf(100, 1), 1<<19+1)
			return int64(r), err
		}},
		{name: "pread/O_DIRECT unaligned over unwritten extent", ret: 100, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			if err := e.s.Fallocate(fd, 0, 1<<20, 1<<16); err != nil {
				return 0, err
			}
			r, err := e.s.Pread(fd, alignedBuf(100, 0), 1<<20+3)
			return int64(r), err
		}},
		// A buffered read caches the unwritten pages (SEEK_DATA then reports
		// data there), but iomap still maps an unwritten extent: zeros, unchecked.
		{name: "pread/O_DIRECT unaligned over cached unwritten extent", ret: 100, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			if err := e.s.Fallocate(fd, 0, 1<<20, 1<<16); err != nil {
				return 0, err
			}
			if _, err := e.s.Pread(e.fd(fdRO), make([]byte, 4096), 1<<20); err != nil {
				return 0, err
			}
			r, err := e.s.Pread(fd, alignedBuf(100, 0), 1<<20+3)
			return int64(r), err
		}},
		{name: "pread/O_DIRECT unaligned length past EOF", ret: 5000, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pread(fd, alignedBuf(9000, 0), 0)
			return int64(r), err
		}},
		{name: "pread/O_DIRECT unaligned length within EOF", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pread(fd, alignedBuf(4000, 0), 0)
			return int64(r), err
		}},
		{name: "pread/O_DIRECT unaligned over data", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pread(fd, alignedBuf(100, 0), 3)
			return int64(r), err
		}},
		{name: "pwrite/O_DIRECT failed extending write drops preallocation", ret: 0, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/g", unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT, 0o644)
			if err != nil {
				return 0, err
			}
			if err := e.s.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, 1<<16); err != nil {
				return 0, err
			}
			if _, err := e.s.Pwrite(fd, alignedBuf(13, 0), 0); err != unix.EINVAL {
				return 0, fmt.Errorf("pwrite: %v, want EINVAL", err)
			}
			var st unix.Stat_t
			if err := e.s.Fsync(fd); err != nil {
				return 0, err
			}
			err = e.s.Fstat(fd, &st)
			return st.Blocks, err
		}},
		// virtio-blk here: a misaligned buffer is accepted when the request is one
		// contiguous run within a page, refused otherwise.
		{name: "pwrite/O_DIRECT misaligned buffer within a page", ret: 512, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pwrite(fd, alignedBuf(512, 1), 0)
			return int64(r), err
		}},
		{name: "pwritev/O_DIRECT two misaligned buffers", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pwritev(fd, [][]byte{alignedBuf(512, 1), alignedBuf(512, 1)}, 0)
			return int64(r), err
		}, modelBug: "pwritev(O_DIRECT fd, [512 bytes at page offset 1, 512 bytes at page offset 1], 0) = 1024 in the model, kernel EINVAL", modelGot: 0},
		{name: "pwritev/O_DIRECT contiguous misaligned buffers in a page", ret: 1024, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			b := alignedBuf(1024, 1)
			r, err := e.s.Pwritev(fd, [][]byte{b[:512], b[512:]}, 0)
			return int64(r), err
		}},
		{name: "pwrite/O_DIRECT failed write inside EOF allocates", ret: 16, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/g", unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT, 0o644)
			if err != nil {
				return 0, err
			}
			if err := e.s.Ftruncate(fd, 1<<20); err != nil {
				return 0, err
			}
			if _, err := e.s.Pwrite(fd, alignedBuf(4096, 0), 16383); err != unix.EINVAL {
				return 0, fmt.Errorf("pwrite: %v, want EINVAL", err)
			}
			var st unix.Stat_t
			if err := e.s.Fsync(fd); err != nil {
				return 0, err
			}
			err = e.s.Fstat(fd, &st)
			return st.Blocks, err
		}, modelBug: "ftruncate(1 MiB) then an O_DIRECT pwrite(4096 bytes at 16383) = EINVAL: ext4 has allocated blocks 3-4 as unwritten (st_blocks 16 after fsync), the model none", modelGot: 0},
		{name: "pwritev/O_DIRECT failed write leaves its first piece", ret: 0x82, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/g", unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT, 0o644)
			if err != nil {
				return 0, err
			}
			if err := e.s.Ftruncate(fd, 4096); err != nil {
				return 0, err
			}
			if _, err := e.s.Pwrite(fd, dataBuf(512, 0, 7), 0); err != nil { // maps block 0
				return 0, err
			}
			if _, err := e.s.Pwritev(fd, [][]byte{dataBuf(5000, 0, 0x82), dataBuf(100, 0, 1)}, 512); err != unix.EINVAL {
				return 0, fmt.Errorf("pwritev: %v, want EINVAL", err)
			}
			b := make([]byte, 1)
			if _, err := e.s.Pread(e.fd(fdRO), b, 0); err != nil { // keeps fds in step
				return 0, err
			}
			fd2, err := e.s.Open("/g", unix.O_RDONLY, 0)
			if err != nil {
				return 0, err
			}
			_, err = e.s.Pread(fd2, b, 512)
			return int64(b[0]), err
		}, modelBug: "ftruncate(4096); O_DIRECT pwrite(512 bytes, 0); O_DIRECT pwritev([5000 bytes, 100 bytes], 512) = EINVAL on both, but ext4 has written [512, 4096) (the first, aligned, extent-sized piece): byte 512 is the new data on the kernel, 0 in the model", modelGot: 0},
		{name: "pwrite/O_DIRECT zero bytes unaligned", ret: 0, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pwrite(fd, nil, 100)
			return int64(r), err
		}},
		{name: "pwritev/O_DIRECT zero bytes unaligned", ret: 0, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Pwritev(fd, [][]byte{{}}, 100)
			return int64(r), err
		}},
		{name: "readv/O_DIRECT zero bytes unaligned", ret: 0, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			if _, err := e.s.Seek(fd, 100, unix.SEEK_SET); err != nil {
				return 0, err
			}
			r, err := e.s.Readv(fd, [][]byte{{}})
			return int64(r), err
		}},
		// Only regular files get FMODE_CAN_ODIRECT on ext4.
		{name: "open/dir O_DIRECT", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return open(e, "/d", unix.O_RDONLY|unix.O_DIRECT) }},
		{name: "fcntl/F_SETFL O_DIRECT dir", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return fcntl(e, e.fd(fdDir), unix.F_SETFL, unix.O_DIRECT) }},
		{name: "fcntl/F_SETFL O_DIRECT file", ret: 0, do: func(e errEnv) (int64, error) { return fcntl(e, e.fd(fdRW), unix.F_SETFL, unix.O_DIRECT) }},

		// ENXIO
		{name: "lseek/SEEK_DATA at EOF", want: unix.ENXIO, do: func(e errEnv) (int64, error) { return seek(e, fdRW, 5000, unix.SEEK_DATA) }},
		{name: "lseek/SEEK_DATA past EOF", want: unix.ENXIO, do: func(e errEnv) (int64, error) { return seek(e, fdRW, 1<<30, unix.SEEK_DATA) }},
		{name: "lseek/SEEK_HOLE past EOF", want: unix.ENXIO, do: func(e errEnv) (int64, error) { return seek(e, fdRW, 5001, unix.SEEK_HOLE) }},
		{name: "lseek/SEEK_HOLE at EOF", want: unix.ENXIO, do: func(e errEnv) (int64, error) { return seek(e, fdRW, 5000, unix.SEEK_HOLE) }},
		{name: "lseek/SEEK_DATA sparse file after same-size ftruncate", want: unix.ENXIO, do: func(e errEnv) (int64, error) {
			if err := e.s.Ftruncate(e.fd(fdEmpty), 233); err != nil {
				return 0, err
			}
			if err := e.s.Ftruncate(e.fd(fdEmpty), 233); err != nil {
				return 0, err
			}
			return seek(e, fdEmpty, 0, unix.SEEK_DATA)
		}},
		{name: "lseek/SEEK_DATA sparse file after ftruncate", want: unix.ENXIO, do: func(e errEnv) (int64, error) {
			if err := e.s.Ftruncate(e.fd(fdEmpty), 233); err != nil {
				return 0, err
			}
			return seek(e, fdEmpty, 0, unix.SEEK_DATA)
		}},
		{name: "lseek/SEEK_DATA unwritten extent after buffered read", ret: 0, do: func(e errEnv) (int64, error) {
			if err := e.s.Fallocate(e.fd(fdEmpty), 0, 0, 8192); err != nil {
				return 0, err
			}
			if _, err := e.s.Pread(e.fd(fdEmpty), make([]byte, 100), 0); err != nil {
				return 0, err
			}
			return seek(e, fdEmpty, 0, unix.SEEK_DATA)
		}},
		{name: "lseek/SEEK_HOLE unwritten extent after partial-block buffered read", ret: 8192, do: func(e errEnv) (int64, error) {
			if err := e.s.Fallocate(e.fd(fdEmpty), 0, 0, 8192); err != nil {
				return 0, err
			}
			if _, err := e.s.Pread(e.fd(fdEmpty), make([]byte, 5000), 0); err != nil {
				return 0, err
			}
			return seek(e, fdEmpty, 0, unix.SEEK_HOLE)
		}},
		{name: "read/dir at LLONG_MAX", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			if _, err := e.s.Seek(e.fd(fdDir), 0, unix.SEEK_END); err != nil {
				return 0, err
			}
			return rd(e, fdDir, 10)
		}},
		{name: "readv/dir at LLONG_MAX", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			if _, err := e.s.Seek(e.fd(fdDir), 0, unix.SEEK_END); err != nil {
				return 0, err
			}
			r, err := e.s.Readv(e.fd(fdDir), [][]byte{make([]byte, 10)})
			return int64(r), err
		}},
		{name: "pread/dir offset overflow", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pread(e.fd(fdDir), make([]byte, 10), 1<<63-5)
			return int64(r), err
		}},
		{name: "lseek/SEEK_DATA unwritten extent after O_DIRECT read", want: unix.ENXIO, do: func(e errEnv) (int64, error) {
			if err := e.s.Fallocate(e.fd(fdEmpty), 0, 0, 8192); err != nil {
				return 0, err
			}
			fd, err := e.s.Open("/empty", unix.O_RDONLY|unix.O_DIRECT, 0)
			if err != nil {
				return 0, err
			}
			if _, err := e.s.Pread(fd, alignedBuf(4096, 0), 0); err != nil {
				return 0, err
			}
			return seek(e, fdEmpty, 0, unix.SEEK_DATA)
		}},
		{name: "lseek/SEEK_DATA empty file", want: unix.ENXIO, do: func(e errEnv) (int64, error) { return seek(e, fdEmpty, 0, unix.SEEK_DATA) }},
		{name: "lseek/SEEK_HOLE empty file", want: unix.ENXIO, do: func(e errEnv) (int64, error) { return seek(e, fdEmpty, 0, unix.SEEK_HOLE) }},
		{name: "lseek/SEEK_DATA dir", ret: 0, do: func(e errEnv) (int64, error) { return seek(e, fdDir, 0, unix.SEEK_DATA) }},
		{name: "lseek/SEEK_HOLE dir", ret: 1<<63 - 1, do: func(e errEnv) (int64, error) { return seek(e, fdDir, 0, unix.SEEK_HOLE) }},
		{name: "lseek/SEEK_END dir", ret: 1<<63 - 1, do: func(e errEnv) (int64, error) { return seek(e, fdDir, 0, unix.SEEK_END) }},

		// A directory removed while open has i_size 0 and is no htree any more.
		{name: "lseek/removed dir SEEK_DATA", want: unix.ENXIO, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/e", unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				return 0, err
			}
			if err := e.s.Rmdir("/e"); err != nil {
				return 0, err
			}
			return e.s.Seek(fd, 0, unix.SEEK_DATA)
		}},
		{name: "lseek/removed dir SEEK_END", ret: 0, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/e", unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				return 0, err
			}
			if err := e.s.Rmdir("/e"); err != nil {
				return 0, err
			}
			return e.s.Seek(fd, 0, unix.SEEK_END)
		}},
		{name: "fstat/removed dir", ret: 0, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/e", unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				return 0, err
			}
			if err := e.s.Rmdir("/e"); err != nil {
				return 0, err
			}
			var st unix.Stat_t
			err = e.s.Fstat(fd, &st)
			return int64(st.Nlink)<<32 | st.Size, err
		}},

		// ENOENT
		{name: "open/missing", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return open(e, "/nx", unix.O_RDONLY) }},
		{name: "open/missing dir O_CREAT", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return open(e, "/nx/f", unix.O_RDWR|unix.O_CREAT) }},
		{name: "open/empty path", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return open(e, "", unix.O_RDONLY) }},
		{name: "open/dangling symlink", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return open(e, "/dang", unix.O_RDONLY) }},
		{name: "open/dangling symlink O_CREAT creates the target", ret: -1, do: func(e errEnv) (int64, error) {
			if _, err := open(e, "/dang", unix.O_RDWR|unix.O_CREAT); err != nil {
				return 0, err
			}
			var st unix.Stat_t
			return 0, e.s.Lstat("/nx", &st)
		}},
		{name: "stat/missing", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			return e0(e.s.Stat("/nx", &st))
		}},
		{name: "stat/dangling symlink", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			return e0(e.s.Stat("/dang", &st))
		}},
		{name: "unlink/missing", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return e0(e.s.Unlink("/nx")) }},
		{name: "rmdir/missing", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return e0(e.s.Rmdir("/nx")) }},
		{name: "rename/missing", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/nx", "/ny")) }},
		{name: "rename/into missing dir", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/f", "/nx/f")) }},
		{name: "mkdir/missing parent", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return e0(e.s.Mkdir("/nx/y", 0o755)) }},
		{name: "truncate/missing", want: unix.ENOENT, do: func(e errEnv) (int64, error) { return e0(e.s.Truncate("/nx", 0)) }},
		{name: "openat/empty path", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			r, err := e.s.Openat(e.fd(fdDir), "", unix.O_RDONLY, 0)
			return int64(r), err
		}},
		{name: "creat/in removed dir", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			if err := e.s.Rmdir("/e"); err != nil {
				return 0, err
			}
			r, err := e.s.Openat(e.fd(fdDir), "../e/x", unix.O_CREAT|unix.O_RDWR, 0o644)
			return int64(r), err
		}},

		// ENOTDIR
		{name: "open/through a file", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return open(e, "/f/x", unix.O_RDONLY) }},
		{name: "open/file O_DIRECTORY", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return open(e, "/f", unix.O_RDONLY|unix.O_DIRECTORY) }},
		{name: "open/file trailing slash", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return open(e, "/f/", unix.O_RDONLY) }},
		{name: "open/new file trailing slash O_CREAT", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return open(e, "/new/", unix.O_RDWR|unix.O_CREAT) }},
		{name: "stat/file trailing slash", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			return e0(e.s.Stat("/f/", &st))
		}},
		{name: "mkdir/under a file", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Mkdir("/f/x", 0o755)) }},
		{name: "rmdir/file", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Rmdir("/f")) }},
		{name: "rmdir/symlink", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Rmdir("/lf")) }},
		{name: "rename/dir over file", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/e", "/f")) }},
		{name: "unlink/file trailing slash", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) { return e0(e.s.Unlink("/f/")) }},
		{name: "openat/file dirfd", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			r, err := e.s.Openat(e.fd(fdRW), "x", unix.O_RDONLY, 0)
			return int64(r), err
		}},

		// EEXIST
		{name: "open/O_CREAT|O_EXCL existing", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return open(e, "/f", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL) }},
		{name: "open/O_CREAT|O_EXCL dir", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return open(e, "/d", unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL) }},
		{name: "open/O_CREAT|O_EXCL dangling symlink", want: unix.EEXIST, do: func(e errEnv) (int64, error) {
			return open(e, "/dang", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL)
		}},
		{name: "open/O_CREAT|O_EXCL root", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return open(e, "/", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL) }},
		{name: "open/O_CREAT|O_EXCL dir dot", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return open(e, "/d/.", unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL) }},
		{name: "open/O_CREAT|O_EXCL dir dotdot", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return open(e, "/d/..", unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL) }},
		{name: "open/O_CREAT root", want: unix.EISDIR, do: func(e errEnv) (int64, error) { return open(e, "/", unix.O_RDONLY|unix.O_CREAT) }},
		{name: "open/O_CREAT|O_EXCL dir trailing slash", want: unix.EISDIR, do: func(e errEnv) (int64, error) {
			return open(e, "/d/", unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL)
		}},
		{name: "open/O_CREAT|O_EXCL file trailing slash", want: unix.EISDIR, do: func(e errEnv) (int64, error) {
			return open(e, "/f/", unix.O_RDONLY|unix.O_CREAT|unix.O_EXCL)
		}},
		{name: "mkdir/existing dir", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return e0(e.s.Mkdir("/d", 0o755)) }},
		{name: "mkdir/existing file", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return e0(e.s.Mkdir("/f", 0o755)) }},
		{name: "mkdir/dangling symlink", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return e0(e.s.Mkdir("/dang", 0o755)) }},
		{name: "symlink/existing", want: unix.EEXIST, do: func(e errEnv) (int64, error) { return e0(e.s.Symlink("x", "/f")) }},

		// ENOTEMPTY
		{name: "rmdir/non-empty", want: unix.ENOTEMPTY, do: func(e errEnv) (int64, error) { return e0(e.s.Rmdir("/d")) }},
		{name: "rename/dir over non-empty dir", want: unix.ENOTEMPTY, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/e", "/d")) }},
		// The target is an ancestor of the source: do_renameat2's lock_rename trap.
		{name: "rename/file onto its parent", want: unix.ENOTEMPTY, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/d/sub/x", "/d/sub")) }},
		{name: "rename/file onto its grandparent", want: unix.ENOTEMPTY, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/d/sub/x", "/d")) }},
		{name: "rename/empty dir onto its parent", want: unix.ENOTEMPTY, do: func(e errEnv) (int64, error) {
			if err := e.s.Mkdir("/e/f", 0o755); err != nil {
				return 0, err
			}
			return e0(e.s.Rename("/e/f", "/e"))
		}},
		{name: "rename/dir over empty dir", ret: -1, do: func(e errEnv) (int64, error) { return e0(e.s.Rename("/d", "/e")) }},

		// ELOOP
		{name: "open/O_NOFOLLOW symlink", want: unix.ELOOP, do: func(e errEnv) (int64, error) { return open(e, "/lf", unix.O_RDONLY|unix.O_NOFOLLOW) }},
		{name: "open/O_NOFOLLOW|O_CREAT symlink", want: unix.ELOOP, do: func(e errEnv) (int64, error) {
			return open(e, "/dang", unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW)
		}},
		{name: "open/loop", want: unix.ELOOP, do: func(e errEnv) (int64, error) { return open(e, "/loop1", unix.O_RDONLY) }},
		{name: "open/self loop", want: unix.ELOOP, do: func(e errEnv) (int64, error) { return open(e, "/self", unix.O_RDONLY) }},
		{name: "open/loop O_CREAT", want: unix.ELOOP, do: func(e errEnv) (int64, error) { return open(e, "/loop1", unix.O_RDWR|unix.O_CREAT) }},
		{name: "stat/loop", want: unix.ELOOP, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			return e0(e.s.Stat("/loop1", &st))
		}},
		{name: "lstat/loop", ret: -1, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			return e0(e.s.Lstat("/loop1", &st))
		}},
		{name: "open/through loop", want: unix.ELOOP, do: func(e errEnv) (int64, error) { return open(e, "/loop1/x", unix.O_RDONLY) }},

		// ENAMETOOLONG
		{name: "open/component over NAME_MAX", want: unix.ENAMETOOLONG, do: func(e errEnv) (int64, error) { return open(e, long, unix.O_RDONLY) }},
		{name: "open/component over NAME_MAX O_CREAT", want: unix.ENAMETOOLONG, do: func(e errEnv) (int64, error) {
			return open(e, long, unix.O_RDWR|unix.O_CREAT)
		}},
		{name: "open/component at NAME_MAX O_CREAT", ret: -1, do: func(e errEnv) (int64, error) {
			return open(e, long[:256], unix.O_RDWR|unix.O_CREAT)
		}},
		{name: "open/path over PATH_MAX", want: unix.ENAMETOOLONG, do: func(e errEnv) (int64, error) { return open(e, longPath, unix.O_RDONLY) }},
		{name: "mkdir/component over NAME_MAX", want: unix.ENAMETOOLONG, do: func(e errEnv) (int64, error) { return e0(e.s.Mkdir(long, 0o755)) }},
		{name: "stat/component over NAME_MAX", want: unix.ENAMETOOLONG, do: func(e errEnv) (int64, error) {
			var st unix.Stat_t
			return e0(e.s.Stat(long, &st))
		}},
		{name: "unlink/path over PATH_MAX", want: unix.ENAMETOOLONG, do: func(e errEnv) (int64, error) { return e0(e.s.Unlink(longPath)) }},

		// EFBIG: ext4's s_maxbytes with 4 KiB blocks is 16 TiB - 4 KiB.
		{name: "pwrite/at s_maxbytes", want: unix.EFBIG, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pwrite(e.fd(fdRW), []byte("x"), maxBytes)
			return int64(r), err
		}},
		{name: "pwrite/across s_maxbytes is short", ret: 1, do: func(e errEnv) (int64, error) {
			r, err := e.s.Pwrite(e.fd(fdRW), []byte("xy"), maxBytes-1)
			return int64(r), err
		}},
		{name: "write/at s_maxbytes", want: unix.EFBIG, do: func(e errEnv) (int64, error) {
			if _, err := e.s.Seek(e.fd(fdRW), maxBytes, unix.SEEK_SET); err != nil {
				return 0, err
			}
			return wr(e, fdRW, 1)
		}},
		{name: "ftruncate/beyond s_maxbytes", want: unix.EFBIG, do: func(e errEnv) (int64, error) { return e0(e.s.Ftruncate(e.fd(fdRW), maxBytes+1)) }},
		{name: "ftruncate/to s_maxbytes", ret: -1, do: func(e errEnv) (int64, error) { return e0(e.s.Ftruncate(e.fd(fdRW), maxBytes)) }},
		{name: "fallocate/beyond s_maxbytes", want: unix.EFBIG, do: func(e errEnv) (int64, error) {
			return e0(e.s.Fallocate(e.fd(fdRW), 0, maxBytes, 4096))
		}},
		{name: "lseek/beyond s_maxbytes", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return seek(e, fdRW, maxBytes+1, unix.SEEK_SET) }},
		{name: "lseek/to s_maxbytes", ret: maxBytes, do: func(e errEnv) (int64, error) { return seek(e, fdRW, maxBytes, unix.SEEK_SET) }},

		// EXDEV: not applicable; the model has one file system and the runs live in
		// one directory of one ext4 file system.

		// EMFILE: the fd limit is lowered on both sides to base+fdPath+2, so one
		// more fd fits.
		{name: "open/EMFILE", want: unix.EMFILE, do: func(e errEnv) (int64, error) {
			if _, err := open(e, "/f", unix.O_RDONLY); err != nil {
				return 0, err
			}
			return open(e, "/f", unix.O_RDONLY)
		}},
		// What build_open_flags and getname refuse comes before the fd
		// (do_sys_openat2), so it wins over EMFILE; the lookup comes after.
		{name: "open/EMFILE then empty path ENOENT", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			if _, err := open(e, "/f", unix.O_RDONLY); err != nil {
				return 0, err
			}
			return open(e, "", unix.O_RDONLY)
		}},
		{name: "open/EMFILE then PATH_MAX ENAMETOOLONG", want: unix.ENAMETOOLONG, do: func(e errEnv) (int64, error) {
			if _, err := open(e, "/f", unix.O_RDONLY); err != nil {
				return 0, err
			}
			return open(e, strings.Repeat("a", 4096), unix.O_RDONLY)
		}},
		{name: "open/EMFILE then O_CREAT|O_DIRECTORY EINVAL", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			if _, err := open(e, "/f", unix.O_RDONLY); err != nil {
				return 0, err
			}
			return open(e, "/new", unix.O_CREAT|unix.O_DIRECTORY|unix.O_RDWR)
		}},
		{name: "open/EMFILE then O_TMPFILE read-only EINVAL", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			if _, err := open(e, "/f", unix.O_RDONLY); err != nil {
				return 0, err
			}
			return open(e, "/d", unix.O_TMPFILE|unix.O_RDONLY)
		}},
		{name: "open/EMFILE then missing file EMFILE", want: unix.EMFILE, do: func(e errEnv) (int64, error) {
			if _, err := open(e, "/f", unix.O_RDONLY); err != nil {
				return 0, err
			}
			return open(e, "/missing", unix.O_RDONLY)
		}},
		// O_TMPFILE: the directory is looked up before the file system is asked
		// for an unnamed file (the model answers EOPNOTSUPP, as a file system
		// without tmpfile support, only then).
		{name: "open/O_TMPFILE on a file ENOTDIR", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			return open(e, "/f", unix.O_TMPFILE|unix.O_WRONLY)
		}},
		{name: "open/O_TMPFILE missing ENOENT", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			return open(e, "/nx", unix.O_TMPFILE|unix.O_WRONLY)
		}},
		{name: "dup/EMFILE", want: unix.EMFILE, do: func(e errEnv) (int64, error) {
			if _, err := e.s.Dup(e.fd(fdRW)); err != nil {
				return 0, err
			}
			r, err := e.s.Dup(e.fd(fdRW))
			return int64(r), err
		}},
		{name: "fcntl/F_DUPFD EMFILE", want: unix.EMFILE, do: func(e errEnv) (int64, error) {
			if _, err := e.s.Dup(e.fd(fdRW)); err != nil {
				return 0, err
			}
			return fcntl(e, e.fd(fdRW), unix.F_DUPFD, 0)
		}},
		{name: "dup2/at lowered limit EBADF", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			return e0(e.s.Dup2(e.fd(fdRW), e.nofile))
		}},
	}
	runErrRows(t, h, rows)
}

// errRow is one row of an error-path table: a call, run from the state
// setupErrpaths builds, and what this kernel answers.
type errRow = errRowOf[errEnv]

// errRowOf is errRow for a table whose calls see an environment of their own
// (E); the table converts its rows to errRows to run them.
type errRowOf[E any] struct {
	name string
	do   func(e E) (int64, error)
	want syscall.Errno // 0: the call succeeds
	ret  int64         // with want 0: the expected return value, unless ret < 0

	// modelBug documents a known divergence of the model: when the model
	// returns exactly modelGot (an errno, or 0 for success) the row is skipped
	// with this note after the kernel side was checked.
	modelBug string
	modelGot syscall.Errno
}

// runErrRows runs each row as a subtest on a fresh pair: on the kernel and on the
// model, from setupErrpaths, and checks both against the row's answer.
func runErrRows(t *testing.T, h *host, rows []errRow) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			// A row may change the test process's cwd (fchdir on the kernel
			// side): put it back.
			wd, err := os.Getwd()
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := unix.Chdir(wd); err != nil {
					t.Fatalf("restoring the cwd: %v", err)
				}
			}()
			p := h.newPair(t)
			defer p.done()
			setupErrpaths(t, p.m)
			setupErrpaths(t, p.k)
			var mret, kret int64
			var merr, kerr error
			if strings.Contains(r.name, "EMFILE") || strings.Contains(r.name, "lowered limit") {
				lim := h.base + fdPath + 2
				e := errEnv{base: h.base, nofile: lim}
				e.s = p.m
				withModelNofile(t, p, lim, func() { mret, merr = r.do(e) })
				e.s = p.k
				withKernelNofile(t, lim, func() { kret, kerr = r.do(e) })
			} else {
				mret, merr = r.do(errEnv{s: p.m, base: h.base, nofile: h.nofile})
				kret, kerr = r.do(errEnv{s: p.k, base: h.base, nofile: h.nofile})
			}
			check := func(side string, ret int64, err error) {
				t.Helper()
				e, bare := errnoOf(err)
				switch {
				case !bare:
					t.Errorf("%s: returned %s, want a bare syscall.Errno", side, errName(err))
				case e != r.want:
					t.Errorf("%s: got %d %s, want %s", side, ret, errName(err), errName(errOrNil(r.want)))
				case r.want == 0 && r.ret >= 0 && ret != r.ret:
					t.Errorf("%s: returned %d, want %d", side, ret, r.ret)
				}
			}
			check("kernel", kret, kerr)
			if me, _ := errnoOf(merr); r.modelBug != "" && me == r.modelGot && (me != r.want || mret != kret) {
				t.Skip("model bug: " + r.modelBug)
			}
			check("model", mret, merr)
			if kerr == nil && merr == nil && kret != mret {
				t.Errorf("kernel returned %d, model %d", kret, mret)
			}
		})
	}
}

// rawDup2 makes the dup2(2) syscall on either side.
func rawDup2(s sys, oldfd, newfd int) (int64, error) {
	switch s := s.(type) {
	case *osKernel:
		r, err := s.rawDup2(oldfd, newfd)
		return int64(r), err
	case *sim.Process:
		c := sim.Call{Nr: sim.SYS_DUP2}
		c.Args[0], c.Args[1] = int64(oldfd), int64(newfd)
		r := s.Syscall(c)
		return r.Ret, r.Err()
	}
	panic("unknown side")
}

// withModelNofile runs fn with the model process's RLIMIT_NOFILE soft limit set to
// n through setrlimit(2), and checks that getrlimit reads it back.
func withModelNofile(t *testing.T, p *pair, n int, fn func()) {
	t.Helper()
	var old unix.Rlimit
	if err := p.m.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatalf("model getrlimit: %v", err)
	}
	lim := unix.Rlimit{Cur: uint64(n), Max: old.Max}
	if err := p.m.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("model setrlimit: %v", err)
	}
	var got unix.Rlimit
	if err := p.m.Getrlimit(unix.RLIMIT_NOFILE, &got); err != nil || got.Cur != uint64(n) {
		t.Errorf("model: getrlimit after setrlimit(RLIMIT_NOFILE, %d) = %+v, %v", n, got, err)
	}
	fn()
}

func errOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// withKernelNofile runs fn with the test process's RLIMIT_NOFILE soft limit set
// to n, and restores it. Nothing else may open fds meanwhile (the test is not
// parallel).
func withKernelNofile(t *testing.T, n int, fn func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(n)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	defer func() {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			t.Fatalf("restoring RLIMIT_NOFILE: %v", err)
		}
	}()
	fn()
}

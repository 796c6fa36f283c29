//go:build linux

package sim_test

// Error-path rows for the fd-based calls that TestErrorPaths does not cover:
// getdents64, flock, the fcntl record locks, sync_file_range, syncfs,
// copy_file_range, sendfile, fchdir and getcwd. Same method: every row runs on the
// real kernel and on the model from setupErrpaths, and both must give the expected
// answer, which was taken from this kernel.

import (
	"math"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"iosim/sim"
)

// sysFD is the part of the syscall surface these rows use on top of sys, with the
// names and signatures of golang.org/x/sys/unix.
type sysFD interface {
	sys
	Getdents(fd int, buf []byte) (int, error)
	Flock(fd int, how int) error
	FcntlFlock(fd uintptr, cmd int, lk *unix.Flock_t) error
	SyncFileRange(fd int, off int64, n int64, flags int) error
	Syncfs(fd int) error
	CopyFileRange(rfd int, roff *int64, wfd int, woff *int64, len int, flags int) (int, error)
	Sendfile(outfd int, infd int, offset *int64, count int) (int, error)
	Fchdir(fd int) error
	Getcwd(buf []byte) (int, error)
}

var (
	_ sysFD = (*sim.Process)(nil)
	_ sysFD = (*osKernel)(nil)
)

func (k *osKernel) Getdents(fd int, buf []byte) (int, error) { return unix.Getdents(k.fd(fd), buf) }

func (k *osKernel) Flock(fd int, how int) error { return unix.Flock(k.fd(fd), how) }

func (k *osKernel) FcntlFlock(fd uintptr, cmd int, lk *unix.Flock_t) error {
	return unix.FcntlFlock(uintptr(k.fd(int(fd))), cmd, lk)
}

func (k *osKernel) SyncFileRange(fd int, off int64, n int64, flags int) error {
	return unix.SyncFileRange(k.fd(fd), off, n, flags)
}

func (k *osKernel) Syncfs(fd int) error { return unix.Syncfs(k.fd(fd)) }

func (k *osKernel) CopyFileRange(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
	return unix.CopyFileRange(k.fd(rfd), roff, k.fd(wfd), woff, n, flags)
}

func (k *osKernel) Sendfile(outfd int, infd int, offset *int64, count int) (int, error) {
	return unix.Sendfile(k.fd(outfd), k.fd(infd), offset, count)
}

// Fchdir changes the test process's cwd: TestErrorPathsFD restores it after each
// row.
func (k *osKernel) Fchdir(fd int) error { return unix.Fchdir(k.fd(fd)) }

// Getcwd is getcwd(2) with the answer translated to the model's path (the run's
// directory is "/"). The kernel's path is longer than the model's by the
// directory's, so only the outcomes that do not depend on the length translate:
// success with a buffer large enough for both, ERANGE with one too small for both,
// ENOENT. The cwd must be inside the run's directory (after an Fchdir).
func (k *osKernel) Getcwd(buf []byte) (int, error) {
	n, err := unix.Getcwd(buf)
	if err != nil {
		return n, err
	}
	p := string(buf[:n-1])
	switch {
	case p == k.dir:
		p = "/"
	case strings.HasPrefix(p, k.dir+"/"):
		p = p[len(k.dir):]
	default:
		k.tb.Fatalf("test bug: getcwd %q is outside the run's directory %q", p, k.dir)
	}
	m := copy(buf, p)
	buf[m] = 0
	return m + 1, nil
}

// fdEnv is what a row's call sees: the side it runs on and the fd baseline.
type fdEnv struct {
	s    sysFD
	base int
}

func (e fdEnv) fd(i int) int { return e.base + i }

// open opens path on the side and returns the fd (both sides hand out the same
// numbers, fdNew first), or -1 (the row's call then fails with EBADF).
func (e fdEnv) open(path string, flags int) int {
	fd, err := e.s.Open(path, flags, 0o644)
	if err != nil {
		return -1
	}
	return fd
}

// devnull opens /dev/null O_RDWR at the lowest free fd (fdNew after setup): the
// real one on the kernel, a sim.DevNull on the model.
func (e fdEnv) devnull() int {
	switch s := e.s.(type) {
	case *osKernel:
		fd, err := s.got(unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0))
		if err != nil || fd != e.fd(fdNew) {
			s.tb.Fatalf("test bug: /dev/null opened at fd %d (%v), want %d", fd, err, e.fd(fdNew))
		}
		return fd
	case *sim.Process:
		if err := s.Task().InstallSpecial(e.fd(fdNew), sim.DevNull{}, unix.O_RDWR); err != nil {
			panic(err)
		}
		return e.fd(fdNew)
	}
	panic("unknown side")
}

// offAt is the file offset of fd (lseek(fd, 0, SEEK_CUR)), or -1.
func (e fdEnv) offAt(fd int) int64 {
	off, err := e.s.Seek(e.fd(fd), 0, unix.SEEK_CUR)
	if err != nil {
		return -1
	}
	return off
}

// pack combines up to three small non-negative numbers into one row result (a
// return value and offsets): pack(a, b, c) = a*1e8 + b*1e4 + c.
func pack(a, b, c int64) int64 { return a*1e8 + b*1e4 + c }

const (
	lockMand = 32         // LOCK_MAND: flock(2) ignores it and returns 0
	fdNew    = fdPath + 1 // the first fd a row opens
)

func TestErrorPathsFD(t *testing.T) {
	h := newHost(t)
	e0 := func(err error) (int64, error) { return 0, err }
	lk := func(typ, whence int16, start, n int64) *unix.Flock_t {
		return &unix.Flock_t{Type: typ, Whence: whence, Start: start, Len: n}
	}
	setlk := func(e fdEnv, fd int, cmd int, l *unix.Flock_t) (int64, error) {
		return e0(e.s.FcntlFlock(uintptr(fd), cmd, l))
	}
	cfr := func(e fdEnv, in int, roff *int64, out int, woff *int64, n, flags int) (int64, error) {
		r, err := e.s.CopyFileRange(in, roff, out, woff, n, flags)
		return int64(r), err
	}
	sendfile := func(e fdEnv, out, in int, off *int64, n int) (int64, error) {
		r, err := e.s.Sendfile(out, in, off, n)
		return int64(r), err
	}
	getdents := func(e fdEnv, fd int, n int) (int64, error) {
		r, err := e.s.Getdents(fd, make([]byte, n))
		return int64(r), err
	}
	getcwd := func(e fdEnv, n int) (int64, error) {
		r, err := e.s.Getcwd(make([]byte, n))
		return int64(r), err
	}
	i64 := func(v int64) *int64 { return &v }
	type row = errRowOf[fdEnv]
	rows := []row{
		// flock(2): the operation is translated before the fd is looked up
		// (SYSCALL_DEFINE2(flock): LOCK_MAND returns 0 first, then
		// flock_translate_cmd, then fdget, which refuses O_PATH).
		{name: "flock/never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdClosed), unix.LOCK_SH)) }},
		{name: "flock/O_PATH", want: unix.EBADF, do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdPath), unix.LOCK_SH)) }},
		{name: "flock/op 0", want: unix.EINVAL, do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdRW), 0)) }},
		{name: "flock/LOCK_SH|LOCK_EX", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return e0(e.s.Flock(e.fd(fdRW), unix.LOCK_SH|unix.LOCK_EX))
		}},
		{name: "flock/LOCK_NB alone", want: unix.EINVAL, do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdRW), unix.LOCK_NB)) }},
		{name: "flock/bad op before bad fd", want: unix.EINVAL, do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdClosed), 0)) }},
		{name: "flock/bad op before O_PATH", want: unix.EINVAL, do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdPath), 16)) }},
		{name: "flock/LOCK_MAND ignored even on a bad fd", do: func(e fdEnv) (int64, error) {
			return e0(e.s.Flock(e.fd(fdClosed), lockMand|unix.LOCK_SH))
		}},
		{name: "flock/op -1 has the LOCK_MAND bit", do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdClosed), -1)) }},
		{name: "flock/LOCK_EX on O_RDONLY", do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdRO), unix.LOCK_EX)) }},
		{name: "flock/LOCK_EX on a directory", do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.fd(fdDir), unix.LOCK_EX)) }},
		{name: "flock/character device", do: func(e fdEnv) (int64, error) { return e0(e.s.Flock(e.devnull(), unix.LOCK_EX)) }},
		{name: "flock/conflict between descriptions EAGAIN", want: unix.EAGAIN, do: func(e fdEnv) (int64, error) {
			if err := e.s.Flock(e.fd(fdRW), unix.LOCK_EX); err != nil {
				return 0, err
			}
			return e0(e.s.Flock(e.fd(fdRO), unix.LOCK_SH|unix.LOCK_NB))
		}},
		// flock_lock_inode drops the old lock before it looks for conflicts, so a
		// failed conversion leaves the description without a lock.
		{name: "flock/failed conversion drops the lock", do: func(e fdEnv) (int64, error) {
			if err := e.s.Flock(e.fd(fdRW), unix.LOCK_SH); err != nil {
				return 0, err
			}
			if err := e.s.Flock(e.fd(fdRO), unix.LOCK_SH); err != nil {
				return 0, err
			}
			if err := e.s.Flock(e.fd(fdRW), unix.LOCK_EX|unix.LOCK_NB); err != unix.EAGAIN {
				return 0, err
			}
			return e0(e.s.Flock(e.fd(fdRO), unix.LOCK_EX|unix.LOCK_NB))
		}},

		// fcntl record locks: do_fcntl refuses O_PATH for them; fcntl_setlk runs
		// flock_to_posix_lock (l_whence, l_start overflow, start < 0, l_len
		// overflow, negative l_len before 0, then l_type), then
		// check_fmode_for_setlk (EBADF), and only then the OFD l_pid check.
		{name: "F_SETLK/never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdClosed), unix.F_SETLK, lk(unix.F_RDLCK, 0, 0, 0))
		}},
		{name: "F_SETLK/O_PATH", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdPath), unix.F_SETLK, lk(unix.F_RDLCK, 0, 0, 0))
		}},
		{name: "F_GETLK/O_PATH", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdPath), unix.F_GETLK, lk(unix.F_RDLCK, 0, 0, 0))
		}},
		{name: "F_OFD_SETLK/O_PATH bad l_type", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdPath), unix.F_OFD_SETLK, lk(9, 0, 0, 0))
		}},
		{name: "F_SETLK/bad l_type", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(5, 0, 0, 0))
		}},
		{name: "F_SETLK/bad l_whence", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_RDLCK, 3, 0, 0))
		}},
		{name: "F_SETLK/SEEK_CUR before 0", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			if _, err := e.s.Seek(e.fd(fdRW), 100, unix.SEEK_SET); err != nil {
				return 0, err
			}
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_RDLCK, unix.SEEK_CUR, -101, 10))
		}},
		{name: "F_SETLK/SEEK_END l_start overflow", want: unix.EOVERFLOW, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_RDLCK, unix.SEEK_END, math.MaxInt64, 1))
		}},
		{name: "F_SETLK/l_len overflow", want: unix.EOVERFLOW, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_RDLCK, unix.SEEK_SET, 2, math.MaxInt64))
		}},
		{name: "F_SETLK/l_len to OFFSET_MAX", do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_RDLCK, unix.SEEK_SET, 1, math.MaxInt64))
		}},
		{name: "F_SETLK/negative l_len before 0", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 5, -10))
		}},
		{name: "F_SETLK/range checked before l_type", want: unix.EOVERFLOW, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_SETLK, lk(7, unix.SEEK_SET, 2, math.MaxInt64))
		}},
		{name: "F_SETLK/l_whence checked before l_type", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRO), unix.F_SETLK, lk(unix.F_WRLCK, 5, 0, 0))
		}},
		{name: "F_SETLK/F_WRLCK on O_RDONLY", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRO), unix.F_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 0, 0))
		}},
		{name: "F_SETLK/F_RDLCK on O_WRONLY", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdWO), unix.F_SETLK, lk(unix.F_RDLCK, unix.SEEK_SET, 0, 0))
		}},
		{name: "F_SETLK/F_UNLCK on O_RDONLY", do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRO), unix.F_SETLK, lk(unix.F_UNLCK, unix.SEEK_SET, 0, 0))
		}},
		{name: "F_SETLK/character device", do: func(e fdEnv) (int64, error) {
			return setlk(e, e.devnull(), unix.F_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 0, 0))
		}},
		{name: "F_GETLK/F_UNLCK", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_GETLK, lk(unix.F_UNLCK, 0, 0, 0))
		}},
		{name: "F_GETLK/F_WRLCK on O_RDONLY", ret: unix.F_UNLCK, do: func(e fdEnv) (int64, error) {
			l := lk(unix.F_WRLCK, unix.SEEK_SET, 0, 0)
			err := e.s.FcntlFlock(uintptr(e.fd(fdRO)), unix.F_GETLK, l)
			return int64(l.Type), err
		}},
		{name: "F_GETLK/own POSIX lock not reported", ret: unix.F_UNLCK, do: func(e fdEnv) (int64, error) {
			if _, err := setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 0, 100)); err != nil {
				return 0, err
			}
			l := lk(unix.F_WRLCK, unix.SEEK_SET, 0, 0)
			err := e.s.FcntlFlock(uintptr(e.fd(fdRO)), unix.F_GETLK, l)
			return int64(l.Type), err
		}},
		{name: "F_SETLK/POSIX locks of one process do not conflict", do: func(e fdEnv) (int64, error) {
			if _, err := setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 0, 100)); err != nil {
				return 0, err
			}
			return setlk(e, e.fd(fdWO), unix.F_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 50, 100))
		}},
		{name: "F_OFD_SETLK/l_pid set", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			l := lk(unix.F_RDLCK, unix.SEEK_SET, 0, 0)
			l.Pid = 1
			return setlk(e, e.fd(fdRW), unix.F_OFD_SETLK, l)
		}},
		{name: "F_OFD_SETLK/access mode before l_pid", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			l := lk(unix.F_WRLCK, unix.SEEK_SET, 0, 0)
			l.Pid = 1
			return setlk(e, e.fd(fdRO), unix.F_OFD_SETLK, l)
		}},
		{name: "F_OFD_SETLK/bad l_type before l_pid", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			l := lk(8, unix.SEEK_SET, 0, 0)
			l.Pid = 1
			return setlk(e, e.fd(fdRO), unix.F_OFD_SETLK, l)
		}},
		{name: "F_OFD_GETLK/l_pid set", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			l := lk(unix.F_RDLCK, unix.SEEK_SET, 0, 0)
			l.Pid = 1
			return setlk(e, e.fd(fdRW), unix.F_OFD_GETLK, l)
		}},
		{name: "F_OFD_GETLK/bad l_type", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return setlk(e, e.fd(fdRW), unix.F_OFD_GETLK, lk(7, unix.SEEK_SET, 0, 0))
		}},
		// Since Linux 6.7 (fcntl_getlk), F_OFD_GETLK accepts F_UNLCK and reports a
		// lock of the same description overlapping the range.
		{name: "F_OFD_GETLK/F_UNLCK without locks", ret: unix.F_UNLCK, do: func(e fdEnv) (int64, error) {
			l := lk(unix.F_UNLCK, unix.SEEK_SET, 0, 0)
			err := e.s.FcntlFlock(uintptr(e.fd(fdRW)), unix.F_OFD_GETLK, l)
			return int64(l.Type), err
		}},
		{name: "F_OFD_GETLK/F_UNLCK reports own lock", ret: pack(unix.F_WRLCK, 10, 20), do: func(e fdEnv) (int64, error) {
			if _, err := setlk(e, e.fd(fdRW), unix.F_OFD_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 10, 20)); err != nil {
				return 0, err
			}
			l := lk(unix.F_UNLCK, unix.SEEK_SET, 0, 0)
			err := e.s.FcntlFlock(uintptr(e.fd(fdRW)), unix.F_OFD_GETLK, l)
			return pack(int64(l.Type), l.Start, l.Len), err
		}},
		{name: "F_OFD_SETLK/conflict within one process EAGAIN", want: unix.EAGAIN, do: func(e fdEnv) (int64, error) {
			if _, err := setlk(e, e.fd(fdRW), unix.F_OFD_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 0, 100)); err != nil {
				return 0, err
			}
			return setlk(e, e.fd(fdRO), unix.F_OFD_SETLK, lk(unix.F_RDLCK, unix.SEEK_SET, 99, 1))
		}},
		{name: "F_OFD_GETLK/conflict reported with l_pid -1", ret: pack(unix.F_WRLCK, 0, 100), do: func(e fdEnv) (int64, error) {
			if _, err := setlk(e, e.fd(fdRW), unix.F_OFD_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 0, 100)); err != nil {
				return 0, err
			}
			l := lk(unix.F_RDLCK, unix.SEEK_SET, 50, 0)
			if err := e.s.FcntlFlock(uintptr(e.fd(fdRO)), unix.F_OFD_GETLK, l); err != nil || l.Pid != -1 {
				return int64(l.Pid), err
			}
			return pack(int64(l.Type), l.Start, l.Len), nil
		}},
		{name: "F_OFD_SETLK/conflicts with a POSIX lock of the same process", want: unix.EAGAIN, do: func(e fdEnv) (int64, error) {
			if _, err := setlk(e, e.fd(fdRW), unix.F_SETLK, lk(unix.F_RDLCK, unix.SEEK_SET, 0, 0)); err != nil {
				return 0, err
			}
			return setlk(e, e.fd(fdWO), unix.F_OFD_SETLK, lk(unix.F_WRLCK, unix.SEEK_SET, 4999, 1))
		}},

		// sync_file_range(2): ksys_sync_file_range looks the fd up (fdget: O_PATH is
		// EBADF) before sync_file_range checks flags, offset and length.
		{name: "sync_file_range/never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdClosed), 0, 0, unix.SYNC_FILE_RANGE_WRITE))
		}},
		{name: "sync_file_range/O_PATH", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdPath), 0, 0, unix.SYNC_FILE_RANGE_WRITE))
		}},
		{name: "sync_file_range/bad fd before bad flags", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(-1, 0, 0, 8))
		}},
		{name: "sync_file_range/O_PATH before negative offset", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdPath), -1, 0, 0))
		}},
		{name: "sync_file_range/character device ESPIPE", want: unix.ESPIPE, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.devnull(), 0, 0, unix.SYNC_FILE_RANGE_WRITE))
		}},
		{name: "sync_file_range/bad flags before ESPIPE", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.devnull(), 0, 0, 8))
		}},
		{name: "sync_file_range/bad flags", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdRW), 0, 0, 8))
		}},
		{name: "sync_file_range/negative offset", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdRW), -1, 10, unix.SYNC_FILE_RANGE_WRITE))
		}},
		{name: "sync_file_range/negative nbytes", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdRW), 100, -10, unix.SYNC_FILE_RANGE_WRITE))
		}},
		{name: "sync_file_range/offset+nbytes overflows", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdRW), 10, math.MaxInt64, unix.SYNC_FILE_RANGE_WRITE))
		}},
		{name: "sync_file_range/LLONG_MAX offset, nbytes 0", do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdRW), math.MaxInt64, 0, unix.SYNC_FILE_RANGE_WRITE))
		}},
		{name: "sync_file_range/O_RDONLY", do: func(e fdEnv) (int64, error) {
			return e0(e.s.SyncFileRange(e.fd(fdRO), 0, 0, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER))
		}},

		// syncfs(2): fdget (O_PATH is EBADF).
		{name: "syncfs/never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) { return e0(e.s.Syncfs(e.fd(fdClosed))) }},
		{name: "syncfs/O_PATH", want: unix.EBADF, do: func(e fdEnv) (int64, error) { return e0(e.s.Syncfs(e.fd(fdPath))) }},

		// copy_file_range(2): both fds (fdget), the flags, then
		// generic_copy_file_checks: generic_file_rw_checks (EISDIR, EINVAL for
		// other non-regular files, EBADF for the access modes and O_APPEND), the
		// wrap check on the offsets (EOVERFLOW), the length cut to the end of
		// fd_in's file, generic_write_check_limits (EFBIG), the overlap check on
		// the cut length; then rw_verify_area on both (EINVAL for a negative
		// offset).
		{name: "copy_file_range/in never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdClosed), nil, e.fd(fdEmpty), nil, 10, 0)
		}},
		{name: "copy_file_range/out never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdClosed), nil, 10, 0)
		}},
		{name: "copy_file_range/in O_PATH", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdPath), nil, e.fd(fdEmpty), nil, 10, 0)
		}},
		{name: "copy_file_range/bad fd before flags", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, -1, nil, 10, 1)
		}},
		{name: "copy_file_range/bad fd before negative offset", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdClosed), i64(-5), e.fd(fdEmpty), nil, 10, 0)
		}},
		{name: "copy_file_range/flags", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), nil, 10, 1)
		}},
		{name: "copy_file_range/flags before directory", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdDir), nil, e.fd(fdEmpty), nil, 10, 1)
		}},
		{name: "copy_file_range/in directory", want: unix.EISDIR, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdDir), nil, e.fd(fdEmpty), nil, 10, 0)
		}},
		{name: "copy_file_range/out directory before access mode", want: unix.EISDIR, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdWO), nil, e.fd(fdDir), nil, 10, 0)
		}},
		{name: "copy_file_range/out character device", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.devnull(), nil, 10, 0)
		}},
		{name: "copy_file_range/in O_WRONLY", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdWO), nil, e.fd(fdEmpty), nil, 10, 0)
		}},
		{name: "copy_file_range/out O_RDONLY", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRW), nil, e.fd(fdRO), nil, 10, 0)
		}},
		{name: "copy_file_range/out O_APPEND", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.open("/empty", unix.O_WRONLY|unix.O_APPEND), nil, 10, 0)
		}},
		{name: "copy_file_range/access mode before negative offset", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdWO), i64(-100), e.fd(fdEmpty), nil, 10, 0)
		}},
		{name: "copy_file_range/negative offset wraps EOVERFLOW", want: unix.EOVERFLOW, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(-5), e.fd(fdEmpty), nil, 10, 0)
		}},
		// -1 is the value of NullOffset in a Call; the facade passes a pointer to
		// it separately.
		{name: "copy_file_range/offset -1 EOVERFLOW", want: unix.EOVERFLOW, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(-1), e.fd(fdEmpty), nil, 1, 0)
		}},
		{name: "copy_file_range/offset -1, len 0 EINVAL", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), i64(-1), 0, 0)
		}},
		{name: "copy_file_range/negative offset EINVAL", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(-100), e.fd(fdEmpty), nil, 10, 0)
		}},
		{name: "copy_file_range/negative out offset EINVAL", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), i64(-100), 10, 0)
		}},
		{name: "copy_file_range/offset plus len wraps", want: unix.EOVERFLOW, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(10), e.fd(fdEmpty), nil, -1, 0)
		}},
		{name: "copy_file_range/out offset at s_maxbytes", want: unix.EFBIG, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), i64(maxBytes), 10, 0)
		}},
		{name: "copy_file_range/len cut at s_maxbytes", ret: 10, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), i64(maxBytes-10), 100, 0)
		}},
		{name: "copy_file_range/NULL offsets move both", ret: pack(100, 100, 100), do: func(e fdEnv) (int64, error) {
			n, err := cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), nil, 100, 0)
			return pack(n, e.offAt(fdRO), e.offAt(fdEmpty)), err
		}},
		{name: "copy_file_range/offset pointers, file offsets stay", ret: pack(100, 110, 0), do: func(e fdEnv) (int64, error) {
			roff, woff := int64(10), int64(0)
			n, err := cfr(e, e.fd(fdRO), &roff, e.fd(fdEmpty), &woff, 100, 0)
			if err != nil || woff != 100 || e.offAt(fdEmpty) != 0 {
				return -1, err
			}
			return pack(n, roff, e.offAt(fdRO)), err
		}},
		{name: "copy_file_range/len size_t max from 0", ret: 5000, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), nil, -1, 0)
		}},
		{name: "copy_file_range/cut at EOF", ret: 100, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(4900), e.fd(fdEmpty), nil, 1000, 0)
		}},
		{name: "copy_file_range/at EOF", ret: 0, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(5000), e.fd(fdEmpty), nil, 1000, 0)
		}},
		{name: "copy_file_range/beyond EOF", ret: 0, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(6000), e.fd(fdEmpty), nil, 1000, 0)
		}},
		{name: "copy_file_range/len 0", ret: 0, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), nil, e.fd(fdEmpty), nil, 0, 0)
		}},
		{name: "copy_file_range/same file overlapping", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(0), e.fd(fdWO), i64(50), 100, 0)
		}},
		{name: "copy_file_range/same file, overlap after the cut at EOF", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(4950), e.fd(fdWO), i64(4990), 1000, 0)
		}},
		{name: "copy_file_range/same fd NULL offsets overlap", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRW), nil, e.fd(fdRW), nil, 100, 0)
		}},
		{name: "copy_file_range/same file disjoint", ret: 100, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRW), i64(0), e.fd(fdRW), i64(200), 100, 0)
		}},
		{name: "copy_file_range/same file, overlap only before the cut at EOF", ret: 100, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(4900), e.fd(fdWO), i64(5000), 1000, 0)
		}},
		{name: "copy_file_range/same file, in at EOF", ret: 0, do: func(e fdEnv) (int64, error) {
			return cfr(e, e.fd(fdRO), i64(5000), e.fd(fdWO), i64(4990), 100, 0)
		}},

		// sendfile(2) (do_sendfile): in_fd (fdget, FMODE_READ), rw_verify_area on
		// the input (EINVAL for a negative offset or count), then out_fd (fdget,
		// FMODE_WRITE), EOVERFLOW at s_maxbytes, then do_splice_direct (EINVAL for
		// O_APPEND, then for an input that is not a regular file).
		{name: "sendfile/in never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdClosed), nil, 10)
		}},
		{name: "sendfile/out never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdClosed), e.fd(fdRO), nil, 10)
		}},
		{name: "sendfile/in O_PATH", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdPath), nil, 10)
		}},
		{name: "sendfile/in O_WRONLY", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdWO), nil, 10)
		}},
		{name: "sendfile/out O_RDONLY", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdRO), e.fd(fdRW), nil, 10)
		}},
		{name: "sendfile/bad in fd before negative offset", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdClosed), i64(-1), 10)
		}},
		{name: "sendfile/negative offset before bad out fd", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdClosed), e.fd(fdRO), i64(-1), 10)
		}},
		{name: "sendfile/negative count before bad out fd", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdClosed), e.fd(fdRO), nil, -1)
		}},
		{name: "sendfile/offset plus count overflows", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdRO), i64(10), math.MaxInt64)
		}},
		{name: "sendfile/offset at s_maxbytes", want: unix.EOVERFLOW, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdRO), i64(maxBytes), 10)
		}},
		{name: "sendfile/count cut at s_maxbytes", ret: 0, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdRO), i64(maxBytes-5), 10)
		}},
		{name: "sendfile/in directory", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdDir), nil, 10)
		}},
		// A zero count returns 0 before the regular-file check on in_fd, but
		// after the O_APPEND check on out_fd (found by TestKernelDiff).
		{name: "sendfile/in directory zero count", ret: 0, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdDir), nil, 0)
		}},
		{name: "sendfile/out O_APPEND zero count", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.open("/empty", unix.O_WRONLY|unix.O_APPEND), e.fd(fdDir), nil, 0)
		}},
		{name: "sendfile/out O_APPEND", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.open("/empty", unix.O_WRONLY|unix.O_APPEND), e.fd(fdRO), nil, 10)
		}},
		{name: "sendfile/in character device", want: unix.EINVAL, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.devnull(), nil, 10)
		}},
		{name: "sendfile/out character device", ret: pack(100, 100, 0), do: func(e fdEnv) (int64, error) {
			n, err := sendfile(e, e.devnull(), e.fd(fdRO), nil, 100)
			return pack(n, e.offAt(fdRO), 0), err
		}},
		{name: "sendfile/NULL offset moves both", ret: pack(100, 100, 100), do: func(e fdEnv) (int64, error) {
			n, err := sendfile(e, e.fd(fdEmpty), e.fd(fdRO), nil, 100)
			return pack(n, e.offAt(fdRO), e.offAt(fdEmpty)), err
		}},
		{name: "sendfile/offset pointer, in offset stays", ret: pack(100, 110, 0), do: func(e fdEnv) (int64, error) {
			off := int64(10)
			n, err := sendfile(e, e.fd(fdEmpty), e.fd(fdRO), &off, 100)
			if err != nil || e.offAt(fdEmpty) != 100 {
				return -1, err
			}
			return pack(n, off, e.offAt(fdRO)), err
		}},
		{name: "sendfile/beyond EOF", ret: 0, do: func(e fdEnv) (int64, error) {
			return sendfile(e, e.fd(fdEmpty), e.fd(fdRO), i64(6000), 100)
		}},
		// in and out the same description: the output position is read before the
		// copy and both are stored after it, the input's last.
		{name: "sendfile/same fd", ret: pack(100, 100, 0), do: func(e fdEnv) (int64, error) {
			n, err := sendfile(e, e.fd(fdRW), e.fd(fdRW), nil, 100)
			return pack(n, e.offAt(fdRW), 0), err
		}},

		// getdents64(2): fdget_pos (O_PATH is EBADF), then iterate_dir: ENOTDIR
		// without iterate_shared, ENOENT for a removed directory; EINVAL when the
		// first entry does not fit (filldir64).
		{name: "getdents64/never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) { return getdents(e, e.fd(fdClosed), 4096) }},
		{name: "getdents64/O_PATH directory", want: unix.EBADF, do: func(e fdEnv) (int64, error) {
			return getdents(e, e.open("/d", unix.O_PATH|unix.O_DIRECTORY), 4096)
		}},
		{name: "getdents64/regular file", want: unix.ENOTDIR, do: func(e fdEnv) (int64, error) { return getdents(e, e.fd(fdRO), 4096) }},
		{name: "getdents64/O_WRONLY file", want: unix.ENOTDIR, do: func(e fdEnv) (int64, error) { return getdents(e, e.fd(fdWO), 0) }},
		{name: "getdents64/character device", want: unix.ENOTDIR, do: func(e fdEnv) (int64, error) { return getdents(e, e.devnull(), 4096) }},
		{name: "getdents64/buffer too small", want: unix.EINVAL, do: func(e fdEnv) (int64, error) { return getdents(e, e.fd(fdDir), 23) }},
		{name: "getdents64/empty buffer", want: unix.EINVAL, do: func(e fdEnv) (int64, error) { return getdents(e, e.fd(fdDir), 0) }},
		{name: "getdents64/one entry", ret: 24, do: func(e fdEnv) (int64, error) { return getdents(e, e.fd(fdDir), 24) }},
		{name: "getdents64/all", ret: 72, do: func(e fdEnv) (int64, error) { return getdents(e, e.fd(fdDir), 4096) }},
		{name: "getdents64/at end", ret: 0, do: func(e fdEnv) (int64, error) {
			if _, err := getdents(e, e.fd(fdDir), 4096); err != nil {
				return 0, err
			}
			return getdents(e, e.fd(fdDir), 4096)
		}},
		{name: "getdents64/at end, empty buffer", ret: 0, do: func(e fdEnv) (int64, error) {
			if _, err := getdents(e, e.fd(fdDir), 4096); err != nil {
				return 0, err
			}
			return getdents(e, e.fd(fdDir), 0)
		}},
		{name: "getdents64/removed directory", want: unix.ENOENT, do: func(e fdEnv) (int64, error) {
			fd := e.open("/e", unix.O_RDONLY|unix.O_DIRECTORY)
			if err := e.s.Rmdir("/e"); err != nil {
				return 0, err
			}
			return getdents(e, fd, 4096)
		}},

		// fchdir(2) takes fd_raw (O_PATH allowed), then ENOTDIR; getcwd(2) answers
		// ENOENT for an unlinked cwd before it compares the length (ERANGE).
		{name: "fchdir/never-opened", want: unix.EBADF, do: func(e fdEnv) (int64, error) { return e0(e.s.Fchdir(e.fd(fdClosed))) }},
		{name: "fchdir/regular file", want: unix.ENOTDIR, do: func(e fdEnv) (int64, error) { return e0(e.s.Fchdir(e.fd(fdRO))) }},
		{name: "fchdir/O_PATH file", want: unix.ENOTDIR, do: func(e fdEnv) (int64, error) { return e0(e.s.Fchdir(e.fd(fdPath))) }},
		{name: "fchdir/O_PATH directory, getcwd", ret: 3, do: func(e fdEnv) (int64, error) {
			if err := e.s.Fchdir(e.open("/d", unix.O_PATH)); err != nil {
				return 0, err
			}
			return getcwd(e, 4096)
		}},
		{name: "getcwd/ERANGE", want: unix.ERANGE, do: func(e fdEnv) (int64, error) {
			if err := e.s.Fchdir(e.fd(fdDir)); err != nil {
				return 0, err
			}
			return getcwd(e, 1)
		}},
		{name: "getcwd/removed cwd before ERANGE", want: unix.ENOENT, do: func(e fdEnv) (int64, error) {
			if err := e.s.Fchdir(e.open("/e", unix.O_RDONLY)); err != nil {
				return 0, err
			}
			if err := e.s.Rmdir("/e"); err != nil {
				return 0, err
			}
			return getcwd(e, 0)
		}},
	}
	errRows := make([]errRow, len(rows))
	for i, r := range rows {
		errRows[i] = errRow{name: r.name, want: r.want, ret: r.ret, modelBug: r.modelBug, modelGot: r.modelGot,
			do: func(e errEnv) (int64, error) { return r.do(fdEnv{s: e.s.(sysFD), base: e.base}) }}
	}
	runErrRows(t, h, errRows)
}

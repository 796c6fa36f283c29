//go:build linux

package sim_test

import (
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// sysNS is the namespace part of the syscall surface that testdata/errpaths/ns.txt drives
// beyond sys: the *at calls, with the names and signatures of golang.org/x/sys/unix
// (Futimens excepted: x/sys/unix has none on linux; it is the model's futimens(3),
// utimensat(fd, NULL, ts, 0)).
type sysNS interface {
	Linkat(olddirfd int, oldpath string, newdirfd int, newpath string, flags int) error
	Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error
	Unlinkat(dirfd int, path string, flags int) error
	Mkdirat(dirfd int, path string, mode uint32) error
	Symlinkat(oldpath string, newdirfd int, newpath string) error
	Readlinkat(dirfd int, path string, buf []byte) (int, error)
	Fstatat(dirfd int, path string, stat *unix.Stat_t, flags int) error
	Statx(dirfd int, path string, flags int, mask int, stat *unix.Statx_t) error
	Faccessat(dirfd int, path string, mode uint32, flags int) error
	Faccessat2(dirfd int, path string, mode uint32, flags int) error
	Fchmodat(dirfd int, path string, mode uint32, flags int) error
	Fchmod(fd int, mode uint32) error
	UtimesNanoAt(dirfd int, path string, ts []unix.Timespec, flags int) error
	Futimens(fd int, ts []unix.Timespec) error
}

var (
	_ sysNS = (*sim.Process)(nil)
	_ sysNS = (*osKernel)(nil)

	// The interface's signatures are x/sys/unix's (and so, by the assertion
	// above, the facade's).
	_ = [...]any{
		(func(int, string, int, string, int) error)(unix.Linkat),
		(func(int, string, int, string, uint) error)(unix.Renameat2),
		(func(int, string, int) error)(unix.Unlinkat),
		(func(int, string, uint32) error)(unix.Mkdirat),
		(func(string, int, string) error)(unix.Symlinkat),
		(func(int, string, []byte) (int, error))(unix.Readlinkat),
		(func(int, string, *unix.Stat_t, int) error)(unix.Fstatat),
		(func(int, string, int, int, *unix.Statx_t) error)(unix.Statx),
		(func(int, string, uint32, int) error)(unix.Faccessat),
		(func(int, string, uint32, int) error)(unix.Faccessat2),
		(func(int, string, uint32, int) error)(unix.Fchmodat),
		(func(int, uint32) error)(unix.Fchmod),
		(func(int, string, []unix.Timespec, int) error)(unix.UtimesNanoAt),
	}
)

// The *at calls on the real kernel; (dirfd, path) pairs are mapped by k.at (see
// the top of oskernel_linux_test.go).

func (k *osKernel) Linkat(olddirfd int, oldpath string, newdirfd int, newpath string, flags int) error {
	d1, p1 := k.at(olddirfd, oldpath)
	d2, p2 := k.at(newdirfd, newpath)
	return unix.Linkat(d1, p1, d2, p2, flags)
}

func (k *osKernel) Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	d1, p1 := k.at(olddirfd, oldpath)
	d2, p2 := k.at(newdirfd, newpath)
	return unix.Renameat2(d1, p1, d2, p2, flags)
}

func (k *osKernel) Unlinkat(dirfd int, path string, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Unlinkat(d, p, flags)
}

func (k *osKernel) Mkdirat(dirfd int, path string, mode uint32) error {
	d, p := k.at(dirfd, path)
	return unix.Mkdirat(d, p, mode)
}

// Symlinkat passes the target (oldpath) unchanged: the tests use relative targets.
func (k *osKernel) Symlinkat(oldpath string, newdirfd int, newpath string) error {
	d, p := k.at(newdirfd, newpath)
	return unix.Symlinkat(oldpath, d, p)
}

func (k *osKernel) Readlinkat(dirfd int, path string, buf []byte) (int, error) {
	d, p := k.at(dirfd, path)
	return unix.Readlinkat(d, p, buf)
}

func (k *osKernel) Fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Fstatat(d, p, st, flags)
}

func (k *osKernel) Statx(dirfd int, path string, flags int, mask int, st *unix.Statx_t) error {
	d, p := k.at(dirfd, path)
	return unix.Statx(d, p, flags, mask, st)
}

func (k *osKernel) Faccessat(dirfd int, path string, mode uint32, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Faccessat(d, p, mode, flags)
}

func (k *osKernel) Faccessat2(dirfd int, path string, mode uint32, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Faccessat2(d, p, mode, flags)
}

func (k *osKernel) Fchmodat(dirfd int, path string, mode uint32, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Fchmodat(d, p, mode, flags)
}

func (k *osKernel) Fchmod(fd int, mode uint32) error { return unix.Fchmod(k.fd(fd), mode) }

func (k *osKernel) UtimesNanoAt(dirfd int, path string, ts []unix.Timespec, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.UtimesNanoAt(d, p, ts, flags)
}

// Futimens is utimensat(fd, NULL, ts, 0), as the model's.
func (k *osKernel) Futimens(fd int, ts []unix.Timespec) error {
	var tp unsafe.Pointer
	if ts != nil {
		if len(ts) != 2 {
			return unix.EINVAL
		}
		tp = unsafe.Pointer(&ts[0])
	}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(k.fd(fd)), 0, uintptr(tp), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// ns is the namespace calls of either side (the model or the kernel).
func (e errEnv) ns() sysNS { return e.s.(sysNS) }

//go:build linux

package sim_test

// The kernel side of the fd-based calls of testdata/errpaths/fd.txt: getdents64,
// flock, the fcntl record locks, sync_file_range, syncfs, copy_file_range,
// sendfile, fchdir and getcwd.

import (
	"strings"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
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

// Fchdir changes the test process's cwd: TestErrorPaths restores it after each
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

// fdNew is the first fd a row opens (after the setup's).
const fdNew = fdPath + 1

// devnull opens /dev/null O_RDWR at fd base+fdNew, the lowest free one after
// the setup: the real one on the kernel, a sim.DevNull on the model.
func devnull(s sys, base int) int {
	switch s := s.(type) {
	case *osKernel:
		fd, err := s.got(unix.Open("/dev/null", unix.O_RDWR|unix.O_CLOEXEC, 0))
		if err != nil || fd != base+fdNew {
			s.tb.Fatalf("test bug: /dev/null opened at fd %d (%v), want %d", fd, err, base+fdNew)
		}
		return fd
	case *sim.Process:
		if err := s.Task().InstallSpecial(base+fdNew, sim.DevNull{}, unix.O_RDWR); err != nil {
			panic(err)
		}
		return base + fdNew
	}
	panic("unknown side")
}

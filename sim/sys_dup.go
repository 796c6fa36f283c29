package sim

import (
	"syscall"
)

// sysDup implements dup(2): the lowest free fd, sharing the description (offset,
// status flags, locks), FD_CLOEXEC clear. EBADF, EMFILE.
func (k *Kernel) sysDup(c *Call) Result {
	g := c.Task.g
	return c.Task.withFileRaw(int(c.Args[0]), func(f *File) Result {
		f.incRef()
		fd, e := g.files.alloc(f, 0, g.nofile.Load(), false)
		if e != 0 {
			f.decRef()
			return Fail(e)
		}
		return Result{Ret: int64(fd)}
	})
}

// dupfd implements F_DUPFD and F_DUPFD_CLOEXEC: the lowest free fd >= min. EINVAL
// when min is negative or at or past RLIMIT_NOFILE, EMFILE when no fd is free below
// the limit.
func (k *Kernel) dupfd(g *ThreadGroup, f *File, min int64, cloexec bool) Result {
	limit := g.nofile.Load()
	if min < 0 || min >= limit {
		return Fail(syscall.EINVAL)
	}
	f.incRef()
	fd, e := g.files.alloc(f, int(min), limit, cloexec)
	if e != 0 {
		f.decRef()
		return Fail(e)
	}
	return Result{Ret: int64(fd)}
}

// sysDup2 implements the dup2(2) syscall: when oldfd == newfd it returns newfd if
// oldfd is open (EBADF if not) and does nothing else. Otherwise as dup3 with flags 0.
// (golang.org/x/sys/unix's Dup2 calls dup3, which fails with EINVAL for equal fds:
// the facade mirrors that.)
func (k *Kernel) sysDup2(c *Call) Result {
	oldfd, newfd := c.Args[0], c.Args[1]
	if oldfd == newfd {
		if c.Task.g.files.get(int(oldfd)) == nil {
			return Fail(syscall.EBADF)
		}
		return Result{Ret: newfd}
	}
	return k.dup3(c.Task, oldfd, newfd, 0)
}

// sysDup3 implements dup3(2): flags other than O_CLOEXEC and oldfd == newfd are
// EINVAL; newfd negative or at or past RLIMIT_NOFILE is EBADF; a closed oldfd is
// EBADF. Whatever newfd held is closed first (its POSIX locks released, errors
// ignored), atomically with the install.
func (k *Kernel) sysDup3(c *Call) Result {
	return k.dup3(c.Task, c.Args[0], c.Args[1], c.Args[2])
}

func (k *Kernel) dup3(t *Task, oldfd, newfd, flags int64) Result {
	if flags&^syscall.O_CLOEXEC != 0 {
		return Fail(syscall.EINVAL)
	}
	if oldfd == newfd {
		return Fail(syscall.EINVAL)
	}
	g := t.g
	if newfd < 0 || newfd >= g.nofile.Load() {
		return Fail(syscall.EBADF)
	}
	return t.withFileRaw(int(oldfd), func(f *File) Result {
		f.incRef()
		t.install(int(newfd), f, flags&syscall.O_CLOEXEC != 0)
		return Result{Ret: newfd}
	})
}

// close_range(2) flags.
const (
	closeRangeUnshare = 1 << 1
	closeRangeCloexec = 1 << 2
)

// sysCloseRange implements close_range(2) (Args: first, last, flags): EINVAL for
// unknown flags or first > last; CLOSE_RANGE_CLOEXEC sets FD_CLOEXEC instead of
// closing; CLOSE_RANGE_UNSHARE is accepted (the table is not unshared).
func (k *Kernel) sysCloseRange(c *Call) Result {
	first, last, flags := uint64(c.Args[0]), uint64(uint32(c.Args[1])), c.Args[2]
	if c.Args[1] == -1 {
		last = 1<<32 - 1
	}
	if flags&^(closeRangeUnshare|closeRangeCloexec) != 0 || first > last {
		return Fail(syscall.EINVAL)
	}
	g := c.Task.g
	if flags&closeRangeCloexec != 0 {
		for _, fd := range g.files.fds() {
			if uint64(fd) >= first && uint64(fd) <= last {
				g.files.setCloexec(fd, true)
			}
		}
		return Result{}
	}
	for _, f := range g.files.removeIf(func(fd int, _ bool) bool { return uint64(fd) >= first && uint64(fd) <= last }) {
		k.closeFile(g, f)
	}
	return Result{}
}

package sim

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// Process is the typed facade of one thread: methods with the names and signatures
// of golang.org/x/sys/unix that build Calls and send them to a Handler (the Kernel,
// or the top of an interposer stack). Each method does what the x/sys/unix function
// does on linux/amd64: the same syscall (Open is openat(AT_FDCWD, ...), Stat is
// newfstatat, Dup2 is dup3(old, new, 0) and so fails with EINVAL for equal fds,
// Rmdir is unlinkat(AT_REMOVEDIR)), and the same checks made in Go before any
// syscall (Mmap with length <= 0, Munmap of a slice that is not a whole mapping,
// UtimesNanoAt with len(ts) != 2 are EINVAL without a call). Errors are bare
// syscall.Errno values.
//
// A Process is used by one goroutine at a time (one thread makes one call at a
// time); NewThread gives another goroutine its own thread.
type Process struct {
	h Handler
	k *Kernel // h itself when it is the kernel: calls skip the interface and a copy
	// typed is k when its cost model is a constant: then the hottest calls may
	// take the kernel's typed entry points (see direct).
	typed *Kernel
	// light is k when its calls that cost only their entry under a time model
	// (open, close, lseek, fcntl) may take the typed entry points too.
	light *Kernel
	t     *Task
}

// NewProcess returns the facade of thread t whose calls go to h (the top of an
// interposer stack whose bottom is t's Kernel).
func NewProcess(h Handler, t *Task) *Process {
	k, _ := h.(*Kernel)
	p := &Process{h: h, k: k, t: t}
	if k != nil && k.cost == nil { // the cost model is fixed when New returns
		p.light = k
		if k.tm == nil {
			p.typed = k
		}
	}
	return p
}

// Through returns a facade of the same thread whose calls go to h.
func (p *Process) Through(h Handler) *Process { return NewProcess(h, p.t) }

// call returns the Call a facade method fills for syscall nr: the thread's slot,
// which do lends down the handler stack without a copy; or, while the slot is
// lent (a layer calling through a facade of its own thread), a Call of its own.
// Between calls the slot holds nothing but the last call's number and the thread
// (do empties it after each call: see Call.clear), so
// a facade method that fills it must send it.
func (p *Process) call(nr Sysno) *Call {
	t := p.t
	if t.lent {
		return &Call{Nr: nr, Task: t}
	}
	t.call.Nr, t.call.Task = nr, t
	return &t.call
}

// clear empties the thread's slot after a call (see call): it zeroes Args and
// stores into the other fields only when they are set.
func (c *Call) clear() {
	c.Args = [6]int64{}
	if c.Path != "" || c.Path2 != "" {
		c.Path, c.Path2 = "", ""
	}
	if c.Buf != nil {
		c.Buf = nil
	}
	if c.Iov != nil {
		c.Iov = nil
	}
	if c.Obj != nil {
		c.Obj = nil
	}
}

// do sends c: straight into the kernel when the facade is bound to it, else
// through the handler (an interposer stack). The thread's slot is lent as it is;
// any other Call is copied into the slot (or, while the slot is lent, into a Call
// of its own), so that a Call of the caller's never escapes.
func (p *Process) do(c *Call) Result {
	if k := p.k; k != nil {
		r := k.Syscall(c)
		if c == &p.t.call {
			c.clear()
		}
		return r
	}
	t := p.t
	if c != &t.call {
		if t.lent {
			own := *c
			return p.h.Syscall(&own)
		}
		t.call = *c
	}
	t.lent = true
	r := p.h.Syscall(&t.call)
	t.lent = false
	t.call.clear()
	return r
}

// direct returns the kernel when the facade's hottest calls (read, write, pread,
// pwrite, lseek, fcntl with an integer argument, open, close) may take its typed
// entry points instead of a Call: the facade is bound to the kernel itself, so no
// interposer would see the Call; the cost model is a constant, so none needs it
// to price the call; and the thread is alive (else the Call path answers ESRCH).
// A typed entry point is the very function the Call's dispatch reaches, followed
// by the same constant charge (chargeConst), so both routes give the same
// results, clock and file-system state; the typed route saves building and
// dispatching a 160-byte Call, about half the cost of an lseek.
func (p *Process) direct() *Kernel {
	if k := p.typed; k != nil && !p.t.exited.Load() {
		return k
	}
	return nil
}

// directLight is direct for a time model (p.typed is nil then): open, close,
// lseek and fcntl with an integer argument, priced by their entry alone
// (chargeConst, chargePath), and read and pread (timeModel.chargeRead) take the
// typed entry points too. Direct implies directLight.
func (p *Process) directLight() *Kernel {
	if k := p.light; k != nil && !p.t.exited.Load() {
		return k
	}
	return nil
}

// Populate makes [off, off+n) of the regular file the kernel holds at fd
// written data that reads zeros, as writes of zeros would leave it once
// written back (vfs.Inode.Populate: its cost is in proportion to the range's
// extents, not its bytes; an fsync makes it durable). It is no call of the
// program: nothing is counted, charged, traced or faulted, no time passes,
// and none of it is in the page cache; every layer of the facade's stack is
// told (NotifyWorldChanged). A file the workload finds in place, such as
// fio's laid-out file, is made this way. EBADF when the kernel holds no
// description at fd, EISDIR for a directory, EINVAL for another kind of file
// that is not regular.
func (p *Process) Populate(fd int, off, n int64) error {
	f := p.t.File(fd)
	if f == nil {
		return syscall.EBADF
	}
	if f.ino == nil {
		return syscall.EINVAL
	}
	if err := f.ino.Populate(off, n); err != nil {
		return err
	}
	NotifyWorldChanged(p.h, f.ino.Ino())
	return nil
}

// Handler returns where the facade's calls go.
func (p *Process) Handler() Handler { return p.h }

// Task returns the thread the facade calls as.
func (p *Process) Task() *Task { return p.t }

// Pid returns the process id.
func (p *Process) Pid() int { return p.t.g.pid }

// Tid returns the thread id.
func (p *Process) Tid() int { return p.t.tid }

// Syscall sends c as this thread (c.Task is set) and returns the Result.
func (p *Process) Syscall(c Call) Result {
	c.Task = p.t
	return p.do(&c)
}

func (p *Process) fd(nr Sysno, fd int) *Call {
	c := p.call(nr)
	c.Args[0] = int64(fd)
	return c
}

func (p *Process) fdDo(nr Sysno, fd int) Result {
	c := p.fd(nr, fd)
	return p.do(c)
}

func errOf(r Result) error { return r.Err() }

// Fork forks the process (a fork call through the handler) and returns the child's
// facade, whose calls go to the same handler. See Task.Fork for what is shared.
func (p *Process) Fork() *Process {
	r := p.Syscall(Call{Nr: SYS_FORK})
	if r.Errno != 0 {
		return nil
	}
	return NewProcess(p.h, p.t.k.Task(int(r.Ret)))
}

// NewThread creates a thread of the process (clone with CLONE_THREAD|CLONE_FILES)
// and returns its facade: same pid and fd table, its own tid.
func (p *Process) NewThread() *Process {
	c := Call{Nr: SYS_CLONE}
	c.Args[0] = syscall.CLONE_VM | syscall.CLONE_FS | syscall.CLONE_FILES | syscall.CLONE_SIGHAND | syscall.CLONE_THREAD
	r := p.Syscall(c)
	if r.Errno != 0 {
		return nil
	}
	return NewProcess(p.h, p.t.k.Task(int(r.Ret)))
}

// Exec models execve(2) of the process: FD_CLOEXEC fds are closed.
func (p *Process) Exec() error { return errOf(p.Syscall(Call{Nr: SYS_EXECVE})) }

// Exit ends the process (exit_group(2)): every fd is closed, its locks, mappings and
// AIO contexts go.
func (p *Process) Exit() { p.Syscall(Call{Nr: SYS_EXIT_GROUP}) }

// Getpid returns the process id (a getpid call).
func (p *Process) Getpid() int { return int(p.Syscall(Call{Nr: SYS_GETPID}).Ret) }

// Gettid returns the thread id (a gettid call).
func (p *Process) Gettid() int { return int(p.Syscall(Call{Nr: SYS_GETTID}).Ret) }

// Getrlimit reads a resource limit (only RLIMIT_NOFILE is modelled).
func (p *Process) Getrlimit(resource int, rlim *unix.Rlimit) error {
	c := Call{Nr: SYS_GETRLIMIT, Obj: rlim}
	c.Args[0] = int64(resource)
	return errOf(p.Syscall(c))
}

// Setrlimit sets a resource limit (only RLIMIT_NOFILE is modelled).
func (p *Process) Setrlimit(resource int, rlim *unix.Rlimit) error {
	c := Call{Nr: SYS_SETRLIMIT, Obj: rlim}
	c.Args[0] = int64(resource)
	return errOf(p.Syscall(c))
}

// Open is open(2) as x/sys/unix makes it: openat(AT_FDCWD, path, mode|O_LARGEFILE, perm).
func (p *Process) Open(path string, mode int, perm uint32) (fd int, err error) {
	return p.Openat(unix.AT_FDCWD, path, mode, perm)
}

// Openat is openat(2).
func (p *Process) Openat(dirfd int, path string, flags int, mode uint32) (fd int, err error) {
	if k := p.directLight(); k != nil {
		r := k.chargePath(p.t, k.openat(p.t, dirfd, path, int64(flags|oLargefile), mode))
		return int(r.Ret), errOf(r)
	}
	c := p.call(SYS_OPENAT)
	c.Path = path
	c.Args[0], c.Args[2], c.Args[3] = int64(dirfd), int64(flags|oLargefile), int64(mode)
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Creat is creat(2) as x/sys/unix makes it: Open(path, O_CREAT|O_WRONLY|O_TRUNC, mode).
func (p *Process) Creat(path string, mode uint32) (fd int, err error) {
	return p.Open(path, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, mode)
}

// Close is close(2).
func (p *Process) Close(fd int) error {
	if k := p.directLight(); k != nil {
		return errOf(k.chargeConst(p.t, k.close(p.t, fd)))
	}
	return errOf(p.fdDo(SYS_CLOSE, fd))
}

// Read is read(2).
func (p *Process) Read(fd int, b []byte) (n int, err error) {
	if k := p.direct(); k != nil {
		r := k.chargeConst(p.t, k.read(p.t, fd, b))
		return int(r.Ret), errOf(r)
	}
	if k := p.directLight(); k != nil {
		r := k.tm.chargeRead(p.t, fd, -1, k.read(p.t, fd, b))
		return int(r.Ret), errOf(r)
	}
	c := p.call(SYS_READ)
	c.Buf = b
	c.Args[0], c.Args[2] = int64(fd), int64(len(b))
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Write is write(2).
func (p *Process) Write(fd int, b []byte) (n int, err error) {
	if k := p.direct(); k != nil {
		r := k.chargeConst(p.t, k.write(p.t, fd, b))
		return int(r.Ret), errOf(r)
	}
	c := p.call(SYS_WRITE)
	c.Buf = b
	c.Args[0], c.Args[2] = int64(fd), int64(len(b))
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Pread is pread64(2).
func (p *Process) Pread(fd int, b []byte, offset int64) (n int, err error) {
	if k := p.direct(); k != nil {
		r := k.chargeConst(p.t, k.pread(p.t, fd, b, offset))
		return int(r.Ret), errOf(r)
	}
	if k := p.directLight(); k != nil && offset >= 0 {
		r := k.tm.chargeRead(p.t, fd, offset, k.pread(p.t, fd, b, offset))
		return int(r.Ret), errOf(r)
	}
	c := p.call(SYS_PREAD64)
	c.Buf = b
	c.Args[0], c.Args[2], c.Args[3] = int64(fd), int64(len(b)), offset
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Pwrite is pwrite64(2).
func (p *Process) Pwrite(fd int, b []byte, offset int64) (n int, err error) {
	if k := p.direct(); k != nil {
		r := k.chargeConst(p.t, k.pwrite(p.t, fd, b, offset))
		return int(r.Ret), errOf(r)
	}
	c := p.call(SYS_PWRITE64)
	c.Buf = b
	c.Args[0], c.Args[2], c.Args[3] = int64(fd), int64(len(b)), offset
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

func (p *Process) vec(nr Sysno, fd int, iovs [][]byte, offset int64) (int, error) {
	c := p.call(nr)
	c.Iov = iovs
	c.Args[0], c.Args[2], c.Args[3] = int64(fd), int64(len(iovs)), offset
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Readv is readv(2).
func (p *Process) Readv(fd int, iovs [][]byte) (n int, err error) {
	return p.vec(SYS_READV, fd, iovs, 0)
}

// Writev is writev(2).
func (p *Process) Writev(fd int, iovs [][]byte) (n int, err error) {
	return p.vec(SYS_WRITEV, fd, iovs, 0)
}

// Preadv is preadv(2).
func (p *Process) Preadv(fd int, iovs [][]byte, offset int64) (n int, err error) {
	return p.vec(SYS_PREADV, fd, iovs, offset)
}

// Pwritev is pwritev(2).
func (p *Process) Pwritev(fd int, iovs [][]byte, offset int64) (n int, err error) {
	return p.vec(SYS_PWRITEV, fd, iovs, offset)
}

// Preadv2 is preadv2(2): preadv with RWF_* flags; offset -1 reads at the file
// offset and moves it.
func (p *Process) Preadv2(fd int, iovs [][]byte, offset int64, flags int) (n int, err error) {
	return p.vec2(SYS_PREADV2, fd, iovs, offset, flags)
}

// Pwritev2 is pwritev2(2): pwritev with RWF_* flags (RWF_DSYNC, RWF_SYNC,
// RWF_APPEND, RWF_NOAPPEND...); offset -1 writes at the file offset and moves it.
func (p *Process) Pwritev2(fd int, iovs [][]byte, offset int64, flags int) (n int, err error) {
	return p.vec2(SYS_PWRITEV2, fd, iovs, offset, flags)
}

func (p *Process) vec2(nr Sysno, fd int, iovs [][]byte, offset int64, flags int) (int, error) {
	c := p.call(nr)
	c.Iov = iovs
	c.Args[0], c.Args[2], c.Args[3], c.Args[4] = int64(fd), int64(len(iovs)), offset, int64(flags)
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Seek is lseek(2).
func (p *Process) Seek(fd int, offset int64, whence int) (off int64, err error) {
	if k := p.directLight(); k != nil {
		r := k.chargeConst(p.t, k.lseekFd(p.t, fd, offset, int64(whence)))
		return r.Ret, errOf(r)
	}
	c := p.call(SYS_LSEEK)
	c.Args[0], c.Args[1], c.Args[2] = int64(fd), offset, int64(whence)
	r := p.do(c)
	return r.Ret, errOf(r)
}

// FcntlInt is fcntl(2) with an integer argument.
func (p *Process) FcntlInt(fd uintptr, cmd, arg int) (int, error) {
	if k := p.directLight(); k != nil {
		r := k.chargeConst(p.t, k.fcntlFd(p.t, int(fd), int64(cmd), int64(arg), nil))
		return int(r.Ret), errOf(r)
	}
	c := p.call(SYS_FCNTL)
	c.Args[0], c.Args[1], c.Args[2] = int64(int(fd)), int64(cmd), int64(arg)
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// FcntlFlock is fcntl(2) with a struct flock argument (F_GETLK, F_SETLK, F_SETLKW and
// the F_OFD_* commands).
func (p *Process) FcntlFlock(fd uintptr, cmd int, lk *unix.Flock_t) error {
	c := p.call(SYS_FCNTL)
	c.Obj = lk
	c.Args[0], c.Args[1] = int64(int(fd)), int64(cmd)
	return errOf(p.do(c))
}

// Flock is flock(2).
func (p *Process) Flock(fd int, how int) error {
	c := p.fd(SYS_FLOCK, fd)
	c.Args[1] = int64(how)
	return errOf(p.do(c))
}

// Dup is dup(2).
func (p *Process) Dup(oldfd int) (fd int, err error) {
	r := p.fdDo(SYS_DUP, oldfd)
	return int(r.Ret), errOf(r)
}

// Dup2 is x/sys/unix's Dup2 on linux/amd64: dup3(oldfd, newfd, 0), so equal fds fail
// with EINVAL (the dup2 syscall itself returns newfd: send a SYS_DUP2 Call for that).
func (p *Process) Dup2(oldfd, newfd int) error { return p.Dup3(oldfd, newfd, 0) }

// Dup3 is dup3(2).
func (p *Process) Dup3(oldfd, newfd, flags int) error {
	c := p.fd(SYS_DUP3, oldfd)
	c.Args[1], c.Args[2] = int64(newfd), int64(flags)
	return errOf(p.do(c))
}

// Fsync is fsync(2).
func (p *Process) Fsync(fd int) error { return errOf(p.fdDo(SYS_FSYNC, fd)) }

// Fdatasync is fdatasync(2).
func (p *Process) Fdatasync(fd int) error { return errOf(p.fdDo(SYS_FDATASYNC, fd)) }

// Sync is sync(2).
func (p *Process) Sync() { p.Syscall(Call{Nr: SYS_SYNC}) }

// Syncfs is syncfs(2).
func (p *Process) Syncfs(fd int) error { return errOf(p.fdDo(SYS_SYNCFS, fd)) }

// SyncFileRange is sync_file_range(2).
func (p *Process) SyncFileRange(fd int, off int64, n int64, flags int) error {
	c := p.fd(SYS_SYNC_FILE_RANGE, fd)
	c.Args[1], c.Args[2], c.Args[3] = off, n, int64(flags)
	return errOf(p.do(c))
}

// Ftruncate is ftruncate(2).
func (p *Process) Ftruncate(fd int, length int64) error {
	c := p.fd(SYS_FTRUNCATE, fd)
	c.Args[1] = length
	return errOf(p.do(c))
}

// Truncate is truncate(2).
func (p *Process) Truncate(path string, length int64) error {
	c := p.call(SYS_TRUNCATE)
	c.Path = path
	c.Args[1] = length
	return errOf(p.do(c))
}

// Fallocate is fallocate(2).
func (p *Process) Fallocate(fd int, mode uint32, off int64, len int64) error {
	c := p.fd(SYS_FALLOCATE, fd)
	c.Args[1], c.Args[2], c.Args[3] = int64(mode), off, len
	return errOf(p.do(c))
}

// Fadvise is fadvise64(2).
func (p *Process) Fadvise(fd int, offset int64, length int64, advice int) error {
	c := p.fd(SYS_FADVISE64, fd)
	c.Args[1], c.Args[2], c.Args[3] = offset, length, int64(advice)
	return errOf(p.do(c))
}

// Fstat is fstat(2).
func (p *Process) Fstat(fd int, stat *unix.Stat_t) error {
	c := p.fd(SYS_FSTAT, fd)
	c.Obj = stat
	return errOf(p.do(c))
}

// Stat is x/sys/unix's Stat: newfstatat(AT_FDCWD, path, stat, 0).
func (p *Process) Stat(path string, stat *unix.Stat_t) error {
	return p.Fstatat(unix.AT_FDCWD, path, stat, 0)
}

// Lstat is x/sys/unix's Lstat: newfstatat(AT_FDCWD, path, stat, AT_SYMLINK_NOFOLLOW).
func (p *Process) Lstat(path string, stat *unix.Stat_t) error {
	return p.Fstatat(unix.AT_FDCWD, path, stat, unix.AT_SYMLINK_NOFOLLOW)
}

// Fstatat is newfstatat(2).
func (p *Process) Fstatat(dirfd int, path string, stat *unix.Stat_t, flags int) error {
	c := p.call(SYS_NEWFSTATAT)
	c.Path, c.Obj = path, stat
	c.Args[0], c.Args[3] = int64(dirfd), int64(flags)
	return errOf(p.do(c))
}

// Statx is statx(2).
func (p *Process) Statx(dirfd int, path string, flags int, mask int, stat *unix.Statx_t) error {
	c := p.call(SYS_STATX)
	c.Path, c.Obj = path, stat
	c.Args[0], c.Args[2], c.Args[3] = int64(dirfd), int64(flags), int64(mask)
	return errOf(p.do(c))
}

// Access is x/sys/unix's Access: Faccessat(AT_FDCWD, path, mode, 0).
func (p *Process) Access(path string, mode uint32) error {
	return p.Faccessat(unix.AT_FDCWD, path, mode, 0)
}

// Faccessat is x/sys/unix's Faccessat: faccessat(2) when flags is 0, else
// faccessat2(2) (which the model implements, so the Go fallback never runs).
func (p *Process) Faccessat(dirfd int, path string, mode uint32, flags int) error {
	if flags == 0 {
		c := p.call(SYS_FACCESSAT)
		c.Path = path
		c.Args[0], c.Args[2] = int64(dirfd), int64(mode)
		return errOf(p.do(c))
	}
	return p.Faccessat2(dirfd, path, mode, flags)
}

// Faccessat2 is faccessat2(2).
func (p *Process) Faccessat2(dirfd int, path string, mode uint32, flags int) error {
	c := p.call(SYS_FACCESSAT2)
	c.Path = path
	c.Args[0], c.Args[2], c.Args[3] = int64(dirfd), int64(mode), int64(flags)
	return errOf(p.do(c))
}

// Unlink is x/sys/unix's Unlink: unlinkat(AT_FDCWD, path, 0).
func (p *Process) Unlink(path string) error { return p.Unlinkat(unix.AT_FDCWD, path, 0) }

// Unlinkat is unlinkat(2).
func (p *Process) Unlinkat(dirfd int, path string, flags int) error {
	c := p.call(SYS_UNLINKAT)
	c.Path = path
	c.Args[0], c.Args[2] = int64(dirfd), int64(flags)
	return errOf(p.do(c))
}

// Rmdir is x/sys/unix's Rmdir: unlinkat(AT_FDCWD, path, AT_REMOVEDIR).
func (p *Process) Rmdir(path string) error {
	return p.Unlinkat(unix.AT_FDCWD, path, unix.AT_REMOVEDIR)
}

// Rename is x/sys/unix's Rename: renameat(AT_FDCWD, oldpath, AT_FDCWD, newpath).
func (p *Process) Rename(oldpath string, newpath string) error {
	return p.Renameat(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath)
}

// Renameat is renameat(2).
func (p *Process) Renameat(olddirfd int, oldpath string, newdirfd int, newpath string) error {
	c := p.call(SYS_RENAMEAT)
	c.Path, c.Path2 = oldpath, newpath
	c.Args[0], c.Args[2] = int64(olddirfd), int64(newdirfd)
	return errOf(p.do(c))
}

// Renameat2 is renameat2(2).
func (p *Process) Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	c := p.call(SYS_RENAMEAT2)
	c.Path, c.Path2 = oldpath, newpath
	c.Args[0], c.Args[2], c.Args[4] = int64(olddirfd), int64(newdirfd), int64(flags)
	return errOf(p.do(c))
}

// Link is x/sys/unix's Link: linkat(AT_FDCWD, oldpath, AT_FDCWD, newpath, 0).
func (p *Process) Link(oldpath string, newpath string) error {
	return p.Linkat(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, 0)
}

// Linkat is linkat(2).
func (p *Process) Linkat(olddirfd int, oldpath string, newdirfd int, newpath string, flags int) error {
	c := p.call(SYS_LINKAT)
	c.Path, c.Path2 = oldpath, newpath
	c.Args[0], c.Args[2], c.Args[4] = int64(olddirfd), int64(newdirfd), int64(flags)
	return errOf(p.do(c))
}

// Symlink is x/sys/unix's Symlink: symlinkat(oldpath, AT_FDCWD, newpath). oldpath is
// the target.
func (p *Process) Symlink(oldpath string, newpath string) error {
	return p.Symlinkat(oldpath, unix.AT_FDCWD, newpath)
}

// Symlinkat is symlinkat(2): the Call carries the new link in Path and the target in
// Path2.
func (p *Process) Symlinkat(oldpath string, newdirfd int, newpath string) error {
	c := p.call(SYS_SYMLINKAT)
	c.Path, c.Path2 = newpath, oldpath
	c.Args[1] = int64(newdirfd)
	return errOf(p.do(c))
}

// Readlink is x/sys/unix's Readlink: readlinkat(AT_FDCWD, path, buf).
func (p *Process) Readlink(path string, buf []byte) (n int, err error) {
	return p.Readlinkat(unix.AT_FDCWD, path, buf)
}

// Readlinkat is readlinkat(2).
func (p *Process) Readlinkat(dirfd int, path string, buf []byte) (n int, err error) {
	c := p.call(SYS_READLINKAT)
	c.Path, c.Buf = path, buf
	c.Args[0], c.Args[3] = int64(dirfd), int64(len(buf))
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Mkdir is x/sys/unix's Mkdir: mkdirat(AT_FDCWD, path, mode).
func (p *Process) Mkdir(path string, mode uint32) error {
	return p.Mkdirat(unix.AT_FDCWD, path, mode)
}

// Mkdirat is mkdirat(2).
func (p *Process) Mkdirat(dirfd int, path string, mode uint32) error {
	c := p.call(SYS_MKDIRAT)
	c.Path = path
	c.Args[0], c.Args[2] = int64(dirfd), int64(mode)
	return errOf(p.do(c))
}

// Getdents is x/sys/unix's Getdents: getdents64(2).
func (p *Process) Getdents(fd int, buf []byte) (n int, err error) {
	c := p.call(SYS_GETDENTS64)
	c.Buf = buf
	c.Args[0], c.Args[2] = int64(fd), int64(len(buf))
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Chdir is chdir(2).
func (p *Process) Chdir(path string) error {
	return errOf(p.Syscall(Call{Nr: SYS_CHDIR, Path: path}))
}

// Fchdir is fchdir(2).
func (p *Process) Fchdir(fd int) error { return errOf(p.fdDo(SYS_FCHDIR, fd)) }

// Getcwd is the getcwd(2) syscall, as x/sys/unix's Getcwd: n counts the NUL.
func (p *Process) Getcwd(buf []byte) (n int, err error) {
	c := p.call(SYS_GETCWD)
	c.Buf = buf
	c.Args[1] = int64(len(buf))
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// Umask is umask(2): it sets the mask and returns the old one.
func (p *Process) Umask(mask int) (oldmask int) {
	c := p.call(SYS_UMASK)
	c.Args[0] = int64(mask)
	return int(p.do(c).Ret)
}

// Chmod is x/sys/unix's Chmod: Fchmodat(AT_FDCWD, path, mode, 0).
func (p *Process) Chmod(path string, mode uint32) error {
	return p.Fchmodat(unix.AT_FDCWD, path, mode, 0)
}

// Fchmodat is x/sys/unix's Fchmodat: fchmodat(2) when flags is 0, else fchmodat2(2).
func (p *Process) Fchmodat(dirfd int, path string, mode uint32, flags int) error {
	nr := SYS_FCHMODAT
	if flags != 0 {
		nr = SYS_FCHMODAT2
	}
	c := p.call(nr)
	c.Path = path
	c.Args[0], c.Args[2], c.Args[3] = int64(dirfd), int64(mode), int64(flags)
	return errOf(p.do(c))
}

// Fchmod is fchmod(2).
func (p *Process) Fchmod(fd int, mode uint32) error {
	c := p.fd(SYS_FCHMOD, fd)
	c.Args[1] = int64(mode)
	return errOf(p.do(c))
}

// Setxattr is setxattr(2) (see sys_xattr.go for what the model keeps).
func (p *Process) Setxattr(path string, attr string, data []byte, flags int) error {
	c := p.call(SYS_SETXATTR)
	c.Path, c.Path2, c.Buf = path, attr, data
	c.Args[3], c.Args[4] = int64(len(data)), int64(flags)
	return errOf(p.do(c))
}

// Lsetxattr is lsetxattr(2).
func (p *Process) Lsetxattr(link string, attr string, data []byte, flags int) error {
	c := p.call(SYS_LSETXATTR)
	c.Path, c.Path2, c.Buf = link, attr, data
	c.Args[3], c.Args[4] = int64(len(data)), int64(flags)
	return errOf(p.do(c))
}

// Fsetxattr is fsetxattr(2).
func (p *Process) Fsetxattr(fd int, attr string, data []byte, flags int) error {
	c := p.fd(SYS_FSETXATTR, fd)
	c.Path2, c.Buf = attr, data
	c.Args[3], c.Args[4] = int64(len(data)), int64(flags)
	return errOf(p.do(c))
}

// Removexattr is removexattr(2).
func (p *Process) Removexattr(path string, attr string) error {
	return errOf(p.do(&Call{Nr: SYS_REMOVEXATTR, Task: p.t, Path: path, Path2: attr}))
}

// Lremovexattr is lremovexattr(2).
func (p *Process) Lremovexattr(link string, attr string) error {
	return errOf(p.do(&Call{Nr: SYS_LREMOVEXATTR, Task: p.t, Path: link, Path2: attr}))
}

// Fremovexattr is fremovexattr(2).
func (p *Process) Fremovexattr(fd int, attr string) error {
	c := p.fd(SYS_FREMOVEXATTR, fd)
	c.Path2 = attr
	return errOf(p.do(c))
}

// Fchownat is fchownat(2).
func (p *Process) Fchownat(dirfd int, path string, uid int, gid int, flags int) error {
	c := p.call(SYS_FCHOWNAT)
	c.Path = path
	c.Args[0], c.Args[2], c.Args[3], c.Args[4] = int64(dirfd), int64(uid), int64(gid), int64(flags)
	return errOf(p.do(c))
}

// Fchown is fchown(2).
func (p *Process) Fchown(fd int, uid int, gid int) error {
	c := p.fd(SYS_FCHOWN, fd)
	c.Args[1], c.Args[2] = int64(uid), int64(gid)
	return errOf(p.do(c))
}

// Futimens is futimens(3): utimensat(fd, NULL, ts, 0).
func (p *Process) Futimens(fd int, ts []unix.Timespec) error {
	if ts != nil && len(ts) != 2 {
		return syscall.EINVAL
	}
	c := p.call(SYS_UTIMENSAT)
	if ts != nil {
		c.Obj = (*[2]unix.Timespec)(ts)
	}
	c.Args[0], c.Args[1] = int64(fd), PathNull
	return errOf(p.do(c))
}

// UtimesNanoAt is x/sys/unix's UtimesNanoAt: utimensat(2); ts nil means both "now";
// len(ts) != 2 is EINVAL without a call.
func (p *Process) UtimesNanoAt(dirfd int, path string, ts []unix.Timespec, flags int) error {
	if ts != nil && len(ts) != 2 {
		return syscall.EINVAL
	}
	c := p.call(SYS_UTIMENSAT)
	c.Path = path
	if ts != nil {
		c.Obj = (*[2]unix.Timespec)(ts)
	}
	c.Args[0], c.Args[3] = int64(dirfd), int64(flags)
	return errOf(p.do(c))
}

// Mmap is x/sys/unix's Mmap: mmap(2) of length bytes of fd at offset; the returned
// slice is the mapping (see sysMmap for what the model's mapping does). length <= 0
// is EINVAL without a call.
func (p *Process) Mmap(fd int, offset int64, length int, prot int, flags int) (data []byte, err error) {
	if length <= 0 {
		return nil, syscall.EINVAL
	}
	var out []byte
	c := p.call(SYS_MMAP)
	c.Obj = &out
	c.Args[1], c.Args[2], c.Args[3], c.Args[4], c.Args[5] = int64(length), int64(prot), int64(flags), int64(fd), offset
	r := p.do(c)
	if r.Errno != 0 {
		return nil, r.Errno
	}
	return out, nil
}

// Munmap is x/sys/unix's Munmap: b must be a whole slice returned by Mmap (else
// EINVAL without a call).
func (p *Process) Munmap(b []byte) error {
	if len(b) == 0 || len(b) != cap(b) {
		return syscall.EINVAL
	}
	addr, ok := p.t.k.AddrOf(b)
	if !ok || addr&pageMask != 0 {
		return syscall.EINVAL
	}
	c := p.call(SYS_MUNMAP)
	c.Args[0], c.Args[1] = int64(addr), int64(len(b))
	return errOf(p.do(c))
}

// Msync is msync(2) of the mapped range b. A slice outside every mapping is ENOMEM
// (the range is not mapped) without a call.
func (p *Process) Msync(b []byte, flags int) error {
	var addr uint64
	if len(b) > 0 {
		a, ok := p.t.k.AddrOf(b)
		if !ok {
			return syscall.ENOMEM
		}
		addr = a
	}
	c := p.call(SYS_MSYNC)
	c.Args[0], c.Args[1], c.Args[2] = int64(addr), int64(len(b)), int64(flags)
	return errOf(p.do(c))
}

// IoSetup is io_setup(2): it returns a new AIO context for nrEvents completions.
// (x/sys/unix has no AIO wrappers; these follow libaio's shape with Go types.)
func (p *Process) IoSetup(nrEvents int) (AioContext, error) {
	var ctx AioContext
	c := p.call(SYS_IO_SETUP)
	c.Obj = &ctx
	c.Args[0] = int64(nrEvents)
	if r := p.do(c); r.Errno != 0 {
		return 0, r.Errno
	}
	return ctx, nil
}

// IoSubmit is io_submit(2): it returns how many iocbs were submitted.
func (p *Process) IoSubmit(ctx AioContext, iocbs []*Iocb) (int, error) {
	c := p.call(SYS_IO_SUBMIT)
	c.Obj = iocbs
	c.Args[0], c.Args[1] = int64(ctx), int64(len(iocbs))
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// IoGetevents is io_getevents(2): up to nr completions (at most len(events)) are
// stored in events; with fewer than minNr completed, the call waits out timeout
// on the virtual clock. Without a time model every completion is immediate;
// under one the call waits for the minNr-th (see sysIoGetevents).
func (p *Process) IoGetevents(ctx AioContext, minNr, nr int, events []IoEvent, timeout *unix.Timespec) (int, error) {
	c := p.call(SYS_IO_GETEVENTS)
	c.Obj = events
	c.Args[0], c.Args[1], c.Args[2] = int64(ctx), int64(minNr), int64(nr)
	c.Args[4] = AioWaitForever
	if timeout != nil {
		c.Args[4] = timeout.Nano()
	}
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

// IoDestroy is io_destroy(2).
func (p *Process) IoDestroy(ctx AioContext) error {
	c := p.call(SYS_IO_DESTROY)
	c.Args[0] = int64(ctx)
	return errOf(p.do(c))
}

// Pipe2 is pipe2(2): the read end in fds[0], the write end in fds[1].
func (p *Process) Pipe2(fds *[2]int, flags int) error {
	var v [2]int32
	c := p.call(SYS_PIPE2)
	c.Args[1], c.Obj = int64(flags), &v
	err := errOf(p.do(c))
	if err == nil {
		fds[0], fds[1] = int(v[0]), int(v[1])
	}
	return err
}

// Socketpair is socketpair(2).
func (p *Process) Socketpair(domain, typ, proto int) (fds [2]int, err error) {
	var v [2]int32
	c := p.call(SYS_SOCKETPAIR)
	c.Args[0], c.Args[1], c.Args[2], c.Obj = int64(domain), int64(typ), int64(proto), &v
	if err = errOf(p.do(c)); err == nil {
		fds[0], fds[1] = int(v[0]), int(v[1])
	}
	return fds, err
}

// Mknodat is mknodat(2); dev as x/sys/unix's Mkdev gives it.
func (p *Process) Mknodat(dirfd int, path string, mode uint32, dev int) error {
	c := p.call(SYS_MKNODAT)
	c.Path = path
	c.Args[0], c.Args[2], c.Args[3] = int64(dirfd), int64(mode), int64(dev)
	return errOf(p.do(c))
}

// Openat2 is x/sys/unix's Openat2: openat2(2) with a struct open_how of 24 bytes.
func (p *Process) Openat2(dirfd int, path string, how *unix.OpenHow) (fd int, err error) {
	c := p.call(SYS_OPENAT2)
	c.Path, c.Obj = path, how
	c.Args[0], c.Args[3] = int64(dirfd), 24
	r := p.do(c)
	return int(r.Ret), errOf(r)
}

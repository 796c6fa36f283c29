// Package sim is the Linux file-syscall model: processes and threads, fd tables,
// open file descriptions, and the file syscalls with Linux's exact return values
// and errnos, over the file system model of package vfs.
//
// Every call crosses one method, (*Kernel).Syscall(Call) Result, the way every call
// of a process crosses the syscall table; interposers (package interposer) wrap the
// Kernel as Handlers, and the typed facade (*Process) builds Calls with the names
// and signatures of golang.org/x/sys/unix. One shortcut exists: a facade bound to
// the kernel itself, with a constant cost model, sends its hottest calls (read,
// write, pread, pwrite, lseek, fcntl, open, close) to the functions the dispatch
// would reach, without building a Call; nothing could observe the Call there, and
// TestTypedRouteMatchesCallRoute checks that both routes give the same results,
// clock and files. The support table (Syscalls, SupportOf)
// says for every x86-64 syscall whether it is modelled; calls that are not (brk,
// futex, sockets...) are accepted and return 0.
//
// # What is modelled
//
//   - fd → open file description (File: offset, access mode, status flags, errseq
//     cursor) → inode, with FD_CLOEXEC per fd, the lowest free fd first,
//     RLIMIT_NOFILE, dup/dup2/dup3/F_DUPFD sharing descriptions, fork sharing them,
//     exec closing FD_CLOEXEC fds and exit closing everything.
//   - The process runs as uid 0 with CAP_DAC_OVERRIDE: no permission checks
//     except access(X_OK), as for root on Linux.
//   - Time is virtual (Clock): each call advances it by the CostModel's price, and
//     the file system's timestamps read it.
//
// # Building Calls (for replayers and interposers)
//
// Args follow the C prototype (see Call); pointer slots are zero and the value
// travels in Path/Path2/Buf/Iov/Obj:
//
//   - read/write/pread64/pwrite64(fd, -, count, offset): Buf (its length is the
//     count); readv/writev/preadv/pwritev(fd, -, iovcnt, offset): Iov.
//   - open(-, flags, mode), openat(dirfd, -, flags, mode), creat(-, mode): Path.
//   - lseek(fd, offset, whence); fcntl(fd, cmd, arg), lock commands: Obj
//     *unix.Flock_t; flock(fd, op); dup2/dup3(old, new[, flags]).
//   - stat/lstat/newfstatat(dirfd, -, -, flags)/fstat(fd): Obj *unix.Stat_t;
//     statx(dirfd, -, flags, mask): Obj *unix.Statx_t.
//   - rename/renameat/renameat2(olddirfd, -, newdirfd, -, flags) and
//     link/linkat: Path (old), Path2 (new); symlink/symlinkat(-, newdirfd): Path is
//     the new link, Path2 its target.
//   - getdents64(fd, -, count), getcwd(-, size), readlink[at]: Buf.
//   - utimensat(dirfd, -, -, flags): Obj *[2]unix.Timespec or nil.
//   - mmap(addr, length, prot, flags, fd, offset): Obj *[]byte receives the
//     mapping (optional); Ret is its address. munmap/msync(addr, length[, flags]).
//   - io_setup(nr): Obj *AioContext; io_submit(ctx, nr): Obj []*Iocb;
//     io_getevents(ctx, min_nr, nr): Obj []IoEvent; io_destroy(ctx).
//   - getrlimit/setrlimit(resource), prlimit64(pid, resource): Obj *unix.Rlimit.
//   - fork/vfork/clone(flags): Ret is the child's tid (see Task.Fork and Task.Clone
//     to choose it); execve, exit, exit_group take nothing.
//
// # Concurrency
//
// A Kernel is safe for concurrent use. Each thread (Task, and the Process facade
// bound to it) is meant to be used by one goroutine at a time, as a thread makes one
// syscall at a time; use NewThread for concurrent callers. File data operations are
// serialised by the vfs lock; lseek, fcntl F_GETFD/F_SETFD/F_GETFL/F_SETFL and the fd
// table do not take it.
package sim

import (
	"slices"
	"sync"
	"syscall"

	"iosim/vfs"
)

// Linux limits the model enforces.
const (
	// DefaultNofile is the default RLIMIT_NOFILE soft limit.
	DefaultNofile = 1024
	// PageSize is the x86-64 page size: mmap offsets and msync addresses align to it.
	PageSize = 4096
	// LogicalBlockSize is the device's logical block size: O_DIRECT offsets, lengths
	// and buffer addresses must be multiples of it.
	LogicalBlockSize = 512
	// uioMaxIov is UIO_MAXIOV: readv/writev with more iovecs fail with EINVAL.
	uioMaxIov = 1024
	// maxRW is MAX_RW_COUNT: one read or write moves at most this many bytes.
	maxRW = 0x7ffff000
	// firstPid is the first pid Spawn hands out.
	firstPid = 1000
)

// Kernel is the syscall model. Create one with New. It is safe for concurrent use.
type Kernel struct {
	fs    *vfs.FS
	clock Clock
	// constCost is the per-call price when the cost model is a ConstantCost, so that
	// the fast path does not pass the Call to an interface (which would allocate).
	constCost int64
	cost      CostModel // nil when constCost applies
	// tm is the device and kernel time model (WithDevice); when set it prices
	// every call and neither constCost nor cost applies.
	tm *timeModel

	nofileDefault int64
	lockWait      bool
	dioMemAlign   uintptr

	mu     sync.Mutex
	tasks  map[int]*Task        // by tid
	groups map[int]*ThreadGroup // by pid
	nextID int

	locks lockTable
	aio   aioTable
	mm    mmTable
}

// Option configures New.
type Option func(*Kernel)

// WithCostModel sets the cost model (default DefaultCost: 100 ns per call),
// replacing a time model (WithDevice) given before it.
func WithCostModel(m CostModel) Option {
	return func(k *Kernel) {
		k.tm = nil
		if c, ok := m.(ConstantCost); ok {
			k.constCost, k.cost = int64(c), nil
			return
		}
		k.cost = m
	}
}

// WithNofile sets the RLIMIT_NOFILE soft limit new processes start with (default 1024).
func WithNofile(n int) Option { return func(k *Kernel) { k.nofileDefault = int64(n) } }

// WithLockWait says what a blocking lock request (F_SETLKW, F_OFD_SETLKW, flock
// without LOCK_NB) does when it conflicts and no deadlock is detected. With true
// (the default) the calling goroutine blocks until the conflicting lock goes away,
// as the thread would on Linux: another goroutine (thread) must release it. With
// false the call fails at once with EINTR, the errno Linux returns when a signal
// interrupts the wait: use this when a single goroutine drives several processes
// (a replayed trace), where blocking would hang.
func WithLockWait(block bool) Option { return func(k *Kernel) { k.lockWait = block } }

// WithDirectIOMemAlign sets the alignment O_DIRECT requires of user buffer
// addresses (the device's dma_alignment + 1), checked as unsafe.Pointer(&buf[0]) % n,
// what the kernel would see for a buffer passed by x/sys/unix.
//
// The default (n = 0) is the rule of the project's reference machine (Linux 6.18,
// ext4 on virtio-blk), measured with x/sys/unix: the address may be anything, but
// the buffer is cut at 4 KiB page boundaries into segments and every segment's
// length must be a multiple of the 512-byte logical block size. So a misaligned
// buffer works when it lies within one page (512 bytes at page offset 1) and fails
// with EINVAL when it crosses one (4096 bytes at page offset 4). Use
// LogicalBlockSize (512) to model a device that requires aligned buffers.
func WithDirectIOMemAlign(n int) Option {
	return func(k *Kernel) {
		if n < 0 {
			n = 0
		}
		k.dioMemAlign = uintptr(n)
	}
}

// New returns a kernel over fs and installs its virtual clock as fs's clock, so file
// timestamps are Epoch plus the virtual time elapsed.
func New(fs *vfs.FS, opts ...Option) *Kernel {
	k := &Kernel{
		fs:            fs,
		constCost:     int64(DefaultCost),
		nofileDefault: DefaultNofile,
		lockWait:      true,
		dioMemAlign:   0,
		tasks:         map[int]*Task{},
		groups:        map[int]*ThreadGroup{},
		nextID:        firstPid,
	}
	for _, o := range opts {
		o(k)
	}
	k.locks.init()
	k.aio.init()
	k.mm.init()
	fs.SetClock(k.clock.Timespec)
	return k
}

// FS returns the file system.
func (k *Kernel) FS() *vfs.FS { return k.fs }

// Clock returns the virtual clock.
func (k *Kernel) Clock() *Clock { return &k.clock }

// Now returns the virtual nanoseconds elapsed since the kernel started: under a
// time model, the latest clock any thread has reached (see Task.Now); read it
// when no thread is in a call.
func (k *Kernel) Now() int64 {
	if k.tm != nil {
		return k.tm.latest()
	}
	return k.clock.Now()
}

// Syscall performs one call and charges its cost to the virtual clock. It is the
// single dispatch point of the model; Kernel implements Handler.
func (k *Kernel) Syscall(c Call) Result { return k.syscall(&c) }

// syscall is Syscall on a Call the caller owns (the facade's fast path). c does not
// escape.
//
// The calls of a program's steady state (read, lseek, pread64, write) are
// dispatched here without entering the full switch of dispatch.
func (k *Kernel) syscall(c *Call) Result {
	if k.tm != nil {
		return k.tm.syscall(c)
	}
	var r Result
	switch t := c.Task; {
	case t == nil || t.exited.Load():
		r = Fail(syscall.ESRCH)
	case c.Nr == SYS_READ:
		r = k.sysRead(c)
	case c.Nr == SYS_LSEEK:
		r = k.sysLseek(c)
	case c.Nr == SYS_PREAD64:
		r = k.sysPread(c)
	case c.Nr == SYS_WRITE:
		r = k.sysWrite(c)
	default:
		r = k.dispatch(c)
	}
	if k.cost == nil {
		k.clock.ns.Add(k.constCost)
		if t := c.Task; t != nil {
			t.now += k.constCost
		}
	} else {
		k.charge(c, r)
	}
	return r
}

// chargeConst charges the constant cost of a call made by t through a typed
// entry point (see Process.direct) and returns its result; under a time model,
// the call's entry (Process.directLight).
func (k *Kernel) chargeConst(t *Task, r Result) Result {
	if tm := k.tm; tm != nil {
		t.now = tm.entry(t, light)
		return r
	}
	k.clock.ns.Add(k.constCost)
	t.now += k.constCost
	return r
}

// chargePath is chargeConst for a call that resolves a path.
func (k *Kernel) chargePath(t *Task, r Result) Result {
	if tm := k.tm; tm != nil {
		t.now = tm.entry(t, path)
		return r
	}
	return k.chargeConst(t, r)
}

// charge advances the clock by the cost model's price of c. The model gets a copy,
// so that c does not escape (the facade's Calls live on its stack).
func (k *Kernel) charge(c *Call, r Result) {
	cc := *c
	d := k.cost.Cost(&cc, r)
	k.clock.Advance(d)
	if t := c.Task; t != nil && d > 0 {
		t.now += d
	}
}

var _ Handler = (*Kernel)(nil)

// ok returns a successful Result with return value v.
func ok(v int64) Result { return Result{Ret: v} }

// res converts a count and a vfs error (a bare Errno or nil) to a Result.
func res[N int | int64](v N, err error) Result {
	if err != nil {
		return Fail(errnoOf(err))
	}
	return Result{Ret: int64(v)}
}

// errnoOf extracts the Errno from a vfs error; anything else is EIO.
func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}

// dispatch performs c for syscall, once the caller is known to be alive.
func (k *Kernel) dispatch(c *Call) Result {
	t := c.Task
	switch c.Nr {
	// sys_read_write.go
	case SYS_READ:
		return k.sysRead(c)
	case SYS_WRITE:
		return k.sysWrite(c)
	case SYS_PREAD64:
		return k.sysPread(c)
	case SYS_PWRITE64:
		return k.sysPwrite(c)
	case SYS_READV:
		return k.sysReadv(c, false, 0, 0)
	case SYS_WRITEV:
		return k.sysWritev(c, false, 0, 0)
	case SYS_PREADV:
		return k.sysReadv(c, true, c.Args[3], 0)
	case SYS_PREADV2: // Args[4]: RWF_* flags; offset -1: the file offset
		return k.sysReadv(c, c.Args[3] != -1, c.Args[3], c.Args[4])
	case SYS_PWRITEV:
		return k.sysWritev(c, true, c.Args[3], 0)
	case SYS_PWRITEV2:
		return k.sysWritev(c, c.Args[3] != -1, c.Args[3], c.Args[4])
	case SYS_COPY_FILE_RANGE:
		return k.sysCopyFileRange(c)
	case SYS_SENDFILE:
		return k.sysSendfile(c)
	// sys_open.go
	case SYS_OPEN:
		return k.sysOpenat(c, atFdcwd, c.Args[1], uint32(c.Args[2]))
	case SYS_OPENAT:
		return k.sysOpenat(c, int(c.Args[0]), c.Args[2], uint32(c.Args[3]))
	case SYS_CREAT:
		return k.sysOpenat(c, atFdcwd, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_TRUNC, uint32(c.Args[1]))
	case SYS_CLOSE:
		return k.sysClose(c)
	// sys_seek.go
	case SYS_LSEEK:
		return k.sysLseek(c)
	// sys_fcntl.go
	case SYS_FCNTL:
		return k.sysFcntl(c)
	case SYS_FLOCK:
		return k.sysFlock(c)
	// sys_dup.go
	case SYS_DUP:
		return k.sysDup(c)
	case SYS_DUP2:
		return k.sysDup2(c)
	case SYS_DUP3:
		return k.sysDup3(c)
	case SYS_CLOSE_RANGE:
		return k.sysCloseRange(c)
	// sys_sync.go
	case SYS_FSYNC:
		return k.sysFsync(c, false)
	case SYS_FDATASYNC:
		return k.sysFsync(c, true)
	case SYS_SYNC:
		_ = k.fs.Sync()
		return ok(0)
	case SYS_SYNCFS:
		return k.sysSyncfs(c)
	case SYS_SYNC_FILE_RANGE:
		return k.sysSyncFileRange(c)
	case SYS_FTRUNCATE:
		return k.sysFtruncate(c)
	case SYS_TRUNCATE:
		return k.sysTruncate(c)
	case SYS_FALLOCATE:
		return k.sysFallocate(c)
	case SYS_FADVISE64:
		return k.sysFadvise(c)
	case SYS_READAHEAD:
		return k.sysReadahead(c)
	// sys_stat.go
	case SYS_FSTAT:
		return k.sysFstat(c)
	case SYS_STAT:
		return k.sysFstatat(c, atFdcwd, c.Path, 0)
	case SYS_LSTAT:
		return k.sysFstatat(c, atFdcwd, c.Path, atSymlinkNofollow)
	case SYS_NEWFSTATAT:
		return k.sysFstatat(c, int(c.Args[0]), c.Path, int(c.Args[3]))
	case SYS_STATX:
		return k.sysStatx(c)
	case SYS_ACCESS:
		return k.sysFaccessat(c, atFdcwd, uint32(c.Args[1]), 0)
	case SYS_FACCESSAT:
		return k.sysFaccessat(c, int(c.Args[0]), uint32(c.Args[2]), 0)
	case SYS_FACCESSAT2:
		return k.sysFaccessat(c, int(c.Args[0]), uint32(c.Args[2]), int(c.Args[3]))
	// sys_namespace.go
	case SYS_UNLINK:
		return k.sysUnlinkat(c, atFdcwd, 0)
	case SYS_UNLINKAT:
		return k.sysUnlinkat(c, int(c.Args[0]), int(c.Args[2]))
	case SYS_RMDIR:
		return k.sysUnlinkat(c, atFdcwd, atRemovedir)
	case SYS_RENAME:
		return k.sysRenameat2(c, atFdcwd, atFdcwd, 0)
	case SYS_RENAMEAT:
		return k.sysRenameat2(c, int(c.Args[0]), int(c.Args[2]), 0)
	case SYS_RENAMEAT2:
		return k.sysRenameat2(c, int(c.Args[0]), int(c.Args[2]), uint(c.Args[4]))
	case SYS_LINK:
		return k.sysLinkat(c, atFdcwd, atFdcwd, 0)
	case SYS_LINKAT:
		return k.sysLinkat(c, int(c.Args[0]), int(c.Args[2]), int(c.Args[4]))
	case SYS_SYMLINK:
		return k.sysSymlinkat(c, atFdcwd)
	case SYS_SYMLINKAT:
		return k.sysSymlinkat(c, int(c.Args[1]))
	case SYS_READLINK:
		return k.sysReadlinkat(c, atFdcwd)
	case SYS_READLINKAT:
		return k.sysReadlinkat(c, int(c.Args[0]))
	case SYS_MKDIR:
		return k.sysMkdirat(c, atFdcwd, uint32(c.Args[1]))
	case SYS_MKDIRAT:
		return k.sysMkdirat(c, int(c.Args[0]), uint32(c.Args[2]))
	case SYS_GETDENTS64, SYS_GETDENTS:
		return k.sysGetdents64(c)
	case SYS_CHDIR:
		return k.sysChdir(c)
	case SYS_FCHDIR:
		return k.sysFchdir(c)
	case SYS_GETCWD:
		return k.sysGetcwd(c)
	case SYS_UMASK:
		return ok(int64(t.g.umask.Swap(uint32(c.Args[0]) & 0o777)))
	case SYS_CHMOD:
		return k.sysFchmodat(c, atFdcwd, uint32(c.Args[1]), 0)
	case SYS_FCHMODAT:
		return k.sysFchmodat(c, int(c.Args[0]), uint32(c.Args[2]), 0)
	case SYS_FCHMODAT2:
		return k.sysFchmodat(c, int(c.Args[0]), uint32(c.Args[2]), int(c.Args[3]))
	case SYS_FCHMOD:
		return k.sysFchmod(c)
	case SYS_CHOWN:
		return k.sysFchownat(c, atFdcwd, int(c.Args[1]), int(c.Args[2]), 0)
	case SYS_LCHOWN:
		return k.sysFchownat(c, atFdcwd, int(c.Args[1]), int(c.Args[2]), atSymlinkNofollow)
	case SYS_FCHOWNAT:
		return k.sysFchownat(c, int(c.Args[0]), int(c.Args[2]), int(c.Args[3]), int(c.Args[4]))
	case SYS_FCHOWN:
		return k.sysFchown(c)
	case SYS_UTIMENSAT:
		return k.sysUtimensat(c)
	// sys_xattr.go
	case SYS_SETXATTR:
		return k.sysSetxattr(c, true, false)
	case SYS_LSETXATTR:
		return k.sysSetxattr(c, false, false)
	case SYS_FSETXATTR:
		return k.sysSetxattr(c, false, true)
	case SYS_REMOVEXATTR:
		return k.sysRemovexattr(c, true, false)
	case SYS_LREMOVEXATTR:
		return k.sysRemovexattr(c, false, false)
	case SYS_FREMOVEXATTR:
		return k.sysRemovexattr(c, false, true)
	// sys_mmap.go
	case SYS_MMAP:
		return k.sysMmap(c)
	case SYS_MUNMAP:
		return k.sysMunmap(c)
	case SYS_MSYNC:
		return k.sysMsync(c)
	// sys_aio.go
	case SYS_IO_SETUP:
		return k.sysIoSetup(c)
	case SYS_IO_DESTROY:
		return k.sysIoDestroy(c)
	case SYS_IO_SUBMIT:
		return k.sysIoSubmit(c)
	case SYS_IO_GETEVENTS, SYS_IO_PGETEVENTS:
		return k.sysIoGetevents(c)
	case SYS_IO_CANCEL:
		if k.aio.get(uint64(c.Args[0])) == nil {
			return Fail(syscall.EINVAL)
		}
		return Fail(syscall.EINVAL)
	// task.go
	case SYS_FORK, SYS_VFORK:
		return ok(int64(k.fork(t, 0).tid))
	case SYS_CLONE, SYS_CLONE3:
		if c.Args[0]&syscall.CLONE_THREAD != 0 {
			return ok(int64(k.newThread(t.g, 0).tid))
		}
		return ok(int64(k.fork(t, 0).tid))
	case SYS_EXECVE, SYS_EXECVEAT:
		t.g.exec()
		return ok(0)
	case SYS_EXIT:
		k.exitThread(t)
		return ok(0)
	case SYS_EXIT_GROUP:
		k.exitGroup(t.g)
		return ok(0)
	case SYS_GETPID:
		return ok(int64(t.g.pid))
	case SYS_GETTID:
		return ok(int64(t.tid))
	case SYS_GETRLIMIT, SYS_SETRLIMIT, SYS_PRLIMIT64:
		return k.sysRlimit(c)
	}
	return ok(0) // not modelled: accepted, no effect
}

// Spawn creates a process (a thread group with one thread) with the next free pid,
// an empty fd table, the root as cwd and umask 022, and returns its facade bound
// directly to the kernel.
func (k *Kernel) Spawn() *Process {
	t, _ := k.SpawnPid(0)
	return NewProcess(k, t)
}

// SpawnPid creates a process whose pid (and main thread's tid) is pid, or the next
// free one when pid is 0: the strace replayer uses the recorded pids. EEXIST when
// the id is taken.
func (k *Kernel) SpawnPid(pid int) (*Task, error) {
	now := k.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	id, err := k.allocIDLocked(pid)
	if err != nil {
		return nil, err
	}
	g := &ThreadGroup{k: k, pid: id, files: newFDTable()}
	g.cwd.Store(k.fs.Root())
	g.umask.Store(0o022)
	g.nofile.Store(k.nofileDefault)
	t := &Task{k: k, tid: id, g: g, files: g.files, now: now}
	g.threads = []*Task{t}
	k.tasks[id] = t
	k.groups[id] = g
	return t, nil
}

func (k *Kernel) allocIDLocked(id int) (int, error) {
	if id != 0 {
		if k.tasks[id] != nil || k.groups[id] != nil {
			return 0, syscall.EEXIST
		}
		if id >= k.nextID {
			k.nextID = id + 1
		}
		return id, nil
	}
	for k.tasks[k.nextID] != nil || k.groups[k.nextID] != nil {
		k.nextID++
	}
	id = k.nextID
	k.nextID++
	return id, nil
}

// Task returns the live thread with the given tid, or nil.
func (k *Kernel) Task(tid int) *Task {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.tasks[tid]
}

// Pids returns the pids of the live processes in increasing order.
func (k *Kernel) Pids() []int {
	k.mu.Lock()
	out := make([]int, 0, len(k.groups))
	for pid := range k.groups {
		out = append(out, pid)
	}
	k.mu.Unlock()
	slices.Sort(out)
	return out
}

// Package sim is the Linux file-syscall model: processes and threads, fd tables,
// open file descriptions, and the file syscalls with Linux's exact return values
// and errnos, over the file system model of package vfs.
//
// Every call crosses one method, (*Kernel).Syscall(*Call) Result, the way every call
// of a process crosses the syscall table; interposers (package interposer) wrap the
// Kernel as Handlers, and the typed facade (*Process) builds Calls with the names
// and signatures of golang.org/x/sys/unix, in a slot of the calling thread that it
// lends down the stack (see Handler for the contract). One shortcut exists: a facade bound to
// the kernel itself, with a constant cost model, sends its hottest calls (read,
// write, pread, pwrite, lseek, fcntl, open, close) to the functions the dispatch
// would reach, without building a Call; nothing could observe the Call there, and
// TestTypedRouteMatchesCallRoute checks that both routes give the same results,
// clock and files. The syscall table (systab.go; Info, Syscalls,
// SupportOf) has one row per syscall: its handler, whether and how far it is
// modelled, and the layout of its arguments that replay and the tracer read; calls
// that are not modelled (brk, futex, sockets...) are accepted and return 0.
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

	"github.com/iosim/iosim/vfs"
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
	cpus          int // num_possible_cpus(): sizes AIO rings (aioRing)

	mu     sync.Mutex
	tasks  map[int]*Task        // by tid
	groups map[int]*ThreadGroup // by pid
	nextID int

	locks lockTable
	aio   aioTable
	mm    mmTable

	// pipeMu guards fifos (the pipe of each open FIFO) and pipeInos (the
	// st_ino of the last pipe or socket made); see sys_pipe.go.
	pipeMu   sync.Mutex
	fifos    map[*vfs.Inode]*pipe
	pipeInos uint64
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
// without LOCK_NB) does when it conflicts and no deadlock is detected, and what a
// read, write or FIFO open that would wait for a pipe's peer does (sys_pipe.go). With true
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

// DefaultPossibleCPUs is the reference machine's num_possible_cpus()
// (/sys/devices/system/cpu/possible: 0-1).
const DefaultPossibleCPUs = 2

// WithPossibleCPUs sets how many CPUs the modelled machine may have
// (num_possible_cpus(), /sys/devices/system/cpu/possible), which sizes the
// rings of Linux AIO contexts (default DefaultPossibleCPUs).
func WithPossibleCPUs(n int) Option {
	return func(k *Kernel) { k.cpus = max(n, 1) }
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
		cpus:          DefaultPossibleCPUs,
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
// single dispatch point of the model; Kernel implements Handler. c does not
// escape.
func (k *Kernel) Syscall(c *Call) Result {
	if k.tm != nil {
		return k.tm.syscall(c)
	}
	r := k.run(c)
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

// run performs c, uncharged, through the syscall table's dispatch
// (systab.go, zdispatch.go).
func (k *Kernel) run(c *Call) Result {
	if t := c.Task; t == nil || t.exited.Load() {
		return Fail(syscall.ESRCH)
	}
	return k.dispatch(c)
}

// chargeConst charges the constant cost of a call made by t through a typed
// entry point (see Process.direct) and returns its result; under a time model,
// the call's entry (Process.directLight).
func (k *Kernel) chargeConst(t *Task, r Result) Result {
	if tm := k.tm; tm != nil {
		tm.lightCall(t, light)
		return r
	}
	k.clock.ns.Add(k.constCost)
	t.now += k.constCost
	return r
}

// chargePath is chargeConst for a call that resolves a path.
func (k *Kernel) chargePath(t *Task, r Result) Result {
	if tm := k.tm; tm != nil {
		tm.lightCall(t, path)
		return r
	}
	return k.chargeConst(t, r)
}

// charge advances the clock by the cost model's price of c. The model gets a copy,
// so that c does not escape (a caller may send a Call that lives on its stack).
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

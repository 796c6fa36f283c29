package sim

import (
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// ThreadGroup is a process: a pid, an fd table shared by its threads, a cwd, a umask
// and an RLIMIT_NOFILE. Create one with Kernel.Spawn/SpawnPid or by forking.
type ThreadGroup struct {
	k      *Kernel
	pid    int
	files  *fdTable
	cwd    atomic.Pointer[vfs.Inode]
	umask  atomic.Uint32
	nofile atomic.Int64

	mu      sync.Mutex // guards threads and exited
	threads []*Task
	exited  bool

	noData atomic.Bool // see SetPayloadFree
}

// SetPayloadFree says whether the descriptions the process opens from now on
// keep the bytes written through them. Payload-free, a write keeps its extent
// and not its bytes (vfs.WriteNoData): the range reads back as zeros, and
// everything else the model accounts for (the result, size, allocation, page
// cache, durability, the time it costs) is as for a write that kept them.
// For a program that only has to be timed and never looks at what it wrote,
// such as a fio job without verify: the cost of a write no longer grows with
// its size. Descriptions already open are unchanged; a child forked later
// inherits the setting.
func (g *ThreadGroup) SetPayloadFree(on bool) { g.noData.Store(on) }

// PayloadFree reports what SetPayloadFree set.
func (g *ThreadGroup) PayloadFree() bool { return g.noData.Load() }

// Pid returns the process id.
func (g *ThreadGroup) Pid() int { return g.pid }

// Cwd returns the current working directory.
func (g *ThreadGroup) Cwd() *vfs.Inode { return g.cwd.Load() }

// Umask returns the file mode creation mask.
func (g *ThreadGroup) Umask() uint32 { return g.umask.Load() }

// Nofile returns the RLIMIT_NOFILE soft limit.
func (g *ThreadGroup) Nofile() int { return int(g.nofile.Load()) }

// SetNofile sets the RLIMIT_NOFILE soft limit: opens fail with EMFILE once every fd
// below it is taken, F_DUPFD at or beyond it with EINVAL, dup2/dup3 to it with EBADF.
// Fds already open above it stay open, as on Linux.
func (g *ThreadGroup) SetNofile(n int) { g.nofile.Store(int64(n)) }

// Exited reports whether the process has ended (exit_group(2), or exit(2) of
// its last thread).
func (g *ThreadGroup) Exited() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.exited
}

// Task is a thread: a tid in a thread group. Every Call names the Task making it.
type Task struct {
	k      *Kernel
	tid    int
	g      *ThreadGroup
	files  *fdTable // g.files, one pointer hop closer for the fast path
	exited atomic.Bool
	// now is the thread's virtual clock (see Now); tb is where its time went
	// (with a time model). Only the thread's own calls write them.
	now int64
	tb  *Breakdown
	// aioUntil is when the thread's last io_getevents or io_destroy under a
	// time model returns (set by the call, read by its pricing).
	aioUntil int64
	// aioDevice (≤ aioUntil) is until when of that call the thread waited
	// for the device; the rest it slept out its timeout.
	aioDevice int64
	// aioPre is the time model's buffer for the state of an io_submit's
	// iocbs before the call (timeModel.beforeSubmit), reused by the next.
	aioPre []pre
	// call is the Call the thread's facade lends down a handler stack (see
	// Handler), empty between calls but for Nr and Task (see Process.call);
	// lent says it is out, so a call made through a facade of this
	// thread by a layer while it is out gets a Call of its own.
	call Call
	lent bool
}

// Tid returns the thread id (the pid for a process's first thread).
func (t *Task) Tid() int { return t.tid }

// Pid returns the id of the thread's process.
func (t *Task) Pid() int { return t.g.pid }

// Group returns the thread's process.
func (t *Task) Group() *ThreadGroup { return t.g }

// Kernel returns the kernel the thread runs on.
func (t *Task) Kernel() *Kernel { return t.k }

// Exited reports whether the thread has exited.
func (t *Task) Exited() bool { return t.exited.Load() }

// SoleThread reports whether t is the only thread of its process (the only user
// of its fd table). While it is, the process's calls are t's calls, made one at a
// time: only t can add a thread (a clone through the stack, or Task.Clone on
// t's behalf), so state that only the process's own calls change needs no lock
// in them. The model's fast paths (read, lseek, close) rely on this; so may a
// layer's.
func (t *Task) SoleThread() bool { return t.files.users.Load() == 1 }

// Fork creates a child process as fork(2) does, with the given pid (0: the next free
// one; EEXIST when taken): the child's fd table is a copy of the parent's whose fds
// share the parent's open file descriptions (offsets, status flags) and keep their
// FD_CLOEXEC; cwd, umask and RLIMIT_NOFILE are copied. POSIX record locks are not
// inherited (they belong to the parent); OFD and flock locks are shared with the
// descriptions. It is the replayer's hook for a recorded fork/clone with its child id.
func (t *Task) Fork(pid int) (*Task, error) {
	k := t.k
	k.mu.Lock()
	id, err := k.allocIDLocked(pid)
	k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return k.forkAs(t, id), nil
}

// Clone creates a thread of t's process with the given tid (0: the next free one;
// EEXIST when taken). It shares the fd table, cwd and umask.
func (t *Task) Clone(tid int) (*Task, error) {
	k := t.k
	k.mu.Lock()
	id, err := k.allocIDLocked(tid)
	k.mu.Unlock()
	if err != nil {
		return nil, err
	}
	c := k.newThreadAs(t.g, id)
	c.now = t.now
	return c, nil
}

func (k *Kernel) fork(t *Task, pid int) *Task {
	c, _ := t.Fork(pid)
	return c
}

func (k *Kernel) forkAs(parent *Task, id int) *Task {
	pg := parent.g
	g := &ThreadGroup{k: k, pid: id, files: pg.files.fork()}
	g.cwd.Store(pg.cwd.Load())
	g.umask.Store(pg.umask.Load())
	g.nofile.Store(pg.nofile.Load())
	g.noData.Store(pg.noData.Load())
	t := &Task{k: k, tid: id, g: g, files: g.files, now: parent.now}
	g.threads = []*Task{t}
	k.mu.Lock()
	k.tasks[id] = t
	k.groups[id] = g
	k.mu.Unlock()
	return t
}

func (k *Kernel) newThread(g *ThreadGroup, tid int) *Task {
	t, _ := g.threads[0].Clone(tid)
	return t
}

func (k *Kernel) newThreadAs(g *ThreadGroup, id int) *Task {
	t := &Task{k: k, tid: id, g: g, files: g.files}
	g.mu.Lock()
	g.threads = append(g.threads, t)
	g.mu.Unlock()
	g.files.users.Add(1)
	k.mu.Lock()
	k.tasks[id] = t
	k.mu.Unlock()
	return t
}

// exec closes the FD_CLOEXEC descriptors, as execve(2).
func (g *ThreadGroup) exec() {
	for _, e := range g.files.removeIf(func(fd int, cloexec bool) bool { return cloexec }) {
		g.k.closeFile(g, e)
	}
}

// exitThread ends one thread; the last thread's exit ends the process.
func (k *Kernel) exitThread(t *Task) {
	if t.exited.Swap(true) {
		return
	}
	g := t.g
	g.mu.Lock()
	live := 0
	for _, o := range g.threads {
		if !o.exited.Load() {
			live++
		}
	}
	g.mu.Unlock()
	k.mu.Lock()
	delete(k.tasks, t.tid)
	k.mu.Unlock()
	if live == 0 {
		k.exitGroup(g)
		return
	}
	g.files.users.Add(-1)
}

// exitGroup ends every thread of the process and closes all its fds, as
// exit_group(2): the descriptions' last references go, releasing their locks.
func (k *Kernel) exitGroup(g *ThreadGroup) {
	g.mu.Lock()
	if g.exited {
		g.mu.Unlock()
		return
	}
	g.exited = true
	threads := g.threads
	g.mu.Unlock()
	k.mu.Lock()
	for _, t := range threads {
		t.exited.Store(true)
		delete(k.tasks, t.tid)
	}
	delete(k.groups, g.pid)
	k.mu.Unlock()
	for _, f := range g.files.removeIf(func(int, bool) bool { return true }) {
		k.closeFile(g, f)
	}
	k.aio.exit(g)
	k.mm.exit(k, g)
}

// sysRlimit handles getrlimit/setrlimit/prlimit64 for RLIMIT_NOFILE. The limit
// travels in Obj as *unix.Rlimit (prlimit64: new limit in Obj, old one in Obj2
// is not modelled; Args[0] is the pid, 0 for the caller).
func (k *Kernel) sysRlimit(c *Call) Result {
	const rlimitNofile = 7
	res := c.Args[0]
	if c.Nr == SYS_PRLIMIT64 {
		res = c.Args[1]
	}
	if res != rlimitNofile {
		return ok(0)
	}
	rl, _ := c.Obj.(*unix.Rlimit)
	if rl == nil {
		return ok(0)
	}
	g := c.Task.g
	if c.Nr == SYS_GETRLIMIT {
		rl.Cur = uint64(g.nofile.Load())
		rl.Max = 1 << 20
		return ok(0)
	}
	if rl.Cur > rl.Max {
		return Fail(syscall.EINVAL)
	}
	if rl.Cur > 1<<20 {
		return Fail(syscall.EPERM)
	}
	g.nofile.Store(int64(rl.Cur))
	return ok(0)
}

// NrOpen is Linux's fs.nr_open default: no process can have an fd at or above it.
const NrOpen = 1 << 20

// InstallPath opens path (relative to the process's cwd) with flags and perm as
// open(2) would and installs the description at fd (EBADF at or beyond the
// process's RLIMIT_NOFILE: raise it first with SetNofile), replacing whatever fd held (as
// dup2). The strace replayer uses it for fds a trace inherits or that it cannot
// otherwise reproduce (fd 0-2, an fd shown by -y). flags may include O_CLOEXEC.
func (t *Task) InstallPath(fd int, path string, flags int, perm uint32) error {
	if fd < 0 || fd >= t.g.Nofile() {
		return syscall.EBADF
	}
	if e := openArgsErr(path, flags); e != 0 {
		return e
	}
	f, e := t.k.openFile(t, atFdcwd, path, flags, perm)
	if e != 0 {
		return e
	}
	t.install(fd, f, flags&syscall.O_CLOEXEC != 0)
	return nil
}

// InstallSpecial installs a special object (DevNull, DevZero, a Placeholder) at fd,
// replacing whatever fd held (EBADF at or beyond RLIMIT_NOFILE). flags gives the
// access mode and status flags F_GETFL reports (O_RDWR, O_NONBLOCK...) and
// O_CLOEXEC. F_GETFL adds O_LARGEFILE, which open(2) forces on x86-64, except
// for a Placeholder pipe or socket: pipe2(2) and socket(2) do not set it.
func (t *Task) InstallSpecial(fd int, s Special, flags int) error {
	if fd < 0 || fd >= t.g.Nofile() {
		return syscall.EBADF
	}
	f := newFile(t.k, nil, s, flags)
	if p, ok := s.(*Placeholder); ok && (p.Kind == vfs.S_IFIFO || p.Kind == vfs.S_IFSOCK) {
		f.flags.Store(f.flags.Load() &^ oLargefile)
	}
	t.install(fd, f, flags&syscall.O_CLOEXEC != 0)
	return nil
}

func (t *Task) install(fd int, f *File, cloexec bool) {
	if old := t.g.files.install(fd, f, cloexec); old != nil {
		t.k.closeFile(t.g, old)
	}
}

// File returns the open file description fd refers to, or nil. The caller must not
// keep it past the fd's close.
func (t *Task) File(fd int) *File { return t.g.files.get(fd) }

// FDs returns the open fds in increasing order.
func (t *Task) FDs() []int { return t.g.files.fds() }

// fget returns the description fd refers to and whether the caller must drop a
// reference (fput) when done: when the table is used by one thread only, no other
// thread can close the fd meanwhile and no reference is taken (Linux's fdget does
// the same).
//
// Descriptions opened with O_PATH are not returned (nil, as for a closed fd: EBADF):
// only the calls that use fgetRaw (fcntl's fd commands, fstat, fchdir, dup*)
// accept them, as Linux's fdget versus fdget_raw.
func (t *Task) fget(fd int) (*File, bool) {
	if tbl := t.files; tbl.users.Load() == 1 {
		return tbl.getIO(fd), false
	}
	return t.fgetShared(fd)
}

// fgetShared is fget of a table that several threads use: the reference taken
// keeps the description alive if another thread closes fd meanwhile.
func (t *Task) fgetShared(fd int) (*File, bool) {
	f, ref := t.fgetRaw(fd)
	if f != nil && f.flags.Load()&oPath != 0 {
		if ref {
			f.decRef()
		}
		return nil, false
	}
	return f, ref
}

// fgetRaw is fget that also returns O_PATH descriptions.
func (t *Task) fgetRaw(fd int) (*File, bool) {
	tbl := t.files
	if tbl.users.Load() == 1 {
		return tbl.get(fd), false
	}
	for {
		f := tbl.get(fd)
		if f == nil {
			return nil, false
		}
		if !f.tryIncRef() {
			continue
		}
		if tbl.get(fd) == f {
			return f, true
		}
		f.decRef()
	}
}

// dirOf returns the directory an "at" call starts from: the cwd for AT_FDCWD or an
// absolute path, else the directory dirfd refers to (EBADF, ENOTDIR).
func (t *Task) dirOf(dirfd int, path string) (*vfs.Inode, syscall.Errno) {
	if dirfd == atFdcwd || (len(path) > 0 && path[0] == '/') {
		return t.g.cwd.Load(), 0
	}
	f := t.g.files.get(dirfd)
	if f == nil {
		return nil, syscall.EBADF
	}
	if f.ino == nil || !f.ino.IsDir() {
		if path == "" {
			return nil, syscall.ENOENT
		}
		return nil, syscall.ENOTDIR
	}
	return f.ino, 0
}

// withFile calls fn with the description fd refers to (as fget: O_PATH ones are
// not) and returns its result, or EBADF for a closed fd. The reference fget took on
// a table several threads share is dropped when fn returns.
func (t *Task) withFile(fd int, fn func(f *File) Result) Result {
	f, ref := t.fget(fd)
	return useFile(f, ref, fn)
}

// withFileRaw is withFile for the calls that accept O_PATH descriptions (fgetRaw).
func (t *Task) withFileRaw(fd int, fn func(f *File) Result) Result {
	f, ref := t.fgetRaw(fd)
	return useFile(f, ref, fn)
}

func useFile(f *File, ref bool, fn func(f *File) Result) Result {
	if f == nil {
		return Fail(syscall.EBADF)
	}
	if ref {
		defer f.decRef()
	}
	return fn(f)
}

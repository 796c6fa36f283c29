package sim

import (
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/iosim/iosim/vfs"
)

// File is an open file description (struct file): what open(2) creates and dup,
// fork and SCM_RIGHTS share. It holds the offset, the access mode and status flags,
// and the errseq cursor of writeback errors; FD_CLOEXEC belongs to the fd, not here.
type File struct {
	k       *Kernel
	refs    atomic.Int32
	flags   atomic.Uint32 // f_flags as F_GETFL reports them, O_LARGEFILE included
	ino     *vfs.Inode    // nil for a special object
	special Special

	mu      sync.Mutex // guards off, dirents
	off     int64
	dirents []vfs.Dirent // getdents64 snapshot, taken at position 0
	// errseq is this description's cursor into the inode's writeback errors. Only
	// vfs reads and writes it, under its own lock, through the pointer.
	errseq uint64

	// flock and hasOFD are guarded by k.locks.mu.
	flock  int16 // LOCK_SH, LOCK_EX or 0: the flock(2) lock this description holds
	hasOFD bool  // some OFD record lock is owned by this description

	ra readahead // file_ra_state: the time model's read-ahead window

	noData bool // opened by a payload-free process (ThreadGroup.SetPayloadFree)
}

var filePool = sync.Pool{New: func() any { return new(File) }}

// newFile returns a description of ino (or of the special object s); the caller
// sets its errseq sample (see vfs.Kernel.OpenSampled).
func newFile(k *Kernel, ino *vfs.Inode, s Special, flags int) *File {
	return initFile(filePool.Get().(*File), k, ino, s, flags)
}

// newFileFor is newFile for a description that thread t is opening: it reuses
// the spare description of t's fd table, if there is one.
func newFileFor(t *Task, ino *vfs.Inode, flags int) *File {
	tbl := t.files
	var f *File
	if f = tbl.spare; f != nil && tbl.users.Load() == 1 {
		tbl.spare = nil
		f = initFile(f, t.k, ino, nil, flags)
	} else {
		f = newFile(t.k, ino, nil, flags)
	}
	f.noData = t.g.noData.Load()
	return f
}

func initFile(f *File, k *Kernel, ino *vfs.Inode, s Special, flags int) *File {
	f.k, f.ino, f.special = k, ino, s
	f.off, f.dirents, f.errseq, f.flock, f.hasOFD = 0, nil, 0, 0, false
	f.ra = readahead{}
	f.noData = false
	if flags&oPath != 0 {
		// build_open_flags keeps only O_PATH_FLAGS, and no O_LARGEFILE.
		f.flags.Store(uint32(flags & (oPath | syscall.O_DIRECTORY | syscall.O_NOFOLLOW)))
	} else {
		f.flags.Store(uint32(flags&^(syscall.O_CREAT|syscall.O_EXCL|syscall.O_NOCTTY|syscall.O_TRUNC|syscall.O_CLOEXEC)) | oLargefile)
	}
	f.refs.Store(1)
	return f
}

// Inode returns the inode the description refers to (nil for a special object).
func (f *File) Inode() *vfs.Inode { return f.ino }

// Special returns the special object the description refers to, or nil.
func (f *File) Special() Special { return f.special }

// Flags returns the access mode and status flags, as F_GETFL.
func (f *File) Flags() int { return int(f.flags.Load()) }

// Offset returns the file offset.
func (f *File) Offset() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.off
}

// readable reports FMODE_READ: access mode O_RDONLY or O_RDWR, not O_PATH.
func (f *File) readable() bool { return readableFlags(f.flags.Load()) }

// readableFlags is readable of a description whose flags are fl.
func readableFlags(fl uint32) bool {
	a := fl & syscall.O_ACCMODE
	return (a == syscall.O_RDONLY || a == syscall.O_RDWR) && fl&oPath == 0
}

// writable reports FMODE_WRITE: access mode O_WRONLY or O_RDWR, not O_PATH.
func (f *File) writable() bool {
	fl := f.flags.Load()
	a := fl & syscall.O_ACCMODE
	return (a == syscall.O_WRONLY || a == syscall.O_RDWR) && fl&oPath == 0
}

// lockPos locks the offset unless the caller holds the only reference (one fd in a
// table used by one thread, the caller's): then nobody else can reach the
// description and the lock is skipped, as Linux's fdget_pos skips f_pos_lock when
// file_count is 1. It returns whether it locked.
func (f *File) lockPos() bool {
	if f.refs.Load() == 1 {
		return false
	}
	f.mu.Lock()
	return true
}

func (f *File) unlockPos(locked bool) {
	if locked {
		f.mu.Unlock()
	}
}

func (f *File) incRef() { f.refs.Add(1) }

func (f *File) tryIncRef() bool {
	for {
		n := f.refs.Load()
		if n <= 0 {
			return false
		}
		if f.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// decRef drops a reference; the last one releases the description: its OFD and
// flock locks go, and the object returns to the pool.
func (f *File) decRef() {
	if f.refs.Add(-1) == 0 {
		f.release()
		filePool.Put(f)
	}
}

// release lets go of what a description holds once its last reference is gone.
func (f *File) release() {
	k := f.k
	if f.ino != nil && k.locks.active.Load() > 0 {
		k.locks.releaseFile(f)
	}
	if f.ino != nil && f.flags.Load()&oPath == 0 {
		f.ino.Kernel().Release() // ext4_release_file
	}
	if f.special != nil {
		if c, ok := f.special.(interface{ Close() }); ok {
			c.Close()
		}
	}
	f.ino, f.special, f.dirents, f.k = nil, nil, nil, nil
}

// closeFile drops the reference of a closed fd of process g: as close(2), POSIX
// locks g holds on the file go first, whichever fd they were taken through.
func (k *Kernel) closeFile(g *ThreadGroup, f *File) {
	if f.ino != nil && k.locks.active.Load() > 0 {
		k.locks.releasePosix(g, f.ino)
	}
	if f.refs.Add(-1) != 0 {
		return
	}
	f.release()
	// The next open of the table's one user takes it back (newFileFor): the
	// open-close cycle of a single thread skips the pool.
	if tbl := g.files; tbl.spare == nil && tbl.users.Load() == 1 {
		tbl.spare = f
		return
	}
	filePool.Put(f)
}

// fdTable is a process's descriptor table. Readers index an array of atomic
// pointers without locking; writers (open, close, dup) hold mu and replace the array
// only to grow it, so lookups never allocate.
type fdTable struct {
	mu    sync.Mutex
	arr   atomic.Pointer[fdArray]
	users atomic.Int32 // threads sharing the table
	// spare is a released description kept for the next open (see closeFile
	// and newFileFor). Only the table's one user touches it, while users is 1.
	spare *File
	low   atomic.Int64 // no fd below low is free (written with mu held)
}

type fdArray struct {
	files   []atomic.Pointer[File]
	cloexec []atomic.Bool
}

func newFDTable() *fdTable {
	t := &fdTable{}
	t.arr.Store(&fdArray{files: make([]atomic.Pointer[File], 64), cloexec: make([]atomic.Bool, 64)})
	t.users.Store(1)
	return t
}

func (t *fdTable) get(fd int) *File {
	a := t.arr.Load()
	if uint(fd) >= uint(len(a.files)) {
		return nil
	}
	return a.files[fd].Load()
}

// getIO is get for the calls that refuse O_PATH descriptions (fdget): one of
// those is nil, as a closed fd.
func (t *fdTable) getIO(fd int) *File {
	f := t.get(fd)
	if f != nil && f.flags.Load()&oPath != 0 {
		return nil
	}
	return f
}

func (t *fdTable) cloexec(fd int) bool {
	a := t.arr.Load()
	if uint(fd) >= uint(len(a.cloexec)) {
		return false
	}
	return a.cloexec[fd].Load()
}

func (t *fdTable) setCloexec(fd int, on bool) {
	a := t.arr.Load()
	if uint(fd) < uint(len(a.cloexec)) {
		a.cloexec[fd].Store(on)
	}
}

// grow makes the array hold fd. Called with mu held.
func (t *fdTable) grow(fd int) *fdArray {
	a := t.arr.Load()
	if fd < len(a.files) {
		return a
	}
	n := len(a.files) * 2
	for n <= fd {
		n *= 2
	}
	b := &fdArray{files: make([]atomic.Pointer[File], n), cloexec: make([]atomic.Bool, n)}
	for i := range a.files {
		b.files[i].Store(a.files[i].Load())
		b.cloexec[i].Store(a.cloexec[i].Load())
	}
	t.arr.Store(b)
	return b
}

// alloc installs f at the lowest free fd >= min and below limit.
//
// alloc and remove serialise the table's mutators, the threads that share it,
// with mu. A table with one user is mutated by its one thread only, which makes
// one call at a time, so they skip the mutex then (as fget skips references).
func (t *fdTable) alloc(f *File, min int, limit int64, cloexec bool) (int, syscall.Errno) {
	if t.users.Load() != 1 { // see alloc
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	fd := t.firstFree(min)
	if int64(fd) >= limit {
		return -1, syscall.EMFILE
	}
	t.place(fd, min, f, cloexec)
	return fd, 0
}

// firstFree returns the lowest free fd >= min (the array's length when every
// fd from there on is taken). Called with mu held or by the table's one user.
func (t *fdTable) firstFree(min int) int {
	a := t.arr.Load()
	fd := min
	if low := int(t.low.Load()); fd < low {
		fd = low
	}
	for fd < len(a.files) && a.files[fd].Load() != nil {
		fd++
	}
	return fd
}

// place installs f at fd, which firstFree(min) returned and which is still
// free: with mu held, or by the table's one user.
func (t *fdTable) place(fd, min int, f *File, cloexec bool) {
	a := t.arr.Load()
	if fd >= len(a.files) {
		a = t.grow(fd)
	}
	a.files[fd].Store(f)
	if cloexec || a.cloexec[fd].Load() { // stores cost more than loads
		a.cloexec[fd].Store(cloexec)
	}
	if int64(min) <= t.low.Load() {
		t.low.Store(int64(fd) + 1)
	}
}

// hasFree reports whether some fd below limit is free. It does not lock: a
// concurrent open may take the fd it saw, and alloc then decides.
func (t *fdTable) hasFree(limit int64) bool {
	return int64(t.firstFree(0)) < limit
}

// install puts f at fd and returns what fd held before.
func (t *fdTable) install(fd int, f *File, cloexec bool) *File {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.grow(fd)
	old := a.files[fd].Swap(f)
	a.cloexec[fd].Store(cloexec)
	return old
}

// remove clears fd and returns what it held.
func (t *fdTable) remove(fd int) *File {
	if t.users.Load() != 1 { // see alloc
		t.mu.Lock()
		defer t.mu.Unlock()
	}
	a := t.arr.Load()
	if uint(fd) >= uint(len(a.files)) {
		return nil
	}
	old := a.files[fd].Swap(nil)
	if a.cloexec[fd].Load() {
		a.cloexec[fd].Store(false)
	}
	if old != nil && int64(fd) < t.low.Load() {
		t.low.Store(int64(fd))
	}
	return old
}

// removeIf clears every fd for which pred holds and returns their descriptions in
// fd order.
func (t *fdTable) removeIf(pred func(fd int, cloexec bool) bool) []*File {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.arr.Load()
	var out []*File
	for fd := range a.files {
		f := a.files[fd].Load()
		if f != nil && pred(fd, a.cloexec[fd].Load()) {
			a.files[fd].Store(nil)
			a.cloexec[fd].Store(false)
			out = append(out, f)
			if int64(fd) < t.low.Load() {
				t.low.Store(int64(fd))
			}
		}
	}
	return out
}

// fork returns a copy whose fds share the descriptions.
func (t *fdTable) fork() *fdTable {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.arr.Load()
	n := newFDTable()
	b := n.grow(len(a.files) - 1)
	for i := range a.files {
		if f := a.files[i].Load(); f != nil {
			f.incRef()
			b.files[i].Store(f)
			b.cloexec[i].Store(a.cloexec[i].Load())
		}
	}
	n.low.Store(t.low.Load())
	return n
}

func (t *fdTable) fds() []int {
	a := t.arr.Load()
	var out []int
	for i := range a.files {
		if a.files[i].Load() != nil {
			out = append(out, i)
		}
	}
	return out
}

// Special is an object an fd can refer to that is not a file of the file system: a
// character device or a stand-in for a pipe or socket. Read and Write get the
// caller's buffer and return the count or an errno, as read(2)/write(2).
type Special interface {
	// Mode returns the st_mode fstat reports (S_IFCHR|0666 for /dev/null).
	Mode() uint32
	// Rdev returns the st_rdev fstat reports.
	Rdev() uint64
	// Seekable reports whether lseek and pread/pwrite work (character devices) or
	// fail with ESPIPE (pipes, sockets).
	Seekable() bool
	Read(p []byte) (int, syscall.Errno)
	Write(p []byte) (int, syscall.Errno)
}

// DevNull is /dev/null: reads return 0 (end of file), writes succeed in full.
type DevNull struct{}

func (DevNull) Mode() uint32                        { return vfs.S_IFCHR | 0o666 }
func (DevNull) Rdev() uint64                        { return 1<<8 | 3 }
func (DevNull) Seekable() bool                      { return true }
func (DevNull) Read([]byte) (int, syscall.Errno)    { return 0, 0 }
func (DevNull) Write(p []byte) (int, syscall.Errno) { return len(p), 0 }

// DevZero is /dev/zero: reads fill the buffer with zeros, writes succeed in full.
type DevZero struct{}

func (DevZero) Mode() uint32   { return vfs.S_IFCHR | 0o666 }
func (DevZero) Rdev() uint64   { return 1<<8 | 5 }
func (DevZero) Seekable() bool { return true }
func (DevZero) Read(p []byte) (int, syscall.Errno) {
	clear(p)
	return len(p), 0
}
func (DevZero) Write(p []byte) (int, syscall.Errno) { return len(p), 0 }

// Placeholder stands for an object the model does not simulate (a pipe, a socket,
// a terminal): it accepts reads and writes and answers what it is told. Tell queues
// the Result of the next read or write (for a read, Ret bytes of zeros are
// returned); with nothing queued a read returns 0 (end of file) and a write succeeds
// in full. Safe for concurrent use.
type Placeholder struct {
	// Kind is the file type fstat reports: vfs.S_IFIFO, vfs.S_IFSOCK or vfs.S_IFCHR.
	Kind uint32

	mu   sync.Mutex
	next []Result
}

// Tell queues the result of the next read or write.
func (p *Placeholder) Tell(r Result) {
	p.mu.Lock()
	p.next = append(p.next, r)
	p.mu.Unlock()
}

func (p *Placeholder) pop() (Result, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.next) == 0 {
		return Result{}, false
	}
	r := p.next[0]
	p.next = p.next[1:]
	return r, true
}

// Mode returns Kind with permission bits 0600 (S_IFIFO when Kind is 0).
func (p *Placeholder) Mode() uint32 {
	if p.Kind == 0 {
		return vfs.S_IFIFO | 0o600
	}
	return p.Kind | 0o600
}

// Rdev returns 0.
func (p *Placeholder) Rdev() uint64 { return 0 }

// Seekable reports whether Kind is a character device.
func (p *Placeholder) Seekable() bool { return p.Kind == vfs.S_IFCHR }

// Read returns the queued result, or 0.
func (p *Placeholder) Read(b []byte) (int, syscall.Errno) {
	r, ok := p.pop()
	if !ok {
		return 0, 0
	}
	if r.Errno != 0 {
		return 0, r.Errno
	}
	n := min(int(r.Ret), len(b))
	clear(b[:n])
	return n, 0
}

// Write returns the queued result, or len(b).
func (p *Placeholder) Write(b []byte) (int, syscall.Errno) {
	r, ok := p.pop()
	if !ok {
		return len(b), 0
	}
	if r.Errno != 0 {
		return 0, r.Errno
	}
	return min(int(r.Ret), len(b)), 0
}

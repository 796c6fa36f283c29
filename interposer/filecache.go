package interposer

import (
	"fmt"
	"path"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

func init() {
	register(&Info{
		Name:    "filecache",
		Summary: "serves reads of chosen files from memory with the kernel's exact results (offsets, EOF, errnos, fd numbers): the Oracle message-file cache of 2002–2003 (about 10x on 50,000 lookups) without its bugs",
		Params: []Param{
			{Name: "path", Repeat: true, Doc: "a file to cache; matched by inode (dev, ino), however the program names it"},
		},
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			paths := a.All("path")
			if len(paths) == 0 {
				return nil, fmt.Errorf("interposer filecache: parameter path= is required (one or more)")
			}
			return NewFileCache(next, paths...), nil
		},
	})
}

// FileCache serves open/openat, read, pread64, readv, lseek, fcntl, fstat (and
// newfstatat(fd, "", AT_EMPTY_PATH)), dup/dup2/dup3 and close of the chosen files from
// memory, with the results the kernel would have given: the same fd numbers (lowest
// free first), per-open-description offsets shared by dup'd fds, every whence, EOF,
// access modes and errnos. It is what cache_oraus.so (Oraus) meant to be.
//
// # Which files
//
// Paths are matched by inode identity (st_dev, st_ino), learned by stat'ing them
// through the next layer, so the program may name the file however it likes:
// relative to its cwd, with ./ or .., through a symlink, by a hard link. An open is
// served from memory when its flags are read-only and plain (O_RDONLY plus any of
// O_CLOEXEC, O_LARGEFILE, O_NOCTTY, O_NONBLOCK, O_NOFOLLOW), its path is absolute or
// relative to AT_FDCWD, and the same (path, flags) was already opened for real since
// the last namespace change: the first such open reaches the kernel (that is how the
// cache learns the path's inode, F_GETFL's answer and every error), later ones do
// not. Every other open passes through. A file with holes or unwritten extents is
// not cached: loading it would fill the page cache over them, which SEEK_DATA and
// SEEK_HOLE then report as data — the cache would change what the program sees. Its
// fds stay the kernel's (and those already served are delegated).
//
// # Fd numbers: the invariant
//
// Served fds ("virtual" fds) are numbers the program owns but the kernel's table
// may not hold. Per process the cache keeps what it knows of every fd number: free,
// real (open in the kernel and visible to the program), virtual (served here;
// "materialized" when the kernel also holds the number, as a dup of the anchor),
// hidden (held in the kernel for the cache — one anchor fd per cached file and
// process, O_CLOEXEC, placed past the program's reach at RLIMIT_NOFILE+16 or above
// by raising the soft limit around the dup3 — invisible to the program), or
// unknown (never seen; probed once with fcntl(F_GETFD) when needed). The invariant:
//
//	program's table = (kernel's table \ hidden) ∪ virtual, and an unmaterialized
//	virtual number is free in the kernel.
//
// To keep it, every call that creates or closes fds in the process must cross this
// layer: open/openat/creat, dup/dup2/dup3, fcntl(F_DUPFD*), close, close_range,
// fork/clone, execve, exit — the fd-creating calls package sim models today. When
// the kernel allocates a number that the program's table holds (a virtual fd) or
// skips one it does not (a hidden fd), the new fd is moved to the number the program
// expects with dup3 and the stray closed: two extra calls, only on a collision.
// Calls on a hidden number that the program thinks closed fail with EBADF here. A
// new fd-creating syscall in sim must be added to this layer. Task.InstallPath and
// InstallSpecial bypass every Handler: call them before the process's first call
// through the cache, or tell the cache with NotifyInstalled (FdInstalled).
//
// Any call on a virtual fd that is not served here (fsync, fadvise, mmap, flock,
// F_SETLK, sendfile, write...) is delegated: the fd is materialized (dup3 of the
// anchor onto its number), the kernel's offset set to the description's, the call
// passed through, and the offset read back.
//
// # Coherence
//
// Never stale: a served read always sees every change made through this layer.
// Writes, pwrite, writev, ftruncate, fallocate, copy_file_range and sendfile on an fd
// whose inode (learned by fstat once per fd) is a cached file drop its data; so do
// an open with O_TRUNC, truncate(2), io_submit, msync and mmap of a cached file (and,
// conservatively, of anything whose identity is unknown). Any call that may change
// the namespace or a file's attributes (rename, unlink, link, symlink, chmod,
// utimensat, chdir, mkdir...) or that is not known to be harmless invalidates every
// path resolution and cached stat (calls sim does not model are harmless: they have
// no effect). Reads that reach the kernel may move an atime: they invalidate cached
// stats only. Data is reloaded through the anchor, which keeps
// the inode even if it is renamed or unlinked — as an open fd does. Changes made by
// processes whose calls do not cross this layer are not seen.
//
// execve closes the anchors (they are O_CLOEXEC) while virtual fds without
// FD_CLOEXEC survive it: they are materialized before the exec and the surviving
// files are anchored again from them after it. fork copies the process's view, its
// virtual fds sharing their descriptions (offsets) with the parent's, as fork does.
//
// # Costs
//
// The first open of a (path, flags) after a namespace change costs the open itself
// plus fstat, F_GETFL and, for a file not yet anchored in the process, a probe of
// the anchor's slot, setrlimit+dup3+setrlimit for the anchor, an lseek(SEEK_HOLE)
// and a pread64 of the whole file; getrlimit once per process; a stat of each
// configured path after a namespace change. Seed 000's loop reaches the kernel 13
// times in all, whatever the number of iterations. A served call costs a mutex, a
// few loads and the memcpy; a sole thread's served calls (see Concurrency) skip
// the mutex.
//
// When the program's table is full (EMFILE) while virtual fds leave the kernel's
// with room, the cache answers EMFILE itself, before the kernel looks at the path
// for opens that may create or truncate, and after a failure for the others.
//
// # What it does not reproduce
//
// Served calls do not reach the kernel, so they cost no kernel time: the virtual
// clock, and with it every timestamp taken later, differs from a run without the
// cache (that is the point). Served reads do not update st_atime (as on a noatime
// mount). Faults that a vfs.Injector would inject into reads are not seen by served
// reads (put the fault layer above the cache to fault them). OFD and flock locks
// taken through delegated fds are held by the anchor's description, shared by every
// virtual description of the file.
//
// # Concurrency
//
// Safe for concurrent use: one mutex guards the cache's state. It is not held across
// passed-through calls that may block (locks, reads and writes of other files); it
// is held across the fd-creating and fd-closing calls of a process so that their
// numbering is atomic with the cache's bookkeeping.
//
// One path does without it: the served calls of the only thread of a process
// (sim.Task.SoleThread) whose call was the latest made under the lock — read,
// pread64, lseek (SEEK_SET, SEEK_CUR, SEEK_END), fcntl (F_GETFD, F_SETFD,
// F_GETFL) and close of a virtual fd whose description no other fd refers to
// (for the data calls, of a file whose data is loaded; for F_SETFD and close,
// of an fd without a twin in the kernel), and an open served at a free fd
// below which every slot is known. Everything such a call reads or changes is
// then the thread's alone (its process's fd slots, resolutions and anchors
// change only in its own calls, the description's offset only through that
// fd), except the file's bytes, an immutable snapshot
// that the lock's holders replace, the description's reference count, which they
// change atomically, and the generation, which they move atomically. It gives
// what the locked path gives: the same results, counters and virtual time. Its
// calls are counted by the thread (Stats sees them once they have returned), and
// ServedFd, which reads a description's offset, must be called from the
// thread's goroutine or while it is not in a call.
type FileCache struct {
	next  sim.Handler
	Paths []string
	// A served call costs the calling task CallNs of virtual time plus
	// CopyPsPerByte picoseconds per byte copied (defaults: DefaultServedCallNs,
	// DefaultCopyPsPerByte — a user-level call and a memcpy at 10 GB/s; under a
	// time model, sim.WithDevice, the copy runs at the CPU profile's speed). Set
	// them before use.
	CallNs, CopyPsPerByte int64

	mu sync.Mutex
	// gen is the namespace/attribute generation: resolutions and stats of older
	// gens are stale. It moves with fc.mu held; a sole thread's opens read it
	// without the lock.
	gen     atomic.Uint64
	files   map[fileID]*cfile
	targets map[fileID]bool
	tgtGen  uint64 // gen at which targets was computed (0: never)
	procs   map[*sim.ThreadGroup]*fcProc
	// last is the process of the latest call made with fc.mu held: the common
	// case skips a map look-up, and the served calls of a sole thread (sole)
	// find their process without the lock. Stored with fc.mu held.
	last   atomic.Pointer[fcProc]
	loaded int // files with data loaded

	served  int64 // guarded by mu
	maxSize int64 // s_maxbytes, learned from the first task seen

	passed, extraN atomic.Int64
}

// done counts a served call and charges the calling thread its virtual time.
// Called with fc.mu held.
func (fc *FileCache) done(t *sim.Task, n int64) {
	fc.served++
	fc.charge(t, n)
}

// charge charges t the virtual time of a served call (Task.Spend): CallNs plus
// the copy of n bytes (at CopyPsPerByte, or at the CPU profile's copy speed under
// a time model).
func (fc *FileCache) charge(t *sim.Task, n int64) {
	d := fc.CallNs + n*fc.CopyPsPerByte/1000
	if k := t.Kernel(); k.Device() != nil {
		d = fc.CallNs + k.UserCopyCost(int(n)) // the copy at the CPU profile's speed
	}
	t.Spend(d)
}

// FileCacheStats counts what the cache did with the calls it saw.
type FileCacheStats struct {
	Served int64 // answered from memory
	Passed int64 // passed to the next layer on behalf of the program
	Extra  int64 // calls the cache made itself (loads, probes, anchors, moves)
}

// Stats returns the counters. The calls a sole thread served without the lock
// (see Concurrency) are counted by that thread, in a plain field (no atomic
// add on the served call): as Task.Now, call Stats from that thread's
// goroutine or while no sole thread is in a call through the cache (after the
// goroutines that make them are done).
func (fc *FileCache) Stats() FileCacheStats {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	served := fc.served
	for _, p := range fc.procs {
		served += p.served
	}
	return FileCacheStats{Served: served, Passed: fc.passed.Load(), Extra: fc.extraN.Load()}
}

type fileID struct{ dev, ino uint64 }

// cfile is a cached file: its bytes and stat, shared by every process.
type cfile struct {
	// data holds the file's bytes while they are current (nil: not loaded or
	// dropped). It is replaced, never changed in place, with fc.mu held; a sole
	// thread's served calls read it without the lock.
	data    atomic.Pointer[[]byte]
	holey   bool   // has holes or unwritten extents: not loaded (see load)
	statGen uint64 // st is current while statGen == FileCache.gen (and data is loaded)
	id      fileID
	st      unix.Stat_t
}

// ofd is an open file description served from memory.
type ofd struct {
	f     *cfile
	off   int64
	flags int // as F_GETFL reports them
	// refs counts the fds (in every process) that refer to it. It changes with
	// fc.mu held, atomically once the description is reachable, since a sole
	// thread reads it without the lock (see sole): at 1 the description is that
	// thread's alone.
	refs int32
}

// newOfd returns a description with one reference. Called with fc.mu held, or
// by the process's sole thread (see FileCache.sole).
func (p *fcProc) newOfd(f *cfile, flags int) *ofd {
	if n := len(p.freeOfd); n > 0 {
		o := p.freeOfd[n-1]
		p.freeOfd = p.freeOfd[:n-1]
		*o = ofd{f: f, flags: flags, refs: 1}
		return o
	}
	return &ofd{f: f, flags: flags, refs: 1}
}

// ref adds a reference to o. Called with fc.mu held.
func ref(o *ofd) { atomic.AddInt32(&o.refs, 1) }

// drop releases what slot s of p holds (a virtual fd's reference) and frees it.
// Called with fc.mu held, or by the process's sole thread (see FileCache.sole).
func (p *fcProc) drop(s *fdSlot) {
	if o := s.v; s.st == sVirt {
		// The last reference: no other fd, so no other thread, can reach o.
		if atomic.LoadInt32(&o.refs) == 1 {
			if len(p.freeOfd) < 16 {
				o.f, o.refs = nil, 0
				p.freeOfd = append(p.freeOfd, o)
			}
		} else {
			atomic.AddInt32(&o.refs, -1)
		}
	}
	*s = fdSlot{st: sFree}
}

type slotState uint8

const (
	sUnknown slotState = iota
	sFree
	sReal
	sVirt
	sHidden
)

type fdSlot struct {
	st      slotState
	v       *ofd // sVirt
	cloexec bool // sVirt
	mat     bool // sVirt: the kernel holds the number too
	idOK    bool // sReal: id learned by fstat
	id      fileID
}

type resKey struct {
	path  string
	flags int
}

type resEnt struct {
	gen   uint64
	f     *cfile // nil: resolves to a file that is not cached
	getfl int
}

// fcProc is the cache's view of one process's fd table.
type fcProc struct {
	g       *sim.ThreadGroup
	slots   []fdSlot
	served  int64  // calls served by sole (see Stats); written by the process's sole thread only
	freeOfd []*ofd // released descriptions, reused
	res     map[resKey]resEnt
	anchors map[*cfile]int
	nofile  int    // RLIMIT_NOFILE soft limit
	hardMax uint64 // and hard limit
}

var _ sim.Handler = (*FileCache)(nil)

// Default virtual costs of a served call (see FileCache.CallNs).
const (
	DefaultServedCallNs  = 20
	DefaultCopyPsPerByte = 100
)

// NewFileCache returns a cache of paths over next.
func NewFileCache(next sim.Handler, paths ...string) *FileCache {
	fc := &FileCache{
		next:          next,
		Paths:         paths,
		CallNs:        DefaultServedCallNs,
		CopyPsPerByte: DefaultCopyPsPerByte,
		files:         map[fileID]*cfile{},
		procs:         map[*sim.ThreadGroup]*fcProc{},
	}
	fc.gen.Store(1)
	return fc
}

// Unwrap returns the next layer.
func (fc *FileCache) Unwrap() sim.Handler { return fc.next }

// extra makes a call of the cache's own through the next layer.
func (fc *FileCache) extra(c *sim.Call) sim.Result {
	fc.extraN.Add(1)
	return fc.next.Syscall(c)
}

// own is extra for a Call built by the cache (sim.Send lends it).
func (fc *FileCache) own(c sim.Call) sim.Result {
	fc.extraN.Add(1)
	return sim.Send(fc.next, c)
}

func (fc *FileCache) pass(c *sim.Call) sim.Result {
	fc.passed.Add(1)
	return fc.next.Syscall(c)
}

// proc returns the state of c's process. Called with fc.mu held.
func (fc *FileCache) proc(t *sim.Task) *fcProc {
	if p := fc.last.Load(); p != nil && p.g == t.Group() { // a task never changes process
		return p
	}
	return fc.procSlow(t)
}

func (fc *FileCache) procSlow(t *sim.Task) *fcProc {
	g := t.Group()
	p := fc.procs[g]
	if p == nil {
		p = &fcProc{g: g, res: map[resKey]resEnt{}, anchors: map[*cfile]int{}}
		var rl unix.Rlimit
		r := fc.own(sim.Call{Nr: sim.SYS_GETRLIMIT, Task: t, Args: [6]int64{unix.RLIMIT_NOFILE}, Obj: &rl})
		p.nofile, p.hardMax = sim.DefaultNofile, sim.DefaultNofile
		if r.Errno == 0 && rl.Cur > 0 {
			p.nofile, p.hardMax = int(rl.Cur), rl.Max
		}
		fc.procs[g] = p
	}
	fc.last.Store(p)
	return p
}

func (p *fcProc) slot(fd int) *fdSlot {
	if fd < 0 {
		return &fdSlot{st: sFree}
	}
	for fd >= len(p.slots) {
		p.slots = append(p.slots, make([]fdSlot, len(p.slots)+16)...)
	}
	return &p.slots[fd]
}

// peek returns the slot of fd without growing the table (nil when never seen).
func (p *fcProc) peek(fd int) *fdSlot {
	if fd < 0 || fd >= len(p.slots) {
		return nil
	}
	return &p.slots[fd]
}

// virt returns the description of a virtual fd, or nil.
func (p *fcProc) virt(fd int) *fdSlot {
	if s := p.peek(fd); s != nil && s.st == sVirt {
		return s
	}
	return nil
}

// known resolves an unknown slot by asking the kernel. Called with fc.mu held.
func (fc *FileCache) known(t *sim.Task, p *fcProc, fd int) *fdSlot {
	s := p.slot(fd)
	if s.st == sUnknown {
		r := fc.own(sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{int64(fd), unix.F_GETFD}})
		if r.Errno == unix.EBADF {
			s.st = sFree
		} else {
			*s = fdSlot{st: sReal}
		}
	}
	return s
}

// lowestFree returns the lowest fd >= min free in the program's table (it may be
// hidden: the caller relocates the anchor). Called with fc.mu held.
func (fc *FileCache) lowestFree(t *sim.Task, p *fcProc, min int) int {
	for n := min; ; n++ {
		switch fc.known(t, p, n).st {
		case sFree, sHidden:
			return n
		}
	}
}

// freeInBoth returns the lowest fd >= min free in both tables.
func (fc *FileCache) freeInBoth(t *sim.Task, p *fcProc, min int) int {
	for n := min; ; n++ {
		if fc.known(t, p, n).st == sFree {
			return n
		}
	}
}

// claim makes fd usable by the program: a hidden anchor there (the program raised
// its RLIMIT_NOFILE past it) moves away.
func (fc *FileCache) claim(t *sim.Task, p *fcProc, fd int) {
	s := p.slot(fd)
	if s.st != sHidden {
		return
	}
	n, ok := fc.hiddenDup(t, p, fd, fd+1)
	fc.own(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{int64(fd)}})
	for f, a := range p.anchors {
		if a == fd {
			if ok {
				p.anchors[f] = n
			} else {
				delete(p.anchors, f) // no room: the file is served until it must reload
			}
		}
	}
	*p.slot(fd) = fdSlot{st: sFree}
}

// allocated records that the kernel gave fd (>= min, lowest free in its table) to
// the program, and moves it to the number the program expects if they differ.
func (fc *FileCache) allocated(t *sim.Task, p *fcProc, min, fd int) (int, unix.Errno) {
	for n := min; n < fd; n++ {
		if s := p.slot(n); s.st == sUnknown || s.st == sFree {
			*s = fdSlot{st: sReal}
		}
	}
	s := p.slot(fd)
	if s.st != sVirt && s.st != sHidden {
		// The expected number is fd unless a hidden fd below it is free to the program.
		want := fd
		for n := min; n < fd; n++ {
			if p.slot(n).st == sHidden {
				want = n
				break
			}
		}
		if want == fd {
			*s = fdSlot{st: sReal}
			return fd, 0
		}
	}
	// Collision: the kernel's fd is a number the program sees as virtual.
	want := fc.lowestFree(t, p, min)
	if want == fd {
		*s = fdSlot{st: sReal}
		return fd, 0
	}
	if want >= p.nofile { // the program's table is full
		fc.own(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{int64(fd)}})
		return -1, unix.EMFILE
	}
	fc.claim(t, p, want)
	r := fc.own(sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{int64(fd), unix.F_GETFD}})
	var fl int64
	if r.Errno == 0 && r.Ret&unix.FD_CLOEXEC != 0 {
		fl = unix.O_CLOEXEC
	}
	fc.own(sim.Call{Nr: sim.SYS_DUP3, Task: t, Args: [6]int64{int64(fd), int64(want), fl}})
	fc.own(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{int64(fd)}})
	*p.slot(want) = fdSlot{st: sReal}
	return want, 0
}

// anchor returns the hidden fd that keeps f open in p, dup'ing src if needed.
func (fc *FileCache) anchor(t *sim.Task, p *fcProc, f *cfile, src int) (int, bool) {
	if a, ok := p.anchors[f]; ok {
		return a, true
	}
	if src < 0 {
		return -1, false
	}
	n, ok := fc.hiddenDup(t, p, src, 0)
	if !ok {
		return -1, false
	}
	p.anchors[f] = n
	return n, true
}

// hiddenDup dups src, O_CLOEXEC, onto a number free in both tables at or above
// max(min, RLIMIT_NOFILE+16), so that the program, which cannot reach past its limit,
// never meets it. dup3 refuses a newfd at or past the soft limit: the limit is
// raised around the dup3 and put back (two setrlimit calls). Called with fc.mu held.
func (fc *FileCache) hiddenDup(t *sim.Task, p *fcProc, src, min int) (int, bool) {
	n := fc.freeInBoth(t, p, max(min, p.nofile+16))
	raise := n >= p.nofile
	if raise {
		if uint64(n) >= p.hardMax {
			return -1, false
		}
		fc.own(sim.Call{Nr: sim.SYS_SETRLIMIT, Task: t, Args: [6]int64{unix.RLIMIT_NOFILE},
			Obj: &unix.Rlimit{Cur: uint64(n) + 1, Max: p.hardMax}})
	}
	r := fc.own(sim.Call{Nr: sim.SYS_DUP3, Task: t, Args: [6]int64{int64(src), int64(n), unix.O_CLOEXEC}})
	if raise {
		fc.own(sim.Call{Nr: sim.SYS_SETRLIMIT, Task: t, Args: [6]int64{unix.RLIMIT_NOFILE},
			Obj: &unix.Rlimit{Cur: uint64(p.nofile), Max: p.hardMax}})
	}
	if r.Errno != 0 {
		return -1, false
	}
	*p.slot(n) = fdSlot{st: sHidden}
	return n, true
}

// load makes f's data and stat current, through p's anchor. Called with fc.mu held.
func (fc *FileCache) load(t *sim.Task, p *fcProc, f *cfile) bool {
	if f.data.Load() != nil && f.statGen == fc.gen.Load() {
		return true
	}
	a, ok := fc.ensureAnchor(t, p, f)
	if !ok {
		return false
	}
	if f.statGen != fc.gen.Load() {
		st, r := callFstat(fc.next, t, a)
		fc.extraN.Add(1)
		if r.Errno != 0 {
			return false
		}
		f.st, f.statGen = st, fc.gen.Load()
	}
	st := f.st
	if f.holey {
		return false
	}
	if d := f.data.Load(); d == nil || int64(len(*d)) != st.Size {
		// Reading a hole or an unwritten extent fills the page cache, which SEEK_DATA
		// and SEEK_HOLE then report as data: loading such a file whole would change
		// what the program sees. Files with holes are left to the kernel.
		if st.Size > 0 {
			h := fc.own(sim.Call{Nr: sim.SYS_LSEEK, Task: t, Args: [6]int64{int64(a), 0, unix.SEEK_HOLE}})
			if h.Errno != 0 || h.Ret < st.Size {
				f.holey = true
				return false
			}
		}
		b := readWhole(countingHandler{fc}, t, a, st.Size)
		if d == nil {
			fc.loaded++
		}
		f.data.Store(&b)
	}
	return true
}

type countingHandler struct{ fc *FileCache }

func (h countingHandler) Syscall(c *sim.Call) sim.Result { return h.fc.extra(c) }

// invalidate drops f's data.
func (fc *FileCache) invalidate(f *cfile) {
	if f.data.Load() != nil {
		fc.loaded--
		f.data.Store(nil)
	}
	f.statGen, f.holey = 0, false
}

func (fc *FileCache) invalidateAll() {
	for _, f := range fc.files {
		fc.invalidate(f)
	}
}

// bump invalidates every path resolution and cached stat.
func (fc *FileCache) bump() { fc.gen.Add(1) }

// isTarget reports whether id is one of the configured files, re-stat'ing them
// after a namespace change.
func (fc *FileCache) isTarget(t *sim.Task, id fileID) bool {
	if fc.tgtGen != fc.gen.Load() {
		fc.targets = map[fileID]bool{}
		for _, p := range fc.Paths {
			st, r := callStat(fc.next, t, p)
			fc.extraN.Add(1)
			if r.Errno == 0 && st.Mode&unix.S_IFMT == unix.S_IFREG {
				fc.targets[fileID{st.Dev, st.Ino}] = true
			}
		}
		fc.tgtGen = fc.gen.Load()
	}
	return fc.targets[id]
}

// servableOpen: flags that leave nothing for the kernel to do but resolve the path.
const servableFlags = unix.O_CLOEXEC | oLargefile | unix.O_NOCTTY | unix.O_NONBLOCK | unix.O_NOFOLLOW

// Syscall implements sim.Handler.
func (fc *FileCache) Syscall(c *sim.Call) sim.Result {
	switch c.Nr {
	case sim.SYS_READ, sim.SYS_LSEEK, sim.SYS_PREAD64, sim.SYS_FCNTL, sim.SYS_CLOSE:
		if r, ok := fc.sole(c); ok {
			return r
		}
	case sim.SYS_OPENAT, sim.SYS_OPEN:
		if r, ok := fc.soleOpen(c); ok {
			return r
		}
	}
	switch c.Nr {
	case sim.SYS_READ, sim.SYS_PREAD64, sim.SYS_READV, sim.SYS_LSEEK, sim.SYS_FSTAT:
		fc.mu.Lock()
		p := fc.proc(c.Task)
		if s := p.virt(int(int32(c.Args[0]))); s != nil {
			if r, ok := fc.serve(c, p, s); ok {
				var n int64 // bytes copied
				if c.Nr != sim.SYS_LSEEK && c.Nr != sim.SYS_FSTAT && r.Ret > 0 {
					n = r.Ret
				}
				fc.done(c.Task, n)
				fc.mu.Unlock()
				return r
			}
		}
		fc.mu.Unlock()
		return fc.passFd(c)
	case sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT, sim.SYS_OPENAT2:
		return fc.open(c)
	case sim.SYS_NEWFSTATAT:
		if c.Path == "" && c.Args[3]&unix.AT_EMPTY_PATH != 0 {
			fc.mu.Lock()
			p := fc.proc(c.Task)
			if s := p.virt(int(int32(c.Args[0]))); s != nil {
				cc := *c
				cc.Nr, cc.Args = sim.SYS_FSTAT, [6]int64{c.Args[0]}
				if r, ok := fc.serve(&cc, p, s); ok {
					fc.done(c.Task, 0)
					fc.mu.Unlock()
					return r
				}
			}
			fc.mu.Unlock()
		}
	default:
		if int(c.Nr) < len(fdHandlerOf) && fdHandlerOf[c.Nr] != nil {
			return fc.fdtable(c, fdHandlerOf[c.Nr])
		}
	}
	return fc.passFd(c)
}

// soleProc returns t's process when t is its only thread (sim.Task.SoleThread)
// and the process is the one the cache saw last: then the process's fd slots,
// resolutions, anchors and free descriptions change in t's calls only, which
// may use them without fc.mu. Otherwise nil.
func (fc *FileCache) soleProc(t *sim.Task) *fcProc {
	if p := fc.last.Load(); p != nil && p.g == t.Group() && t.SoleThread() {
		return p
	}
	return nil
}

// soled counts a call served without fc.mu and charges its time.
func (fc *FileCache) soled(t *sim.Task, p *fcProc, n int64) {
	p.served++
	fc.charge(t, n)
}

// sole serves read, pread64, lseek (SEEK_SET, SEEK_CUR, SEEK_END), fcntl
// F_GETFD, F_SETFD and F_GETFL, and close of a virtual fd without fc.mu, when
// nothing but the calling thread can reach what they read and change: its
// process's state (soleProc); the description, referred to by that fd alone
// (refs 1), so that its offset and flags are the thread's too; and the file's
// data, loaded (an immutable snapshot, dropped by replacing the pointer). ok is
// false when the call must take the locked path, which answers it the same way.
func (fc *FileCache) sole(c *sim.Call) (r sim.Result, ok bool) {
	t := c.Task
	p := fc.soleProc(t)
	if p == nil {
		return r, false
	}
	s := p.virt(int(int32(c.Args[0])))
	if s == nil {
		return r, false
	}
	o := s.v
	var n int64 // bytes copied
	switch c.Nr {
	case sim.SYS_CLOSE:
		if s.mat || atomic.LoadInt32(&o.refs) != 1 { // the kernel's twin must go too
			return r, false
		}
		p.drop(s)
	case sim.SYS_FCNTL:
		switch c.Args[1] {
		case unix.F_GETFD:
			if s.cloexec {
				r.Ret = unix.FD_CLOEXEC
			}
		case unix.F_SETFD:
			if s.mat { // the kernel's twin must follow
				return r, false
			}
			s.cloexec = c.Args[2]&unix.FD_CLOEXEC != 0
		case unix.F_GETFL:
			if atomic.LoadInt32(&o.refs) != 1 {
				return r, false
			}
			r.Ret = int64(o.flags)
		default:
			return r, false
		}
	default:
		d := o.f.data.Load()
		if d == nil || atomic.LoadInt32(&o.refs) != 1 {
			return r, false
		}
		switch c.Nr {
		case sim.SYS_READ:
			n = int64(readAt(c.Buf, *d, o.off))
			o.off += n
			r.Ret = n
		case sim.SYS_PREAD64:
			if c.Args[3] < 0 {
				r = sim.Fail(unix.EINVAL)
				break
			}
			n = int64(readAt(c.Buf, *d, c.Args[3]))
			r.Ret = n
		default: // lseek
			off, pos := c.Args[1], int64(0)
			switch c.Args[2] {
			case unix.SEEK_SET:
				pos = off
			case unix.SEEK_CUR:
				pos = o.off + off
			case unix.SEEK_END:
				pos = int64(len(*d)) + off
			default:
				return r, false
			}
			if pos < 0 || pos > t.Kernel().FS().MaxFileSize() { // EINVAL, or an overflow: the locked path says which
				return r, false
			}
			o.off, r.Ret = pos, pos
		}
	}
	fc.soled(t, p, n)
	return r, true
}

// soleOpen serves, without fc.mu, an open that openLocked would serve from
// memory: a servable (path, flags) resolved in this generation to a cached file
// anchored in the process, given the lowest free fd, when the slots below it are
// known (no probe, no anchor to move) and it is below RLIMIT_NOFILE. The state it
// reads and changes is the process's (soleProc), but for the generation, read
// atomically. ok is false when the call must take the locked path.
func (fc *FileCache) soleOpen(c *sim.Call) (sim.Result, bool) {
	t := c.Task
	p := fc.soleProc(t)
	if p == nil {
		return sim.Result{}, false
	}
	flags := openFlags(c)
	if !servableOpen(c, flags) {
		return sim.Result{}, false
	}
	e, ok := p.res[resKey{c.Path, flags}]
	if !ok || e.f == nil || e.gen != fc.gen.Load() {
		return sim.Result{}, false
	}
	if _, ok := p.anchors[e.f]; !ok {
		return sim.Result{}, false
	}
	fd := -1
	for i := range p.slots { // lowestFree, without probing
		if st := p.slots[i].st; st == sFree {
			fd = i
			break
		} else if st != sReal && st != sVirt {
			return sim.Result{}, false
		}
	}
	if fd < 0 || fd >= p.nofile {
		return sim.Result{}, false
	}
	p.slots[fd] = fdSlot{st: sVirt, v: p.newOfd(e.f, e.getfl), cloexec: flags&unix.O_CLOEXEC != 0}
	fc.soled(t, p, 0)
	return sim.Result{Ret: int64(fd)}, true
}

// servableOpen: an open whose flags leave nothing for the kernel to do but
// resolve the path (servableFlags), read-only, of a path not relative to a dirfd.
func servableOpen(c *sim.Call, flags int) bool {
	return c.Nr != sim.SYS_CREAT && c.Nr != sim.SYS_OPENAT2 && flags&unix.O_ACCMODE == unix.O_RDONLY &&
		flags&^servableFlags == 0 && (openDirfd(c) == unix.AT_FDCWD || path.IsAbs(c.Path))
}

// serve answers a data call on a virtual fd from memory. ok is false when the call
// must be delegated to the kernel. Called with fc.mu held.
func (fc *FileCache) serve(c *sim.Call, p *fcProc, s *fdSlot) (sim.Result, bool) {
	o := s.v
	f := o.f
	// Reads and seeks need the bytes only; fstat needs a current stat too.
	if f.data.Load() == nil && !fc.load(c.Task, p, f) {
		return sim.Result{}, false
	}
	data := *f.data.Load()
	switch c.Nr {
	case sim.SYS_READ:
		n := readAt(c.Buf, data, o.off)
		o.off += int64(n)
		return sim.Result{Ret: int64(n)}, true
	case sim.SYS_PREAD64:
		if c.Args[3] < 0 {
			return sim.Fail(unix.EINVAL), true
		}
		return sim.Result{Ret: int64(readAt(c.Buf, data, c.Args[3]))}, true
	case sim.SYS_READV:
		if len(c.Iov) > 1024 {
			return sim.Fail(unix.EINVAL), true
		}
		var tot int64
		for _, b := range c.Iov {
			n := readAt(b, data, o.off)
			o.off += int64(n)
			tot += int64(n)
			if n < len(b) {
				break
			}
		}
		return sim.Result{Ret: tot}, true
	case sim.SYS_LSEEK:
		off, whence := c.Args[1], int(c.Args[2])
		var pos int64
		switch whence {
		case unix.SEEK_SET:
			pos = off
		case unix.SEEK_CUR:
			if off == 0 {
				return sim.Result{Ret: o.off}, true
			}
			pos = o.off + off
		case unix.SEEK_END:
			pos = int64(len(data)) + off
		case unix.SEEK_DATA, unix.SEEK_HOLE:
			// Holes are the kernel's to know: ask through the anchor.
			a, ok := fc.ensureAnchor(c.Task, p, f)
			if !ok {
				return sim.Result{}, false
			}
			r := fc.own(sim.Call{Nr: sim.SYS_LSEEK, Task: c.Task, Args: [6]int64{int64(a), off, int64(whence)}})
			if r.Errno == 0 {
				o.off = r.Ret
			}
			return r, true
		default:
			return sim.Fail(unix.EINVAL), true
		}
		if fc.maxSize == 0 {
			fc.maxSize = c.Task.Kernel().FS().MaxFileSize()
		}
		if pos < 0 || pos > fc.maxSize {
			return sim.Fail(unix.EINVAL), true
		}
		o.off = pos
		return sim.Result{Ret: pos}, true
	case sim.SYS_FSTAT:
		st, _ := c.Obj.(*unix.Stat_t)
		if st == nil || f.statGen != fc.gen.Load() && !fc.load(c.Task, p, f) {
			return sim.Result{}, false
		}
		*st = f.st
		return sim.Result{}, true
	}
	return sim.Result{}, false
}

// readAt copies data[off:] into dst and returns how many bytes it copied.
func readAt(dst, data []byte, off int64) int {
	if off >= int64(len(data)) || off < 0 {
		return 0
	}
	return copy(dst, data[off:])
}

// open serves or passes open/openat/creat.
func (fc *FileCache) open(c *sim.Call) sim.Result {
	fc.mu.Lock()
	r := fc.openLocked(c)
	fc.mu.Unlock()
	return r
}

func (fc *FileCache) openLocked(cp *sim.Call) sim.Result {
	c := cp
	flags := openFlags(c)
	servable := servableOpen(c, flags)
	p := fc.proc(c.Task)
	t := c.Task
	if !servable {
		if (c.Nr == sim.SYS_OPENAT || c.Nr == sim.SYS_OPENAT2) && !path.IsAbs(c.Path) {
			if s := p.virt(openDirfd(c)); s != nil {
				fc.materialize(t, p, openDirfd(c), s)
			} else if s := p.peek(openDirfd(c)); s != nil && s.st == sHidden {
				return sim.Fail(unix.EBADF)
			}
		}
		r := fc.passOpen(c, p, flags)
		if r.Errno != 0 {
			return r
		}
		fd, e := fc.allocated(t, p, 0, int(r.Ret))
		if e != 0 {
			return sim.Fail(e)
		}
		if flags&(unix.O_CREAT|unix.O_TRUNC) != 0 {
			fc.bump()
			if flags&unix.O_TRUNC != 0 {
				fc.invalidateAll()
			}
		}
		return sim.Result{Ret: int64(fd)}
	}
	key := resKey{c.Path, flags}
	if e, ok := p.res[key]; ok && e.gen == fc.gen.Load() {
		if e.f == nil { // known not to be a cached file
			r := fc.passOpen(c, p, flags)
			if r.Errno == 0 {
				fd, e := fc.allocated(t, p, 0, int(r.Ret))
				if e != 0 {
					return sim.Fail(e)
				}
				r.Ret = int64(fd)
			}
			return r
		}
		if _, ok := p.anchors[e.f]; ok {
			// EMFILE (no free fd below the limit) is left to the kernel.
			if fd := fc.lowestFree(t, p, 0); fd < p.nofile {
				fc.claim(t, p, fd)
				*p.slot(fd) = fdSlot{st: sVirt, v: p.newOfd(e.f, e.getfl), cloexec: flags&unix.O_CLOEXEC != 0}
				fc.done(t, 0)
				return sim.Result{Ret: int64(fd)}
			}
		}
	}
	r := fc.passOpen(c, p, flags)
	if r.Errno != 0 {
		return r
	}
	fd, e := fc.allocated(t, p, 0, int(r.Ret))
	if e != 0 {
		return sim.Fail(e)
	}
	st, sr := callFstat(fc.next, t, fd)
	fc.extraN.Add(1)
	id := fileID{st.Dev, st.Ino}
	if sr.Errno != 0 || st.Mode&unix.S_IFMT != unix.S_IFREG || !fc.isTarget(t, id) {
		p.res[key] = resEnt{gen: fc.gen.Load()}
		*p.slot(fd) = fdSlot{st: sReal, idOK: sr.Errno == 0, id: id}
		return sim.Result{Ret: int64(fd)}
	}
	f := fc.files[id]
	if f == nil {
		f = &cfile{id: id}
		fc.files[id] = f
	}
	_, anchored := p.anchors[f]
	if _, ok := fc.anchor(t, p, f, fd); !ok {
		*p.slot(fd) = fdSlot{st: sReal, idOK: true, id: id}
		return sim.Result{Ret: int64(fd)}
	}
	f.st, f.statGen = st, fc.gen.Load() // fresh: load need not fstat again
	gr := fc.own(sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{int64(fd), unix.F_GETFL}})
	p.res[key] = resEnt{gen: fc.gen.Load(), f: f, getfl: int(gr.Ret)}
	if !fc.load(t, p, f) {
		// A file with holes is the kernel's: this fd stays real, and the path is
		// not served until the next namespace change. The anchor was dup'd from
		// this fd and shares its description (its offset): it must go.
		if a, ok := p.anchors[f]; ok && !anchored {
			// load's SEEK_HOLE probe moved the shared offset: back to 0, as opened.
			fc.own(sim.Call{Nr: sim.SYS_LSEEK, Task: t, Args: [6]int64{int64(fd), 0, unix.SEEK_SET}})
			fc.own(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{int64(a)}})
			*p.slot(a) = fdSlot{st: sFree}
			delete(p.anchors, f)
		}
		p.res[key] = resEnt{gen: fc.gen.Load()}
		*p.slot(fd) = fdSlot{st: sReal, idOK: true, id: id}
		return sim.Result{Ret: int64(fd)}
	}
	*p.slot(fd) = fdSlot{st: sVirt, v: p.newOfd(f, int(gr.Ret)), cloexec: flags&unix.O_CLOEXEC != 0, mat: true}
	return sim.Result{Ret: int64(fd)}
}

// passOpen passes an open to the kernel with Linux's order of checks kept: EMFILE
// (the program's table is full, though virtual fds may leave the kernel's room)
// comes before anything the path could fail with. An open that may create or
// truncate is checked before it reaches the kernel; others after a failure.
func (fc *FileCache) passOpen(c *sim.Call, p *fcProc, flags int) sim.Result {
	full := func() bool { return fc.lowestFree(c.Task, p, 0) >= p.nofile }
	if flags&(unix.O_CREAT|unix.O_TRUNC) != 0 && full() {
		return sim.Fail(unix.EMFILE)
	}
	r := fc.pass(c)
	if r.Errno != 0 && r.Errno != unix.EMFILE && full() {
		return sim.Fail(unix.EMFILE)
	}
	return r
}

// materialize makes the kernel hold virtual fd v (a dup of the anchor) with the
// description's offset and flags, so that a call can be delegated to the kernel.
func (fc *FileCache) materialize(t *sim.Task, p *fcProc, fd int, s *fdSlot) bool {
	a, ok := fc.ensureAnchor(t, p, s.v.f)
	if !ok {
		return false
	}
	if !s.mat {
		var fl int64
		if s.cloexec {
			fl = unix.O_CLOEXEC
		}
		fc.own(sim.Call{Nr: sim.SYS_DUP3, Task: t, Args: [6]int64{int64(a), int64(fd), fl}})
		s.mat = true
	}
	fc.own(sim.Call{Nr: sim.SYS_LSEEK, Task: t, Args: [6]int64{int64(fd), s.v.off, unix.SEEK_SET}})
	fc.own(sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{int64(fd), unix.F_SETFL, int64(s.v.flags)}})
	return true
}

// ensureAnchor returns f's anchor in p, making one from a materialized virtual fd
// of f if the anchor was lost (an fd installed over it outside the stack).
func (fc *FileCache) ensureAnchor(t *sim.Task, p *fcProc, f *cfile) (int, bool) {
	if a, ok := p.anchors[f]; ok {
		return a, true
	}
	for i := range p.slots {
		if s := &p.slots[i]; s.st == sVirt && s.mat && s.v.f == f {
			return fc.anchor(t, p, f, i)
		}
	}
	return -1, false
}

// setflMask is SETFL_MASK: the status flags F_SETFL can change.
const setflMask = unix.O_APPEND | unix.O_NONBLOCK | unix.O_ASYNC | unix.O_DIRECT | unix.O_NOATIME

// delegate passes a call on virtual fd through its materialized twin and copies the
// resulting offset and flags back. Called with fc.mu held; the call is one that does
// not block.
func (fc *FileCache) delegate(c *sim.Call, p *fcProc, fd int, s *fdSlot) sim.Result {
	if !fc.materialize(c.Task, p, fd, s) {
		// The kernel holds the file no more (its anchor was replaced outside the
		// stack and no twin is left): nothing can answer for it.
		return sim.Fail(unix.EBADF)
	}
	r := fc.pass(c)
	o := fc.own(sim.Call{Nr: sim.SYS_LSEEK, Task: c.Task, Args: [6]int64{int64(fd), 0, unix.SEEK_CUR}})
	if o.Errno == 0 {
		s.v.off = o.Ret
	}
	g := fc.own(sim.Call{Nr: sim.SYS_FCNTL, Task: c.Task, Args: [6]int64{int64(fd), unix.F_GETFL}})
	if g.Errno == 0 {
		// Only F_SETFL's bits can have changed; the twin (a dup of the anchor)
		// may have been opened with other flags (O_NOFOLLOW...).
		s.v.flags = s.v.flags&^setflMask | int(g.Ret)&setflMask
	}
	return r
}

var _ sim.WorldObserver = (*FileCache)(nil)

// WorldChanged implements sim.WorldObserver: the data and stat of the cached file
// numbered ino are dropped (ino 0: every path resolution and stat), and read again
// through the next layer when a call needs them.
func (fc *FileCache) WorldChanged(ino uint64) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	if ino == 0 {
		fc.bump()
		return
	}
	for id, f := range fc.files {
		if id.ino == ino {
			fc.invalidate(f)
		}
	}
}

var _ sim.FdServer = (*FileCache)(nil)

// ServedFd implements sim.FdServer: the inode and offset of a virtual fd. Call it
// from t's goroutine, or while t is not in a call (see Concurrency).
func (fc *FileCache) ServedFd(t *sim.Task, fd int) (ino uint64, off int64, ok bool) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	p := fc.procs[t.Group()]
	if p == nil {
		return 0, 0, false
	}
	s := p.virt(fd)
	if s == nil {
		return 0, 0, false
	}
	return s.v.f.id.ino, s.v.off, true
}

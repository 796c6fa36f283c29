package sim

import (
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/vfs"
)

// The device and kernel time model (WithDevice).
//
// Every thread (Task) has its own virtual clock, advanced by what its calls cost.
// A call's cost is its kernel CPU work (syscall entry, path lookup, page-cache
// lookups and allocations, copies between user memory and the page cache,
// journalling in memory) plus whatever it waits for: a shared resource (an
// inode's i_rwsem, the journal, the device) held by another thread until a later
// virtual time, and the device's service of the requests the call needs
// completed (a read that misses the page cache, writeback by fsync or O_SYNC,
// a journal commit, direct I/O). Resources remember until when they are busy, so
// a thread that arrives while another holds one waits, and the wait is part of
// its time. The order in which the calls reach the model is the order in which
// they are served: drive concurrent threads with RunByClock (the thread with the
// smallest clock goes next) so that this order is the order in virtual time.
//
// The model keeps its own view of the page cache (which pages are resident, in
// flight, dirty) because capacity, eviction and background writeback are timing
// matters the file-system model (package vfs) does not have; it reads from vfs
// what vfs knows: sizes and allocation (holes).
//
// Threads compete for processors only when the profile gives their number
// (cpu.cores; see cost_cpu.go). Not modelled: the device serves commands in
// arrival order (no NCQ reordering); an open that creates a file journals
// nothing by itself (its first write does); an unaligned O_DIRECT write takes
// i_rwsem as an aligned one would; the file timestamps read the kernel's
// clock, which moves to the calling thread's at the calls that change files
// (writes, syncs, truncation, namespace changes) and when Kernel.Now is read,
// not at reads or calls priced by their entry alone.

// WithDevice prices calls with the time model of profile p: the device's service
// times, the CPU's kernel costs, the page cache and writeback tunables and the
// file system's journalling and locking rules. Each thread's clock (Task.Now)
// advances by its own calls; the kernel's clock (Kernel.Now) is the latest any
// thread has reached. Breakdown says where the time went.
func WithDevice(p *device.Profile) Option {
	return func(k *Kernel) {
		k.tm = newTimeModel(k, p)
		k.cost = nil
	}
}

// Breakdown is where virtual time went, in nanoseconds, with counts. The time
// fields add up to the time the threads spent in calls and in Spend.
type Breakdown struct {
	CPU       int64 `json:"cpu_ns"`        // syscall entry, path lookup, page-cache lookups and allocation, pinning, journalling in memory
	Copy      int64 `json:"copy_ns"`       // copying between user memory and the page cache
	User      int64 `json:"user_ns"`       // user-level work (Task.Spend)
	QueueWait int64 `json:"queue_wait_ns"` // waiting for the device to start a request the caller needs
	Device    int64 `json:"device_ns"`     // device service the caller waited for
	LockWait  int64 `json:"lock_wait_ns"`  // waiting for an inode's i_rwsem (a UFS file's rwlock)
	Journal   int64 `json:"journal_ns"`    // journal commits the caller waited for (device time included)
	Throttle  int64 `json:"throttle_ns"`   // balance_dirty_pages: writers held above dirty_ratio
	RunQueue  int64 `json:"run_queue_ns"`  // waiting for a processor (cpu.cores, all busy)
	Sleep     int64 `json:"sleep_ns"`      // blocked on another thread (Task.SleepUntil) or a timeout with no I/O in flight (io_getevents)

	LockWaits      int64 `json:"lock_waits"`      // acquisitions that had to wait
	Commits        int64 `json:"commits"`         // journal commits (any cause)
	Flushes        int64 `json:"flushes"`         // cache flushes sent to the device
	DeviceReads    int64 `json:"device_reads"`    // read requests sent to the device
	DeviceWrites   int64 `json:"device_writes"`   // write requests sent to the device
	BytesRead      int64 `json:"bytes_read"`      // bytes read from the device
	BytesWritten   int64 `json:"bytes_written"`   // bytes written to the device
	CacheHits      int64 `json:"cache_hits"`      // pages a buffered read found cached
	CacheMisses    int64 `json:"cache_misses"`    // pages a buffered read had to wait for
	ReadaheadPages int64 `json:"readahead_pages"` // pages read ahead of the reader
}

// Total is the sum of the time fields.
func (b Breakdown) Total() int64 {
	return b.CPU + b.Copy + b.User + b.QueueWait + b.Device + b.LockWait + b.Journal + b.Throttle + b.RunQueue + b.Sleep
}

func (b *Breakdown) add(o *Breakdown) {
	b.CPU += o.CPU
	b.Copy += o.Copy
	b.User += o.User
	b.QueueWait += o.QueueWait
	b.Device += o.Device
	b.LockWait += o.LockWait
	b.Journal += o.Journal
	b.Throttle += o.Throttle
	b.RunQueue += o.RunQueue
	b.Sleep += o.Sleep
	b.LockWaits += o.LockWaits
	b.Commits += o.Commits
	b.Flushes += o.Flushes
	b.DeviceReads += o.DeviceReads
	b.DeviceWrites += o.DeviceWrites
	b.BytesRead += o.BytesRead
	b.BytesWritten += o.BytesWritten
	b.CacheHits += o.CacheHits
	b.CacheMisses += o.CacheMisses
	b.ReadaheadPages += o.ReadaheadPages
}

// Breakdown returns where the time of every thread's calls went (zero without
// a time model): the sum of the threads' breakdowns (exited ones included),
// with the kernel-wide device counts. Read it when no thread is in a call.
func (k *Kernel) Breakdown() Breakdown {
	tm := k.tm
	if tm == nil {
		return Breakdown{}
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	b := tm.total
	for _, t := range tm.tasks {
		b.add(t.tb)
	}
	return b
}

// Device returns the profile of the time model, or nil without one.
func (k *Kernel) Device() *device.Profile {
	if k.tm == nil {
		return nil
	}
	return k.tm.p
}

// Now returns the thread's virtual clock: the kernel's time when the thread was
// created (its parent's for a fork or clone) plus the cost of every call it has
// made and of its Spend. Read it from the thread's goroutine, or once the thread
// is not running.
func (t *Task) Now() int64 { return t.now }

// Breakdown returns where the thread's time went (zero without a time model).
// Read it as Now.
func (t *Task) Breakdown() Breakdown {
	if t.tb == nil {
		return Breakdown{}
	}
	return *t.tb
}

// Spend advances the thread's clock by ns of user-level CPU work (what a program
// does between its calls, or the work of an interposer that answers a call
// without the kernel), counted as User in the breakdown.
func (t *Task) Spend(ns int64) {
	if ns <= 0 {
		return
	}
	k := t.k
	if tm := k.tm; tm != nil {
		if t.tb == nil {
			tm.register(t)
		}
		t.tb.User += ns
		if tm.contended() {
			tm.mu.Lock()
			t.now = tm.onCPU(t.now, ns, t.tb)
			tm.mu.Unlock()
			return
		}
		t.now += ns
		return
	}
	t.now += ns
	k.clock.Advance(ns)
}

// SleepUntil blocks the thread until virtual time at (nothing when its clock
// is already there): a program waiting for another thread, such as a database
// session waiting for a block another session is reading. The wait is counted
// as Sleep in the breakdown and uses no processor.
func (t *Task) SleepUntil(at int64) {
	if at <= t.now {
		return
	}
	if tm := t.k.tm; tm != nil {
		if t.tb == nil {
			tm.register(t)
		}
		t.tb.Sleep += at - t.now
		t.now = at
		return
	}
	t.k.clock.Advance(at - t.now)
	t.now = at
}

// UserCopyCost returns what copying n bytes in user space costs on the kernel's
// CPU profile (0 without a time model): an interposer serving a read from its own
// memory charges it with Spend.
func (k *Kernel) UserCopyCost(n int) int64 {
	if k.tm == nil {
		return 0
	}
	return k.tm.copyCost(int64(n))
}

// timeModel is the state of WithDevice. Its lock serialises pricing; the calls
// themselves run outside it.
type timeModel struct {
	mu  sync.Mutex
	k   *Kernel
	p   *device.Profile
	dev *device.Model
	cpu cpuCosts

	ufs         bool  // the file system is UFS (else ext4)
	noJournal   bool  // ext4 without a journal
	freeBlocks  int64 // fs.free_blocks_us in ns
	forceDirect bool  // UFS mounted forcedirectio

	inodes   map[*vfs.Inode]*inodeTime
	nextBase int64 // device address of the next inode's data

	pc pageCache
	jr journal
	rq runQueue // cpu.cores: the processors' timelines (nil cpus: no run queue)

	tasks  []*Task      // the threads that made calls, in order of their first
	ntasks atomic.Int32 // len(tasks), read without mu
	total  Breakdown    // device counts and commits (kernel-wide)
}

// cpuCosts are the CPU profile in integer nanoseconds.
type cpuCosts struct {
	syscall, path, lookup, alloc, pin, journal, blockAlloc int64
	l1CopyPs, copyPs, memCopyPs                            int64 // picoseconds per byte copied (within L1, within the last-level cache, beyond)
	l1Bytes, cacheBytes                                    int64
}

func newTimeModel(k *Kernel, p *device.Profile) *timeModel {
	p = p.Clone()
	c := p.CPU
	tm := &timeModel{
		k:   k,
		p:   p,
		dev: device.NewModel(&p.Device),
		cpu: cpuCosts{
			syscall:    int64(c.SyscallNs),
			path:       int64(c.PathLookupNs),
			lookup:     int64(c.PageLookupNs),
			alloc:      int64(c.PageAllocNs),
			pin:        int64(c.PinPageNs),
			journal:    int64(c.JournalNs),
			blockAlloc: int64(c.BlockAllocNs),
			l1CopyPs:   int64(1e6 / c.L1CopyMBs),
			l1Bytes:    c.L1Bytes,
			copyPs:     int64(1e6 / c.CopyMBs),
			memCopyPs:  int64(1e6 / c.MemCopyMBs),
			cacheBytes: c.CacheBytes,
		},
		ufs:         p.FS.Type == "ufs",
		forceDirect: p.FS.Type == "ufs" && p.FS.ForceDirectIO,
		noJournal:   p.FS.Type == "ext4" && p.FS.NoJournal,
		freeBlocks:  int64(p.FS.FreeBlocksUs * 1e3),
		inodes:      map[*vfs.Inode]*inodeTime{},
		nextBase:    dataStart,
	}
	tm.pc.init(p.Memory)
	tm.jr.init(tm)
	if c.Cores > 0 {
		tm.rq.cpus = make([][]busy, c.Cores)
	}
	return tm
}

const (
	pageShift = 12
	pageBytes = 1 << pageShift
	// dataStart is where the first file's data lies on the device; each inode
	// gets a region of inodeRegion bytes after the previous one's.
	dataStart   = 1 << 20
	inodeRegion = 1 << 30
)

// copyCost is the time to copy n bytes: a buffer that fits the L1 data cache
// copies at its speed, one that fits the last-level cache at that speed, a
// larger one at memory speed.
func (tm *timeModel) copyCost(n int64) int64 {
	switch {
	case n <= tm.cpu.l1Bytes:
		return n * tm.cpu.l1CopyPs / 1000
	case n <= tm.cpu.cacheBytes || tm.cpu.cacheBytes == 0:
		return n * tm.cpu.copyPs / 1000
	}
	return n * tm.cpu.memCopyPs / 1000
}

// inodeTime is the time model's state of one inode.
type inodeTime struct {
	ino  *vfs.Inode
	base int64 // device address of offset 0
	lock rwsem

	// syncTid and datasyncTid are the journal transactions that hold the
	// inode's last metadata change and its last change that fdatasync must
	// commit (ext4's i_sync_tid and i_datasync_tid, fs/ext4/fsync.c).
	syncTid, datasyncTid uint64
	mtimeTick            int64  // jiffy of the last timestamp update (see touch)
	ufsSynced            uint64 // UFS, ext4 without a journal: the change numbers made durable by an inode write
	allocPending         bool   // dirty pages over holes: writeback allocates

	dense  []int32         // page index → page-cache slot + 1 (0: not resident), below len(dense) (see setPage)
	sparse map[int64]int32 // page index → page-cache slot, from len(dense) on
	npages int             // resident pages
	dirty  []int64         // dirty page indexes, in increasing order unless unsorted; may list a page no longer dirty
	// unsorted: dirty is not in increasing order (writeback sorts it).
	unsorted bool
	dlist    bool  // on pc.dirtyInodes
	first    int64 // time its oldest dirty page was dirtied
}

// fileInode is inode for the inode of an open file, remembered by the file.
func (tm *timeModel) fileInode(f *File) *inodeTime {
	if it := f.ra.it; it != nil {
		return it
	}
	f.ra.it = tm.inode(f.ino)
	return f.ra.it
}

func (tm *timeModel) inode(ino *vfs.Inode) *inodeTime {
	if it := tm.inodes[ino]; it != nil {
		return it
	}
	it := &inodeTime{ino: ino, base: tm.nextBase, mtimeTick: -1}
	tm.nextBase += inodeRegion
	if tm.nextBase >= tm.p.Device.CapacityBytes-inodeRegion {
		tm.nextBase = dataStart
	}
	tm.inodes[ino] = it
	return it
}

// pre is what the model needs to know of a call before it runs.
type pre struct {
	f        *File
	off      int64 // the file offset a read or write starts at
	size     int64 // the file's size
	holes    bool  // the written range has a hole (or lies past the end)
	anyHoles bool  // the file has a hole (found only for the O_DIRECT writes of UFS, which ask)
	aio      []pre // io_submit: each iocb's
}

// kind is how a call is priced.
type kind uint8

const (
	light kind = iota // syscall entry only: the thread's own state, no lock
	path              // entry and a path lookup
	nsop              // entry, path lookup and a journalled namespace change
	model             // the page cache, the journal or the device: priced under tm.mu
)

// kindOf says how calls of each number are priced.
var kindOf = func() (k [1024]kind) {
	for _, nr := range []Sysno{SYS_OPEN, SYS_OPENAT, SYS_CREAT, SYS_STAT, SYS_LSTAT, SYS_NEWFSTATAT,
		SYS_STATX, SYS_ACCESS, SYS_FACCESSAT, SYS_FACCESSAT2, SYS_READLINK, SYS_READLINKAT, SYS_CHDIR,
		SYS_CHMOD, SYS_FCHMODAT, SYS_CHOWN, SYS_LCHOWN, SYS_FCHOWNAT, SYS_UTIMENSAT, SYS_SETXATTR,
		SYS_LSETXATTR, SYS_REMOVEXATTR, SYS_LREMOVEXATTR, SYS_EXECVE} {
		k[nr] = path
	}
	for _, nr := range []Sysno{SYS_UNLINK, SYS_UNLINKAT, SYS_RMDIR, SYS_RENAME, SYS_RENAMEAT,
		SYS_RENAMEAT2, SYS_LINK, SYS_LINKAT, SYS_SYMLINK, SYS_SYMLINKAT, SYS_MKDIR, SYS_MKDIRAT} {
		k[nr] = nsop
	}
	for i := range infos {
		if infos[i].Props&(Reads|Writes|SyncsFile|SyncsAll|Resizes|AIOWait) != 0 {
			k[i] = model
		}
	}
	k[SYS_IO_SUBMIT], k[SYS_FADVISE64] = model, model
	return k
}()

func kindOfNr(nr Sysno) kind {
	if uint(nr) < uint(len(kindOf)) {
		return kindOf[nr]
	}
	return light
}

// syscall runs c and prices it. Calls that touch only the thread's own state
// are priced without the model's lock.
func (tm *timeModel) syscall(c *Call) Result {
	t := c.Task
	kd := kindOfNr(c.Nr)
	var p pre
	if kd == model && t != nil && !t.exited.Load() {
		tm.before(c, &p)
	}
	var unlinked *vfs.Inode
	if kd == nsop && tm.freeBlocks > 0 && t != nil {
		unlinked = unlinkTarget(c)
	}
	r := tm.k.run(c)
	if t == nil {
		return r
	}
	if kd < nsop || r.Errno != 0 {
		tm.lightCall(t, kd)
		return r
	}
	now, c0 := tm.begin(t, kd)
	if kd == nsop {
		tm.jr.dirty(now)
		if unlinked != nil && unlinked.Nlink() == 0 && tm.hasBlocks(unlinked) {
			now += tm.freeBlocks
			t.tb.Device += tm.freeBlocks
		}
	} else {
		now = tm.price(t, c, r, &p, now, t.tb)
	}
	now = tm.placeCPU(t, now, c0)
	if c.Nr.Is(Reads) {
		t.now = now // reads change no file: the kernel's clock stays (see above)
	} else {
		tm.setNow(t, now)
	}
	tm.mu.Unlock()
	return r
}

// begin opens the pricing of a call of kind kd made by t: it charges the
// call's entry, takes tm.mu (the caller releases it) and runs the background
// work due by then. It returns t's clock after the entry and t's CPU and copy
// time before it, for placeCPU.
func (tm *timeModel) begin(t *Task, kd kind) (now, cpu0 int64) {
	if t.tb == nil {
		tm.register(t)
	}
	cpu0 = t.tb.CPU + t.tb.Copy
	now = tm.entry(t, kd)
	tm.mu.Lock()
	tm.background(now)
	return now, cpu0
}

// placeCPU puts the CPU and copy time t spent since cpu0 on a processor when
// threads compete for them (cpu.cores) and returns t's clock after it.
func (tm *timeModel) placeCPU(t *Task, now, cpu0 int64) int64 {
	if tm.contended() {
		cpu := t.tb.CPU + t.tb.Copy - cpu0
		now = tm.onCPU(now-cpu, cpu, t.tb)
	}
	return now
}

// entry charges t the CPU of a call's entry (and path lookup) and returns its
// clock after it; the caller sets it (setNow) once the call is priced.
func (tm *timeModel) entry(t *Task, kd kind) int64 {
	if t.tb == nil {
		tm.register(t)
	}
	cpu := tm.cpu.syscall
	switch kd {
	case path:
		cpu += tm.cpu.path
	case nsop:
		cpu += tm.cpu.path + tm.cpu.journal
	}
	t.tb.CPU += cpu
	return t.now + cpu
}

// setNow sets t's clock at the end of a call priced under tm.mu and moves the
// kernel's clock to it if it is the latest. Calls priced by their entry alone
// only move the thread's clock (see Kernel.Now).
func (tm *timeModel) setNow(t *Task, now int64) {
	t.now = now
	if now > tm.k.clock.ns.Load() {
		tm.k.clock.ns.Store(now)
	}
}

// latest returns the latest clock of any thread, and moves the kernel's clock
// (file timestamps) to it.
func (tm *timeModel) latest() int64 {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	now := tm.k.clock.Now()
	for _, t := range tm.tasks {
		now = max(now, t.now)
	}
	tm.k.clock.ns.Store(now)
	return now
}

// register gives t its breakdown and lists it for Kernel.Breakdown.
func (tm *timeModel) register(t *Task) {
	tm.mu.Lock()
	t.tb = new(Breakdown)
	tm.tasks = append(tm.tasks, t)
	tm.ntasks.Add(1)
	tm.mu.Unlock()
}

// before records what the pricing of c needs from before the call.
func (tm *timeModel) before(c *Call, p *pre) {
	if c.Nr == SYS_IO_SUBMIT {
		tm.beforeSubmit(c, p)
		return
	}
	if !c.Nr.Is(Writes) {
		return
	}
	f := c.Task.files.get(int(c.Args[0]))
	if f == nil || f.ino == nil || !f.ino.IsRegular() {
		return
	}
	p.f = f
	ino := f.ino
	p.size = ino.Size()
	p.off = f.Offset()
	if c.Nr.Is(Positional) && c.Args[PosSlot] != -1 {
		p.off = c.Args[PosSlot] // -1: preadv2 and pwritev2's file offset
	}
	if f.flags.Load()&syscall.O_APPEND != 0 {
		p.off = p.size
	}
	n := callBytes(c)
	p.holes = p.off+n > p.size || ino.HoleIn(p.off, n)
	p.anyHoles = tm.ufs && tm.direct(f) && ino.HoleIn(0, p.size)
}

// callBytes is the byte count a read or write call asks for.
func callBytes(c *Call) int64 {
	if c.Buf != nil {
		return int64(len(c.Buf))
	}
	var n int64
	for _, b := range c.Iov {
		n += int64(len(b))
	}
	return n
}

// price returns the thread's clock after c (a successful call of kind model
// whose entry is paid by now) and adds where the time went to d.
func (tm *timeModel) price(t *Task, c *Call, r Result, p *pre, now int64, d *Breakdown) int64 {
	switch fam := Info(c.Nr).Props; {
	case fam&Reads != 0:
		off := int64(-1)
		if fam&Positional != 0 {
			off = c.Args[PosSlot] // -1 (preadv2): the file offset
		}
		return tm.readCall(t, int(c.Args[0]), off, r.Ret, now, d)
	case fam&Writes != 0:
		if p.f == nil || r.Ret == 0 {
			return now
		}
		fl := p.f.flags.Load()
		if c.Nr == SYS_PWRITEV2 {
			fl |= rwfFlags(c.Args[4])
		}
		return tm.write(t, p, tm.fileInode(p.f), fl, r.Ret, now, d)
	case fam&SyncsFile != 0:
		f := t.files.get(int(c.Args[0]))
		if f == nil || f.ino == nil {
			return now
		}
		return tm.fsync(tm.inode(f.ino), c.Nr == SYS_FDATASYNC, now, d)
	case fam&SyncsAll != 0:
		return tm.syncAll(now, d)
	case c.Nr == SYS_FADVISE64:
		f := t.files.get(int(c.Args[0]))
		if f == nil || f.ino == nil || !f.ino.IsRegular() {
			return now
		}
		return tm.fadvise(f, tm.fileInode(f), c.Args[1], c.Args[2], c.Args[3], now)
	case c.Nr == SYS_IO_SUBMIT:
		return tm.submitAIO(t, c, p, r.Ret, now, d)
	case fam&AIOWait != 0:
		return tm.getEvents(t, now, d)
	case fam&Resizes != 0:
		var ino *vfs.Inode
		if c.Nr == SYS_TRUNCATE {
			ino = nil
		} else if f := t.files.get(int(c.Args[0])); f != nil {
			ino = f.ino
		}
		now += tm.cpu.journal
		d.CPU += tm.cpu.journal
		if ino != nil {
			it := tm.inode(ino)
			tm.pc.dropBeyond(it, ino.Size())
			tm.metaChange(it, true, now)
		} else {
			tm.jr.dirty(now)
		}
	}
	return now
}

// readCall prices a successful read of n bytes through fd at off (-1: at the
// file offset, which has moved past what was read).
func (tm *timeModel) readCall(t *Task, fd int, off, n, now int64, d *Breakdown) int64 {
	f := t.files.get(fd)
	if f != nil && f.ino == nil && n > 0 && isDevZero(f.special) {
		// A read of /dev/zero clears the user buffer (read_iter_zero,
		// drivers/char/mem.c): the copy without a source.
		c := tm.copyCost(n)
		d.Copy += c
		return now + c
	}
	if f == nil || f.ino == nil || !f.ino.IsRegular() || n == 0 {
		return now
	}
	if off < 0 {
		// The file offset, moved past what was read. As Kernel.read, an
		// unshared description of an unshared table needs no offset lock.
		if t.files.users.Load() == 1 && f.refs.Load() == 1 {
			off = f.off - n
		} else {
			off = f.Offset() - n
		}
	}
	return tm.read(t, f, tm.fileInode(f), off, n, now, d)
}

// chargeRead prices r, the result of a read (pread at off >= 0) made by t
// through a typed entry point, and returns it.
func (tm *timeModel) chargeRead(t *Task, fd int, off int64, r Result) Result {
	if r.Errno != 0 || r.Ret == 0 {
		tm.lightCall(t, model)
		return r
	}
	now, c0 := tm.begin(t, model)
	now = tm.readCall(t, fd, off, r.Ret, now, t.tb)
	t.now = tm.placeCPU(t, now, c0)
	tm.mu.Unlock()
	return r
}

// rwfFlags converts pwritev2's RWF_DSYNC/RWF_SYNC to the open flags they act as.
func rwfFlags(a int64) uint32 {
	const rwfDsync, rwfSync = 0x2, 0x4
	var fl uint32
	if a&rwfDsync != 0 {
		fl |= oDsync
	}
	if a&rwfSync != 0 {
		fl |= oDsync | oSyncOnly
	}
	return fl
}

// wait submits a device request the caller waits for and returns its completion,
// accounting queue wait and service.
func (tm *timeModel) wait(op device.Op, addr, n, now int64, d *Breakdown) int64 {
	start, done := tm.submit(op, addr, n, now)
	d.QueueWait += start - now
	d.Device += done - start
	return done
}

// submit sends a request to the device and counts it.
func (tm *timeModel) submit(op device.Op, addr, n, now int64) (start, done int64) {
	switch op {
	case device.Read:
		tm.total.DeviceReads++
		tm.total.BytesRead += n
	case device.Flush:
		tm.total.Flushes++
	default:
		tm.total.DeviceWrites++
		tm.total.BytesWritten += n
	}
	return tm.dev.Submit(now, op, addr, n)
}

func isDevZero(s Special) bool { _, ok := s.(DevZero); return ok }

// unlinkTarget returns the regular file an unlink(at) call c is about to
// remove, or nil.
func unlinkTarget(c *Call) *vfs.Inode {
	dirfd := atFdcwd
	switch {
	case c.Nr == SYS_UNLINKAT && c.Args[2]&atRemovedir == 0:
		dirfd = int(c.Args[0])
	case c.Nr != SYS_UNLINK:
		return nil
	}
	dir, e := atDir(c.Task, dirfd, c.Path)
	if e != 0 {
		return nil
	}
	ino, err := dir.Resolve(c.Path, false)
	if err != nil || !ino.IsRegular() {
		return nil
	}
	return ino
}

// hasBlocks reports whether ino's data has blocks on the device: it has data
// and not all of its pages are dirty with allocation pending (ext4's delayed
// allocation gives blocks at writeback; a file unlinked before that frees
// none). A file the model has not seen written existed before: its data is on
// the device. The blocks are priced at the unlink even when a descriptor keeps
// the file open, where Linux frees them at the last close.
func (tm *timeModel) hasBlocks(ino *vfs.Inode) bool {
	size := ino.Size()
	if size == 0 {
		return false
	}
	it := tm.inodes[ino]
	return it == nil || !it.allocPending || int64(len(it.dirty)) < (size+pageBytes-1)>>pageShift
}

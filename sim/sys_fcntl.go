package sim

import (
	"math"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// fcntl commands.
const (
	fDupfd        = 0
	fGetfd        = 1
	fSetfd        = 2
	fGetfl        = 3
	fSetfl        = 4
	fGetlk        = 5
	fSetlk        = 6
	fSetlkw       = 7
	fSetown       = 8
	fGetown       = 9
	fSetsig       = 10
	fGetsig       = 11
	fSetownEx     = 15
	fGetownEx     = 16
	fGetownerUids = 17
	fOfdGetlk     = 36
	fOfdSetlk     = 37
	fOfdSetlkw    = 38
	fSetlease     = 1024
	fGetlease     = 1025
	fNotify       = 1026
	fDupfdCloexec = 1030
	fSetpipeSz    = 1031
	fGetpipeSz    = 1032
	fAddSeals     = 1033
	fGetSeals     = 1034
	fGetRwHint    = 1035
	fSetRwHint    = 1036
	fGetFileRwHnt = 1037
	fSetFileRwHnt = 1038

	fRdlck = 0
	fWrlck = 1
	fUnlck = 2

	// setflMask is SETFL_MASK: the status flags F_SETFL may change.
	setflMask = syscall.O_APPEND | syscall.O_NONBLOCK | oAsync | oDirect | oNoatime
)

// sysFcntl implements fcntl(2) (Args: fd, cmd, arg; lock commands take a
// *unix.Flock_t in Obj).
//
//   - F_GETFD/F_SETFD: FD_CLOEXEC of the fd (other bits of arg ignored).
//   - F_GETFL: access mode | status flags, with O_LARGEFILE as on x86-64.
//   - F_SETFL: only O_APPEND, O_NONBLOCK, O_ASYNC, O_DIRECT and O_NOATIME change;
//     the access mode and other bits are ignored; O_DIRECT on a file system without
//     direct I/O (or a special file) is EINVAL.
//   - F_DUPFD/F_DUPFD_CLOEXEC: lowest free fd >= arg; EINVAL when arg is at or past
//     RLIMIT_NOFILE (or negative), EMFILE when none is free below it.
//   - F_GETLK/F_SETLK/F_SETLKW (POSIX locks, owned by the process, released when it
//     closes any fd of the file) and F_OFD_GETLK/F_OFD_SETLK/F_OFD_SETLKW (owned by
//     the description, released with it): a conflict is EAGAIN (Linux's choice of
//     the two POSIX allows); F_GETLK reports the first conflicting lock (l_pid -1
//     for an OFD lock) or sets l_type to F_UNLCK; F_OFD_GETLK with l_type F_UNLCK
//     reports a lock of the same description; l_type F_UNLCK for F_GETLK, a bad
//     l_type or l_whence, a range starting before 0 are EINVAL, a range past
//     LLONG_MAX EOVERFLOW; an OFD command with l_pid != 0 is EINVAL; a read lock
//     needs read access and a write lock write access (EBADF). See recordLock for
//     the order. F_SETLKW: EDEADLK when waiting would close a cycle of POSIX
//     lock owners (as Linux's detection, 10 steps deep); otherwise see WithLockWait.
//   - F_GETPIPE_SZ, F_SETPIPE_SZ: a pipe's or FIFO's capacity (pipeSize); EBADF
//     for anything else.
//   - F_SETOWN, F_GETOWN, F_SETSIG, F_GETSIG, leases, F_NOTIFY, seals and write
//     hints are accepted and return 0 (not modelled).
//   - any other cmd is EINVAL.
func (k *Kernel) sysFcntl(c *Call) Result {
	return k.fcntlFd(c.Task, int(c.Args[0]), c.Args[1], c.Args[2], c.Obj)
}

// fcntlFd is fcntl(2) of fd by t; obj is the struct argument of the lock commands.
func (k *Kernel) fcntlFd(t *Task, fd int, cmd, arg int64, obj any) Result {
	if cmd == fSetfd && t.files.users.Load() == 1 && t.files.get(fd) != nil {
		// The commonest command, in one step: FD_CLOEXEC of an open fd of a
		// table with one user (fcntl below does the same, after fgetRaw).
		t.files.setCloexec(fd, arg&syscall.FD_CLOEXEC != 0)
		return Result{}
	}
	f, ref := t.fgetRaw(fd)
	if f == nil {
		return Fail(syscall.EBADF)
	}
	var r Result
	switch {
	case f.flags.Load()&oPath != 0 && cmd != fDupfd && cmd != fDupfdCloexec && cmd != fGetfd && cmd != fSetfd && cmd != fGetfl:
		r = Fail(syscall.EBADF) // an O_PATH fd answers only the fd commands
	default:
		r = k.fcntl(t, fd, f, cmd, arg, obj)
	}
	if ref {
		f.decRef()
	}
	return r
}

func (k *Kernel) fcntl(t *Task, fd int, f *File, cmd, arg int64, obj any) Result {
	switch cmd {
	case fGetfd:
		if t.g.files.cloexec(fd) {
			return Result{Ret: syscall.FD_CLOEXEC}
		}
		return Result{}
	case fSetfd:
		t.g.files.setCloexec(fd, arg&syscall.FD_CLOEXEC != 0)
		return Result{}
	case fGetfl:
		return Result{Ret: int64(f.flags.Load())}
	case fSetfl:
		if arg&oDirect != 0 && (f.special != nil || !f.ino.IsRegular() || !k.fs.SupportsDirectIO()) {
			return Fail(syscall.EINVAL)
		}
		for {
			old := f.flags.Load()
			nw := uint32(arg)&setflMask | old&^setflMask
			if f.flags.CompareAndSwap(old, nw) {
				return Result{}
			}
		}
	case fDupfd, fDupfdCloexec:
		return k.dupfd(t.g, f, arg, cmd == fDupfdCloexec)
	case fGetlk, fSetlk, fSetlkw, fOfdGetlk, fOfdSetlk, fOfdSetlkw:
		lk, _ := obj.(*unix.Flock_t)
		if lk == nil {
			return Fail(syscall.EFAULT)
		}
		return k.recordLock(t, f, int(cmd), lk)
	case fGetpipeSz, fSetpipeSz:
		return pipeSize(f, cmd == fSetpipeSz, arg)
	case fSetown, fGetown, fSetsig, fGetsig, fSetownEx, fGetownEx, fGetownerUids,
		fSetlease, fGetlease, fNotify, fAddSeals, fGetSeals,
		fGetRwHint, fSetRwHint, fGetFileRwHnt, fSetFileRwHnt:
		return Result{}
	}
	return Fail(syscall.EINVAL)
}

// lockOwner is who owns a record lock: a process (POSIX) or a description (OFD).
type lockOwner struct {
	g *ThreadGroup
	f *File
}

type recLock struct {
	owner      lockOwner
	typ        int16
	start, end int64 // inclusive; end math.MaxInt64 means to end of file
}

type flockEnt struct {
	f   *File
	typ int16
}

type inodeLocks struct {
	rec    []recLock
	flocks []flockEnt
}

// lockTable holds every record and flock lock of the kernel.
type lockTable struct {
	mu      sync.Mutex
	cond    *sync.Cond
	active  atomic.Int32 // inodes with some lock: close skips the table when zero
	byIno   map[*vfs.Inode]*inodeLocks
	waiting map[*ThreadGroup]*ThreadGroup // POSIX waiter → owner it waits for
}

func (lt *lockTable) init() {
	lt.cond = sync.NewCond(&lt.mu)
	lt.byIno = map[*vfs.Inode]*inodeLocks{}
	lt.waiting = map[*ThreadGroup]*ThreadGroup{}
}

func (lt *lockTable) get(ino *vfs.Inode) *inodeLocks {
	il := lt.byIno[ino]
	if il == nil {
		il = &inodeLocks{}
		lt.byIno[ino] = il
		lt.active.Add(1)
	}
	return il
}

func (lt *lockTable) tidy(ino *vfs.Inode, il *inodeLocks) {
	if len(il.rec) == 0 && len(il.flocks) == 0 {
		delete(lt.byIno, ino)
		lt.active.Add(-1)
	}
}

func overlaps(a recLock, start, end int64) bool { return a.start <= end && start <= a.end }

func (il *inodeLocks) conflict(o lockOwner, typ int16, start, end int64) *recLock {
	for i := range il.rec {
		l := &il.rec[i]
		if l.owner == o || !overlaps(*l, start, end) {
			continue
		}
		if l.typ == fWrlck || typ == fWrlck {
			return l
		}
	}
	return nil
}

// own returns the first lock of o overlapping [start, end], or nil.
func (il *inodeLocks) own(o lockOwner, start, end int64) *recLock {
	for i := range il.rec {
		if l := &il.rec[i]; l.owner == o && overlaps(*l, start, end) {
			return l
		}
	}
	return nil
}

// set applies a lock or unlock of [start, end] for o, splitting and merging o's
// locks as posix_lock_inode does.
func (il *inodeLocks) set(o lockOwner, typ int16, start, end int64) {
	out := il.rec[:0:0]
	for _, l := range il.rec {
		if l.owner != o || l.end < start-1 && start > 0 || l.start > end+1 && end < math.MaxInt64 {
			out = append(out, l)
			continue
		}
		if typ != fUnlck && l.typ == typ {
			start, end = min(start, l.start), max(end, l.end)
			continue
		}
		if !overlaps(l, start, end) {
			out = append(out, l)
			continue
		}
		if l.start < start {
			out = append(out, recLock{owner: o, typ: l.typ, start: l.start, end: start - 1})
		}
		if l.end > end {
			out = append(out, recLock{owner: o, typ: l.typ, start: end + 1, end: l.end})
		}
	}
	if typ != fUnlck {
		out = append(out, recLock{owner: o, typ: typ, start: start, end: end})
	}
	// Keep the list sorted by start (then owner pid) so F_GETLK answers are deterministic.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].start < out[j-1].start; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	il.rec = out
}

// recordLock implements the lock commands of fcntl. The checks follow
// fcntl_getlk and fcntl_setlk: for F_GETLK (not F_OFD_GETLK) l_type must be
// F_RDLCK or F_WRLCK; then flock_to_posix_lock (l_whence, EOVERFLOW
// when l_start overflows, EINVAL for a start before 0, EOVERFLOW when l_len
// overflows, EINVAL when a negative l_len reaches before 0, then EINVAL for an
// unknown l_type); for the set commands check_fmode_for_setlk (EBADF); and last the
// OFD commands' l_pid (EINVAL).
func (k *Kernel) recordLock(t *Task, f *File, cmd int, lk *unix.Flock_t) Result {
	ofd := cmd == fOfdGetlk || cmd == fOfdSetlk || cmd == fOfdSetlkw
	getlk := cmd == fGetlk || cmd == fOfdGetlk
	typ := lk.Type
	if cmd == fGetlk && typ != fRdlck && typ != fWrlck {
		return Fail(syscall.EINVAL)
	}
	var base int64
	switch lk.Whence {
	case seekSet:
	case seekCur:
		base = f.Offset()
	case seekEnd:
		if f.special == nil {
			base = f.ino.Size()
		}
	default:
		return Fail(syscall.EINVAL)
	}
	if lk.Start > math.MaxInt64-base {
		return Fail(syscall.EOVERFLOW)
	}
	start := lk.Start + base
	if start < 0 {
		return Fail(syscall.EINVAL)
	}
	var end int64
	switch {
	case lk.Len > 0:
		if lk.Len-1 > math.MaxInt64-start {
			return Fail(syscall.EOVERFLOW)
		}
		end = start + lk.Len - 1
	case lk.Len < 0:
		if start+lk.Len < 0 {
			return Fail(syscall.EINVAL)
		}
		end = start - 1
		start += lk.Len
	default:
		end = math.MaxInt64
	}
	if typ != fRdlck && typ != fWrlck && typ != fUnlck {
		return Fail(syscall.EINVAL) // assign_type
	}
	if !getlk {
		if typ == fRdlck && !f.readable() || typ == fWrlck && !f.writable() {
			return Fail(syscall.EBADF)
		}
	}
	if ofd && lk.Pid != 0 {
		return Fail(syscall.EINVAL)
	}
	if f.special != nil {
		if getlk {
			lk.Type = fUnlck
		}
		return Result{}
	}
	o := lockOwner{g: t.g}
	if ofd {
		o = lockOwner{f: f}
	}
	lt := &k.locks
	lt.mu.Lock()
	defer lt.mu.Unlock()
	il := lt.get(f.ino)
	defer func() { lt.tidy(f.ino, il) }()
	if getlk {
		var l *recLock
		if typ == fUnlck {
			// F_OFD_GETLK with F_UNLCK (Linux 6.7, posix_test_locks_conflict):
			// the first lock of the same description overlapping the range.
			l = il.own(o, start, end)
		} else {
			l = il.conflict(o, typ, start, end)
		}
		if l != nil {
			lk.Type, lk.Whence, lk.Start = l.typ, seekSet, l.start
			lk.Len = 0
			if l.end != math.MaxInt64 {
				lk.Len = l.end - l.start + 1
			}
			lk.Pid = -1
			if l.owner.g != nil {
				lk.Pid = int32(l.owner.g.pid)
			}
		} else {
			lk.Type = fUnlck
		}
		return Result{}
	}
	if typ != fUnlck {
		wait := cmd == fSetlkw || cmd == fOfdSetlkw
		for {
			l := il.conflict(o, typ, start, end)
			if l == nil {
				break
			}
			if !wait {
				return Fail(syscall.EAGAIN)
			}
			if !ofd && l.owner.g != nil && lt.deadlock(t.g, l.owner.g) {
				return Fail(syscall.EDEADLK)
			}
			if !k.lockWait {
				return Fail(syscall.EINTR)
			}
			if !ofd && l.owner.g != nil {
				lt.waiting[t.g] = l.owner.g
			}
			lt.cond.Wait()
			delete(lt.waiting, t.g)
			il = lt.get(f.ino) // the entry may have been tidied while waiting
		}
	}
	il.set(o, typ, start, end)
	if ofd {
		f.hasOFD = true
	}
	if typ == fUnlck {
		lt.cond.Broadcast()
	}
	return Result{}
}

// deadlock reports whether me waiting for owner would close a cycle of waiters.
func (lt *lockTable) deadlock(me, owner *ThreadGroup) bool {
	for i := 0; i < 10 && owner != nil; i++ {
		if owner == me {
			return true
		}
		owner = lt.waiting[owner]
	}
	return false
}

// releasePosix drops every POSIX lock g holds on ino (close(2) of any of its fds).
func (lt *lockTable) releasePosix(g *ThreadGroup, ino *vfs.Inode) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	il := lt.byIno[ino]
	if il == nil {
		return
	}
	out := il.rec[:0]
	for _, l := range il.rec {
		if l.owner.g != g {
			out = append(out, l)
		}
	}
	if len(out) != len(il.rec) {
		clear(il.rec[len(out):])
		il.rec = out
		lt.cond.Broadcast()
	}
	lt.tidy(ino, il)
}

// releaseFile drops the OFD and flock locks of a description being released.
func (lt *lockTable) releaseFile(f *File) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if f.flock == 0 && !f.hasOFD {
		return
	}
	il := lt.byIno[f.ino]
	if il == nil {
		return
	}
	out := il.rec[:0]
	for _, l := range il.rec {
		if l.owner.f != f {
			out = append(out, l)
		}
	}
	clear(il.rec[len(out):])
	il.rec = out
	il.removeFlock(f)
	f.flock, f.hasOFD = 0, false
	lt.cond.Broadcast()
	lt.tidy(f.ino, il)
}

func (il *inodeLocks) removeFlock(f *File) {
	for i, e := range il.flocks {
		if e.f == f {
			il.flocks = append(il.flocks[:i], il.flocks[i+1:]...)
			return
		}
	}
}

// flock(2) operations.
const (
	lockSh = 1
	lockEx = 2
	lockNb = 4
	lockUn = 8
	// lockMand is LOCK_MAND: Linux no longer supports it, and flock(2) ignores
	// such requests and returns 0.
	lockMand = 32
)

// sysFlock implements flock(2) (Args: fd, operation): LOCK_SH, LOCK_EX, LOCK_UN,
// with LOCK_NB. The lock belongs to the open file description (dup and fork share
// it) and goes with it. A conflict with LOCK_NB is EWOULDBLOCK (EAGAIN); a
// conversion drops the old lock before waiting, as Linux does (so a failed
// LOCK_NB conversion leaves no lock). Any other operation is EINVAL. flock and
// fcntl locks do not interact. Without LOCK_NB a conflict waits (see WithLockWait).
//
// The checks are in the order of SYSCALL_DEFINE2(flock): LOCK_MAND is ignored
// (returns 0, whatever the fd), then the operation is translated
// (flock_translate_cmd: EINVAL), and only then is the fd looked up (EBADF).
func (k *Kernel) sysFlock(c *Call) Result {
	op := uint32(c.Args[1]) // unsigned int cmd
	if op&lockMand != 0 {
		return Result{}
	}
	if t := op &^ lockNb; t != lockSh && t != lockEx && t != lockUn {
		return Fail(syscall.EINVAL)
	}
	typ := int16(op &^ lockNb)
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if f.special != nil {
			return Result{}
		}
		lt := &k.locks
		lt.mu.Lock()
		defer lt.mu.Unlock()
		il := lt.get(f.ino)
		defer func() { lt.tidy(f.ino, il) }()
		if typ == lockUn {
			if f.flock != 0 {
				il.removeFlock(f)
				f.flock = 0
				lt.cond.Broadcast()
			}
			return Result{}
		}
		if f.flock == typ {
			return Result{}
		}
		if f.flock != 0 {
			il.removeFlock(f)
			f.flock = 0
			lt.cond.Broadcast()
		}
		for {
			conflict := false
			for _, e := range il.flocks {
				if e.f != f && (e.typ == lockEx || typ == lockEx) {
					conflict = true
					break
				}
			}
			if !conflict {
				break
			}
			if op&lockNb != 0 {
				return Fail(syscall.EWOULDBLOCK)
			}
			if !k.lockWait {
				return Fail(syscall.EINTR)
			}
			lt.cond.Wait()
			il = lt.get(f.ino)
		}
		il.flocks = append(il.flocks, flockEnt{f: f, typ: typ})
		f.flock = typ
		return Result{}
	})
}

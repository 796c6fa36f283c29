package interposer

import (
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// The fd-table half of FileCache: close, dup*, fcntl, close_range, fork, execve,
// exit and rlimit changes, and the pass-through path with its coherence rules.

// fdHandler handles one fd-table call for FileCache, with fc.mu held. It returns
// the call's result, or pass: the call must go to the next layer after fc.mu is
// released (it may block, or it changes nothing the cache tracks).
//
// c is the Call lent to FileCache.Syscall (see sim.Handler).
type fdHandler func(fc *FileCache, c *sim.Call, p *fcProc) (r sim.Result, pass bool)

// fdHandlerFor returns FileCache's handler of the calls other than
// open/openat/creat that create, close or change fds, or end or copy the fd
// table, from what the syscall table says of the row; nil for the other calls.
func fdHandlerFor(in *sim.SyscallInfo) fdHandler {
	switch p := in.Props; {
	case !in.Modelled:
		return nil
	case p&sim.Forks != 0:
		return (*FileCache).fdFork
	case p&sim.Execs != 0:
		return (*FileCache).fdExec
	case p&sim.EndsGroup != 0:
		return (*FileCache).fdExitGroup
	case p&(sim.SetsNofile|sim.Lifecycle) != 0: // exit: one thread ends
		return (*FileCache).fdRlimit
	case in.Ret == sim.RetFdOrValue:
		return (*FileCache).fcntl
	case in.Ret == sim.RetNewFd:
		return (*FileCache).fdDup2
	case in.Ret == sim.RetFd && p&sim.FdTable != 0:
		return (*FileCache).fdDup
	case p&sim.NewFds != 0:
		return (*FileCache).fdPair
	case in.Nr == sim.SYS_MEMFD_CREATE: // a new file, not a path the cache knows
		return (*FileCache).fdNew
	case p&sim.ClosesFd != 0 && in.Slot(sim.ArgFd, 0) >= 0:
		return (*FileCache).fdClose
	case p&sim.ClosesFd != 0:
		return (*FileCache).fdCloseRange
	}
	return nil
}

// fdHandlerOf holds fdHandlerFor of every syscall by number, so that every call
// the cache passes on pays an array look-up only.
var fdHandlerOf = func() (t [512]fdHandler) {
	for _, in := range sim.Syscalls() {
		t[in.Nr] = fdHandlerFor(&in)
	}
	return t
}()

// fdtable runs the handler of an fd-table call. Called without fc.mu.
func (fc *FileCache) fdtable(c *sim.Call, h fdHandler) sim.Result {
	fc.mu.Lock()
	r, pass := h(fc, c, fc.proc(c.Task))
	fc.mu.Unlock()
	if pass {
		return fc.pass(c)
	}
	return r
}

func (fc *FileCache) fdClose(c *sim.Call, p *fcProc) (sim.Result, bool) {
	t, fd := c.Task, int(int32(c.Args[0]))
	if s := p.virt(fd); s != nil {
		if s.mat {
			fc.own(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{int64(fd)}})
		}
		p.drop(s)
		fc.done(t, 0)
		return sim.Result{}, false
	}
	if s := p.peek(fd); s != nil && s.st == sHidden {
		return sim.Fail(unix.EBADF), false
	}
	r := fc.pass(c)
	if fd >= 0 {
		p.drop(p.slot(fd))
	}
	return r, false
}

func (fc *FileCache) fdDup(c *sim.Call, p *fcProc) (sim.Result, bool) {
	t, fd := c.Task, int(int32(c.Args[0]))
	if s := p.virt(fd); s != nil {
		return fc.dupVirt(t, p, s, 0, false), false
	}
	if s := p.peek(fd); s != nil && s.st == sHidden {
		return sim.Fail(unix.EBADF), false
	}
	return fc.passNewFd(c, p, fd, 0), false
}

// fdNew passes a call that returns a new fd of a new file and records it.
func (fc *FileCache) fdNew(c *sim.Call, p *fcProc) (sim.Result, bool) {
	r := fc.pass(c)
	if r.Errno == 0 {
		n, e := fc.allocated(c.Task, p, 0, int(r.Ret))
		if e != 0 {
			return sim.Fail(e), false
		}
		r.Ret = int64(n)
	}
	return r, false
}

// fdPair passes a call that makes two fds (pipe, socketpair) and records them,
// moved where the program expects them when a virtual fd has their number.
func (fc *FileCache) fdPair(c *sim.Call, p *fcProc) (sim.Result, bool) {
	r := fc.pass(c)
	fds, _ := c.Obj.(*[2]int32)
	if r.Errno != 0 || fds == nil {
		return r, false
	}
	for i := range fds {
		n, e := fc.allocated(c.Task, p, 0, int(fds[i]))
		if e != 0 {
			return sim.Fail(e), false
		}
		fds[i] = int32(n)
	}
	return r, false
}

// passNewFd passes a call that returns a new fd duplicating fd (the lowest free
// >= min) and records it.
func (fc *FileCache) passNewFd(c *sim.Call, p *fcProc, fd, min int) sim.Result {
	r := fc.pass(c)
	if r.Errno == 0 {
		n, e := fc.allocated(c.Task, p, min, int(r.Ret))
		if e != 0 {
			return sim.Fail(e)
		}
		fc.copyID(p, fd, n)
		r.Ret = int64(n)
	}
	return r
}

// fdDup2 handles dup2 and dup3.
func (fc *FileCache) fdDup2(c *sim.Call, p *fcProc) (sim.Result, bool) {
	t, fd, nfd := c.Task, int(int32(c.Args[0])), int(int32(c.Args[1]))
	cloexec := false
	if c.Nr == sim.SYS_DUP3 {
		if c.Args[2]&^unix.O_CLOEXEC != 0 || fd == nfd {
			return sim.Fail(unix.EINVAL), false
		}
		cloexec = c.Args[2]&unix.O_CLOEXEC != 0
	}
	old := p.peek(fd)
	if old != nil && old.st == sHidden {
		return sim.Fail(unix.EBADF), false
	}
	if old == nil || old.st != sVirt {
		// A real or unknown oldfd: the kernel decides (EBADF included).
		if ns := p.peek(nfd); ns != nil && ns.st == sHidden {
			fc.claim(t, p, nfd)
		}
		r := fc.pass(c)
		if r.Errno == 0 {
			p.drop(p.slot(nfd))
			*p.slot(nfd) = fdSlot{st: sReal}
			fc.copyID(p, fd, nfd)
		}
		return r, false
	}
	if fd == nfd { // dup2 only: checked before RLIMIT_NOFILE, as Linux does
		fc.done(t, 0)
		return sim.Result{Ret: int64(nfd)}, false
	}
	if nfd < 0 || nfd >= p.nofile {
		return sim.Fail(unix.EBADF), false
	}
	v := old.v
	ref(v) // before dropping nfd, which may hold the same description
	ns := fc.known(t, p, nfd)
	switch ns.st {
	case sVirt:
		if ns.mat {
			fc.own(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{int64(nfd)}})
		}
	case sReal:
		fc.own(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{int64(nfd)}})
	case sHidden:
		fc.claim(t, p, nfd)
	}
	p.drop(p.slot(nfd))
	*p.slot(nfd) = fdSlot{st: sVirt, v: v, cloexec: cloexec}
	fc.done(t, 0)
	return sim.Result{Ret: int64(nfd)}, false
}

func (fc *FileCache) fdCloseRange(c *sim.Call, p *fcProc) (sim.Result, bool) {
	first, last, flags := uint64(uint32(c.Args[0])), uint64(uint32(c.Args[1])), c.Args[2]
	if first > last || flags&^(unix.CLOSE_RANGE_CLOEXEC|unix.CLOSE_RANGE_UNSHARE) != 0 {
		return fc.pass(c), false
	}
	hi := min(last+1, uint64(len(p.slots))) // slots [first, hi) are known

	// The kernel must not close the anchors: close the ranges between them.
	start, served := first, false
	var r sim.Result
	call := func(a, b uint64) {
		if a > b {
			return
		}
		cc := *c
		cc.Args[0], cc.Args[1] = int64(a), int64(b)
		if served {
			if r2 := fc.own(cc); r2.Errno != 0 {
				r = r2
			}
			return
		}
		served = true
		fc.passed.Add(1)
		r = sim.Send(fc.next, cc)
	}
	for n := first; n < hi; n++ {
		if p.slots[n].st == sHidden {
			if n > start {
				call(start, n-1)
			}
			start = n + 1
		}
	}
	call(start, last)
	if !served {
		r = sim.Result{}
	}
	for n := first; n < hi; n++ {
		s := &p.slots[n]
		if s.st == sHidden {
			continue
		}
		if flags&unix.CLOSE_RANGE_CLOEXEC != 0 {
			if s.st == sVirt {
				s.cloexec = true
			}
			continue
		}
		p.drop(s)
	}
	return r, false
}

// fdFork handles fork, vfork and clone: a child process gets a copy of the table.
func (fc *FileCache) fdFork(c *sim.Call, p *fcProc) (sim.Result, bool) {
	r := fc.pass(c)
	if r.Errno != 0 || r.Ret <= 0 {
		return r, false
	}
	ct := c.Task.Kernel().Task(int(r.Ret))
	if ct == nil || ct.Group() == p.g {
		return r, false // a thread shares the table
	}
	q := &fcProc{g: ct.Group(), slots: append([]fdSlot(nil), p.slots...),
		res: map[resKey]resEnt{}, anchors: map[*cfile]int{}, nofile: p.nofile, hardMax: p.hardMax}
	for k, v := range p.res {
		q.res[k] = v
	}
	for k, v := range p.anchors {
		q.anchors[k] = v
	}
	for i := range q.slots {
		if q.slots[i].st == sVirt {
			ref(q.slots[i].v)
		}
	}
	fc.procs[q.g] = q
	return r, false
}

// fdExec handles execve: the anchors are O_CLOEXEC and go with the exec; the
// virtual fds without FD_CLOEXEC stay. Those are materialized first, so that the
// kernel keeps their files open, and each surviving file is anchored again from
// one of them.
func (fc *FileCache) fdExec(c *sim.Call, p *fcProc) (sim.Result, bool) {
	t := c.Task
	for i := range p.slots {
		if s := &p.slots[i]; s.st == sVirt && !s.cloexec {
			fc.materialize(t, p, i, s)
		}
	}
	r := fc.pass(c)
	if r.Errno != 0 {
		return r, false
	}
	for i := range p.slots {
		s := &p.slots[i]
		switch {
		case s.st == sVirt && s.cloexec, s.st == sHidden:
			p.drop(s)
		case s.st == sReal:
			*s = fdSlot{} // its FD_CLOEXEC was not tracked: ask again
		}
	}
	clear(p.anchors)
	for i := range p.slots {
		if s := &p.slots[i]; s.st == sVirt {
			fc.anchor(t, p, s.v.f, i)
		}
	}
	return r, false
}

func (fc *FileCache) fdExitGroup(c *sim.Call, p *fcProc) (sim.Result, bool) {
	r := fc.pass(c)
	fc.forget(p)
	return r, false
}

// forget drops the state of p, whose process has ended: its fds' references
// to descriptions it shared with other processes (by fork) go, as the
// kernel's do, so that a sole survivor of each may serve it without the lock
// again.
func (fc *FileCache) forget(p *fcProc) {
	for i := range p.slots {
		p.drop(&p.slots[i])
	}
	delete(fc.procs, p.g)
	fc.served += p.served
	if fc.last.Load() == p {
		fc.last.Store(nil)
	}
}

// fdRlimit handles exit, setrlimit and prlimit64: after the calls that may change
// RLIMIT_NOFILE, the limit is read again; an exit that ended the process
// (its last thread) ends its state as exit_group does.
func (fc *FileCache) fdRlimit(c *sim.Call, p *fcProc) (sim.Result, bool) {
	r := fc.pass(c)
	if p.g.Exited() {
		fc.forget(p)
		return r, false
	}
	if sim.Info(c.Nr).Props&sim.SetsNofile != 0 {
		var rl unix.Rlimit
		if g := fc.own(sim.Call{Nr: sim.SYS_GETRLIMIT, Task: c.Task, Args: [6]int64{unix.RLIMIT_NOFILE}, Obj: &rl}); g.Errno == 0 && rl.Cur > 0 {
			p.nofile, p.hardMax = int(rl.Cur), rl.Max
		}
	}
	return r, false
}

// dupVirt gives virtual description s another fd, the lowest free >= min.
func (fc *FileCache) dupVirt(t *sim.Task, p *fcProc, s *fdSlot, min int, cloexec bool) sim.Result {
	v := s.v
	n := fc.lowestFree(t, p, min)
	if n >= p.nofile {
		return sim.Fail(unix.EMFILE)
	}
	fc.claim(t, p, n)
	ref(v)
	*p.slot(n) = fdSlot{st: sVirt, v: v, cloexec: cloexec}
	fc.done(t, 0)
	return sim.Result{Ret: int64(n)}
}

// copyID carries a real fd's known inode identity to its duplicate.
func (fc *FileCache) copyID(p *fcProc, from, to int) {
	if s := p.peek(from); s != nil && s.st == sReal && s.idOK {
		d := p.slot(to)
		d.idOK, d.id = true, s.id
	}
}

// fcntl handles fcntl(2).
func (fc *FileCache) fcntl(c *sim.Call, p *fcProc) (sim.Result, bool) {
	t, fd := c.Task, int(int32(c.Args[0]))
	cmd, arg := c.Args[1], c.Args[2]
	if s := p.peek(fd); s != nil && s.st == sHidden {
		return sim.Fail(unix.EBADF), false
	}
	s := p.virt(fd)
	if s == nil {
		if cmd == unix.F_DUPFD || cmd == unix.F_DUPFD_CLOEXEC {
			return fc.passNewFd(c, p, fd, int(arg)), false
		}
		return sim.Result{}, true
	}
	switch cmd {
	case unix.F_GETFD:
		fc.done(t, 0)
		if s.cloexec {
			return sim.Result{Ret: unix.FD_CLOEXEC}, false
		}
		return sim.Result{}, false
	case unix.F_SETFD:
		s.cloexec = arg&unix.FD_CLOEXEC != 0
		if s.mat {
			fc.extra(c)
		}
		fc.done(t, 0)
		return sim.Result{}, false
	case unix.F_GETFL:
		fc.done(t, 0)
		return sim.Result{Ret: int64(s.v.flags)}, false
	case unix.F_SETFL:
		const emulated = unix.O_APPEND | unix.O_NONBLOCK
		const setfl = emulated | unix.O_ASYNC | unix.O_DIRECT | unix.O_NOATIME
		if (int64(s.v.flags)^arg)&(setfl&^emulated) == 0 {
			s.v.flags = s.v.flags&^emulated | int(arg)&emulated
			fc.done(t, 0)
			return sim.Result{}, false
		}
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		if arg < 0 || arg >= int64(p.nofile) {
			fc.done(t, 0)
			return sim.Fail(unix.EINVAL), false
		}
		return fc.dupVirt(t, p, s, int(arg), cmd == unix.F_DUPFD_CLOEXEC), false
	case unix.F_SETLKW, unix.F_OFD_SETLKW, unix.F_SETLK, unix.F_GETLK, unix.F_OFD_SETLK, unix.F_OFD_GETLK:
		// May block: materialize, then pass without holding the lock. Locks do not
		// move the offset.
		fc.materialize(t, p, fd, s)
		return sim.Result{}, true
	}
	return fc.delegate(c, p, fd, s), false
}

// effect says what a passed-through call may change, for coherence.
type effect uint8

const (
	effNone  effect = iota
	effAtime        // may change atimes only (reads): cached stats go stale
	effData         // changes the data of the file of the fd at fdIdx
	effAll          // may change any file's data and every name and attribute
	effNames        // may change names and attributes (not data)
)

func classify(c *sim.Call) (effect, int) {
	switch fam := sim.Info(c.Nr).Props; {
	case fam&(sim.SyncsFile|sim.SyncsAll|sim.AIOWait) != 0:
		return effNone, 0
	case fam&sim.Reads != 0:
		return effAtime, 0
	case fam&sim.Writes != 0:
		return effData, 0
	}
	switch c.Nr {
	case sim.SYS_FSTAT, sim.SYS_STAT, sim.SYS_LSTAT, sim.SYS_NEWFSTATAT, sim.SYS_STATX,
		sim.SYS_ACCESS, sim.SYS_FACCESSAT, sim.SYS_FACCESSAT2, sim.SYS_READLINK,
		sim.SYS_READLINKAT, sim.SYS_GETCWD, sim.SYS_GETPID, sim.SYS_GETTID,
		sim.SYS_GETRLIMIT, sim.SYS_SYNC_FILE_RANGE, sim.SYS_FADVISE64, sim.SYS_READAHEAD, sim.SYS_FLOCK,
		sim.SYS_IO_SETUP, sim.SYS_IO_CANCEL, sim.SYS_MUNMAP, sim.SYS_UMASK, sim.SYS_LSEEK, sim.SYS_FCNTL:
		return effNone, 0
	case sim.SYS_GETDENTS, sim.SYS_GETDENTS64:
		return effAtime, 0
	case sim.SYS_FTRUNCATE, sim.SYS_FALLOCATE, sim.SYS_SENDFILE:
		return effData, 0
	case sim.SYS_COPY_FILE_RANGE:
		return effData, 2
	case sim.SYS_MMAP:
		if c.Args[2]&unix.PROT_WRITE != 0 && c.Args[3]&unix.MAP_SHARED != 0 {
			return effAll, 0
		}
		return effNone, 0
	case sim.SYS_TRUNCATE, sim.SYS_IO_SUBMIT, sim.SYS_MSYNC, sim.SYS_SPLICE, sim.SYS_TEE:
		return effAll, 0
	}
	if s, _ := sim.SupportOf(c.Nr); s == sim.NotModelled {
		return effNone, 0 // accepted with no effect
	}
	return effNames, 0
}

// fdArgs lists the Args slots of c that hold fds, for the hidden/virtual checks,
// from the syscall table: its ArgFd slots (mmap's only for a file mapping) and
// its ArgDirfd slots whose path is relative (or empty: AT_EMPTY_PATH, futimens).
func fdArgs(c *sim.Call) (a, b int) {
	a, b = -1, -1
	in := sim.Info(c.Nr)
	for i, arg := range in.Args {
		switch arg.Kind {
		case sim.ArgFd:
			if anonMap(c) {
				continue
			}
		case sim.ArgDirfd:
			if p := dirfdPath(c, in, i); p != "" && p[0] == '/' {
				continue
			}
		default:
			continue
		}
		if a < 0 {
			a = i
		} else {
			b = i
		}
	}
	return a, b
}

// passFd passes a call the cache does not serve, delegating it through a
// materialized twin when it names a virtual fd, refusing hidden fds, and applying
// the coherence rules after it.
func (fc *FileCache) passFd(c *sim.Call) sim.Result {
	eff, idx := classify(c)
	a, b := fdArgs(c)
	fc.mu.Lock()
	p := fc.proc(c.Task)
	for _, i := range [2]int{a, b} {
		if i < 0 {
			continue
		}
		fd := int(int32(c.Args[i]))
		s := p.peek(fd)
		if s == nil {
			continue
		}
		switch s.st {
		case sHidden:
			fc.mu.Unlock()
			return sim.Fail(unix.EBADF)
		case sVirt:
			if c.Nr == sim.SYS_FLOCK { // may block: do not hold the lock across it
				fc.materialize(c.Task, p, fd, s)
				fc.mu.Unlock()
				return fc.pass(c)
			}
			r := fc.delegate(c, p, fd, s)
			fc.after(c, p, r, eff, idx)
			fc.mu.Unlock()
			return r
		}
	}
	if eff == effNone || (eff == effAtime && fc.loaded == 0) {
		fc.mu.Unlock()
		return fc.pass(c)
	}
	fc.mu.Unlock()
	r := fc.pass(c)
	fc.mu.Lock()
	fc.after(c, p, r, eff, idx)
	fc.mu.Unlock()
	return r
}

// after applies a passed call's effects on the cache. Called with fc.mu held.
func (fc *FileCache) after(c *sim.Call, p *fcProc, r sim.Result, eff effect, idx int) {
	switch eff {
	case effAtime:
		for _, f := range fc.files {
			f.statGen = 0
		}
	case effData:
		// Even a failed write may have changed the page cache (an O_SYNC write whose
		// writeback failed): invalidate whatever the result.
		if fc.loaded == 0 {
			return
		}
		fd := int(int32(c.Args[idx]))
		s := p.slot(fd)
		if s.st == sVirt {
			fc.invalidate(s.v.f)
			return
		}
		if !s.idOK {
			st, sr := callFstat(fc.next, c.Task, fd)
			fc.extraN.Add(1)
			if sr.Errno != 0 {
				fc.invalidateAll()
				return
			}
			s.st, s.idOK, s.id = sReal, true, fileID{st.Dev, st.Ino}
		}
		if f := fc.files[s.id]; f != nil {
			fc.invalidate(f)
		}
	case effAll:
		fc.bump()
		fc.invalidateAll()
	case effNames:
		fc.bump()
	}
}

var _ FdObserver = (*FileCache)(nil)

// FdInstalled implements FdObserver: fd of t's process now holds a description the
// kernel installed outside the stack (Task.InstallPath, InstallSpecial). A virtual
// fd there is gone (the install replaced it); an anchor there is lost and its file
// is anchored again at the next open.
func (fc *FileCache) FdInstalled(t *sim.Task, fd int) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	p := fc.proc(t)
	s := p.slot(fd)
	if s.st == sHidden {
		for f, a := range p.anchors {
			if a == fd {
				delete(p.anchors, f)
			}
		}
	}
	p.drop(s)
	*s = fdSlot{st: sReal}
}

package replay

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"iosim/interposer"
	"iosim/sim"
	"iosim/strace"
	"iosim/vfs"
)

// maxBuf bounds the buffer one replayed call may claim: a hostile trace's read of
// 2^40 bytes is not allocated.
const maxBuf = 256 << 20

// readSlack is how much larger than the recorded result a read's buffer is.
const readSlack = 64 << 10

// nameInfo caches, per syscall name, its number and summary row.
type nameInfo struct {
	nr    sim.Sysno
	known bool
	stats *SyscallStats
}

// stats returns the summary row of a syscall name.
func (r *replayer) stats(name string) *SyscallStats {
	s := r.report.Syscalls[name]
	if s == nil {
		s = &SyscallStats{}
		r.report.Syscalls[name] = s
	}
	return s
}

// event replays one trace event.
func (r *replayer) event(ev *strace.Event) {
	switch ev.Kind {
	case strace.KindSyscall:
		r.report.Calls++
		r.syscall(ev)
	case strace.KindExit:
		if t := r.tasks[ev.Pid]; t != nil && !t.Exited() {
			r.k.Syscall(sim.Call{Nr: sim.SYS_EXIT, Task: t})
		}
	case strace.KindKilled:
		if t := r.tasks[ev.Pid]; t != nil && !t.Exited() {
			r.k.Syscall(sim.Call{Nr: sim.SYS_EXIT_GROUP, Task: t})
		}
	}
}

// task returns the simulated task of a traced tid, creating it (and its parents)
// as the plan says: a thread shares its creator's fd table, a child process gets a
// copy; a task with no known creator is a process of its own, started with the
// inherited fds 0, 1 and 2.
func (r *replayer) task(tid int, ev *strace.Event) *sim.Task {
	if t := r.tasks[tid]; t != nil {
		return t
	}
	var t *sim.Task
	if parent, thread, ok := r.plan.parentOf(tid, ev); ok && parent != tid {
		pt := r.task(parent, ev)
		var err error
		if thread {
			t, err = pt.Clone(tid)
		} else {
			t, err = pt.Fork(tid)
		}
		if err != nil {
			t = nil
		}
	}
	if t == nil {
		var err error
		t, err = r.k.SpawnPid(tid)
		if err != nil {
			t, _ = r.k.SpawnPid(0)
		}
		r.k.Syscall(sim.Call{Nr: sim.SYS_CHDIR, Task: t, Path: r.world.cwd})
		r.installSpecial(t, 0, sim.DevNull{}, syscall.O_RDWR)
		r.installSpecial(t, 1, &sim.Placeholder{Kind: vfs.S_IFREG}, syscall.O_WRONLY|syscall.O_APPEND)
		r.installSpecial(t, 2, &sim.Placeholder{Kind: vfs.S_IFREG}, syscall.O_WRONLY|syscall.O_APPEND)
	}
	r.tasks[tid] = t
	r.report.Processes++
	return t
}

func isRestart(name string) bool { return strings.HasPrefix(name, "ERESTART") }

// syscall replays one system call event.
func (r *replayer) syscall(ev *strace.Event) {
	info := r.names[ev.Name]
	if info == nil {
		info = &nameInfo{stats: r.stats(ev.Name)}
		info.nr, info.known = sim.SysnoByName(ev.Name)
		r.names[ev.Name] = info
	}
	st := info.stats
	st.Calls++
	if ev.Failed() {
		st.Errors++
	}
	nr, ok := info.nr, info.known
	if !ok {
		r.report.NotModelled[ev.Name]++
		return
	}
	t := r.task(ev.Pid, ev)
	switch nr {
	case sim.SYS_CLONE, sim.SYS_CLONE3, sim.SYS_FORK, sim.SYS_VFORK:
		if ev.RetKnown && ev.Ret > 0 && !ev.Failed() {
			r.task(int(ev.Ret), ev)
		}
		r.report.Replayed++
		return
	case sim.SYS_EXECVE, sim.SYS_EXECVEAT:
		if ev.RetKnown && ev.Ret == 0 && !ev.Failed() {
			r.top.Syscall(sim.Call{Nr: nr, Task: t})
		}
		r.report.Replayed++
		return
	case sim.SYS_EXIT, sim.SYS_EXIT_GROUP:
		// The task ends at its `+++ exited +++` line; exit_group ends the others.
		if nr == sim.SYS_EXIT_GROUP {
			r.k.Syscall(sim.Call{Nr: nr, Task: t})
		}
		r.report.Replayed++
		return
	}
	if s, _ := sim.SupportOf(nr); s == sim.NotModelled {
		r.report.NotModelled[ev.Name]++
		r.unmodelledFds(t, nr, ev)
		return
	}
	if ev.Injected {
		// strace's own fault injection: the kernel never ran the call.
		r.report.Replayed++
		return
	}
	r.replay(t, nr, ev)
}

// unmodelledFds installs placeholders for the fds that calls the model does not
// simulate (sockets, pipes, eventfds, epoll) return, so that later fd numbers
// come out as recorded.
func (r *replayer) unmodelledFds(t *sim.Task, nr sim.Sysno, ev *strace.Event) {
	if !ev.RetKnown || ev.Failed() {
		return
	}
	switch nr {
	case sim.SYS_SOCKET, sim.SYS_ACCEPT, sim.SYS_ACCEPT4, sim.SYS_EVENTFD, sim.SYS_EVENTFD2,
		sim.SYS_EPOLL_CREATE, sim.SYS_EPOLL_CREATE1, sim.SYS_TIMERFD_CREATE, sim.SYS_SIGNALFD4,
		sim.SYS_INOTIFY_INIT, sim.SYS_INOTIFY_INIT1, sim.SYS_MEMFD_CREATE, sim.SYS_PIDFD_OPEN:
		if ev.Ret >= 0 {
			r.placeholder(t, int(ev.Ret), syscall.O_RDWR, vfs.S_IFSOCK)
		}
	case sim.SYS_PIPE, sim.SYS_PIPE2, sim.SYS_SOCKETPAIR:
		idx := 0
		if nr == sim.SYS_SOCKETPAIR {
			idx = 3
		}
		flags := 0
		if nr == sim.SYS_PIPE2 {
			if v, ok := ev.Int(1); ok && v&syscall.O_CLOEXEC != 0 {
				flags = syscall.O_CLOEXEC
			}
		}
		arr := ev.Arg(idx)
		var fds []int
		if arr != nil && arr.Kind == strace.NodeArray {
			for i := range arr.Kids {
				if v, ok := arr.Kids[i].Value(); ok {
					fds = append(fds, int(v))
				}
			}
		}
		if len(fds) < 2 { // not shown (-s 0): the kernel took the lowest free fds
			fds = []int{lowestFree(t, 0), 0}
			r.placeholder(t, fds[0], flags|syscall.O_RDONLY, vfs.S_IFIFO)
			fds[1] = lowestFree(t, 0)
		}
		r.placeholder(t, fds[0], flags|syscall.O_RDONLY, vfs.S_IFIFO)
		r.placeholder(t, fds[1], flags|syscall.O_WRONLY, vfs.S_IFIFO)
	}
}

func (r *replayer) placeholder(t *sim.Task, fd, flags int, kind uint32) {
	r.installSpecial(t, fd, &sim.Placeholder{Kind: kind}, flags)
}

// installSpecial puts a special object at fd of t's process, outside the stack,
// and tells the stack's layers that keep a model of the fd table.
func (r *replayer) installSpecial(t *sim.Task, fd int, s sim.Special, flags int) {
	if t.InstallSpecial(fd, s, flags) == nil {
		interposer.NotifyInstalled(r.top, t, fd)
	}
}

// installPath opens path at fd of t's process, outside the stack (see
// installSpecial).
func (r *replayer) installPath(t *sim.Task, fd int, path string, flags int) error {
	err := t.InstallPath(fd, path, flags, 0)
	if err == nil {
		interposer.NotifyInstalled(r.top, t, fd)
	}
	return err
}

// lowestFree returns the lowest fd >= min not open in t's process.
func lowestFree(t *sim.Task, min int) int {
	fd := min
	for _, o := range t.FDs() {
		if o < fd {
			continue
		}
		if o != fd {
			break
		}
		fd++
	}
	return fd
}

// fdArgs says which arguments of a call are fds (fd) and which are "at" dirfds (at,
// used only with a relative path).
func fdArgs(nr sim.Sysno) (fd int, at int, at2 int) {
	fd, at, at2 = -1, -1, -1
	switch nr {
	case sim.SYS_READ, sim.SYS_WRITE, sim.SYS_PREAD64, sim.SYS_PWRITE64, sim.SYS_READV, sim.SYS_WRITEV,
		sim.SYS_PREADV, sim.SYS_PWRITEV, sim.SYS_PREADV2, sim.SYS_PWRITEV2, sim.SYS_LSEEK, sim.SYS_FCNTL,
		sim.SYS_FLOCK, sim.SYS_DUP, sim.SYS_DUP2, sim.SYS_DUP3, sim.SYS_FSYNC, sim.SYS_FDATASYNC,
		sim.SYS_SYNCFS, sim.SYS_SYNC_FILE_RANGE, sim.SYS_FTRUNCATE, sim.SYS_FALLOCATE, sim.SYS_FSTAT,
		sim.SYS_GETDENTS64, sim.SYS_GETDENTS, sim.SYS_FCHDIR, sim.SYS_FCHMOD, sim.SYS_FCHOWN,
		sim.SYS_FADVISE64, sim.SYS_READAHEAD, sim.SYS_CLOSE:
		fd = 0
	case sim.SYS_OPENAT, sim.SYS_NEWFSTATAT, sim.SYS_STATX, sim.SYS_FACCESSAT, sim.SYS_FACCESSAT2,
		sim.SYS_UNLINKAT, sim.SYS_MKDIRAT, sim.SYS_READLINKAT, sim.SYS_FCHMODAT, sim.SYS_FCHOWNAT,
		sim.SYS_UTIMENSAT:
		at = 0
	case sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2, sim.SYS_LINKAT:
		at, at2 = 0, 2
	case sim.SYS_SYMLINKAT:
		at = 1
	case sim.SYS_MMAP:
		fd = 4
	case sim.SYS_COPY_FILE_RANGE, sim.SYS_SENDFILE:
		fd = 0
	}
	return
}

// secondFd returns the index of a call's second fd argument, or -1.
func secondFd(nr sim.Sysno) int {
	switch nr {
	case sim.SYS_COPY_FILE_RANGE:
		return 2
	case sim.SYS_SENDFILE:
		return 1
	}
	return -1
}

// onPlaceholderPassThrough lists the calls that operate on the fd table itself and
// so go to the kernel even when the fd is a placeholder.
func fdTableCall(nr sim.Sysno) bool {
	switch nr {
	case sim.SYS_CLOSE, sim.SYS_DUP, sim.SYS_DUP2, sim.SYS_DUP3, sim.SYS_FCNTL:
		return true
	}
	return false
}

// replay builds the call of ev, prepares the world it needs, runs it through the
// stack and compares the result.
func (r *replayer) replay(t *sim.Task, nr sim.Sysno, ev *strace.Event) {
	recErr := ev.Errno
	fdIdx, atIdx, at2Idx := fdArgs(nr)
	for _, i := range []int{fdIdx, secondFd(nr)} {
		if i < 0 {
			continue
		}
		if fd, ok := ev.Int(i); ok && !(nr == sim.SYS_MMAP && fd < 0) {
			r.ensureFd(t, ev, i, int(fd))
			if f := t.File(int(fd)); f != nil && f.Special() != nil && !fdTableCall(nr) {
				if _, isPH := f.Special().(*sim.Placeholder); isPH {
					// Not a file of the model: the recording is the answer.
					r.report.Replayed++
					return
				}
			}
		}
	}
	for _, i := range []int{atIdx, at2Idx} {
		if i < 0 {
			continue
		}
		if fd, ok := ev.Int(i); ok && fd >= 0 {
			r.ensureFd(t, ev, i, int(fd))
			if p, pok := pathArg(ev, i+1); pok && p == "" {
				// An AT_EMPTY_PATH call on the fd itself.
				if f := t.File(int(fd)); f != nil && f.Special() != nil {
					if _, isPH := f.Special().(*sim.Placeholder); isPH {
						r.report.Replayed++
						return
					}
				}
			}
		}
	}

	c := sim.Call{Nr: nr, Task: t}
	var post func(res sim.Result)
	if err := r.build(t, nr, ev, &c, &post); err != "" {
		key := ev.Name + " (" + err + ")"
		r.report.NotModelled[key]++
		return
	}
	r.cur, r.curPos = nil, 0
	if fdIdx == 0 && len(c.Args) > 0 {
		if f := t.File(int(c.Args[0])); f != nil && f.Inode() != nil {
			r.cur, r.curPos = f, r.recPos(f)
		}
	}
	if !r.world.before(t, nr, ev, &c) {
		r.report.Replayed++
		return
	}
	res := r.top.Syscall(c)
	r.report.Replayed++
	if res.Errno == 0 && res.Ret > 0 {
		switch nr {
		case sim.SYS_READ, sim.SYS_WRITE, sim.SYS_PREAD64, sim.SYS_PWRITE64, sim.SYS_READV, sim.SYS_WRITEV, sim.SYS_PREADV, sim.SYS_PWRITEV:
			r.stats(ev.Name).Bytes += res.Ret
		}
	}
	r.world.after(t, nr, ev, &c, res)
	if post != nil {
		post(res)
	}
	if r.opts.Verify && ev.RetKnown && !isRestart(ev.ErrnoName) {
		r.verify(t, nr, ev, &c, res, recErr)
	}
	r.learn(nr, ev, &c)
	r.advance(nr, ev)
	if (nr == sim.SYS_OPEN || nr == sim.SYS_OPENAT || nr == sim.SYS_CREAT) && ev.RetKnown && ev.Ret >= 0 && !ev.Failed() {
		// The recorded program has a new description at offset 0, whatever an
		// interposer handed out.
		if f := t.File(int(ev.Ret)); f != nil {
			r.pos[f] = 0
		}
	}
}

// recPos returns the offset of an open file description as the recorded program
// had it. It follows the recorded results (a read of n bytes moves it by n, lseek
// sets it), so it stays right when an interposer serves calls without the kernel
// seeing them; a description it has not followed yet starts at the model's offset.
func (r *replayer) recPos(f *sim.File) int64 {
	if p, ok := r.pos[f]; ok {
		return p
	}
	return f.Offset()
}

// advance moves the recorded offset of the current call's description.
func (r *replayer) advance(nr sim.Sysno, ev *strace.Event) {
	f := r.cur
	if f == nil || !ev.RetKnown || ev.Failed() {
		if nr == sim.SYS_CLOSE && f != nil {
			delete(r.pos, f)
		}
		return
	}
	switch nr {
	case sim.SYS_READ, sim.SYS_READV:
		r.pos[f] = r.curPos + ev.Ret
	case sim.SYS_WRITE, sim.SYS_WRITEV:
		if f.Flags()&syscall.O_APPEND != 0 {
			r.pos[f] = f.Inode().Size()
		} else {
			r.pos[f] = r.curPos + ev.Ret
		}
	case sim.SYS_LSEEK:
		r.pos[f] = ev.Ret
	case sim.SYS_CLOSE:
		delete(r.pos, f)
	}
}

// learn writes into the model the bytes a recorded read shows where the model's
// content is unknown (written by the trace with strace's -s cutting the string):
// the recording says what the file held there, and later reads are checked
// against it. Known bytes are never overwritten.
func (r *replayer) learn(nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	f := r.cur
	if f == nil || (nr != sim.SYS_READ && nr != sim.SYS_PREAD64) || !ev.RetKnown || ev.Failed() || ev.Ret <= 0 {
		return
	}
	ino := f.Inode()
	spans := r.world.unknown[ino.Ino()]
	if len(spans) == 0 {
		return
	}
	start := r.curPos
	if nr == sim.SYS_PREAD64 {
		start = c.Args[3]
	}
	b := shown(ev, 1)
	b = b[:min(int64(len(b)), ev.Ret)]
	end := start + int64(len(b))
	if !overlaps(spans, start, end) {
		return
	}
	for _, u := range spans {
		x, y := max(u.off, start), min(u.end, end)
		if x < y {
			_, _ = ino.WriteAt(b[x-start:y-start], x)
		}
	}
	r.world.unknown[ino.Ino()] = cut(spans, start, end)
}

// ensureFd makes fd exist in t's process when the recording used it successfully
// but the model never saw it opened: inherited fds, fds of a trace attached with -p.
func (r *replayer) ensureFd(t *sim.Task, ev *strace.Event, idx, fd int) {
	if fd < 0 || t.File(fd) != nil || ev.Errno == syscall.EBADF || !ev.RetKnown {
		return
	}
	if r.plan.created(ev, fd) {
		return // the trace made this fd itself: its absence is the model's
	}
	n := ev.Arg(idx)
	if n != nil && n.Kind == strace.NodeFd && len(n.Text) > 0 && !isExternalDecoration(string(n.Text)) && !n.Deleted {
		p := string(n.Text)
		kind := uint32(vfs.S_IFREG)
		if ev.Name == "getdents64" || ev.Name == "fchdir" || idx != 0 || (idx == 0 && ev.Name != "" && strings.HasSuffix(ev.Name, "at") && ev.Name != "openat") {
			kind = vfs.S_IFDIR
		}
		r.world.ensure(p, kind, "")
		flags := syscall.O_RDWR
		if kind == vfs.S_IFDIR {
			flags = syscall.O_RDONLY | syscall.O_DIRECTORY
		}
		if err := r.installPath(t, fd, p, flags); err == syscall.EISDIR {
			_ = r.installPath(t, fd, p, syscall.O_RDONLY)
		}
		if t.File(fd) != nil {
			return
		}
	}
	kind := uint32(vfs.S_IFSOCK)
	if n != nil && n.Kind == strace.NodeFd && strings.HasPrefix(string(n.Text), "pipe:") {
		kind = vfs.S_IFIFO
	}
	r.placeholder(t, fd, syscall.O_RDWR, kind)
}

// intArg returns argument i as an integer.
func intArg(ev *strace.Event, i int) (int64, bool) { return ev.Int(i) }

// pathArg returns argument i as a path ("" for NULL).
func pathArg(ev *strace.Event, i int) (string, bool) {
	n := ev.Arg(i)
	if n == nil {
		return "", false
	}
	if n.Kind == strace.NodeIdent && string(n.Text) == "NULL" {
		return "", true
	}
	if n.Kind == strace.NodeInt && n.Int == 0 {
		return "", true
	}
	b, trunc, ok := ev.Str(i)
	if !ok || trunc {
		return "", false
	}
	return string(b), true
}

// offsetArg returns a loff_t* argument: NULL is sim.NullOffset, `[N]` and
// `[N] => [M]` give N (the value on entry).
func offsetArg(ev *strace.Event, i int) (int64, bool) {
	n := ev.Arg(i)
	if n == nil {
		return 0, false
	}
	if n.Kind == strace.NodeInOut && len(n.Kids) > 0 {
		n = &n.Kids[0]
	}
	switch {
	case n.Kind == strace.NodeIdent && string(n.Text) == "NULL", n.Kind == strace.NodeInt && n.Int == 0:
		return sim.NullOffset, true
	case n.Kind == strace.NodeArray && len(n.Kids) == 1:
		return n.Kids[0].Value()
	}
	return 0, false
}

// scratch returns a buffer of n bytes, reused across calls.
func (r *replayer) scratch(n int64) []byte {
	if int64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	b := r.buf[:n]
	clear(b)
	return b
}

// shown returns the bytes a call's buffer argument i shows: the hex dump that
// `-e write=`/`-e read=` adds when there is one (it has every byte), else the
// string, which -s may have cut.
func shown(ev *strace.Event, i int) []byte {
	if len(ev.Dump) > 0 {
		return ev.Dump
	}
	b, _, _ := ev.Str(i)
	return b
}

// dataArg returns the bytes of a write: what the trace shows, padded with zeros to
// count when strace cut the string.
func dataArg(ev *strace.Event, i int, count int64) []byte {
	b := shown(ev, i)
	if int64(len(b)) >= count {
		return bytes.Clone(b[:count])
	}
	out := make([]byte, count)
	copy(out, b)
	return out
}

// build fills c from ev. It returns a short reason when the call cannot be rebuilt
// from what the trace shows.
func (r *replayer) build(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, post *func(sim.Result)) string {
	ints := func(idx ...int) string {
		for _, i := range idx {
			v, ok := intArg(ev, i)
			if !ok {
				return fmt.Sprintf("arg %d not a number", i+1)
			}
			c.Args[i] = v
		}
		return ""
	}
	path := func(i int, dst *string) string {
		p, ok := pathArg(ev, i)
		if !ok {
			return fmt.Sprintf("arg %d not a path", i+1)
		}
		*dst = p
		return ""
	}
	count := func(i int) (int64, string) {
		n, ok := intArg(ev, i)
		if !ok || n < 0 {
			return 0, fmt.Sprintf("arg %d not a count", i+1)
		}
		if n > maxBuf {
			if ev.RetKnown && ev.Ret >= 0 && ev.Ret <= maxBuf {
				n = ev.Ret
			} else {
				return 0, "buffer too large"
			}
		}
		return n, ""
	}
	switch nr {
	case sim.SYS_READ, sim.SYS_PREAD64:
		n, e := count(2)
		if e != "" {
			return e
		}
		c.Args[2] = n
		if lim := (ev.Ret + readSlack + 4095) &^ 4095; ev.RetKnown && ev.Ret >= 0 && n > lim {
			// The buffer need not be larger than what was read plus some: a
			// model that would read more still shows it (it fills the slack).
			// Kept a multiple of 4096, so O_DIRECT alignment is unchanged.
			n = lim
		}
		c.Buf = r.scratch(n)
		if nr == sim.SYS_PREAD64 {
			return ints(0, 3)
		}
		return ints(0)
	case sim.SYS_WRITE, sim.SYS_PWRITE64:
		n, e := count(2)
		if e != "" {
			return e
		}
		c.Args[2] = n
		c.Buf = dataArg(ev, 1, n)
		if nr == sim.SYS_PWRITE64 {
			return ints(0, 3)
		}
		return ints(0)
	case sim.SYS_READV, sim.SYS_WRITEV, sim.SYS_PREADV, sim.SYS_PWRITEV:
		arr := ev.Arg(1)
		if arr == nil || arr.Kind != strace.NodeArray {
			return "iovec array not shown"
		}
		c.Iov = c.Iov[:0]
		write := nr == sim.SYS_WRITEV || nr == sim.SYS_PWRITEV
		total := int64(0)
		for k := range arr.Kids {
			el := &arr.Kids[k]
			if el.Kind == strace.NodeEllipsis {
				return "iovec array cut"
			}
			ln := el.Field("iov_len")
			if ln == nil {
				return "iov_len not shown"
			}
			n, ok := ln.Value()
			if !ok || n < 0 || total+n > maxBuf {
				return "bad iov_len"
			}
			total += n
			buf := make([]byte, n)
			if write {
				if base := el.Field("iov_base"); base != nil && base.Kind == strace.NodeStr {
					copy(buf, base.Text)
				}
			}
			c.Iov = append(c.Iov, buf)
		}
		if nr == sim.SYS_PREADV || nr == sim.SYS_PWRITEV {
			return ints(0, 2, 3)
		}
		return ints(0, 2)
	case sim.SYS_OPEN:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		c.Args[2] = 0
		if ev.NArgs() > 2 {
			return ints(1, 2)
		}
		return ints(1)
	case sim.SYS_OPENAT:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		if ev.NArgs() > 3 {
			return ints(0, 2, 3)
		}
		return ints(0, 2)
	case sim.SYS_CREAT:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		return ints(1)
	case sim.SYS_CLOSE, sim.SYS_DUP, sim.SYS_FSYNC, sim.SYS_FDATASYNC, sim.SYS_SYNCFS, sim.SYS_FCHDIR:
		return ints(0)
	case sim.SYS_SYNC:
		return ""
	case sim.SYS_LSEEK, sim.SYS_DUP3:
		return ints(0, 1, 2)
	case sim.SYS_DUP2, sim.SYS_FTRUNCATE, sim.SYS_FLOCK, sim.SYS_FCHMOD, sim.SYS_UMASK:
		if nr == sim.SYS_UMASK {
			return ints(0)
		}
		return ints(0, 1)
	case sim.SYS_FCHOWN:
		return ints(0, 1, 2)
	case sim.SYS_FALLOCATE, sim.SYS_SYNC_FILE_RANGE:
		return ints(0, 1, 2, 3)
	case sim.SYS_FADVISE64:
		return ints(0, 1, 2, 3)
	case sim.SYS_FCNTL:
		if e := ints(0, 1); e != "" {
			return e
		}
		switch c.Args[1] {
		case unix.F_GETLK, unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_GETLK, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
			lk := &unix.Flock_t{}
			n := ev.Arg(2)
			if n == nil || n.Kind != strace.NodeStruct {
				return "flock struct not shown"
			}
			for _, f := range []struct {
				name string
				dst  func(int64)
			}{
				{"l_type", func(v int64) { lk.Type = int16(v) }},
				{"l_whence", func(v int64) { lk.Whence = int16(v) }},
				{"l_start", func(v int64) { lk.Start = v }},
				{"l_len", func(v int64) { lk.Len = v }},
				{"l_pid", func(v int64) { lk.Pid = int32(v) }},
			} {
				if fld := n.Field(f.name); fld != nil {
					if v, ok := fld.Value(); ok {
						f.dst(v)
					}
				}
			}
			if (c.Args[1] == unix.F_GETLK || c.Args[1] == unix.F_OFD_GETLK) && lk.Type == unix.F_UNLCK {
				// strace shows F_GETLK's struct as the call left it: F_UNLCK means
				// "no conflict" for a probe that asked with a lock type, which the
				// trace does not keep. Probe for the strongest.
				lk.Type = unix.F_WRLCK
			}
			c.Obj = lk
			return ""
		case unix.F_GETFD, unix.F_GETFL:
			return ""
		}
		return ints(2)
	case sim.SYS_FSTAT:
		c.Obj = &unix.Stat_t{}
		return ints(0)
	case sim.SYS_STAT, sim.SYS_LSTAT:
		c.Obj = &unix.Stat_t{}
		return path(0, &c.Path)
	case sim.SYS_NEWFSTATAT:
		c.Obj = &unix.Stat_t{}
		if e := path(1, &c.Path); e != "" {
			return e
		}
		return ints(0, 3)
	case sim.SYS_STATX:
		c.Obj = &unix.Statx_t{}
		if e := path(1, &c.Path); e != "" {
			return e
		}
		return ints(0, 2, 3)
	case sim.SYS_ACCESS:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		return ints(1)
	case sim.SYS_FACCESSAT, sim.SYS_FACCESSAT2:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		if nr == sim.SYS_FACCESSAT2 {
			return ints(0, 2, 3)
		}
		return ints(0, 2)
	case sim.SYS_UNLINK, sim.SYS_RMDIR, sim.SYS_CHDIR:
		return path(0, &c.Path)
	case sim.SYS_UNLINKAT:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		return ints(0, 2)
	case sim.SYS_RENAME, sim.SYS_LINK:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		return path(1, &c.Path2)
	case sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2, sim.SYS_LINKAT:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		if e := path(3, &c.Path2); e != "" {
			return e
		}
		if nr == sim.SYS_RENAMEAT {
			return ints(0, 2)
		}
		return ints(0, 2, 4)
	case sim.SYS_SYMLINK:
		if e := path(0, &c.Path2); e != "" {
			return e
		}
		return path(1, &c.Path)
	case sim.SYS_SYMLINKAT:
		if e := path(0, &c.Path2); e != "" {
			return e
		}
		if e := path(2, &c.Path); e != "" {
			return e
		}
		return ints(1)
	case sim.SYS_READLINK, sim.SYS_READLINKAT:
		pi, si := 0, 2
		if nr == sim.SYS_READLINKAT {
			pi, si = 1, 3
			if e := ints(0); e != "" {
				return e
			}
		}
		if e := path(pi, &c.Path); e != "" {
			return e
		}
		n, e := count(si)
		if e != "" {
			return e
		}
		c.Args[si] = n
		c.Buf = r.scratch(n)
		return ""
	case sim.SYS_MKDIR:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		return ints(1)
	case sim.SYS_MKDIRAT:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		return ints(0, 2)
	case sim.SYS_TRUNCATE:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		return ints(1)
	case sim.SYS_CHMOD:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		return ints(1)
	case sim.SYS_FCHMODAT:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		if ev.NArgs() > 3 {
			return ints(0, 2, 3)
		}
		return ints(0, 2)
	case sim.SYS_CHOWN, sim.SYS_LCHOWN:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		return ints(1, 2)
	case sim.SYS_FCHOWNAT:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		return ints(0, 2, 3, 4)
	case sim.SYS_UTIMENSAT:
		if e := path(1, &c.Path); e != "" {
			return e
		}
		if n := ev.Arg(1); n != nil && (n.Kind == strace.NodeIdent || n.Kind == strace.NodeInt) {
			c.Args[1] = sim.PathNull // utimensat(fd, NULL, ...): futimens
		}
		if n := ev.Arg(2); n != nil && n.Kind == strace.NodeArray && len(n.Kids) == 2 {
			ts := &[2]unix.Timespec{}
			for k := range 2 {
				el := &n.Kids[k]
				if el.Kind == strace.NodeIdent {
					switch string(el.Text) {
					case "UTIME_NOW":
						ts[k].Nsec = unix.UTIME_NOW
					case "UTIME_OMIT":
						ts[k].Nsec = unix.UTIME_OMIT
					}
					continue
				}
				if s := el.Field("tv_sec"); s != nil {
					v, _ := s.Value()
					ts[k].Sec = v
				}
				if s := el.Field("tv_nsec"); s != nil {
					v, ok := s.Value()
					if !ok && s.Kind == strace.NodeIdent {
						switch string(s.Text) {
						case "UTIME_NOW":
							v = unix.UTIME_NOW
						case "UTIME_OMIT":
							v = unix.UTIME_OMIT
						}
					}
					ts[k].Nsec = v
				}
			}
			c.Obj = ts
		}
		return ints(0, 3)
	case sim.SYS_GETDENTS64, sim.SYS_GETDENTS:
		n, e := count(2)
		if e != "" {
			return e
		}
		c.Args[2] = n
		c.Buf = r.scratch(n)
		return ints(0)
	case sim.SYS_GETCWD:
		n, e := count(1)
		if e != "" {
			return e
		}
		c.Args[1] = n
		c.Buf = r.scratch(n)
		return ""
	case sim.SYS_MMAP:
		if e := ints(1, 2, 3, 4, 5); e != "" {
			return e
		}
		if c.Args[3]&unix.MAP_ANONYMOUS != 0 || c.Args[4] < 0 {
			return "anonymous memory"
		}
		if c.Args[3]&unix.MAP_FIXED != 0 {
			return "fixed address"
		}
		var mapped []byte
		c.Obj = &mapped
		return ""
	case sim.SYS_COPY_FILE_RANGE, sim.SYS_SENDFILE:
		offs := []int{1, 3}
		if nr == sim.SYS_SENDFILE {
			offs = []int{2}
		}
		for _, i := range offs {
			v, ok := offsetArg(ev, i)
			if !ok {
				return fmt.Sprintf("arg %d not an offset", i+1)
			}
			c.Args[i] = v
		}
		if nr == sim.SYS_SENDFILE {
			return ints(0, 1, 3)
		}
		if e := ints(0, 2, 4, 5); e != "" {
			return e
		}
		in, out := int(c.Args[0]), int(c.Args[2])
		*post = func(sim.Result) {
			// The calls move file offsets that recPos does not follow.
			for _, fd := range []int{in, out} {
				if f := t.File(fd); f != nil {
					delete(r.pos, f)
				}
			}
		}
		return ""
	case sim.SYS_MUNMAP, sim.SYS_MSYNC, sim.SYS_MPROTECT, sim.SYS_MADVISE:
		return "address not replayed"
	case sim.SYS_IO_SETUP:
		var ctx sim.AioContext
		c.Obj = &ctx
		if e := ints(0); e != "" {
			return e
		}
		*post = func(res sim.Result) {
			if res.Errno != 0 {
				return
			}
			if n := ev.Arg(1); n != nil && n.Kind == strace.NodeArray && len(n.Kids) == 1 {
				if v, ok := n.Kids[0].Value(); ok {
					r.aioCtx[uint64(v)] = uint64(ctx)
				}
			}
		}
		return ""
	case sim.SYS_IO_DESTROY:
		if e := ints(0); e != "" {
			return e
		}
		c.Args[0] = int64(r.aioCtx[uint64(c.Args[0])])
		return ""
	case sim.SYS_IO_SUBMIT:
		if e := ints(0, 1); e != "" {
			return e
		}
		c.Args[0] = int64(r.aioCtx[uint64(c.Args[0])])
		arr := ev.Arg(2)
		if arr == nil || arr.Kind != strace.NodeArray {
			return "iocb array not shown"
		}
		var cbs []*sim.Iocb
		for k := range arr.Kids {
			el := &arr.Kids[k]
			if el.Kind != strace.NodeStruct {
				return "iocb not shown"
			}
			cb := &sim.Iocb{}
			get := func(name string) int64 {
				if f := el.Field(name); f != nil {
					v, _ := f.Value()
					return v
				}
				return 0
			}
			cb.Data = uint64(get("aio_data"))
			cb.Opcode = uint16(get("aio_lio_opcode"))
			cb.Fd = uint32(get("aio_fildes"))
			cb.Offset = get("aio_offset")
			n := get("aio_nbytes")
			if n < 0 || n > maxBuf {
				return "bad aio_nbytes"
			}
			cb.Buf = make([]byte, n)
			if b := el.Field("aio_buf"); b != nil && b.Kind == strace.NodeStr && cb.Opcode == sim.IOCB_CMD_PWRITE {
				copy(cb.Buf, b.Text)
			}
			cbs = append(cbs, cb)
		}
		c.Obj = cbs
		return ""
	case sim.SYS_IO_GETEVENTS:
		if e := ints(0, 1, 2); e != "" {
			return e
		}
		c.Args[0] = int64(r.aioCtx[uint64(c.Args[0])])
		if ev.RetKnown && ev.Ret >= 0 && ev.Ret < c.Args[2] {
			// How many completions one call returns is the kernel's choice:
			// follow the recording.
			c.Args[2] = max(ev.Ret, c.Args[1])
		}
		if c.Args[2] < 0 || c.Args[2] > 1<<16 {
			return "bad nr"
		}
		c.Obj = make([]sim.IoEvent, c.Args[2])
		return ""
	}
	return "not replayed"
}

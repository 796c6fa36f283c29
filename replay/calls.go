package replay

import (
	"syscall"

	"golang.org/x/sys/unix"

	"iosim/sim"
	"iosim/strace"
)

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
		sim.SYS_FADVISE64, sim.SYS_READAHEAD, sim.SYS_CLOSE, sim.SYS_FSETXATTR, sim.SYS_FREMOVEXATTR:
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
// stack and compares the result. st is the summary row of the call's name.
func (r *replayer) replay(t *sim.Task, nr sim.Sysno, ev *strace.Event, st *SyscallStats) {
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

	if nr == sim.SYS_MUNMAP && !ev.Failed() && len(r.world.maps) > 0 {
		if addr, ok := ev.Int(0); ok {
			if n, ok := ev.Int(1); ok {
				r.world.unmapped(t.Group(), uint64(addr), uint64(n))
			}
		}
	}
	c := sim.Call{Nr: nr, Task: t}
	var post func(res sim.Result)
	if err := r.build(t, nr, ev, &c, &post); err != "" {
		key := ev.Name + " (" + err + ")"
		r.report.Skipped[key]++
		if (err == valueNotShown && c.Path2 == "system.posix_acl_access" || err == nameNotShown) &&
			(nr == sim.SYS_SETXATTR || nr == sim.SYS_LSETXATTR || nr == sim.SYS_FSETXATTR) && !ev.Failed() {
			r.world.aclNotShown(t, nr, &c)
		}
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
	if recErr == syscall.EBADF && fdIdx >= 0 && !r.badAccess(t, nr, c.Args[fdIdx]) {
		// The fd is gone in the trace: in a trace of some calls, by an exec
		// it does not show, which the model runs first (hiddenExec).
		r.hiddenExec(t, c.Args[fdIdx])
	}
	if r.timer != nil {
		r.timer.recorded(ev)
	}
	res := r.top.Syscall(c)
	r.report.Replayed++
	if res.Errno == 0 && res.Ret > 0 {
		switch nr {
		case sim.SYS_READ, sim.SYS_WRITE, sim.SYS_PREAD64, sim.SYS_PWRITE64, sim.SYS_READV, sim.SYS_WRITEV,
			sim.SYS_PREADV, sim.SYS_PWRITEV, sim.SYS_PREADV2, sim.SYS_PWRITEV2:
			st.Bytes += res.Ret
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

// badAccess reports whether the model has fd open in a way that makes the
// call nr fail with EBADF by itself: a read of an fd opened O_WRONLY, a write
// or truncation of one opened O_RDONLY, most calls on an O_PATH fd.
func (r *replayer) badAccess(t *sim.Task, nr sim.Sysno, fd int64) bool {
	fl := r.k.Syscall(sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{fd, syscall.F_GETFL}})
	if fl.Errno != 0 {
		return false // not open in the model either
	}
	const oPath = 0x200000
	if fl.Ret&oPath != 0 {
		return nr != sim.SYS_CLOSE && nr != sim.SYS_FCNTL && nr != sim.SYS_DUP && nr != sim.SYS_DUP2 && nr != sim.SYS_DUP3 && nr != sim.SYS_FSTAT
	}
	switch acc := fl.Ret & syscall.O_ACCMODE; nr {
	case sim.SYS_READ, sim.SYS_PREAD64, sim.SYS_READV, sim.SYS_PREADV, sim.SYS_PREADV2:
		return acc == syscall.O_WRONLY
	case sim.SYS_WRITE, sim.SYS_PWRITE64, sim.SYS_WRITEV, sim.SYS_PWRITEV, sim.SYS_PWRITEV2, sim.SYS_FTRUNCATE, sim.SYS_FALLOCATE:
		return acc == syscall.O_RDONLY
	}
	return false
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
	case sim.SYS_PREADV2, sim.SYS_PWRITEV2:
		// Offset -1 reads or writes at the file offset and moves it: as readv and
		// writev, where RWF_APPEND appends too and RWF_NOAPPEND does not.
		if off, ok := ev.Int(3); !ok || off != -1 {
			return
		}
		rwf, _ := ev.Int(4)
		appends := (f.Flags()&syscall.O_APPEND != 0 || rwf&unix.RWF_APPEND != 0) && rwf&unix.RWF_NOAPPEND == 0
		if nr == sim.SYS_PWRITEV2 && appends {
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
	r.world.keepShared(ino.Ino())
}

package replay

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

// fdArgs says which arguments of a call are fds (fd) and which are "at" dirfds (at,
// at2: used only with a relative path), from the syscall table.
func fdArgs(in *sim.SyscallInfo) (fd int, at int, at2 int) {
	return in.Slot(sim.ArgFd, 0), in.Slot(sim.ArgDirfd, 0), in.Slot(sim.ArgDirfd, 1)
}

// replay builds the call of ev, prepares the world it needs, runs it through the
// stack and compares the result. st is the summary row of the call's name.
func (r *replayer) replay(t *sim.Task, nr sim.Sysno, ev *strace.Event, st *SyscallStats) {
	recErr := ev.Errno
	in := sim.Info(nr)
	fdIdx, atIdx, at2Idx := fdArgs(in)
	for _, i := range []int{fdIdx, in.Slot(sim.ArgFd, 1)} {
		if i < 0 {
			continue
		}
		if fd, ok := ev.Int(i); ok && !(nr == sim.SYS_MMAP && fd < 0) {
			r.ensureFd(t, ev, i, int(fd))
			if f := t.File(int(fd)); f != nil && f.Special() != nil && in.Props&sim.FdTable == 0 {
				// A pipe, FIFO or socketpair of the model passes the data of
				// processes whose calls replay in the order they ended, not as
				// they ran: what its reads and writes moved is the recording's
				// answer too (positional calls still run: ESPIPE).
				ph, isPH := f.Special().(*sim.Placeholder)
				if isPH || sim.IsPipe(f) && in.Props&sim.Data != 0 && in.Slot(sim.ArgOffset, 0) < 0 {
					// Not a file of the model: the recording is the answer.
					r.report.Replayed++
					r.standInShown(t, nr, ev, int(fd))
					if isPH && r.stdouts[ph] && r.opts.Stdout != nil && !ev.Failed() {
						switch nr {
						case sim.SYS_WRITE:
							r.announce(ev)
						case sim.SYS_WRITEV:
							r.announceVec(ev)
						case sim.SYS_COPY_FILE_RANGE, sim.SYS_SENDFILE:
							r.announceCopy(t, nr, ev)
						}
					}
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
						r.standInShown(t, nr, ev, int(fd))
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
	// The Call is lent down the stack from the replayer's slot (see sim.Handler):
	// events are replayed one at a time.
	c := &r.call
	*c = sim.Call{Nr: nr, Task: t}
	var post func(res sim.Result)
	if err := r.build(t, nr, ev, c, &post); err != "" {
		key := ev.Name + " (" + err + ")"
		r.report.Skipped[key]++
		if (err == valueNotShown && c.Path2 == "system.posix_acl_access" || err == nameNotShown) &&
			(nr == sim.SYS_SETXATTR || nr == sim.SYS_LSETXATTR || nr == sim.SYS_FSETXATTR) && !ev.Failed() {
			r.world.aclNotShown(t, nr, c)
		}
		return
	}
	r.relativeUse(t, nr, ev, c)
	r.cur, r.curPos, r.curIno = nil, 0, 0
	if fdIdx == 0 {
		if f := t.File(int(c.Args[0])); f != nil && f.Inode() != nil {
			r.cur, r.curPos, r.curIno = f, r.recPos(f), f.Inode().Ino()
		} else if ino, off, ok := sim.ServedFd(r.top, t, int(c.Args[0])); ok {
			// An fd a layer serves: the file and offset it has for the program.
			r.curPos, r.curIno = off, ino
		}
	}
	if !r.world.before(t, nr, ev, c) {
		r.report.Replayed++
		return
	}
	if recErr == syscall.EBADF && fdIdx >= 0 && !r.badAccess(t, nr, c.Args[fdIdx]) {
		// The fd is gone in the trace: in a trace of some calls, by an exec
		// it does not show, which the model runs first (hiddenExec).
		r.hiddenExec(t, c.Args[fdIdx])
	}
	if r.opts.Unknown != nil {
		if r.world.beforeData(t, nr, ev, c); r.stop != nil {
			return // refused: the call is not run
		}
	}
	if r.timer != nil {
		r.timer.recorded(ev)
	}
	res, crossed := r.world.crossDev(t, nr, c)
	if !crossed {
		res = r.top.Syscall(c)
	}
	r.report.Replayed++
	if res.Errno == 0 && res.Ret > 0 && in.Props&sim.Data != 0 {
		st.Bytes += res.Ret
	}
	r.world.after(t, nr, ev, c, res)
	if post != nil {
		post(res)
	}
	if r.opts.Verify && ev.RetKnown && !isRestart(ev.ErrnoName) {
		r.verify(t, nr, ev, c, res, recErr)
	} else if ev.RetKnown && !ev.Failed() && res.Errno == 0 && res.Ret != ev.Ret && returnsFd(nr, c) {
		// Without --verify too, the program goes on with the fd it got:
		// the later calls on it (a shell's saved stdout) must reach it.
		r.followFd(t, ev, res, false)
	}
	r.learn(nr, ev, c)
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
	fl := r.k.Syscall(&sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{fd, syscall.F_GETFL}})
	if fl.Errno != 0 {
		return false // not open in the model either
	}
	if fl.Ret&unix.O_PATH != 0 {
		return nr != sim.SYS_CLOSE && nr != sim.SYS_FCNTL && nr != sim.SYS_DUP && nr != sim.SYS_DUP2 && nr != sim.SYS_DUP3 && nr != sim.SYS_FSTAT
	}
	switch acc := fl.Ret & syscall.O_ACCMODE; {
	case nr.Is(sim.Reads):
		return acc == syscall.O_WRONLY
	case nr.Is(sim.Writes) || nr == sim.SYS_FTRUNCATE || nr == sim.SYS_FALLOCATE:
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
// against it. Known bytes are never overwritten. A vectored read shows each
// iovec's bytes at its place in the file. Under crash exploration
// (Options.Unknown set) the bytes stay unknown: a write into the model outside
// the program's calls would change what a crash can leave.
func (r *replayer) learn(nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	if !ev.RetKnown || ev.Failed() || ev.Ret <= 0 || r.opts.Unknown != nil {
		return
	}
	// r.curIno: the file the kernel or, for an fd it serves, a layer read.
	if len(r.world.unknown[r.curIno]) == 0 || r.curIno == 0 {
		return
	}
	if !nr.Is(sim.Reads) {
		return
	}
	start := r.curPos
	if nr.Is(sim.Positional) && c.Args[sim.PosSlot] != -1 {
		start = c.Args[sim.PosSlot] // -1: preadv2 at the file offset
	}
	if sim.Info(nr).Slot(sim.ArgOutBuf, 0) >= 0 || len(ev.Dump) > 0 {
		b := shown(ev, 1)
		r.learnAt(start, b[:min(int64(len(b)), ev.Ret)])
		return
	}
	arr := ev.Arg(1)
	if arr == nil || arr.Kind != strace.NodeArray {
		return
	}
	left := ev.Ret
	for k := range arr.Kids {
		el := &arr.Kids[k]
		ln := el.Field("iov_len")
		if el.Kind == strace.NodeEllipsis || ln == nil || left <= 0 {
			return
		}
		n, _ := ln.Value()
		n = min(max(n, 0), left)
		if base := el.Field("iov_base"); base != nil && base.Kind == strace.NodeStr {
			r.learnAt(start, base.Text[:min(int64(len(base.Text)), n)])
		}
		start += n
		left -= n
	}
}

// learnAt writes b, which a read showed at start of file r.curIno, where the
// model's content is unknown.
func (r *replayer) learnAt(start int64, b []byte) {
	spans := r.world.unknown[r.curIno]
	end := start + int64(len(b))
	if !overlaps(spans, start, end) {
		return
	}
	ino := r.world.unknownIno[r.curIno]
	for _, u := range spans {
		x, y := max(u.off, start), min(u.end, end)
		if x < y {
			r.world.writeAt(ino, b[x-start:y-start], x)
		}
	}
	r.world.unknown[ino.Ino()] = cut(spans, start, end)
	r.world.keepShared(ino.Ino())
}

package sim

import (
	"syscall"
)

// copyChunk bounds the buffer one in-kernel copy step uses.
const copyChunk = 1 << 20

// NullOffset stands, in the offset arguments of copy_file_range and sendfile, for a
// NULL pointer: the file offset is used and advanced. Other negative offsets are
// passed as they are and fail as on Linux; the facade passes a pointer to -1 itself
// with a marker in Obj (a Call without it cannot).
const NullOffset = -1

// minusOne, in Obj of a copy_file_range or sendfile Call, says which offset
// arguments point to the value -1: in Args that value is NullOffset (NULL). The
// facade sets it; a Call without it cannot pass -1.
type minusOne struct{ in, out bool }

// offsetArgs reports whether the offset arguments offIn and offOut of a
// copy_file_range or sendfile Call are NULL.
func offsetArgs(c *Call, offIn, offOut int64) (nullIn, nullOut bool) {
	m, _ := c.Obj.(*minusOne)
	if m == nil {
		m = &minusOne{}
	}
	return offIn == NullOffset && !m.in, offOut == NullOffset && !m.out
}

// verifyArea is rw_verify_area's range check: EINVAL for a count over SSIZE_MAX, a
// negative offset or an end past LLONG_MAX (no file of the model has
// FMODE_UNSIGNED_OFFSET).
func verifyArea(pos int64, count uint64) syscall.Errno {
	if int64(count) < 0 || pos < 0 || int64(uint64(pos)+count) < 0 {
		return syscall.EINVAL
	}
	return 0
}

// sysCopyFileRange implements copy_file_range(2) (Args: fd_in, off_in, fd_out,
// off_out, len, flags; an offset of NullOffset means NULL, see minusOne). Errors, in
// the order of SYSCALL_DEFINE6(copy_file_range) and vfs_copy_file_range: EBADF for
// fd_in, then fd_out (fdget: O_PATH too); EINVAL for flags; then
// generic_copy_file_checks: EISDIR for a directory, EINVAL for a file that is not
// regular, EBADF when fd_in is not readable, fd_out not writable or opened
// O_APPEND; EOVERFLOW when an offset plus len wraps (as unsigned 64-bit numbers);
// len cut to the end of fd_in's file; EFBIG for an output offset at or past
// s_maxbytes; EINVAL for overlapping ranges of one file (with the cut len); then
// rw_verify_area: EINVAL for a negative offset. The result is the bytes copied (0
// at end of file); the offsets move by it: a NULL one is the file offset. The model
// copies through the page cache (no reflink).
func (k *Kernel) sysCopyFileRange(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(in *File) Result {
		return c.Task.withFile(int(c.Args[2]), func(out *File) Result { return k.copyFileRange(c, in, out) })
	})
}

// copyFileRange is copy_file_range from in to out, once both fds are looked up.
func (k *Kernel) copyFileRange(c *Call, in, out *File) Result {
	posIn, posOut := c.Args[1], c.Args[3]
	nullIn, nullOut := offsetArgs(c, posIn, posOut)
	if nullIn {
		posIn = in.Offset()
	}
	if nullOut {
		posOut = out.Offset()
	}
	if c.Args[5] != 0 {
		return Fail(syscall.EINVAL)
	}
	// generic_file_rw_checks
	if (in.ino != nil && in.ino.IsDir()) || (out.ino != nil && out.ino.IsDir()) {
		return Fail(syscall.EISDIR)
	}
	if in.ino == nil || out.ino == nil || !in.ino.IsRegular() || !out.ino.IsRegular() {
		return Fail(syscall.EINVAL)
	}
	if !in.readable() || !out.writable() || out.flags.Load()&syscall.O_APPEND != 0 {
		return Fail(syscall.EBADF)
	}
	// generic_copy_file_checks
	count := uint64(c.Args[4]) // size_t len
	if uint64(posIn)+count < uint64(posIn) || uint64(posOut)+count < uint64(posOut) {
		return Fail(syscall.EOVERFLOW)
	}
	if size := in.ino.Size(); posIn >= size {
		count = 0
	} else {
		count = min(count, uint64(size)-uint64(posIn))
	}
	maxBytes := k.fs.MaxFileSize() // generic_write_check_limits
	if posOut >= maxBytes {
		return Fail(syscall.EFBIG)
	}
	count = min(count, uint64(maxBytes)-uint64(posOut))
	if in.ino == out.ino && uint64(posOut)+count > uint64(posIn) && uint64(posOut) < uint64(posIn)+count {
		return Fail(syscall.EINVAL)
	}
	if e := verifyArea(posIn, count); e != 0 {
		return Fail(e)
	}
	if e := verifyArea(posOut, count); e != 0 {
		return Fail(e)
	}
	if count == 0 {
		return Result{}
	}
	r := k.copyData(in, posIn, out, posOut, int64(min(count, maxRW)))
	if r.Ret > 0 {
		if nullIn {
			in.setOffset(posIn + r.Ret)
		}
		if nullOut {
			out.setOffset(posOut + r.Ret)
		}
	}
	return r
}

// sysSendfile implements sendfile(2) (Args: out_fd, in_fd, offset, count; an offset
// of NullOffset means NULL, see minusOne), in the order of do_sendfile: EBADF for
// in_fd (O_PATH too) or one not readable; ESPIPE for an offset on an in_fd without
// pread; rw_verify_area on the input (EINVAL for a negative offset or count, or an
// end past LLONG_MAX); EBADF for out_fd or one not writable; EOVERFLOW for an offset
// at or past s_maxbytes (count is cut there); then do_splice_direct: EINVAL when
// out_fd was opened O_APPEND, then 0 for a zero count, then EINVAL when in_fd is
// not a regular file. out_fd may be anything writable (a placeholder stands for a
// socket or a pipe). The positions are read before the copy and stored after it,
// out_fd's first: with an offset, in_fd's file offset does not move.
func (k *Kernel) sysSendfile(c *Call) Result {
	return c.Task.withFile(int(c.Args[1]), func(in *File) Result {
		if !in.readable() {
			return Fail(syscall.EBADF)
		}
		pos := c.Args[2]
		null, _ := offsetArgs(c, pos, 0)
		if null {
			pos = in.Offset()
		} else if in.special != nil && !in.special.Seekable() {
			return Fail(syscall.ESPIPE)
		}
		count := uint64(c.Args[3]) // size_t count
		if e := verifyArea(pos, count); e != 0 {
			return Fail(e)
		}
		return c.Task.withFile(int(c.Args[0]), func(out *File) Result {
			return k.sendfile(in, pos, null, out, min(count, maxRW))
		})
	})
}

// sendfile is sendfile's copy of count bytes from in at pos (null: the
// file offset, which moves) to out, once in's checks passed and out is looked up.
func (k *Kernel) sendfile(in *File, pos int64, null bool, out *File, count uint64) Result {
	if !out.writable() {
		return Fail(syscall.EBADF)
	}
	if maxBytes := k.fs.MaxFileSize(); pos+int64(count) > maxBytes {
		if pos >= maxBytes {
			return Fail(syscall.EOVERFLOW)
		}
		count = uint64(maxBytes - pos)
	}
	outPos := int64(NullOffset)
	if out.special == nil {
		outPos = out.Offset()
	}
	if out.flags.Load()&syscall.O_APPEND != 0 {
		return Fail(syscall.EINVAL)
	}
	// A zero count moves nothing and returns 0 before splice_direct_to_actor's
	// check that in_fd is a regular file (sendfile(file, dir, NULL, 0) is 0 on
	// Linux, with count 1 it is EINVAL); O_APPEND above is checked first.
	if count == 0 {
		return Result{}
	}
	if in.ino == nil || !in.ino.IsRegular() {
		return Fail(syscall.EINVAL)
	}
	r := k.copyData(in, pos, out, outPos, int64(count))
	if r.Ret > 0 {
		if out.special == nil {
			out.setOffset(outPos + r.Ret)
		}
		if null {
			in.setOffset(pos + r.Ret)
		}
	}
	return r
}

// setOffset stores the file offset, as copy_file_range and do_sendfile store f_pos
// after the copy.
func (f *File) setOffset(off int64) {
	f.mu.Lock()
	f.off = off
	f.mu.Unlock()
}

// copyData moves up to n bytes from in to out in chunks, as the kernel's
// splice-based copy does: at offIn/offOut, or at (and advancing) the file offsets
// for NullOffset. It stops at end of file or at a short write.
func (k *Kernel) copyData(in *File, offIn int64, out *File, offOut int64, n int64) Result {
	if n <= 0 {
		return Result{}
	}
	buf := make([]byte, min(n, copyChunk))
	var done int64
	for done < n {
		p := buf[:min(n-done, int64(len(buf)))]
		r := k.readFile(in, p, offIn+done, offIn != NullOffset)
		if r.Errno != 0 {
			if done > 0 {
				break
			}
			return r
		}
		if r.Ret == 0 {
			break
		}
		w := k.writeFile(out, p[:r.Ret], offOut+done, offOut != NullOffset)
		if w.Errno != 0 {
			if done > 0 {
				break
			}
			return w
		}
		done += w.Ret
		if w.Ret < r.Ret {
			if offIn == NullOffset { // give back what was read but not written
				locked := in.lockPos()
				in.off -= r.Ret - w.Ret
				in.unlockPos(locked)
			}
			break
		}
	}
	return Result{Ret: done}
}

func offsetArg(p *int64) int64 {
	if p == nil {
		return NullOffset
	}
	return *p
}

// CopyFileRange is copy_file_range(2), as x/sys/unix's: a non-nil offset is used
// and moved by the bytes copied, a nil one means the file offset.
func (p *Process) CopyFileRange(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error) {
	c := Call{Nr: SYS_COPY_FILE_RANGE, Task: p.t}
	c.Args = [6]int64{int64(rfd), offsetArg(roff), int64(wfd), offsetArg(woff), int64(n), int64(flags)}
	if m := (minusOne{in: roff != nil && *roff == -1, out: woff != nil && *woff == -1}); m.in || m.out {
		c.Obj = &m
	}
	r := p.do(&c)
	if r.Errno == 0 {
		if roff != nil {
			*roff += r.Ret
		}
		if woff != nil {
			*woff += r.Ret
		}
	}
	return int(r.Ret), errOf(r)
}

// Sendfile is sendfile(2), as x/sys/unix's: a non-nil offset is used and moved by
// the bytes sent, a nil one means in_fd's file offset.
func (p *Process) Sendfile(outfd int, infd int, offset *int64, count int) (int, error) {
	c := Call{Nr: SYS_SENDFILE, Task: p.t}
	c.Args = [6]int64{int64(outfd), int64(infd), offsetArg(offset), int64(count)}
	if offset != nil && *offset == -1 {
		c.Obj = &minusOne{in: true}
	}
	r := p.do(&c)
	if r.Errno == 0 && offset != nil {
		*offset += r.Ret
	}
	return int(r.Ret), errOf(r)
}

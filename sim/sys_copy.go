package sim

import (
	"syscall"
)

// copyChunk bounds the buffer one in-kernel copy step uses.
const copyChunk = 1 << 20

// NullOffset stands, in the offset arguments of copy_file_range and sendfile, for a
// NULL pointer: the file offset is used and advanced. (A negative offset cannot be
// passed to those calls as a value: Linux fails it.)
const NullOffset = -1

// sysCopyFileRange implements copy_file_range(2) (Args: fd_in, off_in, fd_out,
// off_out, len, flags; an offset of NullOffset means NULL). Errors, in the order this
// kernel checks them: EBADF for a closed fd; EINVAL for flags; EOVERFLOW for a
// negative offset; EISDIR for a directory; EINVAL for a file that is not regular;
// EBADF when fd_in is not readable, fd_out not writable or opened O_APPEND; EINVAL
// for overlapping ranges of one file. The copy stops at end of fd_in's file; the
// result is the bytes copied (0 at end of file), and the file offsets of NULL
// offset arguments move by it. The model copies through the page cache (no reflink).
func (k *Kernel) sysCopyFileRange(c *Call) Result {
	in, rin := c.Task.fget(int(c.Args[0]))
	if rin {
		defer in.decRef()
	}
	out, rout := c.Task.fget(int(c.Args[2]))
	if rout {
		defer out.decRef()
	}
	if in == nil || out == nil {
		return Fail(syscall.EBADF)
	}
	offIn, offOut, n := c.Args[1], c.Args[3], c.Args[4]
	if c.Args[5] != 0 {
		return Fail(syscall.EINVAL)
	}
	if (offIn < 0 && offIn != NullOffset) || (offOut < 0 && offOut != NullOffset) {
		return Fail(syscall.EOVERFLOW)
	}
	if (in.ino != nil && in.ino.IsDir()) || (out.ino != nil && out.ino.IsDir()) {
		return Fail(syscall.EISDIR)
	}
	if in.ino == nil || out.ino == nil || !in.ino.IsRegular() || !out.ino.IsRegular() {
		return Fail(syscall.EINVAL)
	}
	if !in.readable() || !out.writable() || out.flags.Load()&syscall.O_APPEND != 0 {
		return Fail(syscall.EBADF)
	}
	if in.ino == out.ino {
		a, b := offIn, offOut
		if a == NullOffset {
			a = in.Offset()
		}
		if b == NullOffset {
			b = out.Offset()
		}
		if a < b+n && b < a+n {
			return Fail(syscall.EINVAL)
		}
	}
	return k.copyData(in, offIn, out, offOut, n)
}

// sysSendfile implements sendfile(2) (Args: out_fd, in_fd, offset, count; an offset
// of NullOffset means NULL). EBADF for a closed fd, an in_fd not readable or an
// out_fd not writable; EINVAL when in_fd is not a regular file or out_fd was opened
// O_APPEND. out_fd may be anything writable (a placeholder stands for a socket or a
// pipe). With an offset, in_fd's file offset does not move.
func (k *Kernel) sysSendfile(c *Call) Result {
	out, rout := c.Task.fget(int(c.Args[0]))
	if rout {
		defer out.decRef()
	}
	in, rin := c.Task.fget(int(c.Args[1]))
	if rin {
		defer in.decRef()
	}
	if in == nil || out == nil || !in.readable() || !out.writable() {
		return Fail(syscall.EBADF)
	}
	if in.ino == nil || !in.ino.IsRegular() {
		return Fail(syscall.EINVAL)
	}
	if out.flags.Load()&syscall.O_APPEND != 0 {
		return Fail(syscall.EINVAL)
	}
	off := c.Args[2]
	if off < 0 && off != NullOffset {
		return Fail(syscall.EINVAL)
	}
	return k.copyData(in, off, out, NullOffset, c.Args[3])
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
	if (roff != nil && *roff < 0) || (woff != nil && *woff < 0) {
		return -1, syscall.EOVERFLOW
	}
	c := Call{Nr: SYS_COPY_FILE_RANGE, Task: p.t}
	c.Args = [6]int64{int64(rfd), offsetArg(roff), int64(wfd), offsetArg(woff), int64(n), int64(flags)}
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
	if offset != nil && *offset < 0 {
		return -1, syscall.EINVAL
	}
	c := Call{Nr: SYS_SENDFILE, Task: p.t}
	c.Args = [6]int64{int64(outfd), int64(infd), offsetArg(offset), int64(count)}
	r := p.do(&c)
	if r.Errno == 0 && offset != nil {
		*offset += r.Ret
	}
	return int(r.Ret), errOf(r)
}

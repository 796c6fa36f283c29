package sim

import "syscall"

// splice(2) flags.
const (
	spliceMove     = 0x1
	spliceNonblock = 0x2
	spliceMore     = 0x4
	spliceGift     = 0x8
)

// pipeOf returns the pipe f reads (read) or writes, or nil when f is not a
// pipe or FIFO (a socketpair end is not a pipe to splice).
func pipeOf(f *File, read bool) *pipe {
	e, ok := f.special.(*pipeEnd)
	if !ok || e.in == nil && e.out == nil || e.mode&0o170000 != 0o010000 {
		return nil
	}
	if read {
		return e.in
	}
	return e.out
}

// space waits until p has a free slot and returns the bytes that fit in the
// free slots (EPIPE with no reader, EAGAIN under nonblock, EINTR without waits).
func (p *pipe) space(nonblock bool) (int, syscall.Errno) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		if p.readers == 0 {
			return 0, syscall.EPIPE
		}
		if n := p.size/pipeBuf - len(p.bufs); n > 0 {
			return n * pipeBuf, 0
		}
		if nonblock {
			return 0, syscall.EAGAIN
		}
		if !p.wait() {
			return 0, syscall.EINTR
		}
	}
}

// sysSplice implements splice(2) (Args: fd_in, off_in, fd_out, off_out, len,
// flags; an offset is NullOffset for NULL), do_splice's checks in order: EBADF
// for an fd that is closed or cannot read (in) or write (out); both pipes: an
// offset is ESPIPE, the same pipe EINVAL; from a pipe: off_in is ESPIPE, off_out
// on an unseekable file EINVAL, an O_APPEND out EINVAL; to a pipe: off_out is
// ESPIPE, off_in on an unseekable file EINVAL; neither a pipe: EINVAL. len 0
// moves nothing. Into a pipe goes what its free slots hold; out of one what it
// holds, up to len, waiting as a read or write would (SPLICE_F_NONBLOCK or
// O_NONBLOCK on a pipe: EAGAIN). An offset given is not written back (the
// caller's loff_t is not modelled); the file offset moves only without one.
func (k *Kernel) sysSplice(c *Call) Result {
	t := c.Task
	return t.withFile(int(c.Args[0]), func(in *File) Result {
		return t.withFile(int(c.Args[2]), func(out *File) Result {
			if !in.readable() || !out.writable() {
				return Fail(syscall.EBADF)
			}
			offIn, offOut, n, flags := c.Args[1], c.Args[3], c.Args[4], c.Args[5]
			ip, op := pipeOf(in, true), pipeOf(out, false)
			nonblock := flags&spliceNonblock != 0
			switch {
			case ip != nil && op != nil:
				if offIn != NullOffset || offOut != NullOffset {
					return Fail(syscall.ESPIPE)
				}
				if ip == op {
					return Fail(syscall.EINVAL)
				}
				return pipeToPipe(ip, op, n, nonblock || (in.flags.Load()|out.flags.Load())&syscall.O_NONBLOCK != 0, false)
			case ip != nil:
				if offIn != NullOffset {
					return Fail(syscall.ESPIPE)
				}
				if offOut != NullOffset && out.special != nil && !out.special.Seekable() {
					return Fail(syscall.EINVAL)
				}
				if out.flags.Load()&syscall.O_APPEND != 0 {
					return Fail(syscall.EINVAL)
				}
				if n == 0 {
					return Result{}
				}
				buf := make([]byte, min(n, maxRW, int64(ip.size)))
				got, e := ip.read(buf, nonblock || in.flags.Load()&syscall.O_NONBLOCK != 0, true)
				if e != 0 || got == 0 {
					return Result{Ret: 0, Errno: e}
				}
				return k.writeFile(out, buf[:got], offOut, offOut != NullOffset)
			case op != nil:
				if offOut != NullOffset {
					return Fail(syscall.ESPIPE)
				}
				if offIn != NullOffset && in.special != nil && !in.special.Seekable() {
					return Fail(syscall.EINVAL)
				}
				if n == 0 {
					return Result{}
				}
				room, e := op.space(nonblock || out.flags.Load()&syscall.O_NONBLOCK != 0)
				if e != 0 {
					return Fail(e)
				}
				buf := make([]byte, min(n, int64(room)))
				r := k.readFile(in, buf, offIn, offIn != NullOffset)
				if r.Errno != 0 || r.Ret == 0 {
					return r
				}
				w, e := op.write(buf[:r.Ret], true)
				return Result{Ret: int64(w), Errno: e}
			}
			return Fail(syscall.EINVAL)
		})
	})
}

// pipeToPipe moves (tee: copies) up to n bytes from ip to op, waiting for data
// unless nonblock.
func pipeToPipe(ip, op *pipe, n int64, nonblock, tee bool) Result {
	if n == 0 {
		return Result{}
	}
	ip.mu.Lock()
	for len(ip.bufs) == 0 {
		switch {
		case ip.writers == 0:
			ip.mu.Unlock()
			return Result{}
		case nonblock:
			ip.mu.Unlock()
			return Fail(syscall.EAGAIN)
		case !ip.wait():
			ip.mu.Unlock()
			return Fail(syscall.EINTR)
		}
	}
	var data []byte
	for _, b := range ip.bufs {
		data = append(data, b...)
		if int64(len(data)) >= n {
			break
		}
	}
	ip.mu.Unlock()
	room, e := op.space(nonblock)
	if e != 0 {
		return Fail(e)
	}
	data = data[:min(int64(len(data)), n, int64(room))]
	w, e := op.write(data, true)
	if e != 0 {
		return Fail(e)
	}
	if !tee {
		_, _ = ip.read(make([]byte, w), true, false)
	}
	return Result{Ret: int64(w)}
}

// sysTee implements tee(2) (Args: fd_in, fd_out, len, flags): EBADF for a
// closed fd or the wrong access; EINVAL unless both are pipes, or for the same
// pipe; then copies what the input pipe holds, up to len and what the output
// has room for, without consuming it.
func (k *Kernel) sysTee(c *Call) Result {
	t := c.Task
	return t.withFile(int(c.Args[0]), func(in *File) Result {
		return t.withFile(int(c.Args[1]), func(out *File) Result {
			if !in.readable() || !out.writable() {
				return Fail(syscall.EBADF)
			}
			ip, op := pipeOf(in, true), pipeOf(out, false)
			if ip == nil || op == nil || ip == op {
				return Fail(syscall.EINVAL)
			}
			nonblock := c.Args[3]&spliceNonblock != 0 || (in.flags.Load()|out.flags.Load())&syscall.O_NONBLOCK != 0
			return pipeToPipe(ip, op, c.Args[2], nonblock, true)
		})
	})
}

// sysVmsplice implements vmsplice(2) (Args: fd, iov, nr_segs, flags; the
// buffers in Iov): EBADF unless fd is a pipe; its write end takes the buffers
// as writev would, its read end fills them as readv would (SPLICE_F_GIFT has
// no effect).
func (k *Kernel) sysVmsplice(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		e, ok := f.special.(*pipeEnd)
		if !ok || e.mode&0o170000 != 0o010000 || c.Args[3]&^(spliceMove|spliceNonblock|spliceMore|spliceGift) != 0 {
			if !ok || e.mode&0o170000 != 0o010000 {
				return Fail(syscall.EBADF)
			}
			return Fail(syscall.EINVAL)
		}
		if f.writable() {
			return k.writev(c, f, false, 0, 0)
		}
		if f.readable() {
			return k.readv(c, f, false, 0, 0)
		}
		return Fail(syscall.EBADF)
	})
}

package sim

import (
	"sync"
	"syscall"

	"github.com/iosim/iosim/vfs"
)

// Pipes, FIFOs, socket pairs and device nodes: pipe(2), pipe2(2), socketpair(2),
// mknod(2), mknodat(2), and what open(2) does with the special files mknod makes.
//
// A pipe is a byte queue of a capacity (F_GETPIPE_SZ, 65536 by default, as
// Linux) with counts of its readers and writers (fs/pipe.c):
//
//   - read takes what is queued, up to the buffer; an empty pipe is end of file
//     (0) once no writer is left, EAGAIN under O_NONBLOCK, and otherwise waits for
//     a writer;
//   - write is EPIPE when no reader is left (SIGPIPE is not modelled); the bytes
//     go into page-sized slots as Linux's (a write's first len mod 4096 bytes
//     join the last page when they fit), so a write of at most PIPE_BUF
//     (4096) bytes goes in whole; with no free slot it waits (under O_NONBLOCK
//     returns the count so far, or EAGAIN for none);
//   - lseek, pread, pwrite, fadvise64 and sync_file_range are ESPIPE, fsync EINVAL.
//
// A wait is the calling goroutine blocking until another one (a thread of the
// model) reads, writes, opens or closes; without waits (WithLockWait(false), for
// a single driver of several processes) a read or write that would wait is
// EINTR (what Linux returns when a signal interrupts it) after any bytes it has
// moved, and an open of a FIFO that would wait for its peer succeeds at once:
// such a driver runs the peer's open next.
//
// A FIFO (mknod S_IFIFO) is an inode of the file system with size 0; every open
// of it shares one pipe while the FIFO is open anywhere (fifo_open): O_RDONLY
// waits for a writer unless O_NONBLOCK, O_WRONLY waits for a reader (ENXIO under
// O_NONBLOCK when there is none), O_RDWR never waits. What a FIFO holds is lost
// when its last open description closes.
//
// A socketpair is two pipes crossed: each end reads one and writes the other,
// and both are O_RDWR (S_IFSOCK|0777). SOCK_DGRAM and SOCK_SEQPACKET pairs are
// streams here: message boundaries are not kept.
//
// A device node opens as the device its number names when the model has it
// (1:3 /dev/null, 1:5 /dev/zero); any other device node, and a socket inode, is
// ENXIO, as a device no driver claims.

// Pipe sizes: PIPE_BUF, the default capacity, and the one of a socketpair's
// direction (not a figure a test may depend on: Linux's comes from SO_SNDBUF).
const (
	pipeBuf      = 4096
	pipeDefSize  = 65536
	sockPairSize = 212992
)

// Device numbers of the device nodes the model can open.
const (
	rdevNull = 1<<8 | 3
	rdevZero = 1<<8 | 5
)

// pipe is a pipe_inode_info: the queued bytes in page-sized buffers, the
// capacity and the counts of readers and writers. Safe for concurrent use.
type pipe struct {
	mu   sync.Mutex
	cond sync.Cond
	k    *Kernel
	// bufs are the occupied slots, oldest first, each at most pipeBuf bytes
	// (a page); size/pipeBuf slots in all.
	bufs             [][]byte
	size             int
	readers, writers int
	// fifo is the FIFO inode the pipe belongs to (nil for pipe(2), socketpair).
	fifo *vfs.Inode
	// opens counts the descriptions of a FIFO, for forgetting the pipe.
	opens int
}

func newPipe(k *Kernel, size int) *pipe {
	p := &pipe{k: k, size: size}
	p.cond.L = &p.mu
	return p
}

// wait blocks until another goroutine changes the pipe, or reports false when the
// kernel does not wait. Called with p.mu held.
func (p *pipe) wait() bool {
	if !p.k.lockWait {
		return false
	}
	p.cond.Wait()
	return true
}

// read is pipe_read into b (nonblock: O_NONBLOCK; wait: the call may wait, false
// for the later buffers of a readv).
func (p *pipe) read(b []byte, nonblock, wait bool) (int, syscall.Errno) {
	if len(b) == 0 {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.bufs) == 0 {
		switch {
		case p.writers == 0:
			return 0, 0
		case nonblock || !wait:
			return 0, syscall.EAGAIN
		case !p.wait():
			return 0, syscall.EINTR
		}
	}
	n := 0
	for n < len(b) && len(p.bufs) > 0 {
		c := copy(b[n:], p.bufs[0])
		n += c
		if p.bufs[0] = p.bufs[0][c:]; len(p.bufs[0]) == 0 {
			p.bufs[0] = nil
			p.bufs = p.bufs[1:]
		}
	}
	if len(p.bufs) == 0 {
		p.bufs = nil
	}
	p.cond.Broadcast()
	return n, 0
}

// write is pipe_write of b: the first len(b) mod 4096 bytes join the last
// buffer when they fit there and the pipe is not empty, the rest takes free
// slots a page at a time, waiting for more when none is free.
func (p *pipe) write(b []byte, nonblock bool) (int, syscall.Errno) {
	if len(b) == 0 {
		return 0, 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.readers == 0 {
		return 0, syscall.EPIPE
	}
	total := 0
	if c := len(b) & (pipeBuf - 1); c != 0 && len(p.bufs) > 0 {
		last := &p.bufs[len(p.bufs)-1]
		if len(*last)+c <= pipeBuf {
			*last = append(*last, b[:c]...)
			total, b = c, b[c:]
		}
	}
	for len(b) > 0 {
		if p.readers == 0 {
			if total > 0 {
				break
			}
			return 0, syscall.EPIPE
		}
		if len(p.bufs) < p.size/pipeBuf {
			n := min(pipeBuf, len(b))
			page := make([]byte, n, pipeBuf)
			copy(page, b)
			p.bufs = append(p.bufs, page)
			total, b = total+n, b[n:]
			p.cond.Broadcast()
			continue
		}
		if nonblock || !p.wait() {
			if total > 0 {
				break
			}
			if nonblock {
				return 0, syscall.EAGAIN
			}
			return 0, syscall.EINTR
		}
	}
	p.cond.Broadcast()
	return total, 0
}

// pipeEnd is the Special of one open description of a pipe, a FIFO or a
// socketpair end: it reads from in and writes to out (nil when it does not).
type pipeEnd struct {
	in, out *pipe
	mode    uint32
	ino     uint64
	once    sync.Once
}

// Mode returns S_IFIFO|0600 for a pipe, S_IFSOCK|0777 for a socket (a FIFO's
// mode is its inode's).
func (e *pipeEnd) Mode() uint32 { return e.mode }

// Rdev returns 0.
func (e *pipeEnd) Rdev() uint64 { return 0 }

// Seekable returns false: lseek, pread and pwrite are ESPIPE.
func (e *pipeEnd) Seekable() bool { return false }

// Read reads as a blocking description would.
func (e *pipeEnd) Read(b []byte) (int, syscall.Errno) { return e.read(b, false, true) }

// Write writes as a blocking description would.
func (e *pipeEnd) Write(b []byte) (int, syscall.Errno) { return e.write(b, false) }

func (e *pipeEnd) read(b []byte, nonblock, wait bool) (int, syscall.Errno) {
	if e.in == nil {
		return 0, syscall.EBADF
	}
	return e.in.read(b, nonblock, wait)
}

func (e *pipeEnd) write(b []byte, nonblock bool) (int, syscall.Errno) {
	if e.out == nil {
		return 0, syscall.EBADF
	}
	return e.out.write(b, nonblock)
}

// Close lets go of the end's roles when its description is released.
func (e *pipeEnd) Close() {
	e.once.Do(func() {
		if p := e.in; p != nil {
			p.mu.Lock()
			p.readers--
			p.cond.Broadcast()
			p.mu.Unlock()
		}
		if p := e.out; p != nil {
			p.mu.Lock()
			p.writers--
			p.cond.Broadcast()
			p.mu.Unlock()
		}
		for _, p := range []*pipe{e.in, e.out} {
			if p != nil && p.fifo != nil {
				p.k.fifoClosed(p)
				break
			}
		}
	})
}

// isPipeEnd reports whether s is an end of a pipe, FIFO or socketpair.
func isPipeEnd(s Special) bool { _, ok := s.(*pipeEnd); return ok }

// IsPipe reports whether f is a description of a pipe, a FIFO or a socketpair
// end that the model simulates (not a Placeholder).
func IsPipe(f *File) bool { return f != nil && isPipeEnd(f.special) }

// specialRead reads from a special object into b for description f (wait: as
// pipeEnd.read).
func specialRead(f *File, s Special, b []byte, wait bool) (int, syscall.Errno) {
	if e, ok := s.(*pipeEnd); ok {
		return e.read(b, f.flags.Load()&syscall.O_NONBLOCK != 0, wait)
	}
	return s.Read(b)
}

// specialWrite writes b to a special object for description f.
func specialWrite(f *File, s Special, b []byte) (int, syscall.Errno) {
	if e, ok := s.(*pipeEnd); ok {
		return e.write(b, f.flags.Load()&syscall.O_NONBLOCK != 0)
	}
	return s.Write(b)
}

// pipeIno returns a new st_ino for an object of pipefs or sockfs.
func (k *Kernel) pipeIno() uint64 {
	k.pipeMu.Lock()
	defer k.pipeMu.Unlock()
	k.pipeInos++
	return k.pipeInos
}

// installPair puts the descriptions a and b at the two lowest free fds of t's
// process and stores them in fds.
func (k *Kernel) installPair(t *Task, a, b *File, cloexec bool, fds *[2]int32) Result {
	tbl := t.g.files
	limit := t.g.nofile.Load()
	fa, e := tbl.alloc(a, 0, limit, cloexec)
	if e != 0 {
		a.decRef()
		b.decRef()
		return Fail(e)
	}
	fb, e := tbl.alloc(b, 0, limit, cloexec)
	if e != 0 {
		if f := tbl.remove(fa); f != nil {
			f.decRef()
		}
		b.decRef()
		return Fail(e)
	}
	fds[0], fds[1] = int32(fa), int32(fb)
	return Result{}
}

// sysPipe2 implements pipe(2) and pipe2(2) (Args: fds, flags; Obj: *[2]int32 the
// fds are stored in). EINVAL for flags other than O_CLOEXEC, O_NONBLOCK and
// O_DIRECT (packet mode: accepted, a stream here); EFAULT without Obj; EMFILE
// when two fds are not free. The read end is O_RDONLY, the write end O_WRONLY,
// both with O_NONBLOCK and O_DIRECT as asked (no O_LARGEFILE).
func (k *Kernel) sysPipe2(c *Call) Result {
	flags := int(c.Args[1])
	if flags&^(syscall.O_CLOEXEC|syscall.O_NONBLOCK|oDirect) != 0 {
		return Fail(syscall.EINVAL)
	}
	fds, _ := c.Obj.(*[2]int32)
	if fds == nil {
		return Fail(syscall.EFAULT)
	}
	p := newPipe(k, pipeDefSize)
	p.readers, p.writers = 1, 1
	ino := k.pipeIno()
	st := flags & (syscall.O_NONBLOCK | oDirect)
	r := newFile(k, nil, &pipeEnd{in: p, mode: vfs.S_IFIFO | 0o600, ino: ino}, syscall.O_RDONLY|st)
	w := newFile(k, nil, &pipeEnd{out: p, mode: vfs.S_IFIFO | 0o600, ino: ino}, syscall.O_WRONLY|st)
	for _, f := range []*File{r, w} {
		f.flags.Store(f.flags.Load() &^ oLargefile)
	}
	return k.installPair(c.Task, r, w, flags&syscall.O_CLOEXEC != 0, fds)
}

// Socket constants of socketpair(2).
const (
	afUnix        = 1
	afInet        = 2
	afInet6       = 10
	sockStream    = 1
	sockDgram     = 2
	sockSeqpacket = 5
	sockTypeMask  = 0xf
)

// sysSocketpair implements socketpair(2) for AF_UNIX (Args: domain, type,
// protocol, sv; Obj: *[2]int32). AF_INET and AF_INET6 are EOPNOTSUPP, other
// domains EAFNOSUPPORT; a type other than SOCK_STREAM, SOCK_DGRAM and
// SOCK_SEQPACKET is ESOCKTNOSUPPORT (flags other than SOCK_NONBLOCK and
// SOCK_CLOEXEC: EINVAL); a protocol other than 0 EPROTONOSUPPORT.
func (k *Kernel) sysSocketpair(c *Call) Result {
	domain, typ, proto := c.Args[0], int(c.Args[1]), c.Args[2]
	if typ&^(sockTypeMask|syscall.O_NONBLOCK|syscall.O_CLOEXEC) != 0 {
		return Fail(syscall.EINVAL)
	}
	switch domain {
	case afUnix:
	case afInet, afInet6:
		return Fail(syscall.EOPNOTSUPP)
	default:
		return Fail(syscall.EAFNOSUPPORT)
	}
	switch typ & sockTypeMask {
	case sockStream, sockDgram, sockSeqpacket:
	default:
		return Fail(syscall.ESOCKTNOSUPPORT)
	}
	if proto != 0 {
		return Fail(syscall.EPROTONOSUPPORT)
	}
	fds, _ := c.Obj.(*[2]int32)
	if fds == nil {
		return Fail(syscall.EFAULT)
	}
	ab, ba := newPipe(k, sockPairSize), newPipe(k, sockPairSize)
	ab.readers, ab.writers, ba.readers, ba.writers = 1, 1, 1, 1
	st := typ & syscall.O_NONBLOCK
	a := newFile(k, nil, &pipeEnd{in: ba, out: ab, mode: vfs.S_IFSOCK | 0o777, ino: k.pipeIno()}, syscall.O_RDWR|st)
	b := newFile(k, nil, &pipeEnd{in: ab, out: ba, mode: vfs.S_IFSOCK | 0o777, ino: k.pipeIno()}, syscall.O_RDWR|st)
	for _, f := range []*File{a, b} {
		f.flags.Store(f.flags.Load() &^ oLargefile)
	}
	return k.installPair(c.Task, a, b, typ&syscall.O_CLOEXEC != 0, fds)
}

// sysMknodat implements mknod(2) and mknodat(2) (Args: dirfd, path, mode, dev):
// see vfs.Inode.Mknod; the umask applies to the permission bits, and dev is the
// kernel's unsigned int.
func (k *Kernel) sysMknodat(c *Call, dirfd int, mode uint32, dev int64) Result {
	t := c.Task
	if c.Path == "" {
		return Fail(syscall.ENOENT)
	}
	dir, e := t.dirOf(dirfd, c.Path)
	if e != 0 {
		return Fail(e)
	}
	perm := mode & 0o7777 &^ t.g.umask.Load()
	return res(0, dir.Mknod(c.Path, mode, perm, uint64(uint32(dev))))
}

// openSpecial gives the description f of a FIFO or a device node its object, or
// the errno open(2) returns (see the top of the file).
func (k *Kernel) openSpecial(f *File, ino *vfs.Inode, flags int) syscall.Errno {
	switch ino.Mode() & vfs.S_IFMT {
	case vfs.S_IFIFO:
		return k.openFifo(f, ino, flags)
	case vfs.S_IFCHR:
		switch ino.Rdev() {
		case rdevNull:
			f.special = DevNull{}
			return 0
		case rdevZero:
			f.special = DevZero{}
			return 0
		}
	}
	return syscall.ENXIO
}

// openFifo is fifo_open.
func (k *Kernel) openFifo(f *File, ino *vfs.Inode, flags int) syscall.Errno {
	k.pipeMu.Lock()
	p := k.fifos[ino]
	if p == nil {
		p = newPipe(k, pipeDefSize)
		p.fifo = ino
		if k.fifos == nil {
			k.fifos = map[*vfs.Inode]*pipe{}
		}
		k.fifos[ino] = p
	}
	p.mu.Lock()
	nonblock := flags&syscall.O_NONBLOCK != 0
	end := &pipeEnd{mode: ino.Mode(), ino: ino.Ino()}
	switch flags & syscall.O_ACCMODE {
	case syscall.O_RDONLY:
		end.in = p
		p.readers++
	case syscall.O_WRONLY:
		if nonblock && p.readers == 0 {
			p.mu.Unlock()
			k.forgetFifo(p)
			k.pipeMu.Unlock()
			return syscall.ENXIO
		}
		end.out = p
		p.writers++
	default:
		end.in, end.out = p, p
		p.readers++
		p.writers++
	}
	p.opens++
	k.pipeMu.Unlock()
	p.cond.Broadcast()
	if !nonblock && p.k.lockWait {
		// wait_for_partner: a reader waits for a writer, a writer for a reader.
		for (end.out == nil && p.writers == 0) || (end.in == nil && p.readers == 0) {
			p.cond.Wait()
		}
	}
	p.mu.Unlock()
	f.special = end
	return 0
}

// fifoClosed notes that a description of p's FIFO is released.
func (k *Kernel) fifoClosed(p *pipe) {
	k.pipeMu.Lock()
	p.mu.Lock()
	p.opens--
	p.mu.Unlock()
	k.forgetFifo(p)
	k.pipeMu.Unlock()
}

// forgetFifo drops p from the FIFOs when no description has it open: what it
// held is gone. Called with k.pipeMu held.
func (k *Kernel) forgetFifo(p *pipe) {
	p.mu.Lock()
	idle := p.opens == 0
	p.mu.Unlock()
	if idle && k.fifos[p.fifo] == p {
		delete(k.fifos, p.fifo)
	}
}

// pipeSize is fcntl's F_GETPIPE_SZ and F_SETPIPE_SZ (pipe_fcntl): EBADF for what
// is not a pipe or FIFO; F_SETPIPE_SZ rounds arg up to a power of two of pages
// (at least one), EINVAL above 2^31, EBUSY below what the pipe holds, and
// returns the new size (as root, /proc/sys/fs/pipe-max-size does not bound it).
func pipeSize(f *File, set bool, arg int64) Result {
	e, ok := f.special.(*pipeEnd)
	if ph, isPH := f.special.(*Placeholder); isPH && ph.Mode()&vfs.S_IFMT == vfs.S_IFIFO {
		// A pipe the model does not simulate: one of the default size.
		e = &pipeEnd{in: newPipe(f.k, pipeDefSize), mode: vfs.S_IFIFO}
		ok = true
	}
	if !ok || e.mode&vfs.S_IFMT != vfs.S_IFIFO {
		return Fail(syscall.EBADF)
	}
	p := e.in
	if p == nil {
		p = e.out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !set {
		return Result{Ret: int64(p.size)}
	}
	n := uint64(uint32(arg))
	if n > 1<<31 {
		return Fail(syscall.EINVAL)
	}
	size := uint64(pipeBuf)
	for size < n {
		size <<= 1
	}
	if int(size)/pipeBuf < len(p.bufs) {
		return Fail(syscall.EBUSY)
	}
	p.size = int(size)
	p.cond.Broadcast()
	return Result{Ret: int64(size)}
}

package sim

import (
	"math"
	"sync"
	"syscall"
)

// AioContext is an AIO context id (aio_context_t), as io_setup(2) returns it.
type AioContext uint64

// AIO opcodes (IOCB_CMD_*, <linux/aio_abi.h>).
const (
	IOCB_CMD_PREAD   = 0
	IOCB_CMD_PWRITE  = 1
	IOCB_CMD_FSYNC   = 2
	IOCB_CMD_FDSYNC  = 3
	IOCB_CMD_POLL    = 5
	IOCB_CMD_NOOP    = 6
	IOCB_CMD_PREADV  = 7
	IOCB_CMD_PWRITEV = 8

	// IOCB_FLAG_RESFD asks for an eventfd notification (accepted, not modelled).
	// Linux does not check the other bits of aio_flags.
	IOCB_FLAG_RESFD = 1 << 0
	// IOCB_FLAG_IOPRIO says ReqPrio is set (accepted, not modelled).
	IOCB_FLAG_IOPRIO = 1 << 1

	// aioMaxNr is /proc/sys/fs/aio-max-nr's default: io_setup beyond it is EAGAIN.
	aioMaxNr = 65536
	// AioWaitForever in io_getevents' timeout slot (Args[4]) is a NULL timeout.
	AioWaitForever = -1
	aioBase        = 0x7e00_0000_0000
)

// Iocb is struct iocb in Go form: Buf replaces aio_buf/aio_nbytes for PREAD/PWRITE,
// Iov replaces them for PREADV/PWRITEV. Data is returned in the completion event.
type Iocb struct {
	Data    uint64 // aio_data
	Opcode  uint16 // IOCB_CMD_*
	ReqPrio int16
	Fd      uint32
	Buf     []byte
	Iov     [][]byte
	Offset  int64
	Flags   uint32 // IOCB_FLAG_*
	ResFd   uint32
	RwFlags int32 // aio_rw_flags (RWF_*): as pwritev2's and preadv2's
	// Addr, when not 0, is aio_buf as the program passed it for a PREAD or
	// PWRITE (a trace's address, or a bad one), where Buf stands for the
	// memory: an address range past the user address space is EFAULT at
	// io_submit (access_ok), one in the unmapped low pages (below
	// mmap_min_addr) completes with res -EFAULT once it would move data.
	Addr uint64
}

// x86-64's address-space limits for AIO buffers: TASK_SIZE_MAX (the end
// of user space) and the default vm.mmap_min_addr (nothing is mapped below).
const (
	userSpaceEnd = 0x7ffffffff000
	mmapMinAddr  = 65536
)

// aioAddrErr is access_ok's answer for the buffer of cb (aio_setup_rw's
// import_ubuf).
func aioAddrErr(cb *Iocb) syscall.Errno {
	n := uint64(len(cb.Buf))
	if cb.Addr != 0 && (cb.Addr > userSpaceEnd || n > userSpaceEnd-cb.Addr) {
		return syscall.EFAULT
	}
	return 0
}

// IoEvent is struct io_event: Data is the iocb's, Obj identifies the iocb (the
// model numbers the iocbs of a context from 1 in submission order, where Linux gives
// the iocb's user address), Res is the byte count or a negated errno.
type IoEvent struct {
	Data uint64
	Obj  uint64
	Res  int64
	Res2 int64
}

type aioCtx struct {
	id     uint64
	g      *ThreadGroup
	ring   int // the completion ring's size: io_submit's nr is clamped to it
	accept int // how many iocbs may be in flight or completed and not reaped
	seq    uint64
	done   []aioDone // completed, not reaped: in completion order (submission order without a time model)
}

// aioDone is a completion event not yet reaped. Under a time model (WithDevice)
// at is the virtual time the request completes, set when io_submit is priced
// (aioTable.complete), which clears cb; while cb is set the event counts as
// complete, as every event does without a time model.
type aioDone struct {
	ev IoEvent
	cb *Iocb // the submitted iocb (never nil) until the time model prices it (identity only)
	at int64
}

// aioRing returns, for io_setup(nr) on a machine with cpus possible CPUs, the
// size of the completion ring and how many iocbs the context holds before
// io_submit fails with EAGAIN. fs/aio.c: ioctx_alloc doubles
// max(nr, cpus*4) (up to half the slots may sit in other CPUs' per-CPU
// counters), aio_setup_ring adds 2 and rounds the ring (a 32-byte header and
// 32-byte io_events) up to whole pages, and reqs_available starts at
// ring-1, handed to a CPU req_batch = (ring-1)/(cpus*4) at a time
// (__get_reqs_available): one submitting CPU gets whole batches only. On
// the reference machine (2 possible CPUs) io_setup(4) gives a ring of 127
// and accepts 120 iocbs (TestAIORingSize).
func aioRing(nr, cpus int) (ring, accept int) {
	n := max(nr, cpus*4)*2 + 2
	pages := (32 + 32*n + PageSize - 1) / PageSize
	ring = (pages*PageSize - 32) / 32
	batch := max((ring-1)/(cpus*4), 1)
	return ring, (ring - 1) / batch * batch
}

// aioRingTooLarge is ioctx_alloc's overflow check: EINVAL when the doubled
// nr_events' io_events would pass 256 MiB.
func aioRingTooLarge(nr, cpus int) bool { return max(nr, cpus*4)*2 > 0x10000000/32 }

type aioTable struct {
	mu   sync.Mutex
	next uint64
	ctxs map[uint64]*aioCtx
}

func (a *aioTable) init() {
	a.next = aioBase
	a.ctxs = map[uint64]*aioCtx{}
}

// exit destroys the contexts of an exiting process.
func (a *aioTable) exit(g *ThreadGroup) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, c := range a.ctxs {
		if c.g == g {
			delete(a.ctxs, id)
		}
	}
}

// sysIoSetup implements io_setup(2) (Args[0] nr_events; Obj *AioContext, which must
// hold 0): EFAULT without Obj, EINVAL when *ctx != 0 or nr_events <= 0 or the
// ring would be too large, EAGAIN beyond aio-max-nr (65536). The context holds
// more than nr_events iocbs, as Linux sizes it (aioRing, with the possible CPUs
// of WithPossibleCPUs). Context ids are deterministic.
func (k *Kernel) sysIoSetup(c *Call) Result {
	out, _ := c.Obj.(*AioContext)
	if out == nil {
		return Fail(syscall.EFAULT)
	}
	nr := c.Args[0]
	if *out != 0 || nr <= 0 || nr > 1<<31-1 || aioRingTooLarge(int(nr), k.cpus) {
		return Fail(syscall.EINVAL)
	}
	if nr > aioMaxNr {
		return Fail(syscall.EAGAIN)
	}
	a := &k.aio
	a.mu.Lock()
	id := a.next
	a.next += PageSize
	ring, accept := aioRing(int(nr), k.cpus)
	a.ctxs[id] = &aioCtx{id: id, g: c.Task.g, ring: ring, accept: accept}
	a.mu.Unlock()
	*out = AioContext(id)
	return Result{}
}

// sysIoDestroy implements io_destroy(2): EINVAL for an unknown context (or one of
// another process); completed events not reaped are dropped. Under a time model
// the call returns when the last request in flight completes: io_destroy
// "will block on the completion of all operations that could not be canceled"
// (io_destroy(2); fs/aio.c waits for the context's requests in kill_ioctx), and
// a regular file's reads and writes cannot be cancelled.
func (k *Kernel) sysIoDestroy(c *Call) Result {
	a := &k.aio
	a.mu.Lock()
	defer a.mu.Unlock()
	ctx := a.ctxs[uint64(c.Args[0])]
	if ctx == nil || ctx.g != c.Task.g {
		return Fail(syscall.EINVAL)
	}
	if k.tm != nil {
		c.Task.aioUntil = math.MinInt64
		if n := len(ctx.done); n > 0 {
			c.Task.aioUntil = ctx.doneAt(n - 1) // ctx.done is in completion order
		}
		c.Task.aioDevice = c.Task.aioUntil
	}
	delete(a.ctxs, ctx.id)
	return Result{}
}

// sysIoSubmit implements io_submit(2) (Args: ctx, nr; Obj []*Iocb with at least nr
// entries, else EFAULT). EINVAL for nr < 0 or an unknown context. nr is clamped to
// the context's ring size (aioRing). Each iocb is checked as io_submit_one does: a closed fd EBADF,
// an unknown opcode EINVAL, a read or write refused by aioRWErr, an fsync with a
// buffer, an offset or RWF_* flags, or of a pipe, EINVAL, a full completion ring
// EAGAIN. The
// first failing iocb stops the submission: the call fails with its errno if it was
// the first, else returns how many were submitted.
//
// The model performs each submitted iocb at once, in submission order, as
// pread/pwrite/fdatasync/fsync would (O_DIRECT alignment included; an I/O error is a
// negated errno in the event's Res), and queues its completion event.
func (k *Kernel) sysIoSubmit(c *Call) Result {
	nr := c.Args[1]
	if nr < 0 {
		return Fail(syscall.EINVAL)
	}
	a := &k.aio
	a.mu.Lock()
	ctx := a.ctxs[uint64(c.Args[0])]
	a.mu.Unlock()
	if ctx == nil || ctx.g != c.Task.g {
		return Fail(syscall.EINVAL)
	}
	iocbs, _ := c.Obj.([]*Iocb)
	if nr > int64(ctx.ring) {
		nr = int64(ctx.ring)
	}
	if int64(len(iocbs)) < nr {
		return Fail(syscall.EFAULT)
	}
	for i := range int(nr) {
		if e := k.submitOne(c.Task, ctx, iocbs[i]); e != 0 {
			if i == 0 {
				return Fail(e)
			}
			return Result{Ret: int64(i)}
		}
	}
	return Result{Ret: nr}
}

func (k *Kernel) submitOne(t *Task, ctx *aioCtx, cb *Iocb) syscall.Errno {
	if cb == nil {
		return syscall.EFAULT
	}
	// __io_submit_one: the fd first (fget refuses O_PATH), then the opcode.
	return t.withFile(int(int32(cb.Fd)), func(f *File) Result {
		return errResult(k.submitFile(t, ctx, cb, f))
	}).Errno
}

// submitFile submits cb, whose fd refers to f. aio_flags bits other than RESFD
// and IOPRIO are not checked.
func (k *Kernel) submitFile(t *Task, ctx *aioCtx, cb *Iocb, f *File) syscall.Errno {
	var r Result
	switch cb.Opcode {
	case IOCB_CMD_PREAD, IOCB_CMD_PREADV, IOCB_CMD_PWRITE, IOCB_CMD_PWRITEV:
		if e := aioRWErr(f, cb); e != 0 {
			return e
		}
	case IOCB_CMD_FSYNC, IOCB_CMD_FDSYNC:
		// aio_fsync: no buffer, offset or RWF_* flags, and a file with fsync.
		if len(cb.Buf) > 0 || len(cb.Iov) > 0 || cb.Offset != 0 || cb.RwFlags != 0 || f.special != nil {
			return syscall.EINVAL
		}
	default:
		return syscall.EINVAL
	}
	k.aio.mu.Lock()
	full := len(ctx.done) >= ctx.accept
	k.aio.mu.Unlock()
	if full {
		return syscall.EAGAIN
	}
	rwf := int64(cb.RwFlags)
	lowAddr := cb.Addr != 0 && cb.Addr < mmapMinAddr
	switch cb.Opcode {
	case IOCB_CMD_PWRITE:
		if lowAddr && len(cb.Buf) > 0 {
			// Nothing can be copied from the buffer; a buffered write past
			// EOF still sets i_size to where it began (ext4_write_end with
			// nothing copied; measured on Linux 6.18).
			if f.flags.Load()&oDirect == 0 && cb.Offset > f.ino.Size() {
				_ = f.ino.Truncate(cb.Offset)
			}
			r = Fail(syscall.EFAULT)
			break
		}
		fallthrough
	case IOCB_CMD_PREAD:
		if rwf == 0 {
			if cb.Opcode == IOCB_CMD_PREAD {
				r = k.readFile(f, cb.Buf, cb.Offset, true)
			} else {
				r = k.writeFile(f, cb.Buf, cb.Offset, true)
			}
			break
		}
		fallthrough // with RWF_* flags, as a vector of one
	case IOCB_CMD_PREADV, IOCB_CMD_PWRITEV:
		sub := Call{Nr: SYS_PREADV2, Task: t, Iov: cb.Iov}
		if cb.Opcode == IOCB_CMD_PREAD || cb.Opcode == IOCB_CMD_PWRITE {
			sub.Iov = [][]byte{cb.Buf}
		}
		sub.Args[0] = int64(int32(cb.Fd))
		if cb.Opcode == IOCB_CMD_PREAD || cb.Opcode == IOCB_CMD_PREADV {
			r = k.sysReadv(&sub, true, cb.Offset, rwf)
		} else {
			sub.Nr = SYS_PWRITEV2
			r = k.sysWritev(&sub, true, cb.Offset, rwf)
		}
	case IOCB_CMD_FSYNC:
		r = res(0, f.ino.Fsync(&f.errseq))
	case IOCB_CMD_FDSYNC:
		r = res(0, f.ino.Fdatasync(&f.errseq))
	}
	v := r.Ret
	if r.Errno != 0 {
		v = -int64(r.Errno)
	}
	if lowAddr && v > 0 {
		v = -int64(syscall.EFAULT) // what the read gave cannot be copied out
	}
	k.aio.mu.Lock()
	ctx.seq++
	ctx.done = append(ctx.done, aioDone{ev: IoEvent{Data: cb.Data, Obj: ctx.seq, Res: v}, cb: cb})
	k.aio.mu.Unlock()
	return 0
}

// aioRWErr is what aio_read and aio_write refuse at submission, in their order:
// the RWF_* flags (aio_prep_rw: rwfErr), no read (write) access EBADF, a file
// without read_iter (write_iter: a directory) EINVAL, a buffer outside the
// user address space EFAULT (aioAddrErr), then rw_verify_area's negative or
// overflowing offset EINVAL. An I/O error after that is the
// completion's res, not the submission's.
func aioRWErr(f *File, cb *Iocb) syscall.Errno {
	if e := rwfErr(int64(cb.RwFlags)); e != 0 {
		return e
	}
	write := cb.Opcode == IOCB_CMD_PWRITE || cb.Opcode == IOCB_CMD_PWRITEV
	if write && !f.writable() || !write && !f.readable() {
		return syscall.EBADF
	}
	if f.ino != nil && f.ino.IsDir() {
		return syscall.EINVAL
	}
	if e := aioAddrErr(cb); e != 0 {
		return e
	}
	n := int64(len(cb.Buf))
	if cb.Opcode == IOCB_CMD_PREADV || cb.Opcode == IOCB_CMD_PWRITEV {
		n = iovLen(cb.Iov)
	}
	if cb.Offset < 0 || cb.Offset > math.MaxInt64-n {
		return syscall.EINVAL
	}
	return 0
}

// sysIoGetevents implements io_getevents(2) and io_pgetevents(2) (Args: ctx, min_nr,
// nr, unused, timeout; Obj []IoEvent with room for nr, else EFAULT): EINVAL for an
// unknown context, min_nr < 0, nr < 0 or min_nr > nr. It returns up to nr completed
// events in completion order.
//
// Without a time model every submitted iocb has completed already, in submission
// order: with fewer than min_nr available the call waits out the timeout (Args[4],
// in nanoseconds; the clock moves by it) and returns what there is. A NULL timeout
// (Args[4] = AioWaitForever) would wait for ever on Linux: the model returns what
// there is.
//
// Under a time model (WithDevice) an event is available from its completion
// time (reapTimed), as Linux's read_events waits until min_nr events are in the
// ring or the timeout passes and aio_read_events then takes up to nr of those
// there (fs/aio.c; io_getevents(2)).
func (k *Kernel) sysIoGetevents(c *Call) Result {
	minNr, nr := c.Args[1], c.Args[2]
	a := &k.aio
	a.mu.Lock()
	defer a.mu.Unlock()
	ctx := a.ctxs[uint64(c.Args[0])]
	if ctx == nil || ctx.g != c.Task.g || minNr < 0 || nr < 0 || minNr > nr {
		return Fail(syscall.EINVAL)
	}
	evs, _ := c.Obj.([]IoEvent)
	if int64(len(evs)) < nr && int64(len(ctx.done)) > int64(len(evs)) {
		return Fail(syscall.EFAULT)
	}
	evs = evs[:min(int(nr), len(evs))]
	if tm := k.tm; tm != nil {
		t := c.Task
		n, until, device := ctx.reapTimed(t.now+tm.cpu.syscall, int(minNr), c.Args[4], evs)
		t.aioUntil, t.aioDevice = until, device
		return Result{Ret: int64(n)}
	}
	n := ctx.reap(len(evs), evs)
	if int64(n) < minNr && c.Args[4] > 0 {
		k.clock.Advance(c.Args[4])
	}
	return Result{Ret: int64(n)}
}

// reap moves the first n pending events into evs.
func (ctx *aioCtx) reap(n int, evs []IoEvent) int {
	n = min(n, len(ctx.done))
	for i := range n {
		evs[i] = ctx.done[i].ev
	}
	ctx.done = append(ctx.done[:0], ctx.done[n:]...)
	return n
}

// doneAt is when the i-th pending event completes (an event not yet priced
// counts as complete).
func (ctx *aioCtx) doneAt(i int) int64 {
	if d := &ctx.done[i]; d.cb == nil {
		return d.at
	}
	return math.MinInt64
}

// reapTimed is io_getevents under a time model, called at virtual time now
// with a timeout in nanoseconds (negative: none). ctx.done is in completion
// order (complete keeps it so). The call lasts until the min_nr-th earliest
// completion (now if it is past), or until the timeout if that comes first;
// with fewer than min_nr events pending it waits out the timeout, or without
// one until every pending event has completed (where Linux would wait for
// ever). It moves into evs, in completion order, the events complete by then,
// up to len(evs), and returns how many, when the call returns and until when
// of that it waited for the device (the last pending completion, at most
// until): past it nothing was in flight and the call slept out its timeout.
func (ctx *aioCtx) reapTimed(now int64, minNr int, timeout int64, evs []IoEvent) (n int, until, device int64) {
	pending := len(ctx.done)
	until = now
	switch {
	case minNr == 0:
	case minNr <= pending:
		until = max(now, ctx.doneAt(minNr-1))
	case timeout >= 0:
		until = now + timeout
	case pending > 0:
		until = max(now, ctx.doneAt(pending-1))
	}
	if timeout >= 0 {
		until = min(until, now+timeout)
	}
	device = now
	if pending > 0 {
		device = min(until, max(now, ctx.doneAt(pending-1)))
	}
	for n < len(evs) && n < pending && ctx.doneAt(n) <= until {
		n++
	}
	return ctx.reap(n, evs), until, device
}

// complete sets, for the time model, the completion time of the event of iocb
// cb submitted to context id (the first of cb's not yet priced) and moves it
// to its place in completion order (after the events that complete no later).
func (a *aioTable) complete(id uint64, cb *Iocb, at int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ctx := a.ctxs[id]
	if ctx == nil {
		return
	}
	for i := range ctx.done {
		d := &ctx.done[i]
		if d.cb != cb { // cb is not nil: priced events are passed over
			continue
		}
		e := aioDone{ev: d.ev, at: at}
		for ; i > 0 && ctx.doneAt(i-1) > at; i-- {
			ctx.done[i] = ctx.done[i-1]
		}
		ctx.done[i] = e
		return
	}
}

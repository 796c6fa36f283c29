//go:build linux

package sim_test

import (
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// sysAIO is the Linux AIO part of the syscall surface, in the facade's shape
// (x/sys/unix has no AIO wrappers): implemented by *sim.Process and by osKernel.
type sysAIO interface {
	IoSetup(nrEvents int) (sim.AioContext, error)
	IoSubmit(ctx sim.AioContext, iocbs []*sim.Iocb) (int, error)
	IoGetevents(ctx sim.AioContext, minNr, nr int, events []sim.IoEvent, timeout *unix.Timespec) (int, error)
	IoDestroy(ctx sim.AioContext) error
}

// kIocb is the kernel's struct iocb (<linux/aio_abi.h>, little-endian x86-64).
type kIocb struct {
	data      uint64
	key       uint32
	rwFlags   int32
	opcode    uint16
	reqPrio   int16
	fd        uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resFd     uint32
}

func (k *osKernel) IoSetup(nrEvents int) (sim.AioContext, error) {
	var ctx uint64
	_, _, e := unix.Syscall(unix.SYS_IO_SETUP, uintptr(nrEvents), uintptr(unsafe.Pointer(&ctx)), 0)
	if e != 0 {
		return 0, e
	}
	return sim.AioContext(ctx), nil
}

func (k *osKernel) IoSubmit(ctx sim.AioContext, iocbs []*sim.Iocb) (int, error) {
	cbs := make([]kIocb, len(iocbs))
	ptrs := make([]uintptr, len(iocbs)+1) // +1: a valid address with no iocbs
	var iovs [][]unix.Iovec
	for i, cb := range iocbs {
		fd := int(int32(cb.Fd))
		if fd >= 0 {
			fd = k.fd(fd)
		}
		kc := &cbs[i]
		*kc = kIocb{data: cb.Data, rwFlags: cb.RwFlags, opcode: cb.Opcode, reqPrio: cb.ReqPrio, fd: uint32(fd),
			offset: cb.Offset, flags: cb.Flags, resFd: cb.ResFd}
		switch {
		case cb.Iov != nil:
			v := make([]unix.Iovec, len(cb.Iov))
			for j, b := range cb.Iov {
				v[j].SetLen(len(b))
				if len(b) > 0 {
					v[j].Base = &b[0]
				}
			}
			iovs = append(iovs, v)
			if len(v) > 0 {
				kc.buf = uint64(uintptr(unsafe.Pointer(&v[0])))
			}
			kc.nbytes = uint64(len(v))
		case len(cb.Buf) > 0:
			kc.buf = uint64(uintptr(unsafe.Pointer(&cb.Buf[0])))
			kc.nbytes = uint64(len(cb.Buf))
		}
		if cb.Addr != 0 {
			kc.buf = cb.Addr
		}
		ptrs[i] = uintptr(unsafe.Pointer(kc))
	}
	r, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, uintptr(ctx), uintptr(len(iocbs)), uintptr(unsafe.Pointer(&ptrs[0])))
	runtime.KeepAlive(cbs)
	runtime.KeepAlive(iovs)
	runtime.KeepAlive(iocbs)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func (k *osKernel) IoGetevents(ctx sim.AioContext, minNr, nr int, events []sim.IoEvent, timeout *unix.Timespec) (int, error) {
	var p unsafe.Pointer
	if len(events) > 0 {
		p = unsafe.Pointer(&events[0]) // sim.IoEvent has struct io_event's layout
	}
	r, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, uintptr(ctx), uintptr(minNr), uintptr(nr), uintptr(p), uintptr(unsafe.Pointer(timeout)), 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}

func (k *osKernel) IoDestroy(ctx sim.AioContext) error {
	_, _, e := unix.Syscall(unix.SYS_IO_DESTROY, uintptr(ctx), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// aioResult packs a call's result n and an event's res (a byte count or a
// negated errno, 32 bits are plenty here) into one comparable value.
func aioResult(n, res int64) int64 { return n<<32 | int64(uint32(res)) }

// TestErrorPathsAIO runs the error paths of io_setup, io_submit, io_getevents
// and io_destroy on the kernel and on the model from the same starting state
// (setupErrpaths) and asserts the expected answer on both. Rows that submit
// iocbs return what io_submit returned and, when it submitted something, the
// first completion's res (a byte count or a negated errno) as well.
func TestErrorPathsAIO(t *testing.T) {
	h := newHost(t)
	type env struct {
		s  sysAIO
		fd func(int) int
	}
	zero := &unix.Timespec{}
	// submit sets up a context of 8, submits cbs and returns io_submit's
	// result, and the first event's res when one was submitted.
	submit := func(e env, cbs ...*sim.Iocb) (int64, int64, error) {
		ctx, err := e.s.IoSetup(8)
		if err != nil {
			return 0, 0, err
		}
		defer e.s.IoDestroy(ctx)
		n, err := e.s.IoSubmit(ctx, cbs)
		if err != nil || n == 0 {
			return int64(n), 0, err
		}
		evs := make([]sim.IoEvent, n)
		got, err := e.s.IoGetevents(ctx, n, n, evs, &unix.Timespec{Sec: 5})
		if err != nil {
			return int64(n), 0, err
		}
		if got < 1 {
			return int64(n), 0, syscall.ETIME
		}
		return int64(n), evs[0].Res, nil
	}
	buf := func(n int) []byte { return make([]byte, n) }
	// direct opens /f (5000 bytes) with O_DIRECT.
	direct := func(e env) (int, error) { return e.s.(sys).Open("/f", unix.O_RDWR|unix.O_DIRECT, 0) }
	rows := []struct {
		name string
		do   func(e env) (int64, int64, error)
		want syscall.Errno
		ret  int64 // with want 0: io_submit's result (or the call's)
		res  int64 // with want 0 and ret > 0: the first event's res
	}{
		{name: "io_setup/0", want: unix.EINVAL, do: func(e env) (int64, int64, error) { _, err := e.s.IoSetup(0); return 0, 0, err }},
		{name: "io_setup/negative", want: unix.EINVAL, do: func(e env) (int64, int64, error) { _, err := e.s.IoSetup(-1); return 0, 0, err }},
		// ioctx_alloc: the ring's overflow check (EINVAL) comes before aio-max-nr (EAGAIN)
		{name: "io_setup/beyond aio-max-nr", want: unix.EAGAIN, do: func(e env) (int64, int64, error) { _, err := e.s.IoSetup(100000); return 0, 0, err }},
		{name: "io_setup/ring too large", want: unix.EINVAL, do: func(e env) (int64, int64, error) { _, err := e.s.IoSetup(5000000); return 0, 0, err }},
		{name: "io_destroy/unknown context", want: unix.EINVAL, do: func(e env) (int64, int64, error) { return 0, 0, e.s.IoDestroy(12345) }},
		{name: "io_destroy/twice", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			ctx, err := e.s.IoSetup(1)
			if err != nil {
				return 0, 0, err
			}
			if err := e.s.IoDestroy(ctx); err != nil {
				return 0, 0, err
			}
			return 0, 0, e.s.IoDestroy(ctx)
		}},
		{name: "io_submit/unknown context", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			n, err := e.s.IoSubmit(12345, []*sim.Iocb{{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10)}})
			return int64(n), 0, err
		}},
		{name: "io_getevents/unknown context", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			n, err := e.s.IoGetevents(12345, 0, 1, make([]sim.IoEvent, 1), zero)
			return int64(n), 0, err
		}},
		{name: "io_getevents/min > nr", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			ctx, err := e.s.IoSetup(4)
			if err != nil {
				return 0, 0, err
			}
			defer e.s.IoDestroy(ctx)
			n, err := e.s.IoGetevents(ctx, 2, 1, make([]sim.IoEvent, 2), zero)
			return int64(n), 0, err
		}},
		{name: "io_getevents/nothing submitted", ret: 0, do: func(e env) (int64, int64, error) {
			ctx, err := e.s.IoSetup(4)
			if err != nil {
				return 0, 0, err
			}
			defer e.s.IoDestroy(ctx)
			n, err := e.s.IoGetevents(ctx, 0, 1, make([]sim.IoEvent, 1), zero)
			return int64(n), 0, err
		}},
		{name: "io_submit/no iocbs", ret: 0, do: func(e env) (int64, int64, error) { return submit(e) }},
		{name: "io_submit/pread", ret: 1, res: 10, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10)})
		}},
		{name: "io_submit/pread past EOF", ret: 1, res: 0, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: 1 << 20})
		}},
		{name: "io_submit/pwrite", ret: 1, res: 10, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: 100})
		}},
		{name: "io_submit/preadv", ret: 1, res: 15, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREADV, Fd: uint32(e.fd(fdRW)), Iov: [][]byte{buf(5), buf(10)}})
		}},
		{name: "io_submit/fsync", ret: 1, res: 0, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_FSYNC, Fd: uint32(e.fd(fdRW))})
		}},
		{name: "io_submit/fdsync of O_RDONLY", ret: 1, res: 0, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_FDSYNC, Fd: uint32(e.fd(fdRO))})
		}},
		{name: "io_submit/never-opened fd", want: unix.EBADF, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdClosed)), Buf: buf(10)})
		}},
		{name: "io_submit/O_PATH fd", want: unix.EBADF, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdPath)), Buf: buf(10)})
		}},
		{name: "io_submit/pread of O_WRONLY", want: unix.EBADF, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdWO)), Buf: buf(10)})
		}},
		{name: "io_submit/pwrite of O_RDONLY", want: unix.EBADF, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRO)), Buf: buf(10)})
		}},
		{name: "io_submit/pread of a directory", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdDir)), Buf: buf(10)})
		}},
		{name: "io_submit/fsync of a directory", ret: 1, res: 0, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_FSYNC, Fd: uint32(e.fd(fdDir))})
		}},
		{name: "io_submit/pread at a negative offset", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: -1})
		}},
		{name: "io_submit/pwrite at a negative offset", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: -1})
		}},
		{name: "io_submit/unknown opcode", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: 99, Fd: uint32(e.fd(fdRW)), Buf: buf(10)})
		}},
		{name: "io_submit/unknown opcode of a closed fd", want: unix.EBADF, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: 99, Fd: uint32(e.fd(fdClosed)), Buf: buf(10)})
		}},
		// aio_flags bits other than RESFD and IOPRIO are not checked.
		{name: "io_submit/unknown aio_flags bit", ret: 1, res: 10, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Flags: 1 << 5})
		}},
		{name: "io_submit/unknown RWF flag", want: unix.EOPNOTSUPP, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), RwFlags: 1 << 30})
		}},
		{name: "io_submit/unknown RWF flag of O_WRONLY read", want: unix.EOPNOTSUPP, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdWO)), Buf: buf(10), RwFlags: 1 << 30})
		}},
		{name: "io_submit/RWF_DSYNC write", ret: 1, res: 10, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), RwFlags: unix.RWF_DSYNC})
		}},
		// ext4's buffered write path refuses RWF_NOWAIT when the I/O runs: the
		// submission succeeds and the completion carries the error.
		{name: "io_submit/RWF_NOWAIT buffered pwrite", ret: 1, res: -int64(unix.EOPNOTSUPP), do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), RwFlags: unix.RWF_NOWAIT})
		}},
		{name: "io_submit/RWF_ATOMIC pwrite", want: unix.EOPNOTSUPP, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), RwFlags: 0x40})
		}},
		{name: "io_submit/RWF_APPEND|RWF_NOAPPEND", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), RwFlags: unix.RWF_APPEND | 0x20})
		}},
		{name: "io_submit/pread of O_WRONLY at a negative offset", want: unix.EBADF, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdWO)), Buf: buf(10), Offset: -1})
		}},
		{name: "io_submit/pread past the largest offset", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: 1<<63 - 5})
		}},
		{name: "io_submit/preadv of a directory", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREADV, Fd: uint32(e.fd(fdDir)), Iov: [][]byte{buf(10)}})
		}},
		{name: "io_submit/fsync with an offset", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_FSYNC, Fd: uint32(e.fd(fdRW)), Offset: 4096})
		}},
		{name: "io_submit/fdsync with a buffer", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_FDSYNC, Fd: uint32(e.fd(fdRW)), Buf: buf(10)})
		}},
		{name: "io_submit/fsync with RWF flags", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_FSYNC, Fd: uint32(e.fd(fdRW)), RwFlags: unix.RWF_DSYNC})
		}},
		// O_DIRECT: alignment is the I/O's business, not the submission's
		{name: "io_submit/O_DIRECT pread at a misaligned buffer", ret: 1, res: -int64(unix.EINVAL), do: func(e env) (int64, int64, error) {
			fd, err := direct(e)
			if err != nil {
				return 0, 0, err
			}
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(fd), Buf: pageBuf(2 * 4096)[1 : 1+4096]})
		}},
		{name: "io_submit/O_DIRECT pread at a misaligned offset", ret: 1, res: -int64(unix.EINVAL), do: func(e env) (int64, int64, error) {
			fd, err := direct(e)
			if err != nil {
				return 0, 0, err
			}
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(fd), Buf: pageBuf(4096), Offset: 100})
		}},
		{name: "io_submit/O_DIRECT pwrite at a misaligned offset", ret: 1, res: -int64(unix.EINVAL), do: func(e env) (int64, int64, error) {
			fd, err := direct(e)
			if err != nil {
				return 0, 0, err
			}
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(fd), Buf: pageBuf(4096), Offset: 100})
		}},
		{name: "io_submit/O_DIRECT pwritev", ret: 1, res: 8192, do: func(e env) (int64, int64, error) {
			fd, err := direct(e)
			if err != nil {
				return 0, 0, err
			}
			b := pageBuf(8192)
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITEV, Fd: uint32(fd), Iov: [][]byte{b[:4096], b[4096:]}, Offset: 8192})
		}},
		{name: "io_submit/O_DIRECT preadv", ret: 1, res: 5000, do: func(e env) (int64, int64, error) {
			fd, err := direct(e)
			if err != nil {
				return 0, 0, err
			}
			b := pageBuf(8192)
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREADV, Fd: uint32(fd), Iov: [][]byte{b[:4096], b[4096:]}})
		}},
		{name: "io_submit/O_DIRECT preadv misaligned", ret: 1, res: -int64(unix.EINVAL), do: func(e env) (int64, int64, error) {
			fd, err := direct(e)
			if err != nil {
				return 0, 0, err
			}
			b := pageBuf(3 * 4096)
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREADV, Fd: uint32(fd), Iov: [][]byte{b[:4096], b[4097 : 4097+4096]}})
		}},
		// a bad buffer address: past user space at io_submit, unmapped in the
		// completion once data would move
		{name: "io_submit/pread to a kernel address", want: unix.EFAULT, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Addr: 0xffff800000000000})
		}},
		{name: "io_submit/pwrite from a kernel address", want: unix.EFAULT, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Addr: 0xffff800000000000})
		}},
		{name: "io_submit/pread past user space", want: unix.EFAULT, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(4096), Addr: 0x7ffffffff000 - 100})
		}},
		{name: "io_submit/pread to an unmapped address", ret: 1, res: -int64(unix.EFAULT), do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Addr: 0x1000})
		}},
		{name: "io_submit/pread past EOF to an unmapped address", ret: 1, res: 0, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: 1 << 20, Addr: 0x1000})
		}},
		{name: "io_submit/pwrite from an unmapped address", ret: 1, res: -int64(unix.EFAULT), do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: 7000, Addr: 0x1000})
		}},
		// the file grows to where the write began, with nothing written
		{name: "io_submit/pwrite from an unmapped address past EOF", ret: 1, res: 7000, do: func(e env) (int64, int64, error) {
			n, _, err := submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: 7000, Addr: 0x1000})
			var st unix.Stat_t
			if err == nil {
				err = e.s.(sys).Fstat(e.fd(fdRW), &st)
			}
			return n, st.Size, err
		}},
		{name: "io_submit/pread of O_WRONLY to a kernel address", want: unix.EBADF, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdWO)), Buf: buf(10), Addr: 0xffff800000000000})
		}},
		{name: "io_submit/pread at a negative offset to a kernel address", want: unix.EFAULT, do: func(e env) (int64, int64, error) {
			return submit(e, &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: -1, Addr: 0xffff800000000000})
		}},
		{name: "io_submit/first iocb of two has an unknown opcode", want: unix.EINVAL, do: func(e env) (int64, int64, error) {
			return submit(e,
				&sim.Iocb{Opcode: 99, Fd: uint32(e.fd(fdRW)), Buf: buf(10)},
				&sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10)})
		}},
		{name: "io_submit/second iocb has an unknown opcode", ret: 1, res: 10, do: func(e env) (int64, int64, error) {
			return submit(e,
				&sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10)},
				&sim.Iocb{Opcode: 99, Fd: uint32(e.fd(fdRW)), Buf: buf(10)})
		}},
		{name: "io_submit/second iocb at a negative offset", ret: 1, res: 10, do: func(e env) (int64, int64, error) {
			return submit(e,
				&sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10)},
				&sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10), Offset: -1})
		}},
		{name: "io_submit/second iocb fails", ret: 1, res: 10, do: func(e env) (int64, int64, error) {
			return submit(e,
				&sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdRW)), Buf: buf(10)},
				&sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(e.fd(fdClosed)), Buf: buf(10)})
		}},
	}
	// The rows run through runErrRows with io_submit's result and the first
	// event's res in one value (aioResult).
	errRows := make([]errRow, len(rows))
	for i, r := range rows {
		errRows[i] = errRow{name: r.name, want: r.want, ret: aioResult(r.ret, r.res), do: func(e errEnv) (int64, error) {
			n, res, err := r.do(env{s: e.s.(sysAIO), fd: e.fd})
			return aioResult(n, res), err
		}}
	}
	runErrRows(t, h, errRows)
}

// pageBuf returns n bytes that start at a page boundary.
func pageBuf(n int) []byte {
	b := make([]byte, n+4096)
	off := (4096 - int(uintptr(unsafe.Pointer(&b[0]))%4096)) % 4096
	return b[off : off+n : off+n]
}

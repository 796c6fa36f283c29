package interposer

import (
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// The slots of the calls the syscall table marks Custom that no layout can say,
// each as strace 6 prints it on Linux x86-64: utimensat's NULL path and times,
// xattr values, AIO contexts, iocbs, events and timeouts, rlimits, and the offset
// pointers of copy_file_range and sendfile.

// appendCustomSlot writes slot k of c when the call's row is Custom and the slot
// is one its layout cannot say; done is false for a slot printed from its layout.
func appendCustomSlot(b []byte, c *sim.Call, k int, r sim.Result, strsize int) (_ []byte, done bool) {
	failed := r.Errno != 0
	switch c.Nr {
	case sim.SYS_UTIMENSAT:
		switch k {
		case 1:
			if c.Path == "" && c.Args[1] == sim.PathNull {
				return append(b, "NULL"...), true
			}
		case 2:
			ts, _ := c.Obj.(*[2]unix.Timespec)
			return appendTimes(b, ts), true
		}
	case sim.SYS_SETXATTR, sim.SYS_LSETXATTR, sim.SYS_FSETXATTR:
		if k == 2 {
			return appendQuoted(b, c.Buf, strsize), true
		}
	case sim.SYS_IO_SETUP:
		if ctx, _ := c.Obj.(*sim.AioContext); k == 1 && ctx != nil && !failed {
			b = append(b, '[')
			return append(appendHex(b, int64(*ctx)), ']'), true
		}
	case sim.SYS_IO_SUBMIT:
		if k == 2 {
			cbs, _ := c.Obj.([]*sim.Iocb)
			return appendIocbs(b, cbs, strsize), true
		}
	case sim.SYS_IO_GETEVENTS:
		switch k {
		case 3:
			evs, _ := c.Obj.([]sim.IoEvent)
			if failed || evs == nil {
				return append(b, fakeAddr...), true
			}
			return appendEvents(b, evs[:min(max(r.Ret, 0), int64(len(evs)))]), true
		case 4:
			if c.Args[4] == sim.AioWaitForever {
				return append(b, "NULL"...), true
			}
			return appendTimespec(b, c.Args[4]/1e9, c.Args[4]%1e9), true
		}
	case sim.SYS_GETRLIMIT, sim.SYS_SETRLIMIT, sim.SYS_PRLIMIT64:
		in := 1 // the new limit (getrlimit: the limit it returns)
		if c.Nr == sim.SYS_PRLIMIT64 {
			in = 2
		}
		rl, _ := c.Obj.(*unix.Rlimit)
		switch {
		case k == 3: // prlimit64's old limit: the model does not return it
			return append(b, "NULL"...), true
		case k != in:
		case c.Nr == sim.SYS_GETRLIMIT && (failed || rl == nil):
			return append(b, fakeAddr...), true
		case rl == nil:
			return append(b, "NULL"...), true
		default:
			return appendRlimit(b, rl), true
		}
	case sim.SYS_OPENAT2:
		if how, _ := c.Obj.(*unix.OpenHow); k == 2 && how != nil {
			// strace's print_open_how: mode only when set or with O_CREAT.
			b = append(b, "{flags="...)
			b = appendFlags(b, sim.OpenFlags, int64(how.Flags))
			if how.Mode != 0 || how.Flags&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
				b = append(b, ", mode="...)
				b = appendMode(b, int64(how.Mode))
			}
			b = append(b, ", resolve="...)
			b = appendFlags(b, sim.ResolveFlags, int64(how.Resolve))
			return append(b, '}'), true
		}
	case sim.SYS_UTIME:
		if k == 1 {
			ub, _ := c.Obj.(*unix.Utimbuf)
			if ub == nil {
				return append(b, "NULL"...), true
			}
			b = append(b, "{actime="...)
			b = strconv.AppendInt(b, ub.Actime, 10)
			b = append(b, ", modtime="...)
			b = strconv.AppendInt(b, ub.Modtime, 10)
			return append(b, '}'), true
		}
	case sim.SYS_UTIMES, sim.SYS_FUTIMESAT:
		at := 1
		if c.Nr == sim.SYS_FUTIMESAT {
			at = 2
			if k == 1 && c.Path == "" && c.Args[1] == sim.PathNull {
				return append(b, "NULL"...), true
			}
		}
		if k == at {
			tv, _ := c.Obj.(*[2]unix.Timeval)
			if tv == nil {
				return append(b, "NULL"...), true
			}
			b = append(b, '[')
			for i, t := range tv {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = append(b, "{tv_sec="...)
				b = strconv.AppendInt(b, t.Sec, 10)
				b = append(b, ", tv_usec="...)
				b = strconv.AppendInt(b, t.Usec, 10)
				b = append(b, '}')
			}
			return append(b, ']'), true
		}
	case sim.SYS_PIPE, sim.SYS_PIPE2, sim.SYS_SOCKETPAIR:
		fds, _ := c.Obj.(*[2]int32)
		if (k == 0 && c.Nr != sim.SYS_SOCKETPAIR || k == 3) && fds != nil && !failed {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(fds[0]), 10)
			b = append(b, ", "...)
			b = strconv.AppendInt(b, int64(fds[1]), 10)
			return append(b, ']'), true
		}
	case sim.SYS_COPY_FILE_RANGE:
		if k == 1 || k == 3 {
			return appendOffsetPtr(b, c.Args[k], 0), true
		}
	case sim.SYS_SENDFILE:
		if k == 2 {
			moved := int64(0)
			if !failed {
				moved = max(r.Ret, 0)
			}
			return appendOffsetPtr(b, c.Args[2], moved), true
		}
	}
	return b, false
}

// appendHex writes v as strace's %#lx: 0 as "0", others as 0x....
func appendHex(b []byte, v int64) []byte {
	if v == 0 {
		return append(b, '0')
	}
	b = append(b, "0x"...)
	return strconv.AppendUint(b, uint64(v), 16)
}

// appendTimespec writes a struct timespec.
func appendTimespec(b []byte, sec, nsec int64) []byte {
	b = append(b, "{tv_sec="...)
	b = strconv.AppendInt(b, sec, 10)
	b = append(b, ", tv_nsec="...)
	b = strconv.AppendInt(b, nsec, 10)
	return append(b, '}')
}

// appendTimes writes utimensat's times: NULL, or each time as UTIME_NOW,
// UTIME_OMIT or a timespec followed by its date in a comment (in UTC, as strace
// in the UTC time zone prints it).
func appendTimes(b []byte, ts *[2]unix.Timespec) []byte {
	if ts == nil {
		return append(b, "NULL"...)
	}
	b = append(b, '[')
	for i, t := range ts {
		if i > 0 {
			b = append(b, ", "...)
		}
		switch t.Nsec {
		case unix.UTIME_NOW:
			b = append(b, "UTIME_NOW"...)
			continue
		case unix.UTIME_OMIT:
			b = append(b, "UTIME_OMIT"...)
			continue
		}
		b = appendTimespec(b, t.Sec, t.Nsec)
		if t.Nsec < 0 || t.Nsec >= 1e9 {
			continue // strace prints no date for an invalid time
		}
		b = append(b, " /* "...)
		b = time.Unix(t.Sec, 0).UTC().AppendFormat(b, "2006-01-02T15:04:05")
		if t.Nsec != 0 {
			b = append(b, '.')
			n := strconv.AppendInt(nil, 1e9+t.Nsec, 10) // 1 then 9 digits
			b = append(b, n[1:]...)
		}
		b = append(b, "+0000 */"...)
	}
	return append(b, ']')
}

// appendRlimit writes a struct rlimit as strace does: RLIM64_INFINITY, and values
// above 1024 that are multiples of it as N*1024.
func appendRlimit(b []byte, rl *unix.Rlimit) []byte {
	put := func(v uint64) {
		switch {
		case v == unix.RLIM_INFINITY:
			b = append(b, "RLIM64_INFINITY"...)
		case v > 1024 && v%1024 == 0:
			b = strconv.AppendUint(b, v/1024, 10)
			b = append(b, "*1024"...)
		default:
			b = strconv.AppendUint(b, v, 10)
		}
	}
	b = append(b, "{rlim_cur="...)
	put(rl.Cur)
	b = append(b, ", rlim_max="...)
	put(rl.Max)
	return append(b, '}')
}

// appendOffsetPtr writes a loff_t pointer argument: NULL (sim.NullOffset), or
// [N]; with moved > 0 the value the call left, as sendfile's [N] => [M].
func appendOffsetPtr(b []byte, off, moved int64) []byte {
	if off == sim.NullOffset {
		return append(b, "NULL"...)
	}
	b = append(b, '[')
	b = strconv.AppendInt(b, off, 10)
	b = append(b, ']')
	if moved > 0 {
		b = append(b, " => ["...)
		b = strconv.AppendInt(b, off+moved, 10)
		b = append(b, ']')
	}
	return b
}

var aioCmds = [...]string{
	sim.IOCB_CMD_PREAD: "IOCB_CMD_PREAD", sim.IOCB_CMD_PWRITE: "IOCB_CMD_PWRITE",
	sim.IOCB_CMD_FSYNC: "IOCB_CMD_FSYNC", sim.IOCB_CMD_FDSYNC: "IOCB_CMD_FDSYNC",
	sim.IOCB_CMD_POLL: "IOCB_CMD_POLL", sim.IOCB_CMD_NOOP: "IOCB_CMD_NOOP",
	sim.IOCB_CMD_PREADV: "IOCB_CMD_PREADV", sim.IOCB_CMD_PWRITEV: "IOCB_CMD_PWRITEV",
}

// appendIocbs writes io_submit's iocb array as strace's print_iocb does: the
// header (aio_data, aio_rw_flags when set, aio_lio_opcode, aio_reqprio when set,
// aio_fildes), then for reads and writes the buffer (the bytes of a write), its
// length and the offset, then aio_flags and aio_resfd when set.
func appendIocbs(b []byte, cbs []*sim.Iocb, strsize int) []byte {
	if cbs == nil {
		return append(b, "NULL"...)
	}
	b = append(b, '[')
	for i, cb := range cbs {
		if i > 0 {
			b = append(b, ", "...)
		}
		if cb == nil {
			b = append(b, fakeAddr...) // an iocb the kernel cannot read
			continue
		}
		b = append(b, "{aio_data="...)
		b = appendHex(b, int64(cb.Data))
		if cb.RwFlags != 0 {
			b = append(b, ", aio_rw_flags="...)
			b = appendFlags(b, sim.Info(sim.SYS_PWRITEV2).Args[4].Flags, int64(cb.RwFlags))
		}
		b = append(b, ", aio_lio_opcode="...)
		if int(cb.Opcode) < len(aioCmds) && aioCmds[cb.Opcode] != "" {
			b = append(b, aioCmds[cb.Opcode]...)
		} else {
			b = strconv.AppendUint(b, uint64(cb.Opcode), 10)
		}
		if cb.ReqPrio != 0 {
			b = append(b, ", aio_reqprio="...)
			b = strconv.AppendInt(b, int64(cb.ReqPrio), 10)
		}
		b = append(b, ", aio_fildes="...)
		b = strconv.AppendInt(b, int64(int32(cb.Fd)), 10)
		switch cb.Opcode {
		case sim.IOCB_CMD_PREAD, sim.IOCB_CMD_PWRITE:
			b = append(b, ", aio_buf="...)
			if cb.Opcode == sim.IOCB_CMD_PWRITE && cb.Addr == 0 {
				b = appendQuoted(b, cb.Buf, strsize)
			} else if cb.Addr != 0 { // an address the call gave (a bad one: the bytes are not there)
				b = appendHex(b, int64(cb.Addr))
			} else {
				b = append(b, fakeAddr...)
			}
			b = append(b, ", aio_nbytes="...)
			b = strconv.AppendInt(b, int64(len(cb.Buf)), 10)
			b = append(b, ", aio_offset="...)
			b = strconv.AppendInt(b, cb.Offset, 10)
		case sim.IOCB_CMD_PWRITEV:
			b = append(b, ", aio_buf="...)
			b = appendIov(b, cb.Iov, false, sim.Result{}, strsize)
			b = append(b, ", aio_offset="...)
			b = strconv.AppendInt(b, cb.Offset, 10)
		case sim.IOCB_CMD_PREADV: // the buffers' addresses, as a read's are before it ran
			b = append(b, ", aio_buf=["...)
			for i, v := range cb.Iov {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = append(b, "{iov_base="+fakeAddr+", iov_len="...)
				b = strconv.AppendInt(b, int64(len(v)), 10)
				b = append(b, '}')
			}
			b = append(b, ']')
			b = append(b, ", aio_offset="...)
			b = strconv.AppendInt(b, cb.Offset, 10)
		}
		if cb.Flags != 0 || cb.ResFd != 0 {
			b = append(b, ", aio_flags="...)
			if cb.Flags == sim.IOCB_FLAG_RESFD {
				b = append(b, "IOCB_FLAG_RESFD"...)
			} else {
				b = appendHex(b, int64(cb.Flags))
			}
			b = append(b, ", aio_resfd="...)
			b = strconv.AppendInt(b, int64(int32(cb.ResFd)), 10)
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendEvents writes io_getevents' completions.
func appendEvents(b []byte, evs []sim.IoEvent) []byte {
	b = append(b, '[')
	for i, e := range evs {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "{data="...)
		b = appendHex(b, int64(e.Data))
		b = append(b, ", obj="...)
		b = appendHex(b, int64(e.Obj))
		b = append(b, ", res="...)
		b = strconv.AppendInt(b, e.Res, 10)
		b = append(b, ", res2="...)
		b = strconv.AppendInt(b, e.Res2, 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

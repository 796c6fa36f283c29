package replay

import (
	"bytes"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

// maxBuf bounds the buffer one replayed call may claim: a hostile trace's read of
// 2^40 bytes is not allocated.
const maxBuf = 256 << 20

// readSlack is how much larger than the recorded result a read's buffer is.
const readSlack = 64 << 10

// pathArg returns argument i as a path ("" for NULL).
func pathArg(ev *strace.Event, i int) (string, bool) {
	// A string first: Str answers it without building the argument tree.
	if b, trunc, ok := ev.Str(i); ok {
		if trunc {
			return "", false
		}
		return string(b), true
	}
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
	return "", false
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

// build's reasons for an xattr call whose name or value -s cut.
const (
	nameNotShown  = "name not shown"
	valueNotShown = "value not shown"
)

// build fills c from ev: slot by slot from the syscall table's layout, or by hand
// for the calls the table marks Custom (buildCustom). It returns a short reason
// when the call cannot be rebuilt from what the trace shows.
func (r *replayer) build(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, post *func(sim.Result)) string {
	in := sim.Info(nr)
	if in.Props&sim.Custom != 0 {
		return r.buildCustom(t, nr, ev, c, post)
	}
	if in.Args == nil {
		return "not replayed"
	}
	for i, a := range in.Args {
		switch a.Kind {
		case sim.ArgPath:
			if e := pathInto(ev, i, &c.Path); e != "" {
				return e
			}
		case sim.ArgPath2:
			if e := pathInto(ev, i, &c.Path2); e != "" {
				return e
			}
		case sim.ArgInBuf, sim.ArgOutBuf:
			ci := in.Slot(sim.ArgCount, 0)
			n, e := countArg(ev, ci)
			if e != "" {
				return e
			}
			c.Args[ci] = n
			if a.Kind == sim.ArgInBuf {
				c.Buf = dataArg(ev, i, n)
				continue
			}
			if lim := (ev.Ret + readSlack + 4095) &^ 4095; ev.RetKnown && ev.Ret >= 0 && n > lim {
				// The buffer need not be larger than what was read plus some: a
				// model that would read more still shows it (it fills the slack).
				// Kept a multiple of 4096, so O_DIRECT alignment is unchanged.
				n = lim
			}
			c.Buf = outBuf(r, ev, i, n)
		case sim.ArgInIov, sim.ArgOutIov:
			if e := iovArg(ev, i, a.Kind == sim.ArgInIov, c); e != "" {
				return e
			}
		case sim.ArgStat:
			c.Obj = &unix.Stat_t{}
		case sim.ArgStatx:
			c.Obj = &unix.Statx_t{}
		case sim.ArgCount:
			if in.Slot(sim.ArgInBuf, 0) >= 0 || in.Slot(sim.ArgOutBuf, 0) >= 0 {
				continue // set with its buffer
			}
			if e := intsInto(ev, c, i); e != "" {
				return e
			}
		case sim.ArgPtr:
		default: // ArgInt, ArgFd, ArgNewFd, ArgDirfd, ArgOffset, ArgMode, ArgFlags, ArgAddr
			if a.Optional && i >= ev.NArgs() {
				continue // strace left it out: 0
			}
			if e := intsInto(ev, c, i); e != "" {
				return e
			}
		}
	}
	return ""
}

// intsInto sets the Args slots idx from the event's integer arguments.
func intsInto(ev *strace.Event, c *sim.Call, idx ...int) string {
	for _, i := range idx {
		v, ok := ev.Int(i)
		if !ok {
			return fmt.Sprintf("arg %d not a number", i+1)
		}
		c.Args[i] = v
	}
	return ""
}

// pathInto sets *dst from path argument i.
func pathInto(ev *strace.Event, i int, dst *string) string {
	p, ok := pathArg(ev, i)
	if !ok {
		return fmt.Sprintf("arg %d not a path", i+1)
	}
	*dst = p
	return ""
}

// countArg returns argument i as a buffer length, bounded by maxBuf (a larger one
// is the recorded result when that fits).
func countArg(ev *strace.Event, i int) (int64, string) {
	n, ok := ev.Int(i)
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

// iovArg fills c.Iov from the iovec array argument i: buffers of the recorded
// lengths, holding the shown bytes for a call that writes them (in): the
// strings, or the `-e write=` dump, which has every byte. An array strace cut
// after -s elements ("...") ends with one more buffer that makes up the
// recorded result: the kernel fills or writes iovecs in order, so the bytes
// the call moved past the shown elements are contiguous. Bytes a write does
// not show are zeros here; the world marks them unknown (afterWrite).
func iovArg(ev *strace.Event, i int, in bool, c *sim.Call) string {
	arr := ev.Arg(i)
	if arr == nil || arr.Kind != strace.NodeArray {
		return "iovec array not shown"
	}
	c.Iov = c.Iov[:0]
	dump := ev.Dump
	total := int64(0)
	for k := range arr.Kids {
		el := &arr.Kids[k]
		if el.Kind == strace.NodeEllipsis {
			if k != len(arr.Kids)-1 || !ev.RetKnown || ev.Failed() || ev.Ret < 0 {
				return "iovec array cut"
			}
			if rest := ev.Ret - total; rest > 0 {
				if rest > maxBuf {
					return "bad iov_len"
				}
				buf := make([]byte, rest)
				if in {
					copy(buf, dump)
				}
				c.Iov = append(c.Iov, buf)
			}
			break
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
		if in {
			if len(ev.Dump) > 0 {
				dump = dump[copy(buf, dump):]
			} else if base := el.Field("iov_base"); base != nil && base.Kind == strace.NodeStr {
				copy(buf, base.Text)
			}
		}
		c.Iov = append(c.Iov, buf)
	}
	return ""
}

// buildCustom fills c for the calls the table marks Custom: those whose arguments
// a slot layout cannot say.
func (r *replayer) buildCustom(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, post *func(sim.Result)) string {
	ints := func(idx ...int) string { return intsInto(ev, c, idx...) }
	path := func(i int, dst *string) string { return pathInto(ev, i, dst) }
	count := func(i int) (int64, string) { return countArg(ev, i) }
	switch nr {
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
			if c.Args[1] == unix.F_GETLK || c.Args[1] == unix.F_OFD_GETLK {
				// l_pid is the call's answer (the holder, -1 for an OFD lock),
				// not its question: an OFD query must pass 0.
				lk.Pid = 0
			}
			if (c.Args[1] == unix.F_GETLK || c.Args[1] == unix.F_OFD_GETLK) && lk.Type == unix.F_UNLCK {
				// strace shows F_GETLK's struct as the call left it: F_UNLCK means
				// "no conflict" for a probe that asked with a lock type, which the
				// trace does not keep. Probe for the strongest.
				lk.Type = unix.F_WRLCK
			}
			c.Obj = lk
			return ""
		case unix.F_GETFD, unix.F_GETFL, unix.F_GETPIPE_SZ, unix.F_GETOWN, unix.F_GETSIG,
			unix.F_GETLEASE, unix.F_GET_SEALS:
			return "" // no third argument
		}
		return ints(2)
	case sim.SYS_SETXATTR, sim.SYS_LSETXATTR, sim.SYS_FSETXATTR, sim.SYS_REMOVEXATTR, sim.SYS_LREMOVEXATTR, sim.SYS_FREMOVEXATTR:
		// (path or fd, name[, value, size, flags]); Path2 carries the name
		fd := nr == sim.SYS_FSETXATTR || nr == sim.SYS_FREMOVEXATTR
		if fd {
			if e := ints(0); e != "" {
				return e
			}
		} else if e := path(0, &c.Path); e != "" {
			return e
		}
		if e := path(1, &c.Path2); e != "" {
			return nameNotShown
		}
		if c.Path2 != "system.posix_acl_access" && c.Path2 != "system.posix_acl_default" {
			// user., security., trusted. attributes: the model keeps none
			// (ext4 does), so neither runs nor compares them
			return "attribute not modelled"
		}
		if nr == sim.SYS_REMOVEXATTR || nr == sim.SYS_LREMOVEXATTR || nr == sim.SYS_FREMOVEXATTR {
			return ""
		}
		n, e := count(3)
		if e != "" {
			return e
		}
		if n > 0 {
			b, trunc, ok := ev.Str(2)
			if !ok || trunc || int64(len(b)) != n {
				return valueNotShown
			}
			c.Buf = bytes.Clone(b)
		}
		c.Args[3] = n
		return ints(4)
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
	case sim.SYS_PRLIMIT64:
		if e := ints(0, 1); e != "" {
			return e
		}
		lim := &unix.Rlimit{}
		if n := ev.Arg(2); n != nil && n.Kind == strace.NodeStruct {
			for _, f := range []struct {
				name string
				dst  *uint64
			}{{"rlim_cur", &lim.Cur}, {"rlim_max", &lim.Max}} {
				fld := n.Field(f.name)
				if fld == nil {
					return "rlimit not shown"
				}
				v, ok := rlimValue(fld)
				if !ok {
					return "rlimit not a number"
				}
				*f.dst = v
			}
			c.Obj = lim
		}
		return ""
	case sim.SYS_PIPE, sim.SYS_PIPE2, sim.SYS_SOCKETPAIR:
		// The model takes the lowest free fds, as the kernel did.
		idx := 0
		switch nr {
		case sim.SYS_PIPE2:
			if e := ints(1); e != "" {
				return e
			}
		case sim.SYS_SOCKETPAIR:
			idx = 3
			if e := ints(0, 1, 2); e != "" {
				return e
			}
		}
		fds := &[2]int32{}
		c.Obj = fds
		if arr := ev.Arg(idx); r.plan != nil && arr != nil && arr.Kind == strace.NodeArray && len(arr.Kids) == 2 && !ev.Failed() {
			// The kernel took the lowest free fd twice: fds below the
			// recorded ones that the model has free were held by the
			// process (inherited, or made where the trace does not show),
			// by fdAllowed's rules, as for an open.
			lo := 0
			for k := range 2 {
				want, ok := arr.Kids[k].Value()
				if !ok || want < 0 || want >= sim.NrOpen {
					break
				}
				if got := lowestFree(t, lo); int64(got) < want {
					one := *ev
					one.Ret = want
					if _, inherited := r.fdAllowed(t, &one, int64(got)); inherited {
						r.fill(t, got, int(want))
					}
				}
				lo = int(want) + 1
			}
		}
		*post = func(res sim.Result) {
			if res.Errno != 0 || ev.Failed() || !r.opts.Verify {
				return
			}
			if arr := ev.Arg(idx); arr != nil && arr.Kind == strace.NodeArray && len(arr.Kids) == 2 {
				for k := range 2 {
					if v, ok := arr.Kids[k].Value(); ok && v != int64(fds[k]) {
						r.diverge(ev, "fd", strconv.FormatInt(v, 10), strconv.FormatInt(int64(fds[k]), 10))
					}
				}
			}
		}
		return ""
	case sim.SYS_MKNOD, sim.SYS_MKNODAT:
		// (dirfd,) path, mode[, dev]: strace shows dev only for a device node,
		// as makedev(major, minor).
		p := 0
		if nr == sim.SYS_MKNODAT {
			p = 1
			if e := ints(0); e != "" {
				return e
			}
		}
		if e := path(p, &c.Path); e != "" {
			return e
		}
		if e := ints(p + 1); e != "" {
			return e
		}
		if m := c.Args[p+1] & unix.S_IFMT; m == unix.S_IFCHR || m == unix.S_IFBLK {
			dev, ok := makedevArg(ev.Arg(p + 2))
			if !ok {
				return "device number not shown"
			}
			c.Args[p+2] = dev
		}
		return ""
	case sim.SYS_GETXATTR, sim.SYS_LGETXATTR, sim.SYS_FGETXATTR:
		// (path or fd, name, value, size); Path2 carries the name
		if nr == sim.SYS_FGETXATTR {
			if e := ints(0); e != "" {
				return e
			}
		} else if e := path(0, &c.Path); e != "" {
			return e
		}
		if e := path(1, &c.Path2); e != "" {
			return nameNotShown
		}
		if c.Path2 != "system.posix_acl_access" && c.Path2 != "system.posix_acl_default" {
			return "attribute not modelled" // as setxattr
		}
		if !ev.Failed() {
			return "ACL not kept" // the file had an ACL that the model drops
		}
		n, e := count(3)
		if e != "" {
			return e
		}
		c.Args[3], c.Buf = n, r.scratch(min(n, 65536))
		return ""
	case sim.SYS_LISTXATTR, sim.SYS_LLISTXATTR, sim.SYS_FLISTXATTR:
		if nr == sim.SYS_FLISTXATTR {
			if e := ints(0); e != "" {
				return e
			}
		} else if e := path(0, &c.Path); e != "" {
			return e
		}
		if ev.RetKnown && ev.Ret > 0 {
			return "attributes not kept" // the file had some: the model keeps none
		}
		n, e := count(2)
		if e != "" {
			return e
		}
		c.Args[2], c.Buf = n, r.scratch(min(n, 65536))
		return ""
	case sim.SYS_UTIME:
		if e := path(0, &c.Path); e != "" {
			return e
		}
		n := ev.Arg(1)
		if n == nil {
			return "times not shown"
		}
		if n.Kind == strace.NodeStruct {
			b := &unix.Utimbuf{}
			for _, f := range []struct {
				name string
				dst  *int64
			}{{"actime", &b.Actime}, {"modtime", &b.Modtime}} {
				fld := n.Field(f.name)
				if fld == nil {
					return "times not shown"
				}
				v, ok := fld.Value()
				if !ok {
					return "times not shown"
				}
				*f.dst = v
			}
			c.Obj = b
		}
		return ""
	case sim.SYS_UTIMES, sim.SYS_FUTIMESAT:
		p := 0
		if nr == sim.SYS_FUTIMESAT {
			p = 1
			if e := ints(0); e != "" {
				return e
			}
			if n := ev.Arg(1); n != nil && (n.Kind == strace.NodeIdent || n.Kind == strace.NodeInt) {
				c.Args[1] = sim.PathNull // futimesat(fd, NULL, ...): the fd itself
			}
		}
		if e := path(p, &c.Path); e != "" {
			return e
		}
		n := ev.Arg(p + 1)
		if n == nil {
			return "times not shown"
		}
		if n.Kind == strace.NodeArray {
			if len(n.Kids) != 2 {
				return "times not shown"
			}
			tv := &[2]unix.Timeval{}
			for k := range 2 {
				s, u := n.Kids[k].Field("tv_sec"), n.Kids[k].Field("tv_usec")
				if s == nil || u == nil {
					return "times not shown"
				}
				sv, ok1 := s.Value()
				uv, ok2 := u.Value()
				if !ok1 || !ok2 {
					return "times not shown"
				}
				tv[k] = unix.Timeval{Sec: sv, Usec: uv}
			}
			c.Obj = tv
		}
		return ""
	case sim.SYS_SPLICE:
		// The bytes a pipe holds are not followed (see replay's pipe reads
		// and writes), so neither are those splice moves.
		return "pipe data not followed"
	case sim.SYS_STATFS, sim.SYS_FSTATFS:
		// The figures are the file system's: only the result is compared.
		if nr == sim.SYS_FSTATFS {
			if e := ints(0); e != "" {
				return e
			}
		} else if e := path(0, &c.Path); e != "" {
			return e
		}
		c.Obj = &unix.Statfs_t{}
		return ""
	case sim.SYS_OPENAT2:
		// (dirfd, path, {flags=..., mode=..., resolve=...}, size): strace
		// leaves out a zero mode (and resolve).
		if e := path(1, &c.Path); e != "" {
			return e
		}
		if e := ints(0, 3); e != "" {
			return e
		}
		n := ev.Arg(2)
		if n == nil || n.Kind != strace.NodeStruct {
			return "open_how not shown"
		}
		how := &unix.OpenHow{}
		for _, f := range []struct {
			name string
			dst  *uint64
		}{{"flags", &how.Flags}, {"mode", &how.Mode}, {"resolve", &how.Resolve}} {
			if fld := n.Field(f.name); fld != nil {
				v, ok := fld.Value()
				if !ok {
					return "open_how " + f.name + " not a number"
				}
				*f.dst = uint64(v)
			}
		}
		c.Obj = how
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
		cbs, why := iocbs(ev.Arg(2))
		c.Obj = cbs
		return why
	case sim.SYS_IO_GETEVENTS:
		if e := ints(0, 1, 2); e != "" {
			return e
		}
		c.Args[0] = int64(r.aioCtx[uint64(c.Args[0])])
		if ev.RetKnown && ev.Ret >= 0 && ev.Ret <= c.Args[2] {
			// How many completions one call returns is the device's and the
			// kernel's choice: follow the recording. The call returned once
			// that many had completed (fewer than min_nr: when the timeout
			// ran out), so the model waits for that many, within the
			// timeout (under a time model its completions come from its
			// device; without one every iocb has completed at submission).
			c.Args[1], c.Args[2] = ev.Ret, ev.Ret
		}
		if c.Args[2] < 0 || c.Args[2] > 1<<16 {
			return "bad nr"
		}
		c.Obj = make([]sim.IoEvent, c.Args[2])
		c.Args[4] = aioTimeout(ev.Arg(4))
		return ""
	}
	return "not replayed"
}

// rlimValue returns a member of a struct rlimit as strace prints it: a number,
// RLIM64_INFINITY, or N*1024 for a multiple of 1024 above it.
func rlimValue(n *strace.Node) (uint64, bool) {
	if v, ok := n.Value(); ok {
		return uint64(v), true // RLIM64_INFINITY is -1
	}
	if n.Kind != strace.NodeRaw {
		return 0, false
	}
	k, ok := bytes.CutSuffix(n.Raw, []byte("*1024"))
	if !ok {
		return 0, false
	}
	v, err := strconv.ParseUint(string(k), 10, 54)
	if err != nil {
		return 0, false
	}
	return v * 1024, true
}

// makedevArg returns a dev_t as strace prints it: makedev(0x1, 0x3), or a
// number; encoded as glibc's makedev.
func makedevArg(n *strace.Node) (int64, bool) {
	if n == nil {
		return 0, false
	}
	if v, ok := n.Value(); ok {
		return v, true
	}
	if n.Kind == strace.NodeCall && string(n.Text) == "makedev" && len(n.Kids) == 2 {
		a, ok1 := n.Kids[0].Value()
		b, ok2 := n.Kids[1].Value()
		if ok1 && ok2 && a >= 0 && b >= 0 {
			return int64(unix.Mkdev(uint32(a), uint32(b))), true
		}
		return 0, false
	}
	var text []byte
	switch {
	case n.Kind == strace.NodeRaw:
		text = n.Raw
	case len(n.Text) > 0:
		text = n.Text
	}
	in, ok := bytes.CutPrefix(bytes.TrimSpace(text), []byte("makedev("))
	if !ok {
		return 0, false
	}
	in, ok = bytes.CutSuffix(in, []byte(")"))
	if !ok {
		return 0, false
	}
	maj, min, ok := bytes.Cut(in, []byte(","))
	if !ok {
		return 0, false
	}
	a, err1 := strconv.ParseUint(string(bytes.TrimSpace(maj)), 0, 32)
	b, err2 := strconv.ParseUint(string(bytes.TrimSpace(min)), 0, 32)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return int64(unix.Mkdev(uint32(a), uint32(b))), true
}

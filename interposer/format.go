package interposer

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// strace-style rendering of calls and results (Linux x86-64 values), used by Trace.
// Interposers sit below package strace, so this is a small formatter of its own; the
// round-trip test parses its output with package strace.

// accModes are the names strace gives the access modes of open flags.
var accModes = [4]string{unix.O_RDONLY: "O_RDONLY", unix.O_WRONLY: "O_WRONLY", unix.O_RDWR: "O_RDWR", unix.O_ACCMODE: "O_ACCMODE"}

// appendFlags writes v as strace prints an argument of the flag set fs.
func appendFlags(b []byte, fs *sim.FlagSet, v int64) []byte {
	if fs.Style == sim.FlagsOne {
		for _, f := range fs.Names {
			if v == f.Value {
				return append(b, f.Name...)
			}
		}
		if fs.Base == 16 && v != 0 {
			b = append(b, "0x"...)
		}
		return strconv.AppendInt(b, v, fs.Base)
	}
	rest, n := v, 0
	if fs.Style == sim.FlagsOpen {
		b = append(b, accModes[v&unix.O_ACCMODE]...)
		rest, n = v&^unix.O_ACCMODE, 1
	}
	for _, f := range fs.Names {
		if rest&f.Value == f.Value && f.Value != 0 {
			if n > 0 {
				b = append(b, '|')
			}
			b = append(b, f.Name...)
			rest &^= f.Value
			n++
		}
	}
	if rest != 0 || n == 0 {
		if n > 0 {
			b = append(b, '|')
		}
		if rest == 0 && fs.Zero != "" {
			return append(b, fs.Zero...)
		}
		if rest == 0 {
			return append(b, '0')
		}
		b = append(b, "0x"...)
		b = strconv.AppendUint(b, uint64(uint32(rest)), 16) // a C int
	}
	return b
}

func appendDirfd(b []byte, fd int64) []byte {
	if int32(fd) == unix.AT_FDCWD {
		return append(b, "AT_FDCWD"...)
	}
	return strconv.AppendInt(b, int64(int32(fd)), 10)
}

func appendMode(b []byte, m int64) []byte {
	b = append(b, "0"...)
	return strconv.AppendInt(b, m, 8)
}

// appendQuoted writes s as a C string the way strace does, at most max bytes,
// followed by ... when it was cut.
func appendQuoted(b, s []byte, max int) []byte {
	cut := false
	if len(s) > max {
		s, cut = s[:max], true
	}
	b = append(b, '"')
	for i, c := range s {
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, `\n`...)
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\v':
			b = append(b, `\v`...)
		case '\f':
			b = append(b, `\f`...)
		default:
			if c >= ' ' && c < 0x7f {
				b = append(b, c)
				continue
			}
			b = append(b, '\\')
			nextDigit := i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'
			o := strconv.FormatInt(int64(c), 8)
			if nextDigit {
				o = strings.Repeat("0", 3-len(o)) + o
			}
			b = append(b, o...)
		}
	}
	b = append(b, '"')
	if cut {
		b = append(b, "..."...)
	}
	return b
}

func appendStat(b []byte, st *unix.Stat_t) []byte {
	if st == nil {
		return append(b, "NULL"...)
	}
	b = append(b, "{st_mode="...)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		b = append(b, "S_IFREG"...)
	case unix.S_IFDIR:
		b = append(b, "S_IFDIR"...)
	case unix.S_IFLNK:
		b = append(b, "S_IFLNK"...)
	case unix.S_IFCHR:
		b = append(b, "S_IFCHR"...)
	case unix.S_IFIFO:
		b = append(b, "S_IFIFO"...)
	default:
		b = append(b, "0"...)
	}
	b = append(b, "|0"...)
	b = strconv.AppendInt(b, int64(st.Mode&0o7777), 8)
	b = append(b, ", st_size="...)
	b = strconv.AppendInt(b, st.Size, 10)
	return append(b, ", ...}"...)
}

// errnoDesc is strerror(e) as glibc prints it (Go's text with a capital letter).
func errnoDesc(e syscall.Errno) string {
	s := e.Error()
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// errnoName is the errno's symbolic name ("ENOENT") as strace prints it (95 is
// EOPNOTSUPP, which x/sys/unix calls ENOTSUP).
func errnoName(e syscall.Errno) string {
	if e == unix.EOPNOTSUPP {
		return "EOPNOTSUPP"
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "E" + strconv.Itoa(int(e))
}

// fakeAddr is the address printed for a buffer strace would show as a pointer.
const fakeAddr = "0x7ffc00000000"

// appendCall writes "name(args) = result" (no newline) in strace's notation: slot
// by slot from the syscall table's layout, the slots of the calls the table marks
// Custom that a layout cannot say by hand (appendCustomSlot); fcntl by hand; the
// calls the table does not describe as their paths then their integer arguments
// up to the last non-zero one.
func appendCall(b []byte, c *sim.Call, r sim.Result, strsize int) []byte {
	b = append(b, c.Nr.String()...)
	b = append(b, '(')
	switch in := sim.Info(c.Nr); {
	case c.Nr == sim.SYS_FCNTL:
		b = appendFcntlArgs(b, c)
	case in.Args == nil:
		b = appendGenericArgs(b, c)
	default:
		b = appendArgs(b, in, c, r, strsize)
	}
	b = append(b, ") = "...)
	if r.Errno != 0 {
		b = append(b, "-1 "...)
		b = append(b, errnoName(r.Errno)...)
		b = append(b, " ("...)
		b = append(b, errnoDesc(r.Errno)...)
		return append(b, ')')
	}
	switch {
	case c.Nr == sim.SYS_FCNTL && c.Args[1] == unix.F_GETFD:
		b = append(b, "0x"...)
		b = strconv.AppendInt(b, r.Ret, 16)
		if r.Ret&unix.FD_CLOEXEC != 0 {
			b = append(b, " (flags FD_CLOEXEC)"...)
		}
		return b
	case c.Nr == sim.SYS_FCNTL && c.Args[1] == unix.F_GETFL:
		b = append(b, "0x"...)
		b = strconv.AppendInt(b, r.Ret, 16)
		b = append(b, " (flags "...)
		b = appendFlags(b, sim.OpenFlags, r.Ret)
		return append(b, ')')
	case c.Nr == sim.SYS_MMAP:
		return appendHex(b, r.Ret)
	}
	return strconv.AppendInt(b, r.Ret, 10)
}

// appendArgs writes the arguments of c as the table's layout in says.
func appendArgs(b []byte, in *sim.SyscallInfo, c *sim.Call, r sim.Result, strsize int) []byte {
	a := &c.Args
	custom := in.Props&sim.Custom != 0
	for k, arg := range in.Args {
		if arg.Optional && !optionalShown(in, c) {
			continue
		}
		if k > 0 {
			b = append(b, ", "...)
		}
		if custom {
			var done bool
			if b, done = appendCustomSlot(b, c, k, r, strsize); done {
				continue
			}
		}
		switch arg.Kind {
		case sim.ArgFd, sim.ArgNewFd:
			b = strconv.AppendInt(b, int64(int32(a[k])), 10)
		case sim.ArgDirfd:
			b = appendDirfd(b, a[k])
		case sim.ArgPath:
			b = appendQuoted(b, []byte(c.Path), 4096)
		case sim.ArgPath2:
			b = appendQuoted(b, []byte(c.Path2), 4096)
		case sim.ArgInBuf:
			b = appendQuoted(b, c.Buf, strsize)
		case sim.ArgOutBuf: // the data after the call
			if r.Errno != 0 {
				b = append(b, fakeAddr...)
				break
			}
			n := max(min(r.Ret, int64(len(c.Buf))), 0)
			if c.Nr == sim.SYS_GETCWD && n > 0 {
				n-- // the result counts the terminating NUL, which strace does not print
			}
			b = appendQuoted(b, c.Buf[:n], strsize)
		case sim.ArgInIov, sim.ArgOutIov:
			b = appendIov(b, c.Iov, arg.Kind == sim.ArgOutIov, r, strsize)
		case sim.ArgCount:
			switch {
			case in.Slot(sim.ArgInIov, 0) >= 0 || in.Slot(sim.ArgOutIov, 0) >= 0:
				b = strconv.AppendInt(b, int64(len(c.Iov)), 10)
			case in.Slot(sim.ArgInBuf, 0) >= 0 || in.Slot(sim.ArgOutBuf, 0) >= 0:
				b = strconv.AppendInt(b, int64(len(c.Buf)), 10)
			default:
				b = strconv.AppendInt(b, a[k], 10)
			}
		case sim.ArgMode:
			b = appendMode(b, a[k])
		case sim.ArgFlags:
			b = appendFlags(b, arg.Flags, a[k])
		case sim.ArgStat:
			st, _ := c.Obj.(*unix.Stat_t)
			if r.Errno != 0 {
				b = append(b, fakeAddr...)
			} else {
				b = appendStat(b, st)
			}
		case sim.ArgStatx, sim.ArgPtr:
			b = append(b, fakeAddr...)
		case sim.ArgAddr:
			if a[k] == 0 {
				b = append(b, "NULL"...)
			} else {
				b = appendHex(b, a[k])
			}
		default: // ArgInt, ArgOffset
			if arg.Hex {
				b = appendHex(b, a[k])
			} else {
				b = strconv.AppendInt(b, a[k], 10)
			}
		}
	}
	return b
}

// optionalShown says whether strace prints a call's optional argument: open's
// mode, shown with O_CREAT or __O_TMPFILE.
func optionalShown(in *sim.SyscallInfo, c *sim.Call) bool {
	for k, arg := range in.Args {
		if arg.Flags == sim.OpenFlags {
			return c.Args[k]&(unix.O_CREAT|unix.O_TMPFILE&^unix.O_DIRECTORY) != 0
		}
	}
	return true
}

// appendIov writes an iovec array: the bytes a call wrote, or those it read (out)
// up to its result.
func appendIov(b []byte, iov [][]byte, out bool, r sim.Result, strsize int) []byte {
	b = append(b, '[')
	left := r.Ret
	for k, v := range iov {
		if k > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "{iov_base="...)
		switch {
		case !out:
			b = appendQuoted(b, v, strsize)
		case r.Errno != 0:
			b = append(b, fakeAddr...)
		default:
			n := min(max(left, 0), int64(len(v)))
			b = appendQuoted(b, v[:n], strsize)
			left -= n
		}
		b = append(b, ", iov_len="...)
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, '}')
	}
	return append(b, ']')
}

var fcntlNames = map[int64]string{
	unix.F_DUPFD: "F_DUPFD", unix.F_GETFD: "F_GETFD", unix.F_SETFD: "F_SETFD",
	unix.F_GETFL: "F_GETFL", unix.F_SETFL: "F_SETFL", unix.F_GETLK: "F_GETLK",
	unix.F_SETLK: "F_SETLK", unix.F_SETLKW: "F_SETLKW", unix.F_DUPFD_CLOEXEC: "F_DUPFD_CLOEXEC",
	unix.F_OFD_GETLK: "F_OFD_GETLK", unix.F_OFD_SETLK: "F_OFD_SETLK", unix.F_OFD_SETLKW: "F_OFD_SETLKW",
}

// appendFcntlArgs writes fcntl's arguments: the third is an int, a flag set or a
// struct flock by command.
func appendFcntlArgs(b []byte, c *sim.Call) []byte {
	a := &c.Args
	b = strconv.AppendInt(b, int64(int32(a[0])), 10)
	b = append(b, ", "...)
	if n, ok := fcntlNames[a[1]]; ok {
		b = append(b, n...)
	} else {
		b = strconv.AppendInt(b, a[1], 10)
	}
	switch a[1] {
	case unix.F_SETFD:
		b = append(b, ", "...)
		if a[2] == unix.FD_CLOEXEC {
			return append(b, "FD_CLOEXEC"...)
		}
		return strconv.AppendInt(b, a[2], 10)
	case unix.F_SETFL:
		b = append(b, ", "...)
		return appendFlags(b, sim.OpenFlags, a[2])
	case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
		b = append(b, ", "...)
		return strconv.AppendInt(b, a[2], 10)
	case unix.F_GETFD, unix.F_GETFL:
		return b
	case unix.F_SETLK, unix.F_SETLKW, unix.F_OFD_SETLK, unix.F_OFD_SETLKW:
		b = append(b, ", "...)
		return appendFlock(b, c.Obj, false)
	case unix.F_GETLK, unix.F_OFD_GETLK: // the lock as the call left it
		b = append(b, ", "...)
		return appendFlock(b, c.Obj, true)
	}
	b = append(b, ", "...)
	return append(b, fakeAddr...)
}

var lockTypes = [...]string{unix.F_RDLCK: "F_RDLCK", unix.F_WRLCK: "F_WRLCK", unix.F_UNLCK: "F_UNLCK"}

// appendFlock writes fcntl's struct flock (obj a *unix.Flock_t) as strace does:
// l_pid only for the F_GETLK commands.
func appendFlock(b []byte, obj any, pid bool) []byte {
	lk, _ := obj.(*unix.Flock_t)
	if lk == nil {
		return append(b, "NULL"...)
	}
	b = append(b, "{l_type="...)
	if t := int(lk.Type); t >= 0 && t < len(lockTypes) {
		b = append(b, lockTypes[t]...)
	} else {
		b = strconv.AppendInt(b, int64(lk.Type), 10)
	}
	b = append(b, ", l_whence="...)
	b = appendFlags(b, sim.Info(sim.SYS_LSEEK).Args[2].Flags, int64(lk.Whence))
	b = append(b, ", l_start="...)
	b = strconv.AppendInt(b, lk.Start, 10)
	b = append(b, ", l_len="...)
	b = strconv.AppendInt(b, lk.Len, 10)
	if pid {
		b = append(b, ", l_pid="...)
		b = strconv.AppendInt(b, int64(lk.Pid), 10)
	}
	return append(b, '}')
}

// appendGenericArgs writes the path arguments, then the integer arguments up to
// the last non-zero one.
func appendGenericArgs(b []byte, c *sim.Call) []byte {
	first := true
	put := func() {
		if !first {
			b = append(b, ", "...)
		}
		first = false
	}
	if c.Path != "" {
		put()
		b = appendQuoted(b, []byte(c.Path), 4096)
	}
	if c.Path2 != "" {
		put()
		b = appendQuoted(b, []byte(c.Path2), 4096)
	}
	last := -1
	for k := range c.Args {
		if c.Args[k] != 0 {
			last = k
		}
	}
	for k := 0; k <= last; k++ {
		put()
		b = strconv.AppendInt(b, c.Args[k], 10)
	}
	return b
}

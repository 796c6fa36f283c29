package interposer

import (
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"iosim/sim"
)

// strace-style rendering of calls and results (Linux x86-64 values), used by Trace.
// Interposers sit below package strace, so this is a small formatter of its own; the
// round-trip test parses its output with package strace.

type flagName struct {
	v    int64
	name string
}

var openFlagNames = []flagName{
	{unix.O_CREAT, "O_CREAT"}, {unix.O_EXCL, "O_EXCL"}, {unix.O_NOCTTY, "O_NOCTTY"},
	{unix.O_TRUNC, "O_TRUNC"}, {unix.O_APPEND, "O_APPEND"}, {unix.O_NONBLOCK, "O_NONBLOCK"},
	{unix.O_SYNC, "O_SYNC"}, {unix.O_DSYNC, "O_DSYNC"}, {unix.O_ASYNC, "O_ASYNC"},
	{unix.O_DIRECT, "O_DIRECT"}, {oLargefile, "O_LARGEFILE"},
	{unix.O_DIRECTORY, "O_DIRECTORY"}, {unix.O_NOFOLLOW, "O_NOFOLLOW"},
	{unix.O_NOATIME, "O_NOATIME"}, {unix.O_CLOEXEC, "O_CLOEXEC"}, {unix.O_PATH, "O_PATH"},
	{unix.O_TMPFILE &^ unix.O_DIRECTORY, "__O_TMPFILE"},
}

// appendOpenFlags writes flags as strace does: O_RDONLY|O_CREAT|...
func appendOpenFlags(b []byte, fl int64) []byte {
	switch fl & unix.O_ACCMODE {
	case unix.O_RDONLY:
		b = append(b, "O_RDONLY"...)
	case unix.O_WRONLY:
		b = append(b, "O_WRONLY"...)
	case unix.O_RDWR:
		b = append(b, "O_RDWR"...)
	default:
		b = append(b, "O_ACCMODE"...)
	}
	rest := fl &^ unix.O_ACCMODE
	for _, f := range openFlagNames {
		if rest&f.v == f.v && f.v != 0 {
			b = append(b, '|')
			b = append(b, f.name...)
			rest &^= f.v
		}
	}
	if rest != 0 {
		b = append(b, "|0x"...)
		b = strconv.AppendInt(b, rest, 16)
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

var whenceNames = []string{"SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA", "SEEK_HOLE"}

var fcntlNames = map[int64]string{
	unix.F_DUPFD: "F_DUPFD", unix.F_GETFD: "F_GETFD", unix.F_SETFD: "F_SETFD",
	unix.F_GETFL: "F_GETFL", unix.F_SETFL: "F_SETFL", unix.F_GETLK: "F_GETLK",
	unix.F_SETLK: "F_SETLK", unix.F_SETLKW: "F_SETLKW", unix.F_DUPFD_CLOEXEC: "F_DUPFD_CLOEXEC",
	unix.F_OFD_GETLK: "F_OFD_GETLK", unix.F_OFD_SETLK: "F_OFD_SETLK", unix.F_OFD_SETLKW: "F_OFD_SETLKW",
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

// errnoName is the errno's symbolic name ("ENOENT").
func errnoName(e syscall.Errno) string {
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "E" + strconv.Itoa(int(e))
}

// fakeAddr is the address printed for a buffer strace would show as a pointer.
const fakeAddr = "0x7ffc00000000"

// appendCall writes "name(args) = result" (no newline) in strace's notation.
func appendCall(b []byte, c *sim.Call, r sim.Result, strsize int) []byte {
	b = append(b, c.Nr.String()...)
	b = append(b, '(')
	a := &c.Args
	i := func(v int64) { b = strconv.AppendInt(b, v, 10) }
	fd := func(v int64) { b = strconv.AppendInt(b, int64(int32(v)), 10) }
	sep := func() { b = append(b, ", "...) }
	str := func(s string) { b = appendQuoted(b, []byte(s), 4096) }
	outbuf := func() { // read-like: data after the call
		if r.Errno != 0 {
			b = append(b, fakeAddr...)
			return
		}
		n := r.Ret
		if n > int64(len(c.Buf)) {
			n = int64(len(c.Buf))
		}
		b = appendQuoted(b, c.Buf[:max(n, 0)], strsize)
	}
	inbuf := func() { b = appendQuoted(b, c.Buf, strsize) }
	iov := func(out bool) {
		b = append(b, '[')
		left := r.Ret
		for k, v := range c.Iov {
			if k > 0 {
				sep()
			}
			b = append(b, "{iov_base="...)
			if out {
				if r.Errno != 0 {
					b = append(b, fakeAddr...)
				} else {
					n := min(max(left, 0), int64(len(v)))
					b = appendQuoted(b, v[:n], strsize)
					left -= n
				}
			} else {
				b = appendQuoted(b, v, strsize)
			}
			b = append(b, ", iov_len="...)
			i(int64(len(v)))
			b = append(b, '}')
		}
		b = append(b, ']')
		sep()
		i(int64(len(c.Iov)))
	}
	switch c.Nr {
	case sim.SYS_OPEN:
		str(c.Path)
		sep()
		b = appendOpenFlags(b, int64(openFlags(c)))
		if openFlags(c)&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
			sep()
			b = appendMode(b, c.Args[2])
		}
	case sim.SYS_OPENAT:
		b = appendDirfd(b, a[0])
		sep()
		str(c.Path)
		sep()
		b = appendOpenFlags(b, int64(openFlags(c)))
		if openFlags(c)&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
			sep()
			b = appendMode(b, c.Args[3])
		}
	case sim.SYS_CREAT:
		str(c.Path)
		sep()
		b = appendMode(b, a[1])
	case sim.SYS_READ:
		fd(a[0])
		sep()
		outbuf()
		sep()
		i(int64(len(c.Buf)))
	case sim.SYS_WRITE:
		fd(a[0])
		sep()
		inbuf()
		sep()
		i(int64(len(c.Buf)))
	case sim.SYS_PREAD64, sim.SYS_PWRITE64:
		fd(a[0])
		sep()
		if c.Nr == sim.SYS_PREAD64 {
			outbuf()
		} else {
			inbuf()
		}
		sep()
		i(int64(len(c.Buf)))
		sep()
		i(a[3])
	case sim.SYS_READV, sim.SYS_WRITEV:
		fd(a[0])
		sep()
		iov(c.Nr == sim.SYS_READV)
	case sim.SYS_PREADV, sim.SYS_PWRITEV:
		fd(a[0])
		sep()
		iov(c.Nr == sim.SYS_PREADV)
		sep()
		i(a[3])
	case sim.SYS_LSEEK:
		fd(a[0])
		sep()
		i(a[1])
		sep()
		if a[2] >= 0 && a[2] < int64(len(whenceNames)) {
			b = append(b, whenceNames[a[2]]...)
		} else {
			i(a[2])
		}
	case sim.SYS_FCNTL:
		fd(a[0])
		sep()
		if n, ok := fcntlNames[a[1]]; ok {
			b = append(b, n...)
		} else {
			i(a[1])
		}
		switch a[1] {
		case unix.F_SETFD:
			sep()
			if a[2] == unix.FD_CLOEXEC {
				b = append(b, "FD_CLOEXEC"...)
			} else {
				i(a[2])
			}
		case unix.F_SETFL:
			sep()
			b = appendOpenFlags(b, a[2])
		case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
			sep()
			i(a[2])
		case unix.F_GETFD, unix.F_GETFL:
		default:
			sep()
			b = append(b, fakeAddr...)
		}
	case sim.SYS_FSTAT:
		fd(a[0])
		sep()
		if r.Errno == 0 {
			st, _ := c.Obj.(*unix.Stat_t)
			b = appendStat(b, st)
		} else {
			b = append(b, fakeAddr...)
		}
	case sim.SYS_STAT, sim.SYS_LSTAT:
		str(c.Path)
		sep()
		if r.Errno == 0 {
			st, _ := c.Obj.(*unix.Stat_t)
			b = appendStat(b, st)
		} else {
			b = append(b, fakeAddr...)
		}
	case sim.SYS_NEWFSTATAT:
		b = appendDirfd(b, a[0])
		sep()
		str(c.Path)
		sep()
		if r.Errno == 0 {
			st, _ := c.Obj.(*unix.Stat_t)
			b = appendStat(b, st)
		} else {
			b = append(b, fakeAddr...)
		}
		sep()
		switch a[3] {
		case 0:
			b = append(b, '0')
		case unix.AT_EMPTY_PATH:
			b = append(b, "AT_EMPTY_PATH"...)
		case unix.AT_SYMLINK_NOFOLLOW:
			b = append(b, "AT_SYMLINK_NOFOLLOW"...)
		default:
			b = append(b, "0x"...)
			b = strconv.AppendInt(b, a[3], 16)
		}
	case sim.SYS_CLOSE, sim.SYS_FSYNC, sim.SYS_FDATASYNC, sim.SYS_DUP, sim.SYS_FCHDIR, sim.SYS_SYNCFS:
		fd(a[0])
	case sim.SYS_DUP2:
		fd(a[0])
		sep()
		fd(a[1])
	case sim.SYS_DUP3:
		fd(a[0])
		sep()
		fd(a[1])
		sep()
		if a[2] == unix.O_CLOEXEC {
			b = append(b, "O_CLOEXEC"...)
		} else {
			i(a[2])
		}
	case sim.SYS_FTRUNCATE:
		fd(a[0])
		sep()
		i(a[1])
	case sim.SYS_TRUNCATE:
		str(c.Path)
		sep()
		i(a[1])
	case sim.SYS_FALLOCATE:
		fd(a[0])
		sep()
		i(a[1])
		sep()
		i(a[2])
		sep()
		i(a[3])
	case sim.SYS_UNLINK, sim.SYS_RMDIR, sim.SYS_CHDIR:
		str(c.Path)
	case sim.SYS_MKDIR, sim.SYS_CHMOD:
		str(c.Path)
		sep()
		b = appendMode(b, a[1])
	case sim.SYS_RENAME, sim.SYS_LINK, sim.SYS_SYMLINK:
		if c.Nr == sim.SYS_SYMLINK {
			str(c.Path2)
			sep()
			str(c.Path)
		} else {
			str(c.Path)
			sep()
			str(c.Path2)
		}
	case sim.SYS_UNLINKAT:
		b = appendDirfd(b, a[0])
		sep()
		str(c.Path)
		sep()
		if a[2] == unix.AT_REMOVEDIR {
			b = append(b, "AT_REMOVEDIR"...)
		} else {
			i(a[2])
		}
	case sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2:
		b = appendDirfd(b, a[0])
		sep()
		str(c.Path)
		sep()
		b = appendDirfd(b, a[2])
		sep()
		str(c.Path2)
		if c.Nr == sim.SYS_RENAMEAT2 {
			sep()
			i(a[4])
		}
	case sim.SYS_SYNC:
	default:
		// Generic: the path arguments, then the integer arguments up to the last
		// non-zero one.
		first := true
		put := func() {
			if !first {
				sep()
			}
			first = false
		}
		if c.Path != "" {
			put()
			str(c.Path)
		}
		if c.Path2 != "" {
			put()
			str(c.Path2)
		}
		last := -1
		for k := range a {
			if a[k] != 0 {
				last = k
			}
		}
		for k := 0; k <= last; k++ {
			put()
			i(a[k])
		}
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
	case c.Nr == sim.SYS_FCNTL && a[1] == unix.F_GETFD:
		b = append(b, "0x"...)
		b = strconv.AppendInt(b, r.Ret, 16)
		if r.Ret&unix.FD_CLOEXEC != 0 {
			b = append(b, " (flags FD_CLOEXEC)"...)
		}
		return b
	case c.Nr == sim.SYS_FCNTL && a[1] == unix.F_GETFL:
		b = append(b, "0x"...)
		b = strconv.AppendInt(b, r.Ret, 16)
		b = append(b, " (flags "...)
		b = appendOpenFlags(b, r.Ret)
		return append(b, ')')
	}
	return strconv.AppendInt(b, r.Ret, 10)
}

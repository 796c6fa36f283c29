//go:build linux

package sim_test

// The error-path tables: testdata/errpaths/*.txt, read with
// github.com/cockroachdb/datadriven. Each directive is one row, run from the state
// setupErrpaths builds on a fresh model process and, where an ext4 directory is
// available, on the real kernel; its expected output is what this kernel answers,
// one line per call. A row is a single call:
//
//	read fd=wo n=10
//	----
//	EBADF
//
// or a sequence under `run`, whose options change how the row runs:
//
//	run nofile=+8        the RLIMIT_NOFILE soft limit, lowered on both sides
//	run model-bug=ok     a known divergence (explained in a comment above the row):
//	                     when the model's last call gives this answer (ok or an
//	                     errno), the row is logged, not failed
//	open path=/f flags=O_RDWR|O_DIRECT
//	pwrite fd=+6 n=4096@4 off=0
//	----
//	fd +6
//	EINVAL
//
// Arguments: fds are the names of the setup's fds (rw ro wo dir empty path
// closed), +N (base+N: the fds rows open start at +6), a negative number,
// nofile[±N] (the RLIMIT_NOFILE soft limit) or AT_FDCWD; buffers are
// n=N[@M][~S] (N bytes at M past a page boundary, zeros or the pattern of seed
// S), iovecs iov=(N[@M][~S],...) (N*K: K such; N+: N bytes right after the
// previous buffer); flags are symbolic (O_RDWR|O_DIRECT, F_DUPFD, SEEK_DATA,
// FALLOC_FL_PUNCH_HOLE) or numbers; a path may hold {S*N}, N copies of S
// (/{a*256} is a name over NAME_MAX), and "" is the empty path. Results print
// as the errno name (as strace names it), "fd +N" for a new fd (or
// "fd nofile-N"), the count or offset, "N crc=X" for bytes read,
// "size=S blocks=B mode=M nlink=L" for stat, and what each call's case in step
// says for the others. step lists every call a row can make.
//
// -rewrite regenerates the expected output from the kernel when there is one.

import (
	"fmt"
	"hash/crc32"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/internal/ddscript"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// errEnv is what a row's calls see: the side they run on and its fds.
type errEnv struct {
	s      sys
	base   int
	nofile int
	maps   *[]mapping // the row's mappings, newest last
}

// mapping is one mmap of a row; those still live are unmapped at its end.
type mapping struct {
	b    []byte
	live bool
}

// The fds every error-path row starts with, as offsets from the baseline fd (see
// oskernel_linux_test.go): both sides open them in this order.
var errFds = map[string]int{"rw": fdRW, "ro": fdRO, "wo": fdWO, "dir": fdDir, "empty": fdEmpty, "path": fdPath, "closed": fdClosed}

const (
	fdRW     = iota // /f, O_RDWR; /f holds 5000 bytes
	fdRO            // /f, O_RDONLY
	fdWO            // /f, O_WRONLY
	fdDir           // /d, O_RDONLY|O_DIRECTORY
	fdEmpty         // /empty, O_RDWR; empty
	fdPath          // /f, O_PATH
	fdClosed = 10   // never opened
)

func (e errEnv) fd(i int) int { return e.base + i }

var (
	openFl   = ddscript.Flags{"O_RDONLY": unix.O_RDONLY, "O_WRONLY": unix.O_WRONLY, "O_RDWR": unix.O_RDWR, "O_CREAT": unix.O_CREAT, "O_EXCL": unix.O_EXCL, "O_TRUNC": unix.O_TRUNC, "O_APPEND": unix.O_APPEND, "O_DIRECT": unix.O_DIRECT, "O_DIRECTORY": unix.O_DIRECTORY, "O_NOFOLLOW": unix.O_NOFOLLOW, "O_PATH": unix.O_PATH, "O_TMPFILE": unix.O_TMPFILE, "O_CLOEXEC": unix.O_CLOEXEC, "O_SYNC": unix.O_SYNC, "O_DSYNC": unix.O_DSYNC, "O_NONBLOCK": unix.O_NONBLOCK, "O_NOATIME": unix.O_NOATIME, "O_NOCTTY": unix.O_NOCTTY}
	fcntlCmd = ddscript.Flags{"F_DUPFD": unix.F_DUPFD, "F_DUPFD_CLOEXEC": unix.F_DUPFD_CLOEXEC, "F_GETFD": unix.F_GETFD, "F_SETFD": unix.F_SETFD, "F_GETFL": unix.F_GETFL, "F_SETFL": unix.F_SETFL}
	whenceFl = ddscript.Flags{"SEEK_SET": unix.SEEK_SET, "SEEK_CUR": unix.SEEK_CUR, "SEEK_END": unix.SEEK_END, "SEEK_DATA": unix.SEEK_DATA, "SEEK_HOLE": unix.SEEK_HOLE}
	fallocFl = ddscript.Flags{"FALLOC_FL_KEEP_SIZE": unix.FALLOC_FL_KEEP_SIZE, "FALLOC_FL_PUNCH_HOLE": unix.FALLOC_FL_PUNCH_HOLE, "FALLOC_FL_ZERO_RANGE": unix.FALLOC_FL_ZERO_RANGE, "FALLOC_FL_COLLAPSE_RANGE": unix.FALLOC_FL_COLLAPSE_RANGE, "FALLOC_FL_INSERT_RANGE": unix.FALLOC_FL_INSERT_RANGE}
	fdFl     = ddscript.Flags{"FD_CLOEXEC": unix.FD_CLOEXEC, "O_CLOEXEC": unix.O_CLOEXEC}
	protFl   = ddscript.Flags{"PROT_NONE": unix.PROT_NONE, "PROT_READ": unix.PROT_READ, "PROT_WRITE": unix.PROT_WRITE}
	mapFl    = ddscript.Flags{"MAP_SHARED": unix.MAP_SHARED, "MAP_PRIVATE": unix.MAP_PRIVATE, "MAP_SHARED_VALIDATE": unix.MAP_SHARED_VALIDATE}
	rwfFl    = ddscript.Flags{"RWF_HIPRI": unix.RWF_HIPRI, "RWF_DSYNC": unix.RWF_DSYNC, "RWF_SYNC": unix.RWF_SYNC, "RWF_NOWAIT": unix.RWF_NOWAIT, "RWF_APPEND": unix.RWF_APPEND, "RWF_NOAPPEND": 0x20, "RWF_ATOMIC": 0x40, "RWF_DONTCACHE": 0x80}
	atFl     = ddscript.Flags{"AT_SYMLINK_NOFOLLOW": unix.AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_FOLLOW": unix.AT_SYMLINK_FOLLOW, "AT_EMPTY_PATH": unix.AT_EMPTY_PATH, "AT_REMOVEDIR": unix.AT_REMOVEDIR, "AT_EACCESS": unix.AT_EACCESS, "AT_NO_AUTOMOUNT": unix.AT_NO_AUTOMOUNT, "AT_STATX_FORCE_SYNC": unix.AT_STATX_FORCE_SYNC, "AT_STATX_DONT_SYNC": unix.AT_STATX_DONT_SYNC, "RENAME_NOREPLACE": unix.RENAME_NOREPLACE, "RENAME_EXCHANGE": unix.RENAME_EXCHANGE, "RENAME_WHITEOUT": unix.RENAME_WHITEOUT}
	accessFl = ddscript.Flags{"F_OK": unix.F_OK, "R_OK": unix.R_OK, "W_OK": unix.W_OK, "X_OK": unix.X_OK}
	statxFl  = ddscript.Flags{"STATX_BASIC_STATS": unix.STATX_BASIC_STATS, "STATX_ALL": unix.STATX_ALL, "STATX_TYPE": unix.STATX_TYPE, "STATX_MODE": unix.STATX_MODE, "STATX_NLINK": unix.STATX_NLINK, "STATX_SIZE": unix.STATX_SIZE}
	flockFl  = ddscript.Flags{"LOCK_SH": unix.LOCK_SH, "LOCK_EX": unix.LOCK_EX, "LOCK_NB": unix.LOCK_NB, "LOCK_UN": unix.LOCK_UN, "LOCK_MAND": 32}
	lockCmd  = ddscript.Flags{"F_GETLK": unix.F_GETLK, "F_SETLK": unix.F_SETLK, "F_SETLKW": unix.F_SETLKW, "F_OFD_GETLK": unix.F_OFD_GETLK, "F_OFD_SETLK": unix.F_OFD_SETLK, "F_OFD_SETLKW": unix.F_OFD_SETLKW}
	lockType = ddscript.Flags{"F_RDLCK": unix.F_RDLCK, "F_WRLCK": unix.F_WRLCK, "F_UNLCK": unix.F_UNLCK}
	sfrFl    = ddscript.Flags{"SYNC_FILE_RANGE_WAIT_BEFORE": unix.SYNC_FILE_RANGE_WAIT_BEFORE, "SYNC_FILE_RANGE_WRITE": unix.SYNC_FILE_RANGE_WRITE, "SYNC_FILE_RANGE_WAIT_AFTER": unix.SYNC_FILE_RANGE_WAIT_AFTER}
	msyncFl  = ddscript.Flags{"MS_SYNC": unix.MS_SYNC, "MS_ASYNC": unix.MS_ASYNC, "MS_INVALIDATE": unix.MS_INVALIDATE}
)

// fdArg reads an fd argument.
func (e errEnv) fdArg(c *ddscript.Cmd, key string) int {
	v := c.Str(key)
	if c.Err() != nil {
		return 0
	}
	if i, ok := errFds[v]; ok {
		return e.base + i
	}
	if v == "AT_FDCWD" {
		return unix.AT_FDCWD
	}
	if rest, ok := strings.CutPrefix(v, "nofile"); ok {
		n := int64(0)
		if rest != "" {
			var err error
			if n, err = strconv.ParseInt(rest, 10, 64); err != nil {
				c.Failf("%s=%s: want nofile, nofile+N or nofile-N", key, v)
			}
		}
		return e.nofile + int(n)
	}
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		c.Failf("%s=%s: want an fd (rw, ro, wo, dir, empty, path, closed, +N, -N, nofile±N, AT_FDCWD)", key, v)
	case strings.HasPrefix(v, "+"):
		return e.base + n
	case n >= 0:
		c.Failf("%s=%s: a non-negative fd is relative to the base: write +%d", key, v, n)
	}
	return n
}

// bufArg builds a buffer from N[@M][~S].
func bufArg(c *ddscript.Cmd, key, v string) []byte {
	seed := -1
	if i := strings.IndexByte(v, '~'); i >= 0 {
		s, err := strconv.Atoi(v[i+1:])
		if err != nil || s < 0 || s > 255 {
			c.Failf("%s: ~%s: want a pattern seed 0-255", key, v[i+1:])
		}
		seed, v = s, v[:i]
	}
	mis := int64(0)
	if i := strings.IndexByte(v, '@'); i >= 0 {
		m, err := ddscript.ParseInt(v[i+1:])
		if err != nil || m < 0 || m >= 4096 {
			c.Failf("%s: @%s: want an offset in a page, 0-4095", key, v[i+1:])
		}
		mis, v = m, v[:i]
	}
	n, err := ddscript.ParseInt(v)
	if err != nil || n < 0 || n > 1<<26 {
		c.Failf("%s: %s: want a byte count", key, v)
		return nil
	}
	b := alignedBuf(int(n), int(mis))
	if seed >= 0 {
		fillPattern(b, byte(seed))
	}
	return b
}

func (e errEnv) buf(c *ddscript.Cmd) []byte {
	return bufArg(c, "n", c.Str("n"))
}

// iov builds iovecs from iov=(B,...): each B is a buffer as bufArg reads it,
// N*K repeats one K times, and N+ is N bytes right after the previous buffer.
func (e errEnv) iov(c *ddscript.Cmd) [][]byte {
	var out [][]byte
	if !c.Has("iov") {
		return nil
	}
	for _, v := range c.Strs("iov") {
		if n, ok := strings.CutSuffix(v, "+"); ok && len(out) > 0 {
			k, err := ddscript.ParseInt(n)
			prev := out[len(out)-1]
			if err != nil || k < 0 {
				c.Failf("iov: %s: want N+", v)
				return nil
			}
			// Re-carve the previous buffer with room for this one after it.
			mis := int(uintptr(unsafe.Pointer(unsafe.SliceData(prev))) % 4096)
			both := alignedBuf(len(prev)+int(k), mis)
			copy(both, prev)
			out[len(out)-1] = both[:len(prev):len(prev)]
			out = append(out, both[len(prev):])
			continue
		}
		k := int64(1)
		if i := strings.IndexByte(v, '*'); i >= 0 {
			n, err := ddscript.ParseInt(v[i+1:])
			if err != nil || n < 0 || n > 1<<16 {
				c.Failf("iov: %s: want N*COUNT", v)
				return nil
			}
			k, v = n, v[:i]
		}
		for range k {
			out = append(out, bufArg(c, "iov", v))
		}
	}
	return out
}

// times reads ts=(A,M): each SEC.NSEC, omit (UTIME_OMIT) or now (UTIME_NOW);
// absent: NULL.
func (e errEnv) times(c *ddscript.Cmd) []unix.Timespec {
	v := c.Strs("ts")
	if v == nil {
		return nil
	}
	var ts []unix.Timespec
	for _, x := range v {
		switch x {
		case "omit":
			ts = append(ts, unix.Timespec{Nsec: unix.UTIME_OMIT})
		case "now":
			ts = append(ts, unix.Timespec{Nsec: unix.UTIME_NOW})
		default:
			sec, nsec, _ := strings.Cut(x, ".")
			a, err1 := strconv.ParseInt(sec, 10, 64)
			b, err2 := strconv.ParseInt(nsec, 10, 64)
			if err1 != nil || err2 != nil {
				c.Failf("ts: %s: want SEC.NSEC, omit or now", x)
				return nil
			}
			ts = append(ts, unix.Timespec{Sec: a, Nsec: b})
		}
	}
	return ts
}

// path reads a path argument, expanding {S*N} to N copies of S; "" is the
// empty path.
func (e errEnv) path(c *ddscript.Cmd, key string) string {
	p := c.Str(key)
	if p == `""` {
		return ""
	}
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			return p
		}
		j := strings.IndexByte(p[i:], '}')
		rep, cnt, ok := strings.Cut(p[i+1:i+max(j, 0)], "*")
		n, err := strconv.Atoi(cnt)
		if j < 0 || !ok || err != nil || n < 0 || n > 1<<16 {
			c.Failf("%s=%s: want {TEXT*COUNT} for a repeated part", key, p)
			return ""
		}
		p = p[:i] + strings.Repeat(rep, n) + p[i+j+1:]
	}
}

// fdOut prints a new fd.
func (e errEnv) fdOut(fd int) string {
	if fd >= e.nofile-100 {
		return fmt.Sprintf("fd nofile-%d", e.nofile-fd)
	}
	return fmt.Sprintf("fd +%d", fd-e.base)
}

func statOut(st *unix.Stat_t) string {
	return fmt.Sprintf("size=%d blocks=%d mode=%#o nlink=%d", st.Size, st.Blocks, st.Mode, st.Nlink)
}

// gathered returns the first n bytes of iov (nil for n <= 0): what a vectored
// read of n bytes filled.
func gathered(iov [][]byte, n int) []byte {
	var out []byte
	for _, b := range iov {
		if n <= 0 {
			break
		}
		k := min(n, len(b))
		out = append(out, b[:k]...)
		n -= k
	}
	return out
}

// step runs one call and returns its result line.
func (e errEnv) step(c *ddscript.Cmd) (string, error) {
	var (
		r   int
		r64 int64
		err error
		out string
		st  unix.Stat_t
	)
	isFd, isCount := false, true
	var read []byte // bytes read, when the call reads
	s := e.s
	switch c.Name {
	case "open":
		p, fl, mode := e.path(c, "path"), c.Flags("flags", openFl, 0), c.IntOr("mode", 0o644)
		if c.Done() == nil {
			r, err = s.Open(p, int(fl), uint32(mode))
		}
		isFd = true
	case "openat":
		d, p, fl, mode := e.fdArg(c, "dirfd"), e.path(c, "path"), c.Flags("flags", openFl, 0), c.IntOr("mode", 0o644)
		if c.Done() == nil {
			r, err = s.Openat(d, p, int(fl), uint32(mode))
		}
		isFd = true
	case "creat":
		p, mode := e.path(c, "path"), c.IntOr("mode", 0o644)
		if c.Done() == nil {
			r, err = s.Creat(p, uint32(mode))
		}
		isFd = true
	case "read", "pread", "write", "pwrite":
		fd, b := e.fdArg(c, "fd"), e.buf(c)
		var off int64
		if c.Name[0] == 'p' {
			off = c.Int("off")
		}
		if c.Done() == nil {
			switch c.Name {
			case "read":
				r, err = s.Read(fd, b)
			case "pread":
				r, err = s.Pread(fd, b, off)
			case "write":
				r, err = s.Write(fd, b)
			default:
				r, err = s.Pwrite(fd, b, off)
			}
			if strings.HasSuffix(c.Name, "read") && r > 0 {
				read = b[:r]
			}
		}
	case "readv", "preadv", "writev", "pwritev":
		fd, iov := e.fdArg(c, "fd"), e.iov(c)
		var off int64
		if c.Name[0] == 'p' {
			off = c.Int("off")
		}
		if c.Done() == nil {
			switch c.Name {
			case "readv":
				r, err = s.Readv(fd, iov)
			case "preadv":
				r, err = s.Preadv(fd, iov, off)
			case "writev":
				r, err = s.Writev(fd, iov)
			default:
				r, err = s.Pwritev(fd, iov, off)
			}
			if strings.HasSuffix(c.Name, "readv") {
				read = gathered(iov, r)
			}
		}
	case "preadv2", "pwritev2":
		fd, iov, off, fl := e.fdArg(c, "fd"), e.iov(c), c.Int("off"), c.Flags("flags", rwfFl, 0)
		if c.Done() == nil {
			if c.Name == "pwritev2" {
				r, err = s.(sysRWF).Pwritev2(fd, iov, off, int(fl))
				break
			}
			r, err = s.(sysRWF).Preadv2(fd, iov, off, int(fl))
			read = gathered(iov, r)
		}
	case "unlinkat", "mkdirat", "readlinkat", "fstatat", "statx", "faccessat", "faccessat2", "fchmodat", "utimensat":
		d, p, fl := e.fdArg(c, "dirfd"), e.path(c, "path"), c.Flags("flags", atFl, 0)
		var mode int64
		var ts []unix.Timespec
		switch c.Name {
		case "mkdirat":
			mode = c.IntOr("mode", 0o755)
		case "fchmodat":
			mode = c.IntOr("mode", 0o600)
		case "faccessat", "faccessat2":
			mode = c.Flags("mode", accessFl, unix.F_OK)
		case "utimensat":
			ts = e.times(c)
		}
		var b []byte
		if c.Name == "readlinkat" {
			b = e.buf(c)
		}
		var mask int64
		if c.Name == "statx" {
			mask = c.Flags("mask", statxFl, unix.STATX_BASIC_STATS)
		}
		if c.Done() != nil {
			break
		}
		ns := s.(sysNS)
		switch c.Name {
		case "unlinkat":
			err = ns.Unlinkat(d, p, int(fl))
		case "mkdirat":
			err = ns.Mkdirat(d, p, uint32(mode))
		case "readlinkat":
			if r, err = ns.Readlinkat(d, p, b); err == nil {
				out = fmt.Sprintf("%d %q", r, b[:r])
			}
		case "fstatat":
			err = ns.Fstatat(d, p, &st, int(fl))
			out = statOut(&st)
		case "statx":
			var sx unix.Statx_t
			err = ns.Statx(d, p, int(fl), int(mask), &sx)
			out = fmt.Sprintf("mode=%#o nlink=%d size=%d", sx.Mode, sx.Nlink, sx.Size)
		case "faccessat":
			err = ns.Faccessat(d, p, uint32(mode), int(fl))
		case "faccessat2":
			err = ns.Faccessat2(d, p, uint32(mode), int(fl))
		case "fchmodat":
			err = ns.Fchmodat(d, p, uint32(mode), int(fl))
		default:
			err = ns.UtimesNanoAt(d, p, ts, int(fl))
		}
	case "renameat2", "linkat":
		od, op, nd, np, fl := e.fdArg(c, "olddirfd"), e.path(c, "old"), e.fdArg(c, "newdirfd"), e.path(c, "new"), c.Flags("flags", atFl, 0)
		if c.Done() == nil {
			if c.Name == "linkat" {
				err = s.(sysNS).Linkat(od, op, nd, np, int(fl))
			} else {
				err = s.(sysNS).Renameat2(od, op, nd, np, uint(fl))
			}
		}
	case "symlinkat":
		t, d, p := e.path(c, "target"), e.fdArg(c, "dirfd"), e.path(c, "path")
		if c.Done() == nil {
			err = s.(sysNS).Symlinkat(t, d, p)
		}
	case "fchmod":
		fd, mode := e.fdArg(c, "fd"), c.IntOr("mode", 0o600)
		if c.Done() == nil {
			err = s.(sysNS).Fchmod(fd, uint32(mode))
		}
	case "futimens":
		fd, ts := e.fdArg(c, "fd"), e.times(c)
		if c.Done() == nil {
			err = s.(sysNS).Futimens(fd, ts)
		}
	case "flock":
		fd, op := e.fdArg(c, "fd"), c.Flags("op", flockFl, 0)
		if c.Done() == nil {
			err = s.(sysFD).Flock(fd, int(op))
		}
	case "fcntl_lock": // fcntl(2) with a struct flock
		fd, cmd := e.fdArg(c, "fd"), c.Flags("cmd", lockCmd, unix.F_SETLK)
		lk := unix.Flock_t{Type: int16(c.Flags("type", lockType, unix.F_RDLCK)), Whence: int16(c.Flags("whence", whenceFl, unix.SEEK_SET)),
			Start: c.IntOr("start", 0), Len: c.IntOr("len", 0), Pid: int32(c.IntOr("pid", 0))}
		if c.Done() == nil {
			if err = s.(sysFD).FcntlFlock(uintptr(fd), int(cmd), &lk); err == nil && (cmd == unix.F_GETLK || cmd == unix.F_OFD_GETLK) {
				out = fmt.Sprintf("type=%d whence=%d start=%d len=%d pid=%d", lk.Type, lk.Whence, lk.Start, lk.Len, lk.Pid)
			}
		}
	case "sync_file_range":
		fd, off, n, fl := e.fdArg(c, "fd"), c.Int("off"), c.Int("len"), c.Flags("flags", sfrFl, 0)
		if c.Done() == nil {
			err = s.(sysFD).SyncFileRange(fd, off, n, int(fl))
		}
	case "syncfs", "fchdir":
		fd := e.fdArg(c, "fd")
		if c.Done() == nil {
			if c.Name == "syncfs" {
				err = s.(sysFD).Syncfs(fd)
			} else {
				err = s.(sysFD).Fchdir(fd)
			}
		}
	case "copy_file_range", "sendfile":
		// Offsets: a number is passed by pointer and printed after the call;
		// absent, the pointer is NULL.
		var in, out0 int
		var inOff, outOff *int64
		opt := func(key string) *int64 {
			if !c.Has(key) {
				return nil
			}
			v := c.Int(key)
			return &v
		}
		if c.Name == "sendfile" {
			out0, in, inOff = e.fdArg(c, "out"), e.fdArg(c, "in"), opt("off")
		} else {
			in, inOff, out0, outOff = e.fdArg(c, "in"), opt("inoff"), e.fdArg(c, "out"), opt("outoff")
		}
		n, fl := c.Int("len"), c.IntOr("flags", 0)
		if c.Done() == nil {
			if c.Name == "sendfile" {
				r, err = s.(sysFD).Sendfile(out0, in, inOff, int(n))
			} else {
				r, err = s.(sysFD).CopyFileRange(in, inOff, out0, outOff, int(n), int(fl))
			}
			if err == nil {
				out = strconv.Itoa(r)
				if inOff != nil && c.Name == "sendfile" {
					out += fmt.Sprintf(" off=%d", *inOff)
				} else if inOff != nil {
					out += fmt.Sprintf(" inoff=%d", *inOff)
				}
				if outOff != nil {
					out += fmt.Sprintf(" outoff=%d", *outOff)
				}
			}
		}
	case "getdents":
		fd, b := e.fdArg(c, "fd"), e.buf(c)
		if c.Done() == nil {
			r, err = s.(sysFD).Getdents(fd, b) // the count only: d_ino and d_off differ
		}
	case "getcwd":
		b := e.buf(c)
		if c.Done() == nil {
			if r, err = s.(sysFD).Getcwd(b); err == nil {
				out = fmt.Sprintf("%d %q", r, b[:max(r-1, 0)])
			}
		}
	case "devnull": // /dev/null opened O_RDWR at the lowest free fd
		if c.Done() == nil {
			r, isFd = devnull(s, e.base), true
		}
	case "lseek":
		fd, off, wh := e.fdArg(c, "fd"), c.Int("off"), c.Flags("whence", whenceFl, unix.SEEK_SET)
		if c.Done() == nil {
			r64, err = s.Seek(fd, off, int(wh))
		}
		r = int(r64)
	case "fcntl":
		fd, cmd := e.fdArg(c, "fd"), c.Flags("cmd", fcntlCmd, 0)
		var arg int
		switch {
		case cmd == unix.F_DUPFD || cmd == unix.F_DUPFD_CLOEXEC:
			arg, isFd = e.fdArg(c, "arg"), true
		case cmd == unix.F_SETFD:
			arg = int(c.Flags("arg", fdFl, 0))
		default:
			arg = int(c.Flags("arg", openFl, 0))
		}
		if c.Done() == nil {
			r, err = s.FcntlInt(uintptr(fd), int(cmd), arg)
		}
	case "dup":
		fd := e.fdArg(c, "fd")
		if c.Done() == nil {
			r, err = s.Dup(fd)
		}
		isFd = true
	case "dup2": // the dup2(2) syscall
		o, n := e.fdArg(c, "old"), e.fdArg(c, "new")
		if c.Done() == nil {
			r64, err = rawDup2(s, o, n)
			r = int(r64)
		}
		isFd = true
	case "unix.Dup2": // x/sys/unix's Dup2: dup3(old, new, 0) on linux
		o, n := e.fdArg(c, "old"), e.fdArg(c, "new")
		if c.Done() == nil {
			err = s.Dup2(o, n)
		}
	case "dup3":
		o, n, fl := e.fdArg(c, "old"), e.fdArg(c, "new"), c.Flags("flags", openFl, 0)
		if c.Done() == nil {
			err = s.Dup3(o, n, int(fl))
		}
	case "fsync", "fdatasync", "close", "fstat":
		fd := e.fdArg(c, "fd")
		if c.Done() == nil {
			switch c.Name {
			case "fsync":
				err = s.Fsync(fd)
			case "fdatasync":
				err = s.Fdatasync(fd)
			case "close":
				err = s.Close(fd)
			default:
				err = s.Fstat(fd, &st)
				out = statOut(&st)
			}
		}
	case "ftruncate":
		fd, n := e.fdArg(c, "fd"), c.Int("len")
		if c.Done() == nil {
			err = s.Ftruncate(fd, n)
		}
	case "truncate":
		p, n := e.path(c, "path"), c.Int("len")
		if c.Done() == nil {
			err = s.Truncate(p, n)
		}
	case "fallocate":
		fd, mode, off, n := e.fdArg(c, "fd"), c.Flags("mode", fallocFl, 0), c.Int("off"), c.Int("len")
		if c.Done() == nil {
			err = s.Fallocate(fd, uint32(mode), off, n)
		}
	case "stat", "lstat", "unlink", "rmdir":
		p := e.path(c, "path")
		if c.Done() == nil {
			switch c.Name {
			case "stat":
				err = s.Stat(p, &st)
				out = statOut(&st)
			case "lstat":
				err = s.Lstat(p, &st)
				out = statOut(&st)
			case "unlink":
				err = s.Unlink(p)
			default:
				err = s.Rmdir(p)
			}
		}
	case "rename":
		o, n := e.path(c, "old"), e.path(c, "new")
		if c.Done() == nil {
			err = s.Rename(o, n)
		}
	case "mkdir":
		p, mode := e.path(c, "path"), c.IntOr("mode", 0o755)
		if c.Done() == nil {
			err = s.Mkdir(p, uint32(mode))
		}
	case "symlink":
		t, l := c.Str("target"), e.path(c, "link")
		if c.Done() == nil {
			err = s.Symlink(t, l)
		}
	case "readlink":
		p, b := e.path(c, "path"), e.buf(c)
		if c.Done() == nil {
			r, err = s.Readlink(p, b)
			if err == nil {
				out = fmt.Sprintf("%d %q", r, b[:r])
			}
		}
	case "mmap":
		fd, off, n := e.fdArg(c, "fd"), c.Int("off"), c.Int("len")
		prot, fl := c.Flags("prot", protFl, unix.PROT_READ), c.Flags("flags", mapFl, unix.MAP_SHARED)
		if c.Done() == nil {
			var b []byte
			if b, err = s.(sysMM).Mmap(fd, off, int(n), int(prot), int(fl)); err == nil {
				*e.maps = append(*e.maps, mapping{b, true})
				r = len(b)
			}
		}
	case "munmap", "msync":
		// The newest mapping, from byte skip on.
		skip, fl := c.IntOr("skip", 0), c.Flags("flags", msyncFl, 0)
		if c.Name == "munmap" {
			c.Has("flags") // not an argument of munmap: Done reports it
		}
		if c.Done() == nil {
			if len(*e.maps) == 0 {
				return "", c.Failf("no mapping (map one with mmap first)")
			}
			m := &(*e.maps)[len(*e.maps)-1]
			if skip < 0 || skip > int64(len(m.b)) {
				return "", c.Failf("skip=%d: want 0 to %d", skip, len(m.b))
			}
			if c.Name == "msync" {
				err = s.(sysMM).Msync(m.b[skip:], int(fl))
			} else if err = s.(sysMM).Munmap(m.b[skip:]); err == nil && skip == 0 {
				m.live = false // msync may still name it (ENOMEM)
			}
		}
	default:
		return "", c.Failf("unknown call (want open, openat, creat, read, pread, write, pwrite, readv, preadv, writev, pwritev, lseek, fcntl, dup, dup2, unix.Dup2, dup3, fsync, fdatasync, close, fstat, ftruncate, truncate, fallocate, stat, lstat, unlink, rmdir, rename, mkdir, symlink, readlink, mmap, munmap, msync, preadv2, pwritev2, unlinkat, renameat2, linkat, symlinkat, mkdirat, readlinkat, fstatat, statx, faccessat, faccessat2, fchmodat, fchmod, utimensat, futimens, flock, fcntl_lock, sync_file_range, syncfs, copy_file_range, sendfile, getdents, fchdir, getcwd, devnull)")
	}
	if err := c.Done(); err != nil {
		return "", err
	}
	if err != nil {
		e, bare := errnoOf(err)
		if !bare {
			return "", fmt.Errorf("%s: %s returned %s, want a bare syscall.Errno", c.Pos, c.Name, errName(err))
		}
		return errnoText(e), nil
	}
	switch {
	case out != "":
		return out, nil
	case isFd && r >= 0:
		return e.fdOut(r), nil
	case read != nil:
		return fmt.Sprintf("%d crc=%08x", r, crc32.ChecksumIEEE(read)), nil
	case isCount:
		return strconv.Itoa(r), nil
	}
	return "0", nil
}

// errnoText names an errno as strace does (EOPNOTSUPP, not its alias ENOTSUP).
func errnoText(e syscall.Errno) string {
	if e == unix.EOPNOTSUPP {
		return "EOPNOTSUPP"
	}
	return unix.ErrnoName(e)
}

// tableRow is a row's options.
type tableRow struct {
	nofile   string // "": the process's limit; else an fd argument (+8)
	modelBug string // "": none; else the model's known last answer (ok or an errno)
}

// rowCalls parses the row's calls: the directive itself, or the lines of a run.
// Each side parses them afresh (a Cmd records which arguments were read).
func rowCalls(d *datadriven.TestData) ([]*ddscript.Cmd, error) {
	if d.Cmd != "run" {
		return []*ddscript.Cmd{ddscript.FromDirective(d)}, nil
	}
	calls, err := ddscript.Lines(d)
	if err == nil && len(calls) == 0 {
		err = fmt.Errorf("%s: run: want one call per line in the input", d.Pos)
	}
	return calls, err
}

func parseTableRow(d *datadriven.TestData) (tableRow, error) {
	var row tableRow
	if d.Cmd == "run" {
		c := ddscript.FromDirective(d)
		row = tableRow{nofile: c.StrOr("nofile", ""), modelBug: c.StrOr("model-bug", "")}
		if err := c.Done(); err != nil {
			return row, err
		}
	}
	_, err := rowCalls(d)
	return row, err
}

// runOn runs the row's calls on one side and returns their result lines.
func (row tableRow) runOn(d *datadriven.TestData, e errEnv, limit func(n int, fn func())) (string, error) {
	var lines []string
	var ferr error
	var maps []mapping
	e.maps = &maps
	defer func() {
		for _, m := range maps {
			if m.live {
				e.s.(sysMM).Munmap(m.b)
			}
		}
	}()
	body := func() {
		calls, _ := rowCalls(d) // checked by parseTableRow
		for _, c := range calls {
			l, err := e.step(c)
			if err != nil {
				ferr = err
				return
			}
			lines = append(lines, l)
		}
	}
	if row.nofile != "" {
		c, _ := ddscript.Parse(d.Pos, "run n="+row.nofile)
		n := e.fdArg(c, "n")
		if err := c.Err(); err != nil {
			return "", fmt.Errorf("%s: run nofile=: %v", d.Pos, err)
		}
		e.nofile = n
		limit(n, body)
	} else {
		body()
	}
	return strings.Join(lines, "\n") + "\n", ferr
}

// TestErrorPaths runs each row of testdata/errpaths on the model and, where an
// ext4 directory is available, on the kernel, and checks both against the file.
func TestErrorPaths(t *testing.T) {
	files, err := filepath.Glob("testdata/errpaths/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/errpaths/*.txt: %v", err)
	}
	dir, why := ext4DirOrWhy(t)
	if dir == "" {
		t.Logf("model side only: %s", why)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			var h *host
			datadriven.RunTest(t, file, func(t *testing.T, d *datadriven.TestData) string {
				// The host arranges the fd table once datadriven holds the
				// file open, so that the file's fd is below the base.
				if h == nil && dir != "" {
					h = newHostIn(t, dir)
				}
				return runErrRow(t, h, d)
			})
		})
	}
}

// modelOnly builds the model side of a row without a kernel: base is an fd
// number the rows' fds start at, as on the host.
const modelOnlyBase = 16

func runErrRow(t *testing.T, h *host, d *datadriven.TestData) string {
	row, err := parseTableRow(d)
	if err != nil {
		t.Errorf("%v", err)
		return d.Expected
	}
	defer keepCwd(t)()
	var (
		m       *sim.Process
		base    = modelOnlyBase
		nofile  = 20000
		k       sys
		kernOut string
	)
	if h != nil {
		p := h.newPair(t)
		defer p.done()
		m, k, base, nofile = p.m, p.k, h.base, h.nofile
		setupErrpaths(t, p.k)
		var kerr error
		kernOut, kerr = row.runOn(d, errEnv{s: k, base: base, nofile: nofile}, func(n int, fn func()) { withKernelNofile(t, n, fn) })
		if kerr != nil {
			t.Errorf("%v", kerr)
			return d.Expected
		}
	} else {
		m = modelProcess(t, base, nofile)
	}
	setupErrpaths(t, m)
	modelOut, merr := row.runOn(d, errEnv{s: m, base: base, nofile: nofile}, func(n int, fn func()) { withModelNofile(t, m, n, fn) })
	if merr != nil {
		t.Errorf("%v", merr)
		return d.Expected
	}
	want := d.Expected
	if h != nil {
		if d.Rewrite {
			want = kernOut
		} else if kernOut != d.Expected {
			t.Errorf("%s: %s\nkernel:\n%swant:\n%s", d.Pos, d.FullCmd(), kernOut, d.Expected)
		}
	}
	if modelOut != want {
		lines := strings.Split(strings.TrimSpace(modelOut), "\n")
		last := lines[len(lines)-1]
		if strings.HasPrefix(last, "E") == false {
			last = "ok"
		}
		if row.modelBug != "" && last == row.modelBug {
			t.Logf("%s: known model bug (see the comment above the row): model gives\n%s", d.Pos, modelOut)
		} else {
			t.Errorf("%s: %s\nmodel:\n%swant:\n%s", d.Pos, d.FullCmd(), modelOut, want)
		}
	}
	if h == nil {
		return d.Expected
	}
	return want
}

// modelProcess returns a model process whose fds below base are taken, as a
// pair's are.
func modelProcess(t *testing.T, base, nofile int) *sim.Process {
	krn := sim.New(vfs.New(), sim.WithNofile(nofile))
	m := krn.Spawn()
	for {
		fd, err := m.Open("/", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("model: placeholder open: %v", err)
		}
		if fd >= base-1 {
			break
		}
	}
	m.Umask(0o022)
	return m
}

// TestErrorTableRejectsBadRows: a malformed row is an error naming its line
// and what was expected, never a pass.
func TestErrorTableRejectsBadRows(t *testing.T) {
	m := modelProcess(t, modelOnlyBase, 1024)
	setupErrpaths(t, m)
	e := errEnv{s: m, base: modelOnlyBase, nofile: 1024}
	for _, c := range []struct{ row, err string }{
		{"read fd=bogus n=10", "f.txt:3: read: fd=bogus: want an fd"},
		{"read fd=rw", "f.txt:3: read: want argument n="},
		{"read fd=rw n=10 extra=1", "f.txt:3: read: unknown argument extra"},
		{"read fd=3 n=10", "f.txt:3: read: fd=3: a non-negative fd is relative to the base: write +3"},
		{"open path=/f flags=O_BOGUS", `f.txt:3: open: flags=O_BOGUS: unknown name "O_BOGUS"`},
		{"frobnicate fd=rw", "f.txt:3: frobnicate: unknown call"},
		{"pwritev fd=rw iov=(1,x) off=0", "f.txt:3: pwritev: iov: x: want a byte count"},
		{"open path=/{a*x} flags=O_RDONLY", "f.txt:3: open: path=/{a*x}: want {TEXT*COUNT}"},
	} {
		cmd, err := ddscript.Parse("f.txt:3", c.row)
		require.NoError(t, err)
		_, err = e.step(cmd)
		require.ErrorContains(t, err, c.err, c.row)
	}
}

// Package stdio is the C library's buffered streams (FILE, <stdio.h>) as
// glibc implements them, above the syscall seam: a File issues only the
// system calls glibc issues for the same library calls, in the same order and
// with the same sizes, through a Sys (a *sim.Process, or anything with its
// methods). It exists to show what buffering does to durability and to the
// order of bytes: fwrite puts bytes in a user-space buffer that neither
// fsync nor a power cut knows of until fflush (or a full buffer, or fclose)
// write(2)s them, and write(2) calls made on the same descriptor in between
// land before them.
//
// The model follows glibc's libio (libio/fileops.c, genops.c, filedoalloc.c,
// iosetvbuf.c, iofopen.c, iofdopen.c, glibc 2.36), and is checked against the
// real glibc by a differential test that runs the same calls from a C program
// under strace:
//
//   - The buffer is allocated at the first read or write (or setvbuf(_IOFBF)
//     without a buffer): its size is st_blksize from fstat when that is
//     positive and below BUFSIZ (8192), else BUFSIZ: 4096 on ext4.
//   - Full buffering (the default for files): bytes go to the buffer; when a
//     write does not fit, the buffer is flushed, then the whole blocks of
//     what remains are written straight from the caller's memory (one
//     write(2) of a multiple of the buffer size), and the rest is buffered.
//   - Line buffering (setvbuf _IOLBF; a terminal's default, which this model
//     does not detect): as full buffering, and the buffer is also written
//     when a newline enters it — the text up to the last newline of one
//     fwrite in one write(2) once the stream is writing, or line by line for
//     the first write after opening or after a read.
//   - No buffering (_IONBF): each fwrite or fputs is one write(2); each fputc
//     one write(2) of a byte.
//   - A stream opened with "a" (not "a+") seeks to the end at fopen; fdopen
//     checks the descriptor's access mode (F_GETFL) and sets O_APPEND for "a"
//     when the descriptor lacks it, then (for "a") seeks to the end.
//   - fflush writes the buffer and, for a stream that has read ahead, seeks
//     the descriptor back to the stream's position; fclose writes the buffer
//     of a stream that is writing, then closes.
//   - A write(2) that fails empties the buffer all the same (new_do_write
//     resets it whatever the count): the bytes are lost, and fclose does not
//     try them again. Observed with glibc 2.36 on /dev/full: fflush fails
//     with ENOSPC, __fpending is 0 after it, fclose writes nothing and
//     returns 0.
//
// Not modelled: wide streams, ungetc and fseek/ftell, the mmap mode ("m"),
// terminal detection (isatty), and the flush of line-buffered stdout before
// reading a line-buffered or unbuffered stream.
package stdio

import (
	"errors"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// Sys is the system calls a File makes; *sim.Process implements it (and the
// same calls of golang.org/x/sys/unix have the same signatures). When the
// Sys also takes sim Calls (Syscall and Task, as *sim.Process does), Fopen
// makes its openat one, with glibc's exact arguments.
type Sys interface {
	Open(path string, flags int, perm uint32) (int, error)
	Read(fd int, p []byte) (int, error)
	Write(fd int, p []byte) (int, error)
	Seek(fd int, off int64, whence int) (int64, error)
	Close(fd int) error
	Fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error
	FcntlInt(fd uintptr, cmd, arg int) (int, error)
}

// Buffering modes of Setvbuf, with <stdio.h>'s values.
const (
	IOFBF = 0 // _IOFBF: full buffering
	IOLBF = 1 // _IOLBF: line buffering
	IONBF = 2 // _IONBF: no buffering
)

// BUFSIZ is glibc's BUFSIZ, the largest default buffer.
const BUFSIZ = 8192

// eof is C's EOF, as the internal functions return it.
const eof = -1

// Stream flags, glibc's _IO_* of the same names.
const (
	noReads    = 1 << iota // _IO_NO_READS
	noWrites               // _IO_NO_WRITES
	appending              // _IO_IS_APPENDING
	lineBuf                // _IO_LINE_BUF
	unbuffered             // _IO_UNBUFFERED
	putting                // _IO_CURRENTLY_PUTTING
	eofSeen                // _IO_EOF_SEEN
	errSeen                // _IO_ERR_SEEN
)

// File is a stream (FILE *). Its buffer and pointers are glibc's: buf is
// _IO_buf_base.._IO_buf_end (nil until allocated), the read area is
// buf[rbase:rend] with the next byte at rptr, the write area buf[wbase:wend]
// with the next free byte at wptr. A File is not safe for concurrent use
// (glibc's locking is not modelled). Calls on a closed File, undefined in
// C, fail with EBADF.
type File struct {
	sys    Sys
	fd     int
	flags  int
	buf    []byte
	rbase  int
	rptr   int
	rend   int
	wbase  int
	wptr   int
	wend   int
	closed bool
	err    error // the errno of the last failing call
}

// Fopen opens path as fopen(3) with mode "r", "w", "a", "r+", "w+" or "a+",
// followed by any of "b" (ignored), "x" (O_EXCL), "e" (O_CLOEXEC); the file
// is created with mode 0666 (less the umask). An invalid mode is EINVAL.
func Fopen(sys Sys, path, mode string) (*File, error) {
	flags, rw, ok := openFlags(mode)
	if !ok {
		return nil, syscall.EINVAL
	}
	var fd int
	var err error
	if raw, ok := sys.(rawSys); ok {
		// glibc's openat on x86-64 passes no O_LARGEFILE, which the
		// facade's Open (as x/sys/unix's) adds.
		c := sim.Call{Nr: sim.SYS_OPENAT, Task: raw.Task(), Path: path}
		c.Args[0], c.Args[2], c.Args[3] = unix.AT_FDCWD, int64(flags), 0o666
		r := raw.Syscall(c)
		fd, err = int(r.Ret), r.Err()
	} else {
		fd, err = sys.Open(path, flags, 0o666)
	}
	if err != nil {
		return nil, err
	}
	f := &File{sys: sys, fd: fd, flags: rw}
	if rw&(appending|noReads) == appending|noReads {
		// _IO_file_open: a write-only append stream starts at the end.
		if _, err := sys.Seek(fd, 0, unix.SEEK_END); err != nil && !errors.Is(err, syscall.ESPIPE) {
			_ = sys.Close(fd)
			return nil, err
		}
	}
	return f, nil
}

// rawSys is a Sys that takes sim Calls (a *sim.Process), through which
// Fopen makes openat's arguments exactly glibc's.
type rawSys interface {
	Syscall(c sim.Call) sim.Result
	Task() *sim.Task
}

// openFlags parses an fopen mode as glibc's _IO_new_file_fopen: the open(2)
// flags and the stream's flags; false for a bad first letter.
func openFlags(mode string) (flags, rw int, ok bool) {
	if mode == "" {
		return 0, 0, false
	}
	var omode, oflags int
	switch mode[0] {
	case 'r':
		omode, rw = unix.O_RDONLY, noWrites
	case 'w':
		omode, oflags, rw = unix.O_WRONLY, unix.O_CREAT|unix.O_TRUNC, noReads
	case 'a':
		omode, oflags, rw = unix.O_WRONLY, unix.O_CREAT|unix.O_APPEND, noReads|appending
	default:
		return 0, 0, false
	}
	for k := 1; k < 7 && k < len(mode); k++ {
		switch mode[k] {
		case '+':
			omode = unix.O_RDWR
			rw &= appending
		case 'x':
			oflags |= unix.O_EXCL
		case 'e':
			oflags |= unix.O_CLOEXEC
		}
	}
	return omode | oflags, rw, true
}

// Fdopen makes a stream of descriptor fd, as fdopen(3): mode's first letter
// and "+" must agree with the descriptor's access mode (EINVAL otherwise);
// "a" sets O_APPEND on the descriptor when it lacks it, and then moves it to
// the end of the file unless the mode has "+". Nothing is truncated.
func Fdopen(sys Sys, fd int, mode string) (*File, error) {
	if mode == "" {
		return nil, syscall.EINVAL
	}
	var rw, posix int
	switch mode[0] {
	case 'r':
		rw = noWrites
	case 'w':
		rw = noReads
	case 'a':
		rw, posix = noReads|appending, unix.O_APPEND
	default:
		return nil, syscall.EINVAL
	}
	for k := 1; k < 5 && k < len(mode); k++ {
		if mode[k] == '+' {
			rw &= appending
		}
	}
	fl, err := sys.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		return nil, err
	}
	acc := fl & unix.O_ACCMODE
	if acc == unix.O_RDONLY && rw&noWrites == 0 || acc == unix.O_WRONLY && rw&noReads == 0 {
		return nil, syscall.EINVAL
	}
	if posix&unix.O_APPEND != 0 && fl&unix.O_APPEND == 0 {
		if _, err := sys.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_APPEND); err != nil {
			return nil, err
		}
		// Having added O_APPEND, glibc moves a write-only stream's
		// descriptor to the end.
		if rw&(appending|noReads) == appending|noReads {
			if _, err := sys.Seek(fd, 0, unix.SEEK_END); err != nil && !errors.Is(err, syscall.ESPIPE) {
				return nil, err
			}
		}
	}
	return &File{sys: sys, fd: fd, flags: rw}, nil
}

// Fileno returns the stream's descriptor, as fileno(3).
func (f *File) Fileno() int { return f.fd }

// Ferror reports whether a read or write failed (the error indicator).
func (f *File) Ferror() bool { return f.flags&errSeen != 0 }

// Feof reports whether a read met the end of file (the end-of-file indicator).
func (f *File) Feof() bool { return f.flags&eofSeen != 0 }

// Clearerr clears both indicators.
func (f *File) Clearerr() { f.flags &^= errSeen | eofSeen }

// Buffered returns the bytes written to the stream and not yet to the
// descriptor: what a power cut, or fsync(fileno(f)), does not see.
func (f *File) Buffered() int { return f.wptr - f.wbase }

// fail records a failed call's errno.
func (f *File) fail(err error) { f.err = err }

// lastErr returns and forgets the recorded errno (nil when there is none).
func (f *File) lastErr() error {
	err := f.err
	f.err = nil
	return err
}

// Setvbuf sets the buffering mode, as setvbuf(3): IOFBF, IOLBF or IONBF;
// size > 0 gives the stream a buffer of that many bytes (setvbuf with a
// buffer of the caller's), 0 keeps glibc's choice. Any buffered output is
// written first when the buffer changes. An unknown mode is EINVAL.
func (f *File) Setvbuf(mode, size int) error {
	if f.closed {
		return syscall.EBADF
	}
	switch mode {
	case IOFBF:
		f.flags &^= lineBuf | unbuffered
		if size == 0 {
			if f.buf == nil {
				// glibc allocates now so that a terminal's default line
				// buffering does not come back later.
				f.doallocate()
				f.flags &^= lineBuf
			}
			return nil
		}
	case IOLBF:
		f.flags &^= unbuffered
		f.flags |= lineBuf
		if size == 0 {
			return nil
		}
	case IONBF:
		f.flags &^= lineBuf
		f.flags |= unbuffered
		size = 0
	default:
		return syscall.EINVAL
	}
	// _IO_new_file_setbuf, by way of _IO_default_setbuf.
	if f.sync() == eof {
		return f.lastErr()
	}
	if size == 0 {
		f.flags |= unbuffered
		f.buf = make([]byte, 1) // _shortbuf
	} else {
		f.flags &^= unbuffered
		f.buf = make([]byte, size)
	}
	f.rbase, f.rptr, f.rend = 0, 0, 0
	f.wbase, f.wptr, f.wend = 0, 0, 0
	return nil
}

// doallocbuf is _IO_doallocbuf: the default buffer, or one byte for an
// unbuffered stream.
func (f *File) doallocbuf() {
	if f.buf != nil {
		return
	}
	if f.flags&unbuffered == 0 {
		f.doallocate()
		return
	}
	f.buf = make([]byte, 1)
}

// doallocate is _IO_file_doallocate: BUFSIZ, or st_blksize when it is
// smaller.
func (f *File) doallocate() {
	size := BUFSIZ
	var st unix.Stat_t
	if f.fd >= 0 && f.sys.Fstatat(f.fd, "", &st, unix.AT_EMPTY_PATH) == nil {
		if st.Blksize > 0 && st.Blksize < BUFSIZ {
			size = int(st.Blksize)
		}
	}
	f.buf = make([]byte, size)
}

// sysWrite is _IO_new_file_write: write(2) until all is written or one
// fails.
func (f *File) sysWrite(p []byte) int {
	done := 0
	for done < len(p) {
		n, err := f.sys.Write(f.fd, p[done:])
		if err != nil {
			f.flags |= errSeen
			f.fail(err)
			break
		}
		done += n
	}
	return done
}

// newDoWrite is new_do_write: write p (the buffer's content or the
// caller's), after seeking back over what the stream read ahead, and empty
// the buffer.
func (f *File) newDoWrite(p []byte) int {
	if f.flags&appending == 0 && f.rend != f.wbase {
		if _, err := f.sys.Seek(f.fd, int64(f.wbase-f.rend), unix.SEEK_CUR); err != nil {
			f.fail(err)
			return 0
		}
	}
	n := f.sysWrite(p)
	f.rbase, f.rptr, f.rend = 0, 0, 0
	f.wbase, f.wptr = 0, 0
	f.wend = len(f.buf)
	if f.flags&(lineBuf|unbuffered) != 0 {
		f.wend = 0
	}
	return n
}

// doWrite is _IO_new_do_write: 0, or eof when not all of p was written.
func (f *File) doWrite(p []byte) int {
	if len(p) == 0 || f.newDoWrite(p) == len(p) {
		return 0
	}
	return eof
}

// doFlush is _IO_do_flush.
func (f *File) doFlush() int { return f.doWrite(f.buf[f.wbase:f.wptr]) }

// overflow is _IO_new_file_overflow: start writing (allocating the buffer,
// leaving read mode), then flush (ch == eof) or add ch, flushing as the
// buffering mode says.
func (f *File) overflow(ch int) int {
	if f.flags&noWrites != 0 {
		f.flags |= errSeen
		f.fail(syscall.EBADF)
		return eof
	}
	if f.flags&putting == 0 || f.buf == nil {
		if f.buf == nil {
			f.doallocbuf()
			f.rbase, f.rptr, f.rend = 0, 0, 0
		}
		if f.rptr == len(f.buf) {
			f.rend, f.rptr = 0, 0
		}
		f.wptr = f.rptr
		f.wbase = f.wptr
		f.wend = len(f.buf)
		f.rbase, f.rptr = f.rend, f.rend
		f.flags |= putting
		if f.flags&(lineBuf|unbuffered) != 0 {
			f.wend = f.wptr
		}
	}
	if ch == eof {
		return f.doWrite(f.buf[f.wbase:f.wptr])
	}
	if f.wptr == len(f.buf) && f.doFlush() == eof {
		return eof
	}
	f.buf[f.wptr] = byte(ch)
	f.wptr++
	if f.flags&unbuffered != 0 || f.flags&lineBuf != 0 && ch == '\n' {
		if f.doWrite(f.buf[f.wbase:f.wptr]) == eof {
			return eof
		}
	}
	return ch
}

// xsputn is _IO_new_file_xsputn: the bytes of p written (to the buffer or
// the descriptor), or eof when all went to the buffer but its flush failed.
func (f *File) xsputn(p []byte) int {
	n := len(p)
	if n == 0 {
		return 0
	}
	s, toDo, mustFlush, count := 0, n, 0, 0
	if f.flags&lineBuf != 0 && f.flags&putting != 0 {
		count = len(f.buf) - f.wptr
		if count >= n {
			for q := n - 1; q >= 0; q-- {
				if p[q] == '\n' {
					count, mustFlush = q+1, 1
					break
				}
			}
		}
	} else if f.wend > f.wptr {
		count = f.wend - f.wptr
	}
	if count > 0 {
		count = min(count, toDo)
		copy(f.buf[f.wptr:], p[:count])
		f.wptr += count
		s += count
		toDo -= count
	}
	if toDo+mustFlush > 0 {
		if f.overflow(eof) == eof {
			if toDo == 0 {
				return eof
			}
			return n - toDo
		}
		// Write a whole number of blocks straight from p.
		block := len(f.buf)
		doWrite := toDo
		if block >= 128 {
			doWrite -= toDo % block
		}
		if doWrite > 0 {
			w := f.newDoWrite(p[s : s+doWrite])
			toDo -= w
			if w < doWrite {
				return n - toDo
			}
		}
		if toDo > 0 {
			toDo -= f.defaultXsputn(p[s+doWrite:])
		}
	}
	return n - toDo
}

// defaultXsputn is _IO_default_xsputn: fill the write area, and put the
// rest a byte at a time through overflow.
func (f *File) defaultXsputn(p []byte) int {
	more, s := len(p), 0
	for {
		if f.wptr < f.wend {
			count := min(f.wend-f.wptr, more)
			copy(f.buf[f.wptr:], p[s:s+count])
			f.wptr += count
			s += count
			more -= count
		}
		if more == 0 || f.overflow(int(p[s])) == eof {
			break
		}
		s++
		more--
	}
	return len(p) - more
}

// Fwrite writes p to the stream, as fwrite(p, 1, len(p), f): the bytes
// accepted (all of them when they are buffered, even if a flush on the way
// failed, as glibc reports), and the errno of a failing write(2).
func (f *File) Fwrite(p []byte) (int, error) {
	if f.closed {
		return 0, syscall.EBADF
	}
	if len(p) == 0 {
		return 0, nil
	}
	n := f.xsputn(p)
	if n == len(p) || n == eof {
		return len(p), f.lastErr()
	}
	return n, f.lastErr()
}

// Fputs writes s, as fputs(3): nil, or the errno that made it fail (fputs
// returns EOF).
func (f *File) Fputs(s string) error {
	if f.closed {
		return syscall.EBADF
	}
	if f.xsputn([]byte(s)) == len(s) {
		f.err = nil
		return nil
	}
	if err := f.lastErr(); err != nil {
		return err
	}
	return syscall.EIO
}

// Fputc writes the byte c, as fputc(3).
func (f *File) Fputc(c byte) error {
	if f.closed {
		return syscall.EBADF
	}
	if f.wptr < f.wend {
		f.buf[f.wptr] = c
		f.wptr++
		return nil
	}
	if f.overflow(int(c)) == eof {
		return f.lastErr()
	}
	f.err = nil
	return nil
}

// switchToGetMode is _IO_switch_to_get_mode: flush, and read from where the
// writes ended.
func (f *File) switchToGetMode() int {
	if f.wptr > f.wbase && f.overflow(eof) == eof {
		return eof
	}
	f.rbase = 0
	if f.wptr > f.rend {
		f.rend = f.wptr
	}
	f.rptr = f.wptr
	f.wbase, f.wend = f.rptr, f.rptr
	f.wptr = f.rptr
	f.flags &^= putting
	return 0
}

// underflow is __underflow followed by _IO_new_file_underflow: make bytes
// available in the read area (eof at the end of file or on an error).
func (f *File) underflow() int {
	if f.flags&putting != 0 && f.switchToGetMode() == eof {
		return eof
	}
	if f.rptr < f.rend {
		return int(f.buf[f.rptr])
	}
	if f.flags&eofSeen != 0 {
		return eof
	}
	if f.flags&noReads != 0 {
		f.flags |= errSeen
		f.fail(syscall.EBADF)
		return eof
	}
	if f.buf == nil {
		f.doallocbuf()
	}
	f.switchToGetMode()
	f.rbase, f.rptr, f.rend = 0, 0, 0
	f.wbase, f.wptr, f.wend = 0, 0, 0
	n, err := f.sys.Read(f.fd, f.buf)
	if err != nil {
		f.flags |= errSeen
		f.fail(err)
		n = 0
	} else if n == 0 {
		f.flags |= eofSeen
	}
	f.rend += n
	if n == 0 {
		return eof
	}
	return int(f.buf[f.rptr])
}

// Fread reads up to len(p) bytes, as fread(p, 1, len(p), f): the bytes read
// (fewer at the end of file, see Feof, or on an error, returned).
func (f *File) Fread(p []byte) (int, error) {
	if f.closed {
		return 0, syscall.EBADF
	}
	if len(p) == 0 {
		return 0, nil
	}
	// _IO_file_xsgetn.
	if f.buf == nil {
		f.doallocbuf()
	}
	want, s := len(p), 0
	for want > 0 {
		have := f.rend - f.rptr
		if want <= have {
			copy(p[s:], f.buf[f.rptr:f.rptr+want])
			f.rptr += want
			want = 0
			break
		}
		if have > 0 {
			copy(p[s:], f.buf[f.rptr:f.rend])
			s += have
			want -= have
			f.rptr += have
		}
		if want < len(f.buf) {
			if f.underflow() == eof {
				break
			}
			continue
		}
		f.rbase, f.rptr, f.rend = 0, 0, 0
		f.wbase, f.wptr, f.wend = 0, 0, 0
		count := want
		if block := len(f.buf); block >= 128 {
			count -= want % block
		}
		n, err := f.sys.Read(f.fd, p[s:s+count])
		if err != nil || n == 0 {
			if err != nil {
				f.flags |= errSeen
				f.fail(err)
			} else {
				f.flags |= eofSeen
			}
			break
		}
		s += n
		want -= n
	}
	return len(p) - want, f.lastErr()
}

// sync is _IO_new_file_sync: write the buffer, and seek the descriptor back
// over what was read ahead.
func (f *File) sync() int {
	if f.wptr > f.wbase && f.doFlush() != 0 {
		return eof
	}
	if delta := f.rptr - f.rend; delta != 0 {
		if _, err := f.sys.Seek(f.fd, int64(delta), unix.SEEK_CUR); err == nil {
			f.rend = f.rptr
		} else if !errors.Is(err, syscall.ESPIPE) {
			f.fail(err)
			return eof
		}
	}
	return 0
}

// Fflush writes what the stream buffered, as fflush(3): nil, or the errno
// of the failing call.
func (f *File) Fflush() error {
	if f.closed {
		return syscall.EBADF
	}
	if f.sync() == eof {
		return f.lastErr()
	}
	return nil
}

// Fclose writes what a writing stream buffered and closes the descriptor,
// as fclose(3); the File is unusable after, even on error.
func (f *File) Fclose() error {
	if f.closed {
		return syscall.EBADF
	}
	var werr error
	if f.flags&noWrites == 0 && f.flags&putting != 0 && f.doFlush() == eof {
		werr = f.lastErr()
	}
	cerr := f.sys.Close(f.fd)
	f.closed = true
	f.buf = nil
	f.fd = -1
	if cerr != nil {
		return cerr
	}
	return werr
}

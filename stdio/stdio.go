// Package stdio is the write side of glibc's stdio (2.36) for regular files,
// over a simulated process: fopen, fwrite, fflush, fileno and fclose make the
// system calls glibc makes, in its order, so a workload written with stdio
// shows what reaches the kernel when (and what a crash can lose: bytes that
// fwrite accepted and no fflush wrote are in the process, not the kernel).
//
// What it models, as strace shows glibc 2.36 on Linux doing it:
//
//   - fopen: openat(AT_FDCWD, path, flags, 0666) with r → O_RDONLY, r+ →
//     O_RDWR, w → O_WRONLY|O_CREAT|O_TRUNC, w+ → O_RDWR|O_CREAT|O_TRUNC,
//     a → O_WRONLY|O_CREAT|O_APPEND, a+ → O_RDWR|O_CREAT|O_APPEND, x adding
//     O_EXCL, e O_CLOEXEC, b nothing; mode a (not a+) then lseek(fd, 0,
//     SEEK_END).
//   - The buffer is allocated at the first fwrite: fstat (newfstatat with
//     AT_EMPTY_PATH) gives its size, st_blksize (BUFSIZ, 8192, when 0). Files
//     are fully buffered.
//   - fwrite (glibc's _IO_new_file_xsputn): what fits in the buffer is
//     copied; when more is left, the buffer is written whole (one write), then
//     as many whole buffer-sizes of the rest as there are go out in one write
//     straight from the caller's bytes, and the remainder is buffered. A full
//     buffer is written only when more bytes come, or at fflush or fclose.
//   - fflush writes what is buffered (nothing, no call, when empty); fclose
//     flushes and closes (the fd is closed even when the flush failed).
//
// Reading (fread, fgets, fseek) is not modelled: a stream is written only.
package stdio

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"iosim/sim"
)

// bufsiz is glibc's BUFSIZ, the buffer size when st_blksize is 0.
const bufsiz = 8192

// File is a FILE* opened for writing.
type File struct {
	p      *sim.Process
	fd     int
	buf    []byte // nil until the first fwrite; len is what is buffered
	writes bool
	closed bool
}

// ParseMode returns the open(2) flags of an fopen mode, and whether it seeks
// to the end at open (mode a).
func ParseMode(mode string) (flags int, seekEnd bool, err error) {
	if mode == "" {
		return 0, false, errors.New("empty mode")
	}
	plus := strings.Contains(mode[1:], "+")
	switch mode[0] {
	case 'r':
		flags = unix.O_RDONLY
		if plus {
			flags = unix.O_RDWR
		}
	case 'w':
		flags = unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC
		if plus {
			flags = unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC
		}
	case 'a':
		flags = unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND
		if plus {
			flags = unix.O_RDWR | unix.O_CREAT | unix.O_APPEND
		}
		seekEnd = !plus
	default:
		return 0, false, fmt.Errorf("mode %q: want r, w or a first", mode)
	}
	for _, c := range mode[1:] {
		switch c {
		case '+', 'b':
		case 'x':
			flags |= unix.O_EXCL
		case 'e':
			flags |= unix.O_CLOEXEC
		default:
			return 0, false, fmt.Errorf("mode %q: unknown flag %q (want +, b, x, e)", mode, c)
		}
	}
	return flags, seekEnd, nil
}

// Open is fopen(path, mode). Its error is the errno of the failed call.
func Open(p *sim.Process, path, mode string) (*File, error) {
	flags, seekEnd, err := ParseMode(mode)
	if err != nil {
		return nil, err
	}
	// As glibc on x86-64, without the O_LARGEFILE that x/sys/unix's
	// Openat (and so Process.Openat) adds.
	c := sim.Call{Nr: sim.SYS_OPENAT, Task: p.Task(), Path: path}
	c.Args[0], c.Args[2], c.Args[3] = unix.AT_FDCWD, int64(flags), 0o666
	r := p.Syscall(c)
	if r.Errno != 0 {
		return nil, r.Errno
	}
	fd := int(r.Ret)
	if seekEnd {
		if _, err := p.Seek(fd, 0, unix.SEEK_END); err != nil {
			p.Close(fd)
			return nil, err
		}
	}
	return &File{p: p, fd: fd, writes: flags&unix.O_ACCMODE != unix.O_RDONLY}, nil
}

// Fd is fileno(f).
func (f *File) Fd() int { return f.fd }

// Buffered returns how many bytes fwrite accepted that no write has sent.
func (f *File) Buffered() int { return len(f.buf) }

// Write is fwrite(b, 1, len(b), f): it returns how many bytes it accepted
// (all of them, unless a write failed).
func (f *File) Write(b []byte) (int, error) {
	if f.closed || !f.writes {
		return 0, unix.EBADF
	}
	if len(b) == 0 {
		return 0, nil
	}
	total := len(b)
	if f.buf != nil {
		n := min(cap(f.buf)-len(f.buf), len(b))
		f.buf = append(f.buf, b[:n]...)
		b = b[n:]
	}
	if len(b) == 0 {
		return total, nil
	}
	// The rest does not fit: allocate the buffer (first write) or send it.
	if f.buf == nil {
		var st unix.Stat_t
		if err := f.p.Fstatat(f.fd, "", &st, unix.AT_EMPTY_PATH); err != nil {
			return 0, err
		}
		size := int(st.Blksize)
		if size <= 0 {
			size = bufsiz
		}
		f.buf = make([]byte, 0, size)
	} else if err := f.Flush(); err != nil {
		return total - len(b), err
	}
	block := cap(f.buf)
	direct := len(b)
	if block >= 128 {
		direct -= len(b) % block
	}
	if direct > 0 {
		n, err := f.writeAll(b[:direct])
		if err != nil {
			return total - len(b) + n, err
		}
		b = b[direct:]
	}
	f.buf = append(f.buf, b...)
	return total, nil
}

// WriteString is fputs(s, f).
func (f *File) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// writeAll writes b, again after short writes, as glibc's _IO_new_file_write,
// and returns how many bytes went out.
func (f *File) writeAll(b []byte) (int, error) {
	done := 0
	for done < len(b) {
		n, err := f.p.Write(f.fd, b[done:])
		if err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// Flush is fflush(f): the buffered bytes are written (none buffered: no
// call). Bytes a failed write did not send stay buffered.
func (f *File) Flush() error {
	if f.closed {
		return unix.EBADF
	}
	if len(f.buf) == 0 {
		return nil
	}
	n, err := f.writeAll(f.buf)
	f.buf = append(f.buf[:0], f.buf[n:]...)
	return err
}

// Close is fclose(f): flush, then close the fd whatever the flush did.
func (f *File) Close() error {
	if f.closed {
		return unix.EBADF
	}
	ferr := f.Flush()
	f.closed = true
	if err := f.p.Close(f.fd); err != nil && ferr == nil {
		ferr = err
	}
	return ferr
}

package stdio_test

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/stdio"
)

// recorder is a stdio.Sys that logs each call as strace would show it,
// reduced to what the differential test compares: the call, its sizes and
// its result.
type recorder struct {
	sys stdio.Sys
	log []string
}

var _ stdio.Sys = (*recorder)(nil)

func ret(n int, err error) string {
	if err != nil {
		if e, ok := err.(syscall.Errno); ok {
			return fmt.Sprintf("-1 %s", unix.ErrnoName(e))
		}
		return err.Error()
	}
	return fmt.Sprint(n)
}

func (r *recorder) Open(path string, flags int, perm uint32) (int, error) {
	fd, err := r.sys.Open(path, flags, perm)
	r.log = append(r.log, "openat = "+ret(0, err))
	return fd, err
}

func (r *recorder) Read(fd int, p []byte) (int, error) {
	n, err := r.sys.Read(fd, p)
	r.log = append(r.log, fmt.Sprintf("read %d = %s", len(p), ret(n, err)))
	return n, err
}

func (r *recorder) Write(fd int, p []byte) (int, error) {
	n, err := r.sys.Write(fd, p)
	r.log = append(r.log, fmt.Sprintf("write %d = %s", len(p), ret(n, err)))
	return n, err
}

var whences = []string{"SEEK_SET", "SEEK_CUR", "SEEK_END"}

func (r *recorder) Seek(fd int, off int64, whence int) (int64, error) {
	n, err := r.sys.Seek(fd, off, whence)
	r.log = append(r.log, fmt.Sprintf("lseek %d %s = %s", off, whences[whence], ret(int(n), err)))
	return n, err
}

func (r *recorder) Close(fd int) error {
	err := r.sys.Close(fd)
	r.log = append(r.log, "close = "+ret(0, err))
	return err
}

func (r *recorder) Fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	err := r.sys.Fstatat(dirfd, path, st, flags)
	r.log = append(r.log, "fstat = "+ret(0, err))
	return err
}

func (r *recorder) FcntlInt(fd uintptr, cmd, arg int) (int, error) {
	n, err := r.sys.FcntlInt(fd, cmd, arg)
	name := map[int]string{unix.F_GETFL: "F_GETFL", unix.F_SETFL: "F_SETFL"}[cmd]
	if err != nil || cmd == unix.F_SETFL {
		r.log = append(r.log, fmt.Sprintf("fcntl %s = %s", name, ret(n, err)))
	} else {
		r.log = append(r.log, fmt.Sprintf("fcntl %s", name))
	}
	return n, err
}

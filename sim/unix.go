package sim

import "golang.org/x/sys/unix"

// Unix is the set of file calls storage code makes, with the names and
// signatures of golang.org/x/sys/unix, so the same code runs on the model in a
// test (a *Process) and on the kernel in production (osunix.Kernel, a thin
// adapter over golang.org/x/sys/unix on Linux). Every method does what its
// x/sys/unix function does (see Process), and errors are bare syscall.Errno
// values on both, so a caller compares them with ==, errors.Is or a switch.
//
// The set is deliberately small: what writing, syncing, renaming and reading
// back files and directories needs. Code that needs more (mmap, AIO, xattrs)
// takes a *Process, or an interface of its own that *Process and the adapter
// also satisfy.
type Unix interface {
	Open(path string, mode int, perm uint32) (fd int, err error)
	Openat(dirfd int, path string, flags int, mode uint32) (fd int, err error)
	Close(fd int) error
	Read(fd int, p []byte) (n int, err error)
	Write(fd int, p []byte) (n int, err error)
	Pread(fd int, p []byte, offset int64) (n int, err error)
	Pwrite(fd int, p []byte, offset int64) (n int, err error)
	Seek(fd int, offset int64, whence int) (off int64, err error)
	Fsync(fd int) error
	Fdatasync(fd int) error
	SyncFileRange(fd int, off int64, n int64, flags int) error
	Ftruncate(fd int, length int64) error
	Fallocate(fd int, mode uint32, off int64, len int64) error
	Fstat(fd int, stat *unix.Stat_t) error
	Stat(path string, stat *unix.Stat_t) error
	Lstat(path string, stat *unix.Stat_t) error
	Fstatat(dirfd int, path string, stat *unix.Stat_t, flags int) error
	Rename(oldpath string, newpath string) error
	Renameat(olddirfd int, oldpath string, newdirfd int, newpath string) error
	Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error
	Unlink(path string) error
	Unlinkat(dirfd int, path string, flags int) error
	Mkdir(path string, mode uint32) error
	Mkdirat(dirfd int, path string, mode uint32) error
	Rmdir(path string) error
	Getdents(fd int, buf []byte) (n int, err error)
}

var _ Unix = (*Process)(nil)

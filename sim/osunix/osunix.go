//go:build linux

// Package osunix runs the file calls of sim.Unix on the real kernel: Kernel's
// methods are golang.org/x/sys/unix's functions, nothing added, so storage code
// written against sim.Unix runs on the model in its tests (a *sim.Process) and
// on Linux in production (osunix.Kernel{}) unchanged.
package osunix

import (
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// Kernel is sim.Unix on the calling process's kernel. Its zero value is ready;
// it holds no state, and is as safe for concurrent use as the calls it makes.
type Kernel struct{}

var _ sim.Unix = Kernel{}

func (Kernel) Open(path string, mode int, perm uint32) (int, error) {
	return unix.Open(path, mode, perm)
}

func (Kernel) Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	return unix.Openat(dirfd, path, flags, mode)
}

func (Kernel) Close(fd int) error                  { return unix.Close(fd) }
func (Kernel) Read(fd int, p []byte) (int, error)  { return unix.Read(fd, p) }
func (Kernel) Write(fd int, p []byte) (int, error) { return unix.Write(fd, p) }

func (Kernel) Pread(fd int, p []byte, offset int64) (int, error) {
	return unix.Pread(fd, p, offset)
}

func (Kernel) Pwrite(fd int, p []byte, offset int64) (int, error) {
	return unix.Pwrite(fd, p, offset)
}

func (Kernel) Seek(fd int, offset int64, whence int) (int64, error) {
	return unix.Seek(fd, offset, whence)
}

func (Kernel) Fsync(fd int) error     { return unix.Fsync(fd) }
func (Kernel) Fdatasync(fd int) error { return unix.Fdatasync(fd) }

func (Kernel) SyncFileRange(fd int, off int64, n int64, flags int) error {
	return unix.SyncFileRange(fd, off, n, flags)
}

func (Kernel) Ftruncate(fd int, length int64) error { return unix.Ftruncate(fd, length) }

func (Kernel) Fallocate(fd int, mode uint32, off int64, len int64) error {
	return unix.Fallocate(fd, mode, off, len)
}

func (Kernel) Fstat(fd int, stat *unix.Stat_t) error       { return unix.Fstat(fd, stat) }
func (Kernel) Stat(path string, stat *unix.Stat_t) error   { return unix.Stat(path, stat) }
func (Kernel) Lstat(path string, stat *unix.Stat_t) error  { return unix.Lstat(path, stat) }
func (Kernel) Rename(oldpath string, newpath string) error { return unix.Rename(oldpath, newpath) }

func (Kernel) Fstatat(dirfd int, path string, stat *unix.Stat_t, flags int) error {
	return unix.Fstatat(dirfd, path, stat, flags)
}

func (Kernel) Renameat(olddirfd int, oldpath string, newdirfd int, newpath string) error {
	return unix.Renameat(olddirfd, oldpath, newdirfd, newpath)
}

func (Kernel) Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	return unix.Renameat2(olddirfd, oldpath, newdirfd, newpath, flags)
}

func (Kernel) Unlink(path string) error { return unix.Unlink(path) }
func (Kernel) Unlinkat(dirfd int, path string, flags int) error {
	return unix.Unlinkat(dirfd, path, flags)
}
func (Kernel) Mkdir(path string, mode uint32) error { return unix.Mkdir(path, mode) }

func (Kernel) Mkdirat(dirfd int, path string, mode uint32) error {
	return unix.Mkdirat(dirfd, path, mode)
}

func (Kernel) Rmdir(path string) error                  { return unix.Rmdir(path) }
func (Kernel) Getdents(fd int, buf []byte) (int, error) { return unix.Getdents(fd, buf) }

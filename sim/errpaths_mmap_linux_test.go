//go:build linux

package sim_test

import (
	"testing"

	"golang.org/x/sys/unix"
)

// sysMM is the mapping part of the syscall surface: x/sys/unix's Mmap, Munmap and
// Msync, implemented by *sim.Process and by osKernel.
type sysMM interface {
	Mmap(fd int, offset int64, length int, prot int, flags int) ([]byte, error)
	Munmap(b []byte) error
	Msync(b []byte, flags int) error
}

func (k *osKernel) Mmap(fd int, offset int64, length int, prot int, flags int) ([]byte, error) {
	if fd >= 0 {
		fd = k.fd(fd)
	}
	return unix.Mmap(fd, offset, length, prot, flags)
}
func (k *osKernel) Munmap(b []byte) error           { return unix.Munmap(b) }
func (k *osKernel) Msync(b []byte, flags int) error { return unix.Msync(b, flags) }

func (e errEnv) mm() sysMM { return e.s.(sysMM) }

// TestErrorPathsMmap runs the error paths of mmap, munmap and msync of files on
// the kernel and on the model, from the same starting state (setupErrpaths), and
// asserts the expected answer on both. A row's do returns the mapping's length on
// success; each mapping is unmapped again on its side.
func TestErrorPathsMmap(t *testing.T) {
	h := newHost(t)
	const page = 4096
	shared, private := unix.MAP_SHARED, unix.MAP_PRIVATE
	rd, rw := unix.PROT_READ, unix.PROT_READ|unix.PROT_WRITE
	mmap := func(e errEnv, fd int, off int64, n, prot, flags int) (int64, error) {
		b, err := e.mm().Mmap(fd, off, n, prot, flags)
		if err != nil {
			return 0, err
		}
		if err := e.mm().Munmap(b); err != nil {
			return 0, err
		}
		return int64(len(b)), nil
	}
	// withMap maps fdRW's first page shared and runs fn on the mapping.
	withMap := func(e errEnv, fn func(b []byte) error) (int64, error) {
		b, err := e.mm().Mmap(e.fd(fdRW), 0, page, rw, shared)
		if err != nil {
			return 0, err
		}
		defer e.mm().Munmap(b)
		return 0, fn(b)
	}
	rows := []errRow{
		// The offset is checked first (the x86-64 syscall entry), then the fd
		// (ksys_mmap_pgoff's fget, which refuses O_PATH files), then do_mmap.
		{name: "mmap/never-opened", want: unix.EBADF, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdClosed), 0, page, rd, shared) }},
		{name: "mmap/negative fd", want: unix.EBADF, do: func(e errEnv) (int64, error) { return mmap(e, -1, 0, page, rd, shared) }},
		{name: "mmap/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdPath), 0, page, rd, shared) }},
		{name: "mmap/unaligned offset before the fd", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdClosed), 1, page, rd, shared) }},
		{name: "mmap/unaligned offset", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRW), 100, page, rd, shared) }},
		{name: "mmap/no map type", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRW), 0, page, rd, 0) }},
		{name: "mmap/no map type O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdPath), 0, page, rd, 0) }},
		{name: "mmap/map type 0xf", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRW), 0, page, rd, 0xf) }},
		// FMODE_WRITE for a shared writable mapping, then FMODE_READ for any,
		// then the file's mmap operation (none for a directory: ENODEV).
		{name: "mmap/shared writable of O_RDONLY", want: unix.EACCES, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRO), 0, page, rw, shared) }},
		{name: "mmap/shared read-only of O_WRONLY", want: unix.EACCES, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdWO), 0, page, rd, shared) }},
		{name: "mmap/private of O_WRONLY", want: unix.EACCES, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdWO), 0, page, rd, private) }},
		{name: "mmap/private writable of O_RDONLY", ret: page, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRO), 0, page, rw, private) }},
		{name: "mmap/shared writable of O_RDWR", ret: page, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRW), 0, page, rw, shared) }},
		{name: "mmap/dir", want: unix.ENODEV, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdDir), 0, page, rd, shared) }},
		{name: "mmap/dir private", want: unix.ENODEV, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdDir), 0, page, rd, private) }},
		{name: "mmap/dir shared writable", want: unix.EACCES, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdDir), 0, page, rw, shared) }},
		{name: "mmap/past EOF", ret: 4 * page, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRW), 16*page, 4*page, rd, shared) }},
		{name: "mmap/empty file", ret: page, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdEmpty), 0, page, rw, shared) }},
		{name: "mmap/MAP_SHARED_VALIDATE", ret: page, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRW), 0, page, rd, unix.MAP_SHARED_VALIDATE) }},
		{name: "mmap/MAP_SHARED_VALIDATE unknown flag", want: unix.EOPNOTSUPP, do: func(e errEnv) (int64, error) {
			return mmap(e, e.fd(fdRW), 0, page, rd, unix.MAP_SHARED_VALIDATE|0x1000000)
		}},
		{name: "mmap/length 0", want: unix.EINVAL, do: func(e errEnv) (int64, error) { return mmap(e, e.fd(fdRW), 0, 0, rd, shared) }},

		{name: "msync/MS_SYNC|MS_ASYNC", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			return withMap(e, func(b []byte) error { return e.mm().Msync(b, unix.MS_SYNC|unix.MS_ASYNC) })
		}},
		{name: "msync/unknown flag", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			return withMap(e, func(b []byte) error { return e.mm().Msync(b, 0x100) })
		}},
		{name: "msync/no flags", ret: 0, do: func(e errEnv) (int64, error) {
			return withMap(e, func(b []byte) error { return e.mm().Msync(b, 0) })
		}},
		{name: "msync/MS_SYNC", ret: 0, do: func(e errEnv) (int64, error) {
			return withMap(e, func(b []byte) error { return e.mm().Msync(b, unix.MS_SYNC) })
		}},
		{name: "msync/MS_INVALIDATE|MS_ASYNC", ret: 0, do: func(e errEnv) (int64, error) {
			return withMap(e, func(b []byte) error { return e.mm().Msync(b, unix.MS_INVALIDATE|unix.MS_ASYNC) })
		}},
		{name: "msync/unaligned start", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			return withMap(e, func(b []byte) error { return e.mm().Msync(b[1:], unix.MS_SYNC) })
		}},
		{name: "msync/after munmap", want: unix.ENOMEM, do: func(e errEnv) (int64, error) {
			b, err := e.mm().Mmap(e.fd(fdRW), 0, page, rw, shared)
			if err != nil {
				return 0, err
			}
			if err := e.mm().Munmap(b); err != nil {
				return 0, err
			}
			return 0, e.mm().Msync(b, unix.MS_SYNC)
		}},
	}
	runErrRows(t, h, rows)
}

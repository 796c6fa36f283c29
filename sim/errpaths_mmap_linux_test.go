//go:build linux

package sim_test

import (
	"golang.org/x/sys/unix"
)

// sysMM is the mapping part (testdata/errpaths/mmap.txt) of the syscall surface: x/sys/unix's Mmap, Munmap and
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

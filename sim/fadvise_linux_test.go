//go:build linux

package sim

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/vfs"
)

// fadvStep is a posix_fadvise(2) call, or with advice -1 a 4 KiB pread at off.
type fadvStep struct {
	off, n, advice int64
}

// TestFadviseResidentPages runs the same reads and posix_fadvise(2) calls on
// a file of this kernel (in t.TempDir()) and on the time model, and compares
// after each step which pages are in the page cache: mincore(2) of a shared
// mapping on the kernel's side. DONTNEED drops the whole pages of its range
// (a partial page stays, unless it ends the file; len 0 means to the end);
// after RANDOM a read caches only the page it asks for.
func TestFadviseResidentPages(t *testing.T) {
	const pages = 64
	const size = (pages-1)*4096 + 100 // a partial last page
	steps := []fadvStep{
		{4096 + 10, 8 * 4096, fadvDontneed},       // pages 2..8; 1 and 9 partly in the range stay
		{12 * 4096, size - 12*4096, fadvDontneed}, // to EOF: the partial last page goes too
		{0, 0, fadvDontneed},                      // everything
		{0, 0, fadvRandom},
		{0, 4096, -1},
		{40 * 4096, 4096, -1},
		{0, 0, fadvDontneed},
		{0, 0, fadvNormal},
		{5 * 4096, 4096, -1}, // a lone read in the middle: that page only
	}

	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	require.NoError(t, os.WriteFile(path, make([]byte, size), 0o644))
	kfd, err := unix.Open(path, unix.O_RDWR, 0)
	require.NoError(t, err)
	defer unix.Close(kfd)
	require.NoError(t, unix.Fsync(kfd))
	m, err := unix.Mmap(kfd, 0, size, unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(m)
	kernel := func() []bool {
		vec := make([]byte, pages)
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatalf("mincore: %v", e)
		}
		out := make([]bool, pages)
		for i, v := range vec {
			out[i] = v&1 != 0
		}
		return out
	}
	// Every page cached to begin with, on both sides, a page at a time: the
	// kernel caches a large write or a read-ahead window in large folios,
	// which DONTNEED drops only whole (the model's pages are 4 KiB).
	buf := make([]byte, size)
	fill := func(pread func(b []byte, off int64) (int, error), fadvise func(off, n int64, advice int) error) {
		require.NoError(t, fadvise(0, 0, unix.FADV_DONTNEED))
		require.NoError(t, fadvise(0, 0, unix.FADV_RANDOM))
		for off := int64(0); off < size; off += 4096 {
			_, err := pread(buf[:4096], off)
			require.NoError(t, err)
		}
		require.NoError(t, fadvise(0, 0, unix.FADV_NORMAL))
	}
	fill(func(b []byte, off int64) (int, error) { return unix.Pread(kfd, b, off) },
		func(off, n int64, advice int) error { return unix.Fadvise(kfd, off, n, advice) })

	k, p, fd := syncedFile(t, size)
	fill(func(b []byte, off int64) (int, error) { return p.Pread(fd, b, off) },
		func(off, n int64, advice int) error { return p.Fadvise(fd, off, n, advice) })
	it := k.tm.inode(p.Task().files.get(fd).ino)
	model := func() []bool {
		out := make([]bool, pages)
		for i := range out {
			_, out[i] = it.page(int64(i))
		}
		return out
	}
	require.Equal(t, kernel(), model(), "before any advice")
	for _, s := range steps {
		if s.advice < 0 {
			_, err := unix.Pread(kfd, buf[:s.n], s.off)
			require.NoError(t, err)
			_, err = p.Pread(fd, buf[:s.n], s.off)
			require.NoError(t, err)
		} else {
			require.NoError(t, unix.Fadvise(kfd, s.off, s.n, int(s.advice)))
			require.NoError(t, p.Fadvise(fd, s.off, s.n, int(s.advice)))
		}
		require.Equal(t, kernel(), model(), "after %+v", s)
	}
}

// TestFadviseDontneedKeepsDirtyPages: DONTNEED starts the writeback of the
// range's dirty pages and keeps them (they are under writeback), dropping
// the clean ones.
func TestFadviseDontneedKeepsDirtyPages(t *testing.T) {
	k, p, fd := syncedFile(t, 8*4096)
	_, err := p.Pwrite(fd, []byte{1}, 2*4096)
	require.NoError(t, err)
	writes := k.Breakdown().DeviceWrites
	require.NoError(t, p.Fadvise(fd, 0, 0, unix.FADV_DONTNEED))
	require.Equal(t, writes+1, k.Breakdown().DeviceWrites, "the dirty page went to writeback")
	it := k.tm.inode(p.Task().files.get(fd).ino)
	for i := range int64(8) {
		_, ok := it.page(i)
		require.Equal(t, i == 2, ok, "page %d", i)
	}
	require.NoError(t, p.Fadvise(fd, 0, 0, unix.FADV_DONTNEED))
	_, ok := it.page(2)
	require.False(t, ok, "clean now: dropped")
}

// syncedFile returns a kernel with the nvme profile's time model and a process
// holding /f open for reading and writing: size bytes, written and fsynced.
func syncedFile(t *testing.T, size int) (*Kernel, *Process, int) {
	prof, err := device.Lookup("nvme")
	require.NoError(t, err)
	k := New(vfs.New(), WithDevice(prof))
	p := k.Spawn()
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, make([]byte, size))
	require.NoError(t, err)
	require.NoError(t, p.Fsync(fd))
	return k, p, fd
}

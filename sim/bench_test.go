package sim

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/internal/cputime"
	"github.com/iosim/iosim/vfs"
)

// seed000 is the loop of seed 000: open(O_RDONLY), fcntl(F_SETFD, FD_CLOEXEC), then
// lseek+read of 256, 512, 512, 512 bytes at offsets 0, 512, 1024, 39936, then close,
// on a 64 KiB file: 11 calls.
var seed000 = [4]struct {
	off int64
	n   int
}{{0, 256}, {512, 512}, {1024, 512}, {39936, 512}}

const seed000Calls = 11

// unixLike is the part of x/sys/unix the loop uses; the model's Process has it too.
type unixLike interface {
	Open(path string, mode int, perm uint32) (int, error)
	FcntlInt(fd uintptr, cmd, arg int) (int, error)
	Seek(fd int, offset int64, whence int) (int64, error)
	Read(fd int, p []byte) (int, error)
	Close(fd int) error
}

type realUnix struct{}

func (realUnix) Open(path string, mode int, perm uint32) (int, error) {
	return unix.Open(path, mode, perm)
}
func (realUnix) FcntlInt(fd uintptr, cmd, arg int) (int, error) { return unix.FcntlInt(fd, cmd, arg) }
func (realUnix) Seek(fd int, offset int64, whence int) (int64, error) {
	return unix.Seek(fd, offset, whence)
}
func (realUnix) Read(fd int, p []byte) (int, error) { return unix.Read(fd, p) }
func (realUnix) Close(fd int) error                 { return unix.Close(fd) }

func seed000Loop(b *testing.B, u unixLike, path string) {
	buf := make([]byte, 512)
	b.ReportAllocs()
	b.ResetTimer()
	defer cputime.Bench(b, seed000Calls, "cpu-ns/call")()
	for b.Loop() {
		fd, err := u.Open(path, unix.O_RDONLY, 0)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := u.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC); err != nil {
			b.Fatal(err)
		}
		for _, s := range seed000 {
			if _, err := u.Seek(fd, s.off, 0); err != nil {
				b.Fatal(err)
			}
			if n, err := u.Read(fd, buf[:s.n]); err != nil || n != s.n {
				b.Fatal(n, err)
			}
		}
		if err := u.Close(fd); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/seed000Calls, "ns/call")
}

// BenchmarkSeed000Loop runs the seed-000 loop on the model's facade, on the real
// kernel (tmpfs, /dev/shm) and on afero's MemMapFs.
func BenchmarkSeed000Loop(b *testing.B) {
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.Run("model", func(b *testing.B) {
		fs := vfs.New()
		k := New(fs)
		p := k.Spawn()
		fd, err := p.Open("/seed000.dat", unix.O_CREAT|unix.O_WRONLY, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := p.Write(fd, data); err != nil {
			b.Fatal(err)
		}
		p.Close(fd)
		seed000Loop(b, p, "/seed000.dat")
	})
	b.Run("kernel-tmpfs", func(b *testing.B) {
		dir, err := os.MkdirTemp("/dev/shm", "iosim-bench")
		if err != nil {
			b.Skip("no /dev/shm:", err)
		}
		defer os.RemoveAll(dir)
		path := filepath.Join(dir, "seed000.dat")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		seed000Loop(b, realUnix{}, path)
	})
	b.Run("afero-memmapfs", func(b *testing.B) {
		fs := afero.NewMemMapFs()
		if err := afero.WriteFile(fs, "/seed000.dat", data, 0o644); err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 512)
		b.ReportAllocs()
		b.ResetTimer()
		defer cputime.Bench(b, seed000Calls, "cpu-ns/call")()
		for b.Loop() {
			f, err := fs.OpenFile("/seed000.dat", os.O_RDONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			// afero has no fcntl: the F_SETFD call is counted but costs nothing.
			for _, s := range seed000 {
				if _, err := f.Seek(s.off, 0); err != nil {
					b.Fatal(err)
				}
				if n, err := f.Read(buf[:s.n]); err != nil || n != s.n {
					b.Fatal(n, err)
				}
			}
			f.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/seed000Calls, "ns/call")
	})
}

package sim_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// copier is what the copy tests need of the kernel and of the model.
type copier interface {
	Open(path string, mode int, perm uint32) (int, error)
	Write(fd int, b []byte) (int, error)
	Pread(fd int, b []byte, off int64) (int, error)
	Seek(fd int, off int64, whence int) (int64, error)
	CopyFileRange(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error)
	Sendfile(outfd int, infd int, offset *int64, count int) (int, error)
}

// realKernel runs the calls on this machine's kernel, paths under dir.
type realKernel struct{ dir string }

func (r realKernel) Open(p string, mode int, perm uint32) (int, error) {
	return unix.Open(filepath.Join(r.dir, p), mode, perm)
}
func (realKernel) Write(fd int, b []byte) (int, error)            { return unix.Write(fd, b) }
func (realKernel) Pread(fd int, b []byte, off int64) (int, error) { return unix.Pread(fd, b, off) }
func (realKernel) Seek(fd int, off int64, whence int) (int64, error) {
	return unix.Seek(fd, off, whence)
}
func (realKernel) Sendfile(o, i int, off *int64, n int) (int, error) {
	return unix.Sendfile(o, i, off, n)
}
func (realKernel) CopyFileRange(a int, ao *int64, b int, bo *int64, n, f int) (int, error) {
	return unix.CopyFileRange(a, ao, b, bo, n, f)
}

type result struct {
	n   int
	err error
	off int64
}

// copyScript runs the same copy_file_range/sendfile sequence and returns every
// result, the offsets it leaves and the bytes of the files.
func copyScript(t *testing.T, s copier) []any {
	t.Helper()
	var out []any
	open := func(p string, mode int) int {
		fd, err := s.Open(p, mode, 0o644)
		require.NoError(t, err, p)
		return fd
	}
	a := open("a", unix.O_RDWR|unix.O_CREAT)
	_, err := s.Write(a, []byte("hello world\n"))
	require.NoError(t, err)
	b := open("b", unix.O_RDWR|unix.O_CREAT)
	ap := open("c", unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND)
	ro := open("b", unix.O_RDONLY)
	d := open(".", unix.O_RDONLY)
	wo := open("a", unix.O_WRONLY)
	cfr := func(in int, inOff *int64, o int, outOff *int64, n, flags int) {
		k, err := s.CopyFileRange(in, inOff, o, outOff, n, flags)
		var off int64 = -2
		if inOff != nil {
			off = *inOff
		}
		out = append(out, result{k, err, off})
	}
	off := func(v int64) *int64 { return &v }
	cfr(a, off(0), ap, nil, 5, 0)
	cfr(a, off(0), ro, nil, 5, 0)
	cfr(wo, off(0), b, nil, 5, 0)
	cfr(d, nil, b, nil, 5, 0)
	cfr(a, off(0), d, nil, 5, 0)
	cfr(a, off(0), b, nil, 5, 1)
	cfr(a, off(-1), b, nil, 5, 0)
	cfr(a, off(0), b, nil, 100, 0)
	cfr(a, nil, b, nil, 100, 0) // a's offset is at its end
	cfr(a, off(0), a, off(2), 5, 0)
	cfr(a, off(0), a, off(6), 5, 0)
	cfr(a, off(3), b, off(20), 4, 0) // leaves a hole in b
	cfr(99, nil, b, nil, 5, 0)
	_, err = s.Seek(a, 0, 0)
	require.NoError(t, err)
	sf := func(o, i int, p *int64, n int) {
		k, err := s.Sendfile(o, i, p, n)
		var v int64 = -2
		if p != nil {
			v = *p
		}
		out = append(out, result{k, err, v})
	}
	sf(b, a, nil, 5)
	sf(b, a, off(1), 5)
	sf(ap, a, off(1), 5)
	sf(b, d, nil, 5)
	sf(d, a, nil, 5)
	pos, err := s.Seek(a, 0, 1)
	require.NoError(t, err)
	out = append(out, pos)
	for _, fd := range []int{a, b} {
		buf := make([]byte, 64)
		n, err := s.Pread(fd, buf, 0)
		require.NoError(t, err)
		out = append(out, string(buf[:n]))
	}
	return out
}

// TestCopyMatchesKernel runs copy_file_range and sendfile, errors included, on the
// kernel here and on the model, and requires the same results and file contents.
func TestCopyMatchesKernel(t *testing.T) {
	dir := t.TempDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skip(err)
	}
	want := copyScript(t, realKernel{dir})
	p := sim.New(vfs.New()).Spawn()
	got := copyScript(t, p)
	require.Equal(t, want, got)
	t.Logf("%v", want)
}

package sim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// zeroCopier is what TestCopyWrittenZerosMatchesKernel needs of the kernel
// and of the model.
type zeroCopier interface {
	Open(path string, mode int, perm uint32) (int, error)
	Pwrite(fd int, b []byte, off int64) (int, error)
	Pread(fd int, b []byte, off int64) (int, error)
	Seek(fd int, off int64, whence int) (int64, error)
	Fstat(fd int, st *unix.Stat_t) error
	Fsync(fd int) error
	CopyFileRange(rfd int, roff *int64, wfd int, woff *int64, n int, flags int) (int, error)
}

type zeroKernel struct{ realKernel }

func (z zeroKernel) Open(p string, mode int, perm uint32) (int, error) {
	return unix.Open(filepath.Join(z.dir, p), mode, perm)
}
func (zeroKernel) Pwrite(fd int, b []byte, off int64) (int, error) { return unix.Pwrite(fd, b, off) }
func (zeroKernel) Fstat(fd int, st *unix.Stat_t) error             { return unix.Fstat(fd, st) }
func (zeroKernel) Fsync(fd int) error                              { return unix.Fsync(fd) }

// TestCopyWrittenZerosMatchesKernel: copy_file_range from a file of data,
// written zeros (whole and partial blocks: no buffer in the model) and holes
// over a file of data: the destination's size, st_blocks, SEEK_DATA/SEEK_HOLE
// segments and bytes are the kernel's, before and after fsync (ext4 copies
// through the page cache: what the source reads, zeros included, is written).
func TestCopyWrittenZerosMatchesKernel(t *testing.T) {
	const B = 4096
	script := func(s zeroCopier) []string {
		open := func(p string) int {
			fd, err := s.Open(p, unix.O_RDWR|unix.O_CREAT, 0o644)
			require.NoError(t, err, p)
			return fd
		}
		src, dst := open("src"), open("dst")
		pw := func(fd int, c byte, off, n int64) {
			_, err := s.Pwrite(fd, []byte(strings.Repeat(string(c), int(n))), off)
			require.NoError(t, err)
		}
		pw(dst, 'x', 0, 10*B)
		pw(src, 'a', 0, B)
		pw(src, 'b', B, 2*B)
		pw(src, 0, B, 2*B)       // zeros over data
		pw(src, 'c', 5*B, B)     // 3B..5B: a hole
		pw(src, 0, 5*B+100, 100) // partial zeros into data
		pw(src, 0, 6*B+100, 100) // partial zeros past EOF
		require.NoError(t, s.Fsync(dst))
		var out []string
		state := func(fd int, label string) { out = append(out, label+": "+shiftState(t, s, fd)) }
		state(src, "src")
		in, to := int64(0), int64(B+512)
		n, err := s.CopyFileRange(src, &in, dst, &to, 7*B, 0)
		out = append(out, fmt.Sprintf("copy: %d %v", n, err))
		state(dst, "dst")
		require.NoError(t, s.Fsync(dst))
		state(dst, "dst after fsync")
		in, to = B, 12*B // past dst's end: a hole before
		n, err = s.CopyFileRange(src, &in, dst, &to, 4*B, 0)
		out = append(out, fmt.Sprintf("copy: %d %v", n, err))
		require.NoError(t, s.Fsync(dst))
		state(dst, "dst extended")
		return out
	}
	want := script(zeroKernel{realKernel{t.TempDir()}})
	got := script(sim.New(vfs.New()).Spawn())
	require.Equal(t, want, got, "kernel (expected) vs model")
}

//go:build linux

package sim_test

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// fileState is what shiftState reads of a file, on the kernel or the model.
type fileState interface {
	Fstat(fd int, st *unix.Stat_t) error
	Seek(fd int, off int64, whence int) (int64, error)
	Pread(fd int, p []byte, off int64) (int, error)
}

// shiftState describes a file as a program can see it: size, st_blocks, the
// SEEK_DATA/SEEK_HOLE map and a hash of its bytes.
func shiftState(t *testing.T, s fileState, fd int) string {
	var st unix.Stat_t
	require.NoError(t, s.Fstat(fd, &st))
	var segs []string
	for off := int64(0); off < st.Size; {
		d, err := s.Seek(fd, off, unix.SEEK_DATA)
		if err != nil {
			segs = append(segs, "data:"+errName(err))
			break
		}
		h, err := s.Seek(fd, d, unix.SEEK_HOLE)
		require.NoError(t, err)
		segs = append(segs, fmt.Sprintf("%d-%d", d, h))
		off = h
	}
	b := make([]byte, st.Size+10)
	n, err := s.Pread(fd, b, 0)
	require.NoError(t, err)
	return fmt.Sprintf("size %d blocks %d data [%s] bytes %x", st.Size, st.Blocks, strings.Join(segs, " "), sha256.Sum256(b[:n]))
}

// TestFallocateShiftDiff: FALLOC_FL_COLLAPSE_RANGE and FALLOC_FL_INSERT_RANGE
// on the kernel and on the model, from files of written, delayed, unwritten
// (cached or not) blocks and holes: the call's answer, then size, st_blocks,
// SEEK_DATA/SEEK_HOLE and bytes, and the same after an fsync.
func TestFallocateShiftDiff(t *testing.T) {
	const B = 4096
	blk := func(c byte) []byte { return []byte(strings.Repeat(string(c), B)) }
	type step func(s sys, fd int) error
	write := func(off int64, c byte) step {
		return func(s sys, fd int) error { _, err := s.Pwrite(fd, blk(c), off); return err }
	}
	sync := func(s sys, fd int) error { return s.Fsync(fd) }
	falloc := func(mode uint32, off, n int64) step {
		return func(s sys, fd int) error { return s.Fallocate(fd, mode, off, n) }
	}
	read := func(off int64) step {
		return func(s sys, fd int) error { _, err := s.Pread(fd, make([]byte, B), off); return err }
	}
	five := []step{write(0, 'a'), write(B, 'b'), write(2*B, 'c'), write(3*B, 'd'), write(4*B, 'e')}
	sparse := []step{write(0, 'a'), write(3*B, 'd'), write(6*B, 'g'), falloc(0, 8*B, 2*B), write(12*B, 'm')}
	collapse, insert := uint32(unix.FALLOC_FL_COLLAPSE_RANGE), uint32(unix.FALLOC_FL_INSERT_RANGE)
	// many: 40 blocks, every other one written, across two 32-block chunks
	// of the model and more extents than the inode holds
	var many []step
	for b := int64(0); b < 80; b += 2 {
		many = append(many, write(b*B, byte('A'+b%26)))
	}
	// zeros: 40 blocks written across two chunks, most of them zeros
	var zeros []step
	for b := int64(0); b < 40; b++ {
		c := byte(0)
		if b%7 == 3 {
			c = byte('a' + b%26)
		}
		zeros = append(zeros, write(b*B, c))
	}
	both := func(a, b step) step {
		return func(s sys, fd int) error {
			if err := a(s, fd); err != nil {
				return err
			}
			return b(s, fd)
		}
	}
	cases := []struct {
		name  string
		setup []step
		op    step
	}{
		{"collapse/synced", append(append([]step{}, five...), sync), falloc(collapse, B, 2*B)},
		{"collapse/delayed", five, falloc(collapse, B, 2*B)},
		{"collapse/first blocks", five, falloc(collapse, 0, B)},
		{"collapse/sparse", sparse, falloc(collapse, 2*B, 3*B)},
		{"collapse/over unwritten", sparse, falloc(collapse, 8*B, B)},
		{"collapse/cached unwritten after", append(append([]step{}, sparse...), read(9*B)), falloc(collapse, B, B)},
		{"collapse/partial last block", []step{write(0, 'a'), write(B, 'b'), func(s sys, fd int) error { return s.Ftruncate(fd, 2*B+100) }}, falloc(collapse, 0, B)},
		{"collapse/to EOF", five, falloc(collapse, 3*B, 2*B)},
		{"collapse/past EOF", five, falloc(collapse, 4*B, 2*B)},
		{"collapse/misaligned offset", five, falloc(collapse, 100, B)},
		{"collapse/misaligned length", five, falloc(collapse, 0, 100)},
		{"collapse/with KEEP_SIZE", five, falloc(collapse|unix.FALLOC_FL_KEEP_SIZE, 0, B)},
		{"insert/synced", append(append([]step{}, five...), sync), falloc(insert, B, 2*B)},
		{"insert/delayed", five, falloc(insert, 2*B, B)},
		{"insert/at 0", five, falloc(insert, 0, B)},
		{"insert/sparse", sparse, falloc(insert, 3*B, 2*B)},
		{"insert/in a hole", sparse, falloc(insert, B, B)},
		{"insert/at EOF", five, falloc(insert, 5*B, B)},
		{"insert/misaligned", five, falloc(insert, B, 100)},
		{"insert/past the largest size", five, falloc(insert, 0, 1<<44-4*B)},
		{"insert/with PUNCH_HOLE", five, falloc(insert|unix.FALLOC_FL_PUNCH_HOLE, 0, B)},
		{"collapse/many extents across chunks", many, falloc(collapse, 29*B, 5*B)},
		{"collapse/many extents synced", append(append([]step{}, many...), sync), falloc(collapse, B, 40*B)},
		{"insert/many extents across chunks", many, falloc(insert, 30*B, 3*B)},
		{"insert then collapse", append(append([]step{}, many...), sync), both(falloc(insert, 10*B, 7*B), falloc(collapse, 10*B, 7*B))},
		// written zeros (data without a buffer in the model) move as data
		{"collapse/written zeros", zeros, falloc(collapse, 2*B, 3*B)},
		{"collapse/written zeros synced", append(append([]step{}, zeros...), sync), falloc(collapse, B, 30*B)},
		{"insert/written zeros", zeros, falloc(insert, 3*B, 2*B)},
		{"insert/written zeros synced", append(append([]step{}, zeros...), sync), falloc(insert, 31*B, 3*B)},
	}
	h := newHost(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := h.newPair(t)
			defer p.done()
			var got [2][]string
			for k, s := range []sys{p.m, p.k} {
				fd, err := s.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
				require.NoError(t, err)
				require.NoError(t, s.Fadvise(fd, 0, 0, unix.FADV_RANDOM)) // no readahead (see CacheUnwritten)
				for _, st := range tc.setup {
					require.NoError(t, st(s, fd))
				}
				err = tc.op(s, fd)
				got[k] = append(got[k], "op: "+errName(err), shiftState(t, s, fd))
				require.NoError(t, s.Fsync(fd))
				got[k] = append(got[k], "after fsync: "+shiftState(t, s, fd))
			}
			require.Equal(t, got[1], got[0], "kernel (expected) vs model")
		})
	}
}

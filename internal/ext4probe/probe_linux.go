//go:build linux

// Package ext4probe asks the host's ext4 what the model's st_blocks rules
// cannot know in advance, for the tests that compare the model with the
// kernel.
//
// The model charges ext4's one-leaf extent tree as ext4_ext_try_to_merge_up
// describes it: a leaf is taken when a file needs more than four extents, and
// an insertion that leaves at most four pulls the tree back into the inode.
// Whether that merge-up happens when writeback inserts an extent depends on
// how the host's ext4 inserts it (with dioread_nolock, writeback inserts an
// unwritten extent without merging and merges at its conversion; kernels and
// mount options differ), so the tests ask the host first and state which
// answer they assume.
package ext4probe

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// MergesUpAtWriteback reports whether ext4 in dir gives a file's one-leaf
// extent tree back to the inode when writeback inserts an extent that leaves
// four: five one-block extents (a leaf), two punched out, one more written
// and synced. It answers from st_blocks: 32 sectors (four data blocks) when
// the tree went back to the inode, 40 (and a leaf) when it did not.
func MergesUpAtWriteback(dir string) (bool, error) {
	d, err := os.MkdirTemp(dir, "ext4probe-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(d)
	fd, err := unix.Open(filepath.Join(d, "f"), unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	block := make([]byte, 4096)
	for i := range block {
		block[i] = 'x'
	}
	for _, b := range []int64{0, 2, 4, 6, 8} {
		if _, err := unix.Pwrite(fd, block, b*4096); err != nil {
			return false, err
		}
	}
	if err := unix.Fsync(fd); err != nil {
		return false, err
	}
	for _, b := range []int64{8, 6} {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, b*4096, 4096); err != nil {
			return false, err
		}
	}
	if _, err := unix.Pwrite(fd, block, 12*4096); err != nil {
		return false, err
	}
	if err := unix.Fsync(fd); err != nil {
		return false, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return false, err
	}
	return st.Blocks == 32, nil
}

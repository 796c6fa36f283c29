//go:build linux

// Package ext4host finds out, on the machine the tests run on, the facts about
// its ext4 that decide st_blocks but that the kernel's version does not fix,
// so that a test comparing the model with the kernel states what it assumes
// and holds on any ext4 host.
//
// One such fact is known: whether ext4 pulls a one-leaf extent tree back into
// the inode when an insertion or conversion leaves at most 4 extents
// (ext4_ext_try_to_merge_up, which gives up when it cannot get what it needs
// and then keeps the leaf). Upstream ext4 does; some hosts' ext4 does not
// (seen on Linux 6.18 mounted with the non-upstream option resv_strict: a
// fresh file system on the same kernel without it pulls the leaf back in,
// with or without a journal or discard). The model follows upstream; on a
// host that keeps the leaf, a kernel comparison may see exactly one leaf more
// than the model, and only where the model pulled it back in.
package ext4host

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Facts are what Probe found out about one ext4 file system.
type Facts struct {
	// KeepsLeaf is true if ext4 keeps a one-leaf extent tree where upstream
	// ext4 pulls it back into the inode.
	KeepsLeaf bool
}

// String says what the facts mean, for a test's log.
func (f Facts) String() string {
	if f.KeepsLeaf {
		return "this ext4 keeps a one-leaf extent tree where upstream ext4 pulls it back into the inode (st_blocks compared allowing that leaf)"
	}
	return "this ext4 pulls a one-leaf extent tree back into the inode as upstream ext4 does (st_blocks compared exactly)"
}

// Probe runs, in a fresh file in dir (on ext4 with 4 KiB blocks), five
// one-block writes at blocks 0, 2, 4, 6 and 8, fsync (five extents: a leaf,
// st_blocks 48), punches blocks 8 and 6 (three extents, the leaf kept: 32),
// and a fallocate(FALLOC_FL_KEEP_SIZE) of block 10: upstream ext4 inserts a
// fourth extent and pulls the tree back into the inode (32); a host that keeps
// the leaf shows 40. Any other answer is an error naming the step.
func Probe(dir string) (Facts, error) {
	const bs = 4096
	f, err := os.CreateTemp(dir, "ext4host-")
	if err != nil {
		return Facts{}, err
	}
	defer os.Remove(f.Name())
	defer f.Close()
	fd := int(f.Fd())
	var steps []string
	blocks := func(step string, want ...int64) (int64, error) {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return 0, err
		}
		steps = append(steps, fmt.Sprintf("%s: %d", step, st.Blocks))
		for _, w := range want {
			if st.Blocks == w {
				return st.Blocks, nil
			}
		}
		return 0, fmt.Errorf("ext4host: probe in %s: st_blocks %d after %s, want one of %v (steps: %s)",
			filepath.Dir(f.Name()), st.Blocks, step, want, strings.Join(steps, "; "))
	}
	buf := make([]byte, bs)
	for b := int64(0); b <= 8; b += 2 {
		if _, err := unix.Pwrite(fd, buf, b*bs); err != nil {
			return Facts{}, err
		}
	}
	if err := unix.Fsync(fd); err != nil {
		return Facts{}, err
	}
	if _, err := blocks("five extents written back", 48); err != nil {
		return Facts{}, err
	}
	for _, b := range []int64{8, 6} {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, b*bs, bs); err != nil {
			return Facts{}, err
		}
	}
	if _, err := blocks("two punched", 32); err != nil {
		return Facts{}, err
	}
	if err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 10*bs, bs); err != nil {
		return Facts{}, err
	}
	n, err := blocks("a fourth extent allocated", 32, 40)
	if err != nil {
		return Facts{}, err
	}
	return Facts{KeepsLeaf: n == 40}, nil
}

// TreeAgrees reports whether the kernel's extent-tree blocks (kernelTree, in
// file-system blocks: st_blocks minus the data blocks FIEMAP maps, over 8)
// agree with the model's (modelTree) on a host with these facts. They agree if
// they are equal; on a host that keeps the leaf, also if the kernel holds one
// leaf where the model holds none and the kernel's file has at most 4 extents
// (kernelExtents, from FIEMAP): a leaf upstream ext4 would have pulled back
// into the inode. No history is asked for, because such a leaf can come from
// a peak inside one call that the model need not track (a conversion that
// splits an unwritten extent to five and merges back to four, which upstream
// ext4 settles at once). On such a host the comparison cannot tell that leaf
// from a leaf the model forgot after a removal; upstream hosts compare
// exactly.
func (f Facts) TreeAgrees(kernelTree, modelTree int64, kernelExtents int) bool {
	if kernelTree == modelTree {
		return true
	}
	return f.KeepsLeaf && modelTree == 0 && kernelTree == 1 && kernelExtents <= 4
}

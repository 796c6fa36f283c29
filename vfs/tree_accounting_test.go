package vfs_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// fiveExtents writes one block at blocks 0, 2, 4, 6 and 8 of f: five
// extents once written back, so ext4's extent tree takes a leaf block.
func fiveExtents(t *testing.T, f *vfs.Inode) {
	t.Helper()
	for b := int64(0); b < 10; b += 2 {
		write(t, f, "x", b*4096)
	}
}

// TestCapacityCountsTreeBlocksOfWriteback: the extent-tree leaf that
// writeback gives a file counts against WithCapacity like any block, and
// freeing it gives back exactly that: cycles of write, fsync and truncate to
// 0 leave the free space as it was, so ENOSPC comes at the capacity.
func TestCapacityCountsTreeBlocksOfWriteback(t *testing.T) {
	fs := vfs.New(vfs.WithCapacity(64 * kib))
	f := create(t, fs.Root(), "f")
	for range 5 {
		fiveExtents(t, f)
		require.NoError(t, f.Fsync(nil))
		var st vfs.Stat
		f.Stat(&st)
		require.Equal(t, int64(48), st.Blocks, "five blocks and a leaf")
		require.NoError(t, f.Truncate(0))
	}
	buf := make([]byte, 4096)
	var written int64
	for {
		_, err := f.WriteAt(buf, written)
		if err != nil {
			require.Equal(t, unix.ENOSPC, err)
			break
		}
		written += 4096
		require.LessOrEqual(t, written, 64*kib, "more room than the capacity")
	}
	require.Equal(t, 64*kib, written)
}

// TestCrashKeepsTreeLeafAfterPunch: a crash state has the extent tree the
// durable file has. Five extents made durable take a leaf block; a punch
// made durable afterwards keeps it (ext4 frees a leaf only when the tree is
// empty), so the crash state's st_blocks are the live file's.
func TestCrashKeepsTreeLeafAfterPunch(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	fiveExtents(t, f)
	require.NoError(t, f.Fsync(nil))
	require.NoError(t, r.Fsync(nil))
	require.NoError(t, f.Fallocate(vfs.FallocPunchHole|vfs.FallocKeepSize, 8*4096, 4096))
	require.NoError(t, f.Fsync(nil))
	var live, crashed vfs.Stat
	f.Stat(&live)
	require.Equal(t, int64(40), live.Blocks, "four blocks and the leaf")
	mustResolve(t, fs.Crash().Root(), "f").Stat(&crashed)
	require.Equal(t, live.Size, crashed.Size)
	require.Equal(t, live.Blocks, crashed.Blocks)
}

// TestFdatasyncRangeCommitsDiskSize: FdatasyncRange (msync's fdatasync of a
// range) makes durable the blocks of its range and the size ext4 has on
// disk then (i_disksize: up to the end of what writeback has mapped), not
// the blocks outside the range nor the size they extend to.
func TestFdatasyncRangeCommitsDiskSize(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	require.NoError(t, r.Fsync(nil))
	write(t, f, strings.Repeat("a", 4096)+strings.Repeat("b", 4096)+"c", 0)
	require.NoError(t, f.Kernel().FdatasyncRange(0, 4096, nil))
	require.Equal(t, map[string]string{"/f": "file:" + strings.Repeat("a", 4096)}, snapshot(t, fs.Crash()))
	require.NoError(t, f.Kernel().FdatasyncRange(4096, 4096, nil))
	require.Equal(t, map[string]string{"/f": "file:" + strings.Repeat("a", 4096) + strings.Repeat("b", 4096)}, snapshot(t, fs.Crash()))
	require.NoError(t, f.Fdatasync(nil))
	require.Equal(t, map[string]string{"/f": "file:" + strings.Repeat("a", 4096) + strings.Repeat("b", 4096) + "c"}, snapshot(t, fs.Crash()))
}

// TestFdatasyncRangeToTheEnd: a range whose end is past MaxInt64 reaches to
// the end of the file, as vfs_fsync_range(file, off, LLONG_MAX) does.
func TestFdatasyncRangeToTheEnd(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	require.NoError(t, r.Fsync(nil))
	write(t, f, strings.Repeat("a", 8192), 0)
	require.NoError(t, f.Kernel().FdatasyncRange(4096, math.MaxInt64, nil))
	require.NoError(t, f.Kernel().FdatasyncRange(0, 4096, nil))
	require.Equal(t, map[string]string{"/f": "file:" + strings.Repeat("a", 8192)}, snapshot(t, fs.Crash()))
}

// TestReleaseOnlyFlushesDelayedBlocks: auto_da_alloc's flush at the release
// after a truncate to 0 (ext4_alloc_da_blocks) writes back only an inode
// with delayed blocks. A file that has no data at all, and one whose dirty
// data is all over an unwritten extent, are left as they are: the latter's
// block stays unwritten in the tree, so st_blocks after a writeback of its
// own is what ext4 shows (sim's TestExtentTreeBlocks compares the kernel).
func TestReleaseOnlyFlushesDelayedBlocks(t *testing.T) {
	fs := vfs.New()
	empty := create(t, fs.Root(), "empty")
	require.NoError(t, empty.Truncate(0))
	empty.Kernel().Release() // no data: nothing to look at

	f := create(t, fs.Root(), "f")
	require.NoError(t, f.Truncate(0)) // sets the release's flag
	require.NoError(t, f.Fallocate(vfs.FallocKeepSize, 0, 4096))
	write(t, f, strings.Repeat("x", 3000), 0) // over the unwritten block: not delayed
	f.Kernel().Release()
	// a failing O_DIRECT write at 1024 still extends past i_disksize (0):
	// nothing mapped the block at the release
	require.True(t, f.Kernel().FlushForDirectWrite(1024, 511))

	g := create(t, fs.Root(), "g")
	require.NoError(t, g.Truncate(0))
	write(t, g, strings.Repeat("x", 3000), 0) // a delayed block
	g.Kernel().Release()
	require.False(t, g.Kernel().FlushForDirectWrite(1024, 511), "the release wrote back block 0: i_disksize is 3000")
}

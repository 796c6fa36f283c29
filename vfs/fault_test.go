package vfs_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// TestRulesParse: vfs rules take the vfs operation names and reject what a vfs
// cannot do (fds, zero-byte transfers); the text prints back as given.
func TestRulesParse(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{in: "write=EIO"},
		{in: "writeback@/db/*.log#nth=3=EIO;read#every=2=short:100"},
		{in: "*#after=5#p=0.25=ENOSPC"},
		{in: "fsync=delay:1.5ms"},
		{in: "read|write@/c=corrupt"},
		{in: "pread64=EIO", err: "unknown operation"},
		{in: "write@fd:3=EIO", err: "no fds"},
		{in: "write=short:0", err: "at least one byte"},
		{in: "write=EIO;zz=EIO", err: "column 11"},
	} {
		rs, err := vfs.ParseRules(7, c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.in, rs.String())
	}
	require.Equal(t, "writeback", vfs.OpWriteback.String())
}

// fires returns, for n matching operations, which ones the rules fail.
func fires(t *testing.T, text string, n int) []int {
	rs, err := vfs.ParseRules(42, text)
	require.NoError(t, err)
	var out []int
	for k := 1; k <= n; k++ {
		if rs.Inject(vfs.OpWrite, "/f").Errno != 0 {
			out = append(out, k)
		}
	}
	return out
}

func TestRuleTriggers(t *testing.T) {
	require.Equal(t, []int{3}, fires(t, "write#nth=3=EIO", 10))
	require.Equal(t, []int{3, 6, 9}, fires(t, "write#every=3=EIO", 10))
	require.Equal(t, []int{8, 9, 10}, fires(t, "write#after=7=EIO", 10))
	require.Equal(t, []int{8, 10}, fires(t, "write#after=7#every=2=EIO", 10), "triggers combine with AND")
	require.Equal(t, []int{1, 2, 3}, fires(t, "*=EIO", 3))
	require.Empty(t, fires(t, "read=EIO", 5))
	require.Empty(t, fires(t, "write@/g*=EIO", 5))
	require.Equal(t, []int{2}, fires(t, "write@/f#nth=2=EIO", 5))
	require.Equal(t, []int{2}, fires(t, "write@f#nth=2=EIO", 5), "a glob without '/' matches the base name")
	// Probability: seeded, so reproducible; roughly the rate asked.
	a, b := fires(t, "write#p=0.3=EIO", 1000), fires(t, "write#p=0.3=EIO", 1000)
	require.Equal(t, a, b)
	require.InDelta(t, 300, len(a), 60)
	// The first rule that fires decides; every matching rule counts the operation,
	// also one an earlier rule decided.
	rs, err := vfs.ParseRules(1, "write#nth=2=EIO;write#every=2=ENOSPC")
	require.NoError(t, err)
	var got []unix.Errno
	for range 4 {
		got = append(got, rs.Inject(vfs.OpWrite, "/x").Errno)
	}
	require.Equal(t, []unix.Errno{0, unix.EIO, 0, unix.ENOSPC}, got)
	require.Equal(t, []int64{1, 1}, rs.Fired())
}

func TestFaultEffects(t *testing.T) {
	rules, err := vfs.ParseRules(1, "write@/short=short:3;read@/short=short:2;read@/corrupt=corrupt;"+
		"create@/ro/*=EROFS;write@/quota=EDQUOT;mkdir@/nomk=EIO;"+
		"fsync@/fs#nth=1=EIO;truncate@/fs=EFBIG;rename@/fs=EXDEV")
	require.NoError(t, err)
	fs := vfs.New(vfs.WithFaults(rules))
	r := fs.Root()

	s := create(t, r, "short")
	n, err := s.WriteAt([]byte("abcdef"), 0)
	require.NoError(t, err)
	require.Equal(t, 3, n, "short write")
	require.Equal(t, int64(3), s.Size())
	b := make([]byte, 10)
	n, err = s.ReadAt(b, 0)
	require.NoError(t, err)
	require.Equal(t, 2, n, "short read")
	require.Equal(t, "ab", string(b[:n]))

	c := create(t, r, "corrupt")
	write(t, c, "data", 0)
	n, err = c.ReadAt(b, 0)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.NotEqual(t, "data", string(b[:n]))

	require.NoError(t, r.Mkdir("ro", 0o755))
	_, _, err = r.Open("ro/x", unix.O_CREAT|unix.O_WRONLY, 0o644)
	require.Equal(t, unix.EROFS, err)

	q := create(t, r, "quota")
	_, err = q.WriteAt([]byte("x"), 0)
	require.Equal(t, unix.EDQUOT, err)
	require.Equal(t, unix.EIO, r.Mkdir("nomk", 0o755))

	f := create(t, r, "fs")
	write(t, f, "x", 0)
	require.Equal(t, unix.EIO, f.Fsync(nil))
	require.NoError(t, f.Fsync(nil))
	require.Equal(t, unix.EFBIG, f.Truncate(0))
	require.Equal(t, unix.EXDEV, r.Rename("fs", r, "fs2", 0))

	// SetInjector replaces the rules.
	fs.SetInjector(nil)
	_, err = q.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
}

// TestCapacityENOSPC: WithCapacity limits the allocated blocks.
func TestCapacityENOSPC(t *testing.T) {
	fs := vfs.New(vfs.WithCapacity(64 * kib))
	f := create(t, fs.Root(), "f")
	buf := make([]byte, 4096)
	var written int64
	for {
		_, err := f.WriteAt(buf, written)
		if err != nil {
			require.Equal(t, unix.ENOSPC, err)
			break
		}
		written += 4096
		require.LessOrEqual(t, written, 64*kib)
	}
	require.Equal(t, written, f.Size(), "a failed write changes nothing")
	require.Equal(t, unix.ENOSPC, f.Fallocate(0, written, 4096))
	// Overwrites need no new block; freeing makes room.
	_, err := f.WriteAt(buf, 0)
	require.NoError(t, err)
	require.NoError(t, f.Fallocate(vfs.FallocPunchHole|vfs.FallocKeepSize, 0, 8192))
	_, err = f.WriteAt(buf, written)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(0))
	_, err = f.WriteAt(make([]byte, 32*kib), 0)
	require.NoError(t, err)
	// A sparse write far away needs one block, not the gap.
	_, err = f.WriteAt([]byte("x"), 1<<40)
	require.NoError(t, err)
}

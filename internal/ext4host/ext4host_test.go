//go:build linux

package ext4host

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestTreeAgrees(t *testing.T) {
	upstream, keeps := Facts{}, Facts{KeepsLeaf: true}
	for _, c := range []struct {
		name                string
		kernel, model       int64
		extents             int
		upstreamOK, keepsOK bool
	}{
		{"equal, no tree", 0, 0, 3, true, true},
		{"equal, one leaf", 1, 1, 7, true, true},
		{"leaf kept where upstream merges up", 1, 0, 4, false, true},
		{"leaf with five extents is no kept leaf", 1, 0, 5, false, false},
		{"two blocks more", 2, 0, 4, false, false},
		{"kernel holds less", 0, 1, 4, false, false},
		{"model holds a leaf too", 2, 1, 4, false, false},
	} {
		require.Equal(t, c.upstreamOK, upstream.TreeAgrees(c.kernel, c.model, c.extents), "%s, upstream", c.name)
		require.Equal(t, c.keepsOK, keeps.TreeAgrees(c.kernel, c.model, c.extents), "%s, keeps the leaf", c.name)
	}
}

// TestProbe runs the probe where the test's temporary directory is on ext4
// with 4 KiB blocks: it must give one of its two answers.
func TestProbe(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	require.NoError(t, unix.Statfs(dir, &st))
	if st.Type != unix.EXT4_SUPER_MAGIC || st.Bsize != 4096 {
		t.Skipf("%s is not ext4 with 4 KiB blocks", dir)
	}
	f, err := Probe(dir)
	require.NoError(t, err)
	t.Log(f)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the probe removes its file")
}

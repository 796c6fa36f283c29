package vfs

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMknodSurvivesCrash: a FIFO and a device node made by Mknod keep their
// type and st_rdev in a crash state once their directory is synced, and are
// gone from one taken before.
func TestMknodSurvivesCrash(t *testing.T) {
	fs := New()
	root := fs.Root()
	require.NoError(t, root.Mknod("fifo", S_IFIFO, 0o640, 0))
	require.NoError(t, root.Mknod("null", S_IFCHR, 0o666, 1<<8|3))
	require.Equal(t, EEXIST, root.Mknod("fifo", S_IFIFO, 0o640, 0))
	require.Equal(t, EPERM, root.Mknod("d", S_IFDIR, 0o755, 0))
	require.Equal(t, EINVAL, root.Mknod("x", 0o170000, 0o755, 0))

	before := fs.Crash()
	_, err := before.Root().Resolve("fifo", false)
	require.Equal(t, ENOENT, err)

	require.NoError(t, root.Fsync(nil))
	after := fs.Crash()
	for _, c := range []struct {
		name string
		mode uint32
		rdev uint64
	}{{"fifo", S_IFIFO | 0o640, 0}, {"null", S_IFCHR | 0o666, 1<<8 | 3}} {
		ino, err := after.Root().Resolve(c.name, false)
		require.NoError(t, err, c.name)
		var st Stat
		ino.Stat(&st)
		require.Equal(t, c.mode, st.Mode, c.name)
		require.Equal(t, c.rdev, st.Rdev, c.name)
		require.Zero(t, st.Size, c.name)
	}
	ents, err := after.Root().Dirents()
	require.NoError(t, err)
	types := map[string]uint8{}
	for _, e := range ents {
		types[e.Name] = e.Type
	}
	require.Equal(t, uint8(DT_FIFO), types["fifo"])
	require.Equal(t, uint8(DT_CHR), types["null"])
}

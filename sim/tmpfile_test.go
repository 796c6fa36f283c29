package sim_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestTmpfileDurability: an O_TMPFILE file has no name, so a power loss
// loses it whatever was synced of it, until a name that a synced directory
// holds refers to it (the rule for any new name: fsync(2), "Calling fsync()
// does not necessarily ensure that the entry in the directory containing
// the file has also reached disk"). Its synced data then comes with it, and
// in every crash state of the pending changes it is whole or absent.
func TestTmpfileDurability(t *testing.T) {
	fs := vfs.New()
	p := sim.New(fs).Spawn()
	require.NoError(t, p.Mkdir("/d", 0o755))
	root, err := p.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	require.NoError(t, p.Fsync(root))
	dir, err := p.Open("/d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	require.NoError(t, p.Fsync(dir))
	fd, err := p.Open("/d", unix.O_TMPFILE|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, []byte("payload"))
	require.NoError(t, err)
	require.NoError(t, p.Fsync(fd))
	names := func(c *vfs.FS) []string {
		f, err := c.Open("/d")
		require.NoError(t, err)
		n, err := f.Readdirnames(-1)
		require.NoError(t, err)
		return n
	}
	require.Empty(t, names(fs.Crash()), "synced, but unnamed")

	require.NoError(t, p.Linkat(fd, "", unix.AT_FDCWD, "/d/file", unix.AT_EMPTY_PATH))
	require.Empty(t, names(fs.Crash()), "named, but the directory not synced")
	for _, st := range crashStates(t, fs) {
		if f, err := st.Open("/d/file"); err == nil {
			b, err := io.ReadAll(f)
			require.NoError(t, err)
			require.Equal(t, "payload", string(b), "a crash state with the name has the synced data")
		}
	}

	require.NoError(t, p.Fsync(dir))
	c := fs.Crash()
	require.Equal(t, []string{"file"}, names(c))
	f, err := c.Open("/d/file")
	require.NoError(t, err)
	b, err := io.ReadAll(f)
	require.NoError(t, err)
	require.Equal(t, "payload", string(b))

	// an O_EXCL one is never named, and never in any crash state
	ex, err := p.Open("/d", unix.O_TMPFILE|unix.O_RDWR|unix.O_EXCL, 0o644)
	require.NoError(t, err)
	_, err = p.Write(ex, []byte("x"))
	require.NoError(t, err)
	require.Equal(t, unix.ENOENT, p.Linkat(ex, "", unix.AT_FDCWD, "/d/ex", unix.AT_EMPTY_PATH))
	require.NoError(t, p.Fsync(ex))
	require.NoError(t, p.Fsync(dir))
	require.Equal(t, []string{"file"}, names(fs.Crash()))
}

// crashStates returns the crash states that keep each one of the pending
// changes alone.
func crashStates(t *testing.T, fs *vfs.FS) []*vfs.FS {
	pend := fs.Pending()
	require.NotEmpty(t, pend)
	var out []*vfs.FS
	for i := range pend {
		keep := make([]vfs.Survival, len(pend))
		keep[i].Keep = true
		c, err := fs.CrashWith(keep)
		require.NoError(t, err)
		out = append(out, c)
	}
	return out
}

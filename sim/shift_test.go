package sim_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestShiftDurability: a collapse or insert is a change of the extent tree
// and the size, pending until an fsync: a crash before it finds the file
// as it was synced, one after it the moved data.
func TestShiftDurability(t *testing.T) {
	for _, mode := range []uint32{unix.FALLOC_FL_COLLAPSE_RANGE, unix.FALLOC_FL_INSERT_RANGE} {
		fs := vfs.New()
		p := sim.New(fs).Spawn()
		fd, err := p.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
		require.NoError(t, err)
		var want []byte
		for _, c := range "abc" {
			want = append(want, bytes.Repeat([]byte{byte(c)}, 4096)...)
		}
		_, err = p.Pwrite(fd, want, 0)
		require.NoError(t, err)
		require.NoError(t, p.Fsync(fd))
		root, err := p.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		require.NoError(t, p.Fsync(root))
		content := func(c *vfs.FS) []byte {
			f, err := c.Open("/f")
			require.NoError(t, err)
			b, err := io.ReadAll(f)
			require.NoError(t, err)
			return b
		}
		require.NoError(t, p.Fallocate(fd, mode, 4096, 4096))
		require.Equal(t, want, content(fs.Crash()), "mode %#x: not synced", mode)
		require.NoError(t, p.Fsync(fd))
		moved := append(append([]byte{}, want[:4096]...), want[8192:]...)
		if mode == unix.FALLOC_FL_INSERT_RANGE {
			moved = append(append(append([]byte{}, want[:4096]...), make([]byte, 4096)...), want[4096:]...)
		}
		require.Equal(t, moved, content(fs.Crash()), "mode %#x: synced", mode)
	}
}

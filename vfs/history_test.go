package vfs_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/vfs"
)

// With WithHistory a block and a size changed by two calls are two changes
// each: a state that keeps the first and loses the second holds the values
// between the two calls; without it, one change each, and losing it goes
// back to the durable values.
func TestHistoryKeepsEarlierValues(t *testing.T) {
	for _, history := range []bool{false, true} {
		fs := vfs.New(vfs.WithHistory(history))
		f := create(t, fs.Root(), "/f")
		write(t, f, "oooo", 0)
		require.NoError(t, fs.Sync())
		write(t, f, "A", 0)     // block 0, first
		write(t, f, "g", 4096)  // size 4097, first
		write(t, f, "B", 0)     // block 0, second
		write(t, f, "h", 8192)  // size 8193, second
		var writes, sizes []int // indexes of block 0's writes, of the sizes
		pend := fs.Pending()
		for k, p := range pend {
			switch {
			case p.Kind == vfs.PendingWrite && p.Off == 0:
				writes = append(writes, k)
			case p.Kind == vfs.PendingSize:
				sizes = append(sizes, k)
			}
		}
		if !history {
			require.Len(t, writes, 1)
			require.Len(t, sizes, 1)
			continue
		}
		require.Len(t, writes, 2)
		require.Len(t, sizes, 2)
		require.Equal(t, int64(4097), pend[sizes[0]].Size)
		require.Equal(t, int64(8193), pend[sizes[1]].Size)
		keep := keepAll(len(pend))
		keep[writes[1]], keep[sizes[1]] = vfs.Survival{}, vfs.Survival{}
		c, err := fs.CrashWith(keep)
		require.NoError(t, err)
		got := snapshot(t, c)["/f"]
		require.Len(t, got, len("file:")+4097)
		require.Equal(t, "file:Aooo", got[:9])
		// the earlier values are gone once written back
		require.NoError(t, fs.Sync())
		require.Empty(t, fs.Pending())
		write(t, f, "C", 0)
		require.Len(t, fs.Pending(), 2) // block 0 once, and the times
	}
}

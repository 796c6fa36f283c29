package interposer

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// TestFdSlotsFollowTable fails when a layer's notion of which argument of a call
// is its fd disagrees with the syscall table, for any row: the fd the fault layer
// matches and names a path by (fdArg) is the row's first ArgFd slot; the fds the
// file cache checks for hidden and virtual descriptions (fdArgs) are its ArgFd
// slots and its ArgDirfd slots whose path is relative; the calls the cache
// handles as fd-table calls are the rows that say they change the fd table.
func TestFdSlotsFollowTable(t *testing.T) {
	for _, in := range sim.Syscalls() {
		for _, rel := range []bool{true, false} {
			c := sim.Call{Nr: in.Nr, Path: "/p", Path2: "/p2"}
			if rel {
				c.Path, c.Path2 = "p", ""
			}
			for i := range c.Args {
				c.Args[i] = int64(i+1) << 8 // no MAP_ANONYMOUS bit in mmap's flags
			}
			var want []int
			for i, a := range in.Args {
				if a.Kind == sim.ArgFd || a.Kind == sim.ArgDirfd && rel {
					want = append(want, i)
				}
			}
			a, b := fdArgs(&c)
			var got []int
			for _, i := range []int{a, b} {
				if i >= 0 {
					got = append(got, i)
				}
			}
			require.Equal(t, want, got, "%s: the file cache's fd slots (relative paths: %v)", in.Name, rel)

			fd, ok := fdArg(&c)
			if i := in.Slot(sim.ArgFd, 0); i >= 0 {
				require.True(t, ok, in.Name)
				require.Equal(t, int(c.Args[i]), fd, "%s: the fault layer's fd", in.Name)
			} else {
				require.False(t, ok, "%s: the fault layer sees an fd the table does not", in.Name)
			}
		}
	}
	// An anonymous mapping has no file: its fd argument is ignored.
	anon := sim.Call{Nr: sim.SYS_MMAP, Args: [6]int64{0, 4096, unix.PROT_READ, unix.MAP_PRIVATE | unix.MAP_ANONYMOUS, 3, 0}}
	_, ok := fdArg(&anon)
	require.False(t, ok)
	a, b := fdArgs(&anon)
	require.Equal(t, [2]int{-1, -1}, [2]int{a, b})

	opens := []sim.Sysno{sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT, sim.SYS_OPENAT2} // FileCache.open
	for _, in := range sim.Syscalls() {
		if !in.Modelled {
			continue
		}
		changes := in.Props&(sim.FdTable|sim.ClosesFd|sim.Lifecycle|sim.SetsNofile|sim.NewFds) != 0
		switch in.Ret {
		case sim.RetFd, sim.RetNewFd, sim.RetFdOrValue:
			changes = true
		}
		if slices.Contains(opens, in.Nr) {
			require.Nil(t, fdHandlerOf[in.Nr], in.Name)
			continue
		}
		require.Equal(t, changes, fdHandlerOf[in.Nr] != nil,
			"%s: the file cache's fd-table handling disagrees with the row's props and result", in.Name)
	}
}

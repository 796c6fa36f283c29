package interposer

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestFileCacheExitReleasesDescriptions: a process that ends — by exit_group,
// or by exit(2) of its last thread — gives back its references to the served
// descriptions it shared with its parent by fork, and the cache forgets it:
// the parent, alone again on each description, gets the sole thread's path
// back (refs 1), and no state of the dead process stays behind.
func TestFileCacheExitReleasesDescriptions(t *testing.T) {
	for _, how := range []string{"exit_group", "exit of the last thread", "exit of each of two threads"} {
		k := sim.New(vfs.New())
		p := k.Spawn()
		fd, err := p.Open("/f", unix.O_CREAT|unix.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = p.Write(fd, []byte("some bytes to serve"))
		require.NoError(t, err)
		require.NoError(t, p.Close(fd))

		fc := NewFileCache(k, "/f")
		q := p.Through(fc)
		first, err := q.Open("/f", unix.O_RDONLY, 0) // learnt
		require.NoError(t, err)
		v, err := q.Open("/f", unix.O_RDONLY, 0) // served
		require.NoError(t, err)
		o := fc.procs[p.Task().Group()].slots[v].v
		require.NotNil(t, o, "fd %d is virtual", v)
		child := q.Fork()
		require.EqualValues(t, 2, o.refs, "%s: the child shares the description", how)
		switch how {
		case "exit_group":
			child.Exit()
		case "exit of the last thread":
			child.Syscall(sim.Call{Nr: sim.SYS_EXIT})
		default:
			th := child.NewThread()
			require.NotNil(t, th)
			th.Syscall(sim.Call{Nr: sim.SYS_EXIT})
			require.EqualValues(t, 2, o.refs, "%s: the process lives on", how)
			child.Syscall(sim.Call{Nr: sim.SYS_EXIT})
		}
		require.True(t, child.Task().Exited())
		require.EqualValues(t, 1, o.refs, "%s: the parent holds the description alone", how)
		require.NotContains(t, fc.procs, child.Task().Group(), "%s: the dead process is forgotten", how)
		buf := make([]byte, 4)
		n, err := q.Read(v, buf)
		require.NoError(t, err)
		require.Equal(t, "some", string(buf[:n]))
		require.NoError(t, q.Close(v))
		require.NoError(t, q.Close(first))
	}
}

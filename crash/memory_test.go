package crash

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// entries counts what the explorer keeps between crash points.
func (e *Explorer) entries() map[string]int {
	n := 0
	for _, ps := range e.promises {
		n += len(ps)
	}
	return map[string]int{
		"ops": len(e.ops), "pinned": len(e.pinned), "promises": n, "names": len(e.names),
		"replaces": len(e.replaces), "truncCloses": len(e.truncCloses), "verdicts": len(e.verdicts),
		"dataHash": len(e.dataHash), "aio": len(e.aioSync) + len(e.aioCount), "pending": len(e.fs.Pending()),
	}
}

// What the explorer keeps stays flat over a long run (files made, written and
// removed, a file replaced by rename, one file written and fdatasynced, the
// directory fsynced now and then), however many calls it records.
func TestMemoryFlat(t *testing.T) {
	e, env, err := newFuncExplorer(Options{}, setupRandom)
	require.NoError(t, err)
	p := env.Proc
	// the most of each count in each third of the run
	var at [3]map[string]int
	for i := range memIters {
		name := fmt.Sprintf("/d/t%d", i%7)
		fd, err := p.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
		require.NoError(t, err)
		_, err = p.Write(fd, []byte(name))
		require.NoError(t, err)
		require.NoError(t, p.Close(fd))
		switch i % 3 {
		case 0:
			require.NoError(t, p.Unlink(name))
		case 1:
			require.NoError(t, p.Rename(name, "/d/current"))
		case 2:
			fd, err := p.Open("/a", unix.O_WRONLY, 0)
			require.NoError(t, err)
			_, err = p.Pwrite(fd, []byte{byte(i)}, int64(i%4096))
			require.NoError(t, err)
			require.NoError(t, p.Fdatasync(fd))
			require.NoError(t, p.Close(fd))
			if i%12 == 2 {
				// what is in flight stays bounded (vfs keeps every change
				// a crash could lose, of removed files too, until a sync)
				p.Sync()
			}
		}
		third := i * 3 / memIters
		if at[third] == nil {
			at[third] = map[string]int{}
		}
		for k, n := range e.entries() {
			at[third][k] = max(at[third][k], n)
		}
	}
	rep := e.Finish()
	require.Greater(t, rep.CrashPoints, 3*memIters)
	for k, n := range at[0] {
		slack := 2
		if k == "ops" {
			slack = 64 // calls are forgotten in batches
		}
		require.LessOrEqual(t, at[1][k], n+slack, "%s: %v", k, at)
		require.LessOrEqual(t, at[2][k], n+slack, "%s: %v", k, at)
	}
	require.Less(t, at[2]["ops"], 200, "%v", at)
}

var memIters = 450

package vfs

import (
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExploreHooks(t *testing.T) {
	fs := New()
	root := fs.Root()
	s0 := fs.Seq()
	old, _, err := root.Open("/old", syscall.O_CREAT|syscall.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = old.WriteAt([]byte("before the trace"), 0)
	require.NoError(t, err)
	require.Greater(t, fs.Seq(), s0, "changes move Seq")

	mine, _, err := root.Open("/mine", syscall.O_CREAT|syscall.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = mine.WriteAt([]byte("the program's"), 0)
	require.NoError(t, err)
	require.True(t, old.InFlight())
	require.True(t, mine.InFlight())

	// Settle makes /old durable as if it had been there before; /mine stays pending.
	fs.Settle(old)
	require.False(t, old.InFlight())
	require.True(t, mine.InFlight())
	c := fs.Crash()
	got, err := c.Root().Resolve("/old", true)
	require.NoError(t, err)
	b := make([]byte, 64)
	n, _ := got.ReadAt(b, 0)
	require.Equal(t, "before the trace", string(b[:n]))
	_, err = c.Root().Resolve("/mine", true)
	require.Equal(t, ENOENT, err)
	for _, p := range fs.Pending() {
		if p.Kind == PendingAttr && p.Ino == root.Ino() {
			continue // the root's times, changed by both creations
		}
		require.Equal(t, mine.Ino(), p.Ino, "only the program's changes are pending: %v", p)
	}

	// CrashFrom builds from an earlier list while nothing changed, and refuses after a change.
	seq, pend := fs.Seq(), fs.Pending()
	keep := make([]Survival, len(pend))
	for k := range keep {
		keep[k].Keep = true
	}
	c, err = fs.CrashFrom(pend, seq, keep)
	require.NoError(t, err)
	_, err = c.Root().Resolve("/mine", true)
	require.NoError(t, err)
	_, err = fs.CrashFrom(pend, seq, keep[:len(keep)-1])
	require.Error(t, err)
	_, err = mine.WriteAt([]byte("!"), 100)
	require.NoError(t, err)
	_, err = fs.CrashFrom(pend, seq, keep)
	require.Error(t, err)
}

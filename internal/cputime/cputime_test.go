package cputime_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/internal/cputime"
)

// TestThreadCounts: busy work shows as CPU time, a sleep hardly does.
func TestThreadCounts(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := cputime.Thread()
	x := 0
	for start := cputime.Thread(); cputime.Thread()-start < 20*time.Millisecond; {
		x++
	}
	busy := cputime.Thread() - t0
	require.GreaterOrEqual(t, busy, 20*time.Millisecond)
	t1 := cputime.Thread()
	time.Sleep(50 * time.Millisecond)
	require.Less(t, cputime.Thread()-t1, 25*time.Millisecond, "a sleep is not CPU time")
	require.Positive(t, x)
}

// TestProcessCountsEveryThread: the busy work of two goroutines on threads of
// their own both show in the process's CPU time.
func TestProcessCountsEveryThread(t *testing.T) {
	p0 := cputime.Process()
	done := make(chan time.Duration)
	for range 2 {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start := cputime.Thread()
			for cputime.Thread()-start < 20*time.Millisecond {
			}
			done <- cputime.Thread() - start
		}()
	}
	busy := <-done + <-done
	require.GreaterOrEqual(t, cputime.Process()-p0, busy)
}

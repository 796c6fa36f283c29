package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
)

// The run queue places work in the idle time of the processor that finishes
// it first, after work placed before it.
func TestRunQueuePlacement(t *testing.T) {
	rq := runQueue{cpus: make([][]busy, 1)}
	require.Equal(t, int64(10), rq.run(0, 10, 0))    // idle: at once
	require.Equal(t, int64(20), rq.run(5, 10, 0))    // waits 5 behind the first
	require.Equal(t, int64(130), rq.run(100, 30, 0)) // idle again at 100
	// Work arriving at 20 fills the gap [20, 100) first, then runs after 130.
	require.Equal(t, int64(150), rq.run(20, 100, 0))
	two := runQueue{cpus: make([][]busy, 2)}
	require.Equal(t, int64(10), two.run(0, 10, 0))
	require.Equal(t, int64(10), two.run(0, 10, 0), "the second processor is idle")
	require.Equal(t, int64(20), two.run(0, 10, 0))
	// Intervals that end by the floor are forgotten.
	require.Equal(t, int64(1010), two.run(1000, 10, 500))
	require.LessOrEqual(t, len(two.cpus[0])+len(two.cpus[1]), 2)
}

// Spend and calls wait for a processor when cpu.cores are all busy.
func TestRunQueueCores(t *testing.T) {
	run := func(cores int) (int64, int64) {
		k, a := timedKernel(t, "hdd-7200", func(p *device.Profile) { p.CPU.Cores = cores })
		b := k.Spawn()
		a.Task().Spend(1) // both threads have run: they compete from now on
		b.Task().Spend(1)
		a.Task().Spend(1000)
		b.Task().Spend(1000)
		return b.Task().Now(), k.Breakdown().RunQueue
	}
	now, wait := run(1)
	require.Equal(t, int64(2001), now)
	require.Equal(t, int64(1000), wait)
	now, wait = run(2)
	require.Equal(t, int64(1001), now, "a processor each")
	require.Zero(t, wait)
	now, wait = run(0)
	require.Equal(t, int64(1001), now)
	require.Zero(t, wait)
}

// A page-cache read copies at memory speed what the device has just read or
// what has left the CPU's cache, at cache speed what the CPU copied recently.
func TestCopyFromCacheColdAndHot(t *testing.T) {
	k, p := timedKernel(t, "hdd-7200", nil)
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	const n = 64 << 10
	_, err = p.Pwrite(fd, make([]byte, 4<<20), 0)
	require.NoError(t, err)
	c := k.tm.p.CPU
	copyOf := func(off int64) int64 {
		before := k.Breakdown().Copy
		_, err := p.Pread(fd, make([]byte, n), off)
		require.NoError(t, err)
		return k.Breakdown().Copy - before
	}
	hot := copyOf(0) // written a moment ago: in the cache
	require.InEpsilon(t, float64(n)*1e3/c.CopyMBs, float64(hot), 0.01)
	// 4 MiB copied since (more than the 2 MiB cache): out of it.
	_, err = p.Pread(fd, make([]byte, 4<<20), 0)
	require.NoError(t, err)
	_, err = p.Pread(fd, make([]byte, 2<<20), 2<<20)
	require.NoError(t, err)
	_, err = p.Pread(fd, make([]byte, 2<<20), 2<<20)
	require.NoError(t, err)
	cold := copyOf(0)
	require.InEpsilon(t, float64(n)*1e3/c.MemCopyMBs, float64(cold), 0.01)
	require.Equal(t, hot, copyOf(0), "read again at once: back in the cache")
}

//go:build linux

package sim_test

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// possibleCPUs reads num_possible_cpus() from /sys (a range "0-N" or "0").
func possibleCPUs(t *testing.T) int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		t.Skip(err)
	}
	s := strings.TrimSpace(string(b))
	if strings.Contains(s, ",") {
		t.Skipf("possible CPUs %q: not a single range", s)
	}
	_, hi, _ := strings.Cut(s, "-")
	if hi == "" {
		return 1
	}
	n, err := strconv.Atoi(hi)
	require.NoError(t, err)
	return n + 1
}

// TestAIORingSize: how many iocbs a context of io_setup(nr) holds before
// io_submit fails with EAGAIN (completed, not reaped), and to what its ring
// clamps one io_submit's nr, on the kernel and on the model (sized for this
// machine's possible CPUs). Submitted from one CPU: the kernel hands out
// request slots to CPUs in batches.
func TestAIORingSize(t *testing.T) {
	cpus := possibleCPUs(t)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var set unix.CPUSet
	set.Set(0)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	h := newHost(t)
	p := h.newPair(t)
	defer p.done()
	model := sim.New(vfs.New(), sim.WithPossibleCPUs(cpus)).Spawn()
	mfd, err := model.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
	require.NoError(t, err)
	kfd, err := p.k.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
	require.NoError(t, err)
	for _, s := range []sysAIO{model, p.k} {
		_, err := s.(sys).Pwrite(map[bool]int{true: mfd, false: kfd}[s == sysAIO(model)], make([]byte, 100), 0)
		require.NoError(t, err)
	}
	// accepted submits one read at a time until EAGAIN; clamp submits
	// 10000 at once into a fresh context.
	accepted := func(s sysAIO, fd, nr int) (int, int) {
		ctx, err := s.IoSetup(nr)
		require.NoError(t, err)
		n := 0
		for ; n < 10000; n++ {
			got, err := s.IoSubmit(ctx, []*sim.Iocb{{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 1)}})
			if err == unix.EAGAIN {
				break
			}
			require.NoError(t, err)
			require.Equal(t, 1, got)
		}
		require.NoError(t, s.IoDestroy(ctx))
		ctx, err = s.IoSetup(nr)
		require.NoError(t, err)
		cbs := make([]*sim.Iocb, 10000)
		for i := range cbs {
			cbs[i] = &sim.Iocb{Opcode: sim.IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 1)}
		}
		clamp, err := s.IoSubmit(ctx, cbs)
		require.NoError(t, err)
		require.NoError(t, s.IoDestroy(ctx))
		return n, clamp
	}
	for _, nr := range []int{1, 4, 6, 100, 500, 2000} {
		ka, kc := accepted(p.k, kfd, nr)
		ma, mc := accepted(model, mfd, nr)
		require.Equal(t, ka, ma, "io_setup(%d): iocbs accepted", nr)
		require.Equal(t, kc, mc, "io_setup(%d): one io_submit's iocbs", nr)
		require.Greater(t, ka, nr, "io_setup(%d) holds more than nr_events", nr)
		t.Logf("io_setup(%d): %d iocbs held, %d in one io_submit", nr, ka, kc)
	}
}

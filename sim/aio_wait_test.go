package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestIoGeteventsWaits: io_getevents returns at most nr events, at once when
// min_nr are there, and otherwise after its timeout (on the virtual clock).
func TestIoGeteventsWaits(t *testing.T) {
	k := sim.New(vfs.New(), sim.WithCostModel(sim.ConstantCost(0)))
	p := k.Spawn()
	fd, err := p.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
	require.NoError(t, err)
	ctx, err := p.IoSetup(4)
	require.NoError(t, err)
	var cbs []*sim.Iocb
	for i := range 3 {
		cbs = append(cbs, &sim.Iocb{Data: uint64(i), Opcode: sim.IOCB_CMD_PWRITE, Fd: uint32(fd), Buf: []byte("ab"), Offset: int64(2 * i)})
	}
	n, err := p.IoSubmit(ctx, cbs)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	evs := make([]sim.IoEvent, 8)
	ms := &unix.Timespec{Nsec: 1e6}
	t0 := k.Now()
	n, err = p.IoGetevents(ctx, 1, 2, evs, ms)
	require.NoError(t, err)
	require.Equal(t, 2, n, "nr bounds the events")
	require.Equal(t, t0, k.Now(), "min_nr were there: no wait")
	n, err = p.IoGetevents(ctx, 2, 8, evs, ms)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, t0+1e6, k.Now(), "fewer than min_nr: the timeout")
	n, err = p.IoGetevents(ctx, 0, 8, evs, ms)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	require.Equal(t, t0+1e6, k.Now(), "min_nr 0: no wait")
}

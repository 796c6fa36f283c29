//go:build linux

package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// sysRWF is preadv2/pwritev2 (testdata/errpaths/rwf.txt), implemented by *sim.Process and by osKernel.
type sysRWF interface {
	Preadv2(fd int, iovs [][]byte, offset int64, flags int) (int, error)
	Pwritev2(fd int, iovs [][]byte, offset int64, flags int) (int, error)
}

var (
	_ sysRWF = (*sim.Process)(nil)
	_ sysRWF = (*osKernel)(nil)
)

func (k *osKernel) Preadv2(fd int, iovs [][]byte, offset int64, flags int) (int, error) {
	return unix.Preadv2(k.fd(fd), iovs, offset, flags)
}

func (k *osKernel) Pwritev2(fd int, iovs [][]byte, offset int64, flags int) (int, error) {
	return unix.Pwritev2(k.fd(fd), iovs, offset, flags)
}

// TestPwritev2DsyncIsDurable: a pwritev2 with RWF_DSYNC (or RWF_SYNC) survives a
// crash once it returns, as a write on an O_DSYNC descriptor does; without the
// flag the bytes are in the page cache only.
func TestPwritev2DsyncIsDurable(t *testing.T) {
	for _, c := range []struct {
		name    string
		flags   int
		durable bool
	}{{"none", 0, false}, {"RWF_DSYNC", unix.RWF_DSYNC, true}, {"RWF_SYNC", unix.RWF_SYNC, true}} {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.New()
			p := sim.New(fs).Spawn()
			fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
			require.NoError(t, err)
			require.NoError(t, p.Fsync(fd))
			d, err := p.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
			require.NoError(t, err)
			require.NoError(t, p.Fsync(d)) // the name is durable
			n, err := p.Pwritev2(fd, [][]byte{[]byte("acked")}, 0, c.flags)
			require.NoError(t, err)
			require.Equal(t, 5, n)

			q := sim.New(fs.Crash()).Spawn()
			rfd, err := q.Open("/f", unix.O_RDONLY, 0)
			require.NoError(t, err)
			buf := make([]byte, 16)
			got, err := q.Read(rfd, buf)
			require.NoError(t, err)
			if c.durable {
				require.Equal(t, "acked", string(buf[:got]))
			} else {
				require.Zero(t, got)
			}
		})
	}
}

//go:build linux

package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"iosim/sim"
	"iosim/vfs"
)

// sysRWF is preadv2/pwritev2, implemented by *sim.Process and by osKernel.
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

// TestErrorPathsRWF runs preadv2 and pwritev2 with RWF_* flags on the kernel and
// on the model from setupErrpaths' state. Rows that write return
// n<<40 | st_size<<20 | the fd's offset afterwards, so that where the bytes went
// is compared too.
func TestErrorPathsRWF(t *testing.T) {
	h := newHost(t)
	b10 := func() [][]byte { return [][]byte{make([]byte, 10)} }
	empty := [][]byte{{}}
	rd := func(fd int, off int64, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) {
			n, err := e.s.(sysRWF).Preadv2(e.fd(fd), b10(), off, flags)
			return int64(n), err
		}
	}
	// wr writes 10 bytes and reports where they went (see above); with
	// appendFd it writes through a new O_APPEND description of /f.
	wr := func(appendFd bool, off int64, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) {
			fd := e.fd(fdRW)
			if appendFd {
				var err error
				if fd, err = e.s.Open("/f", unix.O_RDWR|unix.O_APPEND, 0); err != nil {
					return 0, err
				}
			}
			n, err := e.s.(sysRWF).Pwritev2(fd, b10(), off, flags)
			if err != nil {
				return int64(n), err
			}
			var st unix.Stat_t
			if err := e.s.Fstat(fd, &st); err != nil {
				return 0, err
			}
			pos, err := e.s.Seek(fd, 0, unix.SEEK_CUR)
			return int64(n)<<40 | st.Size<<20 | pos, err
		}
	}
	at := func(n, size, pos int64) int64 { return n<<40 | size<<20 | pos }
	rows := []errRow{
		{name: "preadv2/no flags", ret: 10, do: rd(fdRW, 0, 0)},
		{name: "preadv2/RWF_HIPRI", ret: 10, do: rd(fdRW, 0, unix.RWF_HIPRI)},
		{name: "preadv2/RWF_DSYNC", ret: 10, do: rd(fdRW, 0, unix.RWF_DSYNC)},
		{name: "preadv2/RWF_NOWAIT", ret: 10, do: rd(fdRW, 0, unix.RWF_NOWAIT)},
		{name: "preadv2/RWF_APPEND", ret: 10, do: rd(fdRW, 0, unix.RWF_APPEND)},
		{name: "preadv2/RWF_ATOMIC", want: unix.EOPNOTSUPP, do: rd(fdRW, 0, 0x40)},
		{name: "preadv2/RWF_DONTCACHE", ret: 10, do: rd(fdRW, 0, 0x80)},
		{name: "preadv2/unknown flag", want: unix.EOPNOTSUPP, do: rd(fdRW, 0, 1<<30)},
		{name: "preadv2/RWF_APPEND|RWF_NOAPPEND", want: unix.EINVAL, do: rd(fdRW, 0, unix.RWF_APPEND|0x20)},
		{name: "preadv2/unknown flag, offset -2", want: unix.EINVAL, do: rd(fdRW, -2, 1<<30)},
		{name: "preadv2/unknown flag, O_WRONLY", want: unix.EBADF, do: rd(fdWO, 0, 1<<30)},
		{name: "preadv2/unknown flag, no bytes", ret: 0, do: func(e errEnv) (int64, error) {
			n, err := e.s.(sysRWF).Preadv2(e.fd(fdRW), empty, 0, 1<<30)
			return int64(n), err
		}},
		{name: "preadv2/offset -1 reads at the file offset", ret: 10<<20 | 10, do: func(e errEnv) (int64, error) {
			n, err := e.s.(sysRWF).Preadv2(e.fd(fdRW), b10(), -1, unix.RWF_HIPRI)
			if err != nil {
				return 0, err
			}
			pos, err := e.s.Seek(e.fd(fdRW), 0, unix.SEEK_CUR)
			return int64(n)<<20 | pos, err
		}},
		// A directory has no read_iter: do_loop_readv_writev allows RWF_HIPRI only.
		{name: "preadv2/dir", want: unix.EISDIR, do: rd(fdDir, 0, 0)},
		{name: "preadv2/dir RWF_HIPRI", want: unix.EISDIR, do: rd(fdDir, 0, unix.RWF_HIPRI)},
		{name: "preadv2/dir RWF_DSYNC", want: unix.EOPNOTSUPP, do: rd(fdDir, 0, unix.RWF_DSYNC)},
		{name: "preadv2/dir unknown flag", want: unix.EOPNOTSUPP, do: rd(fdDir, 0, 1<<30)},

		{name: "pwritev2/no flags", ret: at(10, 5000, 0), do: wr(false, 0, 0)},
		{name: "pwritev2/RWF_DSYNC", ret: at(10, 5000, 0), do: wr(false, 0, unix.RWF_DSYNC)},
		{name: "pwritev2/RWF_SYNC", ret: at(10, 5000, 0), do: wr(false, 0, unix.RWF_SYNC)},
		{name: "pwritev2/RWF_NOWAIT buffered", want: unix.EOPNOTSUPP, do: wr(false, 0, unix.RWF_NOWAIT)},
		{name: "pwritev2/RWF_ATOMIC", want: unix.EOPNOTSUPP, do: wr(false, 0, 0x40)},
		{name: "pwritev2/RWF_DONTCACHE", ret: at(10, 5000, 0), do: wr(false, 0, 0x80)},
		{name: "pwritev2/unknown flag", want: unix.EOPNOTSUPP, do: wr(false, 0, 1<<30)},
		{name: "pwritev2/RWF_APPEND|RWF_NOAPPEND", want: unix.EINVAL, do: wr(false, 0, unix.RWF_APPEND|0x20)},
		{name: "pwritev2/unknown flag, O_RDONLY", want: unix.EBADF, do: func(e errEnv) (int64, error) {
			n, err := e.s.(sysRWF).Pwritev2(e.fd(fdRO), b10(), 0, 1<<30)
			return int64(n), err
		}},
		{name: "pwritev2/unknown flag, no bytes", ret: 0, do: func(e errEnv) (int64, error) {
			n, err := e.s.(sysRWF).Pwritev2(e.fd(fdRW), empty, 0, 1<<30)
			return int64(n), err
		}},
		// RWF_APPEND writes at the end of file; a positional write leaves the
		// file offset, one at offset -1 moves it to the new end.
		{name: "pwritev2/RWF_APPEND at 0", ret: at(10, 5010, 0), do: wr(false, 0, unix.RWF_APPEND)},
		{name: "pwritev2/RWF_APPEND at the file offset", ret: at(10, 5010, 5010), do: wr(false, -1, unix.RWF_APPEND)},
		{name: "pwritev2/at the file offset", ret: at(10, 5000, 10), do: wr(false, -1, 0)},
		// O_APPEND appends even pwritev2's positional writes; RWF_NOAPPEND
		// writes where asked.
		{name: "pwritev2/O_APPEND at 0", ret: at(10, 5010, 0), do: wr(true, 0, 0)},
		{name: "pwritev2/O_APPEND RWF_NOAPPEND at 0", ret: at(10, 5000, 0), do: wr(true, 0, 0x20)},
		{name: "pwritev2/O_APPEND RWF_NOAPPEND at the file offset", ret: at(10, 5000, 10), do: wr(true, -1, 0x20)},
		{name: "pwritev2/O_APPEND at the file offset", ret: at(10, 5010, 5010), do: wr(true, -1, 0)},
	}
	runErrRows(t, h, rows)
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

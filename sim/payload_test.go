package sim_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// payloadRun makes the same writes (write, pwrite, pwritev, an O_DIRECT
// pwrite, an io_submit) under the nvme profile, as a payload-free process or
// not, and returns what the process reads back, its stat and its clock.
func payloadRun(t *testing.T, free bool) (got []byte, st unix.Stat_t, now int64) {
	prof, err := device.Lookup("nvme")
	require.NoError(t, err)
	k := sim.New(vfs.New(), sim.WithDevice(prof))
	p := k.Spawn()
	p.Task().Group().SetPayloadFree(free)
	require.Equal(t, free, p.Task().Group().PayloadFree())
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	data := bytes.Repeat([]byte("payload!"), 1024) // 8 KiB
	_, err = p.Write(fd, data[:100])
	require.NoError(t, err)
	_, err = p.Pwrite(fd, data, 4096)
	require.NoError(t, err)
	_, err = p.Pwritev(fd, [][]byte{data[:10], data[:4096]}, 20000)
	require.NoError(t, err)
	dfd, err := p.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
	require.NoError(t, err)
	_, err = p.Pwrite(dfd, data[:4096], 65536)
	require.NoError(t, err)
	ctx, err := p.IoSetup(1)
	require.NoError(t, err)
	n, err := p.IoSubmit(ctx, []*sim.Iocb{{Fd: uint32(dfd), Buf: data[:4096], Offset: 131072, Opcode: sim.IOCB_CMD_PWRITE}})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	ev := make([]sim.IoEvent, 1)
	_, err = p.IoGetevents(ctx, 1, 1, ev, nil)
	require.NoError(t, err)
	require.Equal(t, int64(4096), ev[0].Res)
	require.NoError(t, p.Fsync(fd))
	require.NoError(t, p.Fstat(fd, &st))
	got = make([]byte, st.Size)
	_, err = p.Pread(fd, got, 0)
	require.NoError(t, err)
	return got, st, p.Task().Now()
}

// TestPayloadFree checks that a payload-free process's writes keep their
// extents, results and cost but not their bytes, and what inherits the
// setting.
func TestPayloadFree(t *testing.T) {
	kept, st1, now1 := payloadRun(t, false)
	zeros, st2, now2 := payloadRun(t, true)
	require.Equal(t, st1, st2, "the same stat")
	require.Equal(t, now1, now2, "the same time")
	require.Contains(t, string(kept), "payload!")
	require.Equal(t, make([]byte, len(zeros)), zeros, "payload-free: the written ranges read zeros")

	k := sim.New(vfs.New())
	p := k.Spawn()
	before, err := p.Open("/kept", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	p.Task().Group().SetPayloadFree(true)
	child, err := p.Task().Fork(0)
	require.NoError(t, err)
	c := sim.NewProcess(k, child)
	require.True(t, child.Group().PayloadFree(), "a child forked later inherits the setting")
	cfd, err := c.Open("/child", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	for _, w := range []struct {
		p    *sim.Process
		fd   int
		keep bool
	}{{p, before, true}, {c, cfd, false}} {
		_, err := w.p.Pwrite(w.fd, []byte("abc"), 0)
		require.NoError(t, err)
		b := make([]byte, 3)
		_, err = w.p.Pread(w.fd, b, 0)
		require.NoError(t, err)
		if w.keep {
			require.Equal(t, "abc", string(b), "a description opened before the setting keeps its bytes")
		} else {
			require.Equal(t, []byte{0, 0, 0}, b)
		}
	}
}

// observer records the WorldChanged notifications it receives.
type observer struct {
	sim.Handler
	seen []uint64
}

func (o *observer) WorldChanged(ino uint64) { o.seen = append(o.seen, ino) }
func (o *observer) Unwrap() sim.Handler     { return o.Handler }

// TestPopulate checks Process.Populate: a 1 GiB file's data in place at no
// cost in time, reading zeros, allocated as written, durable after an fsync,
// with every layer told.
func TestPopulate(t *testing.T) {
	prof, err := device.Lookup("nvme")
	require.NoError(t, err)
	fs := vfs.New()
	k := sim.New(fs, sim.WithDevice(prof))
	o := &observer{Handler: k}
	p := k.Spawn().Through(o)
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	require.NoError(t, fs.Root().Fsync(nil))
	t0 := p.Task().Now()
	require.NoError(t, p.Populate(fd, 0, 1<<30))
	require.Equal(t, t0, p.Task().Now(), "no time passes")
	var st unix.Stat_t
	require.NoError(t, p.Fstat(fd, &st))
	ino := uint64(st.Ino)
	require.Equal(t, []uint64{ino}, o.seen)
	require.Equal(t, int64(1<<30), st.Size)
	require.GreaterOrEqual(t, st.Blocks, int64(1<<30)/512, "every block allocated")
	off, err := p.Seek(fd, 0, unix.SEEK_HOLE)
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), off, "written data, no hole")
	b := []byte("xxxx")
	_, err = p.Pread(fd, b, 12345678)
	require.NoError(t, err)
	require.Equal(t, []byte{0, 0, 0, 0}, b)

	require.NotEmpty(t, fs.Pending(), "pending until an fsync")
	require.NoError(t, p.Fsync(fd))
	require.Empty(t, fs.Pending())
	after, err := fs.Crash().Root().Resolve("f", true)
	require.NoError(t, err)
	require.Equal(t, int64(1<<30), after.Size())

	require.Equal(t, unix.EBADF, p.Populate(99, 0, 1))
	dfd, err := p.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	require.Equal(t, unix.EISDIR, p.Populate(dfd, 0, 1))
}

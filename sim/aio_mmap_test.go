package sim

import (
	"bytes"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

func TestAIO(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/f", []byte("hello, world"))
	fd, _ := p.Open("/f", unix.O_RDWR, 0)
	ro, _ := p.Open("/f", unix.O_RDONLY, 0)

	_, err := p.IoSetup(0)
	require.Equal(t, unix.EINVAL, err)
	ctx, err := p.IoSetup(4)
	require.NoError(t, err)
	require.NotZero(t, ctx)
	// A context is not shared across processes.
	c := p.Fork()
	_, err = c.IoSubmit(ctx, nil)
	require.Equal(t, unix.EINVAL, err)

	rbuf := make([]byte, 5)
	iocbs := []*Iocb{
		{Data: 1, Opcode: IOCB_CMD_PWRITE, Fd: uint32(fd), Buf: []byte("HELLO"), Offset: 0},
		{Data: 2, Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: rbuf, Offset: 0},
		{Data: 3, Opcode: IOCB_CMD_FDSYNC, Fd: uint32(fd)},
	}
	n, err := p.IoSubmit(ctx, iocbs)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, "HELLO", string(rbuf))
	// Nothing submitted: 0.
	n, err = p.IoSubmit(ctx, nil)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	// Bad iocbs: the first fails the call, a later one stops the submission.
	_, err = p.IoSubmit(ctx, []*Iocb{{Opcode: IOCB_CMD_PWRITE, Fd: uint32(ro), Buf: rbuf}})
	require.Equal(t, unix.EBADF, err)
	_, err = p.IoSubmit(ctx, []*Iocb{{Opcode: 99, Fd: uint32(fd)}})
	require.Equal(t, unix.EINVAL, err)
	_, err = p.IoSubmit(ctx, []*Iocb{{Opcode: IOCB_CMD_PREAD, Fd: 99}})
	require.Equal(t, unix.EBADF, err)
	// io_setup(4)'s context holds more than 4 (TestAIORingSize).
	n, err = p.IoSubmit(ctx, []*Iocb{
		{Data: 4, Opcode: IOCB_CMD_PREADV, Fd: uint32(fd), Iov: [][]byte{make([]byte, 2), make([]byte, 3)}, Offset: 7},
		{Data: 5, Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: rbuf},
	})
	require.NoError(t, err)
	require.Equal(t, 2, n)

	ev := make([]IoEvent, 8)
	_, err = p.IoGetevents(ctx, 3, 2, ev, nil)
	require.Equal(t, unix.EINVAL, err)
	n, err = p.IoGetevents(ctx, 1, 2, ev, nil)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []IoEvent{{Data: 1, Obj: 1, Res: 5}, {Data: 2, Obj: 2, Res: 5}}, ev[:2])
	n, err = p.IoGetevents(ctx, 0, 8, ev, nil)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	require.Equal(t, []IoEvent{{Data: 3, Obj: 3, Res: 0}, {Data: 4, Obj: 4, Res: 5}, {Data: 5, Obj: 5, Res: 5}}, ev[:3])
	n, err = p.IoGetevents(ctx, 1, 8, ev, nil)
	require.NoError(t, err)
	require.Equal(t, 0, n)

	// An I/O error goes into the event: O_DIRECT misalignment.
	dfd, _ := p.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
	n, err = p.IoSubmit(ctx, []*Iocb{{Data: 9, Opcode: IOCB_CMD_PREAD, Fd: uint32(dfd), Buf: make([]byte, 100), Offset: 1}})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	n, _ = p.IoGetevents(ctx, 1, 1, ev, nil)
	require.Equal(t, 1, n)
	require.Equal(t, -int64(unix.EINVAL), ev[0].Res)

	require.NoError(t, p.IoDestroy(ctx))
	require.Equal(t, unix.EINVAL, p.IoDestroy(ctx))
	_, err = p.IoGetevents(ctx, 0, 1, ev, nil)
	require.Equal(t, unix.EINVAL, err)
}

func TestMmap(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/f", []byte("0123456789"))
	fd, _ := p.Open("/f", unix.O_RDWR, 0)
	m, err := p.Mmap(fd, 0, 4096, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	require.Len(t, m, 4096)
	require.Equal(t, "0123456789", string(m[:10]))
	require.Equal(t, make([]byte, 10), m[10:20]) // past EOF: zeros
	// A shared mapping sees the page cache.
	_, err = p.Pwrite(fd, []byte("AB"), 2)
	require.NoError(t, err)
	require.Equal(t, "01AB456789", string(m[:10]))
	// A private mapping is a snapshot.
	pm, err := p.Mmap(fd, 0, 10, unix.PROT_READ, unix.MAP_PRIVATE)
	require.NoError(t, err)
	p.Pwrite(fd, []byte("C"), 0)
	require.Equal(t, "C1AB456789", string(m[:10]))
	require.Equal(t, "01AB456789", string(pm))
	// Stores reach the file at msync.
	copy(m[5:], "xy")
	require.NoError(t, p.Msync(m, unix.MS_SYNC))
	buf := make([]byte, 10)
	p.Pread(fd, buf, 0)
	require.Equal(t, "C1AB4xy789", string(buf))
	require.Equal(t, unix.EINVAL, p.Msync(m, unix.MS_SYNC|unix.MS_ASYNC))
	require.Equal(t, unix.EINVAL, p.Msync(m[1:], unix.MS_SYNC))
	require.Equal(t, unix.ENOMEM, p.Msync(make([]byte, 4096), unix.MS_SYNC))
	// ... and at munmap.
	copy(m[0:], "Z")
	require.Equal(t, unix.EINVAL, p.Munmap(m[:10]))
	require.NoError(t, p.Munmap(m))
	p.Pread(fd, buf, 0)
	require.Equal(t, "Z1AB4xy789", string(buf))
	require.Equal(t, unix.EINVAL, p.Munmap(m))
	require.NoError(t, p.Munmap(pm))
	// Truncate shows in a shared mapping as zeros.
	m2, _ := p.Mmap(fd, 0, 10, unix.PROT_READ, unix.MAP_SHARED)
	require.NoError(t, p.Ftruncate(fd, 4))
	require.Equal(t, []byte("Z1AB\x00\x00\x00\x00\x00\x00"), m2)
	// The mapping holds a reference: closing the fd keeps it working.
	require.NoError(t, p.Close(fd))
	fd, _ = p.Open("/f", unix.O_WRONLY, 0)
	p.Pwrite(fd, []byte("Q"), 0)
	require.Equal(t, byte('Q'), m2[0])
	// Anonymous mappings are zeroed memory.
	a, err := p.Mmap(-1, 0, 100, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	require.NoError(t, err)
	require.True(t, bytes.Equal(a, make([]byte, 100)))
	require.NoError(t, p.Munmap(a))
	// The munmap syscall of an unknown range succeeds, as on Linux.
	require.Equal(t, Result{}, p.Syscall(Call{Nr: SYS_MUNMAP, Args: [6]int64{0x1000, 4096}}))
	require.Equal(t, Fail(unix.EINVAL), p.Syscall(Call{Nr: SYS_MUNMAP, Args: [6]int64{0x1001, 4096}}))
	p.Exit()
}

// writebackFault fails every writeback with EIO while on.
type writebackFault struct{ on bool }

func (w *writebackFault) Inject(op vfs.Op, path string) vfs.Fault {
	if w.on && op == vfs.OpWriteback {
		return vfs.Fault{Errno: syscall.EIO}
	}
	return vfs.Fault{}
}

// TestWritebackErrorOncePerDescription: as Linux's errseq_t, a writeback error is
// reported by fsync once to every description open when it happened.
func TestWritebackErrorOncePerDescription(t *testing.T) {
	inj := &writebackFault{}
	k := New(vfs.New(vfs.WithFaults(inj)))
	p := k.Spawn()
	mkfile(t, p, "/f", nil)
	a, _ := p.Open("/f", unix.O_RDWR, 0)
	b, _ := p.Open("/f", unix.O_RDWR, 0)
	d, _ := p.Dup(a)
	p.Write(a, []byte("data"))
	inj.on = true
	require.Equal(t, unix.EIO, p.Fsync(a))
	inj.on = false
	require.NoError(t, p.Fsync(a))
	require.NoError(t, p.Fsync(d)) // same description as a: already seen
	require.Equal(t, unix.EIO, p.Fdatasync(b))
	require.NoError(t, p.Fsync(b))
	// O_SYNC writes report a writeback error from the write itself.
	s, _ := p.Open("/f", unix.O_RDWR|unix.O_SYNC, 0)
	inj.on = true
	_, err := p.Write(s, []byte("x"))
	require.Equal(t, unix.EIO, err)
	off, _ := p.Seek(s, 0, 1)
	require.Equal(t, int64(0), off) // the offset does not move on failure
	inj.on = false
}

func TestVirtualClock(t *testing.T) {
	k := New(vfs.New(), WithCostModel(ConstantCost(1000)))
	p := k.Spawn()
	require.Equal(t, int64(0), k.Now())
	mkfile(t, p, "/f", nil) // open, close
	require.Equal(t, int64(2000), k.Now())
	var st unix.Stat_t
	require.NoError(t, p.Stat("/f", &st))
	require.Equal(t, Epoch/1e9, st.Mtim.Sec)
	// A cost model that sees the call and its result.
	var seen []Sysno
	k2 := New(vfs.New(), WithCostModel(costFunc(func(c *Call, r Result) int64 {
		seen = append(seen, c.Nr)
		if r.Errno != 0 {
			return 1
		}
		return 10
	})))
	p2 := k2.Spawn()
	p2.Close(5)
	p2.Getpid()
	require.Equal(t, int64(11), k2.Now())
	require.Equal(t, []Sysno{SYS_CLOSE, SYS_GETPID}, seen)
}

type costFunc func(c *Call, r Result) int64

func (f costFunc) Cost(c *Call, r Result) int64 { return f(c, r) }

// TestThrough routes a process's calls through an interposer.
func TestThrough(t *testing.T) {
	k, p := newProc(t)
	var names []string
	trace := HandlerFunc(func(c *Call) Result {
		names = append(names, c.Nr.String())
		return k.Syscall(c)
	})
	q := p.Through(trace)
	fd, err := q.Open("/x", unix.O_CREAT|unix.O_RDWR, 0o600)
	require.NoError(t, err)
	q.Write(fd, []byte("a"))
	q.Close(fd)
	require.Equal(t, []string{"openat", "write", "close"}, names)
	c := q.Fork()
	c.Getpid()
	require.Equal(t, []string{"openat", "write", "close", "fork", "getpid"}, names)
}

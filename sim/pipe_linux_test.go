package sim_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// piper is what the pipe test needs of the kernel and of the model (*sim.Process).
type piper interface {
	Open(path string, mode int, perm uint32) (int, error)
	Close(fd int) error
	Read(fd int, b []byte) (int, error)
	Write(fd int, b []byte) (int, error)
	Writev(fd int, iovs [][]byte) (int, error)
	Pread(fd int, b []byte, off int64) (int, error)
	Seek(fd int, off int64, whence int) (int64, error)
	Fadvise(fd int, off, n int64, advice int) error
	Fsync(fd int) error
	Fstat(fd int, st *unix.Stat_t) error
	Stat(path string, st *unix.Stat_t) error
	FcntlInt(fd uintptr, cmd, arg int) (int, error)
	Pipe2(fds *[2]int, flags int) error
	Socketpair(domain, typ, proto int) ([2]int, error)
	Mknodat(dirfd int, path string, mode uint32, dev int) error
}

// realPipes is piper on this machine's kernel, paths inside dir.
type realPipes struct{ dir string }

func (r realPipes) p(s string) string { return filepath.Join(r.dir, s) }
func (r realPipes) Open(s string, f int, m uint32) (int, error) {
	return unix.Open(r.p(s), f|unix.O_CLOEXEC, m)
}
func (realPipes) Close(fd int) error                  { return unix.Close(fd) }
func (realPipes) Read(fd int, b []byte) (int, error)  { return unix.Read(fd, b) }
func (realPipes) Write(fd int, b []byte) (int, error) { return unix.Write(fd, b) }
func (realPipes) Pread(fd int, b []byte, o int64) (int, error) {
	return unix.Pread(fd, b, o)
}
func (realPipes) Seek(fd int, o int64, w int) (int64, error) { return unix.Seek(fd, o, w) }
func (realPipes) Fadvise(fd int, o, n int64, a int) error    { return unix.Fadvise(fd, o, n, a) }
func (realPipes) Fsync(fd int) error                         { return unix.Fsync(fd) }
func (realPipes) Fstat(fd int, st *unix.Stat_t) error        { return unix.Fstat(fd, st) }
func (r realPipes) Stat(s string, st *unix.Stat_t) error     { return unix.Stat(r.p(s), st) }
func (realPipes) FcntlInt(fd uintptr, c, a int) (int, error) { return unix.FcntlInt(fd, c, a) }
func (r realPipes) Mknodat(d int, s string, m uint32, v int) error {
	return unix.Mknodat(d, r.p(s), m, v)
}
func (realPipes) Pipe2(fds *[2]int, flags int) error {
	p := make([]int, 2)
	err := unix.Pipe2(p, flags|unix.O_CLOEXEC)
	fds[0], fds[1] = p[0], p[1]
	return err
}
func (realPipes) Socketpair(d, t, p int) ([2]int, error) {
	return unix.Socketpair(d, t|unix.SOCK_CLOEXEC, p)
}

// pipeScript makes pipes, socket pairs, FIFOs and device nodes and uses them;
// it returns one line per call: its result or errno, and what stat says.
func pipeScript(t *testing.T, s piper) string {
	var out strings.Builder
	put := func(call string, v any, err error) {
		if err != nil {
			fmt.Fprintf(&out, "%s: %v\n", call, unix.ErrnoName(err.(syscall.Errno)))
			return
		}
		fmt.Fprintf(&out, "%s: %v\n", call, v)
	}
	stat := func(call string, st *unix.Stat_t, err error) {
		put(call, fmt.Sprintf("mode=%o size=%d nlink=%d rdev=%x", st.Mode, st.Size, st.Nlink, st.Rdev), err)
	}
	var st unix.Stat_t
	buf := make([]byte, 100)
	getfl := func(name string, fd int) {
		v, err := s.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		put(name+" F_GETFL", fmt.Sprintf("%#x", v&^unix.O_CLOEXEC), err)
	}
	// Calls every end of a pipe or socket answers the same way.
	unseekable := func(name string, fd int) {
		n, err := s.Pread(fd, buf, 0)
		put(name+" pread", n, err)
		o, err := s.Seek(fd, 0, unix.SEEK_CUR)
		put(name+" lseek", o, err)
		put(name+" fadvise", 0, s.Fadvise(fd, 0, 0, unix.FADV_DONTNEED))
		put(name+" fsync", 0, s.Fsync(fd))
		err = s.Fstat(fd, &st)
		put(name+" fstat", fmt.Sprintf("mode=%o size=%d", st.Mode, st.Size), err)
	}

	// An anonymous pipe: data in, data out, end of file after the last writer.
	var p [2]int
	put("pipe2", 0, s.Pipe2(&p, 0))
	getfl("r", p[0])
	getfl("w", p[1])
	n, err := s.Write(p[1], []byte("hello, pipe"))
	put("write", n, err)
	unseekable("r", p[0])
	unseekable("w", p[1])
	n, err = s.Read(p[0], buf[:5])
	put("read", string(buf[:n]), err)
	n, err = s.Read(p[1], buf)
	put("read w", n, err)
	n, err = s.Write(p[0], buf[:1])
	put("write r", n, err)
	sz, err := s.FcntlInt(uintptr(p[0]), unix.F_GETPIPE_SZ, 0)
	put("F_GETPIPE_SZ", sz, err)
	put("close w", 0, s.Close(p[1]))
	n, err = s.Read(p[0], buf)
	put("read", string(buf[:n]), err)
	n, err = s.Read(p[0], buf)
	put("read at EOF", n, err)
	put("close r", 0, s.Close(p[0]))

	// Non-blocking: EAGAIN on empty; EPIPE without reader.
	put("pipe2 NONBLOCK", 0, s.Pipe2(&p, unix.O_NONBLOCK))
	getfl("r", p[0])
	n, err = s.Read(p[0], buf)
	put("read empty", n, err)
	big := make([]byte, 65536)
	n, err = s.Write(p[1], big)
	put("write 64K", n, err)
	n, err = s.Write(p[1], buf[:1])
	put("write full", n, err)
	n, err = s.Read(p[0], buf)
	put("read", n, err)
	n, err = s.Write(p[1], buf[:1])
	put("write one", n, err)
	// Fifteen full pages and 100 bytes: a writev of 3000+1000 bytes joins the
	// last page whole (PIPE_BUF atomicity is of the total).
	n, err = s.Read(p[0], big)
	put("drain", n, err)
	n, err = s.Write(p[1], big[:15*4096])
	put("write 15 pages", n, err)
	n, err = s.Write(p[1], buf[:100])
	put("write 100", n, err)
	n, err = s.Writev(p[1], [][]byte{big[:3000], big[:1000]})
	put("writev 3000+1000", n, err)
	n, err = s.Write(p[1], buf[:1])
	put("write full", n, err)
	put("close r", 0, s.Close(p[0]))
	n, err = s.Write(p[1], buf[:1])
	put("write no reader", n, err)
	put("close w", 0, s.Close(p[1]))
	put("pipe2 bad flags", 0, s.Pipe2(&p, unix.O_SYNC))

	// A socket pair: both ends read and write.
	sp, err := s.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	put("socketpair", 0, err)
	getfl("a", sp[0])
	getfl("b", sp[1])
	n, err = s.Write(sp[0], []byte("ping"))
	put("write a", n, err)
	n, err = s.Write(sp[1], []byte("pong!"))
	put("write b", n, err)
	n, err = s.Read(sp[1], buf)
	put("read b", string(buf[:n]), err)
	n, err = s.Read(sp[0], buf)
	put("read a", string(buf[:n]), err)
	unseekable("a", sp[0])
	_, err = s.FcntlInt(uintptr(sp[0]), unix.F_GETPIPE_SZ, 0)
	put("F_GETPIPE_SZ socket", 0, err)
	put("close b", 0, s.Close(sp[1]))
	n, err = s.Read(sp[0], buf)
	put("read a, peer gone", n, err)
	n, err = s.Write(sp[0], buf[:1])
	put("write a, peer gone", n, err)
	put("close a", 0, s.Close(sp[0]))
	_, err = s.Socketpair(unix.AF_UNIX, 9, 0)
	put("socketpair bad type", 0, err)
	_, err = s.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 7)
	put("socketpair bad protocol", 0, err)

	// A FIFO: a file of size 0 whose opens share one pipe.
	put("mkfifo", 0, s.Mknodat(unix.AT_FDCWD, "fifo", unix.S_IFIFO|0o640, 0))
	stat("stat fifo", &st, s.Stat("fifo", &st))
	put("mkfifo again", 0, s.Mknodat(unix.AT_FDCWD, "fifo", unix.S_IFIFO|0o640, 0))
	_, err = s.Open("fifo", unix.O_WRONLY|unix.O_NONBLOCK, 0)
	put("open w nonblock, no reader", 0, err)
	r, err := s.Open("fifo", unix.O_RDONLY|unix.O_NONBLOCK, 0)
	put("open r nonblock", 0, err)
	getfl("fifo r", r)
	n, err = s.Read(r, buf)
	put("read, no writer", n, err)
	w, err := s.Open("fifo", unix.O_WRONLY|unix.O_TRUNC, 0)
	put("open w", 0, err)
	n, err = s.Read(r, buf)
	put("read empty", n, err)
	n, err = s.Write(w, []byte("through the fifo"))
	put("write", n, err)
	stat("stat fifo after write", &st, s.Stat("fifo", &st))
	unseekable("fifo r", r)
	rw, err := s.Open("fifo", unix.O_RDWR, 0)
	put("open rw", 0, err)
	n, err = s.Read(rw, buf)
	put("read rw", string(buf[:n]), err)
	sz, err = s.FcntlInt(uintptr(w), unix.F_SETPIPE_SZ, 5000)
	put("F_SETPIPE_SZ", sz, err)
	sz, err = s.FcntlInt(uintptr(r), unix.F_GETPIPE_SZ, 0)
	put("F_GETPIPE_SZ", sz, err)
	put("close w", 0, s.Close(w))
	put("close rw", 0, s.Close(rw))
	n, err = s.Read(r, buf)
	put("read, writers gone", n, err)
	put("close r", 0, s.Close(r))
	_, err = s.Open("fifo", unix.O_RDWR|unix.O_DIRECT, 0)
	put("open O_DIRECT", 0, err)

	// Device nodes and the other types.
	put("mknod null", 0, s.Mknodat(unix.AT_FDCWD, "null", unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))))
	stat("stat null", &st, s.Stat("null", &st))
	fd, err := s.Open("null", unix.O_RDWR, 0)
	put("open null", 0, err)
	n, err = s.Write(fd, buf)
	put("write null", n, err)
	n, err = s.Read(fd, buf)
	put("read null", n, err)
	put("close null", 0, s.Close(fd))
	put("mknod zero", 0, s.Mknodat(unix.AT_FDCWD, "zero", unix.S_IFCHR|0o600, int(unix.Mkdev(1, 5))))
	fd, err = s.Open("zero", unix.O_RDONLY, 0)
	put("open zero", 0, err)
	buf[0] = 1
	n, err = s.Read(fd, buf[:10])
	put("read zero", fmt.Sprint(n, buf[0]), err)
	put("close zero", 0, s.Close(fd))
	put("mknod reg", 0, s.Mknodat(unix.AT_FDCWD, "reg", 0o600, 0))
	stat("stat reg", &st, s.Stat("reg", &st))
	put("mknod sock", 0, s.Mknodat(unix.AT_FDCWD, "sock", unix.S_IFSOCK|0o600, 0))
	stat("stat sock", &st, s.Stat("sock", &st))
	_, err = s.Open("sock", unix.O_RDONLY, 0)
	put("open sock", 0, err)
	put("mknod dir", 0, s.Mknodat(unix.AT_FDCWD, "dir", unix.S_IFDIR|0o700, 0))
	put("mknod bad type", 0, s.Mknodat(unix.AT_FDCWD, "bad", 0o170000|0o700, 0))
	put("mknod no parent", 0, s.Mknodat(unix.AT_FDCWD, "none/f", unix.S_IFIFO|0o600, 0))
	return out.String()
}

// TestPipesMatchKernel runs pipeScript on this machine's kernel (as root: device
// nodes) and on the model: the same results, errnos, modes and sizes.
func TestPipesMatchKernel(t *testing.T) {
	if unix.Geteuid() != 0 {
		t.Skip("mknod of device nodes needs root")
	}
	dir := t.TempDir()
	old := unix.Umask(0o022)
	defer unix.Umask(old)
	want := pipeScript(t, realPipes{dir})
	p := sim.New(vfs.New()).Spawn()
	got := pipeScript(t, p)
	require.Equal(t, want, got)
	// What the script checks is not all ok: the comparison means something.
	require.Contains(t, want, "ESPIPE")
	require.Contains(t, want, "mode=10640 size=0")
}

// TestPipeWaits: with waits (the default) a reader of an empty pipe blocks until
// a writer of another thread writes, and a FIFO open waits for its peer.
func TestPipeWaits(t *testing.T) {
	k := sim.New(vfs.New())
	p := k.Spawn()
	var fds [2]int
	require.NoError(t, p.Pipe2(&fds, 0))
	q := p.NewThread()
	var wg sync.WaitGroup
	wg.Add(1)
	var n int
	var err error
	buf := make([]byte, 10)
	go func() {
		defer wg.Done()
		n, err = q.Read(fds[0], buf)
	}()
	_, werr := p.Write(fds[1], []byte("late"))
	require.NoError(t, werr)
	wg.Wait()
	require.NoError(t, err)
	require.Equal(t, "late", string(buf[:n]))

	require.NoError(t, p.Mknodat(unix.AT_FDCWD, "/f", unix.S_IFIFO|0o600, 0))
	var rfd int
	wg.Add(1)
	go func() {
		defer wg.Done()
		rfd, err = q.Open("/f", unix.O_RDONLY, 0)
	}()
	wfd, werr := p.Open("/f", unix.O_WRONLY, 0)
	require.NoError(t, werr)
	wg.Wait()
	require.NoError(t, err)
	_, werr = p.Write(wfd, []byte("x"))
	require.NoError(t, werr)
	n, err = p.Read(rfd, buf)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

// TestPipeNoWait: without waits, what would wait is EINTR (a read, a write to a
// full pipe), a FIFO open that would wait for its peer succeeds.
func TestPipeNoWait(t *testing.T) {
	p := sim.New(vfs.New(), sim.WithLockWait(false)).Spawn()
	var fds [2]int
	require.NoError(t, p.Pipe2(&fds, 0))
	_, err := p.Read(fds[0], make([]byte, 1))
	require.Equal(t, unix.EINTR, err)
	n, err := p.Write(fds[1], make([]byte, 70000))
	require.NoError(t, err)
	require.Equal(t, 65536, n, "a large write returns what fit")
	_, err = p.Write(fds[1], []byte("x"))
	require.Equal(t, unix.EINTR, err)
	require.NoError(t, p.Mknodat(unix.AT_FDCWD, "/f", unix.S_IFIFO|0o600, 0))
	fd, err := p.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
	_, err = p.Read(fd, make([]byte, 1))
	require.NoError(t, err, "no writer: end of file")
	require.False(t, errors.Is(err, unix.EINTR))
}

func (realPipes) Writev(fd int, iovs [][]byte) (int, error) { return unix.Writev(fd, iovs) }

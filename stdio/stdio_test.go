package stdio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"iosim/sim"
	"iosim/vfs"
)

// calls runs prog on a fresh model and returns the calls it made, one
// compact string each (the call, its flags or byte count, its result).
func calls(t *testing.T, prog func(p *sim.Process)) []string {
	t.Helper()
	fs := vfs.New()
	k := sim.New(fs)
	var out []string
	h := sim.HandlerFunc(func(c sim.Call) sim.Result {
		r := k.Syscall(c)
		s := c.Nr.String()
		switch c.Nr {
		case sim.SYS_OPENAT:
			s += fmt.Sprintf(" %#o", c.Args[2])
		case sim.SYS_WRITE:
			s += fmt.Sprintf(" %d", len(c.Buf))
		case sim.SYS_LSEEK:
			s += fmt.Sprintf(" %d", c.Args[2])
		}
		out = append(out, fmt.Sprintf("%s = %d", s, r.Ret))
		return r
	})
	p := k.Spawn()
	for fd := range 3 {
		require.NoError(t, p.Task().InstallSpecial(fd, sim.DevNull{}, unix.O_RDWR))
	}
	require.NoError(t, fs.MkdirAll("/tmp", 0o755))
	prog(p.Through(h))
	return out
}

func open(t *testing.T, p *sim.Process, mode string) *File {
	f, err := Open(p, "/tmp/x", mode)
	require.NoError(t, err)
	return f
}

func write(t *testing.T, f *File, n int) {
	got, err := f.Write([]byte(strings.Repeat("a", n)))
	require.NoError(t, err)
	require.Equal(t, n, got)
}

var (
	wFlags  = fmt.Sprintf("%#o", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC)
	aFlags  = fmt.Sprintf("%#o", unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND)
	apFlags = fmt.Sprintf("%#o", unix.O_RDWR|unix.O_CREAT|unix.O_APPEND)
)

// TestGlibcWritePattern checks the calls against those strace showed glibc
// 2.36 making for the same C programs on Linux (debian 12).
func TestGlibcWritePattern(t *testing.T) {
	// 100 fwrites of 100 bytes, fclose: write 4096, 4096, 1808.
	got := calls(t, func(p *sim.Process) {
		f := open(t, p, "w")
		for range 100 {
			write(t, f, 100)
		}
		require.NoError(t, f.Close())
	})
	require.Equal(t, []string{"openat " + wFlags + " = 3", "newfstatat = 0", "write 4096 = 4096", "write 4096 = 4096", "write 1808 = 1808", "close = 0"}, got)

	// fwrite 10000 then 100: 8192 straight from the caller, 1908 at fclose.
	got = calls(t, func(p *sim.Process) {
		f := open(t, p, "w")
		write(t, f, 10000)
		write(t, f, 100)
		require.NoError(t, f.Close())
	})
	require.Equal(t, []string{"openat " + wFlags + " = 3", "newfstatat = 0", "write 8192 = 8192", "write 1908 = 1908", "close = 0"}, got)

	// fwrite 4000, 200, 9000: 4096 (the full buffer), 4096, 4096, 912.
	got = calls(t, func(p *sim.Process) {
		f := open(t, p, "w")
		write(t, f, 4000)
		write(t, f, 200)
		write(t, f, 9000)
		require.NoError(t, f.Close())
	})
	require.Equal(t, []string{"openat " + wFlags + " = 3", "newfstatat = 0", "write 4096 = 4096", "write 4096 = 4096", "write 4096 = 4096", "write 912 = 912", "close = 0"}, got)

	// "a": lseek to the end at fopen; fsync before fflush finds nothing
	// written: the 10 bytes reach the kernel at fflush.
	got = calls(t, func(p *sim.Process) {
		f := open(t, p, "a")
		write(t, f, 10)
		require.NoError(t, p.Fsync(f.Fd()))
		require.Equal(t, 10, f.Buffered())
		require.NoError(t, f.Flush())
		require.NoError(t, p.Fsync(f.Fd()))
		require.NoError(t, f.Flush(), "nothing buffered: no call")
		require.NoError(t, f.Close())
	})
	require.Equal(t, []string{"openat " + aFlags + " = 3", "lseek 2 = 0", "newfstatat = 0", "fsync = 0", "write 10 = 10", "fsync = 0", "close = 0"}, got)

	// "a+": no lseek; fflush between two fwrites.
	got = calls(t, func(p *sim.Process) {
		f := open(t, p, "a+")
		write(t, f, 3)
		require.NoError(t, f.Flush())
		write(t, f, 2)
		require.NoError(t, f.Close())
	})
	require.Equal(t, []string{"openat " + apFlags + " = 3", "newfstatat = 0", "write 3 = 3", "write 2 = 2", "close = 0"}, got)
}

func TestModes(t *testing.T) {
	for mode, want := range map[string]int{
		"r": unix.O_RDONLY, "rb": unix.O_RDONLY, "r+": unix.O_RDWR, "w": unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC,
		"w+": unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC, "wx": unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_EXCL,
		"we": unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_CLOEXEC, "a": unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND,
		"a+b": unix.O_RDWR | unix.O_CREAT | unix.O_APPEND,
	} {
		got, _, err := ParseMode(mode)
		require.NoError(t, err, mode)
		require.Equal(t, want, got, mode)
	}
	for _, bad := range []string{"", "q", "wz"} {
		_, _, err := ParseMode(bad)
		require.Error(t, err, bad)
	}
	calls(t, func(p *sim.Process) {
		_, err := Open(p, "/tmp/none", "r")
		require.Equal(t, unix.ENOENT, err)
		f := open(t, p, "w")
		require.NoError(t, f.Close())
		f = open(t, p, "r")
		n, err := f.Write([]byte("x"))
		require.Equal(t, 0, n)
		require.Equal(t, unix.EBADF, err, "a stream opened for reading does not write")
		require.NoError(t, f.Close())
		require.Equal(t, unix.EBADF, f.Close())
	})
}

// TestFailedWriteKeepsBytes: bytes a failed write did not send stay
// buffered, and fclose still closes the fd.
func TestFailedWriteKeepsBytes(t *testing.T) {
	fs := vfs.New()
	k := sim.New(fs)
	fail := true
	h := sim.HandlerFunc(func(c sim.Call) sim.Result {
		if c.Nr == sim.SYS_WRITE && fail {
			return sim.Fail(unix.ENOSPC)
		}
		return k.Syscall(c)
	})
	p := k.Spawn().Through(h)
	f, err := Open(p, "/x", "w")
	require.NoError(t, err)
	write(t, f, 10)
	require.Equal(t, unix.ENOSPC, f.Flush())
	require.Equal(t, 10, f.Buffered())
	fail = false
	require.NoError(t, f.Close())
	st, err := fs.Stat("/x")
	require.NoError(t, err)
	require.Equal(t, int64(10), st.Size())
}

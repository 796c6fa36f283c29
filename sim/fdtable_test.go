package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

func newProc(t testing.TB, opts ...Option) (*Kernel, *Process) {
	t.Helper()
	k := New(vfs.New(), opts...)
	return k, k.Spawn()
}

func mkfile(t testing.TB, p *Process, path string, data []byte) {
	t.Helper()
	fd, err := p.Open(path, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, 0o644)
	require.NoError(t, err)
	if len(data) > 0 {
		n, err := p.Write(fd, data)
		require.NoError(t, err)
		require.Equal(t, len(data), n)
	}
	require.NoError(t, p.Close(fd))
}

func TestLowestFreeFD(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/f", nil)
	var fds []int
	for range 5 {
		fd, err := p.Open("/f", unix.O_RDONLY, 0)
		require.NoError(t, err)
		fds = append(fds, fd)
	}
	require.Equal(t, []int{0, 1, 2, 3, 4}, fds)
	require.NoError(t, p.Close(1))
	require.NoError(t, p.Close(3))
	fd, _ := p.Open("/f", unix.O_RDONLY, 0)
	require.Equal(t, 1, fd)
	fd, _ = p.Dup(0)
	require.Equal(t, 3, fd)
	fd, _ = p.Dup(0)
	require.Equal(t, 5, fd)
	require.Equal(t, unix.EBADF, p.Close(99))
	require.Equal(t, unix.EBADF, p.Close(-1))
}

func TestDupSharesOffsetAndFlagsNotCloexec(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/f", []byte("0123456789"))
	fd, err := p.Open("/f", unix.O_RDWR|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	fl, _ := p.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	require.Equal(t, unix.FD_CLOEXEC, fl)
	for _, dup := range []func() int{
		func() int { n, err := p.Dup(fd); require.NoError(t, err); return n },
		func() int { require.NoError(t, p.Dup2(fd, 20)); return 20 },
		func() int { require.NoError(t, p.Dup3(fd, 21, 0)); return 21 },
		func() int { n, err := p.FcntlInt(uintptr(fd), unix.F_DUPFD, 30); require.NoError(t, err); return n },
	} {
		d := dup()
		// FD_CLOEXEC is per fd: the copy does not have it.
		fl, err := p.FcntlInt(uintptr(d), unix.F_GETFD, 0)
		require.NoError(t, err)
		require.Equal(t, 0, fl)
		// The offset is shared.
		_, err = p.Seek(fd, 3, 0)
		require.NoError(t, err)
		off, _ := p.Seek(d, 0, 1)
		require.Equal(t, int64(3), off)
		buf := make([]byte, 2)
		n, _ := p.Read(d, buf)
		require.Equal(t, 2, n)
		off, _ = p.Seek(fd, 0, 1)
		require.Equal(t, int64(5), off)
		// Status flags are shared.
		_, err = p.FcntlInt(uintptr(d), unix.F_SETFL, unix.O_APPEND)
		require.NoError(t, err)
		fl, _ = p.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		require.Equal(t, unix.O_RDWR|unix.O_APPEND|oLargefile, fl)
		_, err = p.FcntlInt(uintptr(d), unix.F_SETFL, 0)
		require.NoError(t, err)
	}
	d, err := p.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	require.NoError(t, err)
	fl, _ = p.FcntlInt(uintptr(d), unix.F_GETFD, 0)
	require.Equal(t, unix.FD_CLOEXEC, fl)
	require.NoError(t, p.Dup3(fd, 40, unix.O_CLOEXEC))
	fl, _ = p.FcntlInt(40, unix.F_GETFD, 0)
	require.Equal(t, unix.FD_CLOEXEC, fl)
}

func TestDup2Semantics(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/f", []byte("abc"))
	fd, _ := p.Open("/f", unix.O_RDONLY, 0)
	// x/sys/unix's Dup2 is dup3: equal fds are EINVAL.
	require.Equal(t, unix.EINVAL, p.Dup2(fd, fd))
	// The dup2 syscall returns the fd.
	r := p.Syscall(Call{Nr: SYS_DUP2, Args: [6]int64{int64(fd), int64(fd)}})
	require.Equal(t, Result{Ret: int64(fd)}, r)
	r = p.Syscall(Call{Nr: SYS_DUP2, Args: [6]int64{99, 99}})
	require.Equal(t, Fail(unix.EBADF), r)
	r = p.Syscall(Call{Nr: SYS_DUP2, Args: [6]int64{int64(fd), 7}})
	require.Equal(t, Result{Ret: 7}, r)
	require.Equal(t, unix.EINVAL, p.Dup3(fd, 8, 1))
	require.Equal(t, unix.EBADF, p.Dup3(fd, 1024, 0))
	require.Equal(t, unix.EBADF, p.Dup3(fd, -1, 0))
	require.Equal(t, unix.EBADF, p.Dup3(55, 8, 0))
	// dup2 over an open fd closes it first.
	fd2, _ := p.Open("/f", unix.O_RDONLY, 0)
	p.Seek(fd2, 2, 0)
	require.NoError(t, p.Dup2(fd, fd2))
	off, _ := p.Seek(fd2, 0, 1)
	require.Equal(t, int64(0), off)
}

func TestNofileLimit(t *testing.T) {
	_, p := newProc(t, WithNofile(4))
	mkfile(t, p, "/f", nil)
	for i := range 4 {
		fd, err := p.Open("/f", unix.O_RDONLY, 0)
		require.NoError(t, err)
		require.Equal(t, i, fd)
	}
	_, err := p.Open("/f", unix.O_RDONLY, 0)
	require.Equal(t, unix.EMFILE, err)
	// EMFILE wins over the path lookup, as get_unused_fd_flags runs first.
	_, err = p.Open("/nonexistent", unix.O_RDONLY, 0)
	require.Equal(t, unix.EMFILE, err)
	_, err = p.Dup(0)
	require.Equal(t, unix.EMFILE, err)
	_, err = p.FcntlInt(0, unix.F_DUPFD, 4)
	require.Equal(t, unix.EINVAL, err)
	_, err = p.FcntlInt(0, unix.F_DUPFD, -1)
	require.Equal(t, unix.EINVAL, err)
	_, err = p.FcntlInt(0, unix.F_DUPFD, 2)
	require.Equal(t, unix.EMFILE, err)
	require.Equal(t, unix.EBADF, p.Dup2(0, 4))
	require.NoError(t, p.Dup2(0, 3))
	var rl unix.Rlimit
	require.NoError(t, p.Getrlimit(unix.RLIMIT_NOFILE, &rl))
	require.Equal(t, uint64(4), rl.Cur)
	rl.Cur = 8
	require.NoError(t, p.Setrlimit(unix.RLIMIT_NOFILE, &rl))
	fd, err := p.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
	require.Equal(t, 4, fd)
}

func TestForkExecExit(t *testing.T) {
	k, p := newProc(t)
	mkfile(t, p, "/f", []byte("0123456789"))
	a, _ := p.Open("/f", unix.O_RDONLY, 0)
	b, _ := p.Open("/f", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	c := p.Fork()
	require.NotNil(t, c)
	require.NotEqual(t, p.Pid(), c.Pid())
	// The child's fds share the descriptions.
	p.Seek(a, 4, 0)
	off, err := c.Seek(a, 0, 1)
	require.NoError(t, err)
	require.Equal(t, int64(4), off)
	fl, _ := c.FcntlInt(uintptr(b), unix.F_GETFD, 0)
	require.Equal(t, unix.FD_CLOEXEC, fl)
	// Closing in the child does not close in the parent.
	require.NoError(t, c.Close(a))
	_, err = p.Seek(a, 0, 1)
	require.NoError(t, err)
	// exec closes FD_CLOEXEC fds only.
	require.NoError(t, c.Exec())
	require.Equal(t, []int{b}, p.Task().FDs()[1:])
	require.Empty(t, c.Task().FDs())
	d, _ := c.Open("/f", unix.O_RDONLY, 0)
	require.Equal(t, 0, d)
	c2 := p.Fork()
	c2.Exit()
	require.True(t, c2.Task().Exited())
	require.Equal(t, []int{p.Pid(), c.Pid()}, k.Pids())
	// A call from an exited task is ESRCH.
	require.Equal(t, unix.ESRCH, c2.Close(a))
	require.Len(t, p.Task().FDs(), 2)
}

func TestThreadsShareTable(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/f", []byte("x"))
	th := p.NewThread()
	require.Equal(t, p.Pid(), th.Pid())
	require.NotEqual(t, p.Tid(), th.Tid())
	require.Equal(t, th.Tid(), th.Gettid())
	require.Equal(t, p.Pid(), th.Getpid())
	fd, _ := th.Open("/f", unix.O_RDONLY, 0)
	_, err := p.Seek(fd, 0, 0)
	require.NoError(t, err)
	require.NoError(t, p.Close(fd))
	require.Equal(t, unix.EBADF, th.Close(fd))
	require.Equal(t, 022, th.Umask(077))
	require.Equal(t, 077, p.Umask(022))
	// A thread's exit leaves the process; the last one's ends it.
	th.Syscall(Call{Nr: SYS_EXIT})
	_, err = p.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
}

func TestReplayerHooks(t *testing.T) {
	k := New(vfs.New())
	t1, err := k.SpawnPid(4242)
	require.NoError(t, err)
	_, err = k.SpawnPid(4242)
	require.Equal(t, unix.EEXIST, err)
	p := NewProcess(k, t1)
	require.Equal(t, 4242, p.Pid())
	mkfile(t, p, "/data", []byte("hello"))
	require.NoError(t, t1.InstallPath(7, "/data", unix.O_RDONLY, 0))
	buf := make([]byte, 5)
	n, err := p.Read(7, buf)
	require.NoError(t, err)
	require.Equal(t, "hello", string(buf[:n]))
	require.NoError(t, t1.InstallSpecial(0, DevNull{}, unix.O_RDWR))
	n, err = p.Read(0, buf)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	n, err = p.Write(0, buf)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	require.NoError(t, t1.InstallSpecial(1, DevZero{}, unix.O_RDONLY))
	buf[0] = 9
	n, _ = p.Read(1, buf)
	require.Equal(t, 5, n)
	require.Equal(t, byte(0), buf[0])
	sock := &Placeholder{Kind: vfs.S_IFSOCK}
	require.NoError(t, t1.InstallSpecial(3, sock, unix.O_RDWR))
	sock.Tell(Result{Ret: 3})
	sock.Tell(Fail(unix.ECONNRESET))
	n, err = p.Read(3, buf)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	_, err = p.Write(3, buf)
	require.Equal(t, unix.ECONNRESET, err)
	_, err = p.Seek(3, 0, 0)
	require.Equal(t, unix.ESPIPE, err)
	_, err = p.Pread(3, buf, 0)
	require.Equal(t, unix.ESPIPE, err)
	var st unix.Stat_t
	require.NoError(t, p.Fstat(3, &st))
	require.Equal(t, uint32(vfs.S_IFSOCK), st.Mode&vfs.S_IFMT)
	require.Equal(t, unix.EINVAL, p.Fsync(3))

	child, err := t1.Fork(5000)
	require.NoError(t, err)
	require.Equal(t, 5000, child.Pid())
	th, err := child.Clone(5001)
	require.NoError(t, err)
	require.Equal(t, 5000, th.Pid())
	require.Equal(t, 5001, th.Tid())
	require.Equal(t, th, k.Task(5001))
	// Every syscall is reachable by number; unmodelled ones return 0.
	for _, nr := range []Sysno{SYS_BRK, SYS_FUTEX, SYS_SOCKET, SYS_RT_SIGACTION, SYS_MPROTECT} {
		require.Equal(t, Result{}, p.Syscall(Call{Nr: nr, Args: [6]int64{1, 2, 3}}), nr.String())
	}
}

func TestSysnoTable(t *testing.T) {
	nr, ok := SysnoByName("pread64")
	require.True(t, ok)
	require.Equal(t, SYS_PREAD64, nr)
	require.Equal(t, "newfstatat", SYS_NEWFSTATAT.String())
	require.Equal(t, "syscall_9999", Sysno(9999).String())
	_, ok = SysnoByName("_llseek")
	require.False(t, ok)
	all := Syscalls()
	require.Greater(t, len(all), 360)
	for i := 1; i < len(all); i++ {
		require.Less(t, all[i-1].Nr, all[i].Nr)
	}
	s, _ := SupportOf(SYS_BRK)
	require.Equal(t, NotModelled, s)
	s, _ = SupportOf(SYS_OPENAT)
	require.Equal(t, Supported, s)
	require.Equal(t, "partial", Partial.String())
}

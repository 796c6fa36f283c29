package sim

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

func TestVectorsRenameOwnersTimes(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/a", []byte("0123456789"))
	fd, _ := p.Open("/a", unix.O_RDWR, 0)
	x, y := make([]byte, 3), make([]byte, 4)
	n, err := p.Preadv(fd, [][]byte{x, y}, 2)
	require.NoError(t, err)
	require.Equal(t, 7, n)
	require.Equal(t, "234", string(x))
	require.Equal(t, "5678", string(y))
	n, err = p.Pwritev(fd, [][]byte{[]byte("ab"), []byte("cd")}, 8)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	var st unix.Stat_t
	require.NoError(t, p.Fstat(fd, &st))
	require.Equal(t, int64(12), st.Size)
	n, err = p.Writev(fd, [][]byte{[]byte("XY")})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, _ = p.Readv(fd, [][]byte{x})
	require.Equal(t, 3, n)
	require.Equal(t, "234", string(x))

	mkfile(t, p, "/b", nil)
	require.Equal(t, unix.EEXIST, p.Renameat2(unix.AT_FDCWD, "/a", unix.AT_FDCWD, "/b", unix.RENAME_NOREPLACE))
	require.NoError(t, p.Renameat2(unix.AT_FDCWD, "/a", unix.AT_FDCWD, "/b", unix.RENAME_EXCHANGE))
	require.Equal(t, unix.EINVAL, p.Renameat2(unix.AT_FDCWD, "/a", unix.AT_FDCWD, "/b", unix.RENAME_WHITEOUT))
	require.NoError(t, p.Stat("/b", &st))
	require.Equal(t, int64(12), st.Size)

	require.NoError(t, p.Chmod("/b", 0o600))
	require.NoError(t, p.Fchownat(unix.AT_FDCWD, "/b", 7, -1, 0))
	require.NoError(t, p.Fchown(fd, -1, 9))
	require.NoError(t, p.Stat("/b", &st))
	require.Equal(t, uint32(0o100600), st.Mode)
	require.Equal(t, uint32(7), st.Uid)
	require.Equal(t, uint32(9), st.Gid)
	require.Equal(t, unix.EINVAL, p.Fchownat(unix.AT_FDCWD, "/b", 0, 0, 1))

	ts := []unix.Timespec{{Sec: 100, Nsec: 5}, {Sec: 200, Nsec: unix.UTIME_OMIT}}
	require.NoError(t, p.UtimesNanoAt(unix.AT_FDCWD, "/b", ts, 0))
	require.NoError(t, p.Stat("/b", &st))
	require.Equal(t, unix.Timespec{Sec: 100, Nsec: 5}, st.Atim)
	require.NoError(t, p.UtimesNanoAt(fd, "", []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Sec: 300}}, unix.AT_EMPTY_PATH))
	require.NoError(t, p.Fstat(fd, &st))
	require.Equal(t, int64(300), st.Mtim.Sec)

	p.Sync()
	require.NoError(t, p.Syncfs(fd))
	require.NoError(t, p.Fallocate(fd, 0, 0, 8192))
	require.Equal(t, unix.EOPNOTSUPP, p.Fallocate(fd, 0x40, 0, 8192))
	require.NoError(t, p.Ftruncate(fd, 1))
	require.NoError(t, p.Truncate("/b", 0))
	require.Equal(t, unix.EINVAL, p.Truncate("/nope", -1))
}

func TestCloseRangeFadviseReadahead(t *testing.T) {
	_, p := newProc(t)
	mkfile(t, p, "/f", make([]byte, 10))
	for range 6 {
		p.Open("/f", unix.O_RDONLY, 0)
	}
	call := func(nr Sysno, a ...int64) Result {
		c := Call{Nr: nr}
		copy(c.Args[:], a)
		return p.Syscall(c)
	}
	require.Equal(t, Fail(unix.EINVAL), call(SYS_CLOSE_RANGE, 5, 2, 0))
	require.Equal(t, Result{}, call(SYS_CLOSE_RANGE, 4, 4, closeRangeCloexec))
	fl, _ := p.FcntlInt(4, unix.F_GETFD, 0)
	require.Equal(t, unix.FD_CLOEXEC, fl)
	require.Equal(t, Result{}, call(SYS_CLOSE_RANGE, 2, 3, 0))
	require.Equal(t, []int{0, 1, 4, 5}, p.Task().FDs())
	require.Equal(t, Result{}, call(SYS_CLOSE_RANGE, 1, -1, 0))
	require.Equal(t, []int{0}, p.Task().FDs())

	require.Equal(t, Result{}, call(SYS_FADVISE64, 0, 0, 0, unix.FADV_DONTNEED))
	require.Equal(t, Fail(unix.EINVAL), call(SYS_FADVISE64, 0, 0, 0, 9))
	require.Equal(t, Fail(unix.EBADF), call(SYS_FADVISE64, 9, 0, 0, 0))
	require.Equal(t, Result{}, call(SYS_READAHEAD, 0, 0, 100))
	require.Equal(t, Fail(unix.EBADF), call(SYS_READAHEAD, 9, 0, 100))
	d, _ := p.Open("/", unix.O_RDONLY, 0)
	require.Equal(t, Fail(unix.EINVAL), call(SYS_READAHEAD, int64(d), 0, 100))
}

func TestAccessors(t *testing.T) {
	k, p := newProc(t, WithNofile(50))
	require.Same(t, k, p.Handler())
	require.NotNil(t, k.FS())
	require.Equal(t, k.Now(), k.Clock().Now())
	g := p.Task().Group()
	require.Equal(t, p.Pid(), g.Pid())
	require.Equal(t, k.FS().Root(), g.Cwd())
	require.Equal(t, uint32(0o22), g.Umask())
	require.Equal(t, 50, g.Nofile())
	g.SetNofile(60)
	require.Equal(t, 60, g.Nofile())
	require.Same(t, k, p.Task().Kernel())
	mkfile(t, p, "/f", []byte("abc"))
	fd, _ := p.Open("/f", unix.O_RDWR|unix.O_APPEND, 0)
	f := p.Task().File(fd)
	require.Equal(t, unix.O_RDWR|unix.O_APPEND|oLargefile, f.Flags())
	require.Nil(t, f.Special())
	require.Equal(t, "/f", f.Inode().Path())
	p.Read(fd, make([]byte, 2))
	require.Equal(t, int64(2), f.Offset())
	var st unix.Stat_t
	require.NoError(t, p.Task().InstallSpecial(9, DevNull{}, unix.O_RDWR))
	require.NoError(t, p.Fstat(9, &st))
	require.Equal(t, uint32(vfs.S_IFCHR|0o666), st.Mode)
	require.Equal(t, uint64(1<<8|3), st.Rdev)
	now := k.Clock().Now()
	require.Equal(t, now, k.Clock().Advance(0), "Advance(0) leaves the clock")
	require.Equal(t, now, k.Clock().Advance(-5), "a negative Advance is ignored")
	require.Equal(t, now+7, k.Clock().Advance(7))
	require.Equal(t, now+7, k.Clock().Now())
}

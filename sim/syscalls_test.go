package sim

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// fixture: /d (dir), /d/f (4096 bytes), /d/sl -> "abcdef", and fds: rw (O_RDWR on
// /d/f), ro, wo, dfd (O_RDONLY on /d).
type fixture struct {
	k               *Kernel
	p               *Process
	rw, ro, wo, dfd int
}

func newFixture(t *testing.T, opts ...Option) *fixture {
	k, p := newProc(t, opts...)
	require.NoError(t, p.Mkdir("/d", 0o755))
	mkfile(t, p, "/d/f", make([]byte, 4096))
	require.NoError(t, p.Symlink("abcdef", "/d/sl"))
	fx := &fixture{k: k, p: p}
	var err error
	fx.rw, err = p.Open("/d/f", unix.O_RDWR, 0)
	require.NoError(t, err)
	fx.ro, _ = p.Open("/d/f", unix.O_RDONLY, 0)
	fx.wo, _ = p.Open("/d/f", unix.O_WRONLY, 0)
	fx.dfd, _ = p.Open("/d", unix.O_RDONLY, 0)
	return fx
}

func e2(_ int, err error) error    { return err }
func e64(_ int64, err error) error { return err }

// TestErrnoTable lists error paths with the errno this machine's kernel (Linux
// 6.18, ext4 and tmpfs) returned for the same call, checked with small programs
// using golang.org/x/sys/unix.
func TestErrnoTable(t *testing.T) {
	fx := newFixture(t)
	p := fx.p
	buf := make([]byte, 16)
	var st unix.Stat_t
	lk := func(typ int16, start, l int64) *unix.Flock_t { return &unix.Flock_t{Type: typ, Start: start, Len: l} }
	for _, tc := range []struct {
		name string
		do   func() error
		want error
	}{
		{"write O_RDONLY", func() error { return e2(p.Write(fx.ro, buf)) }, unix.EBADF},
		{"read O_WRONLY", func() error { return e2(p.Read(fx.wo, buf)) }, unix.EBADF},
		{"read 0 bytes O_WRONLY", func() error { return e2(p.Read(fx.wo, nil)) }, unix.EBADF},
		{"pread O_WRONLY", func() error { return e2(p.Pread(fx.wo, buf, 0)) }, unix.EBADF},
		{"pread negative", func() error { return e2(p.Pread(fx.rw, buf, -1)) }, unix.EINVAL},
		{"pread negative bad fd", func() error { return e2(p.Pread(99, buf, -1)) }, unix.EINVAL},
		{"pwrite negative", func() error { return e2(p.Pwrite(fx.rw, buf, -1)) }, unix.EINVAL},
		{"read dir", func() error { return e2(p.Read(fx.dfd, buf)) }, unix.EISDIR},
		{"read dir 0 bytes", func() error { return e2(p.Read(fx.dfd, nil)) }, unix.EISDIR},
		{"pread dir", func() error { return e2(p.Pread(fx.dfd, buf, 0)) }, unix.EISDIR},
		{"pread dir negative", func() error { return e2(p.Pread(fx.dfd, buf, -1)) }, unix.EINVAL},
		{"read bad fd", func() error { return e2(p.Read(99, buf)) }, unix.EBADF},
		{"lseek negative", func() error { return e64(p.Seek(fx.rw, -100, 0)) }, unix.EINVAL},
		{"lseek whence 7", func() error { return e64(p.Seek(fx.rw, 0, 7)) }, unix.EINVAL},
		{"lseek beyond s_maxbytes", func() error { return e64(p.Seek(fx.rw, 1<<62, 0)) }, unix.EINVAL},
		{"lseek cur negative", func() error { return e64(p.Seek(fx.rw, -1<<62, 1)) }, unix.EINVAL},
		{"lseek data past eof", func() error { return e64(p.Seek(fx.rw, 1<<20, unix.SEEK_DATA)) }, unix.ENXIO},
		{"lseek hole past eof", func() error { return e64(p.Seek(fx.rw, 1<<20, unix.SEEK_HOLE)) }, unix.ENXIO},
		{"lseek data negative", func() error { return e64(p.Seek(fx.rw, -1, unix.SEEK_DATA)) }, unix.ENXIO},
		{"ftruncate O_RDONLY", func() error { return p.Ftruncate(fx.ro, 0) }, unix.EINVAL},
		{"ftruncate negative", func() error { return p.Ftruncate(fx.rw, -1) }, unix.EINVAL},
		{"ftruncate dir", func() error { return p.Ftruncate(fx.dfd, 0) }, unix.EINVAL},
		{"truncate dir", func() error { return p.Truncate("/d", 0) }, unix.EISDIR},
		{"fallocate O_RDONLY", func() error { return p.Fallocate(fx.ro, 0, 0, 10) }, unix.EBADF},
		{"fallocate len 0", func() error { return p.Fallocate(fx.rw, 0, 0, 0) }, unix.EINVAL},
		{"fallocate dir", func() error { return p.Fallocate(fx.dfd, 0, 0, 10) }, unix.EBADF},
		{"getdents small", func() error { return e2(p.Getdents(fx.dfd, make([]byte, 10))) }, unix.EINVAL},
		{"getdents 23", func() error { return e2(p.Getdents(fx.dfd, make([]byte, 23))) }, unix.EINVAL},
		{"getdents file", func() error { return e2(p.Getdents(fx.rw, make([]byte, 100))) }, unix.ENOTDIR},
		{"getcwd small", func() error { return e2(p.Getcwd(make([]byte, 1))) }, unix.ERANGE},
		{"dup3 bad flags", func() error { return p.Dup3(fx.rw, 50, 1) }, unix.EINVAL},
		{"F_DUPFD -1", func() error { return e2(p.FcntlInt(uintptr(fx.rw), unix.F_DUPFD, -1)) }, unix.EINVAL},
		{"fcntl bad cmd", func() error { return e2(p.FcntlInt(uintptr(fx.rw), 9999, 0)) }, unix.EINVAL},
		{"fcntl bad fd", func() error { return e2(p.FcntlInt(99, unix.F_GETFD, 0)) }, unix.EBADF},
		{"F_SETLK wrlck on O_RDONLY", func() error { return p.FcntlFlock(uintptr(fx.ro), unix.F_SETLK, lk(unix.F_WRLCK, 0, 10)) }, unix.EBADF},
		{"F_SETLK rdlck on O_WRONLY", func() error { return p.FcntlFlock(uintptr(fx.wo), unix.F_SETLK, lk(unix.F_RDLCK, 0, 10)) }, unix.EBADF},
		{"F_SETLK negative len past 0", func() error { return p.FcntlFlock(uintptr(fx.rw), unix.F_SETLK, lk(unix.F_WRLCK, 5, -10)) }, unix.EINVAL},
		{"F_SETLK bad type", func() error { return p.FcntlFlock(uintptr(fx.rw), unix.F_SETLK, lk(7, 2, 10)) }, unix.EINVAL},
		{"F_GETLK F_UNLCK", func() error { return p.FcntlFlock(uintptr(fx.rw), unix.F_GETLK, lk(unix.F_UNLCK, 2, 10)) }, unix.EINVAL},
		{"F_OFD_SETLK pid != 0", func() error {
			return p.FcntlFlock(uintptr(fx.rw), unix.F_OFD_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Len: 1, Pid: 5})
		}, unix.EINVAL},
		{"F_SETLK bad whence", func() error {
			return p.FcntlFlock(uintptr(fx.rw), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: 3, Len: 1})
		}, unix.EINVAL},
		{"F_SETLK overflow", func() error { return p.FcntlFlock(uintptr(fx.rw), unix.F_SETLK, lk(unix.F_WRLCK, 10, math.MaxInt64)) }, unix.EOVERFLOW},
		{"flock 0", func() error { return p.Flock(fx.ro, 0) }, unix.EINVAL},
		{"flock 3", func() error { return p.Flock(fx.ro, 3) }, unix.EINVAL},
		{"flock bad fd", func() error { return p.Flock(99, unix.LOCK_SH) }, unix.EBADF},
		{"open dir O_WRONLY", func() error { return e2(p.Open("/d", unix.O_WRONLY, 0)) }, unix.EISDIR},
		{"open dir O_CREAT", func() error { return e2(p.Open("/d", unix.O_CREAT|unix.O_RDONLY, 0)) }, unix.EISDIR},
		{"open missing parent", func() error { return e2(p.Open("/d/nope/x", unix.O_RDONLY, 0)) }, unix.ENOENT},
		{"open file/", func() error { return e2(p.Open("/d/f/", unix.O_RDONLY, 0)) }, unix.ENOTDIR},
		{"open file/ O_CREAT", func() error { return e2(p.Open("/d/f/", unix.O_CREAT|unix.O_RDONLY, 0)) }, unix.EISDIR},
		{"open empty", func() error { return e2(p.Open("", unix.O_RDONLY, 0)) }, unix.ENOENT},
		{"openat bad dirfd", func() error { return e2(p.Openat(99, "x", unix.O_RDONLY, 0)) }, unix.EBADF},
		{"openat file dirfd", func() error { return e2(p.Openat(fx.rw, "x", unix.O_RDONLY, 0)) }, unix.ENOTDIR},
		{"open O_CREAT|O_DIRECTORY", func() error { return e2(p.Open("/d/new", unix.O_CREAT|unix.O_DIRECTORY, 0)) }, unix.EINVAL},
		{"open O_EXCL exists", func() error { return e2(p.Open("/d/f", unix.O_CREAT|unix.O_EXCL, 0)) }, unix.EEXIST},
		{"open O_DIRECTORY file", func() error { return e2(p.Open("/d/f", unix.O_DIRECTORY, 0)) }, unix.ENOTDIR},
		{"open O_NOFOLLOW symlink", func() error { return e2(p.Open("/d/sl", unix.O_NOFOLLOW, 0)) }, unix.ELOOP},
		{"readv 1025", func() error { return e2(p.Readv(fx.rw, make([][]byte, 1025))) }, unix.EINVAL},
		{"writev O_RDONLY", func() error { return e2(p.Writev(fx.ro, [][]byte{buf})) }, unix.EBADF},
		{"fstat bad fd", func() error { return p.Fstat(99, &st) }, unix.EBADF},
		{"fstatat empty", func() error { return p.Fstatat(fx.rw, "", &st, 0) }, unix.ENOENT},
		{"fstatat bad flag", func() error { return p.Fstatat(fx.rw, "x", &st, 0x10000000) }, unix.EINVAL},
		{"faccessat bad flags", func() error { return p.Faccessat(unix.AT_FDCWD, "/d/f", 0, 0x10000000) }, unix.EINVAL},
		{"access bad mode", func() error { return p.Access("/d/f", 8) }, unix.EINVAL},
		{"access X on 0644", func() error { return p.Access("/d/f", unix.X_OK) }, unix.EACCES},
		{"access missing", func() error { return p.Access("/nope", unix.F_OK) }, unix.ENOENT},
		{"unlinkat bad flags", func() error { return p.Unlinkat(unix.AT_FDCWD, "/d/f", 1) }, unix.EINVAL},
		{"rmdir file", func() error { return p.Rmdir("/d/f") }, unix.ENOTDIR},
		{"unlink dir", func() error { return p.Unlink("/d") }, unix.EISDIR},
		{"sync_file_range bad flags", func() error { return p.SyncFileRange(fx.rw, 0, 0, 8) }, unix.EINVAL},
		{"sync_file_range negative", func() error { return p.SyncFileRange(fx.rw, -1, 0, 0) }, unix.EINVAL},
		{"syncfs bad fd", func() error { return p.Syncfs(99) }, unix.EBADF},
		{"fsync bad fd", func() error { return p.Fsync(99) }, unix.EBADF},
		{"mmap odd offset", func() error { _, err := p.Mmap(fx.rw, 1, 4096, unix.PROT_READ, unix.MAP_SHARED); return err }, unix.EINVAL},
		{"mmap len 0", func() error { _, err := p.Mmap(fx.rw, 0, 0, unix.PROT_READ, unix.MAP_SHARED); return err }, unix.EINVAL},
		{"mmap O_WRONLY", func() error { _, err := p.Mmap(fx.wo, 0, 4096, unix.PROT_READ, unix.MAP_SHARED); return err }, unix.EACCES},
		{"mmap O_RDONLY shared write", func() error { _, err := p.Mmap(fx.ro, 0, 4096, unix.PROT_WRITE, unix.MAP_SHARED); return err }, unix.EACCES},
		{"mmap dir", func() error { _, err := p.Mmap(fx.dfd, 0, 4096, unix.PROT_READ, unix.MAP_SHARED); return err }, unix.ENODEV},
		{"mmap no type", func() error { _, err := p.Mmap(fx.rw, 0, 4096, unix.PROT_READ, 0); return err }, unix.EINVAL},
		{"mmap bad fd", func() error { _, err := p.Mmap(99, 0, 4096, unix.PROT_READ, unix.MAP_SHARED); return err }, unix.EBADF},
		{"munmap not mapped", func() error { return p.Munmap(make([]byte, 10)) }, unix.EINVAL},
		{"mkdir exists", func() error { return p.Mkdir("/d", 0o755) }, unix.EEXIST},
		{"rename into itself", func() error { return p.Rename("/d", "/d/x") }, unix.EINVAL},
		{"link dir", func() error { return p.Link("/d", "/d/y") }, unix.EPERM},
		{"chdir file", func() error { return p.Chdir("/d/f") }, unix.ENOTDIR},
		{"fchdir file", func() error { return p.Fchdir(fx.rw) }, unix.ENOTDIR},
		{"readlink not a link", func() error { return e2(p.Readlink("/d/f", buf)) }, unix.EINVAL},
		{"readlink empty buffer", func() error { return e2(p.Readlink("/d/sl", buf[:0])) }, unix.EINVAL},
		{"utimens len 1", func() error { return p.UtimesNanoAt(unix.AT_FDCWD, "/d/f", []unix.Timespec{{}}, 0) }, unix.EINVAL},
		{"utimens bad nsec", func() error { return p.UtimesNanoAt(unix.AT_FDCWD, "/d/f", []unix.Timespec{{Nsec: 2e9}, {}}, 0) }, unix.EINVAL},
		{"utimens bad flags", func() error { return p.UtimesNanoAt(unix.AT_FDCWD, "/d/f", nil, 1) }, unix.EINVAL},
		{"statx bad flags", func() error { return p.Statx(unix.AT_FDCWD, "/d/f", 0x80000000, 0, &unix.Statx_t{}) }, unix.EINVAL},
		{"statx reserved mask", func() error { return p.Statx(unix.AT_FDCWD, "/d/f", 0, 0x80000000, &unix.Statx_t{}) }, unix.EINVAL},
		{"close bad fd", func() error { return p.Close(99) }, unix.EBADF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, tc.do())
		})
	}
}

// TestSuccessPaths checks the answers of calls that succeed in surprising ways.
func TestSuccessPaths(t *testing.T) {
	fx := newFixture(t)
	p := fx.p
	fl, err := p.FcntlInt(uintptr(fx.rw), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Equal(t, 0x8002, fl) // O_RDWR|O_LARGEFILE, as the kernel reports it
	// F_SETFL changes only the SETFL_MASK bits; the access mode and O_SYNC are ignored.
	_, err = p.FcntlInt(uintptr(fx.rw), unix.F_SETFL, unix.O_APPEND|unix.O_RDONLY|unix.O_SYNC)
	require.NoError(t, err)
	fl, _ = p.FcntlInt(uintptr(fx.rw), unix.F_GETFL, 0)
	require.Equal(t, 0x8402, fl)
	// pwrite on O_APPEND appends and leaves the offset.
	p.Seek(fx.rw, 10, 0)
	n, err := p.Pwrite(fx.rw, []byte("abc"), 0)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	off, _ := p.Seek(fx.rw, 0, 1)
	require.Equal(t, int64(10), off)
	var st unix.Stat_t
	require.NoError(t, p.Fstat(fx.rw, &st))
	require.Equal(t, int64(4099), st.Size)
	// write on O_APPEND moves the offset to the new end.
	n, _ = p.Write(fx.rw, []byte("z"))
	require.Equal(t, 1, n)
	off, _ = p.Seek(fx.rw, 0, 1)
	require.Equal(t, int64(4100), off)
	// SEEK_CUR with an invalid result leaves the offset.
	_, err = p.Seek(fx.rw, -1<<40, 1)
	require.Equal(t, unix.EINVAL, err)
	off, _ = p.Seek(fx.rw, 0, 1)
	require.Equal(t, int64(4100), off)
	// Directories seek like ext4 htree directories.
	off, err = p.Seek(fx.dfd, 0, unix.SEEK_END)
	require.NoError(t, err)
	require.Equal(t, int64(math.MaxInt64), off)
	off, _ = p.Seek(fx.dfd, 5, 0)
	require.Equal(t, int64(5), off)
	off, _ = p.Seek(fx.dfd, 0, unix.SEEK_DATA)
	require.Equal(t, int64(0), off)
	// fsync of a directory and fdatasync of a read-only fd are fine.
	require.NoError(t, p.Fsync(fx.dfd))
	require.NoError(t, p.Fdatasync(fx.ro))
	require.NoError(t, p.SyncFileRange(fx.ro, 0, 0, 2))
	// Access mode 3 opens (neither read nor write).
	fd, err := p.Open("/d/f", 3, 0)
	require.NoError(t, err)
	_, err = p.Read(fd, make([]byte, 1))
	require.Equal(t, unix.EBADF, err)
	_, err = p.Write(fd, make([]byte, 1))
	require.Equal(t, unix.EBADF, err)
	// Openat ignores the dirfd for an absolute path.
	_, err = p.Openat(99, "/d/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
	// readv of nothing is 0.
	n, err = p.Readv(fx.rw, nil)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	// fstatat AT_EMPTY_PATH stats the fd.
	require.NoError(t, p.Fstatat(fx.rw, "", &st, unix.AT_EMPTY_PATH))
	require.Equal(t, int64(4100), st.Size)
	// readlink truncates silently.
	buf := make([]byte, 3)
	n, err = p.Readlink("/d/sl", buf)
	require.NoError(t, err)
	require.Equal(t, "abc", string(buf[:n]))
	// fchmod works on an O_RDONLY fd.
	require.NoError(t, p.Fchmod(fx.ro, 0o600))
	require.NoError(t, p.Stat("/d/f", &st))
	require.Equal(t, uint32(0o100600), st.Mode)
	require.NoError(t, p.Lstat("/d/sl", &st))
	require.Equal(t, uint32(vfs.S_IFLNK|0o777), st.Mode)
	require.Equal(t, 022, p.Umask(022))
	var sx unix.Statx_t
	require.NoError(t, p.Statx(unix.AT_FDCWD, "/d/f", 0, unix.STATX_BASIC_STATS, &sx))
	require.Equal(t, uint32(0x17ff), sx.Mask)
	require.Equal(t, uint64(4100), sx.Size)
}

func TestUmaskAndCreat(t *testing.T) {
	_, p := newProc(t)
	require.Equal(t, 0o22, p.Umask(0o27))
	fd, err := p.Creat("/c", 0o666)
	require.NoError(t, err)
	fl, _ := p.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.Equal(t, unix.O_WRONLY|oLargefile, fl)
	var st unix.Stat_t
	require.NoError(t, p.Fstat(fd, &st))
	require.Equal(t, uint32(0o100640), st.Mode)
	require.NoError(t, p.Mkdir("/m", 0o777))
	require.NoError(t, p.Stat("/m", &st))
	require.Equal(t, uint32(0o40750), st.Mode)
}

func TestGetcwdChdir(t *testing.T) {
	_, p := newProc(t)
	buf := make([]byte, 64)
	n, err := p.Getcwd(buf)
	require.NoError(t, err)
	require.Equal(t, 2, n) // "/" and the NUL
	require.Equal(t, "/\x00", string(buf[:n]))
	require.NoError(t, p.Mkdir("/a", 0o755))
	require.NoError(t, p.Mkdir("/a/b", 0o755))
	require.NoError(t, p.Chdir("/a/b"))
	n, _ = p.Getcwd(buf)
	require.Equal(t, "/a/b\x00", string(buf[:n]))
	_, err = p.Getcwd(buf[:4])
	require.Equal(t, unix.ERANGE, err)
	n, err = p.Getcwd(buf[:5])
	require.NoError(t, err)
	require.Equal(t, 5, n)
	// Relative paths resolve from the cwd.
	mkfile(t, p, "rel", []byte("x"))
	var st unix.Stat_t
	require.NoError(t, p.Stat("/a/b/rel", &st))
	dfd, _ := p.Open("/a", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, p.Fchdir(dfd))
	n, _ = p.Getcwd(buf)
	require.Equal(t, "/a\x00", string(buf[:n]))
	// openat relative to a dirfd.
	fd, err := p.Openat(dfd, "b/rel", unix.O_RDONLY, 0)
	require.NoError(t, err)
	require.NoError(t, p.Close(fd))
	// A removed cwd: getcwd is ENOENT.
	require.NoError(t, p.Chdir("/a/b"))
	require.NoError(t, p.Unlink("/a/b/rel"))
	require.NoError(t, p.Rmdir("/a/b"))
	_, err = p.Getcwd(buf)
	require.Equal(t, unix.ENOENT, err)
}

func TestGetdents(t *testing.T) {
	_, p := newProc(t)
	require.NoError(t, p.Mkdir("/d", 0o755))
	for _, n := range []string{"b", "a", "ccc"} {
		mkfile(t, p, "/d/"+n, nil)
	}
	require.NoError(t, p.Mkdir("/d/sub", 0o755))
	dfd, _ := p.Open("/d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	type ent struct {
		name string
		typ  uint8
		off  int64
	}
	decode := func(b []byte) []ent {
		var out []ent
		for len(b) > 0 {
			reclen := binary.LittleEndian.Uint16(b[16:])
			require.Zero(t, reclen%8)
			name := b[19:reclen]
			for i, c := range name {
				if c == 0 {
					name = name[:i]
					break
				}
			}
			out = append(out, ent{string(name), b[18], int64(binary.LittleEndian.Uint64(b[8:]))})
			b = b[reclen:]
		}
		return out
	}
	// A buffer that holds two entries (24 bytes each) at a time.
	buf := make([]byte, 48)
	var all []ent
	for {
		n, err := p.Getdents(dfd, buf)
		require.NoError(t, err)
		if n == 0 {
			break
		}
		all = append(all, decode(buf[:n])...)
	}
	require.Equal(t, []ent{
		{".", vfs.DT_DIR, 1}, {"..", vfs.DT_DIR, 2}, {"a", vfs.DT_REG, 3},
		{"b", vfs.DT_REG, 4}, {"ccc", vfs.DT_REG, 5}, {"sub", vfs.DT_DIR, math.MaxInt64},
	}, all)
	off, _ := p.Seek(dfd, 0, 1)
	require.Equal(t, int64(math.MaxInt64), off)
	// Rewind and read again, in one go.
	p.Seek(dfd, 0, 0)
	big := make([]byte, 4096)
	n, err := p.Getdents(dfd, big)
	require.NoError(t, err)
	require.Len(t, decode(big[:n]), 6)
	// Resuming at a d_off.
	p.Seek(dfd, 4, 0)
	n, _ = p.Getdents(dfd, big)
	require.Equal(t, []ent{{"ccc", vfs.DT_REG, 5}, {"sub", vfs.DT_DIR, math.MaxInt64}}, decode(big[:n]))
}

func TestODirect(t *testing.T) {
	_, p := newProc(t, WithDirectIOMemAlign(LogicalBlockSize))
	mkfile(t, p, "/f", make([]byte, 8192))
	fd, err := p.Open("/f", unix.O_RDWR|unix.O_DIRECT, 0)
	require.NoError(t, err)
	raw := make([]byte, 8192)
	al := alignedBlock(raw, 0)
	n, err := p.Pread(fd, al, 0)
	require.NoError(t, err)
	require.Equal(t, 512, n)
	_, err = p.Pread(fd, al, 1)
	require.Equal(t, unix.EINVAL, err)
	_, err = p.Pread(fd, al[:100], 0)
	require.Equal(t, unix.EINVAL, err)
	_, err = p.Pread(fd, alignedBlock(raw, 1), 0)
	require.Equal(t, unix.EINVAL, err)
	n, err = p.Pread(fd, al, 1<<20)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	n, err = p.Pread(fd, al[:0], 1)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	_, err = p.Pwrite(fd, al[:100], 0)
	require.Equal(t, unix.EINVAL, err)
	n, err = p.Pwrite(fd, al, 512)
	require.NoError(t, err)
	require.Equal(t, 512, n)
	// Directories cannot be opened O_DIRECT.
	_, err = p.Open("/", unix.O_RDONLY|unix.O_DIRECT, 0)
	require.Equal(t, unix.EINVAL, err)
	// Empty vectors succeed without an alignment check.
	n, err = p.Pwritev(fd, [][]byte{{}}, 100)
	require.NoError(t, err)
	require.Equal(t, 0, n)
	// Without direct I/O support, the open fails (after creating the file).
	k2 := New(vfs.New(vfs.WithDirectIO(false)))
	p2 := k2.Spawn()
	_, err = p2.Open("/x", unix.O_CREAT|unix.O_RDWR|unix.O_DIRECT, 0o644)
	require.Equal(t, unix.EINVAL, err)
	var st unix.Stat_t
	require.NoError(t, p2.Stat("/x", &st))
	fd2, _ := p2.Open("/x", unix.O_RDWR, 0)
	_, err = p2.FcntlInt(uintptr(fd2), unix.F_SETFL, unix.O_DIRECT)
	require.Equal(t, unix.EINVAL, err)
	// By default, as on the reference machine, a misaligned buffer is fine within
	// one page and EINVAL across a page boundary.
	_, p3 := newProc(t)
	mkfile(t, p3, "/f", make([]byte, 8192))
	fd3, _ := p3.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
	big := make([]byte, 3*PageSize)
	base := (PageSize - int(addrOf(big)%PageSize)) % PageSize
	n, err = p3.Pread(fd3, big[base+1:base+1+512], 0)
	require.NoError(t, err)
	require.Equal(t, 512, n)
	_, err = p3.Pread(fd3, big[base+4:base+4+4096], 0)
	require.Equal(t, unix.EINVAL, err)
	n, err = p3.Pread(fd3, big[base+512:base+512+4096], 0)
	require.NoError(t, err)
	require.Equal(t, 4096, n)
}

// alignedBlock returns a 512-byte slice of raw whose address is 512-aligned plus skew.
func alignedBlock(raw []byte, skew int) []byte {
	for i := range 512 {
		b := raw[i:]
		if addrOf(b)%512 == 0 {
			return b[skew : skew+512]
		}
	}
	panic("no alignment")
}

func TestOPath(t *testing.T) {
	fx := newFixture(t)
	p := fx.p
	fd, err := p.Open("/d/f", unix.O_PATH, 0)
	require.NoError(t, err)
	fl, err := p.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Equal(t, unix.O_PATH, fl)
	var st unix.Stat_t
	require.NoError(t, p.Fstat(fd, &st))
	_, err = p.FcntlInt(uintptr(fd), unix.F_DUPFD, 0)
	require.NoError(t, err)
	_, err = p.FcntlInt(uintptr(fd), unix.F_SETFL, 0)
	require.Equal(t, unix.EBADF, err)
	require.Equal(t, unix.EBADF, p.Fsync(fd))
	require.Equal(t, unix.EBADF, p.Flock(fd, unix.LOCK_SH))
	_, err = p.Seek(fd, 0, 0)
	require.Equal(t, unix.EBADF, err)
	_, err = p.Read(fd, make([]byte, 1))
	require.Equal(t, unix.EBADF, err)
	require.Equal(t, unix.EBADF, p.Fchmod(fd, 0o600))
	_, err = p.Mmap(fd, 0, 10, unix.PROT_READ, unix.MAP_SHARED)
	require.Equal(t, unix.EBADF, err)
	// Both times omitted: 0 even for a missing path.
	omit := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
	require.NoError(t, p.UtimesNanoAt(unix.AT_FDCWD, "/missing", omit, 0))
	require.Equal(t, unix.EOPNOTSUPP, p.Fchmodat(unix.AT_FDCWD, "/d/sl", 0o600, unix.AT_SYMLINK_NOFOLLOW))
	require.Equal(t, unix.EINVAL, p.Linkat(unix.AT_FDCWD, "/d/f", unix.AT_FDCWD, "/d/l2", 1))
	require.NoError(t, p.Access("/d/f", unix.W_OK))
}

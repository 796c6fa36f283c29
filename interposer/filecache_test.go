package interposer_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestFileCacheConcurrent: threads of two processes read the cached file through
// their own fds while another thread rewrites it in place with the same bytes and
// grows/shrinks a second file; every read must see the file's bytes (run with -race).
func TestFileCacheConcurrent(t *testing.T) {
	_, k, p := newWorld(t)
	fc := interposer.NewFileCache(k, msbPath, otherPath)
	want := content(1, msbSize)
	q := p.Through(fc)
	child := q.Fork()
	var wg sync.WaitGroup
	for i := range 6 {
		th := q.NewThread()
		if i%2 == 1 {
			th = child.NewThread()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 4096)
			for range 50 {
				fd, err := th.Open(msbPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
				if err != nil {
					t.Error(err)
					return
				}
				var got []byte
				for {
					n, err := th.Read(fd, buf)
					if err != nil {
						t.Error(err)
						return
					}
					if n == 0 {
						break
					}
					got = append(got, buf[:n]...)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("read %d bytes, not the file", len(got))
				}
				if err := th.Close(fd); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	w := q.NewThread()
	wg.Add(1)
	go func() {
		defer wg.Done()
		rewrite(t, w, want, 50)
	}()
	wg.Wait()
	st := fc.Stats()
	t.Logf("%+v", st)
	if st.Served == 0 {
		t.Fatal("nothing served")
	}
}

// rewrite writes the cached file's own bytes over its first n*100 bytes through
// w, 100 at a time: readers never see a difference, and each write drops the
// cache's copy.
func rewrite(t *testing.T, w *sim.Process, want []byte, n int) {
	fd, err := w.Open(msbPath, unix.O_RDWR, 0)
	if err != nil {
		t.Error(err)
		return
	}
	for i := range n {
		if _, err := w.Pwrite(fd, want[i*100:i*100+100], int64(i*100)); err != nil {
			t.Error(err)
		}
	}
	if err := w.Close(fd); err != nil {
		t.Error(err)
	}
}

// TestFileCacheNames: the file is served however it is named, and a rename over it
// is seen at once.
func TestFileCacheNames(t *testing.T) {
	_, k, p := newWorld(t)
	fc := interposer.NewFileCache(k, msbPath)
	q := p.Through(fc)
	p.Link(msbPath, "/ora/hard")
	p.Chdir("/ora")
	buf := make([]byte, 16)
	for _, name := range []string{msbPath, "mesg/oraus.msb", "./mesg/../mesg/oraus.msb", "/msb.link", "/ora/hard", "hard"} {
		for range 2 { // the second open of a name is served
			fd, err := q.Open(name, unix.O_RDONLY, 0)
			if err != nil {
				t.Fatal(name, err)
			}
			if n, _ := q.Read(fd, buf); n != 16 || !bytes.Equal(buf, content(1, 16)) {
				t.Fatalf("%s: %q", name, buf)
			}
			q.Close(fd)
		}
	}
	before := fc.Stats()
	if err := q.Rename(otherPath, msbPath); err != nil {
		t.Fatal(err)
	}
	fd, _ := q.Open(msbPath, unix.O_RDONLY, 0)
	if n, _ := q.Read(fd, buf); n != 16 || !bytes.Equal(buf, content(2, 16)) {
		t.Fatalf("after rename: %q", buf)
	}
	t.Logf("before rename %+v, after %+v", before, fc.Stats())
	if before.Served < 12 {
		t.Fatalf("served %d calls", before.Served)
	}
}

// TestFileCacheNotifyInstalled: an fd installed outside the stack (as the strace
// replayer does) replaces a virtual fd once the cache is told.
func TestFileCacheNotifyInstalled(t *testing.T) {
	_, k, p := newWorld(t)
	fc := interposer.NewFileCache(k, msbPath)
	q := p.Through(fc)
	q.Open(msbPath, unix.O_RDONLY, 0)          // 3: learnt, served
	fd, _ := q.Open(msbPath, unix.O_RDONLY, 0) // 4: virtual, not in the kernel
	if err := p.Task().InstallSpecial(fd, sim.DevNull{}, unix.O_RDWR); err != nil {
		t.Fatal(err)
	}
	interposer.NotifyInstalled(q.Handler(), p.Task(), fd)
	var st unix.Stat_t
	if err := q.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFCHR {
		t.Fatalf("fstat(%d): mode %o, %v: want the installed /dev/null", fd, st.Mode, err)
	}
	if n, err := q.Read(3, make([]byte, 10)); n != 10 || err != nil {
		t.Fatalf("read(3): %d %v", n, err)
	}
}

// TestFileCacheWorldChanged: a change made to a cached file below every layer (a
// replayer's inference) reaches the program through the cache once the layers are
// told (sim.NotifyWorldChanged); ServedFd names the file and offset of a served fd.
func TestFileCacheWorldChanged(t *testing.T) {
	fs, p, q, fd := servedFd(t)
	buf := make([]byte, 4)
	_, err := q.Pread(fd, buf, 0)
	require.NoError(t, err)
	require.Equal(t, content(1, msbSize)[:4], buf)

	ino, err := fs.Root().Resolve(msbPath, true)
	require.NoError(t, err)
	_, err = ino.WriteAt([]byte("WXYZ"), 0)
	require.NoError(t, err)
	_, err = q.Pread(fd, buf, 0)
	require.NoError(t, err)
	require.Equal(t, content(1, msbSize)[:4], buf, "not told: the cache serves its copy")

	sim.NotifyWorldChanged(q.Handler(), ino.Ino())
	_, err = q.Pread(fd, buf, 0)
	require.NoError(t, err)
	require.Equal(t, []byte("WXYZ"), buf)

	_, err = q.Read(fd, buf[:3])
	require.NoError(t, err)
	got, off, ok := sim.ServedFd(q.Handler(), p.Task(), fd)
	require.True(t, ok)
	require.Equal(t, ino.Ino(), got)
	require.EqualValues(t, 3, off)
	other, err := q.Open(otherPath, unix.O_RDONLY, 0)
	require.NoError(t, err)
	_, _, ok = sim.ServedFd(q.Handler(), p.Task(), other)
	require.False(t, ok, "a file the cache does not hold is not served")
}

// TestFileCacheSendfileFromServedFd: sendfile's in_fd (its second argument) may be
// an fd the cache serves: the call reaches the kernel through the fd's twin and
// copies the file's bytes.
func TestFileCacheSendfileFromServedFd(t *testing.T) {
	_, p, q, in := servedFd(t)
	out, err := q.Open("/copy", unix.O_RDWR|unix.O_CREAT, 0o644)
	require.NoError(t, err)
	r := q.Handler().Syscall(&sim.Call{Nr: sim.SYS_SENDFILE, Task: p.Task(), Args: [6]int64{int64(out), int64(in), sim.NullOffset, 8}})
	require.Zero(t, r.Errno)
	require.EqualValues(t, 8, r.Ret)
	buf := make([]byte, 8)
	_, err = q.Pread(out, buf, 0)
	require.NoError(t, err)
	require.Equal(t, content(1, msbSize)[:8], buf)
}

// servedFd returns a process through a FileCache of msbPath and an fd of the file
// that the cache serves (the kernel does not hold it).
func servedFd(t *testing.T) (*vfs.FS, *sim.Process, *sim.Process, int) {
	fs, k, p := newWorld(t)
	q := p.Through(interposer.NewFileCache(k, msbPath))
	_, err := q.Open(msbPath, unix.O_RDONLY, 0) // reaches the kernel
	require.NoError(t, err)
	fd, err := q.Open(msbPath, unix.O_RDONLY, 0) // served
	require.NoError(t, err)
	require.Nil(t, p.Task().File(fd), "the kernel does not hold the served fd")
	return fs, p, q, fd
}

// TestFileCacheVirtualDirfd: a served (virtual) fd given as the directory of
// a relative path answers as the kernel would for that file, ENOTDIR, for
// symlinkat too, whose relative path is the link's, not the target's.
func TestFileCacheVirtualDirfd(t *testing.T) {
	_, k, p := newWorld(t)
	fc := interposer.NewFileCache(k, msbPath)
	q := p.Through(fc)
	q.Open(msbPath, unix.O_RDONLY, 0)          // learnt
	fd, _ := q.Open(msbPath, unix.O_RDONLY, 0) // virtual: the kernel does not hold it
	require.Equal(t, unix.ENOTDIR, q.Symlinkat("/abs/target", fd, "link"))
	require.Equal(t, unix.ENOTDIR, q.Symlinkat("rel/target", fd, "link"))
	require.Equal(t, unix.ENOTDIR, q.Mkdirat(fd, "d", 0o755))
}

// TestFileCacheVirtualDirfdEveryCall: every call with a dirfd (from the
// syscall table, fchmodat2 included) sees a served fd as the file it is.
func TestFileCacheVirtualDirfdEveryCall(t *testing.T) {
	_, k, p := newWorld(t)
	fc := interposer.NewFileCache(k, msbPath)
	q := p.Through(fc)
	q.Open(msbPath, unix.O_RDONLY, 0)
	fd, _ := q.Open(msbPath, unix.O_RDONLY, 0)
	r := q.Syscall(sim.Call{Nr: sim.SYS_FCHMODAT2, Args: [6]int64{int64(fd), 0, 0o600, 0}, Path: "x"})
	require.Equal(t, unix.ENOTDIR, r.Errno)
	// an absolute path ignores the dirfd
	r = q.Syscall(sim.Call{Nr: sim.SYS_FCHMODAT2, Args: [6]int64{int64(fd), 0, 0o644, 0}, Path: msbPath})
	require.Zero(t, r.Errno)
}

// TestFileCachePipeBesideServedFd: pipe2, socketpair and memfd_create through
// the cache give fds other than the served one, whose number the kernel thinks
// free, and openat2 opens as openat does.
func TestFileCachePipeBesideServedFd(t *testing.T) {
	_, _, q, in := servedFd(t)
	var fds [2]int
	require.NoError(t, q.Pipe2(&fds, 0))
	require.NotContains(t, fds[:], in)
	require.NotEqual(t, fds[0], fds[1])
	n, err := q.Write(fds[1], []byte("ab"))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	sp, err := q.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	require.NotContains(t, sp[:], in)
	buf := make([]byte, 8)
	n, err = q.Read(in, buf)
	require.NoError(t, err, "the served fd still reads the file")
	require.Equal(t, content(1, msbSize)[:8], buf[:n])
	r := q.Syscall(sim.Call{Nr: sim.SYS_MEMFD_CREATE, Path: "m"})
	require.Zero(t, r.Errno)
	require.NotContains(t, append(sp[:], fds[0], fds[1], in), int(r.Ret))
	fd, err := q.Openat2(unix.AT_FDCWD, msbPath, &unix.OpenHow{Flags: unix.O_RDONLY, Resolve: unix.RESOLVE_NO_SYMLINKS})
	require.NoError(t, err)
	require.NotContains(t, append(sp[:], fds[0], fds[1], in, int(r.Ret)), fd)
}

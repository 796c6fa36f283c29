package interposer_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

// soleScript runs calls on the cached file through q that a sole thread's fast
// path serves (read, pread64, lseek, fcntl F_GETFD/F_SETFD/F_GETFL) and the cases
// where it must give way to the locked path (errors, SEEK_DATA/SEEK_HOLE, a
// description shared by dup or fork, a materialized fd, data dropped by a write),
// and returns a line per call: its result and the bytes it read.
func soleScript(t *testing.T, q *sim.Process) []string {
	var log []string
	rec := func(what string, r sim.Result, b []byte) {
		log = append(log, fmt.Sprintf("%s = %d %v %x", what, r.Ret, r.Errno, b))
	}
	buf := make([]byte, 700)
	read := func(q *sim.Process, fd int, n int) {
		r := q.Syscall(sim.Call{Nr: sim.SYS_READ, Args: [6]int64{int64(fd), 0, int64(n)}, Buf: buf[:n]})
		rec(fmt.Sprintf("read(%d, %d)", fd, n), r, buf[:max(r.Ret, 0)])
	}
	pread := func(q *sim.Process, fd int, n int, off int64) {
		r := q.Syscall(sim.Call{Nr: sim.SYS_PREAD64, Args: [6]int64{int64(fd), 0, int64(n), off}, Buf: buf[:n]})
		rec(fmt.Sprintf("pread(%d, %d, %d)", fd, n, off), r, buf[:max(r.Ret, 0)])
	}
	seek := func(q *sim.Process, fd int, off int64, whence int) {
		r := q.Syscall(sim.Call{Nr: sim.SYS_LSEEK, Args: [6]int64{int64(fd), off, int64(whence)}})
		rec(fmt.Sprintf("lseek(%d, %d, %d)", fd, off, whence), r, nil)
	}
	fcntl := func(q *sim.Process, fd int, cmd, arg int) {
		r := q.Syscall(sim.Call{Nr: sim.SYS_FCNTL, Args: [6]int64{int64(fd), int64(cmd), int64(arg)}})
		rec(fmt.Sprintf("fcntl(%d, %d, %d)", fd, cmd, arg), r, nil)
	}
	first, err := q.Open(msbPath, unix.O_RDONLY, 0) // reaches the kernel: the cache learns the path
	require.NoError(t, err)
	fd, err := q.Open(msbPath, unix.O_RDONLY, 0) // served: a virtual fd
	require.NoError(t, err)
	read(q, fd, 256)
	read(q, fd, 700)
	// Opens of a (path, flags) after the first are served, at the lowest free fd.
	var keep []int
	for i, fl := range []int{unix.O_RDONLY, unix.O_CLOEXEC, unix.O_CLOEXEC, unix.O_NOFOLLOW, unix.O_NOFOLLOW | unix.O_CLOEXEC, unix.O_NOFOLLOW | unix.O_CLOEXEC} {
		o, err := q.Open(msbPath, fl, 0)
		require.NoError(t, err)
		rec(fmt.Sprintf("open %#x", fl), sim.Result{Ret: int64(o)}, nil)
		fcntl(q, o, unix.F_GETFD, 0)
		pread(q, o, 8, int64(i))
		if i%2 == 0 {
			require.NoError(t, q.Close(o))
		} else {
			keep = append(keep, o)
		}
	}
	for _, o := range keep {
		require.NoError(t, q.Close(o))
	}
	for _, s := range [][2]int64{
		{512, unix.SEEK_SET}, {0, unix.SEEK_CUR}, {100, unix.SEEK_CUR}, {-50, unix.SEEK_CUR},
		{-100, unix.SEEK_END}, {0, unix.SEEK_END}, {10, unix.SEEK_END}, {-1, unix.SEEK_SET},
		{-1 << 62, unix.SEEK_CUR}, {1 << 62, unix.SEEK_END}, {1 << 62, unix.SEEK_SET},
		{0, unix.SEEK_DATA}, {10, unix.SEEK_HOLE}, {0, 7}, {msbSize - 20, unix.SEEK_SET},
	} {
		seek(q, fd, s[0], int(s[1]))
	}
	read(q, fd, 700) // short: 20 bytes before EOF
	read(q, fd, 700) // EOF
	pread(q, fd, 300, 1000)
	pread(q, fd, 300, msbSize-100)
	pread(q, fd, 300, msbSize+5)
	pread(q, fd, 300, -1)
	fcntl(q, fd, unix.F_GETFD, 0)
	fcntl(q, fd, unix.F_SETFD, unix.FD_CLOEXEC)
	fcntl(q, fd, unix.F_GETFD, 0)
	fcntl(q, fd, unix.F_GETFL, 0)
	fcntl(q, fd, unix.F_SETFL, unix.O_NONBLOCK)
	fcntl(q, fd, unix.F_GETFL, 0)
	fcntl(q, fd, unix.F_SETFD, 0)

	// A dup shares the description (and its offset): neither fd is served alone.
	seek(q, fd, 64, unix.SEEK_SET)
	dup, err := q.Dup(fd)
	require.NoError(t, err)
	read(q, dup, 100)
	read(q, fd, 100)
	seek(q, dup, 0, unix.SEEK_CUR)
	fcntl(q, dup, unix.F_GETFL, 0)
	require.NoError(t, q.Close(dup))
	read(q, fd, 100) // the description is the fd's alone again

	// A fork shares it with the child process.
	child := q.Fork()
	require.NotNil(t, child)
	read(child, fd, 10)
	read(q, fd, 10)
	seek(child, fd, 5, unix.SEEK_CUR)
	require.NoError(t, child.Close(fd))
	child.Exit()
	read(q, fd, 10)

	// A write drops the data; the next read loads it again.
	w, err := q.Open(msbPath, unix.O_RDWR, 0)
	require.NoError(t, err)
	_, err = q.Pwrite(w, []byte("sole"), 2000)
	require.NoError(t, err)
	require.NoError(t, q.Close(w))
	pread(q, fd, 8, 1998)
	seek(q, fd, 0, unix.SEEK_END)

	// A delegated call materializes the fd: F_SETFD must reach the kernel's twin.
	require.NoError(t, q.Fsync(fd))
	fcntl(q, fd, unix.F_SETFD, unix.FD_CLOEXEC)
	fcntl(q, fd, unix.F_GETFD, 0)
	seek(q, fd, 3000, unix.SEEK_SET)
	read(q, fd, 16)
	require.NoError(t, q.Close(fd))
	require.NoError(t, q.Close(first))
	return log
}

// TestFileCacheSoleThreadMatchesLocked: what a sole thread's calls get without
// the cache's lock (FileCache's fast path) is what the locked path gives — the
// same results, bytes, counters and virtual time, with the constant cost model
// and with a device's time model. The locked side runs the same script with a
// second, idle thread in the process, which rules the fast path out.
func TestFileCacheSoleThreadMatchesLocked(t *testing.T) {
	nvme, err := device.Lookup("nvme")
	require.NoError(t, err)
	for _, opts := range [][]sim.Option{nil, {sim.WithDevice(nvme)}} {
		testSoleMatchesLocked(t, opts)
	}
}

func testSoleMatchesLocked(t *testing.T, opts []sim.Option) {
	type outcome struct {
		log                   []string
		served, passed, extra int64
		clock, task           int64
	}
	run := func(sole bool) outcome {
		_, k, p := newWorld(t, opts...)
		fc := interposer.NewFileCache(k, msbPath)
		q := p.Through(fc)
		th := q.NewThread()
		require.NotNil(t, th)
		if sole {
			th.Syscall(sim.Call{Nr: sim.SYS_EXIT})
			require.True(t, q.Task().SoleThread())
		} else {
			q.Getpid() // the call the other side's thread made to exit
			require.False(t, q.Task().SoleThread())
		}
		st0, clock0, task0 := fc.Stats(), k.Now(), q.Task().Now()
		log := soleScript(t, q)
		st := fc.Stats()
		return outcome{log, st.Served - st0.Served, st.Passed - st0.Passed, st.Extra - st0.Extra,
			k.Now() - clock0, q.Task().Now() - task0}
	}
	sole, locked := run(true), run(false)
	require.Equal(t, locked.log, sole.log)
	require.Equal(t, locked, sole)
	require.Greater(t, sole.served, int64(30), "the script is served from memory")
}

// TestFileCacheServedCount: once the loop's file is learnt, every call of seed
// 000's loop is served and counted once, by a sole thread and by the threads of
// a process with two.
func TestFileCacheServedCount(t *testing.T) {
	for _, threads := range []int{1, 2} {
		_, k, p := newWorld(t)
		cnt := interposer.NewCount(k)
		fc := interposer.NewFileCache(cnt, msbPath)
		q := p.Through(fc)
		if threads == 2 {
			require.NotNil(t, q.NewThread())
		}
		buf := make([]byte, 1024)
		seedLoop(t, q, buf)
		before, kernel := fc.Stats(), cnt.Total()
		for range 10 {
			seedLoop(t, q, buf)
		}
		st := fc.Stats()
		require.Equal(t, int64(110), st.Served-before.Served, "threads %d", threads)
		require.Equal(t, before.Passed, st.Passed, "threads %d", threads)
		require.Equal(t, kernel, cnt.Total(), "threads %d", threads)
	}
}

// TestFileCacheSoleThreadsConcurrent: single-threaded processes, each on its own
// goroutine, read the cached file through the fast path — their own fds, and a
// description they share, which each closes in turn, so the last holds it alone —
// while another process rewrites the file in place with the same bytes, which
// drops the cached data again and again. Every read must see the file's bytes
// (run with -race).
func TestFileCacheSoleThreadsConcurrent(t *testing.T) {
	_, k, p := newWorld(t)
	fc := interposer.NewFileCache(k, msbPath)
	want := content(1, msbSize)
	q := p.Through(fc)
	fd0, err := q.Open(msbPath, unix.O_RDONLY, 0) // learnt: later opens are served
	require.NoError(t, err)
	require.NoError(t, q.Close(fd0))
	var wg sync.WaitGroup
	reader := func(r *sim.Process, shared, closeAt int) {
		defer wg.Done()
		buf, big := make([]byte, 512), make([]byte, 16<<10)
		for i := range 200 {
			fd, err := r.Open(msbPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
			if err != nil {
				t.Error(err)
				return
			}
			off := int64(i*97) % (msbSize - 512)
			if _, err := r.Seek(fd, off, unix.SEEK_SET); err != nil {
				t.Error(err)
			}
			if n, err := r.Read(fd, buf); n != 512 || err != nil || !bytes.Equal(buf, want[off:off+512]) {
				t.Errorf("read at %d: %d %v", off, n, err)
			}
			switch {
			case i < closeAt:
				if n, err := r.Pread(shared, buf[:100], off); n != 100 || err != nil || !bytes.Equal(buf[:100], want[off:off+100]) {
					t.Errorf("pread(shared) at %d: %d %v", off, n, err)
				}
				// The offset is shared: where a read starts is racy, not whether it works.
				if pos, err := r.Seek(shared, off, unix.SEEK_SET); pos != off || err != nil {
					t.Errorf("lseek(shared, %d): %d %v", off, pos, err)
				}
				if _, err := r.Read(shared, big); err != nil {
					t.Errorf("read(shared): %v", err)
				}
			case i == closeAt:
				if err := r.Close(shared); err != nil {
					t.Error(err)
				}
			}
			if _, err := r.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
				t.Error(err)
			}
			if err := r.Close(fd); err != nil {
				t.Error(err)
			}
		}
	}
	shared, err := q.Open(msbPath, unix.O_RDONLY, 0)
	require.NoError(t, err)
	var procs []*sim.Process
	for range 3 {
		procs = append(procs, q.Fork())
	}
	w := q.Fork()
	require.NoError(t, q.Close(shared)) // the readers and the writer hold it
	for i, c := range procs {
		wg.Add(1)
		go reader(c, shared, 60+60*i) // the last holds it alone at the end
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rewrite(t, w, want, 100)
		w.Close(shared)
		w.Exit()
	}()
	wg.Wait()
	require.Greater(t, fc.Stats().Served, int64(3*200))
}

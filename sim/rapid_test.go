package sim

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// fdOracle is a deliberately dumb model of one process's fd table: a map from fd
// to (description id, cloexec), descriptions with an offset.
type fdOracle struct {
	limit int
	fds   map[int]struct {
		desc    int
		cloexec bool
	}
	off   map[int]int64 // by description
	nextD int
}

func (o *fdOracle) lowest(min int) int {
	for fd := min; ; fd++ {
		if _, ok := o.fds[fd]; !ok {
			return fd
		}
	}
}

func (o *fdOracle) set(fd, desc int, cloexec bool) {
	o.fds[fd] = struct {
		desc    int
		cloexec bool
	}{desc, cloexec}
}

// TestFDTableProperties checks open/dup/dup2/dup3/F_DUPFD/F_SETFD/close/lseek/read
// and exec against the oracle: fd numbers, errnos, shared offsets, FD_CLOEXEC.
func TestFDTableProperties(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		limit := rapid.IntRange(3, 12).Draw(rt, "limit")
		k := New(vfs.New(), WithNofile(limit))
		p := k.Spawn()
		data := make([]byte, 100)
		fd, _ := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
		p.Write(fd, data)
		p.Close(fd)
		o := &fdOracle{limit: limit, fds: map[int]struct {
			desc    int
			cloexec bool
		}{}, off: map[int]int64{}}
		anyFD := func(rt *rapid.T, label string) int { return rapid.IntRange(-1, limit+1).Draw(rt, label) }
		rt.Repeat(map[string]func(*rapid.T){
			"open": func(rt *rapid.T) {
				cloexec := rapid.Bool().Draw(rt, "cloexec")
				fl := unix.O_RDONLY
				if cloexec {
					fl |= unix.O_CLOEXEC
				}
				got, err := p.Open("/f", fl, 0)
				want := o.lowest(0)
				if want >= limit {
					require.Equal(rt, unix.EMFILE, err)
					return
				}
				require.NoError(rt, err)
				require.Equal(rt, want, got)
				o.nextD++
				o.set(got, o.nextD, cloexec)
				o.off[o.nextD] = 0
			},
			"close": func(rt *rapid.T) {
				fd := anyFD(rt, "fd")
				err := p.Close(fd)
				if _, ok := o.fds[fd]; !ok {
					require.Equal(rt, unix.EBADF, err)
					return
				}
				require.NoError(rt, err)
				delete(o.fds, fd)
			},
			"dup": func(rt *rapid.T) {
				fd := anyFD(rt, "fd")
				got, err := p.Dup(fd)
				e, ok := o.fds[fd]
				switch {
				case !ok:
					require.Equal(rt, unix.EBADF, err)
				case o.lowest(0) >= limit:
					require.Equal(rt, unix.EMFILE, err)
				default:
					require.NoError(rt, err)
					require.Equal(rt, o.lowest(0), got)
					o.set(got, e.desc, false)
				}
			},
			"dupfd": func(rt *rapid.T) {
				fd := anyFD(rt, "fd")
				min := rapid.IntRange(-1, limit+1).Draw(rt, "min")
				cloexec := rapid.Bool().Draw(rt, "cloexec")
				cmd := unix.F_DUPFD
				if cloexec {
					cmd = unix.F_DUPFD_CLOEXEC
				}
				got, err := p.FcntlInt(uintptr(fd), cmd, min)
				e, ok := o.fds[fd]
				switch {
				case !ok:
					require.Equal(rt, unix.EBADF, err)
				case min < 0 || min >= limit:
					require.Equal(rt, unix.EINVAL, err)
				case o.lowest(min) >= limit:
					require.Equal(rt, unix.EMFILE, err)
				default:
					require.NoError(rt, err)
					require.Equal(rt, o.lowest(min), got)
					o.set(got, e.desc, cloexec)
				}
			},
			"dup3": func(rt *rapid.T) {
				oldfd, newfd := anyFD(rt, "old"), anyFD(rt, "new")
				cloexec := rapid.Bool().Draw(rt, "cloexec")
				fl := 0
				if cloexec {
					fl = unix.O_CLOEXEC
				}
				err := p.Dup3(oldfd, newfd, fl)
				e, ok := o.fds[oldfd]
				switch {
				case oldfd == newfd:
					require.Equal(rt, unix.EINVAL, err)
				case newfd < 0 || newfd >= limit || !ok:
					require.Equal(rt, unix.EBADF, err)
				default:
					require.NoError(rt, err)
					o.set(newfd, e.desc, cloexec)
				}
			},
			"setfd": func(rt *rapid.T) {
				fd := anyFD(rt, "fd")
				on := rapid.Bool().Draw(rt, "on")
				arg := 0
				if on {
					arg = unix.FD_CLOEXEC
				}
				_, err := p.FcntlInt(uintptr(fd), unix.F_SETFD, arg)
				e, ok := o.fds[fd]
				if !ok {
					require.Equal(rt, unix.EBADF, err)
					return
				}
				require.NoError(rt, err)
				o.set(fd, e.desc, on)
			},
			"seek": func(rt *rapid.T) {
				fd := anyFD(rt, "fd")
				off := rapid.Int64Range(-5, 120).Draw(rt, "off")
				got, err := p.Seek(fd, off, 0)
				e, ok := o.fds[fd]
				switch {
				case !ok:
					require.Equal(rt, unix.EBADF, err)
				case off < 0:
					require.Equal(rt, unix.EINVAL, err)
				default:
					require.NoError(rt, err)
					require.Equal(rt, off, got)
					o.off[e.desc] = off
				}
			},
			"read": func(rt *rapid.T) {
				fd := anyFD(rt, "fd")
				n := rapid.IntRange(0, 40).Draw(rt, "n")
				got, err := p.Read(fd, make([]byte, n))
				e, ok := o.fds[fd]
				if !ok {
					require.Equal(rt, unix.EBADF, err)
					return
				}
				require.NoError(rt, err)
				want := int(max(0, min(int64(n), 100-o.off[e.desc])))
				require.Equal(rt, want, got)
				o.off[e.desc] += int64(want)
			},
			"exec": func(rt *rapid.T) {
				require.NoError(rt, p.Exec())
				for fd, e := range o.fds {
					if e.cloexec {
						delete(o.fds, fd)
					}
				}
			},
			"": func(rt *rapid.T) {
				var want []int
				for fd := range limit + 2 {
					if _, ok := o.fds[fd]; ok {
						want = append(want, fd)
					}
				}
				got := p.Task().FDs()
				require.Equal(rt, want, got)
				for fd, e := range o.fds {
					fl, err := p.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
					require.NoError(rt, err)
					require.Equal(rt, e.cloexec, fl == unix.FD_CLOEXEC)
				}
			},
		})
	})
}

// TestConcurrentThreads runs threads of one process and separate processes over
// the same files at once; run with -race.
func TestConcurrentThreads(t *testing.T) {
	k, p := newProc(t, WithLockWait(true))
	mkfile(t, p, "/f", make([]byte, 4096))
	shared, _ := p.Open("/f", unix.O_RDWR, 0)
	// Every thread and child exists before any of them opens a file: a fork
	// while a thread of p has its file open would copy that descriptor, and
	// the child's reference would keep the description's OFD lock after the
	// thread closed it, as on Linux, and every later F_OFD_SETLKW would wait
	// forever.
	procs := make([]*Process, 4)
	for i := range procs {
		if i%2 == 0 {
			procs[i] = p.NewThread()
		} else {
			procs[i] = p.Fork()
		}
	}
	var wg sync.WaitGroup
	for _, q := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 64)
			for j := range 200 {
				fd, err := q.Open("/f", unix.O_RDWR, 0)
				if err != nil {
					t.Error(err)
					return
				}
				q.Pwrite(fd, buf, int64(j%64)*64)
				q.Read(shared, buf)
				q.Seek(shared, 0, 0)
				q.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
				q.Flock(fd, unix.LOCK_EX)
				q.FcntlFlock(uintptr(fd), unix.F_OFD_SETLKW, flk(unix.F_WRLCK, 0, 10))
				q.Flock(fd, unix.LOCK_UN)
				d, _ := q.Dup(fd)
				q.Close(d)
				q.Close(fd)
			}
		}()
	}
	wg.Wait()
	require.Positive(t, k.Now())
}

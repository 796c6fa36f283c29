package sim

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func flk(typ int16, start, l int64) *unix.Flock_t {
	return &unix.Flock_t{Type: typ, Whence: 0, Start: start, Len: l}
}

func TestPosixLocks(t *testing.T) {
	_, a := newProc(t, WithLockWait(false))
	mkfile(t, a, "/f", make([]byte, 100))
	b := a.Fork()
	fa, _ := a.Open("/f", unix.O_RDWR, 0)
	fb, _ := b.Open("/f", unix.O_RDWR, 0)

	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_WRLCK, 10, 10)))
	// The same process never conflicts with itself.
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_RDLCK, 0, 100)))
	// Now a holds a read lock on [0,100): b may read-lock, not write-lock.
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_SETLK, flk(unix.F_RDLCK, 50, 10)))
	require.Equal(t, unix.EAGAIN, b.FcntlFlock(uintptr(fb), unix.F_SETLK, flk(unix.F_WRLCK, 5, 1)))
	lk := flk(unix.F_WRLCK, 5, 1)
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_GETLK, lk))
	require.Equal(t, unix.Flock_t{Type: unix.F_RDLCK, Whence: 0, Start: 0, Len: 100, Pid: int32(a.Pid())}, *lk)
	// No conflict: l_type becomes F_UNLCK, the rest is untouched.
	lk = flk(unix.F_WRLCK, 200, 5)
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_GETLK, lk))
	require.Equal(t, int16(unix.F_UNLCK), lk.Type)
	require.Equal(t, int64(200), lk.Start)
	// F_SETLKW that would wait: EINTR with WithLockWait(false).
	require.Equal(t, unix.EINTR, b.FcntlFlock(uintptr(fb), unix.F_SETLKW, flk(unix.F_WRLCK, 5, 1)))
	// Closing any fd of the file drops the process's POSIX locks.
	other, _ := a.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, a.Close(other))
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_SETLK, flk(unix.F_WRLCK, 0, 10)))
	// Unlock splits a lock.
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_SETLK, flk(unix.F_UNLCK, 3, 2)))
	lk = flk(unix.F_RDLCK, 0, 0)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_GETLK, lk))
	require.Equal(t, unix.Flock_t{Type: unix.F_WRLCK, Start: 0, Len: 3, Pid: int32(b.Pid())}, *lk)
	lk = flk(unix.F_RDLCK, 3, 2)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_GETLK, lk))
	require.Equal(t, int16(unix.F_UNLCK), lk.Type) // the hole b's unlock made
	// Exit releases everything.
	b.Exit()
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_WRLCK, 0, 0)))
	lk = flk(unix.F_WRLCK, 0, 0)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_GETLK, lk))
	require.Equal(t, int16(unix.F_UNLCK), lk.Type)
}

func TestLockRanges(t *testing.T) {
	_, a := newProc(t, WithLockWait(false))
	mkfile(t, a, "/f", make([]byte, 100))
	b := a.Fork()
	fa, _ := a.Open("/f", unix.O_RDWR, 0)
	fb, _ := b.Open("/f", unix.O_RDWR, 0)
	// Whence SEEK_CUR and SEEK_END, negative lengths.
	a.Seek(fa, 40, 0)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: 1, Start: 0, Len: -10}))
	lk := flk(unix.F_WRLCK, 0, 0)
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_GETLK, lk))
	require.Equal(t, unix.Flock_t{Type: unix.F_WRLCK, Start: 30, Len: 10, Pid: int32(a.Pid())}, *lk)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: 2, Start: 0, Len: 0}))
	lk = flk(unix.F_WRLCK, 150, 1)
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_GETLK, lk))
	require.Equal(t, unix.Flock_t{Type: unix.F_WRLCK, Start: 100, Len: 0, Pid: int32(a.Pid())}, *lk)
	// Adjacent locks of one owner and type merge.
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_WRLCK, 40, 60)))
	lk = flk(unix.F_WRLCK, 0, 0)
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_GETLK, lk))
	require.Equal(t, unix.Flock_t{Type: unix.F_WRLCK, Start: 30, Len: 0, Pid: int32(a.Pid())}, *lk)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_UNLCK, 0, 0)))
	lk = flk(unix.F_WRLCK, 0, math.MaxInt64)
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_GETLK, lk))
	require.Equal(t, int16(unix.F_UNLCK), lk.Type)
}

func TestOFDLocks(t *testing.T) {
	_, p := newProc(t, WithLockWait(false))
	mkfile(t, p, "/f", make([]byte, 100))
	a, _ := p.Open("/f", unix.O_RDWR, 0)
	b, _ := p.Open("/f", unix.O_RDWR, 0)
	require.NoError(t, p.FcntlFlock(uintptr(a), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 0, 10)))
	// Another description of the same process conflicts.
	require.Equal(t, unix.EAGAIN, p.FcntlFlock(uintptr(b), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 5, 10)))
	lk := flk(unix.F_WRLCK, 5, 10)
	require.NoError(t, p.FcntlFlock(uintptr(b), unix.F_OFD_GETLK, lk))
	require.Equal(t, unix.Flock_t{Type: unix.F_WRLCK, Start: 0, Len: 10, Pid: -1}, *lk)
	// POSIX locks of the process conflict with OFD locks too.
	lk = flk(unix.F_WRLCK, 5, 10)
	require.NoError(t, p.FcntlFlock(uintptr(b), unix.F_GETLK, lk))
	require.Equal(t, int32(-1), lk.Pid)
	require.Equal(t, unix.EAGAIN, p.FcntlFlock(uintptr(b), unix.F_SETLK, flk(unix.F_WRLCK, 5, 10)))
	require.Equal(t, unix.EINTR, p.FcntlFlock(uintptr(b), unix.F_OFD_SETLKW, flk(unix.F_WRLCK, 5, 10)))
	// A dup shares the description and so the lock; closing one fd keeps it.
	d, _ := p.Dup(a)
	require.NoError(t, p.Close(a))
	require.Equal(t, unix.EAGAIN, p.FcntlFlock(uintptr(b), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 5, 10)))
	// The last fd's close releases it.
	require.NoError(t, p.Close(d))
	require.NoError(t, p.FcntlFlock(uintptr(b), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 5, 10)))
	// A child forked while the fd is open has its own fd of the description:
	// the lock outlives the parent's close until the child closes its copy
	// (what TestConcurrentThreads once ran into: a fork during another
	// thread's open-lock-close loop, and a wait that never ended).
	e, _ := p.Open("/f", unix.O_RDWR, 0)
	require.NoError(t, p.FcntlFlock(uintptr(e), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 50, 10)))
	c := p.Fork()
	require.NoError(t, p.Close(e))
	require.Equal(t, unix.EAGAIN, p.FcntlFlock(uintptr(b), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 55, 1)))
	require.NoError(t, c.Close(e))
	require.NoError(t, p.FcntlFlock(uintptr(b), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 55, 1)))
}

func TestFlock(t *testing.T) {
	_, p := newProc(t, WithLockWait(false))
	mkfile(t, p, "/f", nil)
	a, _ := p.Open("/f", unix.O_RDONLY, 0)
	b, _ := p.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, p.Flock(a, unix.LOCK_EX|unix.LOCK_NB))
	require.Equal(t, unix.EWOULDBLOCK, p.Flock(b, unix.LOCK_EX|unix.LOCK_NB))
	require.Equal(t, unix.EWOULDBLOCK, p.Flock(b, unix.LOCK_SH|unix.LOCK_NB))
	require.Equal(t, unix.EINTR, p.Flock(b, unix.LOCK_SH))
	// Converting one's own lock is fine.
	require.NoError(t, p.Flock(a, unix.LOCK_SH|unix.LOCK_NB))
	require.NoError(t, p.Flock(b, unix.LOCK_SH|unix.LOCK_NB))
	// A failed conversion drops the old lock, as Linux does.
	require.Equal(t, unix.EWOULDBLOCK, p.Flock(b, unix.LOCK_EX|unix.LOCK_NB))
	require.NoError(t, p.Flock(a, unix.LOCK_EX|unix.LOCK_NB))
	// The lock belongs to the description: fork shares it.
	c := p.Fork()
	require.NoError(t, c.Flock(a, unix.LOCK_EX|unix.LOCK_NB))
	require.NoError(t, p.Flock(a, unix.LOCK_UN))
	require.NoError(t, c.Flock(b, unix.LOCK_EX|unix.LOCK_NB))
	// flock and fcntl locks do not interact.
	w, _ := p.Open("/f", unix.O_RDWR, 0)
	require.NoError(t, p.FcntlFlock(uintptr(w), unix.F_OFD_SETLK, flk(unix.F_WRLCK, 0, 0)))
}

func TestSetlkwBlocksUntilRelease(t *testing.T) {
	_, a := newProc(t)
	mkfile(t, a, "/f", nil)
	b := a.Fork()
	fa, _ := a.Open("/f", unix.O_RDWR, 0)
	fb, _ := b.Open("/f", unix.O_RDWR, 0)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_WRLCK, 0, 0)))
	done := make(chan error)
	go func() { done <- b.FcntlFlock(uintptr(fb), unix.F_SETLKW, flk(unix.F_WRLCK, 0, 0)) }()
	select {
	case <-done:
		t.Fatal("F_SETLKW did not wait")
	case <-time.After(20 * time.Millisecond):
	}
	// a waiting for b's (pending) lock would not deadlock: b holds nothing yet.
	// Release: b gets the lock.
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_UNLCK, 0, 0)))
	require.NoError(t, <-done)
}

func TestSetlkwDeadlock(t *testing.T) {
	_, a := newProc(t)
	mkfile(t, a, "/f", make([]byte, 10))
	b := a.Fork()
	fa, _ := a.Open("/f", unix.O_RDWR, 0)
	fb, _ := b.Open("/f", unix.O_RDWR, 0)
	require.NoError(t, a.FcntlFlock(uintptr(fa), unix.F_SETLK, flk(unix.F_WRLCK, 0, 1)))
	require.NoError(t, b.FcntlFlock(uintptr(fb), unix.F_SETLK, flk(unix.F_WRLCK, 1, 1)))
	done := make(chan error)
	go func() { done <- b.FcntlFlock(uintptr(fb), unix.F_SETLKW, flk(unix.F_WRLCK, 0, 1)) }()
	// Wait until b is waiting, then a asking for b's byte closes the cycle.
	for {
		a.t.k.locks.mu.Lock()
		w := a.t.k.locks.waiting[b.t.g]
		a.t.k.locks.mu.Unlock()
		if w != nil {
			break
		}
		time.Sleep(time.Millisecond)
	}
	require.Equal(t, unix.EDEADLK, a.FcntlFlock(uintptr(fa), unix.F_SETLKW, flk(unix.F_WRLCK, 1, 1)))
	require.NoError(t, a.Close(fa)) // releases a's lock: b proceeds
	require.NoError(t, <-done)
}

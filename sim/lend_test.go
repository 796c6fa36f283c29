package sim

import (
	"reflect"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// TestStackAllocatesNothing: calls through a layer reach the kernel with the
// thread's lent Call, so a stack costs no allocation per call.
func TestStackAllocatesNothing(t *testing.T) {
	p := New(vfs.New()).Spawn()
	k := p.Task().Kernel()
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, make([]byte, 4096))
	require.NoError(t, err)
	require.NoError(t, p.Close(fd))
	q := p.Through(HandlerFunc(func(c *Call) Result { return k.Syscall(c) }))
	buf := make([]byte, 512)
	var st unix.Stat_t
	require.Zero(t, testing.AllocsPerRun(100, func() {
		fd, err := q.Open("/f", unix.O_RDONLY, 0)
		require.NoError(t, err)
		_, _ = q.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		_, _ = q.Seek(fd, 1024, unix.SEEK_SET)
		_, _ = q.Read(fd, buf)
		_, _ = q.Pread(fd, buf, 0)
		_ = q.Fstat(fd, &st)
		_ = q.Close(fd)
	}))
}

// TestLentCallSurvivesNestedCalls: a layer that calls through facades of the
// calling thread (bound to the kernel, or through another handler) while it holds
// the lent Call finds that Call unchanged afterwards, and the nested calls are
// answered.
func TestLentCallSurvivesNestedCalls(t *testing.T) {
	p := New(vfs.New()).Spawn()
	k := p.Task().Kernel()
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, []byte("0123456789"))
	require.NoError(t, err)
	direct := NewProcess(k, p.Task())
	inner := p.Through(HandlerFunc(func(c *Call) Result { return k.Syscall(c) }))
	var nested []int64
	q := p.Through(HandlerFunc(func(c *Call) Result {
		sent := *c
		var st unix.Stat_t
		require.NoError(t, direct.Fstat(fd, &st))
		n, err := inner.Pread(fd, make([]byte, 4), 2)
		require.NoError(t, err)
		require.Equal(t, sent, *c, "the lent Call after nested calls")
		nested = append(nested, st.Size, int64(n))
		return k.Syscall(c)
	}))
	buf := make([]byte, 3)
	n, err := q.Pread(fd, buf, 7)
	require.NoError(t, err)
	require.Equal(t, "789", string(buf[:n]))
	off, err := q.Seek(fd, 4, unix.SEEK_SET)
	require.NoError(t, err)
	require.EqualValues(t, 4, off)
	require.Equal(t, []int64{10, 4, 10, 4}, nested)
	require.False(t, p.Task().lent, "the slot is returned")
}

// TestSlotEmptyBetweenCalls: after every facade call — through a layer or bound
// to the kernel, successful, failed, or refused before any call — the thread's
// slot holds nothing but the call's number and the thread, so the next Call
// carries only its own arguments.
func TestSlotEmptyBetweenCalls(t *testing.T) {
	p := New(vfs.New()).Spawn()
	k := p.Task().Kernel()
	var seen []Call
	layer := p.Through(HandlerFunc(func(c *Call) Result {
		seen = append(seen, *c)
		return k.Syscall(c)
	}))
	for _, q := range []*Process{NewProcess(k, p.Task()), layer} {
		empty := func(what string) {
			c := q.Task().call
			c.Nr, c.Task = 0, nil // the typed route (open, close) does not use the slot
			require.Equal(t, Call{}, c, "the slot after %s", what)
		}
		fd, err := q.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
		require.NoError(t, err)
		empty("open")
		_, err = q.Writev(fd, [][]byte{[]byte("abc"), []byte("def")})
		require.NoError(t, err)
		empty("writev")
		_, err = q.Pread(fd, make([]byte, 4), 1)
		require.NoError(t, err)
		empty("pread")
		var st unix.Stat_t
		require.NoError(t, q.Fstat(fd, &st))
		empty("fstat")
		require.NoError(t, q.Rename("/f", "/g"))
		empty("rename")
		require.Equal(t, syscall.EINVAL, q.UtimesNanoAt(unix.AT_FDCWD, "/g", make([]unix.Timespec, 3), 0))
		empty("utimensat refused before the call")
		require.Equal(t, syscall.EINVAL, q.Futimens(fd, make([]unix.Timespec, 1)))
		empty("futimens refused before the call")
		_, err = q.Open("/nonexistent", unix.O_RDONLY, 0)
		require.Equal(t, syscall.ENOENT, err)
		empty("a failed open")
		require.NoError(t, q.Unlink("/g"))
		require.NoError(t, q.Close(fd))
		empty("close")
	}
	require.NotEmpty(t, seen)
	last := seen[len(seen)-1]
	require.Equal(t, Call{Nr: SYS_CLOSE, Task: p.Task(), Args: last.Args}, last, "close carries its fd only")
}

// TestSlotEmptiedOfEveryField: whatever a layer leaves in the lent Call — any
// field of it, including one added to Call later — the slot is empty after
// the call, so the next call carries nothing of it.
func TestSlotEmptiedOfEveryField(t *testing.T) {
	p := New(vfs.New()).Spawn()
	k := p.Task().Kernel()
	fill := func(c *Call) {
		v := reflect.ValueOf(c).Elem()
		for i := range v.NumField() {
			f := v.Field(i)
			switch name := v.Type().Field(i).Name; {
			case name == "Nr" || name == "Task":
			case f.Kind() == reflect.Array:
				for j := range f.Len() {
					f.Index(j).SetInt(int64(7 + j))
				}
			case f.Kind() == reflect.String:
				f.SetString("left/" + name)
			case f.Kind() == reflect.Slice:
				f.Set(reflect.MakeSlice(f.Type(), 1, 1))
			case f.Kind() == reflect.Interface:
				f.Set(reflect.ValueOf(&unix.Stat_t{}))
			default:
				t.Fatalf("Call.%s: a %s the test does not know how to fill", name, f.Kind())
			}
		}
	}
	var next *Call
	layer := p.Through(HandlerFunc(func(c *Call) Result {
		if c.Nr == SYS_GETPID {
			fill(c)
			return Result{}
		}
		cp := *c
		next = &cp
		return k.Syscall(c)
	}))
	layer.Getpid()
	c := p.Task().call
	require.Equal(t, Call{Nr: SYS_GETPID, Task: p.Task()}, c, "the slot after a call a layer filled")
	layer.Umask(0o27)
	require.NotNil(t, next)
	require.Equal(t, Call{Nr: SYS_UMASK, Task: p.Task(), Args: [6]int64{0o27}}, *next, "the next call carries its own argument only")
}

package interposer_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

func TestFaultRuleRoundTrip(t *testing.T) {
	for _, s := range []string{
		"write@/db/*#nth=3=EIO",
		"fsync=delay:10ms",
		"read@fd:5#p=0.1=short:100",
		"pwrite64|fdatasync@/wal/*#after=100=ENOSPC",
		"*@/data/x#every=2=delay:1ms+EIO",
		"openat@*.log=ENOENT",
		"read=short:0",
		"pread64=delay:1ms+short:7+corrupt",
	} {
		r, err := interposer.ParseRule(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got := r.String(); got != s {
			t.Errorf("ParseRule(%q).String() = %q", s, got)
		}
	}
	for _, bad := range []string{"write", "=EIO", "frobnicate=EIO", "write=EWHAT", "write#nth=0=EIO",
		"write#p=2=EIO", "write#when=3=EIO", "write=short:x", "write=delay:fast", "write@fd:x=EIO", "write=short:3+EIO", "pread=EIO", "write@fd:3,x=EIO"} {
		if _, err := interposer.ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		} else {
			t.Logf("%s: %v", bad, err)
		}
	}
}

func TestFaultInjection(t *testing.T) {
	_, k, p := newWorld(t)
	h, err := interposer.Build(k, "fault:rule=read@/ora/mesg/*.msb#nth=2=EIO,rule=pread64@fd:3=short:10,rule=close#every=2=delay:1ms")
	if err != nil {
		t.Fatal(err)
	}
	q := p.Through(h)
	fd, err := q.Open(msbPath, unix.O_RDONLY, 0)
	if err != nil || fd != 3 {
		t.Fatal(fd, err)
	}
	buf := make([]byte, 100)
	if n, err := q.Read(fd, buf); n != 100 || err != nil {
		t.Fatalf("first read: %d %v", n, err)
	}
	if _, err := q.Read(fd, buf); err != unix.EIO {
		t.Fatalf("second read: %v, want EIO", err)
	}
	if n, err := q.Read(fd, buf); n != 100 || err != nil {
		t.Fatalf("third read: %d %v", n, err)
	}
	if n, _ := q.Pread(fd, buf, 0); n != 10 {
		t.Fatalf("pread: %d, want 10 (short)", n)
	}
	t0 := k.Now()
	q.Close(fd)
	fd, _ = q.Open(msbPath, unix.O_RDONLY, 0)
	t1 := k.Now()
	q.Close(fd)
	if d := k.Now() - t1; d < 1e6 {
		t.Fatalf("second close took %d ns, want the 1ms delay", d)
	}
	if d := t1 - t0; d >= 1e6 {
		t.Fatalf("first close delayed")
	}
	f, _ := interposer.Find[*interposer.Fault](h)
	require.Equal(t, []int64{1, 1, 1}, f.Fired(), f.String())

	// corrupt inverts what a read returns; the kernel's copy is untouched.
	h, err = interposer.Build(k, "fault:rule=pread64#nth=1=corrupt")
	require.NoError(t, err)
	q = p.Through(h)
	fd, err = q.Open(msbPath, unix.O_RDONLY, 0)
	require.NoError(t, err)
	bad, good := make([]byte, 16), make([]byte, 16)
	_, err = q.Pread(fd, bad, 0)
	require.NoError(t, err)
	_, err = q.Pread(fd, good, 0)
	require.NoError(t, err)
	for i := range bad {
		require.Equal(t, ^good[i], bad[i], "byte %d", i)
	}
}

// TestFaultPathsFollowFds: a rule on a path matches the calls on every fd that
// refers to the file (a duplicate made by dup2 or fcntl F_DUPFD_CLOEXEC), and no
// longer those on an fd close_range closed, or that an open of another file
// reused.
func TestFaultPathsFollowFds(t *testing.T) {
	_, k, p := newWorld(t)
	h, err := interposer.Build(k, "fault:rule=pread64@/ora/mesg/oraus.msb=EIO")
	require.NoError(t, err)
	q := p.Through(h)
	fd, err := q.Open(msbPath, unix.O_RDONLY, 0)
	require.NoError(t, err)
	buf := make([]byte, 10)
	_, err = q.Pread(fd, buf, 0)
	require.Equal(t, unix.EIO, err)
	require.NoError(t, q.Dup2(fd, 10))
	_, err = q.Pread(10, buf, 0)
	require.Equal(t, unix.EIO, err, "pread64 through dup2's fd")
	r := q.Handler().Syscall(&sim.Call{Nr: sim.SYS_FCNTL, Task: p.Task(), Args: [6]int64{int64(fd), unix.F_DUPFD_CLOEXEC, 20}})
	require.EqualValues(t, 20, r.Ret)
	_, err = q.Pread(20, buf, 0)
	require.Equal(t, unix.EIO, err, "pread64 through F_DUPFD_CLOEXEC's fd")

	r = q.Handler().Syscall(&sim.Call{Nr: sim.SYS_CLOSE_RANGE, Task: p.Task(), Args: [6]int64{int64(fd), 1 << 20, 0}})
	require.Zero(t, r.Errno)
	_, err = q.Pread(10, buf, 0)
	require.Equal(t, unix.EBADF, err, "close_range closed fd 10: it names no file")
	other, err := q.Open(otherPath, unix.O_RDONLY, 0)
	require.NoError(t, err)
	require.Equal(t, fd, other, "the lowest free fd again")
	_, err = q.Pread(other, buf, 0)
	require.NoError(t, err, "an fd close_range freed is not the faulty file's any more")
}

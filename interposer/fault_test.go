package interposer_test

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"iosim/interposer"
	"iosim/sim"
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
		"write#p=2=EIO", "write#when=3=EIO", "write=short:x", "write=delay:fast", "write@fd:x=EIO", "write=short:3+EIO"} {
		if _, err := interposer.ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) accepted", bad)
		} else {
			t.Logf("%s: %v", bad, err)
		}
	}
}

// Generated rules print and parse back to the same rule.
func TestFaultRuleRoundTripProperty(t *testing.T) {
	names := []string{"read", "write", "pread64", "pwrite64", "fsync", "openat", "close"}
	rapid.Check(t, func(t *rapid.T) {
		r := interposer.Rule{Fd: -1}
		for _, n := range rapid.SliceOfNDistinct(rapid.SampledFrom(names), 0, 3, func(s string) string { return s }).Draw(t, "calls") {
			nr, _ := sim.SysnoByName(n)
			r.Calls = append(r.Calls, nr)
		}
		switch rapid.IntRange(0, 2).Draw(t, "where") {
		case 1:
			r.Glob = rapid.SampledFrom([]string{"/db/*", "*.log", "/a/b/c", "/x/[ab]*"}).Draw(t, "glob")
		case 2:
			r.Fd = rapid.IntRange(0, 100).Draw(t, "fd")
		}
		if rapid.Bool().Draw(t, "nth") {
			r.Nth = rapid.Int64Range(1, 1000).Draw(t, "n")
		}
		if rapid.Bool().Draw(t, "every") {
			r.Every = rapid.Int64Range(1, 1000).Draw(t, "k")
		}
		if rapid.Bool().Draw(t, "after") {
			r.After = rapid.Int64Range(1, 1000).Draw(t, "a")
		}
		if rapid.Bool().Draw(t, "p") {
			r.P = float64(rapid.IntRange(1, 1000).Draw(t, "pm")) / 1000
		}
		effect := false
		if rapid.Bool().Draw(t, "delay") {
			r.Delay = time.Duration(rapid.SampledFrom([]int64{1000, 5000, 2e6}).Draw(t, "d"))
			effect = true
		}
		switch rapid.IntRange(0, 2).Draw(t, "eff") {
		case 1:
			r.Errno = rapid.SampledFrom([]unix.Errno{unix.EIO, unix.ENOSPC, unix.EINTR, unix.EAGAIN}).Draw(t, "errno")
			effect = true
		case 2:
			r.Short = rapid.Int64Range(1, 4096).Draw(t, "short")
			effect = true
		}
		if !effect {
			r.Errno = unix.EIO
		}
		s := r.String()
		back, err := interposer.ParseRule(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if back.String() != s {
			t.Fatalf("%s printed back as %s", s, back.String())
		}
	})
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
	t.Logf("%s fired %v", f, f.Fired())
}

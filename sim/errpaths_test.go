//go:build linux

package sim_test

import (
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// setupErrpaths builds the starting state of every row on one side: /d/sub/x, an
// empty dir /e, /f (5000 bytes), /empty, symlinks /lf -> f, /loop1 <-> /loop2,
// /self -> self, /dang -> nx (dangling), and the fds above.
func setupErrpaths(t failer, s sys) {
	t.Helper()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("setup: %s: %s", what, errName(err))
		}
	}
	must("mkdir /d", s.Mkdir("/d", 0o755))
	must("mkdir /d/sub", s.Mkdir("/d/sub", 0o755))
	must("mkdir /e", s.Mkdir("/e", 0o755))
	fd, err := s.Creat("/d/sub/x", 0o644)
	must("creat /d/sub/x", err)
	must("close", s.Close(fd))
	fd, err = s.Creat("/f", 0o644)
	must("creat /f", err)
	_, err = s.Write(fd, pattern(5000, 3))
	must("write /f", err)
	must("close", s.Close(fd))
	for _, l := range [][2]string{{"f", "/lf"}, {"loop2", "/loop1"}, {"loop1", "/loop2"}, {"self", "/self"}, {"nx", "/dang"}} {
		must("symlink "+l[1], s.Symlink(l[0], l[1]))
	}
	for _, o := range []struct {
		path  string
		flags int
	}{
		{"/f", unix.O_RDWR},
		{"/f", unix.O_RDONLY},
		{"/f", unix.O_WRONLY},
		{"/d", unix.O_RDONLY | unix.O_DIRECTORY},
		{"/empty", unix.O_RDWR | unix.O_CREAT},
		{"/f", unix.O_PATH},
	} {
		_, err := s.Open(o.path, o.flags, 0o644)
		must("open "+o.path, err)
	}
}

// errRow is one row of an error-path table: a call, run from the state
// setupErrpaths builds, and what this kernel answers.
type errRow = errRowOf[errEnv]

// errRowOf is errRow for a table whose calls see an environment of their own
// (E); the table converts its rows to errRows to run them.
type errRowOf[E any] struct {
	name string
	do   func(e E) (int64, error)
	want syscall.Errno // 0: the call succeeds
	ret  int64         // with want 0: the expected return value, unless ret < 0

	// modelBug documents a known divergence of the model: when the model
	// returns exactly modelGot (an errno, or 0 for success) the row is skipped
	// with this note after the kernel side was checked.
	modelBug string
	modelGot syscall.Errno
}

// keepCwd returns a function that puts the test process's cwd back: a row may
// change it (fchdir on the kernel side).
func keepCwd(t *testing.T) func() {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := unix.Chdir(wd); err != nil {
			t.Fatalf("restoring the cwd: %v", err)
		}
	}
}

// runErrRows runs each row as a subtest on a fresh pair: on the kernel and on the
// model, from setupErrpaths, and checks both against the row's answer.
func runErrRows(t *testing.T, h *host, rows []errRow) {
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			defer keepCwd(t)()
			p := h.newPair(t)
			defer p.done()
			setupErrpaths(t, p.m)
			setupErrpaths(t, p.k)
			var mret, kret int64
			var merr, kerr error
			mret, merr = r.do(errEnv{s: p.m, base: h.base, nofile: h.nofile})
			kret, kerr = r.do(errEnv{s: p.k, base: h.base, nofile: h.nofile})
			check := func(side string, ret int64, err error) {
				t.Helper()
				e, bare := errnoOf(err)
				switch {
				case !bare:
					t.Errorf("%s: returned %s, want a bare syscall.Errno", side, errName(err))
				case e != r.want:
					t.Errorf("%s: got %d %s, want %s", side, ret, errName(err), errName(errOrNil(r.want)))
				case r.want == 0 && r.ret >= 0 && ret != r.ret:
					t.Errorf("%s: returned %d, want %d", side, ret, r.ret)
				}
			}
			check("kernel", kret, kerr)
			if me, _ := errnoOf(merr); r.modelBug != "" && me == r.modelGot && (me != r.want || mret != kret) {
				t.Skip("model bug: " + r.modelBug)
			}
			check("model", mret, merr)
			if kerr == nil && merr == nil && kret != mret {
				t.Errorf("kernel returned %d, model %d", kret, mret)
			}
		})
	}
}

// rawDup2 makes the dup2(2) syscall on either side.
func rawDup2(s sys, oldfd, newfd int) (int64, error) {
	switch s := s.(type) {
	case *osKernel:
		r, err := s.rawDup2(oldfd, newfd)
		return int64(r), err
	case *sim.Process:
		c := sim.Call{Nr: sim.SYS_DUP2}
		c.Args[0], c.Args[1] = int64(oldfd), int64(newfd)
		r := s.Syscall(c)
		return r.Ret, r.Err()
	}
	panic("unknown side")
}

// withModelNofile runs fn with the model process's RLIMIT_NOFILE soft limit set to
// n through setrlimit(2), and checks that getrlimit reads it back.
func withModelNofile(t *testing.T, m *sim.Process, n int, fn func()) {
	t.Helper()
	var old unix.Rlimit
	if err := m.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatalf("model getrlimit: %v", err)
	}
	lim := unix.Rlimit{Cur: uint64(n), Max: old.Max}
	if err := m.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("model setrlimit: %v", err)
	}
	var got unix.Rlimit
	if err := m.Getrlimit(unix.RLIMIT_NOFILE, &got); err != nil || got.Cur != uint64(n) {
		t.Errorf("model: getrlimit after setrlimit(RLIMIT_NOFILE, %d) = %+v, %v", n, got, err)
	}
	fn()
}

func errOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// withKernelNofile runs fn with the test process's RLIMIT_NOFILE soft limit set
// to n, and restores it. Nothing else may open fds meanwhile (the test is not
// parallel).
func withKernelNofile(t *testing.T, n int, fn func()) {
	t.Helper()
	var old unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	lim := old
	lim.Cur = uint64(n)
	if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	defer func() {
		if err := unix.Setrlimit(unix.RLIMIT_NOFILE, &old); err != nil {
			t.Fatalf("restoring RLIMIT_NOFILE: %v", err)
		}
	}()
	fn()
}

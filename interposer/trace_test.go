package interposer_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

type recorded struct {
	c sim.Call
	r sim.Result
}

// TestTraceRoundTrip runs a program through the trace layer, parses its output
// with package strace and checks every event's name, integer and string arguments
// and result against the calls that were made.
func TestTraceRoundTrip(t *testing.T) {
	_, k, p := newWorld(t)
	var out bytes.Buffer
	tr := interposer.NewTrace(k, &out)
	var calls []recorded
	q := p.Through(sim.HandlerFunc(func(c *sim.Call) sim.Result {
		r := tr.Syscall(c)
		rc := *c
		rc.Buf = bytes.Clone(c.Buf) // the program reuses its buffers
		if st, ok := c.Obj.(*unix.Stat_t); ok {
			cp := *st
			rc.Obj = &cp
		}
		calls = append(calls, recorded{rc, r})
		return r
	}))
	buf := make([]byte, 512)
	fd, _ := q.Open(msbPath, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	q.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
	q.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	q.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	q.Seek(fd, 512, unix.SEEK_SET)
	q.Read(fd, buf)
	q.Seek(fd, -10, unix.SEEK_END)
	q.Read(fd, buf[:256])
	q.Pread(fd, buf[:16], 39936)
	q.Readv(fd, [][]byte{buf[:3], buf[3:10]})
	var st unix.Stat_t
	q.Fstat(fd, &st)
	q.Fstatat(unix.AT_FDCWD, otherPath, &st, 0)
	q.Open("/nonexistent", unix.O_RDONLY, 0)
	wfd, _ := q.Open("/ora/new\"file\n", unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, 0o640)
	q.Write(wfd, []byte("hello\x00\x01world\t\"quoted\"\\"))
	q.Pwrite(wfd, bytes.Repeat([]byte{0xff}, 100), 4096)
	q.Fsync(wfd)
	q.Fdatasync(wfd)
	q.Ftruncate(wfd, 10)
	q.Dup(wfd)
	q.Dup3(wfd, 9, unix.O_CLOEXEC)
	q.Rename("/ora/new\"file\n", "/ora/renamed")
	q.Unlink("/ora/renamed")
	q.Close(fd)
	q.Close(fd)
	q.Close(wfd)
	q.Seek(77, 0, unix.SEEK_CUR)

	t.Logf("trace:\n%s", out.String())
	ps := strace.NewParser(strings.NewReader(out.String()), "trace", strace.Options{})
	for i := 0; ; i++ {
		ev, err := ps.Next()
		if err == io.EOF {
			if i != len(calls) {
				t.Fatalf("%d events for %d calls", i, len(calls))
			}
			break
		}
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		c, r := calls[i].c, calls[i].r
		line := string(ev.Text)
		if ev.Name != c.Nr.String() {
			t.Errorf("%s: name %q, want %q", line, ev.Name, c.Nr.String())
		}
		if r.Errno != 0 {
			if ev.Errno != r.Errno || ev.Ret != -1 {
				t.Errorf("%s: result %d %v, want -1 %v", line, ev.Ret, ev.Errno, r.Errno)
			}
		} else if !ev.RetKnown || ev.Ret != r.Ret || ev.Errno != 0 {
			t.Errorf("%s: result %d (errno %v), want %d", line, ev.Ret, ev.Errno, r.Ret)
		}
		// The first argument: an fd, or a dirfd, or a path.
		switch c.Nr {
		case sim.SYS_OPENAT, sim.SYS_NEWFSTATAT:
			if v, ok := ev.Int(0); !ok || v != int64(int32(c.Args[0])) {
				t.Errorf("%s: dirfd %d, want %d", line, v, int32(c.Args[0]))
			}
			if s, _, ok := ev.Str(1); !ok || string(s) != c.Path {
				t.Errorf("%s: path %q, want %q", line, s, c.Path)
			}
			if c.Nr == sim.SYS_OPENAT {
				if v, ok := ev.Flags(2); !ok || int64(v) != c.Args[2] {
					t.Errorf("%s: flags %#x, want %#x", line, v, c.Args[2])
				}
			}
		case sim.SYS_RENAME, sim.SYS_UNLINK:
			if s, _, ok := ev.Str(0); !ok || string(s) != c.Path {
				t.Errorf("%s: path %q, want %q", line, s, c.Path)
			}
		default:
			if fd, _, ok := ev.Fd(0); !ok || fd != int(c.Args[0]) {
				t.Errorf("%s: fd %d, want %d", line, fd, c.Args[0])
			}
		}
		switch c.Nr {
		case sim.SYS_LSEEK:
			if v, _ := ev.Int(1); v != c.Args[1] {
				t.Errorf("%s: offset %d", line, v)
			}
			if v, ok := ev.Flags(2); !ok || int64(v) != c.Args[2] {
				t.Errorf("%s: whence %d", line, v)
			}
		case sim.SYS_FCNTL:
			if v, ok := ev.Flags(1); !ok || int64(v) != c.Args[1] {
				t.Errorf("%s: cmd %d", line, v)
			}
		case sim.SYS_READ, sim.SYS_WRITE, sim.SYS_PREAD64, sim.SYS_PWRITE64:
			data := c.Buf
			if c.Nr == sim.SYS_READ || c.Nr == sim.SYS_PREAD64 {
				data = data[:max(r.Ret, 0)]
			}
			s, trunc, ok := ev.Str(1)
			if !ok || !bytes.HasPrefix(data, s) || (!trunc && len(s) != len(data)) {
				t.Errorf("%s: buffer %q (truncated %v), want %q", line, s, trunc, data)
			}
			if v, _ := ev.Int(2); v != int64(len(c.Buf)) {
				t.Errorf("%s: count %d", line, v)
			}
			if c.Nr == sim.SYS_PREAD64 || c.Nr == sim.SYS_PWRITE64 {
				if v, _ := ev.Int(3); v != c.Args[3] {
					t.Errorf("%s: offset %d", line, v)
				}
			}
		case sim.SYS_FSTAT:
			if n := ev.Field(1, "st_size"); n == nil {
				t.Errorf("%s: no st_size", line)
			} else if v, _ := n.Value(); v != c.Obj.(*unix.Stat_t).Size {
				t.Errorf("%s: st_size %d", line, v)
			}
		}
	}
}

// TestTracePids: with Pids (strace -f) every line carries the tid, and the parser
// reads it back.
func TestTracePids(t *testing.T) {
	_, k, p := newWorld(t)
	var out bytes.Buffer
	tr := interposer.NewTrace(k, &out)
	tr.Pids = true
	q := p.Through(tr)
	child := q.Fork()
	q.Open(msbPath, unix.O_RDONLY, 0)
	child.Open(otherPath, unix.O_RDONLY, 0)
	ps := strace.NewParser(strings.NewReader(out.String()), "trace", strace.Options{})
	want := []struct {
		pid  int
		name string
	}{{p.Pid(), "fork"}, {p.Pid(), "openat"}, {child.Pid(), "openat"}}
	for i, w := range want {
		ev, err := ps.Next()
		if err != nil {
			t.Fatalf("event %d: %v\n%s", i, err, out.String())
		}
		if ev.Pid != w.pid || ev.Name != w.name {
			t.Errorf("event %d: pid %d %s, want %d %s", i, ev.Pid, ev.Name, w.pid, w.name)
		}
	}
}

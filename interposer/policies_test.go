package interposer_test

import (
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

func TestFdatasyncOnlyRegularFiles(t *testing.T) {
	_, k, p := newWorld(t)
	cnt := interposer.NewCount(k)
	q := p.Through(interposer.NewFdatasync(cnt))
	fd, _ := q.Open(msbPath, unix.O_RDWR, 0)
	dfd, _ := q.Open("/ora/mesg", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err := q.Fsync(fd); err != nil {
		t.Fatal(err)
	}
	if err := q.Fsync(dfd); err != nil {
		t.Fatal(err)
	}
	if err := q.Fsync(99); err != unix.EBADF {
		t.Fatalf("fsync(99): %v", err)
	}
	if f, d := cnt.Calls(sim.SYS_FSYNC), cnt.Calls(sim.SYS_FDATASYNC); f != 2 || d != 1 {
		t.Fatalf("fsync %d fdatasync %d, want 2 (directory, bad fd) and 1", f, d)
	}
}

func TestDsyncRewritesOnlySync(t *testing.T) {
	_, k, p := newWorld(t)
	q := p.Through(interposer.NewDsync(k))
	for _, c := range []struct{ open, want int }{
		{unix.O_RDWR | unix.O_SYNC, unix.O_DSYNC},
		{unix.O_RDWR | unix.O_DSYNC, unix.O_DSYNC},
		{unix.O_RDWR, 0},
	} {
		fd, err := q.Open(msbPath, c.open, 0)
		if err != nil {
			t.Fatal(err)
		}
		fl, _ := q.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		if fl&unix.O_SYNC != c.want {
			t.Errorf("open %#x: F_GETFL %#x, want sync bits %#x", c.open, fl, c.want)
		}
	}
}

func TestCountTable(t *testing.T) {
	_, k, p := newWorld(t)
	cnt := interposer.NewCount(k)
	q := p.Through(cnt)
	buf := make([]byte, 1024)
	for range 3 {
		seedLoop(t, q, buf)
	}
	q.Close(42)
	rows := cnt.Table()
	byName := map[string]interposer.CountRow{}
	for _, r := range rows {
		byName[r.Name] = r
	}
	if r := byName["read"]; r.Calls != 12 || r.Bytes != 3*(256+3*512) || r.Ns != 12*100 {
		t.Errorf("read row %+v", r)
	}
	if r := byName["close"]; r.Calls != 4 || r.Errors != 1 {
		t.Errorf("close row %+v", r)
	}
	if rows[0].Name != "lseek" && rows[0].Name != "read" {
		t.Errorf("first row %s: want the most time first", rows[0].Name)
	}
	out := cnt.String()
	if !strings.Contains(out, "total") || !strings.Contains(out, "% time") {
		t.Errorf("table:\n%s", out)
	}
	t.Logf("\n%s", out)
}

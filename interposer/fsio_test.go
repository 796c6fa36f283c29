package interposer_test

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

func TestFsioModes(t *testing.T) {
	for _, c := range []struct {
		mode           string
		wantFl         int
		aio            bool
		misalignedFail bool
	}{
		{"none", unix.O_SYNC, false, false},
		{"directio", unix.O_DIRECT, false, true},
		{"asynch", 0, true, false},
		{"setall", unix.O_DIRECT, true, true},
	} {
		t.Run(c.mode, func(t *testing.T) {
			k := sim.New(vfs.New(), sim.WithDirectIOMemAlign(1))
			p := k.Spawn()
			cnt := interposer.NewCount(k)
			h, err := interposer.Build(cnt, "fsio:mode="+c.mode+",path=*.dbf")
			if err != nil {
				t.Fatal(err)
			}
			q := p.Through(h)
			q.Mkdir("/db", 0o755)
			fd, err := q.Open("/db/users01.dbf", unix.O_CREAT|unix.O_RDWR, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			lfd, _ := q.Open("/db/redo.log", unix.O_CREAT|unix.O_RDWR, 0o644)
			fl, _ := q.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			if fl&(unix.O_SYNC|unix.O_DIRECT) != c.wantFl {
				t.Fatalf("F_GETFL %#x, want %#x set", fl, c.wantFl)
			}
			if lfl, _ := q.FcntlInt(uintptr(lfd), unix.F_GETFL, 0); lfl&(unix.O_SYNC|unix.O_DIRECT) != 0 {
				t.Fatalf("non-matching file got %#x", lfl)
			}
			block := bytes.Repeat([]byte{7}, 4096)
			for i := range 4 {
				if n, err := q.Pwrite(fd, block, int64(i)*4096); n != 4096 || err != nil {
					t.Fatalf("pwrite: %d %v", n, err)
				}
			}
			got := make([]byte, 4096)
			if n, err := q.Pread(fd, got, 8192); n != 4096 || err != nil || !bytes.Equal(got, block) {
				t.Fatalf("pread: %d %v", n, err)
			}
			_, err = q.Pwrite(fd, block[:100], 3)
			if (err == unix.EINVAL) != c.misalignedFail {
				t.Fatalf("misaligned pwrite: %v", err)
			}
			if n, err := q.Pread(fd, got, -1); n != -1 || err != unix.EINVAL {
				t.Fatalf("pread at -1: %d %v", n, err)
			}
			setup, submit, pw := cnt.Calls(sim.SYS_IO_SETUP), cnt.Calls(sim.SYS_IO_SUBMIT), cnt.Calls(sim.SYS_PWRITE64)
			if c.aio && (setup != 1 || submit != 6 || cnt.Calls(sim.SYS_IO_GETEVENTS) != 6 || pw != 0) {
				t.Fatalf("aio: io_setup %d io_submit %d pwrite64 %d\n%s", setup, submit, pw, cnt)
			}
			if !c.aio && (setup != 0 || pw != 5) {
				t.Fatalf("sync: io_setup %d pwrite64 %d", setup, pw)
			}
			t.Logf("\n%s", cnt)
		})
	}
}

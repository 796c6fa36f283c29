package sim

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/afero"
	"golang.org/x/sys/unix"

	"iosim/vfs"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestSeed000CPUTime reports the thread CPU time per seed-000 iteration of the
// model and of afero: unlike the benchmark's wall time, it is not inflated when the
// machine is busy. Run with IOSIM_CPUTIME=1 -v.
func TestSeed000CPUTime(t *testing.T) {
	if os.Getenv("IOSIM_CPUTIME") == "" {
		t.Skip("set IOSIM_CPUTIME=1")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	data := make([]byte, 64<<10)
	const n = 300000
	buf := make([]byte, 512)

	k := New(vfs.New())
	p := k.Spawn()
	fd, _ := p.Open("/s", unix.O_CREAT|unix.O_WRONLY, 0o644)
	p.Write(fd, data)
	p.Close(fd)
	run := func() { seed000Once(p, "/s", buf) }
	for range 1000 {
		run()
	}
	t0 := threadCPU()
	for range n {
		run()
	}
	model := threadCPU() - t0
	if os.Getenv("IOSIM_CPUTIME") == "model" {
		t.Logf("CPU per iteration: model %v (%v/call)", model/n, model/n/seed000Calls)
		return
	}

	afs := afero.NewMemMapFs()
	afero.WriteFile(afs, "/s", data, 0o644)
	arun := func() {
		f, _ := afs.OpenFile("/s", os.O_RDONLY, 0)
		for _, s := range seed000 {
			f.Seek(s.off, 0)
			f.Read(buf[:s.n])
		}
		f.Close()
	}
	for range 1000 {
		arun()
	}
	t0 = threadCPU()
	for range n {
		arun()
	}
	af := threadCPU() - t0
	root := k.FS().Root()
	vrun := func() {
		ino, _, _ := root.Open("/s", unix.O_RDONLY, 0)
		for _, s := range seed000 {
			ino.ReadAt(buf[:s.n], s.off)
		}
	}
	for range 1000 {
		vrun()
	}
	t0 = threadCPU()
	for range n {
		vrun()
	}
	vf := threadCPU() - t0
	t.Logf("CPU per iteration: model %v (%v/call), afero %v (%v/call), vfs alone (open + 4 ReadAt) %v",
		model/n, model/n/seed000Calls, af/n, af/n/seed000Calls, vf/n)
}

package sim

import (
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"iosim/device"
	"iosim/vfs"
)

// BenchmarkSeed000LoopDevice is the model arm of BenchmarkSeed000Loop with a
// time model (the hdd-7200 profile) pricing every call: compare its ns/call
// with BenchmarkSeed000Loop/model's.
func BenchmarkSeed000LoopDevice(b *testing.B) {
	prof, err := device.Lookup("hdd-7200")
	if err != nil {
		b.Fatal(err)
	}
	k := New(vfs.New(), WithDevice(prof))
	p := k.Spawn()
	fd, err := p.Open("/seed000.dat", unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Write(fd, make([]byte, 64<<10)); err != nil {
		b.Fatal(err)
	}
	p.Close(fd)
	seed000Loop(b, p, "/seed000.dat")
}

// seed000Once makes one iteration of the seed-000 loop on path, ignoring
// errors (the callers measure CPU time).
func seed000Once(p *Process, path string, buf []byte) {
	fd, _ := p.Open(path, unix.O_RDONLY, 0)
	p.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
	for _, s := range seed000 {
		p.Seek(fd, s.off, 0)
		p.Read(fd, buf[:s.n])
	}
	p.Close(fd)
}

// TestSeed000CPUTimeDevice reports the thread CPU time per seed-000 iteration
// with the constant cost and with a time model (hdd-7200), alternating the two
// several times: thread CPU time is not inflated when the machine is busy. Run
// with IOSIM_CPUTIME=1 -v.
func TestSeed000CPUTimeDevice(t *testing.T) {
	if os.Getenv("IOSIM_CPUTIME") == "" {
		t.Skip("set IOSIM_CPUTIME=1")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	prof, err := device.Lookup("hdd-7200")
	if err != nil {
		t.Fatal(err)
	}
	loop := func(opts ...Option) func(n int) time.Duration {
		k := New(vfs.New(), opts...)
		p := k.Spawn()
		fd, _ := p.Open("/s", unix.O_CREAT|unix.O_WRONLY, 0o644)
		p.Write(fd, make([]byte, 64<<10))
		p.Close(fd)
		buf := make([]byte, 512)
		return func(n int) time.Duration {
			t0 := threadCPU()
			for range n {
				seed000Once(p, "/s", buf)
			}
			return threadCPU() - t0
		}
	}
	constant, dev := loop(), loop(WithDevice(prof))
	const n = 200000
	constant(1000)
	dev(1000)
	var c, d time.Duration
	for range 5 {
		c += constant(n)
		d += dev(n)
	}
	t.Logf("CPU per call: constant %v, device %v: %.2fx", c/(5*n*seed000Calls), d/(5*n*seed000Calls), float64(d)/float64(c))
}

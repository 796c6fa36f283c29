package sim

import (
	"testing"

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

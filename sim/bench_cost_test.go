package sim

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/vfs"
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

// BenchmarkAIOQueueDepth16Device is fio's libaio loop at iodepth=16 under a
// time model (nvme): one io_submit of one 4 KiB O_DIRECT read per completion
// reaped by io_getevents(1, 16). Each op is one read submitted and reaped;
// getevents/op is how many io_getevents calls that took (1/16 when they
// return whole batches). The two allocations an op are the boxing of the
// iocb and event slices into Call.Obj, one per call.
func BenchmarkAIOQueueDepth16Device(b *testing.B) {
	prof, err := device.Lookup("nvme")
	if err != nil {
		b.Fatal(err)
	}
	k := New(vfs.New(), WithDevice(prof))
	p := k.Spawn()
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_RDWR|unix.O_DIRECT, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := p.Pwrite(fd, make([]byte, 16<<20), 0); err != nil {
		b.Fatal(err)
	}
	ctx, err := p.IoSetup(16)
	if err != nil {
		b.Fatal(err)
	}
	var all []*Iocb
	for i := range 16 {
		all = append(all, &Iocb{Data: uint64(i), Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 4096)})
	}
	free := slices.Clone(all)
	one := make([]*Iocb, 1)
	evs := make([]IoEvent, 16)
	next, calls := 0, 0
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if len(free) == 0 {
			n, err := p.IoGetevents(ctx, 1, 16, evs, nil)
			calls++
			if err != nil || n == 0 {
				b.Fatal(n, err)
			}
			for _, e := range evs[:n] {
				free = append(free, all[e.Data])
			}
		}
		cb := free[len(free)-1]
		free = free[:len(free)-1]
		cb.Offset = int64(next*7919%4096) * 4096
		next++
		one[0] = cb
		if n, err := p.IoSubmit(ctx, one); err != nil || n != 1 {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(calls)/float64(b.N), "getevents/op")
}

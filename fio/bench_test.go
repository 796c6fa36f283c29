package fio

import (
	"fmt"
	"strings"
	"testing"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// BenchmarkRun measures the runner on the kernel model alone: 4 KiB random
// overwrites of a 1 MiB file by a time-based job whose runtime is b.N times
// the kernel's 100 ns per call, so one op is one call (psync: one I/O; sync:
// half an I/O, lseek and write; libaio: an io_submit of one iocb, and an
// io_getevents per 16). Setup is amortized.
func BenchmarkRun(b *testing.B) {
	for _, eng := range []string{"psync", "sync", "libaio\niodepth=16\ndirect=1"} {
		name := strings.SplitN(eng, "\n", 2)[0]
		b.Run(name, func(b *testing.B) {
			text := fmt.Sprintf("[w]\nrw=randwrite\nbs=4k\nsize=1m\ntime_based=1\nruntime=%dus\nioengine=%s\n", max(b.N, 10)/10, eng)
			jobs, err := Parse(strings.NewReader(text), "b.fio")
			if err != nil {
				b.Fatal(err)
			}
			k := sim.New(vfs.New())
			b.ReportAllocs()
			b.ResetTimer()
			res, err := Run(k, k, jobs, Options{})
			if err != nil || res[0].Err != nil {
				b.Fatal(err, res[0].Err)
			}
		})
	}
}

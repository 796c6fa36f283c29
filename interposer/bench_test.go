package interposer_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/internal/cputime"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

// BenchmarkSeedLoop runs seed 000's test loop (open, fcntl F_SETFD, four lseek+read,
// close: 11 calls) straight to the kernel model and through filecache, with a
// counting layer just above the kernel. Metrics: kernel-calls/iter (calls that
// reached the kernel) and ns/call (ns/op / 11).
func BenchmarkSeedLoop(b *testing.B) {
	for _, c := range []struct {
		name  string
		stack func(sim.Handler) sim.Handler
	}{
		{"kernel", nil},
		{"filecache", func(k sim.Handler) sim.Handler { return interposer.NewFileCache(k, msbPath) }},
		{"oraus", func(k sim.Handler) sim.Handler { return interposer.NewOraus(k, msbPath) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, k, p := newWorld(b)
			cnt := interposer.NewCount(k)
			var h sim.Handler = cnt
			if c.stack != nil {
				h = c.stack(cnt)
			}
			q := p.Through(h)
			buf := make([]byte, 1024)
			seedLoop(b, q, buf) // warm up: the first iteration opens for real
			cnt.Reset()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				seedLoop(b, q, buf)
			}
			b.StopTimer()
			b.ReportMetric(float64(cnt.Total())/float64(b.N), "kernel-calls/iter")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/11, "ns/call")
		})
	}
}

// BenchmarkFacadeFloor measures the harness alone: the seed loop's 11 calls
// through the sim.Process facade into a handler that answers every call with 0 —
// the floor under any interposer's ns/call.
func BenchmarkFacadeFloor(b *testing.B) {
	_, _, p := newWorld(b)
	q := p.Through(sim.HandlerFunc(func(c *sim.Call) sim.Result { return sim.Result{Ret: int64(len(c.Buf))} }))
	buf := make([]byte, 1024)
	b.ReportAllocs()
	for b.Loop() {
		seedLoop(b, q, buf)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/11, "ns/call")
}

// BenchmarkFileCacheServedCall measures served calls without the facade: Calls sent
// straight to FileCache.Syscall — lseek alone, read of 512 bytes alone (a memcpy of
// 512 bytes included), and the seed loop's lseek+read pair (ns/call is per call).
func BenchmarkFileCacheServedCall(b *testing.B) {
	_, k, p := newWorld(b)
	fc := interposer.NewFileCache(k, msbPath)
	q := p.Through(fc)
	fd, err := q.Open(msbPath, unix.O_RDONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 512)
	seek := sim.Call{Nr: sim.SYS_LSEEK, Task: p.Task(), Args: [6]int64{int64(fd), 1024, unix.SEEK_SET}}
	read := sim.Call{Nr: sim.SYS_READ, Task: p.Task(), Args: [6]int64{int64(fd), 0, 512}, Buf: buf}
	pread := sim.Call{Nr: sim.SYS_PREAD64, Task: p.Task(), Args: [6]int64{int64(fd), 0, 512, 1024}, Buf: buf}
	for _, c := range []struct {
		name  string
		calls []sim.Call
	}{{"lseek", []sim.Call{seek}}, {"pread512", []sim.Call{pread}}, {"lseek+read512", []sim.Call{seek, read}}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for i := range c.calls {
					fc.Syscall(&c.calls[i])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(c.calls)), "ns/call")
		})
	}
	if fc.Stats().Passed > 1 {
		b.Fatalf("calls passed: %+v", fc.Stats())
	}
}

// BenchmarkHandlerFloor is BenchmarkFileCacheServedCall's floor: the same two Calls
// sent to a Handler that does nothing but return.
func BenchmarkHandlerFloor(b *testing.B) {
	_, _, p := newWorld(b)
	var h sim.Handler = sim.HandlerFunc(func(c *sim.Call) sim.Result { return sim.Result{Ret: c.Args[2]} })
	buf := make([]byte, 512)
	seek := sim.Call{Nr: sim.SYS_LSEEK, Task: p.Task(), Args: [6]int64{3, 1024, unix.SEEK_SET}}
	read := sim.Call{Nr: sim.SYS_READ, Task: p.Task(), Args: [6]int64{3, 0, 512}, Buf: buf}
	for b.Loop() {
		h.Syscall(&seek)
		h.Syscall(&read)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2, "ns/call")
}

// nopLayer is the thinnest interposer: it passes every call to the next layer.
type nopLayer struct{ next sim.Handler }

func (n *nopLayer) Syscall(c *sim.Call) sim.Result { return n.next.Syscall(c) }

// BenchmarkSeam compares, in one binary, the seed loop (11 calls) on the facade
// bound to the kernel (direct), through one layer that passes everything on
// (nop), and through filecache, which answers every call of the loop itself.
// Run with -count to alternate the three.
func BenchmarkSeam(b *testing.B) {
	for _, c := range []struct {
		name  string
		stack func(sim.Handler) sim.Handler
	}{
		{"direct", nil},
		{"nop", func(k sim.Handler) sim.Handler { return &nopLayer{k} }},
		{"filecache", func(k sim.Handler) sim.Handler { return interposer.NewFileCache(k, msbPath) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, k, p := newWorld(b)
			q := p
			if c.stack != nil {
				q = p.Through(c.stack(k))
			}
			buf := make([]byte, 1024)
			seedLoop(b, q, buf)
			b.ReportAllocs()
			b.ResetTimer()
			defer cputime.Bench(b, 11, "cpu-ns/call")()
			for b.Loop() {
				seedLoop(b, q, buf)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/11, "ns/call")
		})
	}
}

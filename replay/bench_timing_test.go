package replay

import (
	"testing"

	iodevice "github.com/iosim/iosim/device"
)

// BenchmarkReplayDevice is BenchmarkReplayVerify with a time model
// (--device hdd-7200): compare its lines/s.
func BenchmarkReplayDevice(b *testing.B) {
	p := bigTrace(b, 500_000)
	prof, err := iodevice.Lookup("hdd-7200")
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var lines int64
	for range b.N {
		rep, err := Run([]string{p}, Options{Verify: true, Device: prof})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Divergences != 0 || rep.Timing == nil {
			b.Fatalf("%d divergences", rep.Divergences)
		}
		lines += rep.Calls
	}
	b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
}

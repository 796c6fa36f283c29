package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bigTrace writes a trace of about n lines: the seed-000 loop of oraus.seek.strace
// repeated, with the program's start-up before it and its exit after.
func bigTrace(tb testing.TB, n int) string {
	data, err := os.ReadFile("../testdata/traces/oraus.seek.strace")
	if err != nil {
		tb.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	var starts []int
	for i, l := range lines {
		if strings.HasPrefix(l, `openat(AT_FDCWD, "oraus.msb", O_RDONLY`) {
			starts = append(starts, i)
		}
	}
	head, body := lines[:starts[0]], lines[starts[0]:starts[1]]
	tail := lines[starts[len(starts)-1]+len(body):]
	var b strings.Builder
	for _, l := range head {
		b.WriteString(l + "\n")
	}
	for k := 0; k < (n-len(head)-len(tail))/len(body); k++ {
		for _, l := range body {
			b.WriteString(l + "\n")
		}
	}
	for _, l := range tail {
		b.WriteString(l + "\n")
	}
	p := filepath.Join(tb.TempDir(), "big.strace")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return p
}

// BenchmarkReplayVerify measures end-to-end `iosim replay --verify` of a
// 500,000-line trace; it reports lines per second.
func BenchmarkReplayVerify(b *testing.B) {
	p := bigTrace(b, 500_000)
	b.ResetTimer()
	var lines int64
	for range b.N {
		rep, err := Run([]string{p}, Options{Verify: true})
		if err != nil {
			b.Fatal(err)
		}
		if rep.Divergences != 0 {
			b.Fatalf("%d divergences", rep.Divergences)
		}
		lines += rep.Calls
	}
	b.ReportMetric(float64(lines)/b.Elapsed().Seconds(), "lines/s")
}

package strace_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/iosim/iosim/strace"
)

// corpus returns every trace concatenated (per-file pids differ, so joined
// pairs never cross files), repeated to about 16 MiB, and its line count.
func benchCorpus(b *testing.B) ([]byte, int) {
	var all []byte
	for _, f := range traceFiles(b) {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		all = append(all, d...)
	}
	data := bytes.Repeat(all, 8)
	return data, bytes.Count(data, []byte("\n"))
}

// BenchmarkParse compares Next (and Next plus building the argument tree)
// with plain bufio.Scanner line scanning of the same input. Its ratio
// sub-benchmark runs the two side by side and reports parse/scan, the
// median of the per-iteration ratios:
//
//	go test ./strace -run x -bench Parse/ratio -benchtime 100x
func BenchmarkParse(b *testing.B) {
	data, lines := benchCorpus(b)
	report := func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
	}
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			scanLines(b, data, lines)
		}
		report(b)
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			parseLines(b, data, false)
		}
		report(b)
	})
	b.Run("parse+args", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			parseLines(b, data, true)
		}
		report(b)
	})
	// ratio scans and parses the input once each per iteration, in turn
	// (which goes first alternates), so that both see the same machine: on
	// a shared machine the load moves the time of either by tens of
	// percent from one second to the next, but much less within a pair.
	b.Run("ratio", func(b *testing.B) {
		var ratios []float64
		var scanT, parseT time.Duration
		for b.Loop() {
			var ts, tp time.Duration
			if len(ratios)%2 == 0 {
				ts = timed(func() { scanLines(b, data, lines) })
				tp = timed(func() { parseLines(b, data, false) })
			} else {
				tp = timed(func() { parseLines(b, data, false) })
				ts = timed(func() { scanLines(b, data, lines) })
			}
			ratios = append(ratios, float64(tp)/float64(ts))
			scanT, parseT = scanT+ts, parseT+tp
		}
		n := float64(len(ratios) * lines)
		b.ReportMetric(median(ratios), "parse/scan")
		b.ReportMetric(float64(scanT.Nanoseconds())/n, "scan-ns/line")
		b.ReportMetric(float64(parseT.Nanoseconds())/n, "parse-ns/line")
		b.ReportMetric(0, "ns/op") // the pair's time says nothing on its own
	})
}

// scanLines counts the lines of data with bufio.Scanner.
func scanLines(b *testing.B, data []byte, lines int) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	n := 0
	for sc.Scan() {
		n++
	}
	if n != lines {
		b.Fatal(n, lines)
	}
}

// parseLines parses every event of data, and builds its argument tree
// when args is set.
func parseLines(b *testing.B, data []byte, args bool) {
	p := strace.NewParser(bytes.NewReader(data), "bench", strace.Options{})
	for {
		ev, err := p.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		if args {
			ev.Args()
		}
	}
}

func timed(f func()) time.Duration {
	t := time.Now()
	f()
	return time.Since(t)
}

// median returns the median of v, which it sorts.
func median(v []float64) float64 {
	slices.Sort(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}

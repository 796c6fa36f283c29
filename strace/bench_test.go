package strace_test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"testing"

	"iosim/strace"
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
// with plain bufio.Scanner line scanning of the same input.
func BenchmarkParse(b *testing.B) {
	data, lines := benchCorpus(b)
	report := func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
	}
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
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
		report(b)
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := strace.NewParser(bytes.NewReader(data), "bench", strace.Options{})
			for {
				_, err := p.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		report(b)
	})
	b.Run("parse+args", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p := strace.NewParser(bytes.NewReader(data), "bench", strace.Options{})
			for {
				ev, err := p.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					b.Fatal(err)
				}
				ev.Args()
			}
		}
		report(b)
	})
}

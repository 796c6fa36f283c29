// Package cputime measures the CPU time of the calling OS thread, or of the
// whole process, for benchmarks on a shared machine: unlike wall time, it does
// not grow while the thread waits for a CPU. Lock the goroutine to its thread
// (runtime.LockOSThread) around what Thread measures.
package cputime

import (
	"runtime"
	"syscall"
	"testing"
	"time"
)

// rusageThread is RUSAGE_THREAD (getrusage(2), Linux).
const rusageThread = 1

// Thread returns the user and system CPU time the calling thread has used, or 0
// where getrusage(RUSAGE_THREAD) is not available.
func Thread() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(rusageThread, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Process returns the user and system CPU time all the threads of the process
// have used (other goroutines' and the garbage collector's included), or 0
// where getrusage(2) fails.
func Process() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Bench locks the benchmark's goroutine to its thread and returns a function,
// to defer, that reports the thread's CPU time per operation divided by calls as
// the metric unit ("cpu-ns/op", "cpu-ns/call") and unlocks the thread.
func Bench(b *testing.B, calls int, unit string) func() {
	runtime.LockOSThread()
	t0 := Thread()
	return func() {
		b.ReportMetric(float64(Thread()-t0)/float64(b.N)/float64(calls), unit)
		runtime.UnlockOSThread()
	}
}

package main

import (
	"github.com/iosim/iosim/replay"
	"github.com/iosim/iosim/scenarios"
)

// writeComparisonChart draws a --compare or --vs-device replay into path:
// the two runs' virtual times with the ratio, and where each one's time
// went.
func writeComparisonChart(path string, c *comparison, baseName, variantName string) error {
	return scenarios.WriteComparison(path, chartResult(c.Baseline, baseName), chartResult(c.Variant, variantName))
}

// chartResult is what the charts read of a replay: its virtual time, where
// the time went, and its time by syscall.
func chartResult(r *replay.Report, name string) *scenarios.Result {
	out := &scenarios.Result{Arm: name, TimeNs: r.VirtualTimeNs, Calls: r.Calls, KernelCalls: r.KernelCalls}
	if r.Timing != nil {
		out.Breakdown = &r.Timing.Breakdown
		for _, s := range r.Timing.Syscalls {
			out.Syscalls = append(out.Syscalls, scenarios.SyscallRow{Name: s.Name, Calls: s.Calls, Errors: s.Errors, TimeNs: int64(s.Seconds * 1e9)})
		}
	}
	return out
}

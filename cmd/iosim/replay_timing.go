package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/replay"
	"github.com/iosim/iosim/sim"
)

// comparison is the JSON of a replay run twice: without and with the --compare
// stack, or on --device and on --vs-device. Ratio is variant time / baseline time.
type comparison struct {
	Baseline *replay.Report `json:"baseline"`
	Variant  *replay.Report `json:"variant"`
	Ratio    float64        `json:"ratio"`
}

// timedReplay runs the replay of files once, or twice when compare or vsDevice
// asks for a second run, and prints the report(s) with the timing tables.
func timedReplay(files []string, opts replay.Options, devName, vsDevice string, compare []string, asJSON, verify bool, svg string, stdout, stderr io.Writer) int {
	if devName != "" {
		p, err := device.Lookup(devName)
		if err != nil {
			fmt.Fprintf(stderr, "iosim replay: --device: %v\n", err)
			return 2
		}
		opts.Device = p
	}
	if vsDevice != "" && opts.Device == nil {
		fmt.Fprintln(stderr, "iosim replay: --vs-device needs --device")
		return 2
	}
	if vsDevice != "" && len(compare) > 0 {
		fmt.Fprintln(stderr, "iosim replay: --compare and --vs-device are exclusive")
		return 2
	}
	base, err := replay.Run(files, opts)
	if err != nil {
		fmt.Fprintf(stderr, "iosim replay: %v\n", err)
		return 2
	}
	if noCalls(base, "replay", stderr) {
		return 2
	}
	if vsDevice == "" && len(compare) == 0 {
		if asJSON {
			return writeJSON(stdout, stderr, base)
		}
		writeReport(stdout, base, verify, false)
		writeTiming(stdout, base.Timing)
		return replayStatus(base, verify, stderr)
	}
	vopts := opts
	if vsDevice != "" {
		p, err := device.Lookup(vsDevice)
		if err != nil {
			fmt.Fprintf(stderr, "iosim replay: --vs-device: %v\n", err)
			return 2
		}
		vopts.Device = p
	} else {
		vopts.Stack = append(slices.Clone(opts.Stack), compare...)
	}
	variant, err := replay.Run(files, vopts)
	if err != nil {
		fmt.Fprintf(stderr, "iosim replay: %v\n", err)
		return 2
	}
	cmp := comparison{Baseline: base, Variant: variant}
	if base.VirtualTimeNs > 0 {
		cmp.Ratio = float64(variant.VirtualTimeNs) / float64(base.VirtualTimeNs)
	}
	if svg != "" {
		bn, vn := cmp.Baseline.Stack, cmp.Variant.Stack
		if vsDevice != "" {
			bn, vn = devName, vsDevice
		}
		if bn == "" {
			bn = "no stack"
		}
		if err := writeComparisonChart(svg, &cmp, bn, vn); err != nil {
			fmt.Fprintf(stderr, "iosim replay: --svg: %v\n", err)
			return 2
		}
	}
	if asJSON {
		return writeJSON(stdout, stderr, cmp)
	}
	writeComparison(stdout, &cmp)
	return max(replayStatus(base, verify, stderr), replayStatus(variant, verify, stderr))
}

func writeJSON(stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "iosim replay: %v\n", err)
		return 2
	}
	return 0
}

// replayStatus is the exit status of a replay that ran to its end.
func replayStatus(rep *replay.Report, verify bool, stderr io.Writer) int {
	switch {
	case verify && rep.Divergences > 0:
		return 1
	case verify && rep.Verified == 0:
		fmt.Fprintf(stderr, "iosim replay: --verify compared no call: %d system calls in the input, %d replayed\n", rep.Calls, rep.Replayed)
		return 1
	}
	return 0
}

func us(ns int64) float64 { return float64(ns) / 1e3 }
func ms(ns int64) float64 { return float64(ns) / 1e6 }

// writeTiming prints the per-syscall table (strace -c -w's columns with p50
// and p99), the per-file table and where the time went.
func writeTiming(w io.Writer, t *replay.Timing) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "\ndevice: %s   virtual time: %.3f ms   time in calls: %.3f ms\n", t.Device, ms(t.VirtualTimeNs), ms(t.CallTimeNs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "% time\tseconds\tusecs/call\tp50 us\tp99 us\tcalls\terrors\tsyscall\t")
	for _, s := range t.Syscalls {
		fmt.Fprintf(tw, "%.2f\t%.6f\t%.1f\t%.1f\t%.1f\t%d\t%d\t%s\t\n", s.Percent, s.Seconds, us(s.AvgNs), us(s.P50Ns), us(s.P99Ns), s.Calls, s.Errors, s.Name)
	}
	tw.Flush()
	if len(t.Files) > 0 {
		fmt.Fprintln(w, "\nper file:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "% time\tseconds\tcalls\tpath\t")
		for _, f := range t.Files {
			fmt.Fprintf(tw, "%.2f\t%.6f\t%d\t%s\t\n", f.Percent, f.Seconds, f.Calls, f.Path)
		}
		tw.Flush()
	}
	writeBreakdown(w, &t.Breakdown)
	writeRecorded(w, t)
}

// writeRecorded prints the model against the durations strace -T recorded.
func writeRecorded(w io.Writer, t *replay.Timing) {
	if t.Recorded == nil {
		return
	}
	fmt.Fprintf(w, "\nmodel against the recording (strace overhead %.1f us a call subtracted):\n", us(t.StraceOverheadNs))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "recorded ms\tmodel ms\tratio\tmedian ratio\tcalls\tsyscall\t")
	for _, c := range t.Classes {
		fmt.Fprintf(tw, "%.3f\t%.3f\t%s\t%.3g\t%d\t%s\t\n", ms(c.RecordedNs), ms(c.ModelNs), ratio(c.ModelNs, c.RecordedNs), c.MedianRatio, c.Calls, c.Name)
	}
	for _, r := range []struct {
		what string
		t    *replay.TimingTotals
	}{{"all calls", t.Recorded}, {"device-bound calls (>= 100 us recorded)", t.DeviceBound}} {
		fmt.Fprintf(tw, "%.3f\t%.3f\t%s\t\t%d\t%s\t\n", ms(r.t.RecordedNs), ms(r.t.ModelNs), ratio(r.t.ModelNs, r.t.RecordedNs), r.t.Calls, r.what)
	}
	tw.Flush()
}

func writeBreakdown(w io.Writer, b *sim.Breakdown) {
	fmt.Fprintf(w, "\nwhere the time went:\n")
	for _, r := range breakdownRows(b) {
		fmt.Fprintf(w, "%12.3f ms  %s\n", ms(r.ns), r.what)
	}
	fmt.Fprintf(w, "device: %d reads (%d bytes), %d writes (%d bytes), %d flushes; page cache: %d hits, %d misses, %d pages read ahead\n",
		b.DeviceReads, b.BytesRead, b.DeviceWrites, b.BytesWritten, b.Flushes, b.CacheHits, b.CacheMisses, b.ReadaheadPages)
}

type row struct {
	ns   int64
	what string
}

func breakdownRows(b *sim.Breakdown) []row {
	return []row{
		{b.CPU, "kernel CPU (entry, path lookup, page cache, journalling)"},
		{b.Copy, "page-cache copy"},
		{b.QueueWait, "device queue wait"},
		{b.Device, "device service"},
		{b.LockWait, fmt.Sprintf("lock wait (%d waits)", b.LockWaits)},
		{b.Journal, fmt.Sprintf("journal commit (%d commits)", b.Commits)},
		{b.Throttle, "dirty throttling"},
		{b.User, "user work"},
		{b.RunQueue, "run-queue wait (all processors busy)"},
		{b.Sleep, "sleep (waiting for another thread or a timeout)"},
	}
}

// writeComparison prints two replays side by side with their ratios.
func writeComparison(w io.Writer, c *comparison) {
	b, v := c.Baseline, c.Variant
	name := func(r *replay.Report) string {
		s := r.Stack
		if s == "" {
			s = "no stack"
		}
		if r.Timing != nil {
			s += " on " + r.Timing.Device
		}
		return s
	}
	fmt.Fprintf(w, "iosim replay: baseline: %s; variant: %s\n", name(b), name(v))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "baseline\tvariant\tratio\t\t")
	fmt.Fprintf(tw, "%.3f ms\t%.3f ms\t%s\tvirtual time\t\n", ms(b.VirtualTimeNs), ms(v.VirtualTimeNs), ratio(v.VirtualTimeNs, b.VirtualTimeNs))
	fmt.Fprintf(tw, "%d\t%d\t%s\tcalls reaching the kernel\t\n", b.KernelCalls, v.KernelCalls, ratio(v.KernelCalls, b.KernelCalls))
	if b.Timing != nil && v.Timing != nil {
		bs, vs := map[string]replay.SyscallTiming{}, map[string]replay.SyscallTiming{}
		var names []string
		for _, s := range b.Timing.Syscalls {
			bs[s.Name] = s
			names = append(names, s.Name)
		}
		for _, s := range v.Timing.Syscalls {
			vs[s.Name] = s
			if _, ok := bs[s.Name]; !ok {
				names = append(names, s.Name)
			}
		}
		for _, n := range names {
			x, y := bs[n], vs[n]
			fmt.Fprintf(tw, "%.6f s\t%.6f s\t%s\t%s (%d/%d calls)\t\n", x.Seconds, y.Seconds, ratioF(y.Seconds, x.Seconds), n, x.Calls, y.Calls)
		}
		br, vr := breakdownRows(&b.Timing.Breakdown), breakdownRows(&v.Timing.Breakdown)
		for i := range br {
			fmt.Fprintf(tw, "%.3f ms\t%.3f ms\t%s\t%s\t\n", ms(br[i].ns), ms(vr[i].ns), ratio(vr[i].ns, br[i].ns), vr[i].what)
		}
	}
	tw.Flush()
}

func ratio(v, b int64) string { return ratioF(float64(v), float64(b)) }

func ratioF(v, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3gx", v/b)
}

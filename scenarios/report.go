package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/iosim/iosim/fio"
	"github.com/iosim/iosim/sim"
)

// maxListed bounds the divergences and differences a report lists (all are
// counted).
const maxListed = 10

func (s *Scenario) cmdRun(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 0, -1, "show")
	if err != nil {
		return "", err
	}
	show, err := a.oneOf("show", "counts", "counts", "calls")
	if err != nil {
		return "", err
	}
	arms := s.arms
	if len(a.words) > 0 {
		arms = nil
		for _, n := range a.words {
			ar, err := s.arm(td, n)
			if err != nil {
				return "", err
			}
			arms = append(arms, ar)
		}
	}
	if len(arms) == 0 {
		return "", malformed(td, "no arm to run: define one with calls, trace or fio")
	}
	var b strings.Builder
	for i, ar := range arms {
		r, err := ar.result()
		if err != nil {
			return "", &MalformedError{Pos: td.Pos, Msg: err.Error()}
		}
		if i > 0 {
			b.WriteString("\n")
		}
		writeResult(&b, ar, r)
		if show == "calls" {
			if cw, ok := ar.work.(*callsWork); ok && cw.calls > maxObserved {
				return "", malformed(td, "show=calls lists at most %d calls; %s makes %d", maxObserved, ar.name, cw.calls)
			}
			if r.log == nil {
				return "", malformed(td, "show=calls lists the calls of calls and stdio arms; %s is not one", ar.name)
			}
			for _, l := range r.log {
				fmt.Fprintf(&b, "  > %s\n", l)
			}
		}
		s.lastArm = ar
		if s.SVG != nil {
			s.SVG.addRun(r)
		}
	}
	return b.String(), nil
}

// formatNs prints virtual nanoseconds with a unit (3 significant digits).
func formatNs(ns int64) string { return fio.FormatNs(float64(ns)) }

func writeResult(b *strings.Builder, ar *arm, r *Result) {
	b.WriteString(ar.describe() + "\n")
	fmt.Fprintf(b, "virtual time %s, calls %d, reached the kernel %d, diverged %d\n", formatNs(r.TimeNs), r.Calls, r.KernelCalls, r.NDiverged)
	tw := tabwriter.NewWriter(b, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  syscall\tcalls\terrors\tbytes\ttime\t")
	for _, row := range r.Syscalls {
		t := "-"
		if row.TimeNs >= 0 {
			t = formatNs(row.TimeNs)
		}
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%d\t%s\t\n", row.Name, row.Calls, row.Errors, row.Bytes, t)
	}
	tw.Flush()
	for _, j := range r.Fio {
		for _, d := range []struct {
			name string
			dir  fio.Dir
		}{{"read", j.Read}, {"write", j.Write}} {
			if d.dir.TotalIOs == 0 {
				continue
			}
			js := fio.ToJSON([]*fio.JobResult{j}).Jobs[0]
			jd := js.Read
			if d.name == "write" {
				jd = js.Write
			}
			fmt.Fprintf(b, "  fio %s.%d %s: %d I/Os, %.0f IOPS, %d KiB/s, clat p50 %s p99 %s\n", j.Job.Name, j.JobNum, d.name, jd.TotalIOs, jd.IOPS, jd.BW,
				formatNs(jd.ClatNs.Percentile[fio.PercentileKey(50)]), formatNs(jd.ClatNs.Percentile[fio.PercentileKey(99)]))
		}
		if j.Sync.TotalIOs > 0 {
			fmt.Fprintf(b, "  fio %s.%d sync: %d calls\n", j.Job.Name, j.JobNum, j.Sync.TotalIOs)
		}
	}
	writeTime(b, r)
	if r.Err != "" {
		fmt.Fprintf(b, "stopped: %s\n", r.Err)
	}
	for i, d := range r.Divergences {
		if i == maxListed {
			fmt.Fprintf(b, "  ... and %d more\n", r.NDiverged-int64(i))
			break
		}
		fmt.Fprintf(b, "  diverged: %s\n", d)
	}
}

// timeRow is one line of where an arm's time went.
type timeRow struct {
	what string
	ns   int64
}

// timeRows splits a breakdown into what the time went to.
func timeRows(b *sim.Breakdown) []timeRow {
	return []timeRow{
		{"kernel CPU", b.CPU},
		{"page-cache copy", b.Copy},
		{"user work", b.User},
		{"device queue wait", b.QueueWait},
		{"device service", b.Device},
		{fmt.Sprintf("lock wait (%d waits)", b.LockWaits), b.LockWait},
		{fmt.Sprintf("journal commit (%d commits)", b.Commits), b.Journal},
		{"dirty throttling", b.Throttle},
		{"run-queue wait", b.RunQueue},
		{"sleep", b.Sleep},
	}
}

// percentiles are the latency percentiles a report prints.
var percentiles = []float64{50, 90, 99, 99.9}

// writeTime prints, for an arm on a device, where its threads' time went
// (the time model's breakdown; threads that ran side by side each count, so
// the sum may exceed the virtual time), what the device and page cache did,
// and the latency percentiles of its calls (or fio's I/Os).
func writeTime(b *strings.Builder, r *Result) {
	bd := r.Breakdown
	if bd == nil {
		return
	}
	b.WriteString("  where the time went (all threads):")
	for _, row := range timeRows(bd) {
		if row.ns != 0 {
			fmt.Fprintf(b, " %s %s,", row.what, formatNs(row.ns))
		}
	}
	fmt.Fprintf(b, " total %s\n", formatNs(bd.Total()))
	fmt.Fprintf(b, "  device: %d reads (%d bytes), %d writes (%d bytes), %d flushes; page cache: %d hits, %d misses, %d pages read ahead\n",
		bd.DeviceReads, bd.BytesRead, bd.DeviceWrites, bd.BytesWritten, bd.Flushes, bd.CacheHits, bd.CacheMisses, bd.ReadaheadPages)
	if r.Lat != nil && r.Lat.TotalCount() > 0 {
		b.WriteString("  latency:")
		for _, q := range percentiles {
			fmt.Fprintf(b, " p%s %s", strconv.FormatFloat(q, 'f', -1, 64), formatNs(r.Lat.ValueAtQuantile(q)))
		}
		fmt.Fprintf(b, " max %s (%d calls)\n", formatNs(r.Lat.Max()), r.Lat.TotalCount())
	}
}

// comparison is the last compare: its metric and ratio A/B.
type comparison struct {
	a, b   *Result
	metric string
	ratio  float64
}

var metrics = []string{"time", "calls", "kernel-calls"}

func metric(r *Result, m string) float64 {
	switch m {
	case "calls":
		return float64(r.Calls)
	case "kernel-calls":
		return float64(r.KernelCalls)
	}
	return float64(r.TimeNs)
}

func (s *Scenario) cmdCompare(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 2, 2, "by")
	if err != nil {
		return "", err
	}
	by, err := a.oneOf("by", "time", metrics...)
	if err != nil {
		return "", err
	}
	var res [2]*Result
	for i, n := range a.words {
		ar, err := s.arm(td, n)
		if err != nil {
			return "", err
		}
		if res[i], err = ar.result(); err != nil {
			return "", &MalformedError{Pos: td.Pos, Msg: err.Error()}
		}
	}
	A, B := res[0], res[1]
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\t%s\t%s\t%s/%s\t\n", A.Arm, B.Arm, A.Arm, B.Arm)
	row := func(name, x, y string, vx, vy float64) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", name, x, y, ratioString(vx, vy))
	}
	row("virtual time", formatNs(A.TimeNs), formatNs(B.TimeNs), float64(A.TimeNs), float64(B.TimeNs))
	row("calls", fmt.Sprint(A.Calls), fmt.Sprint(B.Calls), float64(A.Calls), float64(B.Calls))
	row("reached the kernel", fmt.Sprint(A.KernelCalls), fmt.Sprint(B.KernelCalls), float64(A.KernelCalls), float64(B.KernelCalls))
	row("diverged", fmt.Sprint(A.NDiverged), fmt.Sprint(B.NDiverged), float64(A.NDiverged), float64(B.NDiverged))
	if A.Breakdown != nil && B.Breakdown != nil {
		ra, rb := timeRows(A.Breakdown), timeRows(B.Breakdown)
		for i := range ra {
			if ra[i].ns == 0 && rb[i].ns == 0 {
				continue
			}
			what := ra[i].what
			if j := strings.IndexByte(what, '('); j > 0 {
				// the counts of both arms
				what = fmt.Sprintf("%s(%s / %s)", what[:j], strings.Trim(what[j:], "()"), strings.Trim(rb[i].what[j:], "()"))
			}
			row(what, formatNs(ra[i].ns), formatNs(rb[i].ns), float64(ra[i].ns), float64(rb[i].ns))
		}
	}
	if A.Breakdown != nil && B.Breakdown != nil && A.Lat != nil && B.Lat != nil && A.Lat.TotalCount() > 0 && B.Lat.TotalCount() > 0 {
		for _, q := range []float64{50, 99} {
			x, y := A.Lat.ValueAtQuantile(q), B.Lat.ValueAtQuantile(q)
			row(fmt.Sprintf("latency p%g", q), formatNs(x), formatNs(y), float64(x), float64(y))
		}
	}
	tw.Flush()
	c := &comparison{a: A, b: B, metric: by, ratio: ratio(metric(A, by), metric(B, by))}
	fmt.Fprintln(&b, c.line())
	s.lastCmp = c
	if s.SVG != nil {
		s.SVG.addComparison(c)
	}
	return b.String(), nil
}

// line is the comparison's answer: "ratio (METRIC) A/B = R".
func (c *comparison) line() string {
	return fmt.Sprintf("ratio (%s) %s/%s = %s", c.metric, c.a.Arm, c.b.Arm, ratioString(metric(c.a, c.metric), metric(c.b, c.metric)))
}

func ratio(x, y float64) float64 {
	if y == 0 {
		if x == 0 {
			return 1
		}
		return math.Inf(1)
	}
	return x / y
}

func ratioString(x, y float64) string {
	r := ratio(x, y)
	if math.IsInf(r, 1) {
		return "inf"
	}
	return strconv.FormatFloat(r, 'f', 2, 64)
}

// equivResult is what equiv found.
type equivResult struct {
	arm    string
	calls  int
	differ int
}

func (s *Scenario) cmdEquiv(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1)
	if err != nil {
		return "", err
	}
	ar, err := s.arm(td, a.words[0])
	if err != nil {
		return "", err
	}
	cw, ok := ar.work.(*callsWork)
	if !ok {
		return "", malformed(td, "arm %s is not a calls arm: equiv runs inline calls (for a trace, run reports its divergences from the recording)", ar.name)
	}
	if len(ar.setup.stack) == 0 {
		return "", malformed(td, "arm %s has no stack: equiv compares an arm with and without its stack", ar.name)
	}
	if cw.calls > maxObserved {
		return "", malformed(td, "arm %s makes %d calls: equiv compares at most %d", ar.name, cw.calls, maxObserved)
	}
	with, err := ar.result()
	if err != nil {
		return "", &MalformedError{Pos: td.Pos, Msg: err.Error()}
	}
	without, err := cw.run(ar.setup, false)
	if err != nil {
		return "", &MalformedError{Pos: td.Pos, Msg: err.Error()}
	}
	e := &equivResult{arm: ar.name, calls: len(with.obs)}
	var list strings.Builder
	for i := range with.obs {
		k, st := without.obs[i], with.obs[i]
		if k.line == st.line && bytes.Equal(k.data, st.data) {
			continue
		}
		e.differ++
		if e.differ <= maxListed {
			fmt.Fprintf(&list, "  %s: kernel: %s\n  %s  stack:  %s\n", k.at, k.line, strings.Repeat(" ", len(k.at)), st.line)
			if k.line == st.line {
				fmt.Fprintf(&list, "  %s  (the bytes read differ beyond those shown)\n", strings.Repeat(" ", len(k.at)))
			}
		}
	}
	s.lastEquiv = e
	var b strings.Builder
	fmt.Fprintf(&b, "equiv %s: %d calls, %d differ with %s\n", ar.name, e.calls, e.differ, ar.setup.stack.String())
	b.WriteString(list.String())
	if e.differ > maxListed {
		fmt.Fprintf(&b, "  ... and %d more\n", e.differ-maxListed)
	}
	if e.differ == 0 {
		b.WriteString("read-equivalent: every result, errno, fd and byte read is the kernel's\n")
	}
	return b.String(), nil
}

// expectMetrics are the quantities expect checks.
var expectMetrics = []string{"ratio", "differ", "divergences", "calls", "kernel-calls", "time", "lock-waits", "findings"}

func (s *Scenario) cmdExpect(td *datadriven.TestData) (string, error) {
	// Both `expect ratio=5..12` and `expect ratio 5..12` read as the claim.
	var claims [][2]string
	armName := ""
	var words []string
	for _, ca := range td.CmdArgs {
		switch {
		case len(ca.Vals) == 0:
			words = append(words, ca.Key)
		case len(ca.Vals) > 1:
			return "", malformed(td, "argument %s= takes one value", ca.Key)
		case ca.Key == "arm":
			armName = ca.Vals[0]
		default:
			claims = append(claims, [2]string{ca.Key, ca.Vals[0]})
		}
	}
	if len(words)%2 != 0 {
		return "", malformed(td, "want METRIC VALUE pairs (or METRIC=VALUE), got %q", strings.Join(words, " "))
	}
	for i := 0; i < len(words); i += 2 {
		claims = append(claims, [2]string{words[i], words[i+1]})
	}
	if len(claims) == 0 {
		return "", malformed(td, "missing claim: e.g. ratio=5..12, divergences=0 (metrics: %s)", strings.Join(expectMetrics, ", "))
	}
	var b strings.Builder
	for _, c := range claims {
		got, what, err := s.measure(td, c[0], armName)
		if err != nil {
			return "", err
		}
		lo, hi, err := parseRange(c[1], c[0] == "time")
		if err != nil {
			return "", malformed(td, "%s=%s: %v", c[0], c[1], err)
		}
		shown := strconv.FormatFloat(got, 'f', -1, 64)
		switch c[0] {
		case "ratio":
			shown = strconv.FormatFloat(got, 'f', 2, 64)
		case "time":
			shown = formatNs(int64(got))
		}
		if got < lo || got > hi {
			return "", &AssertionError{Pos: td.Pos, Msg: fmt.Sprintf("expect %s=%s: %s = %s", c[0], c[1], what, shown)}
		}
		fmt.Fprintf(&b, "ok: %s = %s, want %s\n", what, shown, c[1])
	}
	return b.String(), nil
}

// measure returns the value of a metric and a phrase that names it.
func (s *Scenario) measure(td *datadriven.TestData, m, armName string) (float64, string, error) {
	switch m {
	case "ratio":
		if s.lastCmp == nil {
			return 0, "", malformed(td, "ratio: no compare before this expect")
		}
		c := s.lastCmp
		return c.ratio, fmt.Sprintf("ratio (%s) %s/%s", c.metric, c.a.Arm, c.b.Arm), nil
	case "findings":
		return s.findings(td, armName)
	case "differ":
		if s.lastEquiv == nil {
			return 0, "", malformed(td, "differ: no equiv before this expect")
		}
		return float64(s.lastEquiv.differ), "calls of " + s.lastEquiv.arm + " that differ", nil
	case "divergences", "calls", "kernel-calls", "time", "lock-waits":
	default:
		return 0, "", malformed(td, "unknown metric %q (known: %s)", m, strings.Join(expectMetrics, ", "))
	}
	ar := s.lastArm
	if armName != "" {
		var err error
		if ar, err = s.arm(td, armName); err != nil {
			return 0, "", err
		}
	}
	if ar == nil {
		return 0, "", malformed(td, "%s: which arm? give arm=NAME or run one before this expect", m)
	}
	r, err := ar.result()
	if err != nil {
		return 0, "", &MalformedError{Pos: td.Pos, Msg: err.Error()}
	}
	switch m {
	case "divergences":
		return float64(r.NDiverged), ar.name + "'s divergences", nil
	case "calls":
		return float64(r.Calls), ar.name + "'s calls", nil
	case "kernel-calls":
		return float64(r.KernelCalls), ar.name + "'s calls reaching the kernel", nil
	case "lock-waits":
		if r.Breakdown == nil {
			return 0, "", malformed(td, "lock-waits: arm %s runs on the default device (no time model counts lock waits)", ar.name)
		}
		return float64(r.Breakdown.LockWaits), ar.name + "'s lock waits", nil
	}
	return float64(r.TimeNs), ar.name + "'s virtual time", nil
}

// parseRange reads N, LO..HI, LO.. or ..HI (inclusive). With dur, values
// may be Go durations (1ms) as well as nanoseconds.
func parseRange(v string, dur bool) (float64, float64, error) {
	num := func(s string) (float64, error) {
		if dur {
			if d, err := time.ParseDuration(s); err == nil {
				return float64(d), nil
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(f) {
			return 0, fmt.Errorf("want a number or a range LO..HI")
		}
		return f, nil
	}
	lo, hi, isRange := strings.Cut(v, "..")
	if !isRange {
		x, err := num(v)
		return x, x, err
	}
	l, h := math.Inf(-1), math.Inf(1)
	var err error
	if lo != "" {
		if l, err = num(lo); err != nil {
			return 0, 0, err
		}
	}
	if hi != "" {
		if h, err = num(hi); err != nil {
			return 0, 0, err
		}
	}
	if lo == "" && hi == "" {
		return 0, 0, fmt.Errorf("an empty range")
	}
	if l > h {
		return 0, 0, fmt.Errorf("the range is empty (%s > %s)", lo, hi)
	}
	return l, h, nil
}

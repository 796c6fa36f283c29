package replay

import (
	"cmp"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// Timing is where a replay's virtual time went under a time model
// (Options.Device): per syscall what strace -c -w shows (seconds, % time,
// calls, errors, average) with the median and 99th percentile, per file, and the
// kernel's breakdown (CPU, page-cache copy, device queue wait, device service,
// lock wait, journal commit, throttling).
type Timing struct {
	Device        string          `json:"device"`
	VirtualTimeNs int64           `json:"virtual_time_ns"` // the latest thread clock
	CallTimeNs    int64           `json:"call_time_ns"`    // the sum of the calls' times
	Syscalls      []SyscallTiming `json:"syscalls"`        // by time, then name
	Files         []FileTiming    `json:"files"`           // by time, then path
	Breakdown     sim.Breakdown   `json:"breakdown"`

	// With Options.Timing, on a trace recorded with -T: the model's time of
	// each call against its recorded duration, less strace's own overhead per
	// call (the smallest recorded duration in the trace, a null syscall's).
	StraceOverheadNs int64         `json:"strace_overhead_ns,omitempty"`
	Classes          []ClassTiming `json:"classes,omitempty"`      // by recorded time, then name
	Recorded         *TimingTotals `json:"recorded,omitempty"`     // every call with a duration
	DeviceBound      *TimingTotals `json:"device_bound,omitempty"` // calls that took >= 100 us when recorded
}

// ClassTiming compares the model with the recording for one syscall.
type ClassTiming struct {
	Name        string  `json:"name"`
	Calls       int64   `json:"calls"`
	RecordedNs  int64   `json:"recorded_ns"`
	ModelNs     int64   `json:"model_ns"`
	MedianRatio float64 `json:"median_ratio"` // median of model / recorded over the calls
	// DeviceBound sums this syscall's calls that took >= 100 us when recorded.
	DeviceBound TimingTotals `json:"device_bound"`
}

// TimingTotals sums recorded and model times over some calls.
type TimingTotals struct {
	Calls      int64 `json:"calls"`
	RecordedNs int64 `json:"recorded_ns"`
	ModelNs    int64 `json:"model_ns"`
}

func (t *TimingTotals) add(recorded, model int64) {
	t.Calls++
	t.RecordedNs += recorded
	t.ModelNs += model
}

// deviceBoundNs is the recorded duration from which a call counts as bound
// by the device (fsync, O_SYNC writes, direct I/O) rather than the CPU.
const deviceBoundNs = 100_000

// SyscallTiming is one row of the per-syscall table.
type SyscallTiming struct {
	Name    string  `json:"name"`
	Seconds float64 `json:"seconds"`
	Percent float64 `json:"percent"`
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	AvgNs   int64   `json:"avg_ns"`
	P50Ns   int64   `json:"p50_ns"`
	P99Ns   int64   `json:"p99_ns"`
}

// FileTiming is the time of the calls made on one file (through an fd or a
// path naming it).
type FileTiming struct {
	Path    string  `json:"path"`
	Seconds float64 `json:"seconds"`
	Percent float64 `json:"percent"`
	Calls   int64   `json:"calls"`
}

// timer is the top layer of a timed replay: it measures each call as the
// advance of the calling thread's clock (what the call cost the thread,
// whichever layer served it) and files it by syscall and by inode.
type timer struct {
	next  sim.Handler
	k     *sim.Kernel
	calls map[sim.Sysno]*callAgg
	files map[*vfs.Inode]*fileAgg

	// With Options.Timing: the duration the trace recorded for the call
	// about to run (see recorded), and per call the pair.
	rec, hasRec bool
	recNs       int64
	pairs       map[sim.Sysno][][2]int64 // recorded, model
	minRec      int64
}

type callAgg struct {
	ns, calls, errors int64
	hist              *hdrhistogram.Histogram
}

type fileAgg struct {
	ns, calls int64
	path      string // the last path the inode was seen under
}

func newTimer(next sim.Handler, k *sim.Kernel, rec bool) *timer {
	return &timer{next: next, k: k, calls: map[sim.Sysno]*callAgg{}, files: map[*vfs.Inode]*fileAgg{}, rec: rec, pairs: map[sim.Sysno][][2]int64{}, minRec: -1}
}

// recorded tells the timer the recorded duration of the trace's call that
// replay sends next (strace -T); the calls replay makes of its own have none.
func (tm *timer) recorded(ev *strace.Event) {
	if tm.rec && ev.HasDuration {
		tm.hasRec, tm.recNs = true, ev.Duration
	}
}

// Unwrap returns the layer below.
func (tm *timer) Unwrap() sim.Handler { return tm.next }

// Syscall passes c down and records its time.
func (tm *timer) Syscall(c *sim.Call) sim.Result {
	t := c.Task
	if t == nil {
		return tm.next.Syscall(c)
	}
	before := t.Now()
	r := tm.next.Syscall(c)
	d := t.Now() - before
	a := tm.calls[c.Nr]
	if a == nil {
		// 1 ns to an hour, 3 significant digits.
		a = &callAgg{hist: hdrhistogram.New(1, 3600e9, 3)}
		tm.calls[c.Nr] = a
	}
	a.ns += d
	a.calls++
	if r.Errno != 0 {
		a.errors++
	}
	_ = a.hist.RecordValue(max(d, 1))
	if tm.hasRec {
		tm.hasRec = false
		tm.pairs[c.Nr] = append(tm.pairs[c.Nr], [2]int64{tm.recNs, d})
		if tm.minRec < 0 || tm.recNs < tm.minRec {
			tm.minRec = tm.recNs
		}
	}
	if ino := tm.inodeOf(c, r); ino != nil {
		f := tm.files[ino]
		if f == nil {
			f = &fileAgg{}
			tm.files[ino] = f
		}
		f.ns += d
		f.calls++
		if f.path == "" {
			f.path = ino.Path()
		}
	}
	return r
}

// inodeOf returns the regular file a call worked on: its fd's (the new fd of
// an open), or nil.
func (tm *timer) inodeOf(c *sim.Call, r sim.Result) *vfs.Inode {
	fd := -1
	switch c.Nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT:
		if r.Errno == 0 {
			fd = int(r.Ret)
		}
	case sim.SYS_FTRUNCATE, sim.SYS_FALLOCATE, sim.SYS_LSEEK, sim.SYS_FSTAT, sim.SYS_FADVISE64,
		sim.SYS_SYNC_FILE_RANGE, sim.SYS_FCNTL:
		fd = int(c.Args[0])
	default:
		if c.Nr.Is(sim.Reads) || c.Nr.Is(sim.Writes) || c.Nr.Is(sim.SyncsFile) {
			fd = int(c.Args[0])
		}
	}
	if fd < 0 || c.Task.Exited() {
		return nil
	}
	f := c.Task.File(fd)
	if f == nil || f.Inode() == nil || !f.Inode().IsRegular() {
		return nil
	}
	return f.Inode()
}

// report builds the Timing, sorted so that the same replay gives the same bytes.
func (tm *timer) report(device string) *Timing {
	out := &Timing{Device: device, VirtualTimeNs: tm.k.Now(), Breakdown: tm.k.Breakdown()}
	for _, a := range tm.calls {
		out.CallTimeNs += a.ns
	}
	pct := func(ns int64) float64 {
		if out.CallTimeNs == 0 {
			return 0
		}
		return 100 * float64(ns) / float64(out.CallTimeNs)
	}
	for nr, a := range tm.calls {
		out.Syscalls = append(out.Syscalls, SyscallTiming{
			Name: nr.String(), Seconds: float64(a.ns) / 1e9, Percent: pct(a.ns), Calls: a.calls, Errors: a.errors,
			AvgNs: a.ns / a.calls, P50Ns: a.hist.ValueAtQuantile(50), P99Ns: a.hist.ValueAtQuantile(99),
		})
	}
	slices.SortFunc(out.Syscalls, func(a, b SyscallTiming) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Name, b.Name))
	})
	for _, f := range tm.files {
		out.Files = append(out.Files, FileTiming{Path: f.path, Seconds: float64(f.ns) / 1e9, Percent: pct(f.ns), Calls: f.calls})
	}
	slices.SortFunc(out.Files, func(a, b FileTiming) int {
		return cmp.Or(cmp.Compare(b.Seconds, a.Seconds), cmp.Compare(a.Path, b.Path), cmp.Compare(a.Calls, b.Calls))
	})
	if tm.rec && tm.minRec >= 0 {
		tm.compare(out)
	}
	return out
}

// compare fills the recorded-against-model part of out.
func (tm *timer) compare(out *Timing) {
	over := tm.minRec
	out.StraceOverheadNs = over
	out.Recorded, out.DeviceBound = &TimingTotals{}, &TimingTotals{}
	for nr, ps := range tm.pairs {
		c := ClassTiming{Name: nr.String(), Calls: int64(len(ps))}
		ratios := make([]float64, 0, len(ps))
		for _, p := range ps {
			rec := max(p[0]-over, 1)
			c.RecordedNs += rec
			c.ModelNs += p[1]
			ratios = append(ratios, float64(p[1])/float64(rec))
			if p[0] >= deviceBoundNs {
				c.DeviceBound.add(rec, p[1])
				out.DeviceBound.add(rec, p[1])
			}
		}
		slices.Sort(ratios)
		c.MedianRatio = ratios[len(ratios)/2]
		out.Recorded.Calls += c.Calls
		out.Recorded.RecordedNs += c.RecordedNs
		out.Recorded.ModelNs += c.ModelNs
		out.Classes = append(out.Classes, c)
	}
	slices.SortFunc(out.Classes, func(a, b ClassTiming) int {
		return cmp.Or(cmp.Compare(b.RecordedNs, a.RecordedNs), cmp.Compare(a.Name, b.Name))
	})
}

package scenarios

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/cockroachdb/datadriven"

	"github.com/iosim/iosim/bundle"
	"github.com/iosim/iosim/fio"
	"github.com/iosim/iosim/replay"
	"github.com/iosim/iosim/sim"
)

// An arm is a named workload with the setup current when it was defined.
type arm struct {
	name  string
	pos   string
	work  workload
	setup setup
	res   *Result // once run
}

// workload is what an arm runs: inline calls, a recorded trace, fio jobs.
type workload interface {
	describe() string
	// run runs the workload on setup st (with or without its stack).
	run(st setup, withStack bool) (*Result, error)
}

// Result is what one run of an arm measured.
type Result struct {
	Arm         string
	TimeNs      int64 // virtual time of the workload (the kernel clock)
	Calls       int64 // calls the program made
	KernelCalls int64 // calls that reached the kernel
	Syscalls    []SyscallRow
	Divergences []string // results that differ from those written or recorded
	NDiverged   int64
	// Lat holds per-call (calls) or per-I/O (fio) latencies in ns; nil for
	// a replayed trace.
	Lat *hdrhistogram.Histogram
	Fio []*fio.JobResult
	// Breakdown is where the time went (the time model's), nil on the
	// default device.
	Breakdown *sim.Breakdown
	Err       string // the error that ended the workload early
	// obs is the program's view of every call (calls arms), for equiv.
	obs []observation
	// log holds the strace line of every call the program made (calls and
	// stdio arms), for run show=calls.
	log []string
}

// SyscallRow is one syscall's line of a report. TimeNs is -1 when the
// workload does not say where time went (a replayed trace).
type SyscallRow struct {
	Name                 string
	Calls, Errors, Bytes int64
	TimeNs               int64
}

func newLat() *hdrhistogram.Histogram { return hdrhistogram.New(1, 3600e9, 3) }

// result runs the arm once (later calls return the same result: runs are
// deterministic).
func (a *arm) result() (*Result, error) {
	if a.res != nil {
		return a.res, nil
	}
	r, err := a.work.run(a.setup, true)
	if err != nil {
		return nil, fmt.Errorf("arm %s (%s): %w", a.name, a.pos, err)
	}
	r.Arm = a.name
	a.res = r
	return r, nil
}

// rows reads the per-syscall rows of a world's count layer.
func (w *world) rows() []SyscallRow {
	var out []SyscallRow
	for _, r := range w.count.Table() {
		out = append(out, SyscallRow{Name: r.Name, Calls: r.Calls, Errors: r.Errors, Bytes: r.Bytes, TimeNs: r.Ns})
	}
	slices.SortFunc(out, func(a, b SyscallRow) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// start marks the workload's start: its threads' clocks are read from now
// on, and where the time went is counted from here.
func (w *world) start(procs ...*sim.Process) {
	w.procs = procs
	w.t0 = w.k.Now()
	w.b0 = w.k.Breakdown()
}

// finish fills what every arm built on a world reports. The arm's time runs
// from its start to the latest clock of its threads (each thread has its
// own: threads that ran side by side count once).
func (w *world) finish(r *Result) {
	end := w.t0
	for _, p := range w.procs {
		end = max(end, p.Task().Now())
	}
	r.TimeNs = end - w.t0
	r.KernelCalls = w.bottom.n
	r.Syscalls = w.rows()
	for _, row := range r.Syscalls {
		r.Calls += row.Calls
	}
	if w.k.Device() != nil {
		b := w.k.Breakdown()
		b.Sub(w.b0)
		r.Breakdown = &b
	}
}

// --- trace ---

type traceWork struct {
	files []string // paths to open
	names []string // the paths as the scenario gives them (for output)
	// root and cwd are replay's Root and Cwd (a bundle's snapshot and
	// directory; empty: inferred); maxLine its MaxLineLen.
	root, cwd string
	maxLine   int
}

// options are the replay options the trace's recording sets.
func (t *traceWork) options() replay.Options {
	return replay.Options{Root: t.root, Cwd: t.cwd, MaxLineLen: t.maxLine}
}

func (t *traceWork) describe() string { return "trace " + strings.Join(t.names, " ") }

func (s *Scenario) cmdTrace(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1, "file...")
	if err != nil {
		return "", err
	}
	files := a.list("file")
	if len(files) == 0 {
		return "", malformed(td, "missing file=PATH (a recorded strace; several for the files of strace -ff)")
	}
	var abs []string
	var b *bundle.Bundle
	for _, f := range files {
		p := s.resolve(f)
		if _, err := os.Stat(p); err != nil {
			return "", malformed(td, "file=%s: %v", f, err)
		}
		if bundle.Is(p) {
			if len(files) > 1 {
				return "", malformed(td, "file=%s is a directory: a recording bundle is given alone", f)
			}
			if b, err = bundle.Open(p); err != nil {
				return "", malformed(td, "file=%s: %v", f, err)
			}
			p = b.Trace()
		}
		abs = append(abs, p)
	}
	if len(s.cur.files) > 0 {
		return "", malformed(td, "a trace finds the files it shows (replay infers them): file setup applies to calls and fio arms only")
	}
	w := &traceWork{files: abs, names: files}
	if b != nil {
		w.root, w.cwd, w.maxLine = b.Root(), b.Cwd, b.MaxLineLen()
	}
	ar := &arm{name: a.words[0], work: w}
	if err := s.addArm(td, ar); err != nil {
		return "", err
	}
	return ar.describe(), nil
}

// run replays the trace with --verify through the stack and faults.
func (t *traceWork) run(st setup, withStack bool) (*Result, error) {
	prof, err := st.profile()
	if err != nil {
		return nil, err
	}
	var specs []string
	if withStack {
		for _, sp := range st.stack {
			specs = append(specs, sp.String())
		}
	}
	if len(st.faults) > 0 {
		specs = append(specs, faultSpec(st))
	}
	opts := t.options()
	opts.Verify, opts.Stack, opts.MaxDivergences, opts.Device = true, specs, 20, prof
	rep, err := replay.Run(t.files, opts)
	if err != nil {
		return nil, err
	}
	r := &Result{TimeNs: rep.VirtualTimeNs, Calls: rep.Calls, KernelCalls: rep.KernelCalls, NDiverged: rep.Divergences}
	if rep.Timing != nil {
		r.Breakdown = &rep.Timing.Breakdown
	}
	for _, name := range sortedKeys(rep.Syscalls) {
		s := rep.Syscalls[name]
		r.Syscalls = append(r.Syscalls, SyscallRow{Name: name, Calls: s.Calls, Errors: s.Errors, Bytes: s.Bytes, TimeNs: -1})
	}
	for _, d := range rep.DivergenceList {
		for i, f := range t.files {
			if d.File == f {
				d.File = t.names[i]
			}
		}
		r.Divergences = append(r.Divergences, d.String())
	}
	return r, nil
}

// faultSpec is the fault layer's --stack spec for the setup's rules.
func faultSpec(st setup) string {
	parts := []string{fmt.Sprintf("seed=%d", st.faultSeed)}
	for _, r := range st.faults {
		parts = append(parts, "rule="+r.String())
	}
	return "fault:" + strings.Join(parts, ",")
}

// --- fio ---

type fioWork struct {
	name string
	jobs []*fio.Job
}

func (f *fioWork) describe() string {
	var parts []string
	for _, j := range f.jobs {
		parts = append(parts, fmt.Sprintf("%s (rw=%s bs=%d size=%d ioengine=%s iodepth=%d numjobs=%d)", j.Name, j.RW, j.BS, j.Size, j.IOEngine, j.IODepth, j.NumJobs))
	}
	return "fio " + strings.Join(parts, ", ")
}

func (s *Scenario) cmdFio(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1, "file")
	if err != nil {
		return "", err
	}
	var src []byte
	name := td.Pos
	switch {
	case a.has("file") && td.Input != "":
		return "", malformed(td, "give the job file as input or as file=, not both")
	case a.has("file"):
		name = a.str("file", "")
		if src, err = os.ReadFile(s.resolve(name)); err != nil {
			return "", malformed(td, "file=%s: %v", name, err)
		}
	case td.Input != "":
		src = []byte(td.Input + "\n")
	default:
		return "", malformed(td, "missing job file: give it as input or as file=PATH")
	}
	jobs, err := fio.Parse(bytes.NewReader(src), name)
	if err != nil {
		if !a.has("file") {
			// Lines of an inline job file count from the directive.
			if fe, ok := err.(*fio.Error); ok {
				fe.File, fe.Line = s.file, lineOf(td)+fe.Line
				return "", &MalformedError{Pos: pos(fe.File, fe.Line), Msg: "fio: " + strings.TrimPrefix(fe.Error(), pos(fe.File, fe.Line)+": ")}
			}
		}
		return "", malformed(td, "%v", err)
	}
	ar := &arm{name: a.words[0], work: &fioWork{name: name, jobs: jobs}}
	if err := s.addArm(td, ar); err != nil {
		return "", err
	}
	return ar.describe(), nil
}

func (f *fioWork) run(st setup, withStack bool) (*Result, error) {
	w, err := st.build(withStack)
	if err != nil {
		return nil, err
	}
	res, err := fio.Run(w.k, w.top, f.jobs, fio.Options{Layout: w.k, Laid: func() { w.start() }})
	if err != nil {
		return nil, err
	}
	// The layout's calls went to the kernel directly, uncounted; the
	// arm's time runs from the first job's start to the last one's end.
	r := &Result{Fio: res, Lat: newLat()}
	w.finish(r)
	start, end := res[0].Start, res[0].Start+res[0].Runtime
	for _, j := range res {
		start, end = min(start, j.Start), max(end, j.Start+j.Runtime)
	}
	r.TimeNs = end - start
	for _, j := range res {
		for _, d := range []fio.Dir{j.Read, j.Write} {
			r.Lat.Merge(d.Clat)
		}
		if j.Err != nil && r.Err == "" {
			r.Err = fmt.Sprintf("job %s.%d: %v", j.Job.Name, j.JobNum, j.Err)
		}
	}
	return r, nil
}

// lineOf returns the line of td's directive.
func lineOf(td *datadriven.TestData) int {
	i := strings.LastIndexByte(td.Pos, ':')
	n := 0
	fmt.Sscanf(td.Pos[i+1:], "%d", &n)
	return n
}

// --- arm like= ---

func (s *Scenario) cmdArm(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1, "like")
	if err != nil {
		return "", err
	}
	if !a.has("like") {
		return "", malformed(td, "missing like=OTHER (the arm whose workload this one runs)")
	}
	other, err := s.arm(td, a.str("like", ""))
	if err != nil {
		return "", err
	}
	if _, ok := other.work.(*traceWork); ok && len(s.cur.files) > 0 {
		return "", malformed(td, "a trace finds the files it shows: file setup applies to calls and fio arms only")
	}
	ar := &arm{name: a.words[0], work: other.work}
	if err := s.addArm(td, ar); err != nil {
		return "", err
	}
	return ar.describe(), nil
}

package scenarios

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/replay"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// crashRun is what the last crash command found.
type crashRun struct {
	arm string
	rep *crash.Report
}

// checkers are the checks a crash command may name, in the order it runs
// them; stdio applies to stdio arms only (and is on by default there).
var checkers = []crash.Checker{crash.Durability{}, crash.AtomicReplace{}, crash.Fsck{}, stdioCheck{}}

func checkerNames() []string {
	var n []string
	for _, c := range checkers {
		n = append(n, c.Name())
	}
	return n
}

// stdioCheck names the stdio check; the check itself is built per arm
// (stdioPromises).
type stdioCheck struct{}

func (stdioCheck) Name() string                       { return "stdio" }
func (stdioCheck) Check(*crash.State) []crash.Finding { return nil }

// stdioPromise is what a stdio program believes an fsync(fileno(f)) made
// durable: every byte it gave the stream since fopen, whether or not the
// stream had flushed it.
type stdioPromise struct {
	arm  string
	line int // the fsync's line in the arm's input
	fn   string
	path string
	data []byte
}

// stdioPromises returns the check of a stdio arm: after a crash that follows
// one of its fsync or fdatasync calls, the file holds the bytes the program
// had written to the stream before it (somewhere in the file: the stream may
// append). What the kernel never saw is what breaks it: an fsync before
// fflush syncs the stream's file but not the stream's buffer.
func stdioPromises(w *stdioWork, armName string) crash.Checker {
	var ps []stdioPromise
	paths, data := map[string]string{}, map[string][]byte{}
	for _, op := range w.ops {
		switch op.fn {
		case "fopen":
			paths[op.stream], data[op.stream] = op.path, nil
		case "fputs", "fwrite":
			data[op.stream] = append(data[op.stream], op.data...)
		case "fsync", "fdatasync":
			if len(data[op.stream]) > 0 {
				ps = append(ps, stdioPromise{arm: armName, line: op.line, fn: op.fn, path: paths[op.stream], data: bytes.Clone(data[op.stream])})
			}
		}
	}
	return crash.CheckFunc{ID: "stdio", F: func(s *crash.State) []crash.Finding {
		var out []crash.Finding
		for _, p := range ps {
			if !madeCall(s.History(), p.arm, p.line, p.fn) {
				continue
			}
			if got, ok := s.ReadFile(p.path); !ok || !bytes.Contains(got, p.data) {
				out = append(out, crash.Finding{Kind: "stdio", Path: p.path, Message: fmt.Sprintf(
					"the %d bytes written to the stream before %s:%d's %s(fileno(f)) are not in the file after the crash", len(p.data), p.arm, p.line, p.fn)})
			}
		}
		return out
	}}
}

// madeCall reports whether the history holds the call fn made at line.
func madeCall(h []crash.Op, armName string, line int, fn string) bool {
	for _, o := range h {
		if o.File == armName && o.Line == line && o.Call == fn {
			return true
		}
	}
	return false
}

// maxDepth bounds depth=: the states of a point grow as the number of
// pending units to the power of the depth.
const maxDepth = 3

// cmdCrash runs an arm's workload under the crash explorer: at every crash
// point, the states its models allow (package crash), each checked. The input,
// if any, is disk fault rules in vfs's operation names (writeback, write,
// fsync; package faultrule's language), made by the file system itself, as a
// failing disk would: the errors the explorer must see reported.
func (s *Scenario) cmdCrash(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1, "models", "depth", "checks...")
	if err != nil {
		return "", err
	}
	ar, err := s.arm(td, a.words[0])
	if err != nil {
		return "", err
	}
	spec := a.str("models", ar.setup.model)
	models, err := crash.ParseModels(spec)
	if err != nil {
		return "", malformed(td, "argument models=%s: %v", spec, err)
	}
	depth, err := a.int("depth", 1)
	if err != nil {
		return "", err
	}
	if depth < 1 || depth > maxDepth {
		return "", malformed(td, "argument depth=%d: want 1 to %d (the calls a state may lose or reorder)", depth, maxDepth)
	}
	opts := crash.Options{Models: models, Depth: int(depth), Seed: 1}
	sw, isStdio := ar.work.(*stdioWork)
	names := a.list("checks")
	if len(names) == 0 {
		for _, n := range checkerNames() {
			if n != "stdio" || isStdio {
				names = append(names, n)
			}
		}
	}
	for _, n := range names {
		c := checkerNamed(n)
		switch {
		case c == nil:
			return "", malformed(td, "argument checks: unknown check %q (known: %s)", n, strings.Join(checkerNames(), ", "))
		case n == "stdio" && !isStdio:
			return "", malformed(td, "argument checks: the stdio check applies to stdio arms; %s is not one", ar.name)
		case n == "stdio":
			c = stdioPromises(sw, s.workArm(ar))
		}
		opts.Checkers = append(opts.Checkers, c)
	}
	var disk *vfs.Rules
	if rules := inputRules(td.Input); rules != "" {
		if disk, err = vfs.ParseRules(uint64(ar.setup.faultSeed), rules); err != nil {
			return "", malformed(td, "disk fault rules: %v", err)
		}
	}
	rep, err := s.explore(ar, opts, disk)
	if err != nil {
		return "", fmt.Errorf("%s: crash: %w", td.Pos, err)
	}
	explainStdio(rep)
	s.lastCrash = &crashRun{arm: ar.name, rep: rep}
	if s.SVG != nil {
		s.SVG.addCrash(*s.lastCrash)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "crash %s: models %s; depth %d; checks %s\n", ar.name, crash.ModelLabels(rep.Models), depth, strings.Join(names, ", "))
	writeCrash(&b, rep)
	return b.String(), nil
}

func checkerNamed(name string) crash.Checker {
	for _, c := range checkers {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// inputRules joins the input's rule lines (blank lines and # comments
// dropped) in faultrule's list form.
func inputRules(input string) string {
	var rules []string
	for _, l := range strings.Split(input, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			rules = append(rules, l)
		}
	}
	return strings.Join(rules, ";")
}

// explore runs the arm's workload once under the explorer: calls and stdio
// arms on their setup with the explorer below the faults and the stack
// (nearest the kernel: it sees the calls the file system does), a trace
// through replay.Explore. Calls in the report are named ARM:LINE (a trace's:
// FILE:LINE).
func (s *Scenario) explore(ar *arm, opts crash.Options, disk *vfs.Rules) (*crash.Report, error) {
	wname := s.workArm(ar)
	switch w := ar.work.(type) {
	case *traceWork:
		var specs []string
		for _, sp := range ar.setup.stack {
			specs = append(specs, sp.String())
		}
		if len(ar.setup.faults) > 0 {
			specs = append(specs, faultSpec(ar.setup))
		}
		if disk != nil {
			return nil, fmt.Errorf("arm %s: disk fault rules apply to calls and stdio arms (a trace shows the errors it met)", ar.name)
		}
		ropts := w.options()
		ropts.Stack = specs
		rep, _, err := replay.Explore(w.files, ropts, opts)
		return rep, err
	case *callsWork, *stdioWork:
		var e *crash.Explorer
		st := ar.setup.clone()
		st.fsOpts = crash.FSOptions()
		st.observe = func(fs *vfs.FS, next sim.Handler) sim.Handler {
			if disk != nil {
				fs.SetInjector(disk)
			}
			e = crash.NewExplorer(fs, next, opts)
			return e
		}
		st.position = func(line int) { e.SetPosition(wname, line) }
		r, err := w.run(st, true)
		if err != nil {
			return nil, err
		}
		rep := e.Finish()
		if r.Err != "" {
			return nil, fmt.Errorf("arm %s: %s", ar.name, r.Err)
		}
		if len(r.Divergences) > 0 {
			// the workload did not do what its lines say: what the crash
			// found is not about the program written
			return nil, fmt.Errorf("arm %s diverged from its written results under the explorer (%d), first: %s", ar.name, r.NDiverged, r.Divergences[0])
		}
		return rep, nil
	}
	return nil, fmt.Errorf("arm %s: crash explores calls, stdio and trace arms; this one is %s", ar.name, ar.work.describe())
}

// writeCrash prints what a crash run found, without its wall-clock figures:
// the counts, then per finding its property, the calls (by the scenario's
// lines), the models under which it breaks, what the checks found, what it
// relies on and the fix (crash.Report.WriteFindings).
func writeCrash(b *strings.Builder, r *crash.Report) {
	fmt.Fprintf(b, "crash points %d, states %d, distinct %d, failed %d\n", r.CrashPoints, r.States, r.DistinctStates, r.Failed)
	r.WriteFindings(b, crash.TextStyle{})
	r.WriteCount(b)
}

// explainStdio gives the findings of the stdio check the property they
// rely on and their fix (the crash package explains the checks it knows).
func explainStdio(r *crash.Report) {
	for _, c := range r.Findings {
		if slices.Contains(c.Checks, "stdio") {
			c.Relies, c.Fix = "the stream's buffer reaching the kernel before fsync(fileno(f))", "fflush(f) before fsync(fileno(f))"
		}
	}
}

// workArm returns the name of the arm whose directive wrote ar's workload
// (an arm made with like= shares its workload with the first arm). Reports
// name a call as ARM:LINE, its line in that arm's input: stable when the
// outputs above it change length.
func (s *Scenario) workArm(ar *arm) string {
	for _, x := range s.arms {
		if x.work == ar.work {
			return x.name
		}
	}
	return ar.name
}

// findings is the expect metric: the last crash run's count of findings.
func (s *Scenario) findings(td *datadriven.TestData, armName string) (float64, string, error) {
	c := s.lastCrash
	if c == nil {
		return 0, "", malformed(td, "findings: no crash before this expect")
	}
	if armName != "" && armName != c.arm {
		return 0, "", malformed(td, "findings: the last crash explored %s, not %s", c.arm, armName)
	}
	return float64(len(c.rep.Findings)), "findings of " + c.arm, nil
}

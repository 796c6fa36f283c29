package crash

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/iosim/iosim/vfs"
)

// Report is what an exploration found. Every field but StatesPerSecond and
// Seconds is the same for the same input, options and seed.
type Report struct {
	Models []string `json:"models"`
	// Hypothetical are the models of Models that describe no real file
	// system (Model.Hypothetical).
	Hypothetical    []string       `json:"hypothetical_models,omitempty"`
	CrashPoints     int            `json:"crash_points"`
	States          int            `json:"states"`
	DistinctStates  int            `json:"distinct_states"`
	Checked         int            `json:"checked"`
	Failed          int            `json:"failed"`
	StatesPerSecond float64        `json:"states_per_second"`
	Seconds         float64        `json:"seconds"`
	ByProperty      map[string]int `json:"findings_by_property"`
	// Findings are the failing states grouped by cause (see Cause).
	Findings []*Cause `json:"findings"`
	Shard    string   `json:"shard,omitempty"`
	// Found are a shard's failing states by exact deviation, before
	// grouping (Merge groups the union: a smaller deviation that fails may
	// be another shard's).
	Found []*FoundCause `json:"found,omitempty"`
	// Points are the crash points in the order of the trace, with what
	// was found at each.
	Points []PointStats `json:"points,omitempty"`

	// Unchecked counts the distinct states not checked because they may
	// hold bytes the workload did not show (Options.SkipUnknown);
	// UncheckedWhy says where the first such bytes came from.
	Unchecked    int    `json:"unchecked"`
	UncheckedWhy string `json:"unchecked_why,omitempty"`
	// Assumed, with Options.AssumeUnknown, says where the first bytes the
	// workload did not show came from: the states were checked with the
	// model's bytes (zeros, or the bytes before) in their place.
	Assumed string `json:"assumed_unknown,omitempty"`
	// Notes say what the caller assumed about the workload that its input
	// does not show (replay's notes: where the program started, what was
	// inferred); WriteText prints each as a note: line.
	Notes []string `json:"notes,omitempty"`
}

// PointStats is what the exploration found at one crash point.
type PointStats struct {
	Point  Op  `json:"point"`  // the last call before the crash
	States int `json:"states"` // states the models allow there (a state per model)
	Failed int `json:"failed"` // of which a check failed
	// Findings counts the findings first found here (their first crash
	// point).
	Findings int `json:"findings"`
}

// verdictKey is what a state's findings depend on: its content, the
// version of the expectations, and which of them are active at its crash
// point (a promise that a change in flight supersedes is not checked there,
// so one content can fail at a point and pass at the next).
type verdictKey struct {
	h       uint64
	expect  uint64
	act     uint64
	unknown bool // the state may hold bytes the workload did not show
}

type verdict struct {
	done     bool
	findings []Finding
	subs     []sub
	// pending are the states of this verdict met before it was done, for
	// Options.Failed
	pending []pendingState
}

type pendingState struct {
	x  *point
	st *seenState
}

// sub is one (state, model) waiting for a verdict.
type sub struct {
	model  string
	point  Op
	id     StateID
	cause  []causeOp // the deviations chosen
	closed []causeOp // and what the model's rules made of them
	class  class
}

type causeOp struct {
	verb string
	op   int
	unit *unit
}

// outcome is what the built-in checks found of a state, and its content key.
type outcome struct {
	h        uint64
	findings []Finding
	unknown  bool // the state may hold bytes the workload did not show
}

// run builds and checks the distinct states of x (on several
// goroutines, each stepping its own state through a contiguous run of them),
// then, in the order the states were met, deduplicates them by content and
// attributes their verdicts: the report does not depend on the goroutines.
func (e *Explorer) run(x *point) {
	var todo []*seenState
	for _, st := range x.vecs {
		if st.build {
			todo = append(todo, st)
		}
	}
	var builtin, custom []Checker
	for _, c := range e.opts.Checkers {
		switch c.(type) {
		case Durability, AtomicReplace, Fsck:
			builtin = append(builtin, c)
		default:
			custom = append(custom, c)
		}
	}
	out := make([]outcome, len(todo))
	// A step costs the units whose choices differ. The states a model
	// enumerates are built together, by their number of deviations (one
	// deviation more or less, a journal cut one call later: near in
	// content), ascending for one model and descending for the next, so
	// that a model's last state is near the next one's first (the durable
	// states, or states near all-kept).
	order := make([]int, len(todo))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ma, mb := todo[a].model, todo[b].model
		if ma != mb {
			return ma - mb
		}
		if ma%2 == 1 {
			return len(todo[b].devs) - len(todo[a].devs)
		}
		return len(todo[a].devs) - len(todo[b].devs)
	})
	workers := max(1, min(e.workers(), len(todo)/minPerWorker))
	var wg sync.WaitGroup
	for n := range workers {
		lo, hi := n*len(todo)/workers, (n+1)*len(todo)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := newWalker(e, x, x.snap.State())
			for _, i := range order[lo:hi] {
				w.goTo(todo[i].devs, i != order[lo])
				if i == order[lo] {
					w.init()
				}
				o := outcome{h: w.h, unknown: w.holdsUnknown()}
				s := &State{w: w}
				for _, c := range builtin {
					if o.unknown {
						break
					}
					o.findings = append(o.findings, c.Check(s)...)
				}
				out[i] = o
			}
		}()
	}
	wg.Wait()
	if e.reference != nil {
		e.reference(x, todo, out)
	}
	var cw *walker // the state given to custom checkers
	var serial, parallel []Checker
	for _, c := range custom {
		if _, ok := c.(ParallelChecker); ok {
			parallel = append(parallel, c)
		} else {
			serial = append(serial, c)
		}
	}
	if e.expect != e.verdictsOf {
		// a key holds the version of the expectations: older ones never match
		clear(e.verdicts)
		e.verdictsOf = e.expect
	}
	for i, st := range todo {
		key := verdictKey{h: out[i].h, expect: e.expect, act: x.actID, unknown: out[i].unknown}
		if v := e.verdicts[key]; v != nil {
			st.v = v
			if e.opts.Failed != nil {
				e.vmu.Lock()
				done, failed := v.done, len(v.findings) > 0
				if !done {
					v.pending = append(v.pending, pendingState{x, st})
				}
				e.vmu.Unlock()
				if done && failed {
					e.opts.Failed(e.stateAt(x, st))
				}
			}
			continue
		}
		if len(e.verdicts) >= maxVerdicts {
			clear(e.verdicts)
		}
		v := &verdict{}
		e.verdicts[key] = v
		st.v = v
		e.rep.DistinctStates++
		if out[i].unknown {
			e.rep.Unchecked++
			v.done = true
			continue
		}
		e.rep.Checked++
		fs := out[i].findings
		if len(serial) > 0 {
			if cw == nil {
				cw = newWalker(e, x, x.snap.State())
				cw.goTo(st.devs, false)
				cw.init()
			} else {
				cw.goTo(st.devs, true)
			}
			s := &State{Stdout: slices.Clone(x.stdout), Point: x.op, Name: st.name, ID: st.id.String(), e: e, x: x, w: cw}
			for _, c := range serial {
				fs = append(fs, c.Check(s)...)
			}
		}
		if len(parallel) > 0 {
			// built on the checker goroutine, from the point's snapshot
			e.queue(v, x, st, fs, parallel)
			continue
		}
		v.done, v.findings = true, fs
		if len(fs) > 0 {
			e.rep.Failed++
			if e.opts.Failed != nil {
				e.opts.Failed(e.stateAt(x, st))
			}
		}
	}
	for _, sb := range x.subs {
		if sb.st.v != nil {
			e.attribute(sb.st.v, x, sb.m, sb.st, sb.chosen)
		}
	}
}

// stateAt builds state st of x on a walker of its own, for Options.Visit
// and Failed: safe beside the explorer's own walkers.
func (e *Explorer) stateAt(x *point, st *seenState) *State {
	w := newWalker(e, x, x.snap.State())
	w.goTo(st.devs, false)
	return &State{Stdout: slices.Clone(x.stdout), Point: x.op, Name: st.name, ID: st.id.String(), e: e, x: x, w: w}
}

// workers is the number of goroutines exploring a point.
func (e *Explorer) workers() int {
	if e.opts.Workers > 0 {
		return e.opts.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// minPerWorker is the fewest states worth a goroutine of their own.
var minPerWorker = 64

// maxVerdicts bounds the verdicts remembered for deduplication across crash
// points: past it they are forgotten (a state met again is checked again).
const maxVerdicts = 1 << 20

// queue runs the parallel checkers of state st of x on the checker
// goroutines, each building the state on a walker of its own (stepped from
// the last state it built of the point: the explorer moves on meanwhile).
func (e *Explorer) queue(v *verdict, x *point, st *seenState, fs []Finding, parallel []Checker) {
	e.wg.Add(1)
	e.work <- func() {
		w := e.checkWalker(x)
		w.goTo(st.devs, false)
		s := &State{Stdout: slices.Clone(x.stdout), Point: x.op, Name: st.name, ID: st.id.String(), e: e, x: x, w: w}
		all := fs
		for _, c := range parallel {
			all = append(all, c.Check(s)...)
		}
		e.walkers.Put(w)
		e.vmu.Lock()
		v.done, v.findings = true, all
		if len(all) > 0 {
			e.rep.Failed++
		}
		for _, sb := range v.subs {
			e.record(v, sb)
		}
		v.subs = nil
		pending := append(v.pending, pendingState{x, st})
		v.pending = nil
		e.vmu.Unlock()
		if len(all) > 0 && e.opts.Failed != nil {
			for _, p := range pending {
				e.opts.Failed(e.stateAt(p.x, p.st))
			}
		}
	}
}

// checkWalker returns a walker of x for a checker goroutine: one it had
// of x, else a new one.
func (e *Explorer) checkWalker(x *point) *walker {
	if w, ok := e.walkers.Get().(*walker); ok && w.x == x {
		return w
	}
	return newWalker(e, x, x.snap.State())
}

// attribute records that model m reaches the state cur, whose verdict is v.
func (e *Explorer) attribute(v *verdict, x *point, m *Model, st *seenState, chosen []dev) {
	e.vmu.Lock()
	passed := v.done && len(v.findings) == 0
	e.vmu.Unlock()
	if passed {
		return // nothing to record
	}
	sb := sub{model: m.Name, point: x.op, id: st.id, class: e.classify(x, chosen, st.devs)}
	for _, d := range chosen {
		sb.cause = append(sb.cause, causeOp{verb: d.c.verb(), op: x.units[d.k].op, unit: &x.units[d.k]})
	}
	for _, d := range st.devs {
		sb.closed = append(sb.closed, causeOp{verb: d.c.verb(), op: x.units[d.k].op, unit: &x.units[d.k]})
	}
	e.vmu.Lock()
	defer e.vmu.Unlock()
	if !v.done {
		v.subs = append(v.subs, sb)
		return
	}
	e.record(v, sb)
}

// record adds a failing (state, model) to the failures of its crash point
// and to the found cause of its deviations. vmu held.
func (e *Explorer) record(v *verdict, sb sub) {
	if len(v.findings) == 0 {
		return
	}
	if k := e.rep.pointAt(sb.point.Index); k >= 0 {
		e.rep.Points[k].Failed++
	}
	e.recordCause(v, sb)
}

// explain names the persistence property a failing state shows the program
// relied on, and a fix where the pattern is known.
func (e *Explorer) explain(f Finding, sb sub) (property, fix string) {
	var lostMeta, lostData, torn, split bool
	for _, c := range sb.closed {
		switch {
		case c.verb == "split":
			split = true
		case c.verb == "torn" || c.verb == "partly written":
			torn = true
		case c.unit.kind == vfs.PendingMeta:
			lostMeta = true
		case c.unit.data || c.unit.kind == vfs.PendingSize:
			lostData = true
		}
	}
	// a file whose data was lost or torn while the rename that replaced
	// another with it survived
	renamedData := false
	for _, r := range e.replaces {
		if r.op > sb.point.Index {
			continue
		}
		kept, data := true, false
		for _, c := range sb.closed {
			if c.unit.kind == vfs.PendingMeta && c.op == r.op {
				kept = false
			}
			if c.unit.ino == r.ino && (c.unit.data || c.unit.kind == vfs.PendingSize) {
				data = true
			}
		}
		renamedData = renamedData || kept && data
	}
	switch {
	case renamedData || f.Kind == "atomic-replace" && (lostData || torn):
		return "ordering: a file's data persists before the rename that replaces another with it", "fsync the file before renaming it over the old one"
	case split:
		return "atomicity of rename", "keep the old file until the new one is durable under another name, or recover from either name"
	case len(sb.closed) == 0 && f.Kind != "durability":
		return "atomicity across calls: the state between two calls is inconsistent even with nothing lost", "make the calls' effect atomic (write a new file and rename it) or let recovery repair the intermediate state"
	case f.Kind == "durability" && len(sb.closed) == 0:
		return "durability of acknowledged data (a writeback error was reported once, the retried fsync succeeded)", "treat a failed fsync as lost data: do not retry it, rewrite the data from a copy (or crash and recover from a log)"
	case f.Kind == "durability":
		return "durability of a name", "fsync the directory after creating, renaming or unlinking"
	case torn:
		return "atomicity of a multi-sector write", "write a checksummed record, or write a new file and rename it"
	case lostMeta && lostData:
		return "ordering of data and directory operations before later operations", "fsync the file before renaming it, then fsync the directory"
	case lostMeta:
		return "ordering or durability of directory operations", "fsync the directory after creating, renaming or unlinking, before announcing or depending on it"
	case lostData:
		return "ordering or durability of writes before later operations", "fsync (or fdatasync) the file before announcing or depending on its content"
	}
	return "durability of what the program announced", "make changes durable (fsync the file, then its directory) before announcing them"
}

// report builds the report. e.mu held.
func (e *Explorer) report() *Report {
	r := e.rep
	el := time.Since(e.start).Seconds()
	r.Seconds = el
	if el > 0 {
		r.StatesPerSecond = float64(r.States) / el
	}
	if e.opts.Shards > 1 {
		r.Shard = fmt.Sprintf("%d/%d", e.opts.Shard, e.opts.Shards)
	}
	if r.Unchecked == 0 {
		r.UncheckedWhy = ""
	}
	var fcs []*FoundCause
	for _, f := range e.found {
		fcs = append(fcs, f)
	}
	fcs = mergeFoundCauses(fcs)
	if e.opts.Shards > 1 {
		r.Found = fcs
	}
	r.Findings = foldCauses(fcs, r.pointText)
	r.finish()
	return &r
}

// finish sorts the findings (by their first call's lines, then property),
// counts them by property and at their first crash point.
func (r *Report) finish() {
	for _, c := range r.Findings {
		sort.Slice(c.Models, func(a, b int) bool { return modelOrder(c.Models[a]) < modelOrder(c.Models[b]) })
	}
	sort.SliceStable(r.Findings, func(a, b int) bool {
		ca, cb := r.Findings[a], r.Findings[b]
		if ca.pointIdx != cb.pointIdx {
			return ca.pointIdx < cb.pointIdx
		}
		return ca.key < cb.key
	})
	r.ByProperty = map[string]int{}
	for _, c := range r.Findings {
		r.ByProperty[c.Property]++
		if k := r.pointAt(c.pointIdx); k >= 0 {
			r.Points[k].Findings++
		}
	}
}

func modelOrder(name string) int {
	if m := ModelByName(name); m != nil {
		return modelIndex(m)
	}
	return len(models)
}

// WriteText prints the report for people.
func (r *Report) WriteText(w io.Writer) {
	r.WriteFindings(w, TextStyle{States: true})
	fmt.Fprintf(w, "models: %s\n", ModelLabels(r.Models))
	fmt.Fprintf(w, "crash points: %d   states: %d   distinct: %d   checked: %d   failed: %d   states/s: %.0f\n",
		r.CrashPoints, r.States, r.DistinctStates, r.Checked, r.Failed, r.StatesPerSecond)
	if r.Unchecked > 0 {
		fmt.Fprintf(w, "unchecked: %d distinct state(s) may hold bytes the workload did not show, so no check judged them (first: %s)\n", r.Unchecked, r.UncheckedWhy)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if r.Assumed != "" {
		fmt.Fprintf(w, "note: the states hold the model's bytes (zeros, or the bytes before) where the workload did not show them, as asked (first: %s)\n", r.Assumed)
	}
	r.WriteCount(w)
	fmt.Fprintln(w)
}

// WriteCount prints the number of findings and their count by property.
func (r *Report) WriteCount(w io.Writer) {
	var props []string
	for k, n := range r.ByProperty {
		props = append(props, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(props)
	fmt.Fprintf(w, "findings: %d", len(r.Findings))
	if len(props) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(props, ", "))
	}
}

// pointAt returns the position in r.Points of the crash point after call
// index (Op.Index), or -1.
func (r *Report) pointAt(index int) int {
	// Only Point.Index is read: the explorer counts States of the last point
	// while checker goroutines look earlier points up (under vmu).
	k := sort.Search(len(r.Points), func(k int) bool { return r.Points[k].Point.Index >= index })
	if k == len(r.Points) || r.Points[k].Point.Index != index {
		return -1
	}
	return k
}

// pointText is the text of the crash point after call index.
func (r *Report) pointText(index int) string {
	if k := r.pointAt(index); k >= 0 {
		return r.Points[k].Point.String()
	}
	return fmt.Sprintf("call %d", index)
}

// TextStyle is what WriteFindings prints beside the fixed lines.
type TextStyle struct {
	// States adds each finding's count of failing states, its crash points
	// and example state IDs (which vary with the models explored).
	States bool
}

// WriteJSON prints the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Merge combines shard reports into one: counts add up, and the failing
// states the shards found are grouped into findings as one run groups them
// (mergeShardFindings). DistinctStates, Checked and Failed are sums over
// the shards: a state met again at a later crash point is checked once per
// shard that meets it, where a whole run checks it once.
func Merge(rs []*Report) *Report {
	out := &Report{}
	for _, r := range rs {
		for _, m := range r.Models {
			if !slices.Contains(out.Models, m) {
				out.Models = append(out.Models, m)
				if slices.Contains(r.Hypothetical, m) {
					out.Hypothetical = append(out.Hypothetical, m)
				}
			}
		}
		out.CrashPoints = max(out.CrashPoints, r.CrashPoints)
		out.States += r.States
		out.DistinctStates += r.DistinctStates
		out.Checked += r.Checked
		out.Unchecked += r.Unchecked
		if out.UncheckedWhy == "" {
			out.UncheckedWhy = r.UncheckedWhy
		}
		if out.Assumed == "" {
			out.Assumed = r.Assumed
		}
		for _, n := range r.Notes {
			if !slices.Contains(out.Notes, n) {
				out.Notes = append(out.Notes, n)
			}
		}
		out.Failed += r.Failed
		out.Seconds = max(out.Seconds, r.Seconds)
	}
	if len(rs) > 0 {
		out.States /= len(rs) // every shard enumerates every state; each checks its share
		out.Points = make([]PointStats, len(rs[0].Points))
		for k, p := range rs[0].Points {
			out.Points[k] = PointStats{Point: p.Point, States: p.States}
		}
	}
	for _, r := range rs {
		for _, p := range r.Points {
			if k := out.pointAt(p.Point.Index); k >= 0 {
				out.Points[k].Failed += p.Failed
			}
		}
	}
	out.Findings = mergeShardFindings(rs, out.pointText)
	if out.Seconds > 0 {
		out.StatesPerSecond = float64(out.States) / out.Seconds
	}
	out.finish()
	return out
}

// mergeShardFindings groups the shards' found causes as one run groups its
// own: the same deviation found in two shards is one, with their states
// added, and a finding holds every deviation of its cause whichever shard
// found it. A report without found causes (not a shard's) gives its
// findings as they are.
func mergeShardFindings(rs []*Report, pointText func(int) string) []*Cause {
	var lists [][]*FoundCause
	var as []*Cause
	for _, r := range rs {
		if len(r.Found) == 0 {
			for _, c := range r.Findings {
				cc := *c
				cc.key = c.Property + "\x00" + fmt.Sprint(c.Calls)
				if k := slices.IndexFunc(r.Points, func(p PointStats) bool { return len(c.Points) > 0 && p.Point.String() == c.Points[0] }); k >= 0 {
					cc.pointIdx = r.Points[k].Point.Index
				}
				as = append(as, &cc)
			}
			continue
		}
		lists = append(lists, r.Found)
	}
	return append(foldCauses(mergeFoundCauses(lists...), pointText), as...)
}

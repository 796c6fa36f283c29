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
	Hypothetical    []string         `json:"hypothetical_models,omitempty"`
	CrashPoints     int              `json:"crash_points"`
	States          int              `json:"states"`
	DistinctStates  int              `json:"distinct_states"`
	Checked         int              `json:"checked"`
	Failed          int              `json:"failed"`
	StatesPerSecond float64          `json:"states_per_second"`
	Seconds         float64          `json:"seconds"`
	ByKind          map[string]int   `json:"vulnerabilities_by_kind"`
	Vulnerabilities []*Vulnerability `json:"vulnerabilities"`
	Shard           string           `json:"shard,omitempty"`
	// Found are a shard's vulnerabilities as found, before shrinking
	// (Merge shrinks the union: a smaller cause may be another shard's).
	Found []*FoundVulnerability `json:"found,omitempty"`
	// Points are the crash points in the order of the trace, with what
	// was found at each.
	Points []PointStats `json:"points,omitempty"`
}

// PointStats is what the exploration found at one crash point.
type PointStats struct {
	Point  Op  `json:"point"`  // the last call before the crash
	States int `json:"states"` // states the models allow there (a state per model)
	Failed int `json:"failed"` // of which a check failed
	// Vulnerabilities counts the vulnerabilities first found here (their
	// crash_point).
	Vulnerabilities int `json:"vulnerabilities"`
}

// Vulnerability is a group of failing states with one cause: the calls whose
// changes were lost, torn or reordered, and what a checker found.
type Vulnerability struct {
	Kind     string   `json:"kind"`
	Lines    []int    `json:"lines"`
	Models   []string `json:"models"`
	Message  string   `json:"message"`
	Path     string   `json:"path,omitempty"`
	Ops      []string `json:"ops"`
	Property string   `json:"property"`
	Fix      string   `json:"fix,omitempty"`
	Point    string   `json:"crash_point"`
	State    string   `json:"state"`
	States   int      `json:"states"`

	key      string
	cause    []int // op indexes, for shrinking
	pointIdx int
}

// verdictKey is what a state's findings depend on: its content, the
// version of the expectations, and which of them are active at its crash
// point (a promise that a change in flight supersedes is not checked there,
// so one content can fail at a point and pass at the next).
type verdictKey struct {
	h      uint64
	expect uint64
	act    uint64
}

type verdict struct {
	done     bool
	findings []Finding
	subs     []sub
}

// sub is one (state, model) waiting for a verdict.
type sub struct {
	model string
	point Op
	name  string
	cause []causeOp
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
				o := outcome{h: w.h}
				s := &State{w: w}
				for _, c := range builtin {
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
		key := verdictKey{h: out[i].h, expect: e.expect, act: x.actID}
		if v := e.verdicts[key]; v != nil {
			st.v = v
			continue
		}
		if len(e.verdicts) >= maxVerdicts {
			clear(e.verdicts)
		}
		v := &verdict{}
		e.verdicts[key] = v
		st.v = v
		e.rep.DistinctStates++
		e.rep.Checked++
		fs := out[i].findings
		if len(custom) > 0 {
			if cw == nil {
				cw = newWalker(e, x, x.snap.State())
				cw.goTo(st.devs, false)
				cw.init()
			} else {
				cw.goTo(st.devs, true)
			}
			s := &State{Stdout: slices.Clone(e.stdout), Point: x.op, Name: st.name, e: e, x: x, w: cw}
			for _, c := range serial {
				fs = append(fs, c.Check(s)...)
			}
			if len(parallel) > 0 {
				// the state moves on: the parallel checkers get a file system
				s.FS()
				e.queue(v, s, fs, parallel)
				continue
			}
		}
		v.done, v.findings = true, fs
		if len(fs) > 0 {
			e.rep.Failed++
		}
	}
	for _, sb := range x.subs {
		if sb.st.v != nil {
			e.attribute(sb.st.v, x, sb.m, sb.st.devs, sb.st.name)
		}
	}
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

// queue runs the parallel checkers of a state on the checker goroutines.
func (e *Explorer) queue(v *verdict, s *State, fs []Finding, parallel []Checker) {
	e.wg.Add(1)
	e.work <- func() {
		all := fs
		for _, c := range parallel {
			all = append(all, c.Check(s)...)
		}
		e.vmu.Lock()
		defer e.vmu.Unlock()
		v.done, v.findings = true, all
		if len(all) > 0 {
			e.rep.Failed++
		}
		for _, sb := range v.subs {
			e.record(v, sb)
		}
		v.subs = nil
	}
}

// attribute records that model m reaches the state cur, whose verdict is v.
func (e *Explorer) attribute(v *verdict, x *point, m *Model, devs []dev, name string) {
	e.vmu.Lock()
	passed := v.done && len(v.findings) == 0
	e.vmu.Unlock()
	if passed {
		return // nothing to record
	}
	sb := sub{model: m.Name, point: x.op, name: name}
	for _, d := range devs {
		sb.cause = append(sb.cause, causeOp{verb: d.c.verb(), op: x.units[d.k].op, unit: &x.units[d.k]})
	}
	e.vmu.Lock()
	defer e.vmu.Unlock()
	if !v.done {
		v.subs = append(v.subs, sb)
		return
	}
	e.record(v, sb)
}

// record adds a failing (state, model) to its vulnerabilities. vmu held.
func (e *Explorer) record(v *verdict, sb sub) {
	if len(v.findings) > 0 {
		if k := e.rep.pointAt(sb.point.Index); k >= 0 {
			e.rep.Points[k].Failed++
		}
	}
	for _, f := range v.findings {
		var sig []string
		lines, opsText := []int{}, []string{}
		var cause []int
		seen := map[string]bool{}
		maxKept := -1
		for _, c := range sb.cause {
			maxKept = max(maxKept, c.op)
		}
		for _, c := range sb.cause {
			k := fmt.Sprintf("%s %d", c.verb, c.op)
			if seen[k] {
				continue
			}
			seen[k] = true
			sig = append(sig, k)
			cause = append(cause, c.op)
			if c.op >= 0 {
				o := e.op(c.op)
				lines = append(lines, o.Line)
				opsText = append(opsText, c.verb+" "+o.String())
			} else {
				opsText = append(opsText, c.verb+" (state from before the trace)")
			}
		}
		sort.Ints(lines)
		lines = slices.Compact(lines)
		key := f.Kind + "\x00" + f.Path + "\x00" + f.Message + "\x00" + strings.Join(sig, ",")
		vu := e.vulns[key]
		if vu == nil {
			vu = &Vulnerability{Kind: f.Kind, Lines: lines, Message: f.Message, Path: f.Path, Ops: opsText,
				Point: sb.point.String(), State: sb.name, key: key, cause: cause, pointIdx: sb.point.Index}
			vu.Property, vu.Fix = e.explain(f, sb)
			e.vulns[key] = vu
		}
		if p := sb.point.Index; p < vu.pointIdx || p == vu.pointIdx && sb.name < vu.State {
			// the earliest state shows the group, whatever order parallel
			// checkers finish in
			vu.Point, vu.State, vu.pointIdx = sb.point.String(), sb.name, p
		}
		vu.States++
		if !slices.Contains(vu.Models, sb.model) {
			vu.Models = append(vu.Models, sb.model)
		}
	}
}

// explain names the persistence property a failing state shows the program
// relied on, and a fix where the pattern is known.
func (e *Explorer) explain(f Finding, sb sub) (property, fix string) {
	var lostMeta, lostData, torn, split bool
	for _, c := range sb.cause {
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
		for _, c := range sb.cause {
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
	case len(sb.cause) == 0 && f.Kind != "durability":
		return "atomicity across calls: the state between two calls is inconsistent even with nothing lost", "make the calls' effect atomic (write a new file and rename it) or let recovery repair the intermediate state"
	case f.Kind == "durability" && len(sb.cause) == 0:
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
	var vs []*Vulnerability
	for _, v := range e.vulns {
		vs = append(vs, v)
	}
	if e.opts.Shards > 1 {
		sort.Slice(vs, func(a, b int) bool { return vs[a].key < vs[b].key })
		for _, v := range vs {
			r.Found = append(r.Found, found(v))
		}
	}
	r.Vulnerabilities = shrink(vs)
	for _, v := range r.Vulnerabilities {
		if k := r.pointAt(v.pointIdx); k >= 0 {
			r.Points[k].Vulnerabilities++
		}
	}
	r.finish()
	return &r
}

// FoundVulnerability is a vulnerability as a shard found it, with what
// Merge needs to group and shrink it with the other shards'.
type FoundVulnerability struct {
	Vulnerability
	Key        string `json:"key"`
	Cause      []int  `json:"cause"`
	PointIndex int    `json:"point_index"`
}

// found copies v (before shrink changes it).
func found(v *Vulnerability) *FoundVulnerability {
	c := *v
	c.Models = slices.Clone(v.Models)
	return &FoundVulnerability{Vulnerability: c, Key: v.key, Cause: slices.Clone(v.cause), PointIndex: v.pointIdx}
}

// mergeFound groups the shards' found vulnerabilities as one run's
// exploration would (states added, models joined, the earliest state shown)
// and shrinks them.
func mergeFound(rs []*Report) []*Vulnerability {
	byKey := map[string]*Vulnerability{}
	var vs []*Vulnerability
	for _, r := range rs {
		for _, f := range r.Found {
			w := byKey[f.Key]
			if w == nil {
				c := f.Vulnerability
				c.Models = slices.Clone(f.Models)
				c.key, c.cause, c.pointIdx = f.Key, slices.Clone(f.Cause), f.PointIndex
				w = &c
				byKey[f.Key] = w
				vs = append(vs, w)
				continue
			}
			if f.PointIndex < w.pointIdx || f.PointIndex == w.pointIdx && f.State < w.State {
				w.Point, w.State, w.pointIdx = f.Point, f.State, f.PointIndex
			}
			w.States += f.States
			for _, m := range f.Models {
				if !slices.Contains(w.Models, m) {
					w.Models = append(w.Models, m)
				}
			}
		}
	}
	return shrink(vs)
}

// shrink keeps, of the vulnerabilities with one finding, those whose cause
// includes no other's: the fewest lost or reordered calls that fail. A
// vulnerability dropped gives its models and states to the smaller ones (the
// smaller loss is a state of the same models, or lies beyond their depth).
func shrink(vs []*Vulnerability) []*Vulnerability {
	sort.Slice(vs, func(a, b int) bool { return vs[a].key < vs[b].key })
	var out []*Vulnerability
	for _, v := range vs {
		minimal := true
		for _, w := range vs {
			if w != v && w.Kind == v.Kind && w.Path == v.Path && w.Message == v.Message && len(w.cause) < len(v.cause) && subset(w.cause, v.cause) {
				minimal = false
				for _, m := range v.Models {
					if !slices.Contains(w.Models, m) {
						w.Models = append(w.Models, m)
					}
				}
				w.States += v.States
			}
		}
		if minimal {
			out = append(out, v)
		}
	}
	return out
}

// callIDs numbers the calls of merged reports' Ops lines ("VERB CALL"), as
// the op indexes of a vulnerability's cause.
type callIDs map[string]int

func (c callIDs) id(op string) int {
	for _, ch := range []choice{drop, tornH, prefixB, splitRn} {
		if rest, ok := strings.CutPrefix(op, ch.verb()+" "); ok {
			op = rest
			break
		}
	}
	k, ok := c[op]
	if !ok {
		k = len(c)
		c[op] = k
	}
	return k
}

func subset(a, b []int) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// finish sorts the vulnerabilities and counts them by kind.
func (r *Report) finish() {
	for _, v := range r.Vulnerabilities {
		sort.Slice(v.Models, func(a, b int) bool { return modelOrder(v.Models[a]) < modelOrder(v.Models[b]) })
	}
	sort.SliceStable(r.Vulnerabilities, func(a, b int) bool {
		va, vb := r.Vulnerabilities[a], r.Vulnerabilities[b]
		if c := slices.Compare(va.Lines, vb.Lines); c != 0 {
			return c < 0
		}
		if va.Kind != vb.Kind {
			return va.Kind < vb.Kind
		}
		return va.Path+va.Message < vb.Path+vb.Message
	})
	r.ByKind = map[string]int{}
	for _, v := range r.Vulnerabilities {
		r.ByKind[v.Kind]++
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
	r.WriteVulnerabilities(w, TextStyle{States: true,
		NoOps: "(nothing in flight was lost: what the program announced or was acknowledged is not durable)"})
	fmt.Fprintf(w, "models: %s\n", ModelLabels(r.Models))
	fmt.Fprintf(w, "crash points: %d   states: %d   distinct: %d   checked: %d   failed: %d   states/s: %.0f\n",
		r.CrashPoints, r.States, r.DistinctStates, r.Checked, r.Failed, r.StatesPerSecond)
	var kinds []string
	for k, n := range r.ByKind {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	fmt.Fprintf(w, "vulnerabilities: %d", len(r.Vulnerabilities))
	if len(kinds) > 0 {
		fmt.Fprintf(w, " (%s)", strings.Join(kinds, ", "))
	}
	fmt.Fprintln(w)
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

// TextStyle is what WriteVulnerabilities prints beside the fixed lines.
type TextStyle struct {
	// States adds each vulnerability's count of failing states and the
	// name of its first one.
	States bool
	// NoOps is the line under "crash after" of a vulnerability whose states
	// lost no call's changes.
	NoOps string
}

// WriteVulnerabilities prints each vulnerability for people: its kind, file
// and models, the finding, the crash point, the calls whose changes the
// state lost, the property the program relied on and the fix.
func (r *Report) WriteVulnerabilities(w io.Writer, st TextStyle) {
	for k, v := range r.Vulnerabilities {
		fmt.Fprintf(w, "vulnerability %d: %s", k+1, v.Kind)
		if v.Path != "" {
			fmt.Fprintf(w, " %s", v.Path)
		}
		fmt.Fprintf(w, " (models: %s", ModelLabels(v.Models))
		if st.States {
			fmt.Fprintf(w, "; %d states", v.States)
		}
		fmt.Fprintf(w, ")\n  %s\n  crash after %s\n", v.Message, v.Point)
		for _, o := range v.Ops {
			fmt.Fprintf(w, "    %s\n", o)
		}
		if len(v.Ops) == 0 {
			fmt.Fprintf(w, "    %s\n", st.NoOps)
		}
		fmt.Fprintf(w, "  relies on: %s\n", v.Property)
		if v.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", v.Fix)
		}
		if st.States {
			fmt.Fprintf(w, "  state: %s\n", v.State)
		}
	}
}

// WriteJSON prints the report as JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Merge combines shard reports into one: counts add up, vulnerabilities with
// the same kind, path and operations merge their models and state counts,
// and those whose cause includes another's give it their models and states
// (as in one run: see shrink). DistinctStates, Checked and Failed are sums
// over the shards: a state met again at a later crash point is checked once
// per shard that meets it, where a whole run checks it once.
func Merge(rs []*Report) *Report {
	out := &Report{}
	byKey := map[string]*Vulnerability{}
	// Shards list what they found before shrinking: the union is shrunk
	// as the whole run's would be.
	useFound := true
	for _, r := range rs {
		if len(r.Vulnerabilities) > 0 && len(r.Found) == 0 {
			useFound = false // reports without it: grouped as they are
		}
	}
	if useFound {
		out.Vulnerabilities = mergeFound(rs)
	}
	calls := callIDs{}
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
		out.Failed += r.Failed
		out.Seconds = max(out.Seconds, r.Seconds)
		if useFound {
			continue
		}
		for _, v := range r.Vulnerabilities {
			k := v.Kind + "\x00" + v.Path + "\x00" + v.Message + "\x00" + strings.Join(v.Ops, "\x00")
			if w := byKey[k]; w != nil {
				w.States += v.States
				for _, m := range v.Models {
					if !slices.Contains(w.Models, m) {
						w.Models = append(w.Models, m)
					}
				}
				continue
			}
			c := *v
			c.Models = slices.Clone(v.Models)
			c.key = k
			for _, o := range v.Ops {
				c.cause = append(c.cause, calls.id(o))
			}
			byKey[k] = &c
			out.Vulnerabilities = append(out.Vulnerabilities, &c)
		}
	}
	if !useFound {
		// a shard may hold a larger loss whose smaller one another shard found
		out.Vulnerabilities = shrink(out.Vulnerabilities)
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
	for _, v := range out.Vulnerabilities {
		if k := slices.IndexFunc(out.Points, func(p PointStats) bool { return p.Point.String() == v.Point }); k >= 0 {
			out.Points[k].Vulnerabilities++
		}
	}
	if out.Seconds > 0 {
		out.StatesPerSecond = float64(out.States) / out.Seconds
	}
	out.finish()
	return out
}

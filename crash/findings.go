package crash

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/iosim/iosim/vfs"
)

// Cause is a finding: the failing states of one cause, grouped as ALICE
// groups its vulnerabilities. The cause is the property the program relied
// on and the calls involved, each by its static identity (a Go workload's
// source line and call; a trace's call and path, or its line when the call
// names no path), so the same pattern repeated (a commit made three times)
// is one finding:
//
//   - ordering: Calls[0]'s changes were lost or torn while a later call,
//     Calls[1], persisted: the call after which the loss first fails;
//   - atomicity: Calls[0] persisted in part (torn, partly written, a size
//     without its data, a rename split), and the loss fails at a crash point
//     whose call made no change of its own that persisted (an
//     announcement, a sync, or the call itself);
//   - durability: Calls[0] was lost, and fails at such a crash point: the
//     failure needs no reordering, only a loss (what the program announced
//     or was acknowledged was not durable), or the state lost nothing and
//     the check found acknowledged data missing (a writeback error);
//   - consistency: the state lost nothing, yet fails: the program's own
//     state between two calls (Calls[0], the crash point) is inconsistent.
//
// The calls are the deviations the explorer chose for a failing state (a
// call lost, torn, written in part, a rename split), before the model's
// rules closed them (a journal cut at a call loses every later one). A
// failing state belongs to one finding: its own deviations', or when a state
// whose closed deviations are a part of its own also fails, the smallest
// such one's. States counts the run's states (a state per model, as
// Report.States counts them), so the findings' states add up to the failing
// ones and never exceed the run's.
type Cause struct {
	Property string      `json:"property"`
	Calls    []CauseCall `json:"calls"`
	// How are what the states did to Calls[0]: lost, torn, partly written,
	// split.
	How         []string `json:"how,omitempty"`
	Models      []string `json:"models"`
	Checks      []string `json:"checks"`
	Messages    []string `json:"messages"` // what the checks said, the first few distinct
	CrashPoints int      `json:"crash_points"`
	// Points are the first few crash points, in trace order.
	Points []string `json:"first_crash_points"`
	States int      `json:"states"`
	// Examples are the IDs of the first few failing states (iosim crash
	// --state ID --out DIR writes one).
	Examples []string `json:"examples"`
	Relies   string   `json:"relies_on"`
	Fix      string   `json:"fix,omitempty"`

	key      string
	pointIdx int
}

// CauseCall is a call of a cause, by its static identity, with the trace
// lines (a Go workload: source lines) of its first few dynamic instances.
type CauseCall struct {
	Role  string `json:"role"` // "lost" (lost or torn), "persisted", "crash after"
	Call  string `json:"call"`
	Path  string `json:"path,omitempty"`
	File  string `json:"file,omitempty"`
	Lines []int  `json:"lines"`
	// Instances counts the distinct calls (trace lines) folded in.
	Instances int `json:"instances"`
}

// maxShown bounds the examples, messages, crash points and lines a finding
// lists.
const maxShown = 3

// StateID names a crash state: the index of its crash point's call
// (Op.Index) and its number among the distinct states met there, in the
// order the models enumerate them. The same trace, models, depth, sample
// and seed give the same IDs; the text form is "POINT.K".
type StateID struct{ Point, K int }

func (s StateID) String() string { return strconv.Itoa(s.Point) + "." + strconv.Itoa(s.K) }

// ParseStateID parses "POINT.K".
func ParseStateID(s string) (StateID, error) {
	a, b, ok := strings.Cut(s, ".")
	p, err1 := strconv.Atoi(a)
	k, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || p < 0 || k < 0 {
		return StateID{}, fmt.Errorf("state ID %q: want POINT.K (two numbers, as a report's examples name states)", s)
	}
	return StateID{p, k}, nil
}

func (s StateID) less(t StateID) bool {
	return s.Point < t.Point || s.Point == t.Point && s.K < t.K
}

// FoundCause is the failing states of one exact deviation (the same calls
// lost or torn, by trace line), before grouping by static cause: what a
// shard reports so that Merge groups the union as one run does.
type FoundCause struct {
	Key string   `json:"key"`
	Ops []string `json:"ops"` // "VERB OPINDEX", the deviations chosen
	// Closed are the deviations of its first state once the model's rules
	// closed them (a journal cut loses every later call): a found cause
	// whose closed deviations include another's joins its finding.
	Closed   []string  `json:"closed"`
	Static   string    `json:"static"`
	Property string    `json:"property"`
	Calls    []rawCall `json:"calls"`
	How      []string  `json:"how,omitempty"`
	First    StateID   `json:"first"` // its earliest state, which gave Property and Calls
	Models   []string  `json:"models"`
	Checks   []string  `json:"checks"`
	Messages []msgAt   `json:"messages"`
	Points   []int     `json:"points"`
	States   int       `json:"states"`
	Examples []StateID `json:"examples"`
	Relies   string    `json:"relies_on"`
	Fix      string    `json:"fix,omitempty"`
}

type rawCall struct {
	Role string `json:"role"`
	Call string `json:"call"`
	Path string `json:"path,omitempty"`
	File string `json:"file,omitempty"`
	Line int    `json:"line"`
}

type msgAt struct {
	Msg string  `json:"msg"`
	At  StateID `json:"at"`
}

// staticCall is the static identity of op: a Go workload's source line and
// call; a trace's call and path (its line when it names none).
func staticCall(o Op) string {
	if strings.HasSuffix(o.File, ".go") || o.Path == "" {
		return o.File + ":" + strconv.Itoa(o.Line) + " " + o.Call
	}
	return o.Call + " " + o.Path
}

// class is what a failing state shows: a is the first call whose changes
// it lost or tore (-1: none), partial whether a persisted in part, and b
// the crash point's call when it persisted (in part) and is not a (-1:
// otherwise). The finding of a deviation is classified at its first
// failing state: the crash point there is the call whose persistence (or
// announcement) made the loss of a fail, as ALICE builds its states
// ("the calls before B, without A").
type class struct {
	a, b    int
	partial bool
	how     string
}

// classify reads a state of x: the deviations chosen, and what the model's
// rules closed them to.
func (e *Explorer) classify(x *point, chosen, closed []dev) class {
	c := class{a: -1, b: -1}
	if len(chosen) == 0 {
		return c
	}
	us := x.units
	for _, d := range chosen {
		if op := us[d.k].op; c.a < 0 || op < c.a {
			c.a = op
		}
	}
	for _, d := range chosen {
		if us[d.k].op == c.a && d.c != drop {
			c.partial, c.how = true, d.c.verb()
		}
	}
	if x.relevant == nil {
		x.relevant = make([]bool, len(us))
		for k := range us {
			u := &us[k]
			x.relevant[k] = u.op >= 0 && (u.kind != vfs.PendingAttr || e.permChange(u.op))
		}
	}
	dev := make(map[int32]bool, len(closed))
	for _, d := range closed {
		dev[d.k] = true
	}
	for k := range us {
		if dev[int32(k)] || !x.relevant[k] {
			continue
		}
		switch op := us[k].op; {
		case op == c.a:
			// a unit of the call kept beside one lost: a write's size
			// without its data
			c.partial = true
			if c.how == "" {
				c.how = "partly persisted"
			}
		case op == x.op.Index:
			c.b = op
		}
	}
	if c.how == "" {
		c.how = "lost"
	}
	return c
}

// recordCause adds a failing (state, model) to the found cause of its
// deviations. vmu held.
func (e *Explorer) recordCause(v *verdict, sb sub) {
	sig := sigOf(sb.cause)
	key := strings.Join(sig, ",")
	if len(sig) == 0 {
		key = "@" + strconv.Itoa(sb.point.Index)
	}
	fc := e.found[key]
	if fc == nil {
		fc = &FoundCause{Key: key, Ops: sig, First: sb.id, Closed: sigOf(sb.closed)}
		e.describeCause(fc, v, sb)
		e.found[key] = fc
	} else if sb.id.less(fc.First) {
		// the earliest state gives the cause, whatever order parallel
		// checkers finish in
		fc.First, fc.Closed = sb.id, sigOf(sb.closed)
		e.describeCause(fc, v, sb)
	}
	fc.States++
	addModel(&fc.Models, sb.model)
	for _, f := range v.findings {
		if !slices.Contains(fc.Checks, f.Kind) {
			fc.Checks = append(fc.Checks, f.Kind)
		}
		msg := f.Message
		if f.Path != "" && !strings.Contains(msg, f.Path) {
			msg = f.Path + ": " + msg
		}
		fc.Messages = addMsg(fc.Messages, msgAt{Msg: f.Kind + ": " + msg, At: sb.id})
	}
	if !slices.Contains(fc.Points, sb.point.Index) {
		fc.Points = append(fc.Points, sb.point.Index)
	}
	fc.Examples = addExample(fc.Examples, sb.id)
}

// sigOf lists deviations as "VERB OPINDEX", sorted, without repeats.
func sigOf(cs []causeOp) []string {
	sig := make([]string, 0, len(cs))
	for _, c := range cs {
		sig = append(sig, c.verb+" "+strconv.Itoa(c.op))
	}
	slices.Sort(sig)
	return slices.Compact(sig)
}

// describeCause sets what fc is, from its state sb.
func (e *Explorer) describeCause(fc *FoundCause, v *verdict, sb sub) {
	c := sb.class
	durable := false
	for _, f := range v.findings {
		durable = durable || f.Kind == "durability"
	}
	call := func(role string, o Op) rawCall {
		return rawCall{Role: role, Call: o.Call, Path: o.Path, File: o.File, Line: o.Line}
	}
	fc.Calls, fc.How = nil, nil
	switch {
	case c.a < 0 && durable:
		fc.Property = "durability"
		fc.Calls = []rawCall{call("crash after", sb.point)}
	case c.a < 0:
		fc.Property = "consistency"
		fc.Calls = []rawCall{call("crash after", sb.point)}
	default:
		fc.Property = "durability"
		if c.b >= 0 {
			fc.Property = "ordering"
		} else if c.partial {
			fc.Property = "atomicity"
		}
		fc.Calls = []rawCall{call("lost", e.op(c.a))}
		// the other calls the state chose to lose or tear, in order
		var more []causeOp
		for _, co := range sb.cause {
			if co.op != c.a && !slices.ContainsFunc(more, func(m causeOp) bool { return m.op == co.op }) {
				more = append(more, co)
			}
		}
		slices.SortFunc(more, func(a, b causeOp) int { return a.op - b.op })
		for _, co := range more {
			fc.Calls = append(fc.Calls, call(co.verb, e.op(co.op)))
		}
		if c.b >= 0 {
			fc.Calls = append(fc.Calls, call("persisted", e.op(c.b)))
		}
	}
	if c.a >= 0 {
		fc.How = []string{c.how}
	}
	parts := []string{fc.Property}
	for _, rc := range fc.Calls {
		parts = append(parts, staticCall(Op{Call: rc.Call, Path: rc.Path, File: rc.File, Line: rc.Line}))
	}
	if c.a < 0 && durable {
		// nothing lost, acknowledged data missing: one cause per file,
		// whatever the crash point
		parts = []string{fc.Property, "nothing lost"}
		for _, f := range v.findings {
			if f.Kind == "durability" {
				parts = append(parts, f.Path)
			}
		}
	}
	fc.Static = strings.Join(parts, "\x00")
	var f Finding
	if len(v.findings) > 0 {
		f = v.findings[0]
	}
	fc.Relies, fc.Fix = e.explain(f, sb)
}

func addModel(ms *[]string, m string) {
	if !slices.Contains(*ms, m) {
		*ms = append(*ms, m)
	}
}

// maxMessages bounds the distinct messages a found cause keeps: those of
// its earliest states.
const maxMessages = 8

func addMsg(ms []msgAt, m msgAt) []msgAt {
	if k := slices.IndexFunc(ms, func(x msgAt) bool { return x.Msg == m.Msg }); k >= 0 {
		if m.At.less(ms[k].At) {
			ms[k].At = m.At
		}
		return ms
	}
	ms = append(ms, m)
	slices.SortFunc(ms, func(a, b msgAt) int {
		if a.At != b.At {
			return cmpID(a.At, b.At)
		}
		return strings.Compare(a.Msg, b.Msg)
	})
	return ms[:min(len(ms), maxMessages)]
}

func cmpID(a, b StateID) int {
	if c := cmp.Compare(a.Point, b.Point); c != 0 {
		return c
	}
	return cmp.Compare(a.K, b.K)
}

func addExample(xs []StateID, id StateID) []StateID {
	if slices.Contains(xs, id) {
		return xs
	}
	xs = append(xs, id)
	slices.SortFunc(xs, cmpID)
	return xs[:min(len(xs), maxShown)]
}

// mergeFoundCauses joins found causes with the same key (the shards' of one
// run, or one run's in the order met): states added, models, checks,
// messages, points and examples joined, the earliest state's description
// kept.
func mergeFoundCauses(lists ...[]*FoundCause) []*FoundCause {
	by := map[string]*FoundCause{}
	var out []*FoundCause
	for _, l := range lists {
		for _, f := range l {
			w := by[f.Key]
			if w == nil {
				c := *f
				c.Models, c.Checks, c.Messages = slices.Clone(f.Models), slices.Clone(f.Checks), slices.Clone(f.Messages)
				c.Points, c.Examples = slices.Clone(f.Points), slices.Clone(f.Examples)
				by[f.Key] = &c
				out = append(out, &c)
				continue
			}
			if f.First.less(w.First) {
				w.First, w.Closed, w.Static, w.Property, w.Calls, w.How, w.Relies, w.Fix = f.First, f.Closed, f.Static, f.Property, f.Calls, f.How, f.Relies, f.Fix
			}
			w.States += f.States
			for _, m := range f.Models {
				addModel(&w.Models, m)
			}
			for _, c := range f.Checks {
				addModel(&w.Checks, c)
			}
			for _, m := range f.Messages {
				w.Messages = addMsg(w.Messages, m)
			}
			for _, p := range f.Points {
				if !slices.Contains(w.Points, p) {
					w.Points = append(w.Points, p)
				}
			}
			for _, x := range f.Examples {
				w.Examples = addExample(w.Examples, x)
			}
		}
	}
	slices.SortFunc(out, func(a, b *FoundCause) int { return strings.Compare(a.Key, b.Key) })
	for _, f := range out {
		// joined in the order met, which parallel checkers vary
		slices.SortFunc(f.Models, func(a, b string) int { return modelOrder(a) - modelOrder(b) })
		slices.Sort(f.Checks)
		slices.Sort(f.Points)
	}
	return out
}

// foldCauses groups found causes into findings: a found cause whose
// closed deviations include another's (the same calls lost or torn, and
// more: a journal cut at an earlier call includes the cut at a later one)
// joins the smallest such one's finding; the others are grouped by static
// cause. Every found cause joins exactly one finding, so a finding's states
// are a count of the run's failing states. points gives a crash point's
// text by its index.
func foldCauses(fcs []*FoundCause, pointText func(int) string) []*Cause {
	fcs = slices.Clone(fcs)
	slices.SortFunc(fcs, func(a, b *FoundCause) int { return strings.Compare(a.Key, b.Key) })
	// which found causes hold each closed deviation
	holders := map[string][]int{}
	for k, f := range fcs {
		for _, o := range f.Closed {
			holders[o] = append(holders[o], k)
		}
	}
	owner := make([]int, len(fcs)) // the found cause whose finding each joins
	for k, f := range fcs {
		owner[k] = k
		if len(f.Ops) == 0 {
			continue
		}
		count := map[int]int{}
		for _, o := range f.Closed {
			for _, j := range holders[o] {
				count[j]++
			}
		}
		best := -1
		for j, n := range count {
			g := fcs[j]
			if j == k || len(g.Ops) == 0 || n != len(g.Closed) || len(g.Closed) >= len(f.Closed) {
				continue
			}
			if best < 0 || len(g.Closed) < len(fcs[best].Closed) || len(g.Closed) == len(fcs[best].Closed) && j < best {
				best = j
			}
		}
		if best >= 0 {
			owner[k] = best // the smallest subset: itself minimal
		}
	}
	type acc struct {
		c      *Cause
		points map[int]bool
		lines  [][]int
		ex     []StateID
		msgs   []msgAt
		first  StateID
		lost   bool
	}
	byStatic := map[string]*acc{}
	var order []string
	for k, f := range fcs {
		rep := fcs[owner[k]]
		a := byStatic[rep.Static]
		if a == nil {
			a = &acc{c: &Cause{Property: rep.Property, Relies: rep.Relies, Fix: rep.Fix, key: rep.Static}, points: map[int]bool{}, first: rep.First, lost: lostFirst(rep)}
			for _, rc := range rep.Calls {
				a.c.Calls = append(a.c.Calls, CauseCall{Role: rc.Role, Call: rc.Call, Path: rc.Path, File: rc.File})
			}
			a.lines = make([][]int, len(rep.Calls))
			byStatic[rep.Static] = a
			order = append(order, rep.Static)
		}
		if better(rep, a.first, a.lost) {
			// what it relies on and the fix are the earliest state's, a
			// state that lost the call first: a lost call is the case a
			// torn one adds to
			a.first, a.lost, a.c.Relies, a.c.Fix = rep.First, lostFirst(rep), rep.Relies, rep.Fix
		}
		if owner[k] == k {
			for i, rc := range f.Calls {
				if i < len(a.lines) && !slices.Contains(a.lines[i], rc.Line) {
					a.lines[i] = append(a.lines[i], rc.Line)
				}
			}
			for _, h := range f.How {
				addModel(&a.c.How, h)
			}
		}
		a.c.States += f.States
		for _, m := range f.Models {
			addModel(&a.c.Models, m)
		}
		for _, c := range f.Checks {
			addModel(&a.c.Checks, c)
		}
		for _, p := range f.Points {
			a.points[p] = true
		}
		for _, x := range f.Examples {
			a.ex = addExample(a.ex, x)
		}
		for _, m := range f.Messages {
			a.msgs = addMsg(a.msgs, m)
		}
	}
	slices.Sort(order)
	var out []*Cause
	for _, s := range order {
		a := byStatic[s]
		c := a.c
		for i := range c.Calls {
			slices.Sort(a.lines[i])
			c.Calls[i].Instances = len(a.lines[i])
			c.Calls[i].Lines = a.lines[i][:min(len(a.lines[i]), maxShown)]
		}
		ps := make([]int, 0, len(a.points))
		for p := range a.points {
			ps = append(ps, p)
		}
		slices.Sort(ps)
		c.CrashPoints = len(ps)
		c.pointIdx = ps[0]
		for _, p := range ps[:min(len(ps), maxShown)] {
			c.Points = append(c.Points, pointText(p))
		}
		for _, x := range a.ex {
			c.Examples = append(c.Examples, x.String())
		}
		for _, m := range a.msgs[:min(len(a.msgs), maxShown)] {
			c.Messages = append(c.Messages, m.Msg)
		}
		slices.Sort(c.Checks)
		out = append(out, c)
	}
	return out
}

func lostFirst(f *FoundCause) bool { return len(f.How) > 0 && f.How[0] == "lost" }

// better reports whether found cause f describes a finding better than the
// one of state first (lost: whether that one lost its first call).
func better(f *FoundCause, first StateID, lost bool) bool {
	if lostFirst(f) != lost {
		return lostFirst(f)
	}
	return f.First.less(first)
}

// WriteFindings prints each finding for people: its property and the calls
// (with their trace or source lines), the models, the crash points and
// states, what the checks found, what it relies on, the fix and the IDs of
// example states.
func (r *Report) WriteFindings(w io.Writer, st TextStyle) {
	for k, c := range r.Findings {
		fmt.Fprintf(w, "finding %d: %s (models: %s", k+1, c.Property, ModelLabels(c.Models))
		if st.States {
			fmt.Fprintf(w, "; %d of %d states, at %d crash point%s", c.States, r.States, c.CrashPoints, plural(c.CrashPoints))
		}
		fmt.Fprintln(w, ")")
		for _, cc := range c.Calls {
			role := cc.Role
			if cc.Role == "lost" && len(c.How) > 0 {
				role = strings.Join(c.How, " or ")
			}
			fmt.Fprintf(w, "  %s: %s\n", role, cc.text())
		}
		for _, m := range c.Messages {
			fmt.Fprintf(w, "  found: %s\n", m)
		}
		if st.States {
			fmt.Fprintf(w, "  crash points: %d, the first after\n", c.CrashPoints)
			for _, p := range c.Points {
				fmt.Fprintf(w, "    %s\n", p)
			}
		}
		fmt.Fprintf(w, "  relies on: %s\n", c.Relies)
		if c.Fix != "" {
			fmt.Fprintf(w, "  fix: %s\n", c.Fix)
		}
		if st.States {
			fmt.Fprintf(w, "  states: %s\n", strings.Join(c.Examples, ", "))
		}
	}
}

// text is the call, its path and its lines.
func (cc CauseCall) text() string {
	s := cc.Call
	if cc.Path != "" {
		s += " " + cc.Path
	}
	var lines []string
	for _, l := range cc.Lines {
		lines = append(lines, strconv.Itoa(l))
	}
	where := "line "
	if cc.File != "" {
		where = path.Base(cc.File) + ":"
	}
	s += " (" + where + strings.Join(lines, ", ")
	if more := cc.Instances - len(cc.Lines); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s + ")"
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

package replay

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/iosim/iosim/strace"
)

// The order of -ff files.
//
// The per-task files of `strace -ff` carry no order between them but their
// timestamps, and without -t not even those: strace.Merger orders them by
// what their calls say of each other (clones, waits, pipes, SIGCHLDs) and
// otherwise runs one file to its end before the next. Threads that share
// files leave other orders possible: one thread's read may have come after
// another's write, and with -t/-tt/-ttt a call's time is when it started,
// so it took effect somewhere between then and the same task's next call
// (or the end of its -T duration): calls whose spans overlap may have taken
// effect in either order.
//
// When the merged order gives a result that disagrees with the recorded
// one, runOrdered searches the orders the files allow for one in which
// every result agrees, before it reports a divergence. A search step takes
// the first diverging call e and tries, one at a time, in a fixed order:
//
//   - another file's next call before e, or before one of the orderBack
//     calls of e's file that led up to it (the nearest first); without
//     timestamps that file then runs on, as a thread a clone made does,
//     until it ends or waits for another; with them only if its start lies
//     within the span of every call it passes;
//   - e before one of the other files' calls since e's file's previous
//     call (the nearest first, at most orderBack of them), with
//     timestamps only within their spans.
//
// A tried order that diverges at or before e's place is dropped at once;
// one whose first divergence comes later is searched from in turn (depth
// first, those where e itself agreed before the others). The search is
// deterministic and ends at the first order that agrees everywhere, after
// orderRuns replays, or when no step is left; the replay then reports the
// order it found (a note names each call moved and the call it was moved
// before), or else the tried order with the fewest divergences and a note
// that none agreed. A trace of more than orderMaxEvents events is not
// searched (a note says so).

// orderRuns bounds the replays one search makes, orderWork the events they
// replay, in whole traces (a tried order that diverges early stops there).
const (
	orderRuns = 256
	orderWork = 64
)

// orderBack bounds how far back (in events) a search step moves a call;
// orderShrink how many shorter runs of a file's calls it tries when the
// file's calls diverge after the ones it moved.
const (
	orderBack   = 16
	orderShrink = 4
)

// orderNoted is how many of an order's moves its note names.
const orderNoted = 8

// orderMaxEvents bounds the length of a trace whose order is searched.
const orderMaxEvents = 1 << 18

// orderLog is the order one replay took: per position, the file (the
// stream of the Merger), the line, the sort key (the start time in ns with
// timestamps) and, with -T, the end time (else -1).
type orderLog struct {
	stream []int32
	line   []int32
	key    []int64
	end    []int64
}

// trial is one replay of the search: the choices it was given and what it
// found.
type trial struct {
	choices []strace.Choice
	moves   []string // per choice, "FILE:LINE before FILE:LINE"
	record  bool     // fill log
	log     orderLog
	// stopAt: a divergence at or before this position ends the replay
	// (the order is no better than the one it came from); -1: none.
	stopAt   int64
	pos      int64 // events replayed
	firstDiv int64 // position of the first divergence, -1: none
	divs     int64 // divergences in all (when complete)
	timed    bool
	refused  bool
	aborted  bool // diverged at or before stopAt
}

// took records ev, just replayed at the trial's next position, and whether
// it diverged; false ends the replay.
func (t *trial) took(m *strace.Merger, ev *strace.Event, diverged bool) bool {
	pos := t.pos
	t.pos++
	if len(m.Refused()) > 0 {
		t.refused = true
		return false
	}
	if diverged {
		if t.firstDiv < 0 {
			t.firstDiv = pos
		}
		if pos <= t.stopAt {
			return false
		}
	}
	if t.record {
		if len(t.log.stream) >= orderMaxEvents {
			t.record = false
			t.log = orderLog{}
			return true
		}
		k, key := m.Last()
		end := int64(-1)
		if ev.HasDuration {
			end = key + ev.Duration
		}
		t.log.stream = append(t.log.stream, int32(k))
		t.log.line = append(t.log.line, int32(ev.Line))
		t.log.key = append(t.log.key, key)
		t.log.end = append(t.log.end, end)
	}
	t.timed = m.Timed()
	return true
}

// search is the state of one search over the orders of a set of -ff files.
type search struct {
	files  []string
	opts   Options
	runs   int    // replays made
	events int64  // events they replayed
	first  int64  // events of the first (the whole trace)
	best   *trial // complete, fewest divergences
	// bestReport is best's report, when opts is the replay's own.
	bestReport *Report
}

// spent reports whether the search has used its budget: orderRuns
// replays, or orderWork times the events of the first.
func (s *search) spent() bool {
	return s.runs >= orderRuns || s.events >= orderWork*s.first
}

// try replays the files with t's choices and returns t, filled in, or nil
// when the replay failed to run or a choice could not be taken.
func (s *search) try(t *trial) *trial {
	s.runs++
	t.record, t.firstDiv = true, -1
	rep, err := replayOnce(s.files, s.opts, t)
	s.events += t.pos
	if s.first == 0 {
		s.first = max(t.pos, 1)
	}
	if err != nil || rep.Error != "" || t.refused {
		return nil
	}
	if t.aborted = t.firstDiv >= 0 && t.firstDiv <= t.stopAt; t.aborted {
		return t
	}
	t.divs = rep.Divergences
	if s.best == nil || t.divs < s.best.divs {
		s.best, s.bestReport = t, rep
	}
	return t
}

// then returns a trial of t's choices and cs, described by move, that
// must not diverge at or before t's first divergence.
func (t *trial) then(move string, cs ...strace.Choice) *trial {
	return &trial{choices: append(slices.Clip(t.choices), cs...), moves: append(slices.Clip(t.moves), move), stopAt: t.firstDiv}
}

// ordinal returns, for position p of log l, the number of events of the
// same stream before it.
func (l *orderLog) ordinal(p int64) int {
	k, n := l.stream[p], 0
	for q := int64(0); q < p; q++ {
		if l.stream[q] == k {
			n++
		}
	}
	return n
}

// ends returns, per position, when the event's span ends: its -T end,
// else the start of its stream's next event, else +inf.
func (l *orderLog) ends() []int64 {
	out := make([]int64, len(l.key))
	next := map[int32]int64{}
	for p := len(l.key) - 1; p >= 0; p-- {
		k := l.stream[p]
		switch n, ok := next[k]; {
		case l.end[p] >= 0:
			out[p] = l.end[p]
		case ok:
			out[p] = n
		default:
			out[p] = math.MaxInt64
		}
		next[k] = l.key[p]
	}
	return out
}

// where names position p of log l.
func (s *search) where(l *orderLog, p int64) string {
	return fmt.Sprintf("%s:%d", s.files[l.stream[p]], l.line[p])
}

// overlapsAll reports whether the call at q may have taken effect before
// every call at positions from..q-1 of other streams than j: it started
// before each of their spans ended.
func overlapsAll(l *orderLog, ends []int64, q, from int64, j int32) bool {
	for p := from; p < q; p++ {
		if l.stream[p] != j && l.key[q] > ends[p] {
			return false
		}
	}
	return true
}

// expand searches on from t, which diverges, depth first (see the top of
// the file), and returns a trial whose every result agrees, or nil.
func (s *search) expand(t *trial) *trial {
	l := &t.log
	g := t.firstDiv
	if g < 0 || g >= int64(len(l.stream)) {
		return nil
	}
	k := l.stream[g]
	last := int64(-1)
	if len(t.choices) > 0 {
		last = t.choices[len(t.choices)-1].At
	}
	var ends []int64
	if t.timed {
		ends = l.ends()
	}
	var heads []int64 // the other files' next calls after g, nearest first
	seen := map[int32]bool{k: true}
	for q := g + 1; q < int64(len(l.stream)); q++ {
		if j := l.stream[q]; !seen[j] {
			seen[j] = true
			heads = append(heads, q)
		}
	}
	// Another file's next call before e, or before one of the calls of
	// e's file that led up to it.
	for p := g; p > last && p > g-orderBack && l.stream[p] == k; p-- {
		for _, q := range heads {
			j := l.stream[q]
			if t.timed && !overlapsAll(l, ends, q, p, j) {
				continue
			}
			if r := s.step(t, p, q); r != nil {
				return r
			}
			if s.spent() {
				return nil
			}
		}
	}
	// e, with the calls of its file that led up to it, before other
	// files' calls.
	for p := g - 1; p > last && p > g-orderBack; p-- {
		if l.stream[p] == k {
			continue
		}
		var block []int64 // k's calls after p up to e
		for x := p + 1; x <= g; x++ {
			if l.stream[x] == k {
				block = append(block, x)
			}
		}
		if t.timed && !slices.ContainsFunc(block, func(x int64) bool { return overlapsAll(l, ends, x, p, k) }) {
			break
		}
		if t.timed && !allOverlap(l, ends, block, p, k) {
			continue
		}
		cs := make([]strace.Choice, len(block))
		for i := range block {
			cs[i] = strace.Choice{At: p + int64(i), Stream: int(k)}
		}
		if r := s.descend(t.then(s.span(l, block)+" before "+s.where(l, p), cs...)); r != nil {
			return r
		}
		if s.spent() {
			return nil
		}
	}
	return nil
}

// allOverlap reports whether each of the calls at positions block may
// have taken effect before the calls of other streams than j from from on.
func allOverlap(l *orderLog, ends []int64, block []int64, from int64, j int32) bool {
	for _, x := range block {
		if !overlapsAll(l, ends, x, from, j) {
			return false
		}
	}
	return true
}

// span names the calls at positions block of log l, all of one file:
// FILE:LINE or FILE:FIRST-LAST.
func (s *search) span(l *orderLog, block []int64) string {
	w := s.where(l, block[0])
	if len(block) > 1 {
		w += fmt.Sprintf("-%d", l.line[block[len(block)-1]])
	}
	return w
}

// step tries, from t, the call at position q of t's log (another file's)
// at position p. Without timestamps its file runs on from there; when it
// then diverges before t did, the calls of its file that agreed are
// moved, the last of them back first.
func (s *search) step(t *trial, p, q int64) *trial {
	l := &t.log
	j := l.stream[q]
	one := strace.Choice{At: p, Stream: int(j)}
	if t.timed {
		return s.descend(t.then(s.where(l, q)+" before "+s.where(l, p), one))
	}
	one.RunOn = true
	ch := s.try(t.then(s.where(l, q)+" and on before "+s.where(l, p), one))
	if ch == nil || !ch.aborted {
		return s.follow(ch)
	}
	var block []int64 // the positions in ch of j's calls that agreed
	for x := p; x < ch.firstDiv; x++ {
		if ch.log.stream[x] == j {
			block = append(block, x)
		}
	}
	for n := len(block); n > 0 && n > len(block)-orderShrink && !s.spent(); n-- {
		cs := make([]strace.Choice, n)
		for i := range cs {
			cs[i] = strace.Choice{At: p + int64(i), Stream: int(j)}
		}
		if r := s.descend(t.then(s.span(&ch.log, block[:n])+" before "+s.where(l, p), cs...)); r != nil {
			return r
		}
	}
	return nil
}

// descend tries t and searches on from it.
func (s *search) descend(t *trial) *trial {
	return s.follow(s.try(t))
}

// follow returns t when it agrees everywhere, else what the search finds
// from it when it diverges later than the trial it came from.
func (s *search) follow(t *trial) *trial {
	switch {
	case t == nil || t.aborted || t.log.stream == nil:
		return nil
	case t.firstDiv < 0:
		return t
	}
	return s.expand(t)
}

// trialOptions returns the options of the search's replays: the world of
// opts, verified, with none of its layers, callbacks or timing.
func trialOptions(opts Options) Options {
	return Options{Verify: true, KeepGoing: opts.KeepGoing, Root: opts.Root, Mounts: opts.Mounts,
		Cwd: opts.Cwd, CwdFallback: opts.CwdFallback, CwdFallbackFrom: opts.CwdFallbackFrom,
		MaxDivergences: opts.MaxDivergences, MaxLineLen: opts.MaxLineLen, FS: opts.FS}
}

// plain reports whether opts replays as its trialOptions do.
func plain(opts Options) bool {
	return opts.Verify && len(opts.Stack) == 0 && opts.Progress == nil && opts.Device == nil && !opts.Timing &&
		opts.Observe == nil && opts.OnEvent == nil && opts.Settle == nil && opts.Stdout == nil && opts.Unknown == nil
}

// runOrdered replays -ff files in an order in which every result agrees,
// when the search finds one (see above).
func runOrdered(files []string, opts Options) (*Report, error) {
	s := &search{files: files, opts: trialOptions(opts)}
	root := s.try(&trial{stopAt: -1})
	if root == nil {
		return replayOnce(files, opts, nil) // it reports why it cannot run
	}
	rep := s.bestReport
	var note string
	chosen := root
	switch {
	case root.firstDiv < 0:
		if plain(opts) {
			return rep, nil
		}
		return replayOnce(files, opts, nil)
	case root.log.stream == nil:
		note = fmt.Sprintf("the order of the -ff files was not searched for one that agrees with the recorded results: the trace has more than %d events", orderMaxEvents)
	default:
		if found := s.expand(root); found != nil {
			chosen = found
			note = fmt.Sprintf("the order of the -ff files was chosen by search (%d orders tried) to agree with the recorded results: %s", s.runs, listMoves(chosen.moves))
		} else {
			chosen = s.best
			what := "the files' own order"
			if len(chosen.moves) > 0 {
				what = "an order chosen by search: " + listMoves(chosen.moves)
			}
			note = fmt.Sprintf("no order of the -ff files agrees with every recorded result (%d orders tried): the divergences are those of the order with the fewest, %s", s.runs, what)
		}
	}
	if plain(opts) && chosen == s.best {
		rep = s.bestReport
	} else {
		var err error
		rep, err = replayOnce(files, opts, &trial{choices: chosen.choices, stopAt: -1, firstDiv: -1})
		if err != nil {
			return rep, err
		}
	}
	rep.Notes = append(rep.Notes, note)
	return rep, nil
}

// listMoves joins the first orderNoted moves of an order, and counts the
// rest.
func listMoves(moves []string) string {
	if len(moves) <= orderNoted {
		return strings.Join(moves, ", ")
	}
	return fmt.Sprintf("%s and %d more moves", strings.Join(moves[:orderNoted], ", "), len(moves)-orderNoted)
}

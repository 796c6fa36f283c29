package strace

import (
	"bytes"
	"io"
	"slices"
)

// Merger interleaves the events of several parsers (typically the per-task
// files of `strace -ff -o PREFIX`) in timestamp order.
//
// Ordering: each stream gets a sort key per event: -ttt times as they are;
// -t/-tt times of day, with 24 h added whenever a stream's time goes back by
// more than 12 h (a trace that crosses midnight); -r relative times summed
// per stream (only meaningful when all streams started together); and an
// event without a timestamp takes the key of the stream's previous event, so
// it stays after it. Ties go to the parser listed first. Within one stream
// the order is always the file order.
//
// Streams without timestamps (-ff without -t) are ordered by what the
// calls say of each other, the streams named by their task (-ff file names,
// PidFromFileName): a wait4 that returns a child's pid comes after all of the
// child's events, and a thread's events (clone with CLONE_THREAD) come
// right after the clone that made it; a read of a pipe comes after the
// writes it reads, and a SIGCHLD that reports a child's end after the
// child's events (see causal.go). Otherwise a stream runs to its end,
// then the next one that a clone or fork made, then the first one left in
// the list.
//
// Choose overrides the order at given positions: a caller that finds the
// order above inconsistent with what the events record (replay's search
// over interleavings) names, by position, which stream's next event comes
// there instead.
type Merger struct {
	ps    []*Parser
	heads []*Event
	keys  []int64
	last  []int64
	base  []int64
	done  []bool
	prev  int // index of the stream whose event was returned last, or -1
	init  bool
	n     int64 // events returned so far

	choices []Choice // the orders still to apply, by At
	refused []Choice // the choices that could not be taken
	lastK   int      // the stream of the event returned last, or -1

	// untimed streams (see the ordering above)
	untimed bool
	stream  map[int]int // task id → stream
	stack   []int       // the streams running, the innermost last
	started []bool      // a clone or fork made the stream's task
	ran     []bool      // the stream has returned an event
	push    int         // a thread's stream to run after the event returned, or -1
	causal  causal      // pipes, fd tables and SIGCHLDs (causal.go)
}

// Merge returns a Merger over ps. The events it returns are owned by their
// parsers: each is valid until the next call to Merger.Next.
func Merge(ps ...*Parser) *Merger {
	n := len(ps)
	m := &Merger{ps: ps, heads: make([]*Event, n), keys: make([]int64, n), last: make([]int64, n),
		base: make([]int64, n), done: make([]bool, n), prev: -1, lastK: -1,
		stream: map[int]int{}, started: make([]bool, n), ran: make([]bool, n), push: -1}
	for k, p := range ps {
		if _, dup := m.stream[p.filePid]; p.filePid != 0 && !dup {
			m.stream[p.filePid] = k
		}
	}
	m.causal.init(m, n)
	return m
}

func (m *Merger) advance(k int) error {
	ev, err := m.ps[k].Next()
	if err == io.EOF {
		m.heads[k], m.done[k] = nil, true
		return nil
	}
	if err != nil {
		m.heads[k] = nil
		return err
	}
	m.heads[k] = ev
	key := m.last[k]
	switch ev.TimeKind {
	case TimeEpoch:
		key = ev.Time
	case TimeOfDay:
		key = ev.Time + m.base[k]
		if key < m.last[k]-12*3600e9 {
			m.base[k] += 24 * 3600e9
			key += 24 * 3600e9
		}
	case TimeRelative:
		key = m.last[k] + ev.Time
	}
	m.keys[k], m.last[k] = key, key
	return nil
}

// Choice makes the At-th event a Merger returns (counting from 0) the next
// event of stream Stream (an index into the parsers given to Merge).
type Choice struct {
	At     int64
	Stream int
	// RunOn, without timestamps, lets the stream run on after the event,
	// as if a clone had made it, until it ends or waits for another; then
	// the streams it interrupted go on.
	RunOn bool
}

// Choose sets the choices that override the order at their positions (At
// ascending, each At once), before the first call to Next.
//
// The chosen event is returned in place of the one the order above gives,
// which then follows as before: one event is moved. A choice whose stream
// has no event left, has not begun (neither returned an event nor been made
// by a clone or fork returned so far), or whose next event must wait for
// another stream (a read of a pipe that holds too little, a wait4 or a
// SIGCHLD of a child that has events left) is not taken: see Refused.
func (m *Merger) Choose(cs []Choice) { m.choices = cs }

// Refused returns the choices Next could not take.
func (m *Merger) Refused() []Choice { return m.refused }

// Last returns the stream of the event returned last and its sort key (the
// event's time in nanoseconds as described above; 0 without timestamps).
func (m *Merger) Last() (stream int, key int64) {
	if m.lastK < 0 {
		return -1, 0
	}
	return m.lastK, m.keys[m.lastK]
}

// Timed reports whether the streams are ordered by their timestamps (false
// before the first call to Next).
func (m *Merger) Timed() bool { return m.init && !m.untimed }

// chosen returns the choice for the next event, if there is one its
// stream can take.
func (m *Merger) chosen() (Choice, bool) {
	for len(m.choices) > 0 && m.choices[0].At < m.n {
		m.refused = append(m.refused, m.choices[0])
		m.choices = m.choices[1:]
	}
	if len(m.choices) == 0 || m.choices[0].At != m.n {
		return Choice{}, false
	}
	c := m.choices[0]
	m.choices = m.choices[1:]
	if c.Stream < 0 || c.Stream >= len(m.heads) || m.heads[c.Stream] == nil || !m.ran[c.Stream] && !m.started[c.Stream] {
		m.refused = append(m.refused, c)
		return Choice{}, false
	}
	return c, true
}

// Next returns the event with the smallest key among the streams' next
// events, or io.EOF when all are exhausted. A parser's error is returned
// as is; calling Next again continues with that parser's following line.
func (m *Merger) Next() (*Event, error) {
	ev, err := m.next()
	if ev != nil {
		m.n++
		m.lastK = m.prev
		m.ran[m.prev] = true
		if ev.Kind == KindSyscall && ev.RetKnown && ev.Ret > 0 && ev.ErrnoName == "" {
			switch ev.Name {
			case "clone", "clone3", "fork", "vfork":
				if j, ok := m.stream[int(ev.Ret)]; ok {
					m.started[j] = true
				}
			}
		}
	}
	return ev, err
}

func (m *Merger) next() (*Event, error) {
	if !m.init {
		m.init = true
		m.untimed = true
		for k := range m.ps {
			if err := m.advance(k); err != nil {
				return nil, err
			}
			if h := m.heads[k]; h != nil && h.TimeKind != TimeNone {
				m.untimed = false
			}
		}
	} else if m.prev >= 0 {
		k := m.prev
		m.prev = -1
		if err := m.advance(k); err != nil {
			return nil, err
		}
	}
	for k := range m.ps {
		// retry streams whose last Next failed
		if m.heads[k] == nil && !m.done[k] {
			if err := m.advance(k); err != nil {
				return nil, err
			}
		}
	}
	if m.untimed {
		return m.nextCausal()
	}
	best := -1
	if c, ok := m.chosen(); ok {
		best = c.Stream
	} else {
		for k, h := range m.heads {
			if h != nil && (best < 0 || m.keys[k] < m.keys[best]) {
				best = k
			}
		}
	}
	if best < 0 {
		return nil, io.EOF
	}
	m.prev = best
	return m.heads[best], nil
}

// nextCausal is Next for streams without timestamps.
func (m *Merger) nextCausal() (*Event, error) {
	if j := m.push; j >= 0 {
		m.push = -1
		if !slices.Contains(m.stack, j) {
			m.stack = append(m.stack, j)
		}
	}
	if c, ok := m.chosen(); ok {
		j := c.Stream
		if ev := m.heads[j]; m.mayRun(j, ev) {
			if c.RunOn {
				m.stack = append(slices.DeleteFunc(m.stack, func(i int) bool { return i == j }), j)
			}
			return m.take(j, ev), nil
		}
		m.refused = append(m.refused, c)
	}
	for {
		for len(m.stack) > 0 && m.heads[m.stack[len(m.stack)-1]] == nil {
			m.stack = m.stack[:len(m.stack)-1] // at its end (or its error: retried above)
		}
		if i := m.causal.satisfied(); i >= 0 {
			m.stack = m.stack[:i+1] // a pipe read's writer has written what it reads
		}
		if len(m.stack) == 0 {
			k := slices.IndexFunc(m.heads, func(h *Event) bool { return h != nil })
			for i, h := range m.heads {
				if h != nil && m.started[i] {
					k = i
					break
				}
			}
			if k < 0 {
				return nil, io.EOF
			}
			m.stack = append(m.stack, k)
		}
		k := m.stack[len(m.stack)-1]
		ev := m.heads[k]
		if j := m.causal.blocked(k, ev); j >= 0 {
			m.stack = append(m.stack, j) // the pipe's writer first
			continue
		}
		if j, ok := m.stream[childEnd(ev)]; ok && j != k && m.heads[j] != nil && !slices.Contains(m.stack, j) {
			m.stack = append(m.stack, j) // the child's events before its SIGCHLD
			continue
		}
		if j := m.waitsFor(k, ev); j >= 0 && !slices.Contains(m.stack, j) {
			m.stack = append(m.stack, j) // the child's events first
			continue
		}
		return m.take(k, ev), nil
	}
}

// waitsFor returns the stream of the child whose end ev of stream k (a
// wait4 or waitpid) returns, while that stream has events left, or -1.
func (m *Merger) waitsFor(k int, ev *Event) int {
	if ev.Kind != KindSyscall || !ev.RetKnown || ev.Ret <= 0 || ev.ErrnoName != "" || ev.Name != "wait4" && ev.Name != "waitpid" {
		return -1
	}
	if j, ok := m.stream[int(ev.Ret)]; ok && j != k && m.heads[j] != nil {
		return j
	}
	return -1
}

// mayRun reports whether ev, the next event of stream k, may come next:
// it waits for no other stream (a pipe's writer, a child's end).
func (m *Merger) mayRun(k int, ev *Event) bool {
	if !m.causal.ready(k, ev) {
		return false
	}
	if j, ok := m.stream[childEnd(ev)]; ok && j != k && m.heads[j] != nil {
		return false
	}
	return m.waitsFor(k, ev) < 0
}

// take returns ev, the next event of stream k, applying what it says of
// other streams (a clone or fork starts one, a thread's runs next).
func (m *Merger) take(k int, ev *Event) *Event {
	if ev.Kind == KindSyscall && ev.RetKnown && ev.Ret > 0 && ev.ErrnoName == "" {
		if j, ok := m.stream[int(ev.Ret)]; ok && j != k && m.heads[j] != nil {
			switch ev.Name {
			case "clone", "clone3", "fork", "vfork":
				m.started[j] = true
				if ev.Name != "fork" && ev.Name != "vfork" && cloneThread(ev.RawArgs) {
					m.push = j
				}
			}
		}
	}
	m.causal.returned(k, ev)
	m.prev = k
	return ev
}

// cloneThread reports whether clone arguments create a thread (CLONE_THREAD,
// by name or in hexadecimal flags).
func cloneThread(args []byte) bool {
	if bytes.Contains(args, []byte("CLONE_THREAD")) {
		return true
	}
	i := bytes.Index(args, []byte("flags=0x"))
	if i < 0 {
		return false
	}
	v, _, _, ok := parseUint(args, i+len("flags="))
	return ok && v&0x10000 != 0
}

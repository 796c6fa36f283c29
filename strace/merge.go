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
type Merger struct {
	ps    []*Parser
	heads []*Event
	keys  []int64
	last  []int64
	base  []int64
	done  []bool
	prev  int // index of the stream whose event was returned last, or -1
	init  bool

	// untimed streams (see the ordering above)
	untimed bool
	stream  map[int]int // task id → stream
	stack   []int       // the streams running, the innermost last
	started []bool      // a clone or fork made the stream's task
	push    int         // a thread's stream to run after the event returned, or -1
	causal  causal      // pipes, fd tables and SIGCHLDs (causal.go)
}

// Merge returns a Merger over ps. The events it returns are owned by their
// parsers: each is valid until the next call to Merger.Next.
func Merge(ps ...*Parser) *Merger {
	n := len(ps)
	m := &Merger{ps: ps, heads: make([]*Event, n), keys: make([]int64, n), last: make([]int64, n),
		base: make([]int64, n), done: make([]bool, n), prev: -1,
		stream: map[int]int{}, started: make([]bool, n), push: -1}
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

// Next returns the event with the smallest key among the streams' next
// events, or io.EOF when all are exhausted. A parser's error is returned
// as is; calling Next again continues with that parser's following line.
func (m *Merger) Next() (*Event, error) {
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
	for k, h := range m.heads {
		if h != nil && (best < 0 || m.keys[k] < m.keys[best]) {
			best = k
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
		if ev.Kind == KindSyscall && ev.RetKnown && ev.Ret > 0 && ev.ErrnoName == "" {
			if j, ok := m.stream[int(ev.Ret)]; ok && j != k && m.heads[j] != nil {
				switch ev.Name {
				case "wait4", "waitpid":
					if !slices.Contains(m.stack, j) {
						m.stack = append(m.stack, j) // the child's events first
						continue
					}
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
		return ev, nil
	}
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

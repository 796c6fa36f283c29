package strace

import "io"

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
type Merger struct {
	ps    []*Parser
	heads []*Event
	keys  []int64
	last  []int64
	base  []int64
	done  []bool
	prev  int // index of the stream whose event was returned last, or -1
	init  bool
}

// Merge returns a Merger over ps. The events it returns are owned by their
// parsers: each is valid until the next call to Merger.Next.
func Merge(ps ...*Parser) *Merger {
	n := len(ps)
	return &Merger{ps: ps, heads: make([]*Event, n), keys: make([]int64, n), last: make([]int64, n),
		base: make([]int64, n), done: make([]bool, n), prev: -1}
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
		for k := range m.ps {
			if err := m.advance(k); err != nil {
				return nil, err
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

package crash

import "maps"

// Unknown tells the explorer that from now on inode ino may hold, from
// offset off on, bytes the workload did not show (a replayed write whose data
// strace's -s cut: the model holds zeros there, which the program may never
// have written). With Options.SkipUnknown, a state in which a name reaches
// such an inode with a size above off is counted in Report.Unchecked and
// given to no check; why says where the bytes came from (the first one is
// Report.UncheckedWhy).
func (e *Explorer) Unknown(ino uint64, off int64, why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rep.UncheckedWhy == "" {
		e.rep.UncheckedWhy = why
	}
	if o, ok := e.taint[ino]; ok && o <= off {
		return
	}
	t := maps.Clone(e.taint)
	if t == nil {
		t = map[uint64]int64{}
	}
	t[ino] = max(off, 0)
	e.taint = t
}

// UnknownStdout tells the explorer, with Options.SkipUnknown, that the
// workload is about to announce bytes it did not show (why: where): the
// stdout of every state from then on holds them, so those states are
// counted in Report.Unchecked, not checked.
func (e *Explorer) UnknownStdout(why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rep.UncheckedWhy == "" {
		e.rep.UncheckedWhy = why
	}
	e.stdoutTaint = true
}

// Assume tells the explorer, with Options.AssumeUnknown, that the workload
// wrote bytes it did not show (why: where); the states keep the model's
// bytes there, and Report.Assumed names the first.
func (e *Explorer) Assume(why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rep.Assumed == "" {
		e.rep.Assumed = why
	}
}

// holdsUnknown reports whether the walker's state may hold bytes the
// workload did not show: its stdout, after UnknownStdout, or a reachable
// regular file that Unknown named, with bytes at or past the offset it gave.
func (w *walker) holdsUnknown() bool {
	if w.x.stdoutTaint {
		return true
	}
	for id, off := range w.x.taint {
		for _, k := range w.names[id] {
			if ev := w.ents[k]; ev != nil {
				if f := w.fact(id, ev.path); f.ok && f.size > off {
					return true
				}
				break
			}
		}
	}
	return false
}

package sim

// The processors of the time model (cpu.cores): when a profile gives a number
// of processors, the threads' CPU work (Task.Spend and the kernel's CPU work in
// their calls, copies included) runs on them, and a thread whose work arrives
// while every processor is busy waits in the run queue. A piece of work is
// placed on the processor that finishes it first; it runs in that processor's
// idle time from its arrival on, pre-empted by work placed before it (a
// work-conserving scheduler that never leaves a processor idle while work
// waits, as the kernel's scheduler does; Love, "Linux Kernel Development",
// 2nd ed., ch. 4). A call's kernel work is placed at the end of the call, where
// a read's copy to the caller happens. Work is placed in the order RunByClock
// makes the calls, so a thread's work can take idle time before work placed
// earlier by a thread that was already waiting for the device. Threads compete
// once more threads than processors have run (made a call or spent time):
// until then each has a processor of its own, and its work is not placed.

// busy is an interval of a processor's time taken by work placed on it.
type busy struct{ from, to int64 }

// runQueue is the processors' timelines: per processor, the busy intervals
// not yet in the past, sorted and disjoint.
type runQueue struct {
	cpus [][]busy
	tmp  []busy
}

// finish returns when work of n ns arriving at at would finish on timeline bs.
func finish(bs []busy, at, n int64) int64 {
	t := at
	for _, b := range bs {
		if b.to <= t {
			continue
		}
		if b.from > t {
			if gap := b.from - t; gap >= n {
				return t + n
			} else {
				n -= gap
			}
		}
		t = b.to
	}
	return t + n
}

// run places work of n ns arriving at at and returns when it finishes. floor
// is a time before which no work will arrive again: intervals that end by
// then are forgotten.
func (rq *runQueue) run(at, n, floor int64) int64 {
	best, end := 0, int64(-1)
	for i, bs := range rq.cpus {
		if e := finish(bs, at, n); end < 0 || e < end {
			best, end = i, e
		}
	}
	// Take the idle time of [at, end) on the chosen processor: the result is
	// its timeline with [at, end) wholly busy, merged with what touches it.
	bs := rq.cpus[best]
	out := rq.tmp[:0]
	from, to := at, end
	for _, b := range bs {
		switch {
		case b.to < from:
			if b.to > floor {
				out = append(out, b)
			}
		case b.from > to:
			if from >= 0 {
				out = append(out, busy{from, to})
				from = -1
			}
			out = append(out, b)
		default: // touches [from, to): merge
			from, to = min(from, b.from), max(to, b.to)
		}
	}
	if from >= 0 {
		out = append(out, busy{from, to})
	}
	rq.tmp = bs[:0]
	rq.cpus[best] = out
	return end
}

// floor returns the smallest clock of the threads still running: no work
// arrives before it.
func (tm *timeModel) floor() int64 {
	f := int64(-1)
	for _, t := range tm.tasks {
		if !t.exited.Load() && (f < 0 || t.now < f) {
			f = t.now
		}
	}
	return f
}

// onCPU runs cpu ns of t's work on a processor, as if it started at at, and
// returns when it finishes, accounting the wait to d.RunQueue. Called with
// tm.mu held; without cpu.cores the work starts at once.
func (tm *timeModel) onCPU(at, cpu int64, d *Breakdown) int64 {
	if !tm.contended() || cpu <= 0 {
		return at + max(cpu, 0)
	}
	floor := int64(-1) // forget nothing, unless a timeline has grown
	for _, bs := range tm.rq.cpus {
		if len(bs) > 32 {
			floor = tm.floor()
			break
		}
	}
	end := tm.rq.run(at, cpu, floor)
	d.RunQueue += end - at - cpu
	return end
}

// contended reports whether the threads can compete for processors: the
// profile gives their number and more threads than that have made calls. With
// fewer, each has a processor of its own and nothing is placed.
func (tm *timeModel) contended() bool {
	return tm.rq.cpus != nil && int(tm.ntasks.Load()) > len(tm.rq.cpus)
}

// lightCall charges t a call priced by its entry alone (kind light or path, or
// a failed call) and sets its clock after it.
func (tm *timeModel) lightCall(t *Task, kd kind) {
	now := tm.entry(t, kd)
	if tm.contended() {
		tm.mu.Lock()
		now = tm.onCPU(t.now, now-t.now, t.tb)
		tm.mu.Unlock()
	}
	t.now = now
}

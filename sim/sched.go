package sim

// RunByClock drives concurrent threads deterministically in virtual time, as a
// discrete-event loop: it repeatedly lets the thread with the smallest clock
// (the lowest index among equals) make its next step, until every step function
// has returned false. step(i) makes thread i's next call or calls and reports
// whether thread i has more to do. The order in which the threads' calls reach
// the kernel is then their order in virtual time, which is what the time
// model's resources (locks, journal, device) assume.
func RunByClock(threads []*Process, step func(i int) bool) {
	live := make([]bool, len(threads))
	for i := range live {
		live[i] = true
	}
	for {
		next := -1
		for i, p := range threads {
			if live[i] && (next < 0 || p.t.now < threads[next].t.now) {
				next = i
			}
		}
		if next < 0 {
			return
		}
		live[next] = step(next)
	}
}

package replay

import (
	"strings"
	"syscall"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// nameInfo caches, per syscall name, its number, whether the model covers it,
// and its summary row.
type nameInfo struct {
	nr       sim.Sysno
	known    bool
	modelled bool // sim.SupportOf(nr) is not NotModelled
	stats    *SyscallStats
}

// stats returns the summary row of a syscall name.
func (r *replayer) stats(name string) *SyscallStats {
	s := r.report.Syscalls[name]
	if s == nil {
		s = &SyscallStats{}
		r.report.Syscalls[name] = s
	}
	return s
}

// event replays one trace event.
func (r *replayer) event(ev *strace.Event) {
	switch ev.Kind {
	case strace.KindSyscall:
		r.report.Calls++
		r.syscall(ev)
	case strace.KindExit:
		if t := r.tasks[ev.Pid]; t != nil && !t.Exited() {
			r.k.Syscall(&sim.Call{Nr: sim.SYS_EXIT, Task: t})
		}
	case strace.KindKilled:
		if t := r.tasks[ev.Pid]; t != nil && !t.Exited() {
			r.k.Syscall(&sim.Call{Nr: sim.SYS_EXIT_GROUP, Task: t})
		}
	}
}

// task returns the simulated task of a traced tid, creating it (and its parents)
// as the plan says: a thread shares its creator's fd table, a child process gets a
// copy; a task with no known creator is a process of its own, started with the
// inherited fds 0, 1 and 2. A task with no known creator whose end a SIGCHLD
// told a traced task of is that task's child (made by a call that an
// -e trace= subset does not show). When the first task with no known creator
// began before the trace (its first call is not an execve: strace -p attached
// to it), the other such tasks are its threads: `strace -f -p PID` attaches
// to every thread of PID; unless both call exit_group (`strace -p A -p B`:
// two processes).
//
// A task that began before the trace may share its fd table with tasks the
// trace does not show (threads traced without -f, the other files of an -ff
// set): its fd table is blind, and fdAllowed takes fd numbers that the lowest
// free one does not explain.
func (r *replayer) task(tid int, ev *strace.Event) *sim.Task {
	if t := r.tasks[tid]; t != nil {
		return t
	}
	// A hostile trace can name creators in a cycle (two clones, or two
	// SIGCHLDs, that make each other): a task already being made is taken
	// as having no creator.
	if r.making[tid] {
		return r.spawn(tid, ev)
	}
	r.making[tid] = true
	defer delete(r.making, tid)
	var t *sim.Task
	if parent, thread, ok := r.plan.parentOf(tid, ev); ok && parent != tid {
		pt := r.task(parent, ev)
		var err error
		if thread {
			t, err = pt.Clone(tid)
		} else {
			t, err = pt.Fork(tid)
		}
		if err != nil {
			t = nil
		}
	} else if r.attached != nil {
		// Not the first task with no known creator. (forkedBy waits for the
		// read-ahead pass to end: not asked for the first one, which every
		// trace has.)
		if parent, ok := r.plan.forkedBy(tid); ok && parent != tid {
			// Its parent was told of its end: a child process that a call
			// the trace does not show made.
			if c, err := r.task(parent, ev).Fork(tid); err == nil {
				t = c
			}
		} else if r.blind[r.attached.Group()] == beganBefore && r.plan.sameProcessPossible(r.attached.Tid(), tid) {
			if c, err := r.attached.Clone(tid); err == nil {
				t = c
			}
		}
	}
	if t == nil {
		return r.spawn(tid, ev)
	}
	r.tasks[tid] = t
	r.report.Processes++
	return t
}

// spawn makes tid a process of its own (see task).
func (r *replayer) spawn(tid int, ev *strace.Event) *sim.Task {
	if t := r.tasks[tid]; t != nil {
		return t
	}
	t, err := r.k.SpawnPid(tid)
	if err != nil {
		t, _ = r.k.SpawnPid(0)
	}
	r.k.Syscall(&sim.Call{Nr: sim.SYS_CHDIR, Task: t, Path: r.world.cwd})
	r.installSpecial(t, 0, &sim.Placeholder{Kind: vfs.S_IFCHR}, syscall.O_RDWR) // stdin: a terminal, a pipe, a file
	out := &sim.Placeholder{Kind: vfs.S_IFREG}
	if r.stdouts == nil {
		r.stdouts = map[*sim.Placeholder]bool{}
	}
	r.stdouts[out] = true
	r.installSpecial(t, 1, out, syscall.O_WRONLY|syscall.O_APPEND)
	r.installSpecial(t, 2, &sim.Placeholder{Kind: vfs.S_IFREG}, syscall.O_WRONLY|syscall.O_APPEND)
	r.inherited(t, 0, 1, 2)
	if ev.Pid != tid || !isExec(ev.Name) {
		r.blind[t.Group()] = beganBefore
	}
	if r.attached == nil {
		r.attached = t
	}
	r.tasks[tid] = t
	r.report.Processes++
	return t
}

// untracedThreads marks blind the fd tables of the threads made so far that
// have no line in the input (traced without -f): the fds they open and
// close are not in the trace. Asked where an fd number or an fd's absence
// needs explaining, as it waits for the read-ahead pass to read the whole
// input.
func (r *replayer) untracedThreads() {
	for _, m := range r.threads {
		if !r.plan.appears(m.tid) && r.blind[m.group] == 0 {
			r.blind[m.group] = untracedThread
		}
	}
	r.threads = r.threads[:0]
	for _, c := range r.children {
		if !r.plan.appears(c) {
			r.untracedChildren++
		}
	}
	r.children = r.children[:0]
}

// isExec says whether a call starts a program.
func isExec(name string) bool { return name == "execve" || name == "execveat" }

func isRestart(name string) bool { return strings.HasPrefix(name, "ERESTART") }

// syscall replays one system call event.
func (r *replayer) syscall(ev *strace.Event) {
	info := r.names[ev.Name]
	if info == nil {
		info = &nameInfo{stats: r.stats(ev.Name)}
		info.nr, info.known = sim.SysnoByName(ev.Name)
		if info.known {
			s, _ := sim.SupportOf(info.nr)
			info.modelled = s != sim.NotModelled
		}
		r.names[ev.Name] = info
	}
	st := info.stats
	st.Calls++
	if ev.Failed() {
		st.Errors++
	}
	nr, ok := info.nr, info.known
	if !ok {
		r.report.NotModelled[ev.Name]++
		return
	}
	t := r.task(ev.Pid, ev)
	switch nr {
	case sim.SYS_CLONE, sim.SYS_CLONE3, sim.SYS_FORK, sim.SYS_VFORK:
		if ev.RetKnown && ev.Ret > 0 && !ev.Failed() {
			child := int(ev.Ret)
			r.task(child, ev)
			if cloneFlags(ev)&(cloneThread|cloneFiles) != 0 {
				// Perhaps a thread that the trace does not follow (traced
				// without -f): see untracedThreads.
				r.threads = append(r.threads, madeThread{child, t.Group()})
			} else {
				r.children = append(r.children, child)
			}
		}
		r.report.Replayed++
		return
	case sim.SYS_EXECVE, sim.SYS_EXECVEAT:
		if ev.RetKnown && ev.Ret == 0 && !ev.Failed() {
			sim.Send(r.top, sim.Call{Nr: nr, Task: t})
			r.world.unmapped(t.Group(), 0, 0)
		}
		r.report.Replayed++
		return
	case sim.SYS_EXIT, sim.SYS_EXIT_GROUP:
		// The task ends at its `+++ exited +++` line; exit_group ends the others.
		if nr == sim.SYS_EXIT_GROUP {
			r.k.Syscall(&sim.Call{Nr: nr, Task: t})
			r.world.unmapped(t.Group(), 0, 0)
		}
		r.report.Replayed++
		return
	}
	if !info.modelled {
		r.report.NotModelled[ev.Name]++
		r.unmodelledFds(t, nr, ev)
		return
	}
	if ev.Injected {
		// strace's own fault injection: the kernel never ran the call.
		r.report.Replayed++
		return
	}
	if nr == sim.SYS_CLOSE && r.closedEarly[closeKey{ev.Pid, ev.Line}] {
		// Done when another task's call took its fd (see fdAllowed), which
		// only a successful close is: nothing is left to run or compare.
		delete(r.closedEarly, closeKey{ev.Pid, ev.Line})
		r.report.Replayed++
		return
	}
	r.replay(t, nr, ev, st)
}

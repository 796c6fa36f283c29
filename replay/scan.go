package replay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

// plan is what a read-ahead pass over the trace learns that the replay needs
// before it reaches the line that says it: with -f, a child's first lines come
// before the `<... clone resumed> = PID` that names it, so the process tree is read
// ahead. The pass runs in its own goroutine, ahead of the replay (on another core);
// each query waits until the pass has read far enough to answer it. Its size grows
// with the number of tasks and fds, not with the trace's length.
type plan struct {
	mu      sync.Mutex
	cond    sync.Cond
	done    bool            // the pass reached the end (or an error, or was stopped)
	stop    atomic.Bool     // the replay asks the pass to stop
	reached map[string]*int // per file, the last line read (see lineReached)
	events  int             // events read
	nfiles  int             // trace files read together

	parent map[int]int      // child tid → the tid that created it
	thread map[int]bool     // child created with CLONE_THREAD (shares the fd table)
	seen   map[int]bool     // the tids that have a line of their own (a call, a signal, an exit)
	names  map[string]fdUse // the syscall names in the input, with what their calls do to fd tables
	// untimedMakers holds the tasks of -ff files without timestamps that
	// made an fd: their order relative to other files is unknown.
	untimedMakers map[int]bool
	// sigchld maps a tid to the task that a SIGCHLD told of its end: its
	// parent process, which the trace may not show creating it.
	sigchld map[int]int
	// exitGroup holds the tasks that called exit_group: one per process.
	exitGroup map[int]bool
	cwd       string // the initial working directory, when the trace shows it

	// fdMade maps, per file, an fd number to the first line where a call
	// returned it; fds used but never made are inherited.
	fdMade map[string]map[int]int
	// fdReused: a call returned an fd number that a call of the same file
	// had returned before (a close, or what freed it, came between).
	fdReused bool
	// flight lists the fd-creating calls that were interrupted by another
	// task's line (<unfinished ...>), and the fd-releasing calls of other tasks
	// that completed while an fd-creating call was in flight; at most maxFlight
	// are kept.
	flight []flightSpan
	// closing lists the successful closes printed as <unfinished ...>: their fd
	// was free from the start line on; at most maxFlight are kept.
	closing []closeSpan
	// released holds the last releaseWindow successful fd-releasing calls
	// (close, close_range, dup2, dup3), a ring indexed by nreleased.
	released  [releaseWindow]releaseMark
	nreleased int
	// aio holds what the pass saw of AIO completions (addAioEvents).
	aio map[aioKey]*aioSeq
}

// closeSpan is a close(fd) of task pid between lines start and end.
type closeSpan struct {
	file       string
	pid, fd    int
	start, end int
}

// releaseMark is where an fd-releasing call completed.
type releaseMark struct {
	file string
	pid  int
	line int
}

// releaseWindow is how many fd-releasing calls the pass remembers for the
// fd-creating calls still in flight: an open printed as <unfinished ...> whose
// result comes after more than this many closes of other tasks is not checked
// against the older ones.
const releaseWindow = 256

// cwdLookahead is how many events the replay waits for when it looks for the
// working directory the trace reveals (a -yy AT_FDCWD decoration, or getcwd).
const cwdLookahead = 10000

type flightSpan struct {
	file       string
	pid        int
	start, end int   // lines of the <unfinished ...> and <... resumed> parts
	time       int64 // -ff files: the call's start time (0 if none)
}

// concurrency is how close (ns) the start times of two fd-creating calls of
// different -ff files must be for replay to treat them as possibly concurrent:
// -ff files carry no line order between tasks, and without -T no end times.
const concurrency = 1_000_000

const maxFlight = 1 << 16

// fdUse says what the calls of a syscall can do to an fd table.
type fdUse uint8

const (
	// makesFd: a call can return a new fd.
	makesFd fdUse = 1 << iota
	// releasesFd: a successful call can free an fd of the table (close,
	// close_range, and dup2/dup3 closing their newfd).
	releasesFd
)

// fdUseOf returns what the calls named name do to fd tables, from the syscall
// table.
func fdUseOf(name string) fdUse {
	nr, ok := sim.SysnoByName(name)
	if !ok {
		return 0
	}
	in := sim.Info(nr)
	var u fdUse
	switch in.Ret {
	case sim.RetFd, sim.RetNewFd, sim.RetFdOrValue:
		u |= makesFd
	}
	if in.Props&sim.ClosesFd != 0 {
		u |= releasesFd
	}
	return u
}

// wait blocks until ready reports true or the pass is done. Called with pl.mu held.
func (pl *plan) wait(ready func() bool) {
	for !pl.done && !ready() {
		pl.cond.Wait()
	}
}

// lineReached returns the last line of file the pass has read (0 before it
// starts on the file). Called with pl.mu held.
func (pl *plan) lineReached(file string) int {
	if n := pl.reached[file]; n != nil {
		return *n
	}
	return 0
}

// parentLookahead is how far past a task's first line the pass must read before
// the replay concludes that no clone/fork in the trace created it: strace prints
// the creating call's result a few lines after the child's first ones.
const parentLookahead = 4096

// parentOf returns the tid that created tid (first seen in ev) and whether it is a
// thread, once the pass has seen the call that did, or has read parentLookahead
// lines past ev without finding one (with -ff files, the whole trace).
func (pl *plan) parentOf(tid int, ev *strace.Event) (parent int, thread, ok bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.wait(func() bool {
		if _, ok := pl.parent[tid]; ok {
			return true
		}
		return pl.nfiles == 1 && pl.lineReached(ev.File) >= ev.EndLine+parentLookahead
	})
	parent, ok = pl.parent[tid]
	return parent, pl.thread[tid], ok
}

// appears reports whether tid has a line of its own anywhere in the input (a
// task whose creator was traced without -f has none). It waits for the whole
// pass.
func (pl *plan) appears(tid int) bool { return pl.whole().seen[tid] }

// forkedBy returns the task that a SIGCHLD in the input told of tid's end:
// tid was a child process of its. It waits for the whole pass.
func (pl *plan) forkedBy(tid int) (parent int, ok bool) {
	parent, ok = pl.whole().sigchld[tid]
	return parent, ok
}

// sameProcessPossible reports whether tasks a and b may be threads of one
// process: not if both called exit_group, which one task of a process
// does. It waits for the whole pass.
func (pl *plan) sameProcessPossible(a, b int) bool {
	g := pl.whole().exitGroup
	return !g[a] || !g[b]
}

// tasks returns how many tasks have a line in the input. It waits for the
// whole pass.
func (pl *plan) tasks() int { return len(pl.whole().seen) }

// untimedFiles reports whether the input had -ff files without timestamps.
// It waits for the whole pass.
func (pl *plan) untimedFiles() bool { return len(pl.whole().untimedMakers) > 0 }

// hasCall reports whether a call of any of the names is in the input. It
// waits for the whole pass.
func (pl *plan) hasCall(names ...string) bool {
	seen := pl.whole().names
	for _, n := range names {
		if _, ok := seen[n]; ok {
			return true
		}
	}
	return false
}

// reusesFds reports whether a call returned an fd number returned before in
// the same file. It waits for the whole pass.
func (pl *plan) reusesFds() bool { return pl.whole().fdReused }

// whole waits for the pass to read the whole input (or to stop) and returns
// pl, whose fields are final then: they may be read without the lock, which
// orders those reads after the pass's last writes.
func (pl *plan) whole() *plan {
	pl.mu.Lock()
	pl.wait(func() bool { return false })
	pl.mu.Unlock()
	return pl
}

// initialCwd returns the working directory the start of the trace reveals, or "".
func (pl *plan) initialCwd() string {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.wait(func() bool { return pl.cwd != "" || pl.events >= cwdLookahead })
	return pl.cwd
}

// inFlight reports whether another task had an fd-creating call in flight while
// ev ran, or released an fd while ev was in flight, or, in -ff files without
// timestamps, whether a thread of the same process made fds in another file
// (the order across the files is not known). It waits for the whole pass (a
// call's resumption may come much later).
func (pl *plan) inFlight(ev *strace.Event) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.wait(func() bool { return false })
	if ev.TimeKind == strace.TimeNone && pl.nfiles > 1 {
		// -ff files without timestamps: a thread of the same process that
		// makes fds in its own file may have made one at any time.
		g := pl.threadGroup(ev.Pid)
		for pid := range pl.untimedMakers {
			if pid != ev.Pid && pl.threadGroup(pid) == g {
				return true
			}
		}
	}
	for _, f := range pl.flight {
		if f.file == ev.File && f.pid != ev.Pid && f.start < ev.EndLine && f.end > ev.Line {
			return true
		}
		if f.file != ev.File && f.time != 0 && ev.Time != 0 && f.time-ev.Time < concurrency && ev.Time-f.time < concurrency {
			return true
		}
	}
	return false
}

// threadGroup returns the task whose threads (by CLONE_THREAD, as far as the
// trace shows) tid is of: tid itself unless a clone made it a thread. Called
// with pl.mu held.
func (pl *plan) threadGroup(tid int) int {
	for n := 0; pl.thread[tid] && n < 1<<16; n++ {
		p, ok := pl.parent[tid]
		if !ok || p == tid {
			break
		}
		tid = p
	}
	return tid
}

// closeInFlight returns the start line and task of another task's close(fd)
// that began before ev and returned after it: Linux frees the fd when close
// enters the kernel, so ev may have been given it.
func (pl *plan) closeInFlight(ev *strace.Event, fd int) (pid, line int, ok bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.wait(func() bool { return false })
	for _, c := range pl.closing {
		if c.file == ev.File && c.pid != ev.Pid && c.fd == fd && c.start < ev.Line && c.end > ev.EndLine {
			return c.pid, c.start, true
		}
	}
	return 0, 0, false
}

// createdIn reports whether some call before ev returned an fd in [lo, hi).
func (pl *plan) createdIn(ev *strace.Event, lo, hi int) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.wait(func() bool { return pl.lineReached(ev.File) >= ev.Line })
	m := pl.fdMade[ev.File]
	if hi-lo <= len(m) {
		for fd := lo; fd < hi; fd++ {
			if line, ok := m[fd]; ok && line < ev.Line {
				return true
			}
		}
		return false
	}
	for fd, line := range m { // fewer fds made than in the range
		if fd >= lo && fd < hi && line < ev.Line {
			return true
		}
	}
	return false
}

// created reports whether some call before ev returned fd.
func (pl *plan) created(ev *strace.Event, fd int) bool {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	pl.wait(func() bool { return pl.lineReached(ev.File) >= ev.Line })
	line, ok := pl.fdMade[ev.File][fd]
	return ok && line < ev.Line
}

const (
	cloneThread = 0x10000 // CLONE_THREAD
	cloneFiles  = 0x400   // CLONE_FILES
)

// startScan starts the read-ahead pass over the traces and returns its plan.
// Call stopScan when the replay ends.
func startScan(files []string, opts strace.Options) *plan {
	pl := &plan{parent: map[int]int{}, thread: map[int]bool{}, seen: map[int]bool{}, names: map[string]fdUse{}, untimedMakers: map[int]bool{}, sigchld: map[int]int{}, exitGroup: map[int]bool{}, fdMade: map[string]map[int]int{}, reached: map[string]*int{}, nfiles: len(files)}
	pl.cond.L = &pl.mu
	go pl.run(files, opts)
	return pl
}

// stopScan stops the pass and waits for it to end.
func (pl *plan) stopScan() {
	pl.stop.Store(true)
	pl.mu.Lock()
	for !pl.done {
		pl.cond.Wait()
	}
	pl.mu.Unlock()
}

// run is the pass. Errors are the replay's to report (it reads the same text):
// the pass just ends.
func (pl *plan) run(files []string, opts strace.Options) {
	defer func() {
		pl.mu.Lock()
		pl.done = true
		pl.cond.Broadcast()
		pl.mu.Unlock()
	}()
	chdired := map[int]bool{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return
		}
		p := strace.NewParser(f, name, opts)
		// The pass updates the file's line count for every event: through a
		// pointer, not a map assignment per line.
		reached := new(int)
		pl.mu.Lock()
		pl.reached[name] = reached
		pl.mu.Unlock()
		for n := 0; ; n++ {
			if pl.stop.Load() {
				f.Close()
				return
			}
			ev, err := p.Next()
			if err != nil {
				f.Close()
				if errors.Is(err, io.EOF) {
					break
				}
				return
			}
			pl.mu.Lock()
			pl.add(ev, name, len(files), chdired)
			*reached = ev.EndLine
			pl.events++
			if n%256 == 0 || ev.Name == "clone" || ev.Name == "clone3" || ev.Name == "fork" || ev.Name == "vfork" {
				pl.cond.Broadcast()
			}
			pl.mu.Unlock()
		}
	}
}

// add records what one event tells. Called with pl.mu held.
func (pl *plan) add(ev *strace.Event, name string, nfiles int, chdired map[int]bool) {
	pl.seen[ev.Pid] = true
	if ev.Kind == strace.KindSignal && ev.Name == "SIGCHLD" {
		if a := ev.Arg(0); a != nil {
			if f := a.Field("si_pid"); f != nil {
				if v, ok := f.Value(); ok && v > 0 && v < 1<<22 && int(v) != ev.Pid {
					if _, ok := pl.sigchld[int(v)]; !ok {
						pl.sigchld[int(v)] = ev.Pid
					}
				}
			}
		}
	}
	if ev.Kind != strace.KindSyscall {
		return
	}
	use, known := pl.names[ev.Name]
	if !known {
		use = fdUseOf(ev.Name)
		pl.names[ev.Name] = use
	}
	if use&makesFd != 0 && ev.RetKnown && ev.Ret >= 0 && ev.ErrnoName == "" {
		m := pl.fdMade[name]
		if m == nil {
			m = map[int]int{}
			pl.fdMade[name] = m
		}
		if _, ok := m[int(ev.Ret)]; ok {
			pl.fdReused = true
		} else if ev.Ret < 1<<20 {
			m[int(ev.Ret)] = ev.Line
		}
		if ev.EndLine != ev.Line && len(pl.flight) < maxFlight {
			pl.flight = append(pl.flight, flightSpan{file: name, pid: ev.Pid, start: ev.Line, end: ev.EndLine})
			// Another task's close that completed meanwhile may not yet have
			// freed its fd when this call took one: Linux could have returned a
			// higher fd than the replay's order (close first) gives.
			for k := range min(pl.nreleased, releaseWindow) {
				m := pl.released[k]
				if m.file == name && m.pid != ev.Pid && m.line > ev.Line && m.line < ev.EndLine && len(pl.flight) < maxFlight {
					pl.flight = append(pl.flight, flightSpan{file: name, pid: m.pid, start: m.line, end: m.line + 1})
				}
			}
		}
		if nfiles > 1 && (ev.TimeKind == strace.TimeOfDay || ev.TimeKind == strace.TimeEpoch) && len(pl.flight) < maxFlight {
			pl.flight = append(pl.flight, flightSpan{file: name, pid: ev.Pid, time: ev.Time})
		}
		if nfiles > 1 && ev.TimeKind == strace.TimeNone {
			pl.untimedMakers[ev.Pid] = true
		}
	}
	if ev.Name == "close" && ev.EndLine != ev.Line && ev.ErrnoName == "" && len(pl.closing) < maxFlight {
		if fd, ok := ev.Int(0); ok {
			pl.closing = append(pl.closing, closeSpan{file: name, pid: ev.Pid, fd: int(fd), start: ev.Line, end: ev.EndLine})
		}
	}
	if use&releasesFd != 0 && ev.ErrnoName == "" {
		pl.released[pl.nreleased%releaseWindow] = releaseMark{file: name, pid: ev.Pid, line: ev.EndLine}
		pl.nreleased++
	}
	switch ev.Name {
	case "exit_group":
		pl.exitGroup[ev.Pid] = true
	case "clone", "clone3", "fork", "vfork":
		if ev.RetKnown && ev.Ret > 0 && ev.ErrnoName == "" {
			child := int(ev.Ret)
			pl.parent[child] = ev.Pid
			pl.thread[child] = cloneFlags(ev)&cloneThread != 0
		}
	case "chdir", "fchdir":
		chdired[ev.Pid] = true
	case "io_getevents", "io_pgetevents":
		pl.addAioEvents(ev)
	}
	if pl.cwd == "" && !chdired[ev.Pid] {
		pl.cwd = cwdHint(ev)
	}
}

// cloneFlags returns the flags of a clone/clone3 call (0 for fork/vfork). Flag
// names the parser cannot value still count when they are CLONE_THREAD or
// CLONE_FILES.
func cloneFlags(ev *strace.Event) int64 {
	var n *strace.Node
	switch ev.Name {
	case "clone":
		for i := 0; i < ev.NArgs(); i++ {
			if a := ev.Arg(i); string(a.Key) == "flags" {
				n = a
			}
		}
	case "clone3":
		a := ev.Arg(0)
		if a != nil && a.Kind == strace.NodeInOut && len(a.Kids) > 0 {
			a = &a.Kids[0]
		}
		if a != nil {
			n = a.Field("flags")
		}
	}
	if n == nil {
		return 0
	}
	if v, ok := n.Value(); ok {
		return v
	}
	var flags int64
	for _, name := range n.Names(nil) {
		switch string(name) {
		case "CLONE_THREAD":
			flags |= cloneThread
		case "CLONE_FILES":
			flags |= cloneFiles
		}
	}
	return flags
}

// cwdHint returns the working directory an event reveals: a -yy AT_FDCWD</path>
// decoration, or a successful getcwd's result. It parses arguments only of events
// that can show one.
func cwdHint(ev *strace.Event) string {
	if ev.Name != "getcwd" && (bytes.IndexByte(ev.RawArgs, '<') < 0 || // both marks hold a '<': a quick test first
		!bytes.Contains(ev.RawArgs, []byte("AT_FDCWD<")) && !bytes.Contains(ev.RawArgs, []byte("AT_FDCWD */<"))) {
		return ""
	}
	if ev.Name == "getcwd" && ev.RetKnown && ev.Ret > 0 {
		if b, trunc, ok := ev.Str(0); ok && !trunc {
			return string(b)
		}
	}
	for i := 0; i < ev.NArgs(); i++ {
		n := ev.Arg(i)
		if n.Kind == strace.NodeFd && n.Int == atFdcwd && len(n.Text) > 0 {
			return string(n.Text)
		}
	}
	return ""
}

const atFdcwd = -100

// isExternalDecoration reports whether a -y decoration names something that is not
// a file of the file system (a socket, a pipe, an anonymous inode).
func isExternalDecoration(p string) bool {
	return strings.HasPrefix(p, "socket:") || strings.HasPrefix(p, "pipe:") ||
		strings.HasPrefix(p, "anon_inode:") || strings.Contains(p, ":[") || !strings.HasPrefix(p, "/")
}

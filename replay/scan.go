package replay

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"

	"iosim/strace"
)

// plan is what a first pass over the trace learns that the replay needs before it
// reaches the line that says it: with -f, a child's first lines come before the
// `<... clone resumed> = PID` that names it, so the process tree is read ahead.
// Its size grows with the number of tasks, not with the trace's length.
type plan struct {
	parent map[int]int  // child tid → the tid that created it
	thread map[int]bool // child created with CLONE_THREAD (shares the fd table)
	first  []int        // pids in order of first appearance
	cwd    string       // the initial working directory, when the trace shows it

	// fdMade maps, per file, an fd number to the first line where a call
	// returned it; fds used but never made are inherited.
	fdMade map[string]map[int]int
	// flight lists the fd-creating calls that were interrupted by another
	// task's line (<unfinished ...>); at most maxFlight are kept.
	flight []flightSpan
}

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

// makesFd says whether a call returns a new fd.
func makesFd(name string) bool {
	switch name {
	case "open", "openat", "creat", "dup", "dup2", "dup3", "fcntl", "socket", "accept", "accept4",
		"eventfd2", "eventfd", "epoll_create1", "epoll_create", "memfd_create", "timerfd_create",
		"signalfd4", "inotify_init1", "pidfd_open":
		return true
	}
	return false
}

// inFlight reports whether another task had an fd-creating call in flight while
// ev ran.
func (pl *plan) inFlight(ev *strace.Event) bool {
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

// created reports whether some call before ev returned fd.
func (pl *plan) created(ev *strace.Event, fd int) bool {
	line, ok := pl.fdMade[ev.File][fd]
	return ok && line < ev.Line
}

const (
	cloneThread = 0x10000 // CLONE_THREAD
	cloneFiles  = 0x400   // CLONE_FILES
)

// scan reads the traces once and returns their plan.
func scan(files []string, opts strace.Options) (*plan, error) {
	pl := &plan{parent: map[int]int{}, thread: map[int]bool{}, fdMade: map[string]map[int]int{}}
	seen := map[int]bool{}
	chdired := map[int]bool{}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		p := strace.NewParser(f, name, opts)
		for {
			ev, err := p.Next()
			if err != nil {
				f.Close()
				if errors.Is(err, io.EOF) {
					break
				}
				return nil, err
			}
			if !seen[ev.Pid] {
				seen[ev.Pid] = true
				pl.first = append(pl.first, ev.Pid)
			}
			if ev.Kind != strace.KindSyscall {
				continue
			}
			if makesFd(ev.Name) && ev.RetKnown && ev.Ret >= 0 && ev.ErrnoName == "" {
				m := pl.fdMade[name]
				if m == nil {
					m = map[int]int{}
					pl.fdMade[name] = m
				}
				if _, ok := m[int(ev.Ret)]; !ok && ev.Ret < 1<<20 {
					m[int(ev.Ret)] = ev.Line
				}
				if ev.EndLine != ev.Line && len(pl.flight) < maxFlight {
					pl.flight = append(pl.flight, flightSpan{file: name, pid: ev.Pid, start: ev.Line, end: ev.EndLine})
				}
				if len(files) > 1 && (ev.TimeKind == strace.TimeOfDay || ev.TimeKind == strace.TimeEpoch) && len(pl.flight) < maxFlight {
					pl.flight = append(pl.flight, flightSpan{file: name, pid: ev.Pid, time: ev.Time})
				}
			}
			switch ev.Name {
			case "clone", "clone3", "fork", "vfork":
				if ev.RetKnown && ev.Ret > 0 && ev.ErrnoName == "" {
					child := int(ev.Ret)
					pl.parent[child] = ev.Pid
					pl.thread[child] = cloneFlags(ev)&cloneThread != 0
				}
			case "chdir", "fchdir":
				chdired[ev.Pid] = true
			}
			if pl.cwd == "" && !chdired[ev.Pid] {
				pl.cwd = cwdHint(ev)
			}
		}
	}
	return pl, nil
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
	if ev.Name != "getcwd" && !bytes.Contains(ev.RawArgs, []byte("AT_FDCWD<")) && !bytes.Contains(ev.RawArgs, []byte("AT_FDCWD */<")) {
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

var _ = syscall.EBADF

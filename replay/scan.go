package replay

import (
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
}

const (
	cloneThread = 0x10000 // CLONE_THREAD
	cloneFiles  = 0x400   // CLONE_FILES
)

// scan reads the traces once and returns their plan.
func scan(files []string, opts strace.Options) (*plan, error) {
	pl := &plan{parent: map[int]int{}, thread: map[int]bool{}}
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

// cloneFlags returns the flags of a clone/clone3 call (0 for fork/vfork).
func cloneFlags(ev *strace.Event) int64 {
	switch ev.Name {
	case "clone":
		for i := 0; i < ev.NArgs(); i++ {
			if n := ev.Arg(i); string(n.Key) == "flags" {
				v, _ := n.Value()
				return v
			}
		}
	case "clone3":
		if n := ev.Field(0, "flags"); n != nil {
			v, _ := n.Value()
			return v
		}
	}
	return 0
}

// cwdHint returns the working directory an event reveals: a -yy AT_FDCWD</path>
// decoration, or a successful getcwd's result.
func cwdHint(ev *strace.Event) string {
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

package strace

import (
	"bytes"
	"slices"
	"strconv"
)

// What untimed -ff streams say of their order, beyond waits and clones
// (Merger.nextCausal):
//
//   - A read of a pipe that returns n bytes comes after writes to that pipe
//     that wrote them: before a stream's read of a pipe returns more than
//     the pipe's writes so far gave it, a stream that holds the pipe's
//     other end runs, until the pipe holds enough.
//   - A SIGCHLD that reports a child's end (si_code CLD_EXITED, CLD_KILLED,
//     CLD_DUMPED, with si_pid) comes after all of the child's events.
//
// A pipe is named by the inode of its `-y` decoration (`pipe:[12345]`) or,
// without one, by the pipe/pipe2 call that made it, followed through each
// stream's fd table: pipe2, dup/dup2/dup3/F_DUPFD, close, fork (a copy) and
// clone with CLONE_FILES (shared), execve (which closes the O_CLOEXEC fds).

// causalFd is an fd of a stream's table.
type causalFd struct {
	pipe    int64 // the pipe it is an end of, 0 for anything else
	cloexec bool
}

// causalTable is an fd table, shared by the streams of threads.
type causalTable map[int]causalFd

// pipeBytes counts what the returned events wrote to and read from a pipe.
type pipeBytes struct{ written, read int64 }

// causal is the Merger's state for these rules.
type causal struct {
	m        *Merger
	tables   []causalTable // by stream
	pipes    map[int64]*pipeBytes
	nextPipe int64
	waiting  []int64 // by stream: the bytes a pipe must have had written for its head read, or 0
	waitPipe []int64 // by stream: that pipe
}

func (c *causal) init(m *Merger, n int) {
	c.m = m
	c.tables = make([]causalTable, n)
	for k := range c.tables {
		c.tables[k] = causalTable{}
	}
	c.pipes = map[int64]*pipeBytes{}
	c.waiting = make([]int64, n)
	c.waitPipe = make([]int64, n)
}

// pipeOf returns the pipe that fd argument i of ev (of stream k) is an end
// of, or 0.
func (c *causal) pipeOf(k int, ev *Event, i int) int64 {
	fd, path, ok := ev.Fd(i)
	if !ok {
		return 0
	}
	if ino, ok := bytes.CutPrefix(path, []byte("pipe:[")); ok {
		if v, err := strconv.ParseInt(string(bytes.TrimSuffix(ino, []byte("]"))), 10, 64); err == nil {
			return 1<<40 + v
		}
	}
	return c.tables[k][fd].pipe
}

// pipe returns the byte counts of pipe p.
func (c *causal) pipe(p int64) *pipeBytes {
	pb := c.pipes[p]
	if pb == nil {
		pb = &pipeBytes{}
		c.pipes[p] = pb
	}
	return pb
}

// pipeRead returns the pipe and byte count of a read-like call of a
// pipe that returned data.
func (c *causal) pipeRead(k int, ev *Event) (int64, int64) {
	if ev.Kind != KindSyscall || !ev.RetKnown || ev.Ret <= 0 || ev.ErrnoName != "" {
		return 0, 0
	}
	switch ev.Name {
	case "read", "readv":
		if p := c.pipeOf(k, ev, 0); p != 0 {
			return p, ev.Ret
		}
	}
	return 0, 0
}

// blocked reports, for stream k's head event, a stream that must run before
// it (a writer of the pipe its read reads, not yet running), or -1.
func (c *causal) blocked(k int, ev *Event) int {
	m := c.m
	p, n := c.pipeRead(k, ev)
	if p == 0 {
		c.waiting[k] = 0
		return -1
	}
	pb := c.pipe(p)
	if pb.written >= pb.read+n {
		c.waiting[k] = 0
		return -1
	}
	for j := range m.ps {
		if j == k || m.heads[j] == nil || slices.Contains(m.stack, j) {
			continue
		}
		if c.holds(j, p) {
			c.waiting[k], c.waitPipe[k] = pb.read+n, p
			return j
		}
	}
	c.waiting[k] = 0
	return -1
}

// ready reports whether stream k's head event ev need wait for no other
// stream: it is no read of a pipe, or the pipe holds what it reads, or no
// stream with events left holds the pipe's other end.
func (c *causal) ready(k int, ev *Event) bool {
	p, n := c.pipeRead(k, ev)
	if p == 0 {
		return true
	}
	if pb := c.pipe(p); pb.written >= pb.read+n {
		return true
	}
	for j := range c.m.ps {
		if j != k && c.m.heads[j] != nil && c.holds(j, p) {
			return false
		}
	}
	return true
}

// holds reports whether stream j holds an end of pipe p: an fd of its
// table, or the -y decoration of its next event's fd.
func (c *causal) holds(j int, p int64) bool {
	for _, f := range c.tables[j] {
		if f.pipe == p {
			return true
		}
	}
	return p > 1<<40 && c.pipeOf(j, c.m.heads[j], 0) == p
}

// satisfied returns the innermost stream of the stack below its top whose
// head read waited for a pipe that now holds enough, or -1.
func (c *causal) satisfied() int {
	m := c.m
	for i := len(m.stack) - 2; i >= 0; i-- {
		k := m.stack[i]
		if w := c.waiting[k]; w > 0 && c.pipe(c.waitPipe[k]).written >= w {
			c.waiting[k] = 0
			return i
		}
	}
	return -1
}

// returned applies event ev of stream k, about to be returned, to the fd
// tables and pipe counts.
func (c *causal) returned(k int, ev *Event) {
	m := c.m
	if ev.Kind != KindSyscall || !ev.RetKnown || ev.ErrnoName != "" {
		return
	}
	t := c.tables[k]
	switch ev.Name {
	case "pipe", "pipe2":
		a := ev.Arg(0)
		if a == nil || a.Kind != NodeArray || len(a.Kids) != 2 {
			return
		}
		flags, _ := ev.Int(1)
		c.nextPipe++
		for _, kid := range a.Kids {
			if fd, ok := kid.Value(); ok {
				t[int(fd)] = causalFd{pipe: c.nextPipe, cloexec: flags&0o2000000 != 0}
			}
		}
	case "write", "writev":
		if p := c.pipeOf(k, ev, 0); p != 0 && ev.Ret > 0 {
			c.pipe(p).written += ev.Ret
		}
	case "read", "readv":
		if p := c.pipeOf(k, ev, 0); p != 0 && ev.Ret > 0 {
			c.pipe(p).read += ev.Ret
		}
	case "close":
		if fd, ok := ev.Int(0); ok {
			delete(t, int(fd))
		}
	case "dup", "dup2", "dup3", "fcntl":
		old, ok := ev.Int(0)
		if !ok || ev.Ret < 0 || ev.Ret == old {
			return
		}
		cloexec := false
		switch ev.Name {
		case "fcntl":
			cmd := ev.Arg(1)
			if cmd == nil || string(cmd.Raw) != "F_DUPFD" && string(cmd.Raw) != "F_DUPFD_CLOEXEC" {
				return
			}
			cloexec = string(cmd.Raw) == "F_DUPFD_CLOEXEC"
		case "dup3":
			flags, _ := ev.Int(2)
			cloexec = flags&0o2000000 != 0
		}
		f, ok := t[int(old)]
		if !ok {
			delete(t, int(ev.Ret))
			return
		}
		f.cloexec = cloexec
		t[int(ev.Ret)] = f
	case "execve", "execveat":
		for fd, f := range t {
			if f.cloexec {
				delete(t, fd)
			}
		}
	case "clone", "clone3", "fork", "vfork":
		j, ok := m.stream[int(ev.Ret)]
		if !ok || ev.Ret <= 0 {
			return
		}
		if (ev.Name == "clone" || ev.Name == "clone3") && bytes.Contains(ev.RawArgs, []byte("CLONE_FILES")) {
			c.tables[j] = t
			return
		}
		c.tables[j] = make(causalTable, len(t))
		for fd, f := range t {
			c.tables[j][fd] = f
		}
	}
}

// childEnd returns the pid a SIGCHLD reports the end of, or 0.
func childEnd(ev *Event) int {
	if ev.Kind != KindSignal || ev.Name != "SIGCHLD" {
		return 0
	}
	if !bytes.Contains(ev.RawArgs, []byte("si_code=CLD_EXITED")) && !bytes.Contains(ev.RawArgs, []byte("si_code=CLD_KILLED")) &&
		!bytes.Contains(ev.RawArgs, []byte("si_code=CLD_DUMPED")) {
		return 0
	}
	if f := ev.Field(0, "si_pid"); f != nil {
		if v, ok := f.Value(); ok && v > 0 && v < 1<<31 {
			return int(v)
		}
	}
	return 0
}

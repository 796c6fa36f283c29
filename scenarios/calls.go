package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/datadriven"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

// callsWork is a workload written inline as strace lines. Each line is one
// call with its result as strace prints it; a line may start with a PID (as
// strace -f prints): each PID is a thread of one process, sharing its fd
// table (the first PID, or the lines without one, are its main thread).
// Two lines that are not calls shape the program: `cpu(DURATION)` is
// user-level work of that much virtual time (a thread's, with a PID), and
// `repeat N` ... `end` runs the lines between them N times (each thread its
// own lines). A write's buffer may be cut as strace cuts it ("ab"...): the
// bytes shown, repeated to the count.
type callsWork struct {
	prog  []*node // in written order
	pids  []int   // the threads, in order of first appearance
	calls int64   // calls the program makes, repeats expanded
}

// node is one line of the program, or a repeat block.
type node struct {
	ev   *strace.Event // a call
	cpu  int64         // or user work, in ns
	pid  int
	rep  int64 // or a block repeated rep times
	body []*node
	buf  []byte // a read's buffer, or a cut write's bytes, made once
}

// maxCalls bounds the calls of one arm, repeats expanded.
const maxCalls = 1e9

// maxObserved bounds the calls whose strace lines an arm keeps for equiv and
// run show=calls (a longer program is timed and verified, not listed).
const maxObserved = 20_000

// inlineCalls are the calls an inline workload may make: the file calls
// whose arguments are numbers, names, flags and strings.
var inlineCalls = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`open openat creat close read write pread64 pwrite64 lseek
		fsync fdatasync sync syncfs sync_file_range ftruncate truncate fallocate fadvise64
		fstat stat lstat newfstatat unlink unlinkat rename renameat renameat2 mkdir mkdirat rmdir
		link linkat symlink symlinkat dup dup2 dup3 fcntl flock chdir access faccessat
		umask chmod fchmod getpid gettid exit_group`) {
		inlineCalls[n] = true
	}
}

func (c *callsWork) describe() string {
	return fmt.Sprintf("%d calls in %d thread(s)", c.calls, len(c.pids))
}

func (s *Scenario) cmdCalls(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1)
	if err != nil {
		return "", err
	}
	if td.Input == "" {
		return "", malformed(td, "missing input: the calls, one per line in strace syntax, e.g. open(\"/f\", O_RDONLY) = 3")
	}
	w, err := parseCalls(s.file, lineOf(td), td.Input)
	if err != nil {
		return "", err
	}
	ar := &arm{name: a.words[0], work: w}
	if err := s.addArm(td, ar); err != nil {
		return "", err
	}
	return ar.describe(), nil
}

var (
	cpuRE    = regexp.MustCompile(`^(?:(\d+)\s+)?cpu\(\s*([^()]*?)\s*\)$`)
	repeatRE = regexp.MustCompile(`^repeat\s+(\S+)$`)
)

// parseCalls reads inline calls; errors name the scenario file and the line
// (line0 is the directive's: input line i is line0+i).
func parseCalls(file string, line0 int, input string) (*callsWork, error) {
	w := &callsWork{}
	lines := strings.Split(input, "\n")
	// The lines that are not strace's (cpu, repeat, end) are read here and
	// blanked for the parser, which keeps the line numbers.
	type block struct {
		n    *node
		line int
	}
	top := &node{rep: 1}
	stack := []block{{top, 0}}
	extra := map[int]*node{} // line -> cpu node
	opens := map[int]*node{} // line -> repeat node opened there
	closes := map[int]bool{} // line -> end
	for i, l := range lines {
		t := strings.TrimSpace(l)
		at := pos(file, line0+1+i)
		switch m := cpuRE.FindStringSubmatch(t); {
		case m != nil:
			d, err := parseDuration(m[2])
			if err != nil {
				return nil, &MalformedError{Pos: at, Msg: "calls: cpu(" + m[2] + "): " + err.Error()}
			}
			n := &node{cpu: d}
			if m[1] != "" {
				n.pid, _ = strconv.Atoi(m[1])
			}
			extra[i+1] = n
		case repeatRE.MatchString(t):
			v := repeatRE.FindStringSubmatch(t)[1]
			k, err := strconv.ParseInt(v, 10, 64)
			if err != nil || k < 1 || k > 1e9 {
				return nil, &MalformedError{Pos: at, Msg: fmt.Sprintf("calls: repeat %s: want a count from 1 to 1e9", v)}
			}
			opens[i+1] = &node{rep: k}
		case t == "end":
			closes[i+1] = true
		default:
			continue
		}
		lines[i] = ""
	}
	p := strace.NewParser(strings.NewReader(strings.Join(lines, "\n")+"\n"), file, strace.Options{})
	var evs []*strace.Event
	for {
		ev, err := p.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var se *strace.SyntaxError
			if errors.As(err, &se) {
				return nil, &MalformedError{Pos: pos(file, line0+se.Line), Msg: "calls: " + se.Msg}
			}
			return nil, &MalformedError{Pos: pos(file, line0), Msg: "calls: " + err.Error()}
		}
		evs = append(evs, ev.Clone())
	}
	// Walk the lines in order, building the tree.
	ei := 0
	seen := map[int]bool{}
	firstPid := -1
	for ln := 1; ln <= len(lines); ln++ {
		cur := stack[len(stack)-1].n
		at := pos(file, line0+ln)
		switch {
		case extra[ln] != nil:
			cur.body = append(cur.body, extra[ln])
			continue
		case opens[ln] != nil:
			cur.body = append(cur.body, opens[ln])
			stack = append(stack, block{opens[ln], ln})
			continue
		case closes[ln]:
			if len(stack) == 1 {
				return nil, &MalformedError{Pos: at, Msg: "calls: end without repeat"}
			}
			if len(stack[len(stack)-1].n.body) == 0 {
				return nil, &MalformedError{Pos: at, Msg: "calls: an empty repeat block"}
			}
			stack = stack[:len(stack)-1]
			continue
		}
		for ei < len(evs) && evs[ei].Line == ln {
			ev := evs[ei]
			ei++
			if ev.Kind != strace.KindSyscall {
				return nil, &MalformedError{Pos: at, Msg: fmt.Sprintf("calls: want a call, got a %s line", ev.Kind)}
			}
			if !inlineCalls[ev.Name] {
				return nil, &MalformedError{Pos: at, Msg: fmt.Sprintf("calls: %s is not one of the calls an inline workload makes (%s, and cpu(DURATION)); replay a recorded trace for the others", ev.Name, strings.Join(sortedKeys(inlineCalls), " "))}
			}
			n := &node{ev: ev, pid: ev.Pid}
			if _, err := buildCall(ev, nil, &n.buf); err != nil {
				return nil, &MalformedError{Pos: at, Msg: "calls: " + err.Error()}
			}
			cur.body = append(cur.body, n)
		}
	}
	if len(stack) > 1 {
		return nil, &MalformedError{Pos: pos(file, line0+stack[len(stack)-1].line), Msg: "calls: repeat without end"}
	}
	w.prog = top.body
	// Threads in order of first appearance; a cpu line without a PID is the
	// main thread's (the first PID's).
	var walk func([]*node, int64)
	walk = func(ns []*node, times int64) {
		for _, n := range ns {
			switch {
			case n.body != nil:
				walk(n.body, min(times*n.rep, maxCalls+1)) // both at most 1e9: no overflow
				continue
			case n.ev != nil:
				w.calls = min(w.calls+times, maxCalls+1)
			}
			if n.ev != nil || n.pid != 0 {
				if firstPid < 0 {
					firstPid = n.pid
				}
				if !seen[n.pid] {
					seen[n.pid] = true
					w.pids = append(w.pids, n.pid)
				}
			}
		}
	}
	walk(w.prog, 1)
	switch {
	case w.calls == 0:
		return nil, &MalformedError{Pos: pos(file, line0), Msg: "calls: no call in the input"}
	case w.calls > maxCalls:
		return nil, &MalformedError{Pos: pos(file, line0), Msg: fmt.Sprintf("calls: the repeats make more than %d calls", int64(maxCalls))}
	}
	var fix func([]*node)
	fix = func(ns []*node) {
		for _, n := range ns {
			if n.ev == nil && n.body == nil && n.pid == 0 {
				n.pid = firstPid
			}
			fix(n.body)
		}
	}
	fix(w.prog)
	return w, nil
}

// parseDuration reads a Go duration (20us, 1.5ms) or a count of ns.
func parseDuration(s string) (int64, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil && n >= 0 {
		return n, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("want a duration such as 20us or 1.5ms, or ns")
	}
	return int64(d), nil
}

// buildCall turns an event into a Call following sim's conventions (see
// sim.Call): integer arguments in Args by position, strings in Path/Path2,
// buffers in Buf, stat structs in Obj. With t nil it only checks the line
// (no read buffer is allocated).
//
// A write's buffer cut as strace cuts it ("ab"...) is the bytes shown
// repeated to the count (zeros when none are shown), built once into *buf;
// a read's buffer is *buf too. Both are made at the first call (t not nil).
func buildCall(ev *strace.Event, t *sim.Task, buf *[]byte) (sim.Call, error) {
	nr, _ := sim.SysnoByName(ev.Name)
	c := sim.Call{Nr: nr, Task: t}
	var strs [][]byte
	cut := false
	for i := 0; i < ev.NArgs() && i < 6; i++ {
		n := ev.Arg(i)
		switch n.Kind {
		case strace.NodeStr:
			if n.Truncated {
				if i != 1 || (nr != sim.SYS_WRITE && nr != sim.SYS_PWRITE64) {
					return c, fmt.Errorf("argument %d is cut (\"...\"...): write it whole (only a write's buffer may be cut)", i+1)
				}
				cut = true
			}
			strs = append(strs, n.Text)
		case strace.NodeStruct, strace.NodeArray:
			if !isStat(nr) {
				return c, fmt.Errorf("argument %d: structs and arrays are not read in inline calls", i+1)
			}
		default:
			v, ok := n.Value()
			if !ok {
				return c, fmt.Errorf("argument %d (%s): not a number or a known constant", i+1, n.Raw)
			}
			c.Args[i] = v
		}
	}
	switch nr {
	case sim.SYS_READ, sim.SYS_PREAD64:
		if c.Args[2] < 0 || c.Args[2] > 1<<30 {
			return c, fmt.Errorf("count %d: want 0 to 1 GiB", c.Args[2])
		}
		if t != nil { // nil: only checking the line
			if *buf == nil {
				*buf = make([]byte, c.Args[2])
			}
			c.Buf = *buf
		}
	case sim.SYS_WRITE, sim.SYS_PWRITE64:
		if len(strs) != 1 {
			return c, fmt.Errorf("want the written bytes as a string")
		}
		switch {
		case cut && (c.Args[2] < int64(len(strs[0])) || c.Args[2] > 1<<30):
			return c, fmt.Errorf("count %d: want from the %d bytes shown to 1 GiB", c.Args[2], len(strs[0]))
		case cut && t == nil: // only checking the line: no buffer yet
		case cut:
			if *buf == nil {
				*buf = make([]byte, c.Args[2])
				if len(strs[0]) > 0 {
					for i := range *buf {
						(*buf)[i] = strs[0][i%len(strs[0])]
					}
				}
			}
			c.Buf = *buf
		case int64(len(strs[0])) != c.Args[2]:
			return c, fmt.Errorf("the string holds %d bytes, the count says %d", len(strs[0]), c.Args[2])
		default:
			c.Buf = strs[0]
		}
	case sim.SYS_SYMLINK, sim.SYS_SYMLINKAT:
		// strace prints symlink(target, linkpath): Path is the link.
		if len(strs) == 2 {
			c.Path, c.Path2 = string(strs[1]), string(strs[0])
		}
	default:
		if len(strs) > 0 {
			c.Path = string(strs[0])
		}
		if len(strs) > 1 {
			c.Path2 = string(strs[1])
		}
	}
	switch nr {
	case sim.SYS_FSTAT, sim.SYS_STAT, sim.SYS_LSTAT, sim.SYS_NEWFSTATAT:
		c.Obj = new(unix.Stat_t)
	}
	return c, nil
}

func isStat(nr sim.Sysno) bool {
	switch nr {
	case sim.SYS_FSTAT, sim.SYS_STAT, sim.SYS_LSTAT, sim.SYS_NEWFSTATAT:
		return true
	}
	return false
}

// observation is what the program saw of one call: its strace line as the
// model answered it (result, errno, the bytes read, the stat size), and the
// whole buffer a read returned.
type observation struct {
	at   string // "call N", N counting from 1 in the arm
	line string
	data []byte
}

func (c *callsWork) run(st setup, withStack bool) (*Result, error) {
	w, err := st.build(withStack)
	if err != nil {
		return nil, err
	}
	r := &Result{Lat: newLat()}
	main, err := w.process(w.top)
	if err != nil {
		return nil, err
	}
	// One thread per PID, made before the workload starts (a thread's
	// creation is the launcher's, not a call of the workload).
	procs := make([]*sim.Process, len(c.pids))
	index := map[int]int{}
	for i, pid := range c.pids {
		index[pid] = i
		if i == 0 {
			procs[i] = main
		} else {
			// made outside the stack and the counts, uncharged: every
			// thread starts at the workload's start
			t, err := main.Task().Clone(0)
			if err != nil {
				return nil, err
			}
			procs[i] = sim.NewProcess(w.top, t)
		}
	}
	w.start(procs...)
	keep := c.calls <= maxObserved
	ncall := 0
	exec := func(n *node) error {
		p := procs[index[n.pid]]
		if n.ev == nil {
			p.Task().Spend(n.cpu)
			return nil
		}
		ncall++
		call, err := buildCall(n.ev, p.Task(), &n.buf)
		if err != nil {
			return err
		}
		t0 := p.Task().Now()
		w.at(n.ev.Line)
		res := p.Syscall(call)
		_ = r.Lat.RecordValue(p.Task().Now() - t0)
		d := verify(n.ev, call, res)
		if d != "" {
			r.NDiverged++
		}
		if !keep && (d == "" || len(r.Divergences) > maxListed) {
			return nil
		}
		at := fmt.Sprintf("call %d", ncall)
		line := interposer.FormatCall(call, res)
		if d != "" && len(r.Divergences) <= maxListed {
			r.Divergences = append(r.Divergences, fmt.Sprintf("%s: %s: %s", at, strings.TrimSpace(string(n.ev.Text)), d))
		}
		if keep {
			o := observation{at: at, line: line}
			r.log = append(r.log, o.line)
			if res.Errno == 0 && (call.Nr == sim.SYS_READ || call.Nr == sim.SYS_PREAD64) && res.Ret >= 0 {
				o.data = bytes.Clone(call.Buf[:res.Ret])
			}
			r.obs = append(r.obs, o)
		}
		return nil
	}
	if st.device == "default" || len(procs) == 1 {
		// Without a time model there is no earlier or later but the
		// written order.
		cur := newCursor(c.prog, -1)
		for n := cur.next(); n != nil; n = cur.next() {
			if err := exec(n); err != nil {
				return nil, err
			}
		}
	} else {
		// With a device, in virtual-time order: the thread whose clock is
		// earliest makes its next step.
		curs := make([]*cursor, len(procs))
		for i, pid := range c.pids {
			curs[i] = newCursor(c.prog, pid)
		}
		var ferr error
		sim.RunByClock(procs, func(i int) bool {
			n := curs[i].next()
			if n == nil || ferr != nil {
				return false
			}
			ferr = exec(n)
			return ferr == nil
		})
		if ferr != nil {
			return nil, ferr
		}
	}
	if !keep {
		r.log, r.obs = nil, nil
	}
	w.finish(r)
	return r, nil
}

// cursor walks a program's steps in order, repeats expanded: all of them
// (pid < 0) or one thread's.
type cursor struct {
	pid    int
	frames []frame
}

type frame struct {
	body []*node
	i    int
	left int64 // passes left after this one
}

func newCursor(prog []*node, pid int) *cursor {
	return &cursor{pid: pid, frames: []frame{{body: prog}}}
}

// next returns the next call or cpu step, nil at the end.
func (c *cursor) next() *node {
	for len(c.frames) > 0 {
		f := &c.frames[len(c.frames)-1]
		if f.i == len(f.body) {
			if f.left > 0 {
				f.left--
				f.i = 0
				continue
			}
			c.frames = c.frames[:len(c.frames)-1]
			continue
		}
		n := f.body[f.i]
		f.i++
		switch {
		case n.body != nil:
			c.frames = append(c.frames, frame{body: n.body, left: n.rep - 1})
		case c.pid < 0 || n.pid == c.pid:
			return n
		}
	}
	return nil
}

// verify compares a result with the one written after `=` ("" when they
// agree, or when the line says `= ?`). A read's bytes are compared with the
// string written in its buffer argument, when there is one.
func verify(ev *strace.Event, c sim.Call, r sim.Result) string {
	if !ev.RetKnown {
		return ""
	}
	switch {
	case ev.ErrnoName != "" || r.Errno != 0:
		if ev.Errno != r.Errno {
			return fmt.Sprintf("written %s, model %s", resultString(ev.Ret, ev.Errno), resultString(r.Ret, r.Errno))
		}
		return ""
	case ev.Ret != r.Ret:
		return fmt.Sprintf("written %s, model %s", resultString(ev.Ret, ev.Errno), resultString(r.Ret, r.Errno))
	}
	if c.Nr == sim.SYS_READ || c.Nr == sim.SYS_PREAD64 {
		// A buffer written "" leaves the bytes unsaid.
		if want, cut, ok := ev.Str(1); ok && len(want) > 0 {
			got := c.Buf[:r.Ret]
			if cut && len(got) > len(want) {
				got = got[:len(want)]
			}
			if !bytes.Equal(want, got) {
				return fmt.Sprintf("written bytes %q, model read %q", want, got)
			}
		}
	}
	return ""
}

func resultString(ret int64, e unix.Errno) string {
	if e != 0 {
		return "-1 " + strace.ErrnoName(e)
	}
	return fmt.Sprint(ret)
}

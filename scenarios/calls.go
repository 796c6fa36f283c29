package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cockroachdb/datadriven"
	"golang.org/x/sys/unix"

	"iosim/fio"
	"iosim/interposer"
	"iosim/sim"
	"iosim/strace"
)

// callsWork is a workload written inline as strace lines. Each line is one
// call with its result as strace prints it; a line may start with a PID (as
// strace -f prints): each PID is a thread of one process, sharing its fd
// table (the first PID, or the lines without one, are its main thread).
type callsWork struct {
	evs  []*strace.Event
	pids int
}

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
	return fmt.Sprintf("%d calls in %d thread(s)", len(c.evs), c.pids)
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

// parseCalls reads inline calls; errors name the scenario file and the line
// (line0 is the directive's: input line i is line0+i).
func parseCalls(file string, line0 int, input string) (*callsWork, error) {
	w := &callsWork{}
	p := strace.NewParser(strings.NewReader(input+"\n"), file, strace.Options{})
	pids := map[int]bool{}
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
		at := pos(file, line0+ev.Line)
		if ev.Kind != strace.KindSyscall {
			return nil, &MalformedError{Pos: at, Msg: fmt.Sprintf("calls: want a call, got a %s line", ev.Kind)}
		}
		if !inlineCalls[ev.Name] {
			return nil, &MalformedError{Pos: at, Msg: fmt.Sprintf("calls: %s is not one of the calls an inline workload makes (%s); replay a recorded trace for the others", ev.Name, strings.Join(sortedKeys(inlineCalls), " "))}
		}
		ev = ev.Clone()
		if _, err := buildCall(ev, nil); err != nil {
			return nil, &MalformedError{Pos: at, Msg: "calls: " + err.Error()}
		}
		pids[ev.Pid] = true
		w.evs = append(w.evs, ev)
	}
	w.pids = len(pids)
	return w, nil
}

// buildCall turns an event into a Call following sim's conventions (see
// sim.Call): integer arguments in Args by position, strings in Path/Path2,
// buffers in Buf, stat structs in Obj. With t nil it only checks the line
// (no read buffer is allocated).
func buildCall(ev *strace.Event, t *sim.Task) (sim.Call, error) {
	nr, _ := sim.SysnoByName(ev.Name)
	c := sim.Call{Nr: nr, Task: t}
	var strs [][]byte
	for i := 0; i < ev.NArgs() && i < 6; i++ {
		n := ev.Arg(i)
		switch n.Kind {
		case strace.NodeStr:
			if n.Truncated {
				return c, fmt.Errorf("argument %d is cut (\"...\"...): write it whole", i+1)
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
			c.Buf = make([]byte, c.Args[2])
		}
	case sim.SYS_WRITE, sim.SYS_PWRITE64:
		if len(strs) != 1 {
			return c, fmt.Errorf("want the written bytes as a string")
		}
		if int64(len(strs[0])) != c.Args[2] {
			return c, fmt.Errorf("the string holds %d bytes, the count says %d", len(strs[0]), c.Args[2])
		}
		c.Buf = strs[0]
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
	procs := map[int]*sim.Process{}
	for i, ev := range c.evs {
		if _, ok := procs[ev.Pid]; ok {
			continue
		}
		if i == 0 {
			procs[ev.Pid] = main
		} else {
			// made by the kernel, outside the stack and the counts
			procs[ev.Pid] = sim.NewProcess(w.k, main.Task()).NewThread().Through(w.top)
		}
	}
	w.t0 = w.k.Now()
	for i, ev := range c.evs {
		p := procs[ev.Pid]
		call, err := buildCall(ev, p.Task())
		if err != nil {
			return nil, err
		}
		t0 := fio.Now(p.Task())
		w.at(ev.Line)
		res := p.Syscall(call)
		_ = r.Lat.RecordValue(fio.Now(p.Task()) - t0)
		at := fmt.Sprintf("call %d", i+1)
		o := observation{at: at, line: interposer.FormatCall(call, res)}
		r.log = append(r.log, o.line)
		if res.Errno == 0 && (call.Nr == sim.SYS_READ || call.Nr == sim.SYS_PREAD64) && res.Ret >= 0 {
			o.data = bytes.Clone(call.Buf[:res.Ret])
		}
		r.obs = append(r.obs, o)
		if d := verify(ev, call, res); d != "" {
			r.NDiverged++
			r.Divergences = append(r.Divergences, fmt.Sprintf("%s: %s: %s", at, strings.TrimSpace(string(ev.Text)), d))
		}
	}
	w.finish(r)
	return r, nil
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

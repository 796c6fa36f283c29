package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/stdio"
)

// stdioWork is a workload written with C's stdio, one call per line:
//
//	f = fopen("/db/log", "a")
//	fputs("record 1\n", f)
//	fwrite("abc", 1, 3, f)
//	fflush(f)
//	fsync(fileno(f))
//	fdatasync(fileno(f))
//	fclose(f)
//
// Streams are named by the variable fopen's result is assigned to. The calls
// reach the model as glibc makes them (package stdio).
type stdioWork struct {
	ops []stdioOp
}

type stdioOp struct {
	n      int // the call's number in the arm, from 1
	line   int // its line in the arm's input, from 1
	fn     string
	stream string // the variable: assigned by fopen, used by the others
	path   string
	mode   string
	data   []byte
}

func (w *stdioWork) describe() string { return fmt.Sprintf("%d stdio calls", len(w.ops)) }

func (s *Scenario) cmdStdio(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1)
	if err != nil {
		return "", err
	}
	if td.Input == "" {
		return "", malformed(td, "missing input: stdio calls, one per line, e.g. f = fopen(\"/log\", \"a\")")
	}
	w := &stdioWork{}
	open := map[string]bool{}
	for i, line := range strings.Split(td.Input, "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		op, err := parseStdio(line)
		if err == nil && op.fn != "fopen" && !open[op.stream] {
			err = fmt.Errorf("stream %q is not open (no fopen assigned it)", op.stream)
		}
		if err != nil {
			return "", &MalformedError{Pos: pos(s.file, lineOf(td)+1+i), Msg: "stdio: " + err.Error()}
		}
		switch op.fn {
		case "fopen":
			open[op.stream] = true
		case "fclose":
			delete(open, op.stream)
		}
		op.n, op.line = len(w.ops)+1, 1+i
		w.ops = append(w.ops, op)
	}
	ar := &arm{name: a.words[0], work: w}
	if err := s.addArm(td, ar); err != nil {
		return "", err
	}
	return ar.describe(), nil
}

// parseStdio reads one line: [VAR =] NAME(ARG, ...).
func parseStdio(line string) (stdioOp, error) {
	var op stdioOp
	if v, rest, ok := strings.Cut(line, "="); ok && !strings.Contains(v, "(") {
		op.stream = strings.TrimSpace(v)
		line = strings.TrimSpace(rest)
	}
	name, rest, ok := strings.Cut(line, "(")
	if !ok || !strings.HasSuffix(rest, ")") {
		return op, fmt.Errorf("want NAME(ARGS), got %q", line)
	}
	op.fn = strings.TrimSpace(name)
	args, err := splitArgs(strings.TrimSuffix(rest, ")"))
	if err != nil {
		return op, err
	}
	want := func(n int, form string) error {
		if len(args) != n {
			return fmt.Errorf("want %s", form)
		}
		return nil
	}
	str := func(i int) (string, error) {
		s, err := strconv.Unquote(args[i])
		if err != nil || !strings.HasPrefix(args[i], `"`) {
			return "", fmt.Errorf("argument %d of %s: want a quoted string, got %s", i+1, op.fn, args[i])
		}
		return s, nil
	}
	stream := func(s string, fileno bool) error {
		if fileno {
			inner, ok := strings.CutPrefix(s, "fileno(")
			if !ok || !strings.HasSuffix(inner, ")") {
				return fmt.Errorf("want %s(fileno(STREAM))", op.fn)
			}
			s = strings.TrimSuffix(inner, ")")
		}
		if !isIdent(s) {
			return fmt.Errorf("want a stream variable, got %q", s)
		}
		op.stream = s
		return nil
	}
	switch op.fn {
	case "fopen":
		if err := want(2, `VAR = fopen("PATH", "MODE")`); err != nil {
			return op, err
		}
		if !isIdent(op.stream) {
			return op, fmt.Errorf(`want VAR = fopen("PATH", "MODE")`)
		}
		if op.path, err = str(0); err != nil {
			return op, err
		}
		if op.mode, err = str(1); err != nil {
			return op, err
		}
		if _, _, err := stdio.ParseMode(op.mode); err != nil {
			return op, err
		}
		return op, nil
	}
	if op.stream != "" {
		return op, fmt.Errorf("only fopen's result is assigned")
	}
	switch op.fn {
	case "fputs":
		if err := want(2, `fputs("TEXT", STREAM)`); err != nil {
			return op, err
		}
		s, err := str(0)
		op.data = []byte(s)
		if err != nil {
			return op, err
		}
		return op, stream(args[1], false)
	case "fwrite":
		if err := want(4, `fwrite("TEXT", SIZE, N, STREAM)`); err != nil {
			return op, err
		}
		s, err := str(0)
		if err != nil {
			return op, err
		}
		size, err1 := strconv.Atoi(args[1])
		n, err2 := strconv.Atoi(args[2])
		if err1 != nil || err2 != nil || size < 0 || n < 0 || size*n != len(s) {
			return op, fmt.Errorf("fwrite: SIZE*N must be the string's %d bytes", len(s))
		}
		op.data = []byte(s)
		return op, stream(args[3], false)
	case "fflush", "fclose":
		if err := want(1, op.fn+"(STREAM)"); err != nil {
			return op, err
		}
		return op, stream(args[0], false)
	case "fsync", "fdatasync":
		if err := want(1, op.fn+"(fileno(STREAM))"); err != nil {
			return op, err
		}
		return op, stream(args[0], true)
	}
	return op, fmt.Errorf("unknown call %q (want fopen, fputs, fwrite, fflush, fsync, fdatasync, fclose)", op.fn)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// splitArgs splits at the commas outside quoted strings and parentheses.
func splitArgs(s string) ([]string, error) {
	var out []string
	depth, start, inStr := 0, 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case inStr && c == '\\':
			i++
		case c == '"':
			inStr = !inStr
		case inStr:
		case c == '(':
			depth++
		case c == ')':
			depth--
		case c == ',' && depth == 0:
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
	}
	if inStr || depth != 0 {
		return nil, fmt.Errorf("unbalanced quotes or parentheses in %q", s)
	}
	if last := strings.TrimSpace(s[start:]); last != "" || len(out) > 0 {
		out = append(out, last)
	}
	return out, nil
}

// recorder keeps the strace line of every call that passes it.
type recorder struct {
	next  sim.Handler
	lines []string
}

func (r *recorder) Syscall(c *sim.Call) sim.Result {
	res := r.next.Syscall(c)
	r.lines = append(r.lines, interposer.FormatCall(*c, res))
	return res
}

// Unwrap returns the next layer.
func (r *recorder) Unwrap() sim.Handler { return r.next }

func (w *stdioWork) run(st setup, withStack bool) (*Result, error) {
	wd, err := st.build(withStack)
	if err != nil {
		return nil, err
	}
	rec := &recorder{next: wd.top}
	p, err := wd.process(rec)
	if err != nil {
		return nil, err
	}
	r := &Result{Lat: newLat()}
	files := map[string]*stdio.File{}
	for _, op := range w.ops {
		f := files[op.stream]
		t0 := p.Task().Now()
		wd.at(op.line)
		var err error
		switch op.fn {
		case "fopen":
			f, err = stdio.Open(p, op.path, op.mode)
			files[op.stream] = f
		case "fputs", "fwrite":
			_, err = f.Write(op.data)
		case "fflush":
			err = f.Flush()
		case "fsync":
			err = p.Fsync(f.Fd())
		case "fdatasync":
			err = p.Fdatasync(f.Fd())
		case "fclose":
			err = f.Close()
		}
		_ = r.Lat.RecordValue(p.Task().Now() - t0)
		if err != nil {
			// The program stops at its first failed call.
			r.Err = fmt.Sprintf("stdio call %d, %s: %v", op.n, op.fn, err)
			break
		}
	}
	wd.finish(r)
	r.log = rec.lines
	return r, nil
}

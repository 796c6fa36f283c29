// Package faultrule is iosim's one fault-rule language: a parser, a printer that
// round-trips with it, and the trigger semantics every layer that injects faults
// shares (the vfs Injector, the fault interposer, scenario files).
//
// # Text form
//
//	RULE    = OPS [ "@" WHERE ] { "#" TRIGGER } "=" EFFECT { "+" EFFECT }
//	RULES   = RULE { ";" RULE }
//	OPS     = "*" | NAME { "|" NAME }
//	WHERE   = "fd:" N | GLOB
//	TRIGGER = "nth=" N | "every=" K | "after=" N | "p=" P
//	EFFECT  = ERRNO | "short:" N | "delay:" DURATION | "corrupt"
//
// OPS names the operations a rule applies to: syscall names as strace prints them
// for the fault interposer (write, pread64|pwrite64), operation names for the vfs
// (write, writeback, fsync; see vfs.Op); "*" is any operation. Each layer passes
// its own name check to Parse.
//
// WHERE narrows the rule to a place: a path glob as path.Match takes it, matched
// against the whole path when it contains '/', else against the base name
// (@/db/*.log, @*.log); or, for layers that see descriptors, an fd (@fd:3). A glob
// cannot contain '#', '=', ';' or ','.
//
// TRIGGER says which matching operations fire. A rule counts every operation its
// OPS and WHERE match, whether or not another rule fired on it, so the n-th match
// is a property of the workload alone. All triggers must hold (they combine with
// AND); a rule without one fires on every match:
//
//	nth=N    only the N-th match (1-based)
//	every=K  the K-th, 2K-th, ... match
//	after=N  every match after the first N
//	p=P      each match with probability P (0 < P <= 1), drawn from a hash of the
//	         seed, the rule's index and the match count: the same operations fire
//	         in every run with the same seed
//
// For example write#nth=3#every=2=EIO fires on no write (3 is odd), and
// write#after=2#every=2=EIO fires on the 4th, 6th, ... write.
//
// EFFECT says what happens; several join with '+', printed in the order delay,
// short, corrupt, errno:
//
//	EIO        the operation fails with this errno (any Linux errno name)
//	short:N    a read or write moves at most N bytes
//	delay:D    the operation takes D longer (a Go duration: 5us, 2ms)
//	corrupt    a read returns its bytes inverted
//
// An errno excludes short and corrupt: a failed operation moves nothing.
//
// Parse errors name the column (1-based) and what was expected there:
//
//	fault rule "write#nth=0=EIO": column 11: want a positive integer after nth=, got "0"
//
// The text contains no ',', so a rule fits in one --stack value:
// --stack fault:rule=write@/db/*#nth=3=EIO,rule=fsync=EIO.
package faultrule

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Rule is one parsed fault rule. The zero value of each field means "not given";
// Fd is -1 when no fd is given (use New or Parse to build one).
type Rule struct {
	Ops  []string // empty: any operation ("*")
	Glob string   // "": anywhere
	Fd   int      // -1: any fd

	Nth, Every, After int64   // 0: not given
	P                 float64 // 0: not given

	Errno    syscall.Errno
	Short    int64 // at most this many bytes, when HasShort
	HasShort bool
	Delay    time.Duration
	Corrupt  bool
}

// New returns a rule on ops (none: any operation) with no place, trigger or effect.
func New(ops ...string) Rule {
	if len(ops) == 0 {
		ops = nil
	}
	return Rule{Ops: ops, Fd: -1}
}

// Names checks an operation name for a layer; nil accepts any identifier.
type Names func(name string) bool

// Error is a parse error: the rule's text, the 1-based column and what was expected.
type Error struct {
	Text   string
	Column int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("fault rule %q: column %d: %s", e.Text, e.Column, e.Msg)
}

type parser struct {
	s     string
	i     int
	names Names
}

func (p *parser) fail(at int, format string, a ...any) error {
	return &Error{Text: p.s, Column: at + 1, Msg: fmt.Sprintf(format, a...)}
}

// until returns the text from the cursor to the first byte of stop (or the end)
// and moves the cursor there.
func (p *parser) until(stop string) (string, int) {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte(stop, p.s[p.i]) < 0 {
		p.i++
	}
	return p.s[start:p.i], start
}

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// Parse parses one rule. names checks the operation names (nil: any identifier).
func Parse(s string, names Names) (Rule, error) {
	p := &parser{s: s, names: names}
	r := New()
	if err := p.ops(&r); err != nil {
		return Rule{}, err
	}
	if p.peek() == '@' {
		p.i++
		if err := p.where(&r); err != nil {
			return Rule{}, err
		}
	}
	for p.peek() == '#' {
		p.i++
		if err := p.trigger(&r); err != nil {
			return Rule{}, err
		}
	}
	if p.peek() != '=' {
		if p.i == len(s) {
			return Rule{}, p.fail(p.i, "want '=' and an effect (EIO, short:N, delay:D, corrupt)")
		}
		return Rule{}, p.fail(p.i, "want '@', '#' or '=', got %q", s[p.i])
	}
	p.i++
	if err := p.effects(&r); err != nil {
		return Rule{}, err
	}
	return r, nil
}

func (p *parser) ops(r *Rule) error {
	if p.peek() == '*' {
		p.i++
		return nil
	}
	for {
		name, at := p.until("|@#=")
		switch {
		case name == "":
			return p.fail(at, "want an operation name or '*'")
		case !isIdent(name):
			return p.fail(at, "want an operation name, got %q", name)
		case p.names != nil && !p.names(name):
			return p.fail(at, "unknown operation %q", name)
		}
		for _, o := range r.Ops {
			if o == name {
				return p.fail(at, "operation %q given twice", name)
			}
		}
		r.Ops = append(r.Ops, name)
		if p.peek() != '|' {
			return nil
		}
		p.i++
	}
}

func isIdent(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

func (p *parser) where(r *Rule) error {
	w, at := p.until("#=;,")
	if fd, ok := strings.CutPrefix(w, "fd:"); ok {
		n, err := strconv.Atoi(fd)
		if err != nil || n < 0 || strconv.Itoa(n) != fd {
			return p.fail(at+3, "want an fd number after @fd:, got %q", fd)
		}
		r.Fd = n
		return nil
	}
	if w == "" {
		return p.fail(at, "want a path glob or fd:N after '@'")
	}
	if _, err := path.Match(w, ""); err != nil {
		return p.fail(at, "bad path glob %q: %v", w, err)
	}
	r.Glob = w
	return nil
}

func (p *parser) trigger(r *Rule) error {
	key, at := p.until("=#")
	if p.peek() != '=' {
		return p.fail(p.i, "want '=' after trigger %q (nth=N, every=K, after=N, p=P)", key)
	}
	p.i++
	v, vat := p.until("=#")
	switch key {
	case "nth", "every", "after":
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || strconv.FormatInt(n, 10) != v {
			return p.fail(vat, "want a positive integer after %s=, got %q", key, v)
		}
		dst := map[string]*int64{"nth": &r.Nth, "every": &r.Every, "after": &r.After}[key]
		if *dst != 0 {
			return p.fail(at, "trigger %s given twice", key)
		}
		*dst = n
	case "p":
		f, err := strconv.ParseFloat(v, 64)
		// Any decimal spelling (0.5, .5, 1.0, 0.00001, 1e-5); it prints in
		// Go's shortest form.
		if err != nil || !(f > 0 && f <= 1) || v[0] == '+' || v[0] == '-' || strings.Trim(v, "0123456789.eE+-") != "" {
			return p.fail(vat, "want a probability 0 < p <= 1 after p= (0.25), got %q", v)
		}
		if r.P != 0 {
			return p.fail(at, "trigger p given twice")
		}
		r.P = f
	default:
		return p.fail(at, "want a trigger nth, every, after or p, got %q", key)
	}
	return nil
}

func (p *parser) effects(r *Rule) error {
	for {
		e, at := p.until("+")
		switch {
		case e == "":
			return p.fail(at, "want an effect (EIO, short:N, delay:D, corrupt)")
		case strings.HasPrefix(e, "short:"):
			v := e[len("short:"):]
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 || strconv.FormatInt(n, 10) != v {
				return p.fail(at+6, "want a byte count after short:, got %q", v)
			}
			if r.HasShort {
				return p.fail(at, "effect short given twice")
			}
			r.Short, r.HasShort = n, true
		case strings.HasPrefix(e, "delay:"):
			v := e[len("delay:"):]
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return p.fail(at+6, "want a positive duration after delay: (5us, 2ms), got %q", v)
			}
			if r.Delay != 0 {
				return p.fail(at, "effect delay given twice")
			}
			r.Delay = d
		case e == "corrupt":
			if r.Corrupt {
				return p.fail(at, "effect corrupt given twice")
			}
			r.Corrupt = true
		default:
			en, ok := ErrnoByName(e)
			if !ok {
				return p.fail(at, "want an errno name (EIO), short:N, delay:D or corrupt, got %q", e)
			}
			if r.Errno != 0 {
				return p.fail(at, "two errnos (%s and %s)", ErrnoName(r.Errno), e)
			}
			r.Errno = en
		}
		if r.Errno != 0 && (r.HasShort || r.Corrupt) {
			return p.fail(at, "an errno excludes short: and corrupt (a failed operation moves nothing)")
		}
		if p.peek() != '+' {
			return nil
		}
		p.i++
	}
}

// String prints the rule in its canonical text form, which Parse reads back to
// the same rule.
func (r Rule) String() string {
	var b strings.Builder
	if len(r.Ops) == 0 {
		b.WriteByte('*')
	}
	for i, o := range r.Ops {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(o)
	}
	if r.Glob != "" {
		b.WriteString("@" + r.Glob)
	} else if r.Fd >= 0 {
		b.WriteString("@fd:" + strconv.Itoa(r.Fd))
	}
	for _, t := range []struct {
		k string
		v int64
	}{{"nth", r.Nth}, {"every", r.Every}, {"after", r.After}} {
		if t.v > 0 {
			b.WriteString("#" + t.k + "=" + strconv.FormatInt(t.v, 10))
		}
	}
	if r.P > 0 {
		b.WriteString("#p=" + strconv.FormatFloat(r.P, 'g', -1, 64))
	}
	b.WriteByte('=')
	var eff []string
	if r.Delay > 0 {
		// in ASCII, as typed: 1.5us, not time.Duration's 1.5µs
		eff = append(eff, "delay:"+strings.Replace(r.Delay.String(), "µs", "us", 1))
	}
	if r.HasShort {
		eff = append(eff, "short:"+strconv.FormatInt(r.Short, 10))
	}
	if r.Corrupt {
		eff = append(eff, "corrupt")
	}
	if r.Errno != 0 {
		eff = append(eff, ErrnoName(r.Errno))
	}
	b.WriteString(strings.Join(eff, "+"))
	return b.String()
}

// ParseList parses rules separated by ';' (empty rules are skipped). An error's
// column counts from the start of text.
func ParseList(text string, names Names) ([]Rule, error) {
	var rs []Rule
	off := 0
	for _, s := range strings.Split(text, ";") {
		if s != "" {
			r, err := Parse(s, names)
			if err != nil {
				if pe, ok := errors.AsType[*Error](err); ok {
					pe.Text, pe.Column = text, pe.Column+off
				}
				return nil, err
			}
			rs = append(rs, r)
		}
		off += len(s) + 1
	}
	return rs, nil
}

// FormatList prints rules separated by ';', as ParseList reads them.
func FormatList(rs []Rule) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = r.String()
	}
	return strings.Join(s, ";")
}

// MatchGlob reports whether path p is in the place glob names: the whole path when
// the glob contains '/', else the base name. An empty path matches no glob.
func MatchGlob(glob, p string) bool {
	if p == "" {
		return false
	}
	if !strings.Contains(glob, "/") {
		p = path.Base(p)
	}
	ok, _ := path.Match(glob, p)
	return ok
}

// errnoAliases are the names Linux gives a second time to an errno: strace
// prints EOPNOTSUPP for 95 (x/sys/unix says ENOTSUP), and glibc's headers
// define EWOULDBLOCK and EDEADLOCK as EAGAIN and EDEADLK.
var errnoAliases = map[string]syscall.Errno{
	"EOPNOTSUPP": unix.EOPNOTSUPP, "ENOTSUP": unix.ENOTSUP,
	"EWOULDBLOCK": unix.EWOULDBLOCK, "EDEADLOCK": unix.EDEADLOCK,
}

// ErrnoByName returns the Linux errno called name ("EIO"), by any of its
// names (EOPNOTSUPP and ENOTSUP, EAGAIN and EWOULDBLOCK).
func ErrnoByName(name string) (syscall.Errno, bool) {
	if !strings.HasPrefix(name, "E") {
		return 0, false
	}
	if e, ok := errnoAliases[name]; ok {
		return e, true
	}
	for e := syscall.Errno(1); e < 256; e++ {
		if unix.ErrnoName(e) == name {
			return e, true
		}
	}
	return 0, false
}

// ErrnoName returns the name strace prints for e ("EIO"; EOPNOTSUPP for 95), or
// "errno N" for a number Linux does not name.
func ErrnoName(e syscall.Errno) string {
	if e == unix.EOPNOTSUPP {
		return "EOPNOTSUPP"
	}
	if n := unix.ErrnoName(e); n != "" {
		return n
	}
	return "errno " + strconv.Itoa(int(e))
}

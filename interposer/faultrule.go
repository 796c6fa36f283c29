package interposer

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"iosim/sim"
)

// A Rule is one fault-injection rule. Its text form, which ParseRule reads and
// String prints back (canonically), is
//
//	CALLS[@WHERE][#TRIGGER...]=EFFECT[+EFFECT...]
//
//	CALLS    a syscall name as strace prints it, several joined by '|', or '*'
//	         (any call):  write   pread64|pwrite64   *
//	WHERE    a path glob, matched against the call's path or the path the fd was
//	         opened with:  @/db/*.dbf   @*.log (no '/': matched against the base
//	         name);  or an fd:  @fd:3
//	TRIGGER  which of the matching calls fire (all of them without a trigger;
//	         several triggers must all hold):
//	           #nth=N     only the N-th matching call (1-based)
//	           #every=K   every K-th matching call (K, 2K, ...)
//	           #after=N   every matching call after the first N
//	           #p=0.25    each matching call with probability p, from a generator
//	                      seeded by the fault layer's seed and the rule's index:
//	                      the same calls fire in every run
//	EFFECT   EIO (any errno name: the call fails with it and does not reach the
//	         kernel) | short:N (a read/write moves at most N bytes: the count is
//	         cut before the call) | delay:D (the virtual clock advances by D, a Go
//	         duration such as 5us or 2ms, before the call)
//
// Examples: write@/db/*#nth=3=EIO   fsync=delay:10ms   read@fd:5#p=0.1=short:100
// pwrite64|fdatasync@/wal/*#after=100=ENOSPC   *@/data/x#every=2=delay:1ms+EIO
//
// The text contains no ',' or ':' before the first '=' of a trigger, so a rule fits
// in one --stack value: --stack fault:rule=write@/db/*#nth=3=EIO,rule=fsync=EIO.
type Rule struct {
	Calls []sim.Sysno // empty: any call
	Glob  string      // "" : anywhere
	Fd    int         // -1: any fd
	Nth   int64
	Every int64
	After int64
	P     float64 // 0: no probability trigger
	Errno syscall.Errno
	Short int64 // >0: cut counts to this many bytes
	Delay time.Duration
}

// ParseRule parses the text form of a rule (see Rule).
func ParseRule(s string) (Rule, error) {
	r := Rule{Fd: -1}
	bad := func(format string, a ...any) (Rule, error) {
		return Rule{}, fmt.Errorf("fault rule %q: %s", s, fmt.Sprintf(format, a...))
	}
	eq := strings.LastIndexByte(s, '=')
	if eq < 0 {
		return bad("no =EFFECT")
	}
	head, effects := s[:eq], s[eq+1:]
	// Triggers use '=' too: "#nth=3=EIO" splits at the last '='. A trigger value
	// is never an effect, so the effect list is everything after the last '='.
	if effects == "" {
		return bad("empty effect")
	}
	for _, e := range strings.Split(effects, "+") {
		switch {
		case strings.HasPrefix(e, "short:"):
			n, err := strconv.ParseInt(e[len("short:"):], 10, 64)
			if err != nil || n < 0 {
				return bad("short:%s is not a byte count", e[len("short:"):])
			}
			r.Short = n
			if n == 0 {
				r.Short = -1 // short:0 — a zero-byte transfer
			}
		case strings.HasPrefix(e, "delay:"):
			d, err := time.ParseDuration(e[len("delay:"):])
			if err != nil || d < 0 {
				return bad("delay:%s is not a duration (5us, 2ms)", e[len("delay:"):])
			}
			r.Delay = d
		default:
			en := errnoByName(e)
			if en == 0 {
				return bad("unknown effect %q (want an errno name, short:N or delay:D)", e)
			}
			r.Errno = en
		}
	}
	parts := strings.Split(head, "#")
	callsWhere := parts[0]
	for _, t := range parts[1:] {
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return bad("trigger %q is not key=value", t)
		}
		switch k {
		case "nth", "every", "after":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 && k != "after" || n < 0 {
				return bad("%s=%s: want a positive integer", k, v)
			}
			switch k {
			case "nth":
				r.Nth = n
			case "every":
				r.Every = n
			default:
				r.After = n
			}
		case "p":
			p, err := strconv.ParseFloat(v, 64)
			if err != nil || p <= 0 || p > 1 {
				return bad("p=%s: want a probability in (0, 1]", v)
			}
			r.P = p
		default:
			return bad("unknown trigger %q (want nth, every, after or p)", k)
		}
	}
	calls, where, hasWhere := strings.Cut(callsWhere, "@")
	if calls == "" {
		return bad("no syscall name (use * for any)")
	}
	if calls != "*" {
		for _, n := range strings.Split(calls, "|") {
			nr, ok := sim.SysnoByName(n)
			if !ok {
				return bad("unknown syscall %q", n)
			}
			r.Calls = append(r.Calls, nr)
		}
	}
	if hasWhere {
		if strings.HasPrefix(where, "fd:") {
			n, err := strconv.Atoi(where[3:])
			if err != nil || n < 0 {
				return bad("@%s: want fd:N", where)
			}
			r.Fd = n
		} else {
			if where == "" {
				return bad("empty path glob after @")
			}
			if _, err := path.Match(where, ""); err != nil {
				return bad("bad glob %q", where)
			}
			r.Glob = where
		}
	}
	if r.Short != 0 && r.Errno != 0 {
		return bad("short and an errno cannot both apply")
	}
	return r, nil
}

// String prints the rule in the form ParseRule reads.
func (r Rule) String() string {
	var b strings.Builder
	if len(r.Calls) == 0 {
		b.WriteByte('*')
	}
	for i, c := range r.Calls {
		if i > 0 {
			b.WriteByte('|')
		}
		b.WriteString(c.String())
	}
	if r.Glob != "" {
		b.WriteString("@" + r.Glob)
	} else if r.Fd >= 0 {
		fmt.Fprintf(&b, "@fd:%d", r.Fd)
	}
	if r.Nth > 0 {
		fmt.Fprintf(&b, "#nth=%d", r.Nth)
	}
	if r.Every > 0 {
		fmt.Fprintf(&b, "#every=%d", r.Every)
	}
	if r.After > 0 {
		fmt.Fprintf(&b, "#after=%d", r.After)
	}
	if r.P > 0 {
		b.WriteString("#p=" + strconv.FormatFloat(r.P, 'g', -1, 64))
	}
	b.WriteByte('=')
	var eff []string
	if r.Delay > 0 {
		eff = append(eff, "delay:"+r.Delay.String())
	}
	if r.Short > 0 {
		eff = append(eff, "short:"+strconv.FormatInt(r.Short, 10))
	} else if r.Short < 0 {
		eff = append(eff, "short:0")
	}
	if r.Errno != 0 {
		eff = append(eff, errnoName(r.Errno))
	}
	b.WriteString(strings.Join(eff, "+"))
	return b.String()
}

// matchGlob matches a path against a rule glob: against the whole path when the
// glob has a '/', else against the base name.
func matchGlob(glob, p string) bool {
	if p == "" {
		return false
	}
	if !strings.Contains(glob, "/") {
		p = path.Base(p)
	}
	ok, _ := path.Match(glob, p)
	return ok
}

// errnoByName maps "EIO" to its errno (Linux x86-64 values).
func errnoByName(name string) syscall.Errno {
	for e := syscall.Errno(1); e < 256; e++ {
		if unix.ErrnoName(e) == name {
			return e
		}
	}
	return 0
}

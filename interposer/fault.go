package interposer

import (
	"fmt"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/faultrule"
	"github.com/iosim/iosim/sim"
)

func init() {
	register(&Info{
		Name:    "fault",
		Summary: "deterministic fault injection at the syscall boundary, as libfiu's POSIX wrappers do: an errno, a short count, a delay or corrupted reads, on the n-th, every k-th, after n or with probability p of the calls a rule matches",
		Params: []Param{
			{Name: "rule", Repeat: true, Doc: "CALLS[@GLOB|@fd:N][#nth=N][#every=K][#after=N][#p=P]=EIO|short:N|delay:D|corrupt[+...]; triggers combine with AND (package faultrule)"},
			{Name: "seed", Default: "1", Doc: "seed of the #p= triggers"},
		},
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			seed, err := a.Int("seed")
			if err != nil {
				return nil, err
			}
			var rules []faultrule.Rule
			for _, s := range a.All("rule") {
				r, err := ParseRule(s)
				if err != nil {
					return nil, fmt.Errorf("interposer fault: %w", err)
				}
				rules = append(rules, r)
			}
			return NewFault(next, uint64(seed), rules...), nil
		},
	})
}

// ParseRule parses a fault rule whose operations are syscall names as strace
// prints them (see package faultrule for the language).
func ParseRule(s string) (faultrule.Rule, error) { return faultrule.Parse(s, SyscallNames) }

// SyscallNames checks a syscall name in a fault rule.
func SyscallNames(name string) bool {
	_, ok := sim.SysnoByName(name)
	return ok
}

// Fault injects faults at the syscall boundary, like libfiu's POSIX wrappers: each
// call is checked against the rules (package faultrule) in order; every rule whose
// calls and place match counts the call, and the first whose triggers all hold
// applies its effects: a delay advances the virtual clock before the call; an errno
// fails the call, which does not reach the next layer (a failed close leaves the
// fd open); short:N cuts the count of a read or write to N bytes before the call;
// corrupt inverts the bytes a read returns. Paths of fd calls are those the fd was
// opened with (open/openat/creat through this layer, carried by dup), as given by
// the program.
//
// Deterministic: the counters depend only on the order of calls, and #p= draws from
// a hash of the seed, the rule's index and the call's count. Safe for concurrent
// use; with concurrent threads, "the n-th call" is the n-th to reach this layer.
type Fault struct {
	next  sim.Handler
	set   *faultrule.Set
	calls [][]sim.Sysno // per rule: the calls it names (nil: any)

	mu    sync.Mutex
	paths map[procID]map[int]string
}

var _ sim.Handler = (*Fault)(nil)

// NewFault returns a fault-injection layer over next; rules name syscalls as
// ParseRule checks them (an unknown name matches no call).
func NewFault(next sim.Handler, seed uint64, rules ...faultrule.Rule) *Fault {
	f := &Fault{next: next, set: faultrule.NewSet(seed, rules), calls: make([][]sim.Sysno, len(rules)),
		paths: map[procID]map[int]string{}}
	for i, r := range rules {
		for _, n := range r.Ops {
			nr, _ := sim.SysnoByName(n)
			f.calls[i] = append(f.calls[i], nr)
		}
		if len(r.Ops) > 0 && f.calls[i] == nil {
			f.calls[i] = []sim.Sysno{}
		}
	}
	return f
}

// Unwrap returns the next layer.
func (f *Fault) Unwrap() sim.Handler { return f.next }

// Rules returns the layer's rules (shared; do not modify).
func (f *Fault) Rules() []faultrule.Rule { return f.set.Rules() }

// Fired returns how many calls each rule fired on.
func (f *Fault) Fired() []int64 { return f.set.Fired() }

// String prints the layer's spec: fault:seed=S,rule=...,rule=...
func (f *Fault) String() string {
	parts := []string{fmt.Sprintf("seed=%d", f.set.Seed())}
	for _, r := range f.set.Rules() {
		parts = append(parts, "rule="+r.String())
	}
	return "fault:" + strings.Join(parts, ",")
}

func (f *Fault) matches(i int, r *faultrule.Rule, nr sim.Sysno, fd int, fdOK bool, p string) bool {
	if calls := f.calls[i]; calls != nil {
		ok := false
		for _, n := range calls {
			if n == nr {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	if r.Fd >= 0 && (!fdOK || fd != r.Fd) {
		return false
	}
	return r.Glob == "" || faultrule.MatchGlob(r.Glob, p)
}

// Syscall implements sim.Handler.
func (f *Fault) Syscall(c *sim.Call) sim.Result {
	fd, fdOK := fdArg(c)
	p := c.Path
	if fdOK && p == "" {
		f.mu.Lock()
		p = f.paths[procOf(c.Task)][fd]
		f.mu.Unlock()
	}
	hit := f.set.Decide(func(i int, r *faultrule.Rule) bool { return f.matches(i, r, c.Nr, fd, fdOK, p) })
	var rule *faultrule.Rule
	var sent sim.Call // c as received, when shortening changes it
	if hit >= 0 {
		rule = &f.set.Rules()[hit]
		if rule.Delay > 0 {
			c.Task.Kernel().Clock().Advance(int64(rule.Delay))
		}
		if rule.Errno != 0 {
			return sim.Fail(rule.Errno)
		}
		if rule.HasShort {
			sent = *c
			shorten(c, rule.Short)
		}
	}
	r := f.next.Syscall(c)
	if rule != nil && rule.Corrupt && r.Errno == 0 && r.Ret > 0 && c.Nr.Is(sim.Reads) {
		corrupt(c, r.Ret)
	}
	f.track(c, r)
	if rule != nil && rule.HasShort {
		*c = sent // the layers above see the Call they sent (sim.Handler)
	}
	return r
}

// shorten cuts the transfer of a read or write to at most limit bytes.
func shorten(c *sim.Call, limit int64) {
	if int64(len(c.Buf)) > limit {
		c.Buf = c.Buf[:limit]
		if c.Nr == sim.SYS_READ || c.Nr == sim.SYS_WRITE || c.Nr == sim.SYS_PREAD64 || c.Nr == sim.SYS_PWRITE64 {
			c.Args[2] = limit
		}
	}
	if c.Iov != nil {
		iov := make([][]byte, 0, len(c.Iov))
		left := limit
		for _, b := range c.Iov {
			n := min(int64(len(b)), left)
			iov = append(iov, b[:n])
			left -= n
		}
		c.Iov = iov
	}
}

// corrupt inverts the n bytes a read returned.
func corrupt(c *sim.Call, n int64) {
	invert := func(b []byte) {
		for k := range b {
			b[k] = ^b[k]
		}
	}
	if c.Iov == nil {
		invert(c.Buf[:min(n, int64(len(c.Buf)))])
		return
	}
	for _, b := range c.Iov {
		m := min(int64(len(b)), n)
		invert(b[:m])
		n -= m
	}
}

// track keeps fd → path for the calls that create, duplicate and close fds, as
// their rows in the syscall table say: a new fd from a path (open, openat,
// creat), a duplicate (dup, dup2, dup3, fcntl's F_DUPFD commands), a closed fd
// (close, close_range) and the end of the process.
func (f *Fault) track(c *sim.Call, r sim.Result) {
	if r.Errno != 0 {
		return
	}
	in := sim.Info(c.Nr)
	dup := in.Ret == sim.RetNewFd || in.Ret == sim.RetFd && in.Props&sim.FdTable != 0 ||
		in.Ret == sim.RetFdOrValue && (c.Args[1] == unix.F_DUPFD || c.Args[1] == unix.F_DUPFD_CLOEXEC)
	opens := in.Ret == sim.RetFd && in.Slot(sim.ArgPath, 0) >= 0
	closes := in.Props&sim.ClosesFd != 0 && !dup
	if in.Props&sim.EndsGroup != 0 {
		f.mu.Lock()
		delete(f.paths, procOf(c.Task))
		f.mu.Unlock()
		return
	}
	if !dup && !opens && !closes {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	k := procOf(c.Task)
	m := f.paths[k]
	if m == nil {
		m = map[int]string{}
		f.paths[k] = m
	}
	old := int(int32(c.Args[0]))
	switch {
	case opens:
		m[int(r.Ret)] = c.Path
	case dup:
		m[int(r.Ret)] = m[old]
	case in.Slot(sim.ArgFd, 0) >= 0: // close
		delete(m, old)
	case c.Args[2]&unix.CLOSE_RANGE_CLOEXEC == 0: // close_range(first, last, flags)
		first, last := uint32(c.Args[0]), uint32(c.Args[1])
		for fd := range m {
			if uint32(fd) >= first && uint32(fd) <= last {
				delete(m, fd)
			}
		}
	}
}

package interposer

import (
	"fmt"
	"strings"
	"sync"

	"iosim/sim"
)

func init() {
	register(&Info{
		Name:    "fault",
		Summary: "deterministic syscall fault injection, like libfiu (errno, short count, delay)",
		Params: []Param{
			{Name: "rule", Repeat: true, Doc: "CALLS[@GLOB|@fd:N][#nth=N|#every=K|#after=N|#p=P]=EIO|short:N|delay:D[+...] (see Rule)"},
			{Name: "seed", Default: "1", Doc: "seed of the #p= triggers"},
		},
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			seed, err := a.Int("seed")
			if err != nil {
				return nil, err
			}
			var rules []Rule
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

// Fault injects faults at the syscall boundary, like libfiu's POSIX wrappers: each
// call is checked against the rules in order; every rule whose calls and place match
// counts the call, and the first whose trigger fires applies its effects (delay,
// then errno or short count). A failed call does not reach the next layer (a failed
// close leaves the fd open). Paths of fd calls are those the fd was opened with
// (open/openat/creat through this layer, carried by dup), as given by the program.
//
// Deterministic: the counters depend only on the order of calls, and #p= draws from
// a generator keyed by the seed, the rule's index and the call's count. Safe for
// concurrent use (one mutex); with concurrent threads, "the n-th call" is the n-th
// to reach this layer.
type Fault struct {
	next  sim.Handler
	Seed  uint64
	Rules []Rule

	mu    sync.Mutex
	seen  []int64 // per rule: matching calls so far
	fired []int64 // per rule: calls it fired on
	paths map[procID]map[int]string
}

var _ sim.Handler = (*Fault)(nil)

// NewFault returns a fault-injection layer over next.
func NewFault(next sim.Handler, seed uint64, rules ...Rule) *Fault {
	return &Fault{next: next, Seed: seed, Rules: rules, seen: make([]int64, len(rules)),
		fired: make([]int64, len(rules)), paths: map[procID]map[int]string{}}
}

// Unwrap returns the next layer.
func (f *Fault) Unwrap() sim.Handler { return f.next }

// Fired returns how many calls each rule fired on.
func (f *Fault) Fired() []int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int64(nil), f.fired...)
}

// String prints the layer's spec: fault:seed=S,rule=...,rule=...
func (f *Fault) String() string {
	parts := []string{fmt.Sprintf("seed=%d", f.Seed)}
	for _, r := range f.Rules {
		parts = append(parts, "rule="+r.String())
	}
	return "fault:" + strings.Join(parts, ",")
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

func (r *Rule) matches(c *sim.Call, fd int, fdOK bool, p string) bool {
	if len(r.Calls) > 0 {
		ok := false
		for _, n := range r.Calls {
			if n == c.Nr {
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
	if r.Glob != "" && !matchGlob(r.Glob, p) {
		return false
	}
	return true
}

func (r *Rule) fires(n int64, seed uint64, idx int) bool {
	if r.Nth > 0 && n != r.Nth {
		return false
	}
	if r.Every > 0 && n%r.Every != 0 {
		return false
	}
	if r.After > 0 && n <= r.After {
		return false
	}
	if r.P > 0 {
		u := float64(splitmix(seed^splitmix(uint64(idx)+1)^uint64(n))>>11) / (1 << 53)
		if u >= r.P {
			return false
		}
	}
	return true
}

// Syscall implements sim.Handler.
func (f *Fault) Syscall(c sim.Call) sim.Result {
	f.mu.Lock()
	fds := f.paths[procOf(c.Task)]
	fd, fdOK := fdArg(&c)
	p := c.Path
	if fdOK && p == "" {
		p = fds[fd]
	}
	hit := -1
	for i := range f.Rules {
		r := &f.Rules[i]
		if !r.matches(&c, fd, fdOK, p) {
			continue
		}
		f.seen[i]++
		if hit < 0 && r.fires(f.seen[i], f.Seed, i) {
			hit = i
			f.fired[i]++
		}
	}
	f.mu.Unlock()
	if hit >= 0 {
		r := &f.Rules[hit]
		if r.Delay > 0 {
			c.Task.Kernel().Clock().Advance(int64(r.Delay))
		}
		if r.Errno != 0 {
			return sim.Fail(r.Errno)
		}
		if r.Short != 0 {
			limit := max(r.Short, 0)
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
	}
	r := f.next.Syscall(c)
	f.track(&c, r)
	return r
}

// track keeps fd → path for the calls that create and close fds.
func (f *Fault) track(c *sim.Call, r sim.Result) {
	if r.Errno != 0 {
		return
	}
	switch c.Nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT, sim.SYS_CLOSE, sim.SYS_DUP, sim.SYS_DUP2,
		sim.SYS_DUP3, sim.SYS_FCNTL:
	case sim.SYS_EXIT_GROUP:
		f.mu.Lock()
		delete(f.paths, procOf(c.Task))
		f.mu.Unlock()
		return
	default:
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
	switch c.Nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT:
		m[int(r.Ret)] = c.Path
	case sim.SYS_CLOSE:
		delete(m, old)
	case sim.SYS_FCNTL:
		if c.Args[1] == 0 || c.Args[1] == 1030 { // F_DUPFD, F_DUPFD_CLOEXEC
			m[int(r.Ret)] = m[old]
		}
	default:
		m[int(r.Ret)] = m[old]
	}
}

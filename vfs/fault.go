package vfs

import (
	"fmt"
	"math/rand/v2"
	"path"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Op names an operation of the file system that a fault can target.
type Op uint8

// The operations an Injector is consulted on.
const (
	OpAny       Op = iota // matches every operation (in rules only)
	OpOpen                // opening an existing inode
	OpCreate              // creating a regular file
	OpRead                // reading data
	OpWrite               // writing data (buffered or direct)
	OpTruncate            // changing the size
	OpFallocate           // fallocate
	OpFsync               // fsync/fdatasync entry (fails the call before any writeback)
	OpWriteback           // writeback of dirty data (fails as Linux's writeback errors do)
	OpMkdir               // mkdir
	OpRemove              // unlink, rmdir
	OpRename              // rename
	OpLink                // link
	OpSymlink             // symlink
	numOps
)

var opNames = [numOps]string{"*", "open", "create", "read", "write", "truncate", "fallocate", "fsync", "writeback", "mkdir", "remove", "rename", "link", "symlink"}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return "op" + strconv.Itoa(int(o))
}

// Fault is what an Injector decides for one operation. The zero Fault means "no
// fault".
type Fault struct {
	Errno   syscall.Errno // fail the operation with this errno
	Short   int           // for reads and writes: transfer at most this many bytes (> 0)
	Delay   time.Duration // a hint for the cost model: the operation took this much longer
	Corrupt bool          // for reads: the bytes returned are corrupted (inverted)
}

// Injector is consulted on every operation of an FS that has one (WithFaults).
// path is the path of the inode concerned (see Inode.Path). It is called with the
// file system's lock held and must not call back into the FS.
type Injector interface {
	Inject(op Op, path string) Fault
}

// Rule is one fault rule: which operations (Op, a path glob as path.Match takes it,
// "" for all), when (the trigger), and what (the effect).
//
// Its text form, which ParseRule reads and String prints, is a comma-separated list
// of key=value: op=write,path=/db/*.log,nth=3,err=EIO. Keys: op (an Op name or *),
// path, one trigger of nth=N (only the N-th match), every=K (every K-th match),
// after=N (every match after the first N), p=F (each match with probability F from
// the injector's seeded generator), and effects err=ERRNO, short=N, delay=DURATION,
// corrupt.
type Rule struct {
	Op      Op
	Path    string
	Nth     int
	Every   int
	After   int
	Prob    float64
	Effect  Fault
	matches int
}

// ParseRule parses the text form of a rule.
func ParseRule(s string) (*Rule, error) {
	r := &Rule{}
	if strings.TrimSpace(s) == "" {
		return nil, fmt.Errorf("fault rule: empty")
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, hasV := strings.Cut(strings.TrimSpace(kv), "=")
		var err error
		switch k {
		case "op":
			r.Op = OpAny
			found := false
			for o := Op(0); o < numOps; o++ {
				if opNames[o] == v {
					r.Op, found = o, true
				}
			}
			if !found {
				return nil, fmt.Errorf("fault rule %q: unknown op %q (want one of %s)", s, v, strings.Join(opNames[:], ", "))
			}
		case "path":
			if _, err := path.Match(v, ""); err != nil {
				return nil, fmt.Errorf("fault rule %q: bad path pattern %q: %v", s, v, err)
			}
			r.Path = v
		case "nth":
			r.Nth, err = positive(v)
		case "every":
			r.Every, err = positive(v)
		case "after":
			r.After, err = strconv.Atoi(v)
			if err == nil && r.After < 0 {
				err = fmt.Errorf("negative")
			}
		case "p":
			r.Prob, err = strconv.ParseFloat(v, 64)
			if err == nil && (r.Prob <= 0 || r.Prob > 1) {
				err = fmt.Errorf("want 0 < p <= 1")
			}
		case "err":
			e, ok := ErrnoByName(v)
			if !ok {
				err = fmt.Errorf("unknown errno")
			}
			r.Effect.Errno = e
		case "short":
			r.Effect.Short, err = positive(v)
		case "delay":
			r.Effect.Delay, err = time.ParseDuration(v)
		case "corrupt":
			if hasV {
				err = fmt.Errorf("corrupt takes no value")
			}
			r.Effect.Corrupt = true
		default:
			return nil, fmt.Errorf("fault rule %q: unknown key %q (want op, path, nth, every, after, p, err, short, delay, corrupt)", s, k)
		}
		if err != nil {
			return nil, fmt.Errorf("fault rule %q: %s=%s: %v", s, k, v, err)
		}
	}
	if r.Effect == (Fault{}) {
		return nil, fmt.Errorf("fault rule %q: no effect (want err=, short=, delay= or corrupt)", s)
	}
	return r, nil
}

func positive(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err == nil && n <= 0 {
		err = fmt.Errorf("want a positive number")
	}
	return n, err
}

// String prints the rule in the form ParseRule reads.
func (r *Rule) String() string {
	parts := []string{"op=" + r.Op.String()}
	if r.Path != "" {
		parts = append(parts, "path="+r.Path)
	}
	if r.Nth > 0 {
		parts = append(parts, "nth="+strconv.Itoa(r.Nth))
	}
	if r.Every > 0 {
		parts = append(parts, "every="+strconv.Itoa(r.Every))
	}
	if r.After > 0 {
		parts = append(parts, "after="+strconv.Itoa(r.After))
	}
	if r.Prob > 0 {
		parts = append(parts, "p="+strconv.FormatFloat(r.Prob, 'g', -1, 64))
	}
	if r.Effect.Errno != 0 {
		parts = append(parts, "err="+ErrnoName(r.Effect.Errno))
	}
	if r.Effect.Short > 0 {
		parts = append(parts, "short="+strconv.Itoa(r.Effect.Short))
	}
	if r.Effect.Delay > 0 {
		parts = append(parts, "delay="+r.Effect.Delay.String())
	}
	if r.Effect.Corrupt {
		parts = append(parts, "corrupt")
	}
	return strings.Join(parts, ",")
}

// Rules is an Injector made of rules; the first rule that fires decides. Every
// rule counts its own matches. Probabilities come from a generator seeded at
// construction, so a run is reproducible. Safe for concurrent use.
type Rules struct {
	mu    sync.Mutex
	rules []*Rule
	rng   *rand.Rand
}

// NewRules returns an injector of the given rules with the given seed.
func NewRules(seed uint64, rules ...*Rule) *Rules {
	return &Rules{rules: rules, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// ParseRules parses rules separated by ';'.
func ParseRules(seed uint64, text string) (*Rules, error) {
	var rs []*Rule
	for _, s := range strings.Split(text, ";") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		r, err := ParseRule(s)
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	return NewRules(seed, rs...), nil
}

// Inject implements Injector.
func (rs *Rules) Inject(op Op, p string) Fault {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, r := range rs.rules {
		if r.Op != OpAny && r.Op != op {
			continue
		}
		if r.Path != "" {
			if ok, _ := path.Match(r.Path, p); !ok {
				continue
			}
		}
		r.matches++
		fire := true
		switch {
		case r.Nth > 0:
			fire = r.matches == r.Nth
		case r.Every > 0:
			fire = r.matches%r.Every == 0
		case r.After > 0:
			fire = r.matches > r.After
		}
		if fire && r.Prob > 0 {
			fire = rs.rng.Float64() < r.Prob
		}
		if fire {
			return r.Effect
		}
	}
	return Fault{}
}

// String prints the rules separated by ';'.
func (rs *Rules) String() string {
	s := make([]string, len(rs.rules))
	for k, r := range rs.rules {
		s[k] = r.String()
	}
	return strings.Join(s, ";")
}

var errnoNames = map[string]syscall.Errno{
	"EPERM": EPERM, "ENOENT": ENOENT, "EIO": EIO, "ENXIO": ENXIO, "EBADF": EBADF, "EACCES": EACCES,
	"EBUSY": EBUSY, "EEXIST": EEXIST, "EXDEV": EXDEV, "ENOTDIR": ENOTDIR, "EISDIR": EISDIR,
	"EINVAL": EINVAL, "EFBIG": EFBIG, "ENOSPC": ENOSPC, "EROFS": EROFS, "EMLINK": EMLINK,
	"ENAMETOOLONG": ENAMETOOLONG, "ENOTEMPTY": ENOTEMPTY, "ELOOP": ELOOP, "EDQUOT": EDQUOT,
	"EOPNOTSUPP": EOPNOTSUPP, "ENODEV": ENODEV, "EAGAIN": syscall.EAGAIN, "EINTR": syscall.EINTR,
}

// ErrnoByName returns the errno named name ("EIO").
func ErrnoByName(name string) (syscall.Errno, bool) {
	e, ok := errnoNames[name]
	return e, ok
}

// ErrnoName returns the symbolic name of e ("EIO"), or "errno N".
func ErrnoName(e syscall.Errno) string {
	for n, v := range errnoNames {
		if v == e {
			return n
		}
	}
	return "errno " + strconv.Itoa(int(e))
}

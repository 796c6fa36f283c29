package vfs

import (
	"fmt"
	"strconv"
	"syscall"
	"time"

	"github.com/iosim/iosim/faultrule"
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

// Rules is an Injector made of fault rules in iosim's one rule language
// (package faultrule): write@/db/*.log#nth=3=EIO;writeback=EIO. Operation names
// are the Op names (open, create, read, write, truncate, fallocate, fsync,
// writeback, mkdir, remove, rename, link, symlink); places are path globs matched
// against Inode.Path (a vfs has no fds). Every matching rule counts the operation
// and the first whose triggers hold decides (faultrule.Set). Effects map to a
// Fault: an errno, short:N (N > 0), delay:D, corrupt. Safe for concurrent use.
type Rules struct {
	set *faultrule.Set
	ops []uint16 // per rule: the bit set of Ops it names (all bits for *)
}

// OpNames checks an operation name of a vfs rule.
func OpNames(name string) bool {
	_, ok := opByName(name)
	return ok
}

func opByName(name string) (Op, bool) {
	for o := OpAny + 1; o < numOps; o++ {
		if opNames[o] == name {
			return o, true
		}
	}
	return 0, false
}

// NewRules returns an injector of the given rules; seed keys their p= triggers.
func NewRules(seed uint64, rules ...faultrule.Rule) (*Rules, error) {
	rs := &Rules{set: faultrule.NewSet(seed, rules), ops: make([]uint16, len(rules))}
	for i, r := range rules {
		if r.Fd >= 0 {
			return nil, fmt.Errorf("fault rule %q: a vfs rule has no fds (@fd:%d); give a path glob", r, r.Fd)
		}
		if r.HasShort && r.Short == 0 {
			return nil, fmt.Errorf("fault rule %q: a vfs read or write moves at least one byte (short:N, N > 0)", r)
		}
		if len(r.Ops) == 0 {
			rs.ops[i] = 1<<numOps - 1
		}
		for _, n := range r.Ops {
			o, ok := opByName(n)
			if !ok {
				return nil, fmt.Errorf("fault rule %q: unknown operation %q", r, n)
			}
			rs.ops[i] |= 1 << o
		}
	}
	return rs, nil
}

// ParseRules parses rules separated by ';' (see faultrule) into an injector.
func ParseRules(seed uint64, text string) (*Rules, error) {
	rules, err := faultrule.ParseList(text, OpNames)
	if err != nil {
		return nil, err
	}
	return NewRules(seed, rules...)
}

// Inject implements Injector.
func (rs *Rules) Inject(op Op, p string) Fault {
	i := rs.set.Decide(func(i int, r *faultrule.Rule) bool {
		return rs.ops[i]&(1<<op) != 0 && (r.Glob == "" || faultrule.MatchGlob(r.Glob, p))
	})
	if i < 0 {
		return Fault{}
	}
	r := &rs.set.Rules()[i]
	return Fault{Errno: r.Errno, Short: int(r.Short), Delay: r.Delay, Corrupt: r.Corrupt}
}

// Fired returns how many operations each rule fired on.
func (rs *Rules) Fired() []int64 { return rs.set.Fired() }

// String prints the rules separated by ';', as ParseRules reads them.
func (rs *Rules) String() string { return faultrule.FormatList(rs.set.Rules()) }

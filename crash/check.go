package crash

import (
	"fmt"
	"hash/maphash"

	"github.com/iosim/iosim/vfs"
)

// walk calls fn for every name reachable from dir (depth first, by name).
func walk(dir *vfs.Inode, base string, fn func(p string, ino *vfs.Inode) error) error {
	ents, err := dir.Dirents()
	if err != nil {
		return err
	}
	for _, d := range ents {
		if d.Name == "." || d.Name == ".." {
			continue
		}
		p := joinPath(base, d.Name)
		c, err := dir.Resolve(d.Name, false)
		if err != nil {
			return fmt.Errorf("%s: entry does not resolve: %v", p, err)
		}
		if c.Ino() != d.Ino {
			return fmt.Errorf("%s: entry names inode %d, resolves to %d", p, d.Ino, c.Ino())
		}
		if err := fn(p, c); err != nil {
			return err
		}
		if c.IsDir() {
			if err := walk(c, p, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// hashData hashes ino's bytes, reading them in pieces; full reports whether
// they read to its size.
func (e *Explorer) hashData(ino *vfs.Inode) (sum uint64, full bool) {
	var h maphash.Hash
	h.SetSeed(e.hseed)
	if e.buf == nil {
		e.buf = make([]byte, 64<<10)
	}
	size := ino.Size()
	off := int64(0)
	for off < size {
		n, _ := ino.ReadAt(e.buf[:min(int64(len(e.buf)), size-off)], off)
		if n <= 0 {
			break
		}
		h.Write(e.buf[:n])
		off += int64(n)
	}
	return h.Sum64(), off == size
}

// Forget drops what the explorer remembers of ino's durable content (call it
// when the content changes outside the explored calls, as Settle does).
func (e *Explorer) Forget(ino uint64) {
	e.dmu.Lock()
	delete(e.dataHash, ino)
	e.dmu.Unlock()
}

// changedSince reports whether the crash point has changes in flight to ino
// (data, allocation, size) or, when path is set, namespace changes at path, made
// after seq.
func (x *point) changedSince(ino uint64, path string, seq uint64) bool {
	return x.dataSeq[ino] > seq || path != "" && x.metaSeq[path] > seq
}

// active is what of the program's promises a state of a point can break:
// the promises not superseded by changes still in flight.
type active struct {
	data      map[uint64][]dataPromise
	names     map[string]namePromise
	repl      []*replaceRec
	replPaths map[string][]int // destination and source → replaces
}

// id identifies the active promises among the subsets of one version of
// the expectations (whose promises are fixed): a sum over them, so that map
// order does not matter.
func (a *active) id() uint64 {
	var h uint64
	for ino, ps := range a.data {
		for _, p := range ps {
			h += mixID(1, ino, p.seq, uint64(p.op))
		}
	}
	for n, p := range a.names {
		h += mixID(2, maphash.String(nameSeed, n), p.ino, p.seq)
	}
	for _, r := range a.repl {
		h += mixID(3, uint64(r.op), r.ino, r.seq)
	}
	return h
}

// nameSeed hashes names for active.id (within one process: ids are never
// output).
var nameSeed = maphash.MakeSeed()

// mixID hashes a tagged triple (splitmix64's finalizer over each word).
func mixID(tag, a, b, c uint64) uint64 {
	h := tag
	for _, v := range [3]uint64{a, b, c} {
		h ^= v
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// activePromises selects the promises the states of x are checked against.
func (e *Explorer) activePromises(x *point) *active {
	a := &active{data: map[uint64][]dataPromise{}, names: map[string]namePromise{}, replPaths: map[string][]int{}}
	for id, ps := range e.promises {
		var keep []dataPromise
		for _, p := range ps {
			if !x.changedSince(id, "", p.seq) {
				keep = append(keep, p)
			}
		}
		if keep != nil {
			a.data[id] = keep
		}
	}
	for n, p := range e.names {
		if x.changedSince(0, n, p.seq) {
			continue
		}
		if cur, err := e.fs.Root().Resolve(n, false); err != nil || cur.Ino() != p.ino {
			continue // changed since, durably
		}
		a.names[n] = p
	}
	for k := range e.replaces {
		r := &e.replaces[k]
		if r.op > x.op.Index || x.changedSince(r.ino, r.dst, r.seq) {
			continue
		}
		if ps := e.promises[r.ino]; len(ps) > 0 && ps[0].seq > r.seq {
			continue
		}
		if cur, err := e.fs.Root().Resolve(r.dst, false); err != nil || cur.Ino() != r.ino {
			continue
		}
		i := len(a.repl)
		a.repl = append(a.repl, r)
		a.replPaths[r.dst] = append(a.replPaths[r.dst], i)
		if r.src != r.dst {
			a.replPaths[r.src] = append(a.replPaths[r.src], i)
		}
	}
	return a
}

// Durability checks that every byte a sync acknowledged (fsync, fdatasync,
// sync, syncfs, an O_SYNC or O_DSYNC write, the completion of an AIO fsync or
// fdsync) reads back, in whichever file still has that inode, unless changed
// since; and that every name a synced directory (or sync) made durable names
// the same inode, unless changed since.
type Durability struct{}

func (Durability) Name() string { return "durability" }

func (Durability) Check(s *State) []Finding { return s.w.durability() }

// AtomicReplace checks that a file replaced by rename holds, after a crash, its
// old content or the new one: never a mix, never nothing. A destination missing
// while the source name still holds the new content (a rename split as ALICE's
// model allows) counts as recoverable.
type AtomicReplace struct{}

func (AtomicReplace) Name() string { return "atomic-replace" }

func (AtomicReplace) Check(s *State) []Finding { return s.w.atomicReplace() }

// Fsck checks the structure of the crashed file system. vfs builds a crash
// state from whole records and entries, naming only inodes that survived, and
// counts links from the names found, so the checks it makes (every entry
// resolves to the inode it names, every file reads to its size, link counts
// match the names) hold by construction: it finds nothing in a state vfs
// built, and stays for a checker list that names it.
type Fsck struct{}

func (Fsck) Name() string { return "fsck" }

func (Fsck) Check(*State) []Finding { return nil }

// CheckFunc adapts a function to a Checker.
type CheckFunc struct {
	ID string
	F  func(s *State) []Finding
}

func (c CheckFunc) Name() string             { return c.ID }
func (c CheckFunc) Check(s *State) []Finding { return c.F(s) }

// ReadFile returns the content of path in the crashed state (following a
// final symbolic link), and whether it is a regular file there.
func (s *State) ReadFile(path string) ([]byte, bool) { return s.w.readFile(path) }

// FS returns the crashed state as a file system of its own (built on the first
// call; the checker may change it).
func (s *State) FS() *vfs.FS {
	if s.fs == nil {
		s.fs = s.w.cs.FS()
		for _, p := range sortedKeys(s.w.masked) {
			_ = s.fs.Root().Unlink(p)
		}
	}
	return s.fs
}

package crash

import (
	"bytes"
	"context"
	"fmt"
	"hash/maphash"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"iosim/vfs"
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

// hashState hashes the content of a crashed file system: names, types, modes,
// sizes, data and symlink targets. The data of a file with nothing in flight at
// the crash point is its durable content, the same in every state until a sync
// changes it: its hash comes from e.dataHash.
//
// The same walk fills sc: what Durability and Fsck need of the namespace.
func (e *Explorer) hashState(fs *vfs.FS, x *point, cur []choice, sc *scan) uint64 {
	var h maphash.Hash
	h.SetSeed(e.hseed)
	sc.err = walk(fs.Root(), "/", func(p string, ino *vfs.Inode) error {
		h.WriteString(p)
		h.WriteByte(0)
		writeUint(&h, uint64(ino.Mode()))
		writeUint(&h, uint64(ino.Size()))
		if !ino.IsDir() {
			id := ino.Ino()
			if sc.names[id] == 0 {
				sc.paths[id] = p
			}
			sc.names[id]++
			sc.nlink[id] = ino.Nlink()
		}
		switch {
		case ino.IsRegular():
			id := ino.Ino()
			sc.byIno[id] = ino
			if x.inos[id] {
				// its data depends on its own units' choices alone
				key := make([]byte, 8, 8+len(x.unitsOf[id]))
				for k := range key {
					key[k] = byte(id >> (8 * k))
				}
				for _, u := range x.unitsOf[id] {
					key = append(key, byte(cur[u]))
				}
				d, ok := x.dataHash[string(key)]
				if !ok {
					var full bool
					d, full = e.hashData(ino)
					if !full {
						return fmt.Errorf("%s: does not read to its size %d", p, ino.Size())
					}
					x.dataHash[string(key)] = d
				}
				sc.sums[id] = d
				writeUint(&h, d)
				break
			}
			d, ok := e.dataHash[id]
			if !ok {
				d, _ = e.hashData(ino)
				e.dataHash[id] = d
			}
			sc.sums[id] = d
			writeUint(&h, d)
		case ino.IsSymlink():
			h.WriteString(ino.Target())
		}
		h.WriteByte(0)
		return nil
	})
	return h.Sum64()
}

func writeUint(h *maphash.Hash, v uint64) {
	var b [8]byte
	for k := range b {
		b[k] = byte(v >> (8 * k))
	}
	h.Write(b[:])
}

// scan is what the hashing walk of a state found.
type scan struct {
	byIno map[uint64]*vfs.Inode // regular files
	sums  map[uint64]uint64     // their data's hashes
	names map[uint64]uint32     // names of each non-directory
	nlink map[uint64]uint32
	paths map[uint64]string
	err   error // the walk stopped: an entry that does not resolve, a short read
}

func newScan() *scan {
	return &scan{byIno: map[uint64]*vfs.Inode{}, sums: map[uint64]uint64{}, names: map[uint64]uint32{}, nlink: map[uint64]uint32{}, paths: map[uint64]string{}}
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
	e.mu.Lock()
	delete(e.dataHash, ino)
	e.mu.Unlock()
}

// changedSince reports whether the crash point has changes in flight to ino
// (data, allocation, size) or, when path is set, namespace changes at path, made
// after seq.
func (s *State) changedSince(ino uint64, path string, seq uint64) bool {
	return s.x.dataSeq[ino] > seq || path != "" && s.x.metaSeq[path] > seq
}

// Durability checks that every byte a sync acknowledged (fsync, fdatasync,
// sync, syncfs, an O_SYNC or O_DSYNC write, the completion of an AIO fsync or
// fdsync) reads back, in whichever file still
// has that inode, unless changed since; and that every name a synced directory
// (or sync) made durable names the same inode, unless changed since.
type Durability struct{}

func (Durability) Name() string { return "durability" }

func (Durability) Check(s *State) []Finding {
	e := s.e
	var out []Finding
	byIno := s.scan.byIno
	for _, id := range slices.Sorted(maps.Keys(e.promises)) {
		got := byIno[id]
		if got == nil {
			continue // the name was never promised
		}
		for _, p := range e.promises[id] {
			if s.changedSince(id, "", p.seq) {
				continue
			}
			size, n, end := got.Size(), int64(len(p.data)), p.off+int64(len(p.data))
			ok := false
			if p.whole {
				n, end = p.size, p.size
				ok = size == p.size && s.scan.sums[id] == p.sum
			} else if size >= end {
				b := make([]byte, n)
				m, _ := got.ReadAt(b, p.off)
				ok = bytes.Equal(b[:m], p.data)
			}
			if !ok {
				out = append(out, Finding{Kind: "durability", Path: got.Path(), Message: fmt.Sprintf(
					"%d bytes acknowledged durable by %s read back differently after the crash (size %d, want %d)",
					n, e.ops[p.op], size, end)})
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(e.names)) {
		p := e.names[n]
		if s.changedSince(0, n, p.seq) {
			continue
		}
		if cur, err := e.fs.Root().Resolve(n, false); err != nil || cur.Ino() != p.ino {
			continue // changed since, durably
		}
		got, err := s.FS.Root().Resolve(n, false)
		switch {
		case err != nil:
			out = append(out, Finding{Kind: "durability", Path: n, Message: fmt.Sprintf("name made durable by %s is missing after the crash", e.ops[p.op])})
		case got.Ino() != p.ino:
			out = append(out, Finding{Kind: "durability", Path: n, Message: fmt.Sprintf("name made durable by %s names another file after the crash", e.ops[p.op])})
		}
	}
	return out
}

// AtomicReplace checks that a file replaced by rename holds, after a crash, its
// old content or the new one: never a mix, never nothing. A destination missing
// while the source name still holds the new content (a rename split as ALICE's
// model allows) counts as recoverable.
type AtomicReplace struct{}

func (AtomicReplace) Name() string { return "atomic-replace" }

func (AtomicReplace) Check(s *State) []Finding {
	e := s.e
	var out []Finding
	for _, r := range e.replaces {
		if r.op > s.Point.Index || s.changedSince(r.ino, r.dst, r.seq) {
			continue
		}
		if ps := e.promises[r.ino]; len(ps) > 0 && ps[0].seq > r.seq {
			continue
		}
		if cur, err := e.fs.Root().Resolve(r.dst, false); err != nil || cur.Ino() != r.ino {
			continue
		}
		got, err := s.FS.Root().Resolve(r.dst, false)
		if err != nil {
			if src, ok := s.ReadFile(r.src); ok && bytes.Equal(src, r.allowed[r.newIndex]) {
				continue // a split rename: recovery can finish it from the source name
			}
			out = append(out, Finding{Kind: "atomic-replace", Path: r.dst, Message: fmt.Sprintf("replaced by %s: missing after the crash", e.ops[r.op])})
			continue
		}
		have := readAll(got)
		ok := false
		for _, a := range r.allowed {
			ok = ok || bytes.Equal(have, a)
		}
		if !ok {
			what := "a mix of the old and new content"
			if len(bytes.Trim(have, "\x00")) == 0 {
				what = fmt.Sprintf("%d zero bytes", len(have))
			}
			out = append(out, Finding{Kind: "atomic-replace", Path: r.dst, Message: fmt.Sprintf(
				"replaced by %s: holds neither the old content nor the new (%d bytes) but %s", e.ops[r.op], len(r.allowed[r.newIndex]), what)})
		}
	}
	return out
}

// Fsck checks the structure of the crashed file system, as the walk that
// hashes each state found it: every entry resolves to the inode it names,
// every file with changes in flight at the crash point reads to its size (the
// others hold their durable content), link counts match the names found.
type Fsck struct{}

func (Fsck) Name() string { return "fsck" }

func (Fsck) Check(s *State) []Finding {
	sc := s.scan
	if sc.err != nil {
		return []Finding{{Kind: "fsck", Message: sc.err.Error()}}
	}
	var out []Finding
	for _, id := range slices.Sorted(maps.Keys(sc.names)) {
		if sc.names[id] != sc.nlink[id] {
			out = append(out, Finding{Kind: "fsck", Path: sc.paths[id], Message: fmt.Sprintf("link count %d, %d names", sc.nlink[id], sc.names[id])})
		}
	}
	return out
}

// External runs a command line in ALICE's convention: through the shell, with
// the crashed state of Dir materialised in a temporary directory and a file of
// what the program had written to its standard output appended as arguments;
// exit status 0 means consistent. The command runs in the working directory of
// the caller, so relative paths in it mean what they mean to the user; each
// run has a temporary directory of its own, in TMPDIR, removed when it ends.
type External struct {
	Command string
	Dir     string // the traced directory the program owns
}

func (x External) Name() string { return "checker" }
func (External) Parallel()      {}

func (x External) Check(s *State) []Finding {
	tmp, err := os.MkdirTemp("", "iosim-crash-")
	if err != nil {
		return []Finding{{Kind: "checker", Message: err.Error()}}
	}
	defer os.RemoveAll(tmp)
	dir := filepath.Join(tmp, "crashed")
	if err := Materialize(s.FS, x.Dir, dir); err != nil {
		return []Finding{{Kind: "checker", Message: fmt.Sprintf("materialising %s: %v", x.Dir, err)}}
	}
	out := filepath.Join(tmp, "stdout")
	if err := os.WriteFile(out, s.Stdout, 0o644); err != nil {
		return []Finding{{Kind: "checker", Message: err.Error()}}
	}
	scratch := filepath.Join(tmp, "tmp")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		return []Finding{{Kind: "checker", Message: err.Error()}}
	}
	cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", x.Command+` "$0" "$1"`, dir, out)
	cmd.Env = append(os.Environ(), "TMPDIR="+scratch)
	b, err := cmd.CombinedOutput()
	if err == nil {
		return nil
	}
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 6)
	if len(lines) > 5 {
		lines = lines[:5]
	}
	return []Finding{{Kind: "checker", Message: fmt.Sprintf("%s: %v: %s", x.Command, err, strings.Join(lines, " | "))}}
}

// Materialize writes the subtree at dir of fs into the host directory to (which
// must not exist): directories, regular files (holes as zeros) and symlinks.
func Materialize(fs *vfs.FS, dir, to string) error {
	root, err := fs.Root().Resolve(dir, true)
	if err != nil {
		// the directory itself did not survive: an empty one
		return os.MkdirAll(to, 0o755)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	base := root.Path()
	return walk(root, base, func(p string, ino *vfs.Inode) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, base), "/")
		dst := filepath.Join(to, filepath.FromSlash(rel))
		switch {
		case ino.IsDir():
			return os.MkdirAll(dst, 0o755)
		case ino.IsSymlink():
			return os.Symlink(ino.Target(), dst)
		case ino.IsRegular():
			return os.WriteFile(dst, readAll(ino), os.FileMode(ino.Mode()&0o777|0o600))
		}
		return nil
	})
}

// CheckFunc adapts a function to a Checker.
type CheckFunc struct {
	ID string
	F  func(s *State) []Finding
}

func (c CheckFunc) Name() string             { return c.ID }
func (c CheckFunc) Check(s *State) []Finding { return c.F(s) }

// ReadFile returns the content of path in the crashed state, and whether it exists.
func (s *State) ReadFile(path string) ([]byte, bool) {
	ino, err := s.FS.Root().Resolve(path, true)
	if err != nil || !ino.IsRegular() {
		return nil, false
	}
	return readAll(ino), true
}

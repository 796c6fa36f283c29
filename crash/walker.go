package crash

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"path"
	"slices"
	"strings"

	"github.com/iosim/iosim/vfs"
)

// A walker keeps what the built-in checks need of one crash state (the
// reachable names, the facts of the inodes they name, a hash of both, the
// findings of the promises the point can break) and moves with its
// vfs.CrashState from one state to the next: after a step it reads only the
// records and entries the changes set can alter (vfs.CrashState.Parts), and
// re-evaluates only the promises on what it found changed. Its content hash is
// a sum over reachable names, so it depends on what the state holds, not on the
// order the walker met it: a walker that built the state in one pass (init)
// and one that stepped to it agree.
type walker struct {
	e *Explorer
	x *point
	v view
	// cs is the state stepped (nil for a walk of a whole vfs.FS).
	cs   *vfs.CrashState
	cur  []choice // the choices applied to cs, per unit
	devs []int32  // the units whose choice in cur is not keep
	want []choice // goTo's scratch: keep between calls
	buf  []byte   // scratch's
	// the changes a step sets (set), and to what
	items []int
	survs []vfs.Survival

	masked map[string]int // destinations a split rename removed: how many split renames remove each
	ents   map[vfs.EntryName]*entVal
	dirs   map[uint64]*dirInfo
	names  map[uint64][]vfs.EntryName // the reachable names of each non-directory
	facts  map[uint64]fact
	h      uint64

	evIno  []uint64 // inodes and paths whose entries or facts changed (repeats allowed)
	evPath []string
	comps  map[int]int // components set by the step → one of their changes

	dataF map[uint64][]Finding
	nameF map[string]Finding
	replF map[int]Finding
}

type entVal struct {
	child uint64
	path  string
	c     uint64 // what the entry adds to h
	dir   bool
}

type dirInfo struct {
	path  string
	names map[string]bool
	ent   vfs.EntryName // the entry naming it (not for the root)
	root  bool
}

// fact is what the hash and the checks read of an inode.
type fact struct {
	ok     bool
	mode   uint32
	size   int64
	sum    uint64 // regular file: hash of its bytes
	target string
}

// view is what a walker reads of a crash state.
type view interface {
	readDir(path string) ([]vfs.Dirent, error)
	lookup(path string) (uint64, error)
	info(id uint64, path string) (mode uint32, size int64, target string, ok bool)
	// read appends the content of regular file id, named path, to b
	read(b []byte, id uint64, path string) []byte
}

type csView struct{ cs *vfs.CrashState }

func (v csView) readDir(p string) ([]vfs.Dirent, error) { return v.cs.ReadDir(p) }
func (v csView) lookup(p string) (uint64, error)        { return v.cs.LookupIno(p) }
func (v csView) info(id uint64, p string) (uint32, int64, string, bool) {
	st, err := v.cs.StatIno(id)
	if err != nil {
		return 0, 0, "", false
	}
	var target string
	if st.Mode&vfs.S_IFMT == vfs.S_IFLNK {
		target, _ = v.cs.Readlink(p)
	}
	return st.Mode, st.Size, target, true
}
func (v csView) read(b []byte, id uint64, _ string) []byte {
	b, _ = v.cs.AppendIno(b, id)
	return b
}

// fsView reads a whole file system (a state built by vfs.FS.CrashFrom or
// CrashState.FS).
type fsView struct{ fs *vfs.FS }

func (v fsView) readDir(p string) ([]vfs.Dirent, error) {
	ino, err := v.fs.Root().Resolve(p, false)
	if err != nil {
		return nil, err
	}
	ds, err := ino.Dirents()
	return slices.DeleteFunc(ds, func(d vfs.Dirent) bool { return d.Name == "." || d.Name == ".." }), err
}
func (v fsView) lookup(p string) (uint64, error) {
	ino, err := v.fs.Root().Resolve(p, false)
	if err != nil {
		return 0, err
	}
	return ino.Ino(), nil
}
func (v fsView) info(_ uint64, p string) (uint32, int64, string, bool) {
	ino, err := v.fs.Root().Resolve(p, false)
	if err != nil {
		return 0, 0, "", false
	}
	return ino.Mode(), ino.Size(), ino.Target(), true
}
func (v fsView) read(b []byte, _ uint64, p string) []byte {
	ino, err := v.fs.Root().Resolve(p, false)
	if err != nil || !ino.IsRegular() {
		return b
	}
	return append(b, readAll(ino)...)
}

func newWalker(e *Explorer, x *point, cs *vfs.CrashState) *walker {
	w := &walker{e: e, x: x, cs: cs, masked: map[string]int{}, comps: map[int]int{}}
	if cs != nil {
		w.v = csView{cs}
		// a new state keeps nothing of what was pending
		w.cur = make([]choice, len(x.units))
		w.want = make([]choice, len(x.units))
		w.devs = make([]int32, len(x.units))
		for k := range w.cur {
			w.cur[k] = drop
			w.devs[k] = int32(k)
		}
	}
	return w
}

// init walks the whole state and evaluates every promise of the point.
func (w *walker) init() {
	w.ents, w.dirs, w.names, w.facts = map[vfs.EntryName]*entVal{}, map[uint64]*dirInfo{}, map[uint64][]vfs.EntryName{}, map[uint64]fact{}
	w.dataF, w.nameF, w.replF = map[uint64][]Finding{}, map[string]Finding{}, map[int]Finding{}
	w.h = 0
	root := w.x.root
	w.dirs[root] = &dirInfo{path: "/", names: map[string]bool{}, root: true}
	w.addDir(root)
	for id := range w.x.act.data {
		w.evalData(id)
	}
	for n := range w.x.act.names {
		w.evalName(n)
	}
	for i := range w.x.act.repl {
		w.evalRepl(i)
	}
	w.evIno, w.evPath = w.evIno[:0], w.evPath[:0]
}

// goTo steps cs to the state of the closed deviations devs, changing only
// the units that deviate there or here; with walk, the walker follows (else
// init must follow).
func (w *walker) goTo(devs []dev, walk bool) {
	if len(w.comps) > 64 {
		w.comps = map[int]int{} // clearing a map costs its largest size
	} else {
		clear(w.comps)
	}
	var split []string
	for _, d := range devs {
		w.want[d.k] = d.c
	}
	for _, k := range w.devs {
		if w.want[k] == keep {
			split = w.set(int(k), keep, split)
		}
	}
	w.devs = w.devs[:0]
	for _, d := range devs {
		split = w.set(int(d.k), d.c, split)
		w.want[d.k] = keep
		w.devs = append(w.devs, d.k)
	}
	w.cs.SetMany(w.items, w.survs)
	for _, it := range w.items {
		w.comps[w.cs.Component(it)] = it
	}
	w.items, w.survs = w.items[:0], w.survs[:0]
	if !walk {
		return
	}
	// the records first: facts read afresh, then entries, then what names them
	var recs []uint64
	var ents []vfs.EntryName
	for _, k := range w.comps {
		r, en := w.cs.Parts(k)
		recs = append(recs, r...)
		ents = append(ents, en...)
	}
	for _, id := range recs {
		delete(w.facts, id)
	}
	for _, dst := range split {
		if dir, err := w.v.lookup(path.Dir(dst)); err == nil {
			ents = append(ents, vfs.EntryName{Dir: dir, Name: path.Base(dst)})
		}
	}
	// the directory entries gone or changed first: a directory renamed
	// back is added under its new name only once its old name is removed
	// (it has one name), whatever the order of the entries
	for _, en := range ents {
		w.dropStale(en)
	}
	for _, en := range ents {
		w.refreshEntry(en)
	}
	for _, id := range recs {
		w.refreshRec(id)
	}
	w.reevaluate()
}

// set gives unit k choice c, staging its changes' survivals for goTo to set
// in cs at once, and adds to split the destination of a rename whose split
// it changes.
func (w *walker) set(k int, c choice, split []string) []string {
	x := w.x
	old := w.cur[k]
	if old == c {
		return split
	}
	w.cur[k] = c
	if (old == splitRn) != (c == splitRn) {
		r := x.replaceOf[k]
		if c == splitRn {
			w.masked[r.dst]++
		} else if w.masked[r.dst]--; w.masked[r.dst] == 0 {
			delete(w.masked, r.dst)
		}
		split = append(split, r.dst)
	}
	nsec := w.e.fs.BlockSize() / vfs.SectorSize
	half := uint64(1)<<(nsec/2) - 1
	u := &x.units[k]
	for j, it := range u.items {
		w.items = append(w.items, it)
		w.survs = append(w.survs, survival(c, j, len(u.items), half))
	}
	return split
}

// survival is what choice c makes of item j of a unit of n items.
func survival(c choice, j, n int, half uint64) vfs.Survival {
	switch c {
	case keep:
		return vfs.Survival{Keep: true}
	case tornH:
		return vfs.Survival{Keep: true, Sectors: half}
	case prefixB:
		return vfs.Survival{Keep: j < (n+1)/2}
	}
	return vfs.Survival{}
}

func (w *walker) event(id uint64, p string) {
	w.evIno = append(w.evIno, id)
	w.evPath = append(w.evPath, p)
}

func (w *walker) addDir(id uint64) {
	ds, _ := w.v.readDir(w.dirs[id].path)
	for _, d := range ds {
		w.addEntry(id, d.Name, d.Ino)
	}
}

func (w *walker) addEntry(dir uint64, name string, child uint64) {
	di := w.dirs[dir]
	p := joinPath(di.path, name)
	if w.masked[p] > 0 {
		return
	}
	f := w.fact(child, p)
	if !f.ok {
		return
	}
	isDir := f.mode&vfs.S_IFMT == vfs.S_IFDIR
	if isDir && w.dirs[child] != nil {
		return // a directory has one name
	}
	k := vfs.EntryName{Dir: dir, Name: name}
	ev := &entVal{child: child, path: p, c: w.contrib(p, f), dir: isDir}
	w.ents[k] = ev
	w.h += ev.c
	di.names[name] = true
	w.event(child, p)
	if isDir {
		w.dirs[child] = &dirInfo{path: p, names: map[string]bool{}, ent: k}
		w.addDir(child)
	} else {
		w.names[child] = append(w.names[child], k)
	}
}

func (w *walker) removeEntry(k vfs.EntryName) {
	ev := w.ents[k]
	if ev == nil {
		return
	}
	w.h -= ev.c
	delete(w.ents, k)
	delete(w.dirs[k.Dir].names, k.Name)
	w.event(ev.child, ev.path)
	if ev.dir {
		for name := range w.dirs[ev.child].names {
			w.removeEntry(vfs.EntryName{Dir: ev.child, Name: name})
		}
		delete(w.dirs, ev.child)
		return
	}
	ns := slices.DeleteFunc(w.names[ev.child], func(n vfs.EntryName) bool { return n == k })
	if len(ns) == 0 {
		delete(w.names, ev.child)
	} else {
		w.names[ev.child] = ns
	}
}

// dropStale removes entry k if it names a directory and no longer names
// what the walker has (only a directory's name can keep another from being
// added).
func (w *walker) dropStale(k vfs.EntryName) {
	di, old := w.dirs[k.Dir], w.ents[k]
	if di == nil || old == nil || !old.dir {
		return
	}
	p := joinPath(di.path, k.Name)
	if id, err := w.v.lookup(p); err != nil || w.masked[p] > 0 || id != old.child {
		w.removeEntry(k)
	}
}

// refreshEntry reads entry k again.
func (w *walker) refreshEntry(k vfs.EntryName) {
	di := w.dirs[k.Dir]
	if di == nil {
		return // not reachable
	}
	p := joinPath(di.path, k.Name)
	id, err := w.v.lookup(p)
	old := w.ents[k]
	if err != nil || w.masked[p] > 0 {
		w.removeEntry(k)
		return
	}
	if old != nil && old.child == id {
		w.recontrib(k)
		return
	}
	w.removeEntry(k)
	w.addEntry(k.Dir, k.Name, id)
}

// recontrib recomputes what entry k adds, its inode's facts having changed.
func (w *walker) recontrib(k vfs.EntryName) {
	ev := w.ents[k]
	if ev == nil {
		return
	}
	f := w.fact(ev.child, ev.path)
	if !f.ok || (f.mode&vfs.S_IFMT == vfs.S_IFDIR) != ev.dir {
		child := ev.child
		w.removeEntry(k)
		w.addEntry(k.Dir, k.Name, child)
		return
	}
	c := w.contrib(ev.path, f)
	if c != ev.c {
		w.h += c - ev.c
		ev.c = c
	}
	w.event(ev.child, ev.path)
}

// refreshRec reads record id again: its entries if it is a reachable
// directory, and the entries naming it.
func (w *walker) refreshRec(id uint64) {
	if di := w.dirs[id]; di != nil {
		ds, _ := w.v.readDir(di.path)
		now := make(map[string]bool, len(ds))
		for _, d := range ds {
			now[d.Name] = true
			w.refreshEntry(vfs.EntryName{Dir: id, Name: d.Name})
		}
		if di = w.dirs[id]; di != nil {
			for name := range di.names {
				if !now[name] {
					w.removeEntry(vfs.EntryName{Dir: id, Name: name})
				}
			}
			if !di.root {
				w.recontrib(di.ent)
			}
		}
	}
	for _, k := range slices.Clone(w.names[id]) {
		w.recontrib(k)
	}
}

// fact returns the facts of inode id, named p.
func (w *walker) fact(id uint64, p string) fact {
	if f, ok := w.facts[id]; ok {
		return f
	}
	var f fact
	f.mode, f.size, f.target, f.ok = w.v.info(id, p)
	if f.ok && f.mode&vfs.S_IFMT == vfs.S_IFREG {
		f.sum = w.dataSum(id, p)
	}
	w.facts[id] = f
	return f
}

// dataSum hashes the bytes of regular file id, from the caches: the durable
// content of a file with nothing in flight, and per choice of its units for
// the others.
func (w *walker) dataSum(id uint64, p string) uint64 {
	x, e := w.x, w.e
	if w.cs == nil || w.cs.Made(id) {
		// a whole state, or a record made anew: its bytes depend on more
		// than its own changes' choices
		return maphash.Bytes(e.hseed, w.scratch(id, p))
	}
	if !x.inos[id] {
		e.dmu.Lock()
		d, ok := e.dataHash[id]
		e.dmu.Unlock()
		if !ok {
			d = maphash.Bytes(e.hseed, w.scratch(id, p))
			e.dmu.Lock()
			e.dataHash[id] = d
			e.dmu.Unlock()
		}
		return d
	}
	key := make([]byte, 8, 8+len(x.unitsOf[id]))
	for k := range 8 {
		key[k] = byte(id >> (8 * k))
	}
	for _, u := range x.unitsOf[id] {
		key = append(key, byte(w.cur[u]))
	}
	x.mu.Lock()
	d, ok := x.dataHash[string(key)]
	x.mu.Unlock()
	if !ok {
		d = maphash.Bytes(e.hseed, w.scratch(id, p))
		x.mu.Lock()
		x.dataHash[string(key)] = d
		x.mu.Unlock()
	}
	return d
}

// scratch reads regular file id, named p, into the walker's buffer: valid
// until the next call.
func (w *walker) scratch(id uint64, p string) []byte {
	w.buf = w.v.read(w.buf[:0], id, p)
	return w.buf
}

// contrib is what a name and the facts of its inode add to the hash.
func (w *walker) contrib(p string, f fact) uint64 {
	size := f.size
	if f.mode&vfs.S_IFMT == vfs.S_IFDIR {
		size = 0 // a directory's size is no part of what a program reads
	}
	var b [24]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(f.mode))
	binary.LittleEndian.PutUint64(b[8:], uint64(size))
	binary.LittleEndian.PutUint64(b[16:], f.sum)
	var h maphash.Hash
	h.SetSeed(w.e.hseed)
	h.WriteString(p)
	h.WriteByte(0)
	h.Write(b[:])
	h.WriteString(f.target)
	return h.Sum64()
}

// reevaluate evaluates again the promises on what the last step changed.
func (w *walker) reevaluate() {
	act := w.x.act
	slices.Sort(w.evIno)
	slices.Sort(w.evPath)
	for _, id := range slices.Compact(w.evIno) {
		if act.data[id] != nil {
			w.evalData(id)
		}
	}
	for _, p := range slices.Compact(w.evPath) {
		if _, ok := act.names[p]; ok {
			w.evalName(p)
		}
		for _, i := range act.replPaths[p] {
			w.evalRepl(i)
		}
	}
	w.evIno, w.evPath = w.evIno[:0], w.evPath[:0]
}

// evalData checks the data promises of file id.
func (w *walker) evalData(id uint64) {
	e := w.e
	delete(w.dataF, id)
	ns := w.names[id]
	if len(ns) == 0 {
		return // the name was never promised
	}
	p := w.ents[ns[0]].path
	for _, k := range ns[1:] {
		p = min(p, w.ents[k].path)
	}
	f := w.fact(id, p)
	if !f.ok || f.mode&vfs.S_IFMT != vfs.S_IFREG {
		return
	}
	var out []Finding
	for _, pr := range w.x.act.data[id] {
		n, end := int64(len(pr.data)), pr.off+int64(len(pr.data))
		ok := false
		if pr.whole {
			n, end = pr.size, pr.size
			ok = f.size == pr.size && f.sum == pr.sum
		} else if f.size >= end {
			ok = bytes.Equal(w.scratch(id, p)[pr.off:end], pr.data)
		}
		if !ok {
			// what the acknowledged range holds: against the bytes
			// acknowledged when they were kept, else as zeros or other bytes
			have := w.scratch(id, p)
			var what string
			if pr.whole {
				what = describeContent(have, nil, nil)
			} else {
				what = describeContent(have[min(pr.off, int64(len(have))):min(end, int64(len(have)))], pr.data, nil)
			}
			out = append(out, Finding{Kind: "durability", Path: p, Message: fmt.Sprintf(
				"%d bytes acknowledged durable by %s read back differently after the crash (size %d, want %d): %s",
				n, e.op(pr.op), f.size, end, what)})
		}
	}
	if out != nil {
		w.dataF[id] = out
	}
}

// lookup resolves p in the state, as a program finds it.
func (w *walker) lookup(p string) (uint64, bool) {
	if w.masked[p] > 0 {
		return 0, false
	}
	id, err := w.v.lookup(p)
	return id, err == nil
}

// evalName checks the promise that name n names the inode a synced directory
// made durable.
func (w *walker) evalName(n string) {
	p := w.x.act.names[n]
	delete(w.nameF, n)
	id, ok := w.lookup(n)
	switch {
	case !ok:
		w.nameF[n] = Finding{Kind: "durability", Path: n, Message: fmt.Sprintf("name made durable by %s is missing after the crash", w.e.op(p.op))}
	case id != p.ino:
		w.nameF[n] = Finding{Kind: "durability", Path: n, Message: fmt.Sprintf("name made durable by %s names another file after the crash", w.e.op(p.op))}
	}
}

// evalRepl checks that the file replaced by rename r holds the old or the
// new content.
func (w *walker) evalRepl(i int) {
	r := w.x.act.repl[i]
	delete(w.replF, i)
	e := w.e
	id, ok := w.lookup(r.dst)
	if !ok {
		if sid, ok := w.lookup(r.src); ok && w.isRegular(sid, r.src) && bytes.Equal(w.scratch(sid, r.src), r.allowed[r.newIndex]) {
			return // a split rename: recovery can finish it from the source name
		}
		w.replF[i] = Finding{Kind: "atomic-replace", Path: r.dst, Message: fmt.Sprintf("replaced by %s: missing after the crash", e.op(r.op))}
		return
	}
	have := w.scratch(id, r.dst)
	for _, a := range r.allowed {
		if bytes.Equal(have, a) {
			return
		}
	}
	w.replF[i] = Finding{Kind: "atomic-replace", Path: r.dst, Message: fmt.Sprintf(
		"replaced by %s: holds neither the old content nor the new (%d bytes): %s", e.op(r.op), len(r.allowed[r.newIndex]),
		describeContent(have, r.allowed[r.newIndex], r.allowed[:r.newIndex]))}
}

func (w *walker) isRegular(id uint64, p string) bool {
	mode, _, _, ok := w.v.info(id, p)
	return ok && mode&vfs.S_IFMT == vfs.S_IFREG
}

// durability returns the durability findings of the state, in a fixed order.
func (w *walker) durability() []Finding {
	var out []Finding
	if len(w.dataF) > 0 {
		for _, id := range sortedKeys(w.dataF) {
			out = append(out, w.dataF[id]...)
		}
	}
	if len(w.nameF) > 0 {
		for _, n := range sortedKeys(w.nameF) {
			out = append(out, w.nameF[n])
		}
	}
	return out
}

// atomicReplace returns the atomic-replace findings of the state.
func (w *walker) atomicReplace() []Finding {
	var out []Finding
	if len(w.replF) > 0 {
		for _, i := range sortedKeys(w.replF) {
			out = append(out, w.replF[i])
		}
	}
	return out
}

func sortedKeys[K interface{ ~uint64 | ~int | ~string }, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// readFile returns the content of path in the state, and whether it is a
// regular file there (following a final symbolic link).
func (w *walker) readFile(p string) ([]byte, bool) {
	for range 40 {
		id, ok := w.lookup(p)
		if !ok {
			return nil, false
		}
		mode, _, target, ok := w.v.info(id, p)
		switch {
		case !ok:
			return nil, false
		case mode&vfs.S_IFMT == vfs.S_IFLNK:
			if !strings.HasPrefix(target, "/") {
				target = path.Join(path.Dir(p), target)
			}
			p = target
			continue
		case mode&vfs.S_IFMT != vfs.S_IFREG:
			return nil, false
		}
		return w.v.read(nil, id, p), true
	}
	return nil, false
}

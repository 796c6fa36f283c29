package vfs

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strings"
	"sync"
)

// CrashSnapshot is what a power loss could find at one moment: the durable
// state and the changes then pending, frozen, so that crash states are built
// and examined from it without the file system's lock while the file system
// goes on. Take one with FS.Snapshot; its cost is in proportion to what is
// pending and to the durable records changed since the last snapshot, never
// to the namespace nor to the bytes of file data: the durable records are
// shared with the file system copy-on-write, and so are data blocks. The
// first State of a snapshot also splits its changes into components (see
// crashComps), in proportion to what is pending.
//
// A snapshot is immutable and safe for concurrent use: any number of
// goroutines may each build and explore their own CrashStates from it.
type CrashSnapshot struct {
	cfg     config
	nextIno uint64
	tick    Timespec
	root    uint64
	version uint64               // FS.durVersion: snapshots of one version share their durable state
	base    map[uint64]*durInode // the durable records; never changed
	ram     map[uint64]bool      // the SetRAM directories: empty in every state
	ramPath []string             // the SetRAM paths
	pend    []Pending
	ops     []crashOp // aligned with pend: what applying each needs

	compOnce sync.Once
	comps    *crashComps
}

// crashOp is a pending change as a crash state applies it, free of the
// running file system's inodes.
type crashOp struct {
	kind   PendingKind
	ino    uint64
	mode   uint32 // for a record made by this change (newDurInode)
	target string
	off, n int64     // data: the byte range (a block for PendingWrite/Device)
	size   int64     // PendingSize
	attr   *durInode // PendingAttr: mode, owner and times to copy
	src    *fileData // data: where the surviving bytes come from
	meta   *metaRec  // PendingMeta
}

// Snapshot freezes what a power loss could find now (see CrashSnapshot).
func (fs *FS) Snapshot() *CrashSnapshot {
	fs.lock()
	defer fs.mu.Unlock()
	return fs.snapshotLocked(true)
}

// snapshotLocked lists the pending changes in the order they were made. With
// freeze, the snapshot shares the durable table copy-on-write and gets its
// own (copy-on-write) view of the data the changes would write, so it stays
// valid once fs.mu is released; without, it reads fs's own, valid only while
// fs.mu is held (CrashWith, RandomCrash, Pending).
func (fs *FS) snapshotLocked(freeze bool) *CrashSnapshot {
	bs := fs.cfg.blockSize
	snap := &CrashSnapshot{cfg: fs.cfg, nextIno: fs.nextIno, tick: fs.tick, root: fs.durRoot, base: fs.dur, version: fs.durVersion,
		ram: fs.ramDirsLocked(), ramPath: slices.Clone(fs.ram)}
	snap.cfg.injector = nil
	if freeze {
		// The snapshot shares the durable table copy-on-write (durMut): the
		// records changed since the last snapshot get their data's chunks
		// marked shared, as shareData does, so that no one writes them in
		// place any more; the others were marked then.
		for _, id := range fs.durTouched {
			if d := fs.dur[id]; d != nil && d.data != nil {
				for _, c := range d.data.chunks {
					if c.owner != nil {
						c.owner = nil
					}
				}
			}
		}
		clear(fs.durTouched)
		fs.durTouched = fs.durTouched[:0]
		fs.durShared = true
		fs.durGen++
	}
	// Drop the inodes that have nothing pending any more (fsync does not take
	// them off the list, only sync(2) did), so that the list, and this walk,
	// stay in proportion to what is pending.
	fs.prunePending()
	n := len(fs.metaLog)
	for _, i := range fs.pending {
		n += len(i.pend.dirty) + len(i.pend.ranges) + len(i.pend.hist) + 2
	}
	for _, i := range fs.devInodes {
		n += len(i.pend.dev)
	}
	type item struct {
		seq uint64
		pos int32
	}
	order := make([]item, 0, n)
	pend := make([]Pending, 0, n)
	ops := make([]crashOp, 0, n)
	add := func(p Pending, op crashOp) {
		order = append(order, item{p.Seq, int32(len(pend))})
		pend = append(pend, p)
		ops = append(ops, op)
	}
	source := func(i *Inode, d *fileData) *fileData {
		if freeze {
			if d == i.data {
				i.dataShared = true
			}
			return shareData(d)
		}
		return d
	}
	paths := make(map[*Inode]string, len(fs.pending)+len(fs.devInodes)+1)
	pathOf := func(i *Inode) string {
		p, ok := paths[i]
		if !ok {
			p = i.pathLocked()
			paths[i] = p
		}
		return p
	}
	for _, i := range fs.pending {
		p := &i.pend
		path := pathOf(i)
		base := crashOp{ino: i.ino, mode: i.mode, target: i.target}
		var src *fileData
		if len(p.dirty) > 0 || len(p.ranges) > 0 {
			src = source(i, i.data)
		}
		for _, b := range sortedBlocks(p.dirty) {
			op := base
			op.kind, op.off, op.n, op.src = PendingWrite, b*bs, bs, src
			add(Pending{Seq: p.dirty[b], Kind: PendingWrite, Ino: i.ino, Path: path, Off: b * bs, Len: bs}, op)
		}
		for _, v := range p.hist {
			// earlier values (WithHistory): of blocks still dirty, and of a
			// size still pending
			op := base
			if v.block < 0 {
				if p.sizeSeq == 0 || v.seq >= p.sizeSeq {
					continue
				}
				op.kind, op.size = PendingSize, v.size
				add(Pending{Seq: v.seq, Kind: PendingSize, Ino: i.ino, Path: path, Size: v.size}, op)
				continue
			}
			if seq, ok := p.dirty[v.block]; ok && v.seq >= seq || !ok && !v.gone {
				continue
			}
			vsrc := v.data
			if freeze {
				vsrc = shareData(v.data)
			}
			op.kind, op.off, op.n, op.src = PendingWrite, v.block*bs, bs, vsrc
			add(Pending{Seq: v.seq, Kind: PendingWrite, Ino: i.ino, Path: path, Off: v.block * bs, Len: bs}, op)
		}
		for _, r := range p.ranges {
			op := base
			op.kind, op.off, op.n, op.src = PendingAlloc, r.off, r.n, src
			if r.data != nil {
				op.src = r.data
				if freeze {
					op.src = shareData(r.data)
				}
			}
			add(Pending{Seq: r.seq, Kind: PendingAlloc, Ino: i.ino, Path: path, Off: r.off, Len: r.n}, op)
		}
		if p.sizeSeq != 0 {
			op := base
			op.kind, op.size = PendingSize, i.size
			add(Pending{Seq: p.sizeSeq, Kind: PendingSize, Ino: i.ino, Path: path, Size: i.size}, op)
		}
		if p.attrSeq != 0 {
			op := base
			op.kind = PendingAttr
			op.attr = &durInode{mode: i.mode, uid: i.uid, gid: i.gid, atime: i.atime, mtime: i.mtime, ctime: i.ctime}
			add(Pending{Seq: p.attrSeq, Kind: PendingAttr, Ino: i.ino, Path: path}, op)
		}
	}
	for _, i := range fs.devInodes {
		path := pathOf(i)
		src := source(i, i.pend.devData)
		for _, b := range sortedBlocks(i.pend.dev) {
			op := crashOp{kind: PendingDevice, ino: i.ino, mode: i.mode, target: i.target, off: b * bs, n: bs, src: src}
			add(Pending{Seq: i.pend.dev[b], Kind: PendingDevice, Ino: i.ino, Path: path, Off: b * bs, Len: bs}, op)
		}
	}
	for _, m := range fs.metaLog {
		if m.dead {
			continue
		}
		p := Pending{Seq: m.seq, Kind: PendingMeta, Ino: m.node.ino, Path: joinDirPath(pathOf(m.dir), m.rec.name)}
		switch m.rec.kind {
		case metaCreate:
			p.Op = "create"
		case metaRemove:
			p.Op = "remove"
		case metaRename:
			p.Op, p.To = "rename", joinDirPath(pathOf(m.dir2), m.rec.name2)
		case metaExchange:
			p.Op, p.To = "exchange", joinDirPath(pathOf(m.dir2), m.rec.name2)
		}
		add(p, crashOp{kind: PendingMeta, ino: m.node.ino, meta: &m.rec})
	}
	// Stable order: by seq, then by the order listed (the blocks of one write
	// share a seq and are listed by block).
	slices.SortFunc(order, func(a, b item) int {
		switch {
		case a.seq < b.seq:
			return -1
		case a.seq > b.seq:
			return 1
		}
		return int(a.pos) - int(b.pos)
	})
	// Permute in place: position k takes the item listed at order[k].pos,
	// one cycle of the permutation at a time.
	for k := range order {
		if order[k].pos < 0 {
			continue
		}
		p, op := pend[k], ops[k]
		for j := k; ; {
			src := int(order[j].pos)
			order[j].pos = -1
			if src == k {
				pend[j], ops[j] = p, op
				break
			}
			pend[j], ops[j] = pend[src], ops[src]
			j = src
		}
	}
	for k := range pend {
		pend[k].index, pend[k].from = int32(k), snap
	}
	snap.pend, snap.ops = pend, ops
	return snap
}

// Pending returns the changes pending at the snapshot, in the order they were
// made, as FS.Pending returned them then. The slice is the snapshot's: do not
// modify it.
func (s *CrashSnapshot) Pending() []Pending { return s.pend }

// State returns the strict crash state of the snapshot: only durable state
// survived, nothing of what was pending. Change it with Set, Apply and Drop.
func (s *CrashSnapshot) State() *CrashState {
	c := s.components()
	st := &CrashState{snap: s, keep: make([]Survival, len(s.pend)), recs: map[uint64]*ovRec{}, incr: true}
	st.chash = make([]uint64, len(c.comps))
	st.staleSet = make([]bool, len(c.comps))
	st.hash = mix64(s.version ^ 0x76657273)
	return st
}

// replay returns the crash state with keep applied in one pass (no
// incremental bookkeeping: FS is all it is for).
func (s *CrashSnapshot) replay(keep []Survival) *CrashState {
	st := &CrashState{snap: s, keep: keep, recs: map[uint64]*ovRec{}}
	for k := range keep {
		if keep[k].Keep {
			st.apply(k)
		}
	}
	return st
}

// CrashState is one state a power loss can leave: the snapshot's durable
// state with a chosen subset of its pending changes applied in the order they
// were made (some data blocks possibly torn at sectors), exactly the state
// FS.CrashWith would build with the same choices at the snapshot's moment.
//
// It is an overlay on the snapshot's durable records, holding only what the
// surviving changes altered, and it moves from one state to the next by
// applying or dropping one change: Set costs in proportion to the changes
// that can interact with the one set (those on the same inodes and directory
// entries), not to the namespace nor to the other changes. Lookups (Stat,
// ReadFile, ReadDir, Readlink) read the overlay, then the snapshot; Changed
// lists what differs from the strict state, so that a checker reads only
// that; Hash identifies the content for deduplication; FS builds a full file
// system when one is needed.
//
// A CrashState is not safe for concurrent use while it is changed (Hash,
// which brings the hash up to date, counts as a change); lookups alone may
// run concurrently. Give each goroutine its own (Clone, or
// CrashSnapshot.State).
type CrashState struct {
	snap *CrashSnapshot
	keep []Survival
	// recs holds the records the surviving changes altered (gone: removed);
	// other records are the snapshot's.
	recs map[uint64]*ovRec
	// ents holds the changed entries of the stable directories (see
	// crashComps), by directory then name; 0 is a removed entry.
	ents  map[uint64]map[string]uint64
	incr  bool     // built by State: stable directories' entries live in ents
	chash []uint64 // per component: what it adds to hash (compDelta)
	// stale lists the components changed since hash was last brought up to
	// date (Hash does, on demand: a state stepped but never hashed pays
	// nothing for it); staleSet marks them.
	stale    []int32
	staleSet []bool
	// SetMany's scratch: the components to replay, marked
	redoList []int32
	redoSet  []bool
	hash     uint64
	buf      []byte // a block, for hashing
}

// ovRec is a durable record of a crash state.
type ovRec struct {
	d    durInode
	gone bool
	// phantom: the directory does not exist in the state (its creation was
	// lost, or it was removed), but changes that survived wrote entries into
	// it: d.entries holds them and nothing else of d is meaningful. No
	// lookup sees them; a change that makes the record (ensure: a rename of
	// the directory, its attributes) finds them there. Entries are part of
	// the directory's blocks, not of its inode: they do not depend on
	// whether the record survived, so a stable directory (crashComps) keeps
	// them apart from its record, and the one-pass replay, which keeps them
	// in the record, keeps them in a phantom when there is none.
	phantom bool
	// base: d was copied from the snapshot's record, whose entries it still
	// points to (never changed); entry changes are in delta (0: removed).
	// Otherwise d is a new record and d.entries its own.
	base  bool
	delta map[string]uint64
}

// Set makes change k (an index into the snapshot's Pending) survive as v
// says (Keep false: it is lost).
func (st *CrashState) Set(k int, v Survival) {
	if !v.Keep {
		v = Survival{}
	}
	if st.keep[k] == v {
		return
	}
	st.keep[k] = v
	st.redo(st.snap.comps.opComp[k])
}

// SetMany is Set of each change ks[i] to vs[i] in turn, replaying each
// component they touch once (a write of many blocks is many changes of one
// component).
func (st *CrashState) SetMany(ks []int, vs []Survival) {
	comps := st.snap.comps
	if st.redoSet == nil {
		st.redoSet = make([]bool, len(comps.comps))
	}
	todo := st.redoList[:0]
	for i, k := range ks {
		v := vs[i]
		if !v.Keep {
			v = Survival{}
		}
		if st.keep[k] == v {
			continue
		}
		st.keep[k] = v
		if n := comps.opComp[k]; !st.redoSet[n] {
			st.redoSet[n] = true
			todo = append(todo, n)
		}
	}
	for _, n := range todo {
		st.redoSet[n] = false
		st.redo(n)
	}
	st.redoList = todo[:0]
}

// Apply makes change p (from this state's snapshot's Pending) survive whole.
func (st *CrashState) Apply(p Pending) { st.Set(st.index(p), Survival{Keep: true}) }

// Drop makes change p (from this state's snapshot's Pending) lost.
func (st *CrashState) Drop(p Pending) { st.Set(st.index(p), Survival{}) }

func (st *CrashState) index(p Pending) int {
	if p.from != st.snap {
		panic("vfs: CrashState: a Pending from another snapshot")
	}
	return int(p.index)
}

// Survival returns the choice made for change k.
func (st *CrashState) Survival(k int) Survival { return st.keep[k] }

// Hash returns a 64-bit hash of the state's durable content (entries, types,
// modes, owners, link counts, times, sizes, bytes, link targets), for
// deduplication: states hold the same durable state if and only if their
// hashes are equal, but for 64-bit collisions. It compares across the
// snapshots of one durable table (taken with no durable change between them,
// at different crash points of a run that has not synced since), not across
// others. States that differ only in records no name reaches (a file whose
// name did not survive) differ for the hash though no program sees it.
func (st *CrashState) Hash() uint64 {
	for _, n := range st.stale {
		st.staleSet[n] = false
		h := st.compDelta(n)
		st.hash += h - st.chash[n]
		st.chash[n] = h
	}
	st.stale = st.stale[:0]
	return st.hash
}

// Clone returns an independent copy of the state, for another goroutine.
func (st *CrashState) Clone() *CrashState {
	c := &CrashState{snap: st.snap, keep: slices.Clone(st.keep), recs: make(map[uint64]*ovRec, len(st.recs)),
		incr: st.incr, chash: slices.Clone(st.chash), hash: st.hash, stale: slices.Clone(st.stale), staleSet: slices.Clone(st.staleSet)}
	for id, o := range st.recs {
		cp := *o
		cp.delta = maps.Clone(o.delta)
		if !o.base && o.d.entries != nil {
			cp.d.entries = maps.Clone(o.d.entries)
		}
		if o.d.data != nil {
			// Both get their own fileData (shareData, not one shared object
			// that each would clone on its first change, racing on its chunks).
			o.d.data, o.d.dataShared = shareData(o.d.data), true
			cp.d.data, cp.d.dataShared = shareData(o.d.data), true
		}
		c.recs[id] = &cp
	}
	if st.ents != nil {
		c.ents = make(map[uint64]map[string]uint64, len(st.ents))
		for d, m := range st.ents {
			c.ents[d] = maps.Clone(m)
		}
	}
	return c
}

// FS returns the state as a file system of its own (as FS.CrashWith does),
// sharing file data copy-on-write; the state is left as it was. A directory
// that the state names twice (a rename survived, the earlier one that moved
// it did not) keeps only its first name in sorted depth-first order.
func (st *CrashState) FS() *FS {
	s := st.snap
	return materialize(s.cfg, s.nextIno, s.tick, s.root, st, s.ram, s.ramPath)
}

// apply applies change k as st.keep[k] says.
func (st *CrashState) apply(k int) {
	op := &st.snap.ops[k]
	if op.kind == PendingMeta {
		applyMeta(st, op.meta)
		return
	}
	d := st.ensure(op.ino, op.mode, op.target)
	switch op.kind {
	case PendingWrite, PendingDevice:
		data := d.ownData()
		if sec := st.keep[k].Sectors; sec != 0 {
			for j := int64(0); j < op.n/SectorSize; j++ {
				if sec&(1<<j) != 0 {
					data.CopyRange(op.src, op.off+j*SectorSize, SectorSize)
				}
			}
		} else {
			data.CopyRange(op.src, op.off, op.n)
		}
	case PendingAlloc:
		d.ownData().CopyRange(op.src, op.off, op.n)
	case PendingSize:
		d.size = op.size
	case PendingAttr:
		d.mode, d.uid, d.gid = op.attr.mode, op.attr.uid, op.attr.gid
		d.atime, d.mtime, d.ctime = op.attr.atime, op.attr.mtime, op.attr.ctime
	}
}

// The durTable of a crash state.

func (st *CrashState) rec(id uint64) *durInode {
	if o := st.recs[id]; o != nil {
		if o.gone || o.phantom {
			return nil
		}
		return &o.d
	}
	return st.snap.base[id]
}

func (st *CrashState) ensure(id uint64, mode uint32, target string) *durInode {
	o := st.recs[id]
	if o != nil && !o.gone && !o.phantom {
		return &o.d
	}
	if o == nil {
		if b := st.snap.base[id]; b != nil {
			o = &ovRec{d: *b, base: true}
			o.d.dataShared = o.d.data != nil
			st.recs[id] = o
			return &o.d
		}
	}
	n := &ovRec{d: *newDurInode(st.snap.cfg.blockSize, mode, target)}
	if o != nil && o.phantom && n.d.entries != nil {
		n.d.entries = o.d.entries
	}
	st.recs[id] = n
	return &n.d
}

// holder returns the record that holds the entries of unstable directory
// dir: its own (copied from the snapshot's on first need), or a phantom
// when the directory does not exist in the state.
func (st *CrashState) holder(dir uint64) *ovRec {
	if st.rec(dir) != nil {
		st.ensure(dir, S_IFDIR, "")
		return st.recs[dir]
	}
	o := st.recs[dir]
	if o == nil || !o.phantom {
		o = &ovRec{phantom: true, d: durInode{entries: map[string]uint64{}}}
		st.recs[dir] = o
	}
	return o
}

func (st *CrashState) drop(id uint64) {
	if st.rec(id) == nil {
		return
	}
	d := st.ensure(id, 0, "")
	d.links--
	if d.links <= 0 {
		st.recs[id] = &ovRec{gone: true}
	}
}

// stable reports whether directory dir's entries live in st.ents.
func (st *CrashState) stable(dir uint64) bool { return st.incr && st.snap.comps.stable(dir) }

func (st *CrashState) entry(dir uint64, name string) (uint64, bool) {
	if !st.stable(dir) {
		st.holder(dir)
	}
	return st.peek(dir, name)
}

// peek is entry without making the directory's record: lookups only read.
func (st *CrashState) peek(dir uint64, name string) (uint64, bool) {
	if st.stable(dir) {
		if id, ok := st.ents[dir][name]; ok {
			return id, id != 0
		}
	} else if o := st.recs[dir]; o != nil {
		if o.gone {
			return 0, false
		}
		if !o.base {
			id, ok := o.d.entries[name]
			return id, ok
		}
		if id, ok := o.delta[name]; ok {
			return id, id != 0
		}
	}
	if b := st.snap.base[dir]; b != nil {
		id, ok := b.entries[name]
		return id, ok
	}
	return 0, false
}

func (st *CrashState) setEntry(dir uint64, name string, id uint64) {
	if st.stable(dir) {
		if st.ents == nil {
			st.ents = map[uint64]map[string]uint64{}
		}
		m := st.ents[dir]
		if m == nil {
			m = map[string]uint64{}
			st.ents[dir] = m
		}
		m[name] = id
		return
	}
	o := st.holder(dir)
	if !o.base {
		if id == 0 {
			delete(o.d.entries, name)
		} else {
			o.d.entries[name] = id
		}
		return
	}
	if o.delta == nil {
		o.delta = map[string]uint64{}
	}
	o.delta[name] = id
}

func (st *CrashState) delEntry(dir uint64, name string) { st.setEntry(dir, name, 0) }

func (st *CrashState) eachEntry(dir uint64, d *durInode, fn func(string, uint64)) {
	var delta map[string]uint64
	if st.stable(dir) {
		delta = st.ents[dir]
	} else if o := st.recs[dir]; o != nil {
		if !o.base {
			for name, id := range d.entries {
				fn(name, id)
			}
			return
		}
		delta = o.delta
	}
	for name, id := range d.entries {
		if _, ok := delta[name]; !ok {
			fn(name, id)
		}
	}
	for name, id := range delta {
		if id != 0 {
			fn(name, id)
		}
	}
}

// crashComps splits a snapshot's pending changes into components: changes in
// different components read and write disjoint parts of the durable state
// (records and directory entries), so they commute, and a state is the
// snapshot's durable state with each component's surviving changes replayed
// in order on its own. Setting one change replays its component only.
//
// The parts ("keys") are: a record (its existence, link count, attributes,
// size, data, and for an unstable directory its entries), and an entry of a
// stable directory. A directory is stable when it is durable or a pending
// change creates it, and no pending change can remove its record (it can be
// named by no entry that a change removes or replaces): a change to one of
// its entries then touches that entry alone, whether the record exists or
// not (a directory whose creation was lost holds the entries that survived
// without it as a phantom: see ovRec).
type crashComps struct {
	unstable map[uint64]bool
	made     map[uint64]bool // directories a pending change creates
	base     map[uint64]*durInode
	opComp   []int32
	comps    []crashComp
	// full caches fullHash, per record.
	full sync.Map
}

func (c *crashComps) stable(dir uint64) bool {
	return (c.base[dir] != nil || c.made[dir]) && !c.unstable[dir]
}

type entKey struct {
	dir  uint64
	name string
}

type crashComp struct {
	ops    []int32      // its changes, in order
	inos   []uint64     // recs and the directories of ents, sorted (Touched)
	recs   []uint64     // the records it owns
	ents   []entKey     // the stable directories' entries it owns
	blocks []blockOfIno // the blocks its data changes touch, for hashing
	names  []EntryName  // ents, exported (Parts)
}

// EntryName is an entry of a directory: the directory's inode and the name.
type EntryName struct {
	Dir  uint64
	Name string
}

type blockOfIno struct {
	ino   uint64
	block int64
}

func (s *CrashSnapshot) components() *crashComps {
	s.compOnce.Do(func() { s.comps = s.buildComponents() })
	return s.comps
}

func (s *CrashSnapshot) buildComponents() *crashComps {
	c := &crashComps{unstable: map[uint64]bool{}, made: map[uint64]bool{}, base: s.base, opComp: make([]int32, len(s.ops))}
	// The inodes each entry may name: its durable one, and every one a
	// change puts there.
	cand := map[entKey][]uint64{}
	addCand := func(dir uint64, name string, id uint64) {
		k := entKey{dir, name}
		if !slices.Contains(cand[k], id) {
			cand[k] = append(cand[k], id)
		}
	}
	baseCand := func(dir uint64, name string) {
		if b := s.base[dir]; b != nil {
			if id, ok := b.entries[name]; ok {
				addCand(dir, name, id)
			}
		}
	}
	for k := range s.ops {
		m := s.ops[k].meta
		if m == nil {
			continue
		}
		baseCand(m.dir, m.name)
		switch m.kind {
		case metaCreate:
			addCand(m.dir, m.name, m.node)
			if m.mode&S_IFMT == S_IFDIR {
				c.made[m.node] = true
			}
		case metaRename:
			baseCand(m.dir2, m.name2)
			addCand(m.dir2, m.name2, m.node)
		case metaExchange:
			baseCand(m.dir2, m.name2)
			addCand(m.dir, m.name, m.node2)
			addCand(m.dir2, m.name2, m.node)
		}
	}
	// Records a change may remove: what a remove, a create or a rename
	// replaces (never the inode a create or rename puts there: applyMeta
	// drops the old one only when it is another).
	for k := range s.ops {
		m := s.ops[k].meta
		if m == nil {
			continue
		}
		var ids []uint64
		switch m.kind {
		case metaCreate, metaRemove:
			ids = cand[entKey{m.dir, m.name}]
		case metaRename:
			ids = cand[entKey{m.dir2, m.name2}]
		}
		for _, id := range ids {
			if id != m.node || m.kind == metaRemove {
				c.unstable[id] = true
			}
		}
	}
	// Union-find over keys.
	parent := make([]int32, 0, 2*len(s.ops))
	recKey := make(map[uint64]int32, len(s.ops))
	entKeys := map[entKey]int32{}
	type keyOf struct {
		rec uint64
		ent entKey
	}
	keys := make([]keyOf, 0, 2*len(s.ops))
	newKey := func(k keyOf) int32 {
		parent = append(parent, int32(len(parent)))
		keys = append(keys, k)
		return int32(len(parent) - 1)
	}
	rk := func(id uint64) int32 {
		k, ok := recKey[id]
		if !ok {
			k = newKey(keyOf{rec: id})
			recKey[id] = k
		}
		return k
	}
	ek := func(dir uint64, name string) int32 {
		if !c.stable(dir) {
			return rk(dir)
		}
		e := entKey{dir, name}
		k, ok := entKeys[e]
		if !ok {
			k = newKey(keyOf{ent: e})
			entKeys[e] = k
		}
		return k
	}
	find := func(k int32) int32 {
		for parent[k] != k {
			parent[k] = parent[parent[k]]
			k = parent[k]
		}
		return k
	}
	union := func(a, b int32) {
		a, b = find(a), find(b)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
	}
	first := make([]int32, len(s.ops))
	for k := range s.ops {
		op := &s.ops[k]
		m := op.meta
		if m == nil {
			first[k] = rk(op.ino)
			continue
		}
		f := ek(m.dir, m.name)
		first[k] = f
		joinCands := func(dir uint64, name string) {
			for _, id := range cand[entKey{dir, name}] {
				union(f, rk(id))
			}
		}
		switch m.kind {
		case metaCreate:
			union(f, rk(m.node))
			joinCands(m.dir, m.name)
		case metaRemove:
			joinCands(m.dir, m.name)
		case metaRename:
			union(f, ek(m.dir2, m.name2))
			union(f, rk(m.node))
			joinCands(m.dir2, m.name2)
		case metaExchange:
			union(f, ek(m.dir2, m.name2))
			union(f, rk(m.node))
			union(f, rk(m.node2))
		}
	}
	// Number the components by their root key, then lay their changes,
	// keys and blocks out in shared arrays, component after component.
	compOf := make([]int32, len(keys)) // root key → component + 1
	for k := range s.ops {
		r := find(first[k])
		if compOf[r] == 0 {
			c.comps = append(c.comps, crashComp{})
			compOf[r] = int32(len(c.comps))
		}
		c.opComp[k] = compOf[r] - 1
	}
	keyComp := make([]int32, len(keys))
	for k := range keys {
		keyComp[k] = compOf[find(int32(k))] - 1
	}
	ops := carve(len(c.comps), func(yield func(n int32, k int32)) {
		for k, n := range c.opComp {
			yield(n, int32(k))
		}
	})
	recs := carve(len(c.comps), func(yield func(n int32, id uint64)) {
		for k, key := range keys {
			if key.ent == (entKey{}) {
				yield(keyComp[k], key.rec)
			}
		}
	})
	ents := carve(len(c.comps), func(yield func(n int32, e entKey)) {
		for k, key := range keys {
			if key.ent != (entKey{}) {
				yield(keyComp[k], key.ent)
			}
		}
	})
	inos := carve(len(c.comps), func(yield func(n int32, id uint64)) {
		for k, key := range keys {
			if key.ent != (entKey{}) {
				yield(keyComp[k], key.ent.dir)
			} else {
				yield(keyComp[k], key.rec)
			}
		}
	})
	bs := s.cfg.blockSize
	seen := map[blockOfIno]bool{}
	var blocks []blockOfIno
	ends := make([]int, len(c.comps))
	for n := range c.comps {
		cc := &c.comps[n]
		cc.ops, cc.recs, cc.ents = ops[n], recs[n], ents[n]
		cc.names = make([]EntryName, len(cc.ents))
		for j, e := range cc.ents {
			cc.names[j] = EntryName{e.dir, e.name}
		}
		slices.Sort(inos[n])
		cc.inos = slices.Compact(inos[n])
		for _, k := range cc.ops {
			op := &s.ops[k]
			if op.src == nil {
				continue
			}
			for b := op.off / bs; b <= (op.off+op.n-1)/bs; b++ {
				if bo := (blockOfIno{op.ino, b}); !seen[bo] {
					seen[bo] = true
					blocks = append(blocks, bo)
				}
			}
		}
		ends[n] = len(blocks)
	}
	start := 0
	for n := range c.comps {
		c.comps[n].blocks = blocks[start:ends[n]:ends[n]]
		start = ends[n]
	}
	return c
}

// carve groups the items seq yields (it is called twice, yielding the same)
// by their component n, in the order yielded, in slices of one shared array.
func carve[T any](comps int, seq func(yield func(n int32, v T))) [][]T {
	starts := make([]int, comps+1)
	seq(func(n int32, _ T) { starts[n+1]++ })
	for n := range comps {
		starts[n+1] += starts[n]
	}
	all := make([]T, starts[comps])
	pos := slices.Clone(starts[:comps])
	seq(func(n int32, v T) {
		all[pos[n]] = v
		pos[n]++
	})
	out := make([][]T, comps)
	for n := range out {
		out[n] = all[starts[n]:starts[n+1]:starts[n+1]]
	}
	return out
}

// fullHash is the hash of the data and entries of the snapshot's record id,
// which a state that removes or remakes it takes from its hash; computed
// once per snapshot, on first need (by any of the goroutines exploring it).
func (c *crashComps) fullHash(id uint64, buf []byte) uint64 {
	if h, ok := c.full.Load(id); ok {
		return h.(uint64)
	}
	d := c.base[id]
	h := dataHash(d, buf)
	for name, e := range d.entries {
		h += entHash(id, name, e)
	}
	c.full.Store(id, h)
	return h
}

// redo replays component n after a change of its survival choices.
func (st *CrashState) redo(n int32) {
	cc := &st.snap.comps.comps[n]
	for _, id := range cc.recs {
		delete(st.recs, id)
	}
	for _, e := range cc.ents {
		delete(st.ents[e.dir], e.name)
	}
	for _, k := range cc.ops {
		if st.keep[k].Keep {
			st.apply(int(k))
		}
	}
	if !st.staleSet[n] {
		st.staleSet[n] = true
		st.stale = append(st.stale, n)
	}
}

// The hash of a durable state is the sum of the hashes of its parts: each
// record's attributes (metaHash), each entry (entHash), each block of data
// that is not all zeros (blockHash). A state's hash is its snapshot's
// identity (the version of the durable table it shares) plus, per
// component, the difference its surviving changes make to the sum: the
// parts they can alter, against the snapshot's. The parts do not depend on
// the snapshot, so states of snapshots of one durable table compare.

// compDelta is what component n's surviving changes add to the hash.
func (st *CrashState) compDelta(n int32) uint64 {
	cc := &st.snap.comps.comps[n]
	var h uint64
	for _, id := range cc.recs {
		h += st.recDelta(id, cc)
	}
	for _, e := range cc.ents {
		id, _ := st.peek(e.dir, e.name)
		h += entHash(e.dir, e.name, id)
		if b := st.snap.base[e.dir]; b != nil {
			h -= entHash(e.dir, e.name, b.entries[e.name])
		}
	}
	return h
}

// recDelta is the difference record id makes to the hash: its attributes,
// its data, and the entries of an unstable directory (a stable one's are
// parts of their own).
func (st *CrashState) recDelta(id uint64, cc *crashComp) uint64 {
	o := st.recs[id]
	if o == nil {
		return 0 // the snapshot's
	}
	s, b := st.rec(id), st.snap.base[id]
	stable := st.stable(id)
	if st.buf == nil {
		st.buf = make([]byte, st.snap.cfg.blockSize)
	}
	buf := st.buf
	var h uint64
	if s != nil {
		h += metaHash(id, s)
	}
	if b != nil {
		h -= metaHash(id, b)
	}
	if s != nil && b != nil && o.base {
		// A copy of the snapshot's record: only the blocks the changes
		// touch, those between the two sizes, and the changed entries can
		// differ.
		var touched map[int64]bool
		if s.size != b.size {
			touched = map[int64]bool{}
		}
		for _, bo := range cc.blocks {
			if bo.ino == id {
				h += blockHash(s, bo.block, buf) - blockHash(b, bo.block, buf)
				if touched != nil {
					touched[bo.block] = true
				}
			}
		}
		if touched != nil {
			bs := int64(len(buf))
			lo, hi := min(s.size, b.size), max(s.size, b.size)
			for _, d := range []*durInode{s, b} {
				for off := d.data.SeekWritten(lo, hi); off >= 0; off = d.data.SeekWritten((off/bs+1)*bs, hi) {
					if bl := off / bs; !touched[bl] {
						touched[bl] = true
						h += blockHash(s, bl, buf) - blockHash(b, bl, buf)
					}
				}
			}
		}
		if !stable {
			for name, e := range o.delta {
				h += entHash(id, name, e) - entHash(id, name, b.entries[name])
			}
		}
		return h
	}
	if s != nil {
		// A new record: its data and entries come from the changes alone.
		for _, bo := range cc.blocks {
			if bo.ino == id {
				h += blockHash(s, bo.block, buf)
			}
		}
		if !stable {
			for name, e := range s.entries {
				h += entHash(id, name, e)
			}
		}
	}
	if o.phantom {
		// entries without their directory (only unstable ones have a phantom)
		for name, e := range o.d.entries {
			h += entHash(id, name, e)
		}
	}
	if b != nil {
		h -= st.snap.comps.fullHash(id, buf)
	}
	return h
}

// metaHash hashes record d of inode id but for its entries and data.
func metaHash(id uint64, d *durInode) uint64 {
	h := mix64(id ^ 0x6d657461)
	for _, v := range []uint64{uint64(d.mode)<<32 | uint64(d.uid), uint64(d.gid), uint64(d.atime), uint64(d.mtime), uint64(d.ctime), uint64(d.size), uint64(d.links)} {
		h = mix64(h ^ v)
	}
	return mix64(h ^ hashString(d.target))
}

// entHash hashes the entry name → id of directory dir (id 0: no entry, 0).
func entHash(dir uint64, name string, id uint64) uint64 {
	if id == 0 {
		return 0
	}
	return mix64(hashString(name) ^ mix64(dir) ^ mix64(id+0x9e37))
}

// blockHash hashes block bl of d's data, as a file of d.size bytes reads it
// (buf is a block's worth of scratch): 0 for a block of zeros.
func blockHash(d *durInode, bl int64, buf []byte) uint64 {
	bs := int64(len(buf))
	off := bl * bs
	if d.data == nil || off >= d.size {
		return 0
	}
	d.data.ReadAt(buf, off)
	if end := d.size - off; end < bs {
		clear(buf[end:])
	}
	h := hashBytes(buf)
	if h == zeroBlockHash(bs) {
		return 0
	}
	return mix64(uint64(bl)*0x9e3779b97f4a7c15 ^ h)
}

// zeroHashes caches hashBytes of a block of zeros, per block size.
var zeroHashes sync.Map

func zeroBlockHash(bs int64) uint64 {
	if h, ok := zeroHashes.Load(bs); ok {
		return h.(uint64)
	}
	h := hashBytes(make([]byte, bs))
	zeroHashes.Store(bs, h)
	return h
}

// dataHash is the sum of blockHash over d's written blocks.
func dataHash(d *durInode, buf []byte) uint64 {
	if d.data == nil {
		return 0
	}
	var h uint64
	bs := int64(len(buf))
	for off := d.data.SeekWritten(0, d.size); off >= 0; off = d.data.SeekWritten((off/bs+1)*bs, d.size) {
		h += blockHash(d, off/bs, buf)
	}
	return h
}

// mix64 is splitmix64's finaliser.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for k := 0; k < len(s); k++ {
		h = (h ^ uint64(s[k])) * 1099511628211
	}
	return h
}

// hashBytes hashes a block (its length a multiple of 8) a word at a time.
func hashBytes(b []byte) uint64 {
	var h uint64 = 0x243f6a8885a308d3
	for k := 0; k+8 <= len(b); k += 8 {
		w := uint64(b[k]) | uint64(b[k+1])<<8 | uint64(b[k+2])<<16 | uint64(b[k+3])<<24 |
			uint64(b[k+4])<<32 | uint64(b[k+5])<<40 | uint64(b[k+6])<<48 | uint64(b[k+7])<<56
		h = bits.RotateLeft64((h^w)*0x9e3779b97f4a7c15, 29)
	}
	return mix64(h)
}

// Touched returns, in increasing order, the inode numbers whose durable state
// (record, or entries of a directory) the survival of change k can alter:
// after Set(k, ...), the only ones that can differ from before. The slice is
// the snapshot's: do not modify it.
func (st *CrashState) Touched(k int) []uint64 {
	return st.snap.comps.comps[st.snap.comps.opComp[k]].inos
}

// Parts splits Touched(k) into what the survival of change k can alter:
// records (existence, attributes, size, data, and for a directory that a
// pending change can remove, all its entries), and single entries of the
// other directories. Changes with the same Component share their parts. The
// slices are the snapshot's: do not modify them.
func (st *CrashState) Parts(k int) (recs []uint64, ents []EntryName) {
	cc := &st.snap.comps.comps[st.snap.comps.opComp[k]]
	return cc.recs, cc.names
}

// Made reports whether record id exists in the state as a record the
// surviving changes made (created, or removed and made again), not as the
// snapshot's durable record (altered or not): a made record's data is only
// what the changes wrote.
func (st *CrashState) Made(id uint64) bool {
	o := st.recs[id]
	return o != nil && !o.gone && !o.base
}

// Component returns the number of the component of change k: changes of
// different components alter disjoint parts of the state.
func (st *CrashState) Component(k int) int { return int(st.snap.comps.opComp[k]) }

// Changed returns, in increasing order, the inode numbers whose durable state
// may differ between st and the snapshot's strict state: records that a
// surviving change made, removed or altered (existence, attributes, size,
// data), and directories whose entries it altered. A checker that has
// checked the strict state needs to read only these.
func (st *CrashState) Changed() []uint64 {
	var out []uint64
	for id := range st.recs {
		out = append(out, id)
	}
	for dir, m := range st.ents {
		if len(m) > 0 && st.recs[dir] == nil {
			out = append(out, dir)
		}
	}
	slices.Sort(out)
	return out
}

// Lookups. Paths are absolute or relative to the root, resolved in the
// state's durable namespace without following symbolic links; "." and ".."
// are not interpreted. Errors are syscall.Errno values: ENOENT, ENOTDIR,
// EISDIR, EINVAL.

// LookupIno returns the inode number path names in the state.
func (st *CrashState) LookupIno(path string) (uint64, error) {
	id := st.snap.root
	for name := range strings.SplitSeq(path, "/") {
		if name == "" {
			continue
		}
		d := st.rec(id)
		if d == nil || d.mode&S_IFMT != S_IFDIR {
			return 0, ENOTDIR
		}
		if st.snap.ram[id] {
			return 0, ENOENT // a file system in memory: empty (SetRAM)
		}
		c, ok := st.peek(id, name)
		if !ok || st.rec(c) == nil {
			return 0, ENOENT
		}
		id = c
	}
	return id, nil
}

// Stat returns what stat(2) of path (not following a final symlink) would
// report on the crashed file system, but for Nlink and Blocks, which are
// left zero (FS computes them).
func (st *CrashState) Stat(path string) (Stat, error) {
	id, err := st.LookupIno(path)
	if err != nil {
		return Stat{}, err
	}
	return st.StatIno(id)
}

// StatIno is Stat of inode id, which need not be reachable by a name.
func (st *CrashState) StatIno(id uint64) (Stat, error) {
	d := st.rec(id)
	if d == nil {
		return Stat{}, ENOENT
	}
	s := Stat{Dev: st.snap.cfg.dev, Ino: id, Mode: d.mode, Uid: d.uid, Gid: d.gid, Size: d.size,
		Blksize: st.snap.cfg.blockSize, Atime: d.atime, Mtime: d.mtime, Ctime: d.ctime}
	if d.mode&S_IFMT == S_IFDIR {
		s.Size = st.snap.cfg.blockSize
	}
	return s, nil
}

// ReadFile returns the content of the regular file path names.
func (st *CrashState) ReadFile(path string) ([]byte, error) {
	id, err := st.LookupIno(path)
	if err != nil {
		return nil, err
	}
	return st.ReadIno(id)
}

// ReadIno is ReadFile of inode id.
func (st *CrashState) ReadIno(id uint64) ([]byte, error) { return st.AppendIno(nil, id) }

// AppendIno appends the content of regular file id to b and returns the
// extended slice (ReadIno into a buffer of the caller's).
func (st *CrashState) AppendIno(b []byte, id uint64) ([]byte, error) {
	d := st.rec(id)
	switch {
	case d == nil:
		return b, ENOENT
	case d.mode&S_IFMT == S_IFDIR:
		return b, EISDIR
	case d.mode&S_IFMT != S_IFREG:
		return b, EINVAL
	}
	n := len(b)
	b = slices.Grow(b, int(d.size))[:n+int(d.size)]
	d.data.ReadAt(b[n:], 0)
	return b, nil
}

// ReadDir returns the entries of directory path, sorted by name, without
// "." and "..". An entry whose inode did not survive is not listed (as FS
// does not).
func (st *CrashState) ReadDir(path string) ([]Dirent, error) {
	id, err := st.LookupIno(path)
	if err != nil {
		return nil, err
	}
	d := st.rec(id)
	if d.mode&S_IFMT != S_IFDIR {
		return nil, ENOTDIR
	}
	if st.snap.ram[id] {
		return nil, nil // a file system in memory: empty (SetRAM)
	}
	var out []Dirent
	st.eachEntry(id, d, func(name string, c uint64) {
		if cd := st.rec(c); cd != nil {
			out = append(out, Dirent{Name: name, Ino: c, Type: dtype(cd.mode)})
		}
	})
	slices.SortFunc(out, func(a, b Dirent) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Readlink returns the target of the symbolic link path names.
func (st *CrashState) Readlink(path string) (string, error) {
	id, err := st.LookupIno(path)
	if err != nil {
		return "", err
	}
	d := st.rec(id)
	if d.mode&S_IFMT != S_IFLNK {
		return "", EINVAL
	}
	return d.target, nil
}

// String describes the choices made, for messages: the kept changes.
func (st *CrashState) String() string {
	var b strings.Builder
	for k, v := range st.keep {
		if !v.Keep {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("; ")
		}
		b.WriteString(st.snap.pend[k].String())
		if v.Sectors != 0 {
			fmt.Fprintf(&b, " sectors %#x", v.Sectors)
		}
	}
	return "kept: " + b.String()
}

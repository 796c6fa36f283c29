package crash

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/iosim/iosim/vfs"
)

// unit is the changes of one call of one kind on one inode: what a state keeps,
// loses or tears as a whole.
type unit struct {
	items []int // indexes into the pending list
	op    int   // the call that made it (-1: before the first recorded call)
	kind  vfs.PendingKind
	ino   uint64
	seq   uint64 // the latest change's
	lazy  bool   // a size change made by a buffered write (delayed allocation)
	data  bool   // data blocks (write, device-write)
	meta  vfs.Pending
}

// journalled reports whether u commits with the running transaction under m:
// metadata other than a delayed-allocation size change (which commits at
// writeback), and with data journalling everything.
func (u *unit) journalled(m *Model) bool { return m.dataJournal || !u.data && !u.lazy }

// choice is what a state does with a unit.
type choice uint8

const (
	keep    choice = iota
	drop           // lost (for a journal: the journal cut before it)
	tornH          // data: every block keeps its first half of sectors
	prefixB        // data: only the first half of the blocks
	splitRn        // a rename over a file: only the destination's removal
)

func (c choice) verb() string {
	switch c {
	case drop:
		return "lost"
	case tornH:
		return "torn"
	case prefixB:
		return "partly written"
	case splitRn:
		return "split"
	}
	return "kept"
}

// point is a crash point being explored.
type point struct {
	snap  *vfs.CrashSnapshot
	pend  []vfs.Pending
	seq   uint64 // fs's Seq when pend was taken
	root  uint64
	units []unit
	op    Op
	act   *active // the promises a state of the point can break
	actID uint64  // identifies act among the points of one version of the expectations
	vecs  []*seenState
	subs  []subRef
	mu    sync.Mutex // guards dataHash
	// replace records of the renames still in flight, by unit
	replaceOf map[int]*replaceRec
	seen      map[string]*seenState // closed deviations → the state built for it
	inos      map[uint64]bool       // the inodes with data, allocation or size changes in flight
	unitsOf   map[uint64][]int      // their units
	dataSeq   map[uint64]uint64     // inode → latest data, allocation or size change in flight
	metaSeq   map[string]uint64     // path → latest namespace change in flight naming it
	dataHash  map[string]uint64     // inode and its units' choices → hash of its data
	taint     map[uint64]int64      // Explorer.taint when the point was made
	relevant  []bool                // classify's: units a state can lose that a check can see
	stdout    []byte                // what the program had written to its standard output

	// stdoutTaint: stdout holds announced bytes the workload did not show
	// (Explorer.UnknownStdout before the point was made).
	stdoutTaint bool
}

// subRef is a (state, model) met at the point, in the order met.
type subRef struct {
	st     *seenState
	m      *Model
	chosen []dev
}

func (e *Explorer) units(pend []vfs.Pending) []unit {
	type key struct {
		op   int
		kind vfs.PendingKind
		ino  uint64
		seq  uint64
	}
	idx := make(map[key]int, len(pend))
	us := make([]unit, 0, len(pend))
	for k, p := range pend {
		op := e.opOf(p.Seq)
		kind := p.Kind
		if kind == vfs.PendingDevice {
			kind = vfs.PendingWrite
		}
		kk := key{op: op, kind: kind, ino: p.Ino}
		if p.Kind == vfs.PendingMeta {
			kk.seq = p.Seq
		}
		j, ok := idx[kk]
		if !ok {
			j = len(us)
			idx[kk] = j
			u := unit{op: op, kind: kind, ino: p.Ino, data: kind == vfs.PendingWrite, meta: p}
			u.lazy = kind == vfs.PendingSize && op >= 0 && e.op(op).write // ignored by dataJournal models
			us = append(us, u)
		}
		us[j].items = append(us[j].items, k)
		us[j].seq = max(us[j].seq, p.Seq)
	}
	for k := range us {
		// a write's blocks in file order (an earlier value of a block the
		// write was the last to change is listed after the others)
		if u := &us[k]; u.data && len(u.items) > 1 {
			slices.SortStableFunc(u.items, func(a, b int) int { return cmp.Compare(pend[a].Off, pend[b].Off) })
		}
	}
	return us
}

// point explores the crash point the last recorded op ends.
func (e *Explorer) point() {
	seq := e.fs.Seq()
	snap := e.fs.Snapshot()
	pend := snap.Pending()
	if o := e.opts.Only; o != nil && e.nops()-1 != o.Point {
		e.forget(&point{pend: pend})
		return
	}
	x := &point{snap: snap, pend: pend, seq: seq, root: e.fs.Root().Ino(), units: e.units(pend), op: e.op(e.nops() - 1), seen: map[string]*seenState{}, replaceOf: map[int]*replaceRec{}, inos: map[uint64]bool{}}
	x.stdout = e.stdout[:len(e.stdout):len(e.stdout)] // appends never write within it
	x.unitsOf, x.dataSeq, x.metaSeq, x.dataHash = map[uint64][]int{}, map[uint64]uint64{}, map[string]uint64{}, map[string]uint64{}
	x.taint, x.stdoutTaint = e.taint, e.stdoutTaint
	for _, p := range pend {
		switch p.Kind {
		case vfs.PendingAttr:
		case vfs.PendingMeta:
			x.metaSeq[p.Path] = max(x.metaSeq[p.Path], p.Seq)
			if p.To != "" {
				x.metaSeq[p.To] = max(x.metaSeq[p.To], p.Seq)
			}
		default:
			x.inos[p.Ino] = true
			x.dataSeq[p.Ino] = max(x.dataSeq[p.Ino], p.Seq)
		}
	}
	for k := range x.units {
		if u := &x.units[k]; x.inos[u.ino] && u.kind != vfs.PendingMeta && u.kind != vfs.PendingAttr {
			x.unitsOf[u.ino] = append(x.unitsOf[u.ino], k)
		}
	}
	for k := range e.replaces {
		r := &e.replaces[k]
		for j := range x.units {
			u := &x.units[j]
			if u.kind == vfs.PendingMeta && u.op == r.op && u.meta.Op == "rename" {
				x.replaceOf[j] = r
			}
		}
	}
	x.act = e.activePromises(x)
	x.actID = x.act.id()
	e.rep.CrashPoints++
	e.vmu.Lock() // record counts failures of earlier points meanwhile
	e.rep.Points = append(e.rep.Points, PointStats{Point: x.op})
	e.vmu.Unlock()
	// the models' states are enumerated and closed on several goroutines,
	// then admitted in the models' order
	lists := make([][]closed, len(e.opts.Models))
	sem := make(chan struct{}, e.workers())
	var wg sync.WaitGroup
	for k, m := range e.opts.Models {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			lists[k] = e.exploreModel(x, m)
		}()
	}
	wg.Wait()
	for k, m := range e.opts.Models {
		for _, c := range lists[k] {
			e.admit(x, m, c)
		}
	}
	if o := e.opts.Only; o != nil {
		if o.K < len(x.vecs) && e.opts.Visit != nil {
			e.opts.Visit(e.stateAt(x, x.vecs[o.K]))
		}
		e.forget(x)
		return
	}
	e.run(x)
	e.forget(x)
	if e.opts.Progress != nil {
		e.opts.Progress(e.rep.CrashPoints, e.rep.States)
	}
}

// dev is a deviation of a state from "everything in flight survived": unit
// k has choice c (never keep). A state is its deviations, sorted by unit: a
// state of depth d costs d, whatever the number of changes in flight.
type dev struct {
	k int32
	c choice
}

// closed is a closed state met while enumerating a model's states.
type closed struct {
	devs  []dev
	label string
	// chosen are the deviations enumerated, before the model's rules
	// closed them: the cause a failing state is reported by
	chosen []dev
}

// exploreModel enumerates the states of x under m: their closed deviations,
// in a fixed order. It only reads the explorer and x.
func (e *Explorer) exploreModel(x *point, m *Model) []closed {
	var out []closed
	n := len(x.units)
	forced := make([]bool, n)
	for k := range x.units {
		u := &x.units[k]
		// op < 0: changes no recorded call made (the atime the explorer's own
		// reads touch): kept, as they are no part of the program's history
		forced[k] = u.op < 0 || m.journal && u.journalled(m) && u.seq <= e.horizon || m.logNewName && e.logs(u)
	}
	cl := newCloser(e, x, m, forced)
	emit := func(devs []dev, label string) {
		c := cl.close(devs)
		if e.closeHook != nil {
			e.closeHook(x, m, forced, devs, c)
		}
		chosen := c // most often the rules change nothing: no copy
		if !slices.Equal(c, devs) {
			chosen = slices.Clone(devs) // devs is the caller's scratch
		}
		out = append(out, closed{c, label, chosen})
	}
	emit(nil, "all")
	var strict []dev
	for k := range n {
		if !forced[k] {
			strict = append(strict, dev{int32(k), drop})
		}
	}
	emit(strict, "durable")
	// every combination of up to Depth deviations from "all"
	var rec func(from, depth int, cur []dev)
	rec = func(from, depth int, cur []dev) {
		for k := from; k < n; k++ {
			if forced[k] {
				continue
			}
			for _, c := range e.variants(x, m, k) {
				next := append(cur, dev{int32(k), c})
				emit(next, "")
				if depth > 1 {
					rec(k+1, depth-1, next)
				}
			}
		}
	}
	if e.opts.Depth > 0 {
		rec(0, e.opts.Depth, nil)
	}
	if e.opts.Sample > 0 {
		rng := rand.New(rand.NewPCG(e.opts.Seed, uint64(e.nops())<<8|uint64(modelIndex(m))))
		for range e.opts.Sample {
			var cur []dev
			for k := range n {
				if forced[k] {
					continue
				}
				switch vs := e.variants(x, m, k); {
				case rng.IntN(2) == 0:
				case len(vs) > 0:
					cur = append(cur, dev{int32(k), vs[rng.IntN(len(vs))]})
				}
			}
			emit(cur, "")
		}
	}
	return out
}

// logs reports whether u is the creation of a name that an fsync of a file
// made later logged (logNewName).
func (e *Explorer) logs(u *unit) bool {
	if u.kind != vfs.PendingMeta || u.meta.Op != "create" {
		return false
	}
	for _, l := range e.logged {
		if l.ino == u.ino && l.seq >= u.seq {
			return true
		}
	}
	return false
}

func modelIndex(m *Model) int {
	for k, mm := range models {
		if mm == m {
			return k
		}
	}
	return len(models)
}

// variants lists the deviations a model allows for unit k.
func (e *Explorer) variants(x *point, m *Model, k int) []choice {
	u := &x.units[k]
	if u.kind == vfs.PendingAttr && !e.permChange(u.op) {
		// only times: no state differs in what checks see
		return nil
	}
	vs := []choice{drop}
	if u.data && !m.dataJournal && e.fs.BlockSize() > vfs.SectorSize && !m.cowData {
		vs = append(vs, tornH)
	}
	if u.data && len(u.items) > 1 {
		// with data journalling: a commit between two pages of the write
		vs = append(vs, prefixB)
	}
	if m.splitRename && x.replaceOf[k] != nil {
		vs = append(vs, splitRn)
	}
	return vs
}

// closer closes states under a model at a point: it makes a state one the
// model allows, changing what the deviations imply (a journal cut drops
// every later journalled unit; data that did not reach disk keeps the
// metadata that would expose it from committing). It works on a scratch
// vector over the units, all keep between calls, and visits only the units
// a rule can change: the deviations, the units of their inodes, and for a
// journal cut the units after the cut.
type closer struct {
	e       *Explorer
	x       *point
	m       *Model
	forced  []bool
	cur     []choice // scratch: keep but for the units listed in touched
	in      []bool   // marks the units in touched
	touched []int32
	inos    []uint64 // scratch of the ordered-data rule: the inodes it has seen
	byOp    []int32  // the units in order of their call
	jBefore []int    // jBefore[i]: journalled units among byOp[:i]
	repl    []int    // the units of x.replaceOf, in order
	ow      []bool   // orderedOverwrite models: the units overwrites wrote
	// freed: for models that order a block's reuse, the data units that
	// wrote blocks an allocation change in flight (a truncate, a punch)
	// had freed, by that change's unit
	freed map[int][]int
	// zeroed: for orderedData models, each data unit a truncate or punch
	// wrote (the block it zeroes in part) to that call's allocation units
	zeroed map[int][]int
	// tied: for cowData models, each allocation or (not delayed) size unit
	// to the others of its inode made by the same call or later ones
	tied map[int][]int
}

// zeroings maps each data unit made by a call that also changed its
// inode's allocation (a truncate or punch zeroing the block it cuts) to that
// call's allocation units: the zeroed block is ordered data of the change
// (ext4_block_truncate_page adds it to the transaction's ordered data,
// fs/ext4/inode.c; btrfs_truncate_block waits for its ordered extent), so
// the change commits only with it.
func zeroings(us []unit) map[int][]int {
	type key struct {
		op  int
		ino uint64
	}
	allocs := map[key][]int{}
	for k, u := range us {
		if u.kind == vfs.PendingAlloc {
			allocs[key{u.op, u.ino}] = append(allocs[key{u.op, u.ino}], k)
		}
	}
	var out map[int][]int
	for k, u := range us {
		if a := allocs[key{u.op, u.ino}]; u.data && a != nil {
			if out == nil {
				out = map[int][]int{}
			}
			out[k] = a
		}
	}
	return out
}

// sizeTies ties the allocation and size units of each inode: one btrfs
// transaction updates a file's extents and its size together (btrfs_setsize;
// btrfs_truncate_inode_items with the new i_size in the same transaction
// handle), and transactions commit in order, so a truncate or fallocate
// persists whole, and only with the earlier ones of the same file.
func sizeTies(us []unit) map[int][]int {
	by := map[uint64][]int{}
	for k, u := range us {
		if u.kind == vfs.PendingAlloc || u.kind == vfs.PendingSize && !u.lazy {
			by[u.ino] = append(by[u.ino], k)
		}
	}
	out := map[int][]int{}
	for _, ks := range by {
		for _, k := range ks {
			for _, j := range ks {
				if j != k && us[j].op >= us[k].op {
					out[k] = append(out[k], j)
				}
			}
		}
	}
	return out
}

// reallocations maps each allocation unit in flight to the data units of
// later calls that wrote blocks it had freed: a block freed in a running
// transaction is not reused before it commits (jbd2_journal_forget; xfs's
// busy extents, fs/xfs/xfs_extent_busy.c; btrfs pins freed extents until
// the transaction commits), so the data written there after the change went
// to a new block, mapped by a later commit.
func reallocations(x *point) map[int][]int {
	var out map[int][]int
	us := x.units
	for _, ks := range x.unitsOf {
		for _, a := range ks {
			if us[a].kind != vfs.PendingAlloc {
				continue
			}
			for _, d := range ks {
				if !us[d].data || us[d].op <= us[a].op {
					continue
				}
				if overlaps(x, a, d) {
					if out == nil {
						out = map[int][]int{}
					}
					out[a] = append(out[a], d)
				}
			}
		}
	}
	return out
}

// overlaps reports whether a block of data unit d lies in a range of
// allocation unit a.
func overlaps(x *point, a, d int) bool {
	for _, i := range x.units[a].items {
		r := x.pend[i]
		for _, j := range x.units[d].items {
			b := x.pend[j]
			if b.Off < r.Off+r.Len && r.Off < b.Off+b.Len {
				return true
			}
		}
	}
	return false
}

// overwrites marks the data units of writes that changed no size (no size
// unit of the same call and inode).
func overwrites(us []unit) []bool {
	type key struct {
		op  int
		ino uint64
	}
	sized := map[key]bool{}
	for _, u := range us {
		if u.kind == vfs.PendingSize {
			sized[key{u.op, u.ino}] = true
		}
	}
	ow := make([]bool, len(us))
	for k, u := range us {
		ow[k] = u.data && !sized[key{u.op, u.ino}]
	}
	return ow
}

func newCloser(e *Explorer, x *point, m *Model, forced []bool) *closer {
	n := len(x.units)
	cl := &closer{e: e, x: x, m: m, forced: forced, cur: make([]choice, n), in: make([]bool, n), byOp: make([]int32, n), jBefore: make([]int, n+1)}
	for k := range cl.byOp {
		cl.byOp[k] = int32(k)
	}
	us := x.units
	slices.SortStableFunc(cl.byOp, func(a, b int32) int { return us[a].op - us[b].op })
	for i, k := range cl.byOp {
		cl.jBefore[i+1] = cl.jBefore[i]
		if us[k].journalled(m) {
			cl.jBefore[i+1]++
		}
	}
	for k := range x.replaceOf {
		cl.repl = append(cl.repl, k)
	}
	slices.Sort(cl.repl)
	if m.orderedOverwrite {
		cl.ow = overwrites(us)
	}
	if m.journal || m.cowData {
		cl.freed = reallocations(x)
	}
	if m.cowData {
		cl.tied = sizeTies(us)
	}
	if m.orderedData {
		cl.zeroed = zeroings(us)
	}
	return cl
}

// after returns the position in byOp of the first unit of a call after op.
func (cl *closer) after(op int) int {
	us := cl.x.units
	i, _ := slices.BinarySearchFunc(cl.byOp, op+1, func(k int32, op int) int { return us[k].op - op })
	return i
}

// close returns the closed deviations of the state devs (which it does not
// keep).
func (cl *closer) close(devs []dev) []dev {
	us, x, m, cur := cl.x.units, cl.x, cl.m, cl.cur
	changed := false
	set := func(k int, c choice) {
		if cur[k] != c && !cl.forced[k] {
			cur[k] = c
			changed = true
			if !cl.in[k] {
				cl.in[k] = true
				cl.touched = append(cl.touched, int32(k))
			}
		}
	}
	for _, d := range devs {
		set(int(d.k), d.c)
	}
	// firstLost is the first call whose data of ino does not survive whole
	// (math.MaxInt: none): the data written by calls up to op survives
	// whole when op < firstLost(ino)
	firstLost := func(ino uint64) int {
		first := math.MaxInt
		for _, k := range x.unitsOf[ino] {
			if us[k].data && cur[k] != keep {
				first = min(first, us[k].op)
			}
		}
		return first
	}
	dataKept := func(ino uint64, op int) bool { return op < firstLost(ino) }
	// dropAfter drops the units of the calls after op that are kept: all of
	// them with data, else their metadata alone (what a journal cut before
	// the first of those calls loses); a unit of a later call than op+1 that
	// is written in part is dropped too (the cut is in op+1)
	dropAfter := func(op int, data bool) {
		for _, k := range cl.byOp[cl.after(op):] {
			if (data || !us[k].data) && (cur[k] == keep || cur[k] != drop && us[k].op > op+1 && m.dataJournal) {
				set(int(k), drop)
			}
		}
	}
	for range len(us) + 2 {
		changed = false
		if m.journal {
			cut := -2 // the first call whose journalled change is lost
			for _, k := range cl.touched {
				if us[k].journalled(m) && cur[k] != keep && (cut == -2 || us[k].op < cut) {
					cut = us[k].op
				}
			}
			if cut != -2 {
				dropAfter(cut-1, m.dataJournal)
			}
		}
		if cl.ow != nil {
			cut := -2 // the first call whose overwrite is not whole
			for _, k := range cl.touched {
				if cl.ow[k] && cur[k] != keep && (cut == -2 || us[k].op < cut) {
					cut = us[k].op
				}
			}
			if cut != -2 {
				dropAfter(cut, true)
			}
		}
		if len(cl.zeroed) > 0 {
			for i := 0; i < len(cl.touched); i++ {
				k := int(cl.touched[i])
				if cur[k] == keep {
					continue
				}
				for _, j := range cl.zeroed[k] {
					if cur[j] == keep {
						set(j, drop)
					}
				}
			}
		}
		if len(cl.tied) > 0 {
			for i := 0; i < len(cl.touched); i++ {
				k := int(cl.touched[i])
				if cur[k] == keep {
					continue
				}
				for _, j := range cl.tied[k] {
					if cur[j] == keep {
						set(j, drop)
					}
				}
			}
		}
		if cl.freed != nil {
			// data in a block an allocation change freed is lost with it
			for i := 0; i < len(cl.touched); i++ {
				k := int(cl.touched[i])
				if cur[k] == keep {
					continue
				}
				for _, j := range cl.freed[k] {
					if cur[j] != drop {
						set(j, drop)
					}
				}
			}
		}
		if m.orderedData {
			// a lazy unit is dropped when data of its inode is not whole
			// (a lazy unit holds no data: dropping one leaves firstLost)
			inos := cl.inos[:0]
			for i := 0; i < len(cl.touched); i++ {
				k := cl.touched[i]
				if !us[k].data || cur[k] == keep || slices.Contains(inos, us[k].ino) {
					continue
				}
				ino := us[k].ino
				inos = append(inos, ino)
				lost := firstLost(ino)
				for _, j := range x.unitsOf[ino] {
					if us[j].lazy && cur[j] == keep && us[j].op >= lost {
						set(j, drop)
					}
				}
			}
			cl.inos = inos
		}
		if m.autoDaAlloc {
			for _, k := range cl.repl {
				r := x.replaceOf[k]
				if cur[k] != keep {
					continue
				}
				if m.orderedData && !dataKept(r.ino, r.op) {
					set(k, drop)
					continue
				}
				cl.keepLazy(r.ino, r.op, set)
			}
			for _, tc := range cl.e.truncCloses {
				// later: a journalled change after the close survives
				later := cl.jBefore[len(us)] - cl.jBefore[cl.after(tc.op)]
				for _, k := range cl.touched {
					if us[k].journalled(m) && us[k].op > tc.op && cur[k] != keep {
						later--
					}
				}
				if later == 0 {
					continue
				}
				if m.orderedData && !dataKept(tc.ino, tc.op) {
					for _, k := range cl.byOp[cl.after(tc.op):] {
						if us[k].journalled(m) {
							set(int(k), drop)
						}
					}
					continue
				}
				cl.keepLazy(tc.ino, tc.op, set)
			}
		}
		if !changed {
			break
		}
	}
	var out []dev
	for _, k := range cl.touched {
		if cur[k] != keep {
			out = append(out, dev{k, cur[k]})
		}
		cur[k], cl.in[k] = keep, false
	}
	cl.touched = cl.touched[:0]
	slices.SortFunc(out, func(a, b dev) int { return int(a.k - b.k) })
	return out
}

// keepLazy keeps the size changes of ino made by buffered writes of calls
// up to op (auto_da_alloc flushes them).
func (cl *closer) keepLazy(ino uint64, op int, set func(int, choice)) {
	us := cl.x.units
	for _, j := range cl.x.unitsOf[ino] {
		if us[j].lazy && us[j].op <= op {
			set(j, keep)
		}
	}
}

// seenState is a state (closed deviations) already met at a point.
type seenState struct {
	name  string
	devs  []dev
	id    StateID
	build bool     // this shard's
	model int      // the index in Options.Models of the first model that met it
	v     *verdict // nil: not built
}

// admit counts the state c of model m, deduplicates it by its closed
// deviations, and keeps it for run.
func (e *Explorer) admit(x *point, m *Model, c closed) {
	devs, label := c.devs, c.label
	e.rep.States++
	e.rep.Points[len(e.rep.Points)-1].States++
	e.key = e.key[:0]
	for _, d := range devs {
		e.key = binary.AppendUvarint(e.key, uint64(d.k)<<3|uint64(d.c))
	}
	st, ok := x.seen[string(e.key)]
	if !ok {
		st = &seenState{name: e.stateName(x, devs, label), devs: devs, model: slices.Index(e.opts.Models, m), id: StateID{x.op.Index, len(x.vecs)}}
		x.seen[string(e.key)] = st
		e.stateNo++
		st.build = e.opts.Shards <= 1 || (e.stateNo-1)%e.opts.Shards == e.opts.Shard
		x.vecs = append(x.vecs, st)
	}
	x.subs = append(x.subs, subRef{st, m, c.chosen})
}

// stateName is a stable name for a state: the crash point and its deviations.
func (e *Explorer) stateName(x *point, devs []dev, label string) string {
	b := fmt.Appendf(nil, "p%03d-line%d", x.op.Index, x.op.Line)
	if label != "" {
		return string(append(append(b, '-'), label...))
	}
	for _, d := range devs {
		u := &x.units[d.k]
		line := 0
		if u.op >= 0 {
			line = e.op(u.op).Line
		}
		b = append(append(b, '-'), shortVerb(d.c)...)
		b = strconv.AppendInt(b, int64(line), 10)
		b = append(b, u.kind.String()[0])
	}
	return string(b)
}

func shortVerb(c choice) string {
	return [...]string{"k", "l", "t", "p", "s"}[c]
}

// permChange reports whether op changes a mode or owner (its attribute change
// is more than times).
func (e *Explorer) permChange(op int) bool {
	if op < 0 {
		return false
	}
	c := strings.ToLower(e.op(op).Call)
	return strings.Contains(c, "chmod") || strings.Contains(c, "chown") || strings.Contains(c, "setxattr") || strings.Contains(c, "removexattr")
}

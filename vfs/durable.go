package vfs

import (
	"maps"
	"math"
	"math/bits"
	"slices"
	"strconv"
)

// Bookkeeping of what is not yet durable, and the sync primitives. The rules are
// stated in the package documentation. Every function here runs with fs.mu held
// unless its name says otherwise.

// inodePending is what an inode has that is not yet durable.
type inodePending struct {
	dirty   map[int64]uint64 // page-cache blocks not written back: block index → seq of the last write
	ranges  []dataRange      // allocation changes (punch, zero, allocate, truncate) not yet durable
	dev     map[int64]uint64 // blocks in the device's write cache, not yet flushed
	devData *fileData        // the content of the dev blocks
	sizeSeq uint64           // seq of a size change not yet durable (0: none)
	attrSeq uint64           // seq of a mode/owner/times change not yet durable (0: none)
	hist    []version        // WithHistory: earlier values of pending blocks and size
	size    int64            // WithHistory: the size sizeSeq set
	listed  bool             // on fs.pending
	devList bool             // on fs.devInodes
	// dirtiedAt is when the page cache became dirty (the kernel's
	// dirtied_when), for the periodic writeback; valid while dirty is not empty.
	dirtiedAt Timespec
}

// version is an earlier value of a pending block or size (WithHistory): the
// value the change numbered seq left, which a later change replaced before
// it became durable.
type version struct {
	seq   uint64
	block int64     // the block index; -1 for the size
	size  int64     // the size
	data  *fileData // the block's content (at its offset); never changed
	// gone: a truncate or punch dropped the block from the page cache
	// (its allocation change stands for what followed)
	gone bool
}

// saveVersions keeps, with WithHistory, the content of the dirty blocks of
// [off, off+n) before a write changes them.
func (fs *FS) saveVersions(i *Inode, off, n int64) {
	p := &i.pend
	if !fs.cfg.history || len(p.dirty) == 0 || n <= 0 {
		return
	}
	bs := fs.cfg.blockSize
	for b := off / bs; b <= (off+n-1)/bs; b++ {
		if seq, ok := p.dirty[b]; ok {
			d := newFileData(bs)
			d.CopyRange(i.data, b*bs, bs)
			p.hist = append(p.hist, version{seq: seq, block: b, data: d})
		}
	}
}

// reviseDirty is saveVersions for a change of the dirty blocks from off to
// end (end < 0: to the end of file) that is no write (a truncate, a punched
// or zeroed range): it keeps their content before the change. A block the
// change covers whole leaves the page cache (the change's allocation
// record, which keeps its content, stands for it); one it covers in part
// is numbered anew, as the changing call's, so that its content after the
// change goes with that call.
func (fs *FS) reviseDirty(i *Inode, off, end int64) {
	p := &i.pend
	if !fs.cfg.history || len(p.dirty) == 0 {
		return
	}
	bs := fs.cfg.blockSize
	var seq uint64
	for _, b := range sortedBlocks(p.dirty) {
		if b*bs+bs <= off || end >= 0 && b*bs >= end {
			continue
		}
		d := newFileData(bs)
		d.CopyRange(i.data, b*bs, bs)
		whole := b*bs >= off && (end < 0 || b*bs+bs <= end)
		p.hist = append(p.hist, version{seq: p.dirty[b], block: b, data: d, gone: whole})
		if whole {
			for k := range p.hist {
				if p.hist[k].block == b {
					p.hist[k].gone = true
				}
			}
			delete(p.dirty, b)
			continue
		}
		if seq == 0 {
			seq = fs.nextSeq()
		}
		p.dirty[b] = seq
	}
}

// dropVersions forgets the earlier values of the blocks in p.dirty, about to
// be written back.
func (p *inodePending) dropVersions() {
	if len(p.hist) == 0 {
		return
	}
	all := len(p.ranges) > 0 // a whole writeback: allocation changes too
	p.hist = slices.DeleteFunc(p.hist, func(v version) bool {
		_, ok := p.dirty[v.block]
		return v.block >= 0 && (ok || all && v.gone)
	})
	if len(p.hist) == 0 {
		p.hist = nil
	}
}

// dataRange is a byte range whose allocation changed.
type dataRange struct {
	off, n int64
	seq    uint64
	data   *fileData // WithHistory: the range's content just after the change; never changed
}

// durInode is an inode as found on durable media.
type durInode struct {
	mode                uint32
	uid, gid            uint32
	atime, mtime, ctime Timespec
	size                int64
	data                *fileData
	dataShared          bool // data is shared with a materialised FS: clone before mutating
	target              string
	rdev                uint64 // device nodes
	entries             map[string]uint64
	links               int    // durable entries naming it
	gen                 uint64 // FS.durGen when made or copied: shared with snapshots when older
	touched             bool   // scratch of durPut
}

// metaKind is the kind of a namespace operation.
type metaKind uint8

const (
	metaCreate   metaKind = iota + 1 // a new entry dir/name → ino (create, mkdir, symlink, link)
	metaRemove                       // entry dir/name removed (unlink, rmdir)
	metaRename                       // dir/name moved to dir2/name2, replacing what was there
	metaExchange                     // dir/name and dir2/name2 swapped
)

// metaOp is one namespace operation not yet durable: what applying it needs
// (rec, by inode number) and the inodes it touched, for fsync's journal order
// and for the paths Pending reports.
type metaOp struct {
	seq         uint64
	rec         metaRec
	dir, dir2   *Inode
	node, node2 *Inode
	// dead marks an operation cancelled by cancelCreate: it is not applied,
	// but still tells how far an fsync of its directory commits (see
	// commitMeta), until a later one on the same directory does (logMeta,
	// compactMeta).
	dead bool
	// gen is fs.durGen when the operation was made: while it is still the
	// same, no frozen snapshot (which keeps &rec) has seen the operation.
	gen uint64
}

// metaRec is a namespace operation as applied to a durable table: inode
// numbers, and the mode and target a record made for node (node2) gets.
type metaRec struct {
	kind            metaKind
	dir, dir2       uint64
	name, name2     string
	node, node2     uint64 // the inode named (node2: the other one of an exchange)
	mode, mode2     uint32 // their modes when the operation was made
	target, target2 string // their symlink targets
}

func (op *metaOp) touches(dir *Inode) bool { return op.dir == dir || op.dir2 == dir }

func (fs *FS) logMeta(kind metaKind, dir *Inode, name string, node *Inode, dir2 *Inode, name2 string) {
	var op *metaOp
	if n := len(fs.metaLog); n > 0 {
		// A cancelled operation at the end of the log only tells how far an
		// fsync of its directory commits: one on that directory does it now.
		// Its memory serves the new one unless a snapshot has seen it.
		if last := fs.metaLog[n-1]; last.dead && (last.dir == dir || last.dir == dir2) {
			fs.metaLog[n-1] = nil
			fs.metaLog = fs.metaLog[:n-1]
			fs.metaDead--
			if last.gen == fs.durGen {
				op = last
			}
		}
	}
	if op == nil {
		op = new(metaOp)
	}
	*op = metaOp{seq: fs.nextSeq(), gen: fs.durGen, dir: dir, dir2: dir2, node: node, rec: metaRec{
		kind: kind, dir: dir.ino, name: name, node: node.ino, name2: name2, mode: node.mode, target: durTarget(node),
	}}
	if dir2 != nil {
		op.rec.dir2 = dir2.ino
	}
	if kind == metaExchange {
		n2 := dir.entries[name]
		op.node2 = n2
		op.rec.node2, op.rec.mode2, op.rec.target2 = n2.ino, n2.mode, durTarget(n2)
	}
	if kind == metaCreate {
		node.created = op
	}
	fs.countMeta(op, 1)
	fs.compactMeta()
	fs.metaLog = append(fs.metaLog, op)
	fs.startTxn()
}

func (fs *FS) list(i *Inode) {
	if !i.pend.listed {
		if len(fs.pending)+len(fs.devInodes) >= fs.pruneAt {
			fs.prunePending()
		}
		i.pend.listed = true
		fs.pending = append(fs.pending, i)
	}
}

// markDirty records that [off, off+n) of i's page cache was written.
func (fs *FS) markDirty(i *Inode, off, n int64) {
	if n <= 0 {
		return
	}
	p := &i.pend
	if p.dirty == nil {
		if p.dirty = fs.freeDirty; p.dirty != nil {
			fs.freeDirty = nil
		} else {
			p.dirty = make(map[int64]uint64)
		}
	}
	if len(p.dirty) == 0 {
		fs.noteDirty(i)
	}
	seq := fs.nextSeq()
	bs := fs.cfg.blockSize
	for b := off / bs; b <= (off+n-1)/bs; b++ {
		p.dirty[b] = seq
	}
	fs.list(i)
}

// markRange records an allocation change over [off, off+n).
func (fs *FS) markRange(i *Inode, off, n int64) {
	if n <= 0 {
		return
	}
	p := &i.pend
	seq := fs.nextSeq()
	if fs.cfg.history {
		// each change keeps its own content: a later write over the range
		// is the write's, not the change's
		d := newFileData(fs.cfg.blockSize)
		d.CopyRange(i.data, off, n)
		p.ranges = append(p.ranges, dataRange{off, n, seq, d})
	} else if k := len(p.ranges) - 1; k >= 0 && p.ranges[k].off <= off && off <= p.ranges[k].off+p.ranges[k].n {
		r := &p.ranges[k]
		r.n = max(r.off+r.n, off+n) - r.off
		r.seq = seq
	} else {
		p.ranges = append(p.ranges, dataRange{off, n, seq, nil})
	}
	fs.list(i)
	fs.startTxn()
}

func (fs *FS) markSize(i *Inode) {
	fs.changed()
	if p := &i.pend; fs.cfg.history {
		if p.sizeSeq != 0 {
			p.hist = append(p.hist, version{seq: p.sizeSeq, block: -1, size: p.size})
		} else if len(p.hist) > 0 {
			p.hist = slices.DeleteFunc(p.hist, func(v version) bool { return v.block < 0 })
		}
		p.size = i.size
	}
	i.pend.sizeSeq = fs.nextSeq()
	fs.list(i)
	fs.startTxn()
}

func (fs *FS) markAttr(i *Inode) {
	fs.changed()
	i.pend.attrSeq = fs.nextSeq()
	fs.list(i)
	fs.startTxn()
}

// durOf returns i's durable record for changing (durMut), creating it (empty)
// when i has a name; nil for an unlinked inode that never became durable.
func (fs *FS) durOf(i *Inode) *durInode {
	d := fs.durMut(i.ino)
	if d == nil {
		if i.nlink == 0 {
			return nil
		}
		d = newDurInode(fs.cfg.blockSize, i.mode, durTarget(i))
		fs.durPut(i.ino, d)
	}
	return d
}

// The durable table is shared copy-on-write with the snapshots taken of it
// (Snapshot): the map while durShared, and every record of an earlier
// generation than durGen. Every change goes through durMut, durPut and
// durDelete.

// durMut returns inode id's durable record for changing (nil when there is
// none): a copy when the record is shared with a snapshot.
func (fs *FS) durMut(id uint64) *durInode {
	d := fs.dur[id]
	if d == nil || d.gen == fs.durGen {
		return d
	}
	c := *d
	if c.entries != nil {
		c.entries = maps.Clone(d.entries)
	}
	c.dataShared = c.data != nil
	fs.durPut(id, &c)
	return &c
}

// durPut makes d inode id's durable record.
func (fs *FS) durPut(id uint64, d *durInode) {
	if fs.durShared {
		fs.dur = maps.Clone(fs.dur)
		fs.durShared = false
	}
	d.gen = fs.durGen
	fs.dur[id] = d
	fs.durVersion++
	if len(fs.durTouched) > 2*len(fs.dur)+64 {
		// Ids of records since deleted or put twice: keep each live one once.
		live := fs.durTouched[:0]
		for _, t := range fs.durTouched {
			if r := fs.dur[t]; r != nil && r.gen == fs.durGen && !r.touched {
				r.touched = true
				live = append(live, t)
			}
		}
		for _, t := range live {
			fs.dur[t].touched = false
		}
		fs.durTouched = live
	}
	fs.durTouched = append(fs.durTouched, id)
}

// durDelete removes inode id's durable record.
func (fs *FS) durDelete(id uint64) {
	if fs.durShared {
		fs.dur = maps.Clone(fs.dur)
		fs.durShared = false
	}
	delete(fs.dur, id)
	fs.durVersion++
}

// durTarget is the target a durable record of i carries: a symlink's target, a
// device node's st_rdev in decimal (so that every path that makes records
// from a mode and a target keeps it), "" for other inodes.
func durTarget(i *Inode) string {
	switch i.mode & S_IFMT {
	case S_IFCHR, S_IFBLK:
		return strconv.FormatUint(i.rdev, 10)
	}
	return i.target
}

func newDurInode(bs int64, mode uint32, target string) *durInode {
	d := &durInode{mode: mode, target: target}
	switch mode & S_IFMT {
	case S_IFCHR, S_IFBLK:
		d.rdev, _ = strconv.ParseUint(target, 10, 64)
	case S_IFREG:
		d.data = newFileData(bs)
	case S_IFDIR:
		d.entries = map[string]uint64{}
	case S_IFLNK:
		d.size = int64(len(target))
	}
	return d
}

// ownData makes d's data private before it is changed.
func (d *durInode) ownData() *fileData {
	if d.dataShared {
		d.data = shareData(d.data) // not Clone: see shareData
		d.dataShared = false
	}
	return d.data
}

// blockRuns calls fn for each run of consecutive blocks of blocks (in
// increasing order, distinct), as [first, end), in order.
func blockRuns(blocks []int64, fn func(first, end int64)) {
	for k := 0; k < len(blocks); {
		e := k + 1
		for e < len(blocks) && blocks[e] == blocks[e-1]+1 {
			e++
		}
		fn(blocks[k], blocks[e-1]+1)
		k = e
	}
}

// sortedBlocks returns the keys of m in increasing order. Keys that lie
// close together (a file written sequentially: at most 8 block indexes per
// key in their span) are sorted through a bitmap of the span, in time linear
// in their number; others by comparison.
func sortedBlocks(m map[int64]uint64) []int64 {
	bs := make([]int64, 0, len(m))
	lo, hi := int64(math.MaxInt64), int64(-1)
	for b := range m {
		bs = append(bs, b)
		lo, hi = min(lo, b), max(hi, b)
	}
	if len(bs) < 64 || lo < 0 || hi-lo >= 8*int64(len(bs)) {
		slices.Sort(bs)
		return bs
	}
	set := make([]uint64, (hi-lo)/64+1)
	for _, b := range bs {
		set[(b-lo)/64] |= 1 << ((b - lo) % 64)
	}
	bs = bs[:0]
	for w, word := range set {
		for ; word != 0; word &= word - 1 {
			bs = append(bs, lo+int64(w)*64+int64(bits.TrailingZeros64(word)))
		}
	}
	return bs
}

// writeback moves i's dirty page-cache data to the device: into the device cache
// when toDevice is set and the device has a write cache, else to durable media. A
// fault on OpWriteback loses the data as Linux does (blocks clean, error recorded).
func (fs *FS) writeback(i *Inode, toDevice bool) {
	p := &i.pend
	if len(p.dirty) == 0 && len(p.ranges) == 0 {
		return
	}
	p.dropVersions()
	// ext4 maps the blocks before the I/O, so a failing writeback allocates
	// them too; and it does whether the inode is durable or not.
	var blocks []int64
	if len(p.dirty) > 0 {
		blocks = sortedBlocks(p.dirty)
		fs.allocDirtyBlocks(i, blocks)
	}
	if f := fs.fault(OpWriteback, i, ""); f.Errno != 0 {
		p.dirty = nil
		p.ranges = p.ranges[:0]
		i.errseq = i.errseq&^1 + 2
		i.wbErr = f.Errno
		return
	}
	d := fs.durOf(i)
	if d == nil {
		p.dirty = nil
		p.ranges = p.ranges[:0]
		return
	}
	data := d.ownData()
	for _, r := range p.ranges {
		data.CopyRange(i.data, r.off, r.n)
	}
	p.ranges = p.ranges[:0]
	if len(p.dirty) == 0 {
		return
	}
	bs := fs.cfg.blockSize
	if toDevice && fs.cfg.writeCache {
		if p.devData == nil {
			p.devData = newFileData(bs)
		}
		blockRuns(blocks, func(first, end int64) {
			p.devData.CopyRange(i.data, first*bs, (end-first)*bs)
		})
		if len(p.dev) == 0 {
			p.dev, p.dirty = p.dirty, nil // dropped below anyway
		} else {
			for b, seq := range p.dirty {
				p.dev[b] = seq
			}
		}
		if !p.devList {
			if len(fs.pending)+len(fs.devInodes) >= fs.pruneAt {
				fs.prunePending()
			}
			p.devList = true
			fs.devInodes = append(fs.devInodes, i)
		}
	} else {
		blockRuns(blocks, func(first, end int64) {
			data.CopyRange(i.data, first*bs, (end-first)*bs)
		})
	}
	// Drop the map rather than clear it: a cleared map keeps its table, and
	// iterating it costs in proportion to the most blocks it ever held, so an
	// fsync after a 4 KiB append to a 64 MiB file cost ~20 µs walking 16384
	// empty slots (BenchmarkAppendFsync).
	p.dirty = nil
}

// allocDirty gives the dirty blocks of i's page cache their extents, as ext4's
// writeback does when it maps them (fileData.Writeback: delayed allocation,
// then conversion of unwritten extents at I/O completion). The data itself
// stays dirty: callers that write it back do so after.
func (fs *FS) allocDirty(i *Inode) {
	fs.allocDirtyRange(i, 0, -1)
}

// allocDaBlocks is ext4_alloc_da_blocks, auto_da_alloc's flush: the writeback
// of every dirty block of i (allocDirty), started only when i has delayed
// blocks (i_reserved_data_blocks); dirty blocks over unwritten extents alone
// are left as they are, and so is i_disksize.
//
// Observed on Linux 6.18, ext4: creat (O_TRUNC) with its descriptor kept
// open, block 0 fallocated (KEEP_SIZE), ftruncate to 100 bytes, 3000 bytes
// written at 0, then another descriptor opened and closed: block 0 stays
// unwritten and i_disksize 100, so that a failing O_DIRECT write at 1024
// still counts as extending and frees a block fallocated past EOF.
func (fs *FS) allocDaBlocks(i *Inode) {
	if i.data.hasDelayed() {
		fs.allocDirty(i)
	}
}

// allocDirtyRange is allocDirty for the dirty blocks touched by [off, off+n)
// (n < 0: to the end of file and beyond). With WithCapacity, the extent-tree
// blocks it adds count as used space, as mutateData counts them.
func (fs *FS) allocDirtyRange(i *Inode, off, n int64) {
	p := &i.pend
	if len(p.dirty) == 0 || !i.IsRegular() || n == 0 {
		return
	}
	bs := fs.cfg.blockSize
	first, last := off/bs, int64(math.MaxInt64)
	if n > 0 && off+n > off { // else to the end (n < 0, or off+n past MaxInt64)
		last = (off + n - 1) / bs
	}
	var blocks []int64
	if n > 0 && last-first < int64(len(p.dirty)) {
		for b := first; b <= last; b++ {
			if _, ok := p.dirty[b]; ok {
				blocks = append(blocks, b)
			}
		}
	} else {
		blocks = sortedBlocks(p.dirty)
		lo, _ := slices.BinarySearch(blocks, first)
		hi := len(blocks)
		if last < math.MaxInt64 {
			hi, _ = slices.BinarySearch(blocks, last+1)
		}
		blocks = blocks[lo:hi]
	}
	fs.allocDirtyBlocks(i, blocks)
}

// allocDirtyBlocks is allocDirtyRange of the dirty blocks given, in
// increasing order.
func (fs *FS) allocDirtyBlocks(i *Inode, blocks []int64) {
	if !i.IsRegular() {
		return
	}
	if i.dataShared {
		i.data = shareData(i.data) // not Clone: see shareData
		i.dataShared = false
	}
	var before int64
	if fs.cfg.capacity > 0 {
		before = i.data.Blocks() // the tree blocks this adds count as used, as in mutateData
	}
	bs := fs.cfg.blockSize
	mapped := int64(-1) // the last block mapped
	blockRuns(blocks, func(first, end int64) {
		mapped = max(mapped, i.data.mapRun(first, end))
	})
	// mpage_map_and_submit_extent: i_disksize moves up to the end of what
	// was mapped, at most i_size.
	if ds := min((mapped+1)*bs, i.size); ds > i.diskSize {
		i.diskSize = ds
	}
	i.blocksOK = false
	fs.changed()
	if fs.cfg.capacity > 0 {
		fs.used += (i.data.Blocks() - before) * 512
	}
}

// writebackRange writes back the blocks of [off, off+n) at once, as an O_DIRECT
// write does (the page cache is flushed over the range first).
func (fs *FS) writebackRange(i *Inode, off, n int64) {
	fs.markDirty(i, off, n)
	p := &i.pend
	bs := fs.cfg.blockSize
	saved := p.dirty
	only := make(map[int64]uint64, (n+bs-1)/bs+1)
	for b := off / bs; b <= (off+n-1)/bs; b++ {
		if seq, ok := saved[b]; ok {
			only[b] = seq
			delete(saved, b)
		}
	}
	ranges := p.ranges
	p.dirty, p.ranges = only, nil
	fs.writeback(i, true)
	p.dirty, p.ranges = saved, ranges
}

// flushDevice makes everything in the device's write cache durable.
func (fs *FS) flushDevice() {
	bs := fs.cfg.blockSize
	for _, i := range fs.devInodes {
		p := &i.pend
		p.devList = false
		if d := fs.durOf(i); d != nil {
			data := d.ownData()
			blockRuns(sortedBlocks(p.dev), func(first, end int64) {
				data.CopyRange(p.devData, first*bs, (end-first)*bs)
			})
		}
		p.dev = nil // not clear: see writeback
		p.devData = nil
	}
	fs.devInodes = fs.devInodes[:0]
}

// commitMeta makes durable, in order, every pending namespace operation up to the
// last one that touches dir (all of them when dir is nil).
func (fs *FS) commitMeta(dir *Inode) {
	last := len(fs.metaLog) - 1
	if dir != nil {
		for last >= 0 && !fs.metaLog[last].touches(dir) {
			last--
		}
	}
	t := durMap{fs}
	for _, op := range fs.metaLog[:last+1] {
		if op.dead {
			fs.metaDead--
			continue
		}
		applyMeta(t, &op.rec)
		fs.countMeta(op, -1)
		if op.node.created == op {
			op.node.created = nil
		}
	}
	n := copy(fs.metaLog, fs.metaLog[last+1:])
	clear(fs.metaLog[n:])
	fs.metaLog = fs.metaLog[:n]
}

// durTable is a table of durable inodes that namespace operations and
// surviving pending changes are applied to: the file system's own (durMap,
// when a sync commits them) or a crash state's overlay (CrashState).
type durTable interface {
	// rec returns the record of inode id, nil when there is none; callers
	// do not change it.
	rec(id uint64) *durInode
	// ensure returns the record of inode id for changing, making an empty
	// one (newDurInode) when there is none.
	ensure(id uint64, mode uint32, target string) *durInode
	// drop takes one link from inode id's record, and removes the record
	// when no link is left.
	drop(id uint64)
	// entry, setEntry and delEntry read and change directory dir's entries,
	// making its record first (ensure) when there is none.
	entry(dir uint64, name string) (uint64, bool)
	setEntry(dir uint64, name string, id uint64)
	delEntry(dir uint64, name string)
	// eachEntry calls fn for every entry of directory record d (of inode
	// dir), in no particular order.
	eachEntry(dir uint64, d *durInode, fn func(name string, id uint64))
}

// durMap is the durTable of the file system's own durable records.
type durMap struct{ fs *FS }

func (t durMap) rec(id uint64) *durInode { return t.fs.dur[id] }

func (t durMap) ensure(id uint64, mode uint32, target string) *durInode {
	d := t.fs.durMut(id)
	if d == nil {
		d = newDurInode(t.fs.cfg.blockSize, mode, target)
		t.fs.durPut(id, d)
	}
	return d
}

func (t durMap) drop(id uint64) {
	if d := t.fs.durMut(id); d != nil {
		d.links--
		if d.links <= 0 {
			t.fs.durDelete(id)
		}
	}
}

func (t durMap) entry(dir uint64, name string) (uint64, bool) {
	id, ok := t.ensure(dir, S_IFDIR, "").entries[name]
	return id, ok
}

func (t durMap) setEntry(dir uint64, name string, id uint64) {
	t.ensure(dir, S_IFDIR, "").entries[name] = id
}

func (t durMap) delEntry(dir uint64, name string) {
	delete(t.ensure(dir, S_IFDIR, "").entries, name)
}

func (t durMap) eachEntry(_ uint64, d *durInode, fn func(string, uint64)) {
	for name, id := range d.entries {
		fn(name, id)
	}
}

// applyMeta applies the namespace operation m to the durable table t.
func applyMeta(t durTable, m *metaRec) {
	switch m.kind {
	case metaCreate:
		n := t.ensure(m.node, m.mode, m.target)
		if old, ok := t.entry(m.dir, m.name); ok {
			if old == m.node {
				return
			}
			t.drop(old)
		}
		t.setEntry(m.dir, m.name, m.node)
		n.links++
	case metaRemove:
		if old, ok := t.entry(m.dir, m.name); ok {
			t.delEntry(m.dir, m.name)
			t.drop(old)
		}
	case metaRename:
		n := t.ensure(m.node, m.mode, m.target)
		if id, ok := t.entry(m.dir, m.name); ok && id == m.node {
			t.delEntry(m.dir, m.name)
			n.links--
		}
		if old, ok := t.entry(m.dir2, m.name2); ok && old != m.node {
			t.drop(old)
		}
		t.setEntry(m.dir2, m.name2, m.node)
		n.links++
	case metaExchange:
		t.ensure(m.node, m.mode, m.target)
		t.ensure(m.node2, m.mode2, m.target2)
		t.setEntry(m.dir, m.name, m.node2)
		t.setEntry(m.dir2, m.name2, m.node)
	}
}

// copyAttrs makes i's attributes durable in d.
func copyAttrs(d *durInode, i *Inode) {
	d.mode, d.uid, d.gid = i.mode, i.uid, i.gid
	d.atime, d.mtime, d.ctime = i.atime, i.mtime, i.ctime
}

// fsyncLocked implements fsync (dataOnly false) and fdatasync (dataOnly true) of
// i, and reports a writeback error through the caller's errseq cursor.
func (fs *FS) fsyncLocked(i *Inode, dataOnly bool, errseq *uint64) error {
	return fs.fsyncUpTo(i, dataOnly, i.size, errseq)
}

// fsyncUpTo is fsyncLocked committing size as the durable size of a regular
// file (FdatasyncRange commits less than i.size).
func (fs *FS) fsyncUpTo(i *Inode, dataOnly bool, size int64, errseq *uint64) error {
	fs.flushDevice()
	before := i.errseq
	if i.IsDir() {
		fs.commitMeta(i)
	}
	fs.writeback(i, false)
	if d := fs.durOf(i); d != nil {
		if i.IsRegular() {
			d.size = size
		}
		if !dataOnly || d.links == 0 {
			copyAttrs(d, i)
		}
	}
	i.pend.sizeSeq = 0
	if !dataOnly {
		i.pend.attrSeq = 0
	}
	if errseq == nil {
		if i.errseq != before {
			i.errseq |= 1
			return i.wbErr
		}
		return nil
	}
	cur := i.errseq
	if cur == 0 || cur&^1 == *errseq&^1 {
		return nil
	}
	i.errseq |= 1
	*errseq = i.errseq
	return i.wbErr
}

// SampleErrSeq returns the writeback-error cursor an open file description takes
// at open (errseq_sample): the current error if some description has seen it
// already, else zero, so that a description opened after an unseen error still
// reports it.
func (i *Inode) SampleErrSeq() uint64 {
	i.fs.lock()
	defer i.fs.mu.Unlock()
	return i.sampleErrSeqLocked()
}

func (i *Inode) sampleErrSeqLocked() uint64 {
	if i.errseq&1 == 0 {
		return 0
	}
	return i.errseq
}

// Fsync makes i's data and metadata durable, as fsync(2); for a directory, also
// its pending entry changes (and, journal order, every namespace operation made
// before them). errseq is the caller's cursor (see SampleErrSeq); nil reports only
// an error that this call's own writeback met.
func (i *Inode) Fsync(errseq *uint64) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if f := fs.fault(OpFsync, i, ""); f.Errno != 0 {
		return f.Errno
	}
	return fs.fsyncLocked(i, false, errseq)
}

// Fdatasync is Fsync without the metadata that reading the data back does not
// need: the size is made durable, timestamps, mode and owner are not.
func (i *Inode) Fdatasync(errseq *uint64) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if f := fs.fault(OpFsync, i, ""); f.Errno != 0 {
		return f.Errno
	}
	return fs.fsyncLocked(i, true, errseq)
}

// SyncFileRange starts writeback of the dirty blocks of [off, off+n) (n == 0: to
// the end of file), as sync_file_range(2) with SYNC_FILE_RANGE_WRITE: the data
// reaches the device (its write cache when it has one) but no metadata is
// committed and nothing is flushed, so it is not durable by itself.
func (i *Inode) SyncFileRange(off, n int64) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if !i.IsRegular() || len(i.pend.dirty) == 0 {
		return nil
	}
	if n == 0 {
		n = max(i.size-off, 0) + fs.cfg.blockSize
	}
	fs.withDirtyIn(i, off, n, func() { fs.writeback(i, true) })
	return nil
}

// withDirtyIn runs fn with i's pending writeback narrowed to the dirty blocks
// touched by [off, off+n) (to the end when off+n is past MaxInt64); the other
// dirty blocks, and the pending sub-block ranges, stay pending for later.
func (fs *FS) withDirtyIn(i *Inode, off, n int64, fn func()) {
	bs := fs.cfg.blockSize
	end := off + n
	if end < off {
		end = math.MaxInt64
	}
	saved := i.pend.dirty
	only := map[int64]uint64{}
	for b, seq := range saved {
		if b*bs+bs > off && b*bs < end {
			only[b] = seq
			delete(saved, b)
		}
	}
	ranges := i.pend.ranges
	i.pend.dirty, i.pend.ranges = only, nil
	fn()
	i.pend.dirty, i.pend.ranges = saved, ranges
}

// syncInode makes i's data and metadata durable as sync(2) does: a writeback
// error is reported to no description and stays unseen
// (filemap_fdatawait_keep_errors), so that every description, even one opened
// later, still gets it from fsync.
func (fs *FS) syncInode(i *Inode) {
	before := i.errseq
	_ = fs.fsyncLocked(i, false, nil)
	if i.errseq != before {
		i.errseq &^= 1
	}
}

// Sync makes everything durable, as sync(2).
func (fs *FS) Sync() error {
	fs.lock()
	defer fs.mu.Unlock()
	fs.syncLocked()
	return nil
}

func (fs *FS) syncLocked() {
	fs.flushDevice()
	fs.commitMeta(nil)
	for _, i := range fs.pending {
		fs.syncInode(i)
		i.pend.listed = false
	}
	clear(fs.pending)
	fs.pending = fs.pending[:0]
}

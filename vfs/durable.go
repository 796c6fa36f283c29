package vfs

import (
	"slices"
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
	listed  bool             // on fs.pending
	devList bool             // on fs.devInodes
}

// dataRange is a byte range whose allocation changed.
type dataRange struct {
	off, n int64
	seq    uint64
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
	entries             map[string]uint64
	links               int // durable entries naming it
}

// metaKind is the kind of a namespace operation.
type metaKind uint8

const (
	metaCreate   metaKind = iota + 1 // a new entry dir/name → ino (create, mkdir, symlink, link)
	metaRemove                       // entry dir/name removed (unlink, rmdir)
	metaRename                       // dir/name moved to dir2/name2, replacing what was there
	metaExchange                     // dir/name and dir2/name2 swapped
)

// metaOp is one namespace operation not yet durable.
type metaOp struct {
	seq         uint64
	kind        metaKind
	dir, dir2   *Inode
	name, name2 string
	node, node2 *Inode // the inode named (node2: the other one of an exchange)
	mode        uint32 // node's mode when the operation was made
	target      string // node's symlink target
}

func (op *metaOp) touches(dir *Inode) bool { return op.dir == dir || op.dir2 == dir }

func (fs *FS) logMeta(kind metaKind, dir *Inode, name string, node *Inode, dir2 *Inode, name2 string) {
	op := &metaOp{seq: fs.nextSeq(), kind: kind, dir: dir, name: name, node: node, dir2: dir2, name2: name2, mode: node.mode, target: node.target}
	if kind == metaExchange {
		op.node2 = dir.entries[name]
	}
	fs.metaLog = append(fs.metaLog, op)
}

func (fs *FS) list(i *Inode) {
	if !i.pend.listed {
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
		p.dirty = make(map[int64]uint64)
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
	if k := len(p.ranges) - 1; k >= 0 && p.ranges[k].off <= off && off <= p.ranges[k].off+p.ranges[k].n {
		r := &p.ranges[k]
		r.n = max(r.off+r.n, off+n) - r.off
		r.seq = seq
	} else {
		p.ranges = append(p.ranges, dataRange{off, n, seq})
	}
	fs.list(i)
}

func (fs *FS) markSize(i *Inode) {
	i.pend.sizeSeq = fs.nextSeq()
	fs.list(i)
}

func (fs *FS) markAttr(i *Inode) {
	i.pend.attrSeq = fs.nextSeq()
	fs.list(i)
}

// durOf returns i's durable record, creating it (empty) when i has a name; nil for
// an unlinked inode that never became durable.
func (fs *FS) durOf(i *Inode) *durInode {
	d := fs.dur[i.ino]
	if d == nil {
		if i.nlink == 0 {
			return nil
		}
		d = newDurInode(fs, i.mode, i.target)
		fs.dur[i.ino] = d
	}
	return d
}

func newDurInode(fs *FS, mode uint32, target string) *durInode {
	d := &durInode{mode: mode, target: target}
	switch mode & S_IFMT {
	case S_IFREG:
		d.data = newFileData(fs.cfg.blockSize)
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

// sortedBlocks returns the keys of m in increasing order.
func sortedBlocks(m map[int64]uint64) []int64 {
	bs := make([]int64, 0, len(m))
	for b := range m {
		bs = append(bs, b)
	}
	slices.Sort(bs)
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
			p.dev = make(map[int64]uint64)
		}
		for b, seq := range p.dirty {
			p.devData.CopyRange(i.data, b*bs, bs)
			p.dev[b] = seq
		}
		if !p.devList {
			p.devList = true
			fs.devInodes = append(fs.devInodes, i)
		}
	} else {
		for _, b := range sortedBlocks(p.dirty) {
			data.CopyRange(i.data, b*bs, bs)
		}
	}
	// Drop the map rather than clear it: a cleared map keeps its table, and
	// iterating it costs in proportion to the most blocks it ever held, so an
	// fsync after a 4 KiB append to a 64 MiB file cost ~20 µs walking 16384
	// empty slots (BenchmarkAppendFsync).
	p.dirty = nil
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
			for _, b := range sortedBlocks(p.dev) {
				data.CopyRange(p.devData, b*bs, bs)
			}
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
	for _, op := range fs.metaLog[:last+1] {
		applyMeta(fs, fs.dur, op)
	}
	n := copy(fs.metaLog, fs.metaLog[last+1:])
	clear(fs.metaLog[n:])
	fs.metaLog = fs.metaLog[:n]
}

// applyMeta applies op to the durable inode table dur.
func applyMeta(fs *FS, dur map[uint64]*durInode, op *metaOp) {
	ensure := func(i *Inode, mode uint32, target string) *durInode {
		d := dur[i.ino]
		if d == nil {
			d = newDurInode(fs, mode, target)
			dur[i.ino] = d
		}
		return d
	}
	drop := func(id uint64) {
		if d := dur[id]; d != nil {
			d.links--
			if d.links <= 0 {
				delete(dur, id)
			}
		}
	}
	switch op.kind {
	case metaCreate:
		dir := ensure(op.dir, S_IFDIR, "")
		n := ensure(op.node, op.mode, op.target)
		if old, ok := dir.entries[op.name]; ok {
			if old == op.node.ino {
				return
			}
			drop(old)
		}
		dir.entries[op.name] = op.node.ino
		n.links++
	case metaRemove:
		dir := ensure(op.dir, S_IFDIR, "")
		if old, ok := dir.entries[op.name]; ok {
			delete(dir.entries, op.name)
			drop(old)
		}
	case metaRename:
		src := ensure(op.dir, S_IFDIR, "")
		dst := ensure(op.dir2, S_IFDIR, "")
		n := ensure(op.node, op.mode, op.target)
		if id, ok := src.entries[op.name]; ok && id == op.node.ino {
			delete(src.entries, op.name)
			n.links--
		}
		if old, ok := dst.entries[op.name2]; ok && old != op.node.ino {
			drop(old)
		}
		dst.entries[op.name2] = op.node.ino
		n.links++
	case metaExchange:
		a := ensure(op.dir, S_IFDIR, "")
		b := ensure(op.dir2, S_IFDIR, "")
		na := ensure(op.node, op.mode, op.target)
		nb := ensure(op.node2, op.node2.mode, op.node2.target)
		_, _ = na, nb
		a.entries[op.name] = op.node2.ino
		b.entries[op.name2] = op.node.ino
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
	fs.flushDevice()
	before := i.errseq
	if i.IsDir() {
		fs.commitMeta(i)
	}
	fs.writeback(i, false)
	if d := fs.durOf(i); d != nil {
		if i.IsRegular() {
			d.size = i.size
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
	i.fs.mu.Lock()
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
	fs.mu.Lock()
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
	fs.mu.Lock()
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
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if !i.IsRegular() || len(i.pend.dirty) == 0 {
		return nil
	}
	if n == 0 {
		n = max(i.size-off, 0) + fs.cfg.blockSize
	}
	bs := fs.cfg.blockSize
	saved := i.pend.dirty
	only := map[int64]uint64{}
	for b, seq := range saved {
		if b*bs+bs > off && b*bs < off+n {
			only[b] = seq
			delete(saved, b)
		}
	}
	ranges := i.pend.ranges
	i.pend.dirty, i.pend.ranges = only, nil
	fs.writeback(i, true)
	i.pend.dirty, i.pend.ranges = saved, ranges
	return nil
}

// Sync makes everything durable, as sync(2).
func (fs *FS) Sync() error {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.syncLocked()
	return nil
}

func (fs *FS) syncLocked() {
	fs.flushDevice()
	fs.commitMeta(nil)
	for _, i := range fs.pending {
		before := i.errseq
		_ = fs.fsyncLocked(i, false, nil)
		if i.errseq != before {
			// sync(2) reports nothing to the files' descriptions and keeps a new
			// writeback error unseen (filemap_fdatawait_keep_errors), so that
			// every description, even one opened later, still gets it from fsync.
			i.errseq &^= 1
		}
		i.pend.listed = false
	}
	clear(fs.pending)
	fs.pending = fs.pending[:0]
}

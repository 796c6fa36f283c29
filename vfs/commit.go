package vfs

import "time"

// What makes pending changes durable or moot without a sync call: the file
// system's own periodic commit and writeback, and changes that cancel out.
// Every function here runs with fs.mu held unless its name says otherwise.

// Defaults of the periodic commit, Linux's: ext4's commit=nrsec "limits the
// maximum age of the running transaction", 5 seconds by default
// (JBD2_DEFAULT_MAX_COMMIT_AGE; Documentation/admin-guide/ext4.rst, once
// Documentation/filesystems/ext4.txt), and the flusher writes back data that
// has been dirty for longer than vm.dirty_expire_centisecs, 3000 (30 s),
// waking every vm.dirty_writeback_centisecs, 500 (5 s)
// (Documentation/admin-guide/sysctl/vm.rst).
const (
	DefaultCommitInterval = 5 * time.Second
	DefaultDirtyExpire    = 30 * time.Second
)

// WithPeriodicCommit sets the periodic commit, in the virtual time of the
// file system's clock (WithClock): the journal commits its running
// transaction (every pending namespace operation, and the attributes and
// allocation changes of the inodes) commit after the first change made since
// the last commit, and data dirty for expire or longer is written back (with
// its size) at the first operation after it expires. A commit flushes the
// device's write cache, as jbd2's commit block does. A size that waits for
// delayed allocation (an append not yet written back) is not committed:
// ext4 commits i_disksize. Zero commit turns both off: only sync calls make
// changes durable. The default is on, with Linux's intervals (5 s and 30 s);
// with the default clock, which advances 1 µs a reading, a commit comes
// after 5 million readings.
//
// A writeback fault rule (OpWriteback) applies to this writeback as to any
// other. The model checks the times when an operation starts, so a commit
// falls between two calls, never inside one; the flusher's 5-second wakeups
// are not modelled (expired data is written back at the next operation),
// nor is writeback started by the amount of dirty memory
// (dirty_background_ratio). A crash explorer that treats the commit as a
// choice (it may or may not have happened by a crash point) turns it off.
func WithPeriodicCommit(commit, expire time.Duration) Option {
	return func(c *config) { c.commit, c.expire = Timespec(commit), Timespec(expire) }
}

// WithCancel says whether a create and the remove of the same name cancel out
// when no commit can fall between them (the default: on), so that a program
// that never syncs keeps flat memory. A crash explorer whose persistence model
// lets a commit fall between any two calls turns it off: with it, no crash
// state after the remove keeps the create alone.
func WithCancel(on bool) Option { return func(c *config) { c.noCancel = !on } }

// WithHistory says whether a pending block or size changed again by a later
// call keeps its earlier value (default: off), so that Pending lists one
// change per call that made a value still pending: a block written by two
// calls since it was last written back is two PendingWrite changes, each
// with the block's content after its call, and a size changed by two calls
// is two PendingSize changes. A crash state applies the changes it keeps in
// the order they were made, so the latest kept value wins: one that keeps
// the first call's change and loses the second's holds the block (or size)
// as it was between the two calls, not its durable value. A crash explorer
// whose models keep calls in order turns it on. The cost is a copy of each
// block rewritten while pending, until writeback. A truncate, punch or zero
// range over dirty blocks keeps their earlier content the same way, the
// blocks' content after it going with its call; collapse and insert range,
// which write back what they shift first, and sync_file_range's partial
// size keep no earlier values.
func WithHistory(on bool) Option { return func(c *config) { c.history = on } }

// lock takes fs.mu and runs the periodic commit and writeback that are due.
func (fs *FS) lock() {
	fs.mu.Lock()
	if fs.cfg.commit > 0 && (fs.txnExpires != 0 || fs.nextExpire != 0) {
		fs.periodicLocked()
	}
}

// peekNow reads the clock without advancing the default one.
func (fs *FS) peekNow() Timespec {
	if fs.cfg.now != nil {
		return fs.cfg.now()
	}
	return 1_700_000_000_000_000_000 + fs.tick
}

// startTxn notes a change in the running transaction, which commits
// fs.cfg.commit after its first change (jbd2: t_expires).
func (fs *FS) startTxn() {
	if fs.cfg.commit > 0 && fs.txnExpires == 0 {
		fs.txnExpires = fs.peekNow() + fs.cfg.commit
	}
}

// noteDirty records when i became dirty (the kernel's dirtied_when).
func (fs *FS) noteDirty(i *Inode) {
	if fs.cfg.commit <= 0 {
		return
	}
	i.pend.dirtiedAt = fs.peekNow()
	if e := i.pend.dirtiedAt + fs.cfg.expire; fs.nextExpire == 0 || e < fs.nextExpire {
		fs.nextExpire = e
	}
}

func (fs *FS) periodicLocked() {
	now := fs.peekNow()
	if fs.nextExpire != 0 && now >= fs.nextExpire {
		fs.nextExpire = 0
		for _, i := range fs.pending {
			if len(i.pend.dirty) == 0 {
				continue
			}
			if i.pend.dirtiedAt+fs.cfg.expire <= now {
				fs.syncInode(i)
				fs.startTxn()
			} else if e := i.pend.dirtiedAt + fs.cfg.expire; fs.nextExpire == 0 || e < fs.nextExpire {
				fs.nextExpire = e
			}
		}
	}
	if fs.txnExpires != 0 && now >= fs.txnExpires {
		fs.txnExpires = 0
		fs.commitLocked()
	}
}

// commitLocked is the journal's commit: every pending namespace operation,
// and of every inode its attributes, and its allocation changes and size
// unless it has dirty data, in which case its size is committed up to
// i_disksize (an append waiting for delayed allocation is not), and the dirty
// blocks that this size exposes are written back first (data=ordered: the
// data of blocks allocated in the transaction reaches the disk before the
// commit; an overwrite of blocks allocated earlier waits for writeback).
func (fs *FS) commitLocked() {
	fs.flushDevice()
	fs.commitMeta(nil)
	for _, i := range fs.pending {
		if len(i.pend.dirty) == 0 {
			fs.syncInode(i)
			continue
		}
		d := fs.durOf(i)
		if d == nil {
			continue
		}
		copyAttrs(d, i)
		i.pend.attrSeq = 0
		if i.IsRegular() {
			size := min(i.size, i.diskSize)
			if size > d.size {
				fs.withDirtyIn(i, d.size, size-d.size, func() { fs.writeback(i, false) })
			}
			d.size = size
			if size == i.size {
				i.pend.sizeSeq = 0
			}
		}
	}
}

// cancelCreate is called by a remove of the last name of node (dir/name):
// when nothing but a pending create made that name, nothing else pending
// names node, and no commit can take the create without the remove, the two
// cancel out and it drops both, with what node had
// pending, and reports true. Every crash state that keeps both or neither is
// the same without them (node and the name are in none of them); what only a
// state keeping one of the two showed can no longer be chosen. The create
// stays in fs.metaLog, dead, as long as it is the last operation on dir: as
// every operation after it is on dir, an fsync of dir commits every operation
// made before it, as it would have with the remove.
func (fs *FS) cancelCreate(dir *Inode, name string, node *Inode) bool {
	op := node.created
	if fs.cfg.noCancel || node.nlink != 0 || node.metaRefs != 1 || op == nil || op.dead || op.dir != dir || op.rec.name != name ||
		fs.metaEnts[entKey{dir.ino, name}] != 1 {
		return false
	}
	// The name needs no check against the durable entries: one there that
	// the running file system no longer has was removed by a pending
	// operation, counted in metaEnts. The directory need not be durable: a
	// crash state that lost its mkdir and kept the create has a record for it
	// that one without the create has not, but no name reaches it, and a
	// rename of the directory that survived gives it the same mode in both
	// (CrashState.ensureDir).
	// No commit may split the two: an fsync commits the operations up to the
	// last one on the directory synced, so every operation between them must
	// be on dir alone (an fsync of dir then commits up to the remove or
	// later, one of another directory stops before the create).
	for k := len(fs.metaLog) - 1; fs.metaLog[k] != op; k-- {
		if o := fs.metaLog[k]; o.dir != dir || o.dir2 != nil && o.dir2 != dir {
			return false
		}
	}
	fs.nextSeq() // the remove's, so that later changes are numbered as without the cancel
	fs.countMeta(op, -1)
	op.dead = true
	op.node = nil // nothing of it is needed any more
	node.created = nil
	fs.metaDead++
	p := &node.pend
	if p.dirty != nil && len(p.dirty) <= 8 { // a small map, kept for the next file's first write
		clear(p.dirty)
		fs.freeDirty = p.dirty
	}
	p.dirty, p.ranges, p.sizeSeq, p.attrSeq, p.hist = nil, nil, 0, 0, nil
	p.dev, p.devData = nil, nil
	if nd := fs.dur[node.ino]; nd != nil && nd.links == 0 {
		fs.durDelete(node.ino) // synced data of a file no durable name reaches
	}
	fs.recycleData(node)
	return true
}

// countMeta adds delta to the counts of pending operations per entry and per
// inode that op contributes to.
func (fs *FS) countMeta(op *metaOp, delta int32) {
	if fs.metaEnts == nil {
		fs.metaEnts = map[entKey]int32{}
	}
	ent := func(dir uint64, name string) {
		k := entKey{dir, name}
		if delta > 0 {
			fs.metaEnts[k] += delta // one look-up
		} else if n := fs.metaEnts[k] + delta; n != 0 {
			fs.metaEnts[k] = n
		} else {
			delete(fs.metaEnts, k)
		}
	}
	ent(op.rec.dir, op.rec.name)
	op.dir.metaRefs += delta
	op.node.metaRefs += delta
	if op.dir2 != nil {
		ent(op.rec.dir2, op.rec.name2)
		op.dir2.metaRefs += delta
	}
	if op.node2 != nil {
		op.node2.metaRefs += delta
	}
}

// prunePending drops from fs.pending the inodes with nothing pending, and
// from fs.devInodes those with nothing in the device cache, so that both stay
// in proportion to what is pending.
func (fs *FS) prunePending() {
	live := fs.pending[:0]
	for _, i := range fs.pending {
		p := &i.pend
		if len(p.dirty) == 0 && len(p.ranges) == 0 && p.sizeSeq == 0 && p.attrSeq == 0 {
			p.listed = false
			continue
		}
		live = append(live, i)
	}
	clear(fs.pending[len(live):])
	fs.pending = live
	dev := fs.devInodes[:0]
	for _, i := range fs.devInodes {
		if len(i.pend.dev) == 0 {
			i.pend.devList = false
			continue
		}
		dev = append(dev, i)
	}
	clear(fs.devInodes[len(dev):])
	fs.devInodes = dev
	fs.pruneAt = 2*(len(fs.pending)+len(fs.devInodes)) + 64
}

// compactMeta drops from fs.metaLog the cancelled operations followed by
// another on the same directory (which tells how far an fsync of it commits
// in their stead), once they are half of the log and more than twice those
// kept by the last compaction.
func (fs *FS) compactMeta() {
	if fs.metaDead < 64+2*fs.metaDeadKept || 2*fs.metaDead < len(fs.metaLog) {
		return
	}
	later := map[*Inode]bool{}
	kept := len(fs.metaLog)
	fs.metaDead = 0
	for k := len(fs.metaLog) - 1; k >= 0; k-- {
		op := fs.metaLog[k]
		if op.dead && later[op.dir] {
			continue
		}
		if op.dead {
			fs.metaDead++
		}
		later[op.dir] = true
		if op.dir2 != nil {
			later[op.dir2] = true
		}
		kept--
		fs.metaLog[kept] = op
	}
	n := copy(fs.metaLog, fs.metaLog[kept:])
	clear(fs.metaLog[n:])
	fs.metaLog = fs.metaLog[:n]
	fs.metaDeadKept = fs.metaDead
}

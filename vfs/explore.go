package vfs

import "fmt"

// Hooks for crash exploration (package crash): what an observer of the calls
// needs beyond Pending and CrashWith.

// Seq returns the sequence number of the latest change recorded: a change made
// after Seq returns has a larger Pending.Seq, so the Seq taken before and after a
// call bound the pending changes that call made.
func (fs *FS) Seq() uint64 {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.seq
}

// Settle makes i as it is now durable as if it had been there before the run
// began: the namespace operations that created it (its ancestors must be settled
// first), its dirty data, size and attributes. It is for state that existed before
// what is being explored (a file replay infers, a snapshot's content), never for
// the program's own changes: the pending changes of other inodes stay pending and
// keep their order.
func (fs *FS) Settle(i *Inode) {
	fs.lock()
	defer fs.mu.Unlock()
	t := durMap{fs}
	kept := fs.metaLog[:0]
	for _, op := range fs.metaLog {
		if op.rec.kind == metaCreate && op.node == i && !op.dead {
			applyMeta(t, &op.rec)
			fs.countMeta(op, -1)
			if i.created == op {
				i.created = nil
			}
			continue
		}
		kept = append(kept, op)
	}
	clear(fs.metaLog[len(kept):])
	fs.metaLog = kept
	fs.writeback(i, false)
	if d := fs.durOf(i); d != nil {
		if i.IsRegular() {
			d.size = i.size
		}
		copyAttrs(d, i)
	}
	i.pend.sizeSeq, i.pend.attrSeq = 0, 0
}

// InFlight reports whether i has changes not yet durable: dirty or
// device-cached data, allocation, size or attribute changes, or a namespace
// operation naming it.
func (i *Inode) InFlight() bool {
	fs := i.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	p := &i.pend
	if len(p.dirty) > 0 || len(p.ranges) > 0 || len(p.dev) > 0 || p.sizeSeq != 0 || p.attrSeq != 0 {
		return true
	}
	for _, op := range fs.metaLog {
		if op.node == i || op.node2 == i {
			return true
		}
	}
	return false
}

// CrashFrom is CrashWith for a list Pending returned earlier, sparing its
// recomputation when many states are built at one crash point. The caller
// guarantees that nothing changed fs since that Pending call; a change that
// recorded a new pending change (Seq moved since seq) is detected and is an
// error, a sync in between is not.
func (fs *FS) CrashFrom(pend []Pending, seq uint64, keep []Survival) (*FS, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.seq != seq {
		return nil, fmt.Errorf("vfs: CrashFrom: the file system changed since the pending list was taken")
	}
	if len(keep) != len(pend) {
		return nil, fmt.Errorf("vfs: CrashFrom: %d survival choices for %d pending changes", len(keep), len(pend))
	}
	snap := fs.snapshotLocked(false)
	if len(snap.pend) != len(pend) {
		return nil, fmt.Errorf("vfs: CrashFrom: the pending list changed since it was taken")
	}
	return snap.replay(keep).FS(), nil
}

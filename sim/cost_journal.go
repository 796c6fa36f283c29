package sim

import "github.com/iosim/iosim/device"

// The file system's rules in the time model: ext4 data=ordered with a jbd2
// journal, or UFS.
//
// ext4 (fs/ext4/fsync.c ext4_sync_file, fs/jbd2/commit.c): metadata changes
// join the running transaction; each inode remembers the transaction of its
// last change (i_sync_tid) and of its last change fdatasync needs (size,
// allocation: i_datasync_tid). fsync writes the inode's dirty pages back, then
// commits the transaction of i_sync_tid (fdatasync: i_datasync_tid) unless it
// has committed already, in which case it only flushes the device's write
// cache. A commit writes a descriptor block and the changed metadata blocks to
// the journal, waits for them, then writes the commit block (with a preceding
// cache flush and FUA when the device has a write cache). One commit runs at a
// time; the running transaction commits by itself every commit= seconds.
//
// ext4 without a journal (fs/ext4/fsync.c ext4_fsync_nojournal, then
// ext4_sync_file's blkdev_issue_flush under the barrier option): fsync writes
// the dirty pages, then, when the inode has a change fsync (fdatasync) needs,
// writes the inode's block and waits for it, then flushes the device's write
// cache. Nothing commits periodically: each inode is written on its own. (The
// parent directory that ext4_sync_parent also writes for a new file is not
// priced.)
//
// UFS (no log): a metadata change is made durable by a synchronous write of the
// inode's block. Each file has a readers/writer lock (rwlock): writes hold it as
// writer; under forcedirectio a write to a file with holes cannot go direct and
// takes the buffered path under the writer lock, and writes to a file without
// holes go direct holding it as reader (concurrent direct I/O).

// jiffy is the granularity of inode timestamps: current_time() reads the
// coarse clock, updated every tick (HZ=250: 4 ms), so a write dirties the inode
// for its mtime only when the tick changed (inode_needs_update_time).
const jiffy = 4_000_000

type journal struct {
	tm        *timeModel
	running   uint64 // tid of the running transaction
	committed uint64 // last committed tid
	lastDone  int64  // when the commit of committed completes
	busy      int64  // the journal device work ends (one commit at a time)
	nmeta     int64  // metadata blocks in the running transaction
	started   int64  // when the running transaction got its first change (-1: empty)
	head      int64  // next journal block (circular)
	interval  int64
}

const journalBlocks = 32768 // a 128 MiB journal of 4 KiB blocks (mke2fs default size)

func (j *journal) init(tm *timeModel) {
	j.tm = tm
	j.running = 1
	j.started = -1
	j.interval = int64(tm.p.FS.CommitSeconds) * 1e9
}

// dirty adds a metadata change to the running transaction and returns its tid.
func (j *journal) dirty(now int64) uint64 {
	if j.started < 0 {
		j.started = now
	}
	j.nmeta++
	return j.running
}

func (j *journal) addr() int64 {
	p := j.tm.p
	base := int64(p.FS.JournalOffset*float64(p.Device.CapacityBytes)) &^ (pageBytes - 1)
	return base + (j.head%journalBlocks)<<pageShift
}

// commit commits the running transaction starting no earlier than now and
// returns its completion.
func (j *journal) commit(now int64) int64 {
	tm := j.tm
	t := max(now, j.busy)
	tid := j.running
	blocks := 1 + min(j.nmeta, 64) // descriptor + metadata blocks (distinct buffers; bounded)
	j.running++
	j.nmeta, j.started = 0, -1
	_, t = tm.submit(device.Write, j.addr(), blocks<<pageShift, t)
	j.head += blocks
	if tm.p.Device.WriteCache {
		_, t = tm.submit(device.Flush, 0, 0, t)
		_, t = tm.submit(device.WriteFUA, j.addr(), pageBytes, t)
	} else {
		_, t = tm.submit(device.Write, j.addr(), pageBytes, t)
	}
	j.head++
	j.busy, j.committed, j.lastDone = t, tid, t
	tm.total.Commits++
	return t
}

// periodic commits the running transaction once it is commit= seconds old.
func (j *journal) periodic(now int64) {
	if j.interval > 0 && j.started >= 0 && now-j.started >= j.interval && !j.tm.ufs && !j.tm.noJournal {
		j.commit(j.started + j.interval)
	}
}

// metaChange records a metadata change of it (datasync: one fdatasync needs).
func (tm *timeModel) metaChange(it *inodeTime, datasync bool, now int64) {
	tid := tm.jr.dirty(now)
	it.syncTid = tid
	if datasync {
		it.datasyncTid = tid
	}
}

// touch updates it's mtime and ctime at now (file_update_time).
func (tm *timeModel) touch(it *inodeTime, now int64) {
	if tick := now / jiffy; tick != it.mtimeTick {
		it.mtimeTick = tick
		tm.metaChange(it, false, now)
	}
}

// makeDurable makes it's metadata durable as fsync (datasync: fdatasync) does
// once its data is written back, starting at now; it returns when done.
func (tm *timeModel) makeDurable(it *inodeTime, datasync, fua bool, now int64, d *Breakdown) int64 {
	tid := it.syncTid
	if datasync {
		tid = it.datasyncTid
	}
	j := &tm.jr
	if tm.ufs {
		if tid > it.ufsSynced {
			it.ufsSynced = j.running
			j.running++
			done := tm.wait(device.WriteFUA, it.base-pageBytes, pageBytes, now, d)
			return done
		}
		return now
	}
	if tm.noJournal {
		if tid > it.ufsSynced {
			it.ufsSynced = j.running
			j.running++
			now = tm.wait(device.Write, it.base-pageBytes, pageBytes, now, d)
		}
		if tm.p.Device.WriteCache && !fua {
			now = tm.wait(device.Flush, 0, 0, now, d)
		}
		return now
	}
	switch {
	case tid > j.committed:
		done := j.commit(now)
		d.Journal += done - now
		return done
	case tid == j.committed && now < j.lastDone:
		d.Journal += j.lastDone - now
		return j.lastDone
	case tm.p.Device.WriteCache && !fua:
		return tm.wait(device.Flush, 0, 0, now, d)
	}
	return now
}

// fsync prices fsync/fdatasync of it. The model does not tell which directory
// a namespace change touched: fsync of a directory commits the running
// transaction if it holds any change.
func (tm *timeModel) fsync(it *inodeTime, datasync bool, now int64, d *Breakdown) int64 {
	if it.ino.IsDir() && tm.jr.started >= 0 {
		it.syncTid, it.datasyncTid = tm.jr.running, tm.jr.running
	}
	done := tm.writeback(it, now, -1, 0, 0)
	d.Device += done - now
	return tm.makeDurable(it, datasync, false, done, d)
}

// syncAll prices sync/syncfs: every dirty page written back, then a commit.
func (tm *timeModel) syncAll(now int64, d *Breakdown) int64 {
	done := tm.flushOldest(0, now)
	d.Device += done - now
	now = done
	if tm.jr.started >= 0 && !tm.ufs && !tm.noJournal {
		done = tm.jr.commit(now)
		d.Journal += done - now
		return done
	}
	if tm.p.Device.WriteCache {
		return tm.wait(device.Flush, 0, 0, now, d)
	}
	return now
}

// rwsem is an inode's i_rwsem (UFS: its rwlock) in virtual time: a holder keeps
// it until the end of its call; a later exclusive acquirer waits for every
// holder, a later shared acquirer for the exclusive one.
type rwsem struct {
	exclFree   int64 // the last exclusive holder releases
	sharedFree int64 // the last shared holder releases
}

// lock acquires it's lock at now (excl: as writer) and returns when it got it
// and the function that releases it at a given time.
func (tm *timeModel) lock(it *inodeTime, excl bool, now int64, d *Breakdown) (int64, func(int64)) {
	l := &it.lock
	start := max(now, l.exclFree)
	if excl {
		start = max(start, l.sharedFree)
	}
	if start > now {
		d.LockWait += start - now
		d.LockWaits++
	}
	if excl {
		return start, func(end int64) { l.exclFree = max(l.exclFree, end) }
	}
	return start, func(end int64) { l.sharedFree = max(l.sharedFree, end) }
}

// write prices a write of n bytes at p.off (fl: the open flags in force).
func (tm *timeModel) write(t *Task, p *pre, it *inodeTime, fl uint32, n, now int64, d *Breakdown) int64 {
	off := p.off
	sync := fl&oDsync != 0
	datasync := fl&oSyncOnly == 0
	ufs := tm.ufs
	if tm.direct(p.f) && !(ufs && p.anyHoles) {
		return tm.directWrite(it, p, sync, datasync, n, now, d)
	}
	// Buffered: i_rwsem exclusive (ext4_buffered_write_iter; UFS: the writer
	// lock, held through the O_DSYNC writeback).
	now, rel := tm.lock(it, true, now, d)
	first, last := off>>pageShift, (off+n-1)>>pageShift
	cpu := (last - first + 1) * tm.cpu.lookup
	for idx := first; idx <= last; idx++ {
		s, ok := it.page(idx)
		if !ok {
			pstart, pend := idx<<pageShift, (idx+1)<<pageShift
			partial := pstart < off || pend > off+n
			if partial && pstart < p.size && !p.holes {
				// Read-modify-write of a page on the device.
				cpu += tm.cpu.alloc
				done := tm.readPages(it, idx, 1, now, d, false)
				d.Device += done - now
				now = done
				s, _ = it.page(idx)
			} else {
				s = tm.insert(it, idx, now, now, now)
				cpu += tm.cpu.alloc
			}
		}
		tm.pc.ent(s).ref = true
		tm.markDirty(it, s, now)
	}
	// generic_perform_write runs write_begin/write_end per page: a page that
	// allocates a block opens a journal handle, allocates the block, journals
	// the inode and puts the data on the transaction's ordered list (data=ordered:
	// ext3_ordered_write_end, ext4's jbd2_journal_inode_ranged_write), two
	// journal operations; an overwrite journals the inode once per call.
	if p.holes {
		it.allocPending = true
		cpu += (last - first + 1) * (tm.cpu.blockAlloc + 2*tm.cpu.journal)
	} else {
		cpu += tm.cpu.journal
	}
	now += cpu
	d.CPU += cpu
	c := tm.copyCost(n)
	tm.touchPages(it, first, last, n) // the written pages are in the CPU's cache
	d.Copy += c
	now += c
	if off+n > p.size {
		tm.metaChange(it, true, now)
	}
	tm.touch(it, now)
	if sync {
		// generic_write_sync: vfs_fsync_range over the written range.
		done := tm.writeback(it, now, last+1, first, 0)
		d.Device += done - now
		now = tm.makeDurable(it, datasync, false, done, d)
	}
	rel(now)
	// balance_dirty_pages: above dirty_ratio the writer waits for writeback.
	if tm.pc.dirty > tm.pc.limit {
		done := tm.flushOldest(tm.pc.bgLimit, now)
		d.Throttle += done - now
		now = done
	}
	return now
}

// directWrite prices an O_DIRECT write (ext4_dio_write_iter): i_rwsem shared for
// an overwrite of allocated blocks inside the file, exclusive when it allocates
// or extends; the cache over the range is written back and invalidated; the
// data goes to the device and the caller waits; with O_DSYNC an overwrite is a
// FUA write, anything else is followed by the fsync of the range.
func (tm *timeModel) directWrite(it *inodeTime, p *pre, sync, datasync bool, n, now int64, d *Breakdown) int64 {
	off := p.off
	excl := p.holes
	now, rel := tm.lock(it, excl, now, d)
	pages := (n + pageBytes - 1) >> pageShift
	cpu := pages * tm.cpu.pin
	if p.holes {
		cpu += pages*tm.cpu.blockAlloc + tm.cpu.journal
	}
	now += cpu
	d.CPU += cpu
	now = tm.invalidate(it, off, n, now, d)
	fua := sync && !p.holes && tm.p.Device.WriteCache
	op := device.Write
	if fua {
		op = device.WriteFUA
	}
	now = tm.wait(op, it.base+off, n, now, d)
	if p.holes {
		tm.metaChange(it, true, now)
	}
	tm.touch(it, now)
	if sync {
		now = tm.makeDurable(it, datasync, fua, now, d)
	}
	rel(now)
	return now
}

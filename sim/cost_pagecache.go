package sim

import (
	"math"
	"slices"

	"github.com/iosim/iosim/device"
)

// The page cache of the time model: a fixed number of page slots (the memory
// given to the page cache, memory.page_cache_bytes), replaced by the CLOCK
// (second-chance) algorithm over clean pages: a hit sets the page's referenced
// bit, reclaim clears it and takes the first clean unreferenced page, as Linux's
// reclaim does with PG_referenced on its LRU lists (mm/vmscan.c, mm/swap.c
// mark_page_accessed); dirty pages are not reclaimed, writeback cleans them.
// Background writeback and throttling follow Documentation/admin-guide/sysctl/
// vm.rst: above dirty_background_ratio of the cache, or for pages dirty longer
// than dirty_expire_centisecs (checked every dirty_writeback_centisecs), the
// flusher writes pages back without anyone waiting; above dirty_ratio the
// writer itself waits for writeback (balance_dirty_pages).

type pageEnt struct {
	it    *inodeTime // nil: free
	idx   int64      // page index in the file
	start int64      // when the device started reading it
	ready int64      // when its read completes (in flight until then)
	ref   bool       // referenced since the hand last passed
	dirty bool
	mark  bool // PG_readahead: reading it starts the next asynchronous window
	// touch is the copy clock (pageCache.copied) when the CPU last copied the
	// page, 0 if never since the device read it (see copyPages).
	touch int64
}

type pageCache struct {
	// ents holds the slots in blocks of entBlock, allocated as they are first
	// used (up to capacity): a cache that fills never copies its slots.
	ents  [][]pageEnt
	n     int // slots in use so far
	cap   int // pages
	hand  int
	free  []int32
	dirty int // dirty pages

	dirtyInodes []*inodeTime // inodes with dirty pages, oldest first
	bgLimit     int          // pages: dirty_background_ratio
	limit       int          // pages: dirty_ratio
	expire      int64        // ns: dirty_expire_centisecs
	period      int64        // ns: dirty_writeback_centisecs
	nextWake    int64        // next periodic flusher wake-up
	raMax       int64        // pages: read_ahead_kb
	copied      int64        // bytes the CPU has copied to or from the cache: the copy clock
}

// entBlock is the number of slots in a block of pageCache.ents.
const entBlock = 1 << 12

// ent returns slot s.
func (pc *pageCache) ent(s int32) *pageEnt { return &pc.ents[s/entBlock][s%entBlock] }

func (pc *pageCache) init(m device.Memory) {
	n := max(int(m.PageCacheBytes>>pageShift), 16)
	pc.cap = n
	pc.bgLimit = n * m.DirtyBackgroundRatio / 100
	pc.limit = n * m.DirtyRatio / 100
	pc.expire = int64(m.DirtyExpireCentisecs) * 1e7
	pc.period = int64(m.DirtyWritebackCentisec) * 1e7
	pc.nextWake = pc.period
	pc.raMax = int64(m.ReadAheadKB) * 1024 >> pageShift
}

// insert makes page idx of it resident (read by the device from start to
// ready) and returns its slot.
func (tm *timeModel) insert(it *inodeTime, idx, start, ready, now int64) int32 {
	pc := &tm.pc
	var s int32
	switch {
	case len(pc.free) > 0:
		s = pc.free[len(pc.free)-1]
		pc.free = pc.free[:len(pc.free)-1]
	case pc.n < pc.cap:
		s = int32(pc.n)
		if pc.n%entBlock == 0 {
			pc.ents = append(pc.ents, make([]pageEnt, entBlock))
		}
		pc.n++
	default:
		s = tm.reclaim(now)
	}
	*pc.ent(s) = pageEnt{it: it, idx: idx, start: start, ready: ready, ref: true}
	it.setPage(idx, s)
	return s
}

// reclaim frees a clean page by CLOCK and returns its slot. When every page is
// dirty it writes the hand's page back first.
func (tm *timeModel) reclaim(now int64) int32 {
	pc := &tm.pc
	n := pc.n
	for range 2 * n {
		s := pc.hand
		pc.hand = (pc.hand + 1) % n
		e := pc.ent(int32(s))
		if e.dirty || e.ready > now {
			continue
		}
		if e.ref {
			e.ref = false
			continue
		}
		e.it.delPage(e.idx)
		*e = pageEnt{}
		return int32(s)
	}
	s := pc.hand
	pc.hand = (pc.hand + 1) % n
	e := pc.ent(int32(s))
	if e.dirty {
		tm.writeback(e.it, now, -1, 0, 0)
	}
	e.it.delPage(e.idx)
	*e = pageEnt{}
	return int32(s)
}

// drop removes page idx of it from the cache (invalidation, truncation).
func (pc *pageCache) drop(it *inodeTime, idx int64) {
	s, ok := it.page(idx)
	if !ok {
		return
	}
	e := pc.ent(s)
	if e.dirty {
		pc.dirty--
	}
	it.delPage(idx)
	*e = pageEnt{}
	pc.free = append(pc.free, s)
}

// dropBeyond removes the pages of it at or past size (truncate).
func (pc *pageCache) dropBeyond(it *inodeTime, size int64) {
	first := (size + pageBytes - 1) >> pageShift
	for idx := first; idx < int64(len(it.dense)); idx++ {
		pc.drop(it, idx)
	}
	var gone []int64
	for idx := range it.sparse {
		if idx >= first {
			gone = append(gone, idx)
		}
	}
	slices.Sort(gone)
	for _, idx := range gone {
		pc.drop(it, idx)
	}
	it.dirty = slices.DeleteFunc(it.dirty, func(i int64) bool { return i >= first })
}

// fadvise applies posix_fadvise(2) advice for [off, off+n) (n 0: to the end
// of the file) to f's read-ahead and to the page cache, as generic_fadvise
// (mm/fadvise.c) does, and returns t's clock after it:
//   - NORMAL, RANDOM and SEQUENTIAL set f's read-ahead: the device's window,
//     none (FMODE_RANDOM), twice the device's window.
//   - DONTNEED starts writeback of the range's dirty pages
//     (__filemap_fdatawrite_range with WB_SYNC_NONE: nobody waits; the
//     device is busy with it) and drops the range's whole pages that are
//     clean, not under that writeback and not being read
//     (mapping_try_invalidate); the partial page at either end stays, except
//     a last page that ends the file.
//   - WILLNEED and NOREUSE have no effect (NB: the kernel's WILLNEED reads
//     the range ahead).
//
// NB: a page written back by an earlier writeback whose write is still in
// flight is dropped; the kernel would keep it until the write completes.
func (tm *timeModel) fadvise(f *File, it *inodeTime, off, n, advice, now int64) int64 {
	switch advice {
	case fadvNormal, fadvRandom, fadvSequential:
		f.ra.advice = advice
		return now
	case fadvDontneed:
	default:
		return now
	}
	end := off + n - 1 // endbyte, inclusive
	if n == 0 || end < off {
		end = math.MaxInt64
	}
	lo, hi := off>>pageShift, end>>pageShift
	var busy []int64 // the range's dirty pages: under writeback from now, kept
	for _, idx := range it.dirty {
		if s, ok := it.page(idx); ok && tm.pc.ent(s).dirty && idx >= lo && idx <= hi {
			busy = append(busy, idx)
		}
	}
	if len(busy) > 0 {
		tm.writeback(it, now, hi+1, lo, 0)
		slices.Sort(busy)
	}
	first, last := (off+pageBytes-1)>>pageShift, hi
	if end&(pageBytes-1) != pageBytes-1 && end != it.ino.Size()-1 {
		last-- // a partial last page stays, unless it ends the file
	}
	for _, idx := range it.resident(first, last) {
		s, _ := it.page(idx)
		if _, under := slices.BinarySearch(busy, idx); under || tm.pc.ent(s).ready > now {
			continue
		}
		tm.pc.drop(it, idx)
	}
	return now
}

// resident returns the indexes of the resident pages of it in [first, last],
// in increasing order.
func (it *inodeTime) resident(first, last int64) []int64 {
	var out []int64
	if last < first || it.npages == 0 {
		return nil
	}
	if last-first < int64(it.npages) {
		for idx := first; idx <= last; idx++ {
			if _, ok := it.page(idx); ok {
				out = append(out, idx)
			}
		}
		return out
	}
	for idx := first; idx <= last && idx < int64(len(it.dense)); idx++ {
		if it.dense[idx] != 0 {
			out = append(out, idx)
		}
	}
	n := len(out)
	for idx := range it.sparse {
		if idx >= first && idx <= last {
			out = append(out, idx)
		}
	}
	slices.Sort(out[n:])
	return out
}

// denseMax is how many first pages of a file are always indexed by a slice;
// past them the slice grows only while the file's resident pages fill at
// least half of it (see setPage), and a map indexes the others.
const denseMax = 1 << 14

// page returns the slot of page idx of it, if resident.
func (it *inodeTime) page(idx int64) (int32, bool) {
	if idx < int64(len(it.dense)) {
		s := it.dense[idx]
		return s - 1, s != 0
	}
	if it.sparse == nil {
		return 0, false
	}
	s, ok := it.sparse[idx]
	return s, ok
}

// setPage makes idx resident in slot s. The dense slice covers idx if it
// already does, if idx < denseMax, or if the file then has at least half as
// many resident pages as the slice would cover: a file read or written from
// its start (a layout, a sequential scan) is indexed by the slice (4 bytes a
// page) however large, while pages scattered over a large range go to the
// map (memory per resident page).
func (it *inodeTime) setPage(idx int64, s int32) {
	it.npages++
	if n := int64(len(it.dense)); idx >= n && (idx < denseMax || idx < 2*int64(it.npages)) {
		grow := max(idx+1, min(2*n, 2*int64(it.npages)))
		it.dense = slices.Grow(it.dense, int(grow-n))[:grow]
		for k, v := range it.sparse { // now below the slice's end: moved into it
			if k < grow {
				it.dense[k] = v + 1
				delete(it.sparse, k)
			}
		}
	}
	if idx < int64(len(it.dense)) {
		it.dense[idx] = s + 1
		return
	}
	if it.sparse == nil {
		it.sparse = map[int64]int32{}
	}
	it.sparse[idx] = s
}

func (it *inodeTime) delPage(idx int64) {
	it.npages--
	if idx < int64(len(it.dense)) {
		it.dense[idx] = 0
		return
	}
	delete(it.sparse, idx)
}

// markDirty makes a resident page dirty.
func (tm *timeModel) markDirty(it *inodeTime, s int32, now int64) {
	pc := &tm.pc
	e := pc.ent(s)
	if e.dirty {
		return
	}
	e.dirty = true
	pc.dirty++
	if n := len(it.dirty); n > 0 && e.idx < it.dirty[n-1] {
		it.unsorted = true
	}
	it.dirty = append(it.dirty, e.idx)
	if !it.dlist {
		it.dlist, it.first = true, now
		pc.dirtyInodes = append(pc.dirtyInodes, it)
	}
}

// writeback writes the dirty pages of it in [lo, hi) (page indexes; hi < 0:
// all) back to the device as one request per run of consecutive pages, starting
// at now, and returns when the last completes. At most limit pages are written
// (limit <= 0: no limit). The pages are clean from then on. Writing back pages
// over holes allocates their blocks: a change fdatasync must commit.
func (tm *timeModel) writeback(it *inodeTime, now, hi, lo int64, limit int) int64 {
	pc := &tm.pc
	if len(it.dirty) == 0 {
		return now
	}
	if it.unsorted {
		slices.Sort(it.dirty)
		it.unsorted = false
	}
	done := now
	keep := it.dirty[:0]
	written := 0
	var runStart, runEnd int64 = -1, -1
	flush := func() {
		if runStart < 0 {
			return
		}
		_, d := tm.submit(device.Write, it.base+runStart<<pageShift, (runEnd-runStart)<<pageShift, now)
		done = max(done, d)
		runStart = -1
	}
	rest := it.dirty[len(it.dirty):] // the tail kept as it is once the limit is reached
	for k, idx := range it.dirty {
		if limit > 0 && written >= limit && hi < 0 && len(keep) == 0 {
			// The flusher's batch is done and nothing before is kept:
			// the rest stays listed without being copied.
			rest = it.dirty[k:]
			break
		}
		if (hi >= 0 && (idx >= hi || idx < lo)) || (limit > 0 && written >= limit) {
			keep = append(keep, idx)
			continue
		}
		s, ok := it.page(idx)
		if !ok || !pc.ent(s).dirty {
			continue // dropped since it was listed, or listed twice
		}
		pc.ent(s).dirty = false
		pc.dirty--
		written++
		if runStart >= 0 && idx == runEnd {
			runEnd++
			continue
		}
		flush()
		runStart, runEnd = idx, idx+1
	}
	flush()
	if len(rest) > 0 {
		it.dirty = rest
	} else {
		it.dirty = keep
	}
	if written > 0 && it.allocPending {
		it.allocPending = false
		tm.metaChange(it, true, now)
	}
	if len(it.dirty) == 0 && it.dlist {
		it.dlist = false
		pc.dirtyInodes = slices.DeleteFunc(pc.dirtyInodes, func(x *inodeTime) bool { return x == it })
	}
	return done
}

// flushOldest writes back the oldest dirty inodes' pages, starting at now,
// until at most target pages are dirty, and returns when the last write
// completes.
func (tm *timeModel) flushOldest(target int, now int64) int64 {
	pc := &tm.pc
	done := now
	for pc.dirty > target && len(pc.dirtyInodes) > 0 {
		it := pc.dirtyInodes[0]
		done = max(done, tm.writeback(it, now, -1, 0, pc.dirty-target))
	}
	return done
}

// background runs what the kernel's threads have done by virtual time now (a
// call's start): the flusher (dirty pages past the background threshold or
// expired) and the journal's periodic commit. Nobody waits for it; the device
// is busy with it.
func (tm *timeModel) background(now int64) {
	tm.jr.periodic(now) // due at a time before now: before the flusher's work at now
	pc := &tm.pc
	if pc.dirty > pc.bgLimit {
		tm.flushOldest(pc.bgLimit, now)
	}
	if pc.period > 0 && now >= pc.nextWake {
		pc.nextWake = now + pc.period
		for len(pc.dirtyInodes) > 0 && now-pc.dirtyInodes[0].first >= pc.expire {
			tm.writeback(pc.dirtyInodes[0], now, -1, 0, 0)
		}
	}
}

// readahead is file_ra_state (include/linux/fs.h): the current window
// [start, start+size) in pages, of which the last async pages are read ahead
// of the reader (the first of them carries PG_readahead), and the last page
// read.
type readahead struct {
	start, size, async int64
	prev               int64      // last page read + 1; 0 before any read
	it                 *inodeTime // the time model's state of the file's inode
	// advice is the last posix_fadvise(2) that changes read-ahead:
	// fadvRandom (FMODE_RANDOM: no read-ahead), fadvSequential (twice the
	// device's window) or fadvNormal, 0.
	advice int64
}

// initSize is get_init_ra_size (mm/readahead.c): the first window of a
// sequential stream, from the request's size.
func initSize(req, maxp int64) int64 {
	n := int64(1)
	for n < req {
		n <<= 1
	}
	switch {
	case n <= maxp/32:
		n *= 4
	case n <= maxp/4:
		n *= 2
	default:
		n = maxp
	}
	return min(n, maxp)
}

// nextSize is get_next_ra_size (mm/readahead.c): the window grows fourfold
// while small, then twofold, up to read_ahead_kb.
func nextSize(cur, maxp int64) int64 {
	switch {
	case cur < maxp/16:
		return 4 * cur
	case cur <= maxp/2:
		return 2 * cur
	}
	return maxp
}

// readPages makes pages [first, first+n) of it resident, reading the missing
// ones from the device in runs, starting at now; it returns the completion of
// its reads (now when none). The reads are accounted to d as read-ahead pages
// when ahead is set.
func (tm *timeModel) readPages(it *inodeTime, first, n, now int64, d *Breakdown, ahead bool) int64 {
	size := it.ino.Size()
	end := min(first+n, (size+pageBytes-1)>>pageShift)
	done := now
	for idx := first; idx < end; {
		if _, ok := it.page(idx); ok {
			idx++
			continue
		}
		run := idx
		for run < end {
			if _, ok := it.page(run); ok {
				break
			}
			run++
		}
		st, c := tm.submit(device.Read, it.base+idx<<pageShift, (run-idx)<<pageShift, now)
		done = max(done, c)
		for p := idx; p < run; p++ {
			tm.insert(it, p, st, c, now)
		}
		d.CPU += (run - idx) * tm.cpu.alloc
		if ahead {
			d.ReadaheadPages += run - idx
		}
		idx = run
	}
	return done
}

// ondemand is ondemand_readahead (mm/readahead.c) for a read of pages
// [idx, idx+req) whose page idx is missing (async false) or carries the
// read-ahead mark (async true): it moves f's window and reads it.
func (tm *timeModel) ondemand(f *File, it *inodeTime, idx, req, now int64, async bool, d *Breakdown) {
	ra := &f.ra
	maxp := tm.pc.raMax
	if ra.advice == fadvSequential {
		maxp *= 2
	}
	if maxp == 0 || ra.advice == fadvRandom {
		// No read-ahead: FMODE_RANDOM reads what was asked
		// (page_cache_sync_ra's forced read-ahead of req_count pages).
		tm.readPages(it, idx, req, now, d, false)
		return
	}
	switch {
	case async || (ra.size > 0 && idx == ra.start+ra.size):
		// The reader reached the mark, or the end of the window: the next window.
		ra.start += ra.size
		ra.size = nextSize(ra.size, maxp)
		ra.async = ra.size
	case idx == 0 || idx == ra.prev || idx+1 == ra.prev || req > maxp:
		// Start of file, a sequential miss, or a large read: a new stream.
		ra.start = idx
		ra.size = initSize(req, maxp)
		ra.async = max(ra.size-req, 0)
		if req > maxp {
			ra.size, ra.async = req, 0
		}
	default:
		// Random: read what was asked, and forget the window.
		*ra = readahead{prev: ra.prev, it: ra.it, advice: ra.advice}
		tm.readPages(it, idx, req, now, d, false)
		return
	}
	tm.readPages(it, ra.start, ra.size, now, d, true)
	if ra.async > 0 {
		if s, ok := it.page(ra.start + ra.size - ra.async); ok {
			tm.pc.ent(s).mark = true
		}
	}
}

// read prices a buffered or direct read of n bytes at off through f.
func (tm *timeModel) read(t *Task, f *File, it *inodeTime, off, n, now int64, d *Breakdown) int64 {
	first, last := off>>pageShift, (off+n-1)>>pageShift
	if tm.direct(f) {
		return tm.directRead(it, off, n, now, d)
	}
	pc := &tm.pc
	t0 := now // pages resident and read by then are hits
	lookup := (last - first + 1) * tm.cpu.lookup
	now += lookup
	d.CPU += lookup
	for idx := first; idx <= last; idx++ {
		s, ok := it.page(idx)
		hit := ok && pc.ent(s).ready <= t0
		if !ok {
			tm.ondemand(f, it, idx, last-idx+1, now, false, d)
			s, ok = it.page(idx)
			if !ok {
				break // past the end of file
			}
		} else if e := pc.ent(s); e.mark {
			e.mark = false
			tm.ondemand(f, it, idx, last-idx+1, now, true, d)
		}
		e := pc.ent(s)
		e.ref = true
		if e.ready > now {
			// Waiting for the page's read: for the device to start it, then
			// for its service.
			q := max(0, e.start-now)
			d.QueueWait += q
			d.Device += e.ready - now - q
			now = e.ready
		}
		if hit {
			d.CacheHits++
		} else {
			d.CacheMisses++
		}
	}
	f.ra.prev = last + 1
	c := tm.copyPages(it, first, last, n)
	d.Copy += c
	return now + c
}

// copyPages is the time to copy n bytes between user memory and pages
// [first, last] of it, and marks the pages as touched by the CPU. A page the
// CPU has copied within the last cache_bytes of copies is still in the CPU's
// last-level cache (LRU stack distance, Mattson et al., "Evaluation techniques
// for storage hierarchies", IBM Systems Journal 9(2), 1970) and copies at the
// speed copyCost gives for the size; a page the device has just read (DMA
// bypasses the CPU cache) or that has fallen out of it copies at memory speed
// (mem_copy_mb_s).
func (tm *timeModel) copyPages(it *inodeTime, first, last, n int64) int64 {
	cold := min(tm.touchPages(it, first, last, n)<<pageShift, n)
	return tm.copyCost(n)*(n-cold)/n + cold*tm.cpu.memCopyPs/1000
}

// touchPages records a copy of n bytes by the CPU to or from pages [first,
// last] of it and returns how many of them were not in the CPU's cache before.
func (tm *timeModel) touchPages(it *inodeTime, first, last, n int64) int64 {
	pc := &tm.pc
	var cold int64
	for idx := first; idx <= last; idx++ {
		s, ok := it.page(idx)
		if !ok {
			continue
		}
		e := pc.ent(s)
		if tm.cpu.cacheBytes > 0 && (e.touch == 0 || pc.copied-e.touch >= tm.cpu.cacheBytes) {
			cold++
		}
		e.touch = pc.copied + n
	}
	pc.copied += n
	return cold
}

// direct reports whether reads and writes through f bypass the page cache.
func (tm *timeModel) direct(f *File) bool {
	return f.flags.Load()&oDirect != 0 || tm.forceDirect
}

// invalidate writes back and drops the cached pages of [off, off+n) before
// direct I/O (iomap_dio_rw: kiocb_write_and_wait, kiocb_invalidate_pages) and
// returns when the writeback completes.
func (tm *timeModel) invalidate(it *inodeTime, off, n, now int64, d *Breakdown) int64 {
	if it.npages == 0 {
		return now
	}
	first, last := off>>pageShift, (off+n-1)>>pageShift
	done := tm.writeback(it, now, last+1, first, 0)
	d.Device += done - now
	for idx := first; idx <= last; idx++ {
		tm.pc.drop(it, idx)
	}
	return done
}

// directRead prices an O_DIRECT read: pin the user pages, flush the range from
// the cache, read from the device and wait (i_rwsem shared, fs/ext4/file.c
// ext4_dio_read_iter).
func (tm *timeModel) directRead(it *inodeTime, off, n, now int64, d *Breakdown) int64 {
	pages := (n + pageBytes - 1) >> pageShift
	now, rel := tm.lock(it, false, now, d)
	pin := pages * tm.cpu.pin
	now += pin
	d.CPU += pin
	now = tm.invalidate(it, off, n, now, d)
	now = tm.wait(device.Read, it.base+off, n, now, d)
	rel(now)
	return now
}

package vfs

// Data operations on regular files. They implement what pread64/pwrite64/ftruncate/
// fallocate/lseek do once the file descriptor checks have passed; package sim does
// those checks (EBADF for the access mode, the offset bookkeeping).

// WriteMode modifies Write.
type WriteMode uint8

const (
	// WriteAppend writes at the end of the file whatever the offset (O_APPEND).
	WriteAppend WriteMode = 1 << iota
	// WriteDirect bypasses the page cache (O_DIRECT): the data goes to the device
	// cache, durable only after a flush when the device has a write cache.
	WriteDirect
	// WriteDSync makes the write durable as fdatasync would before returning (O_DSYNC).
	WriteDSync
	// WriteSync makes the write durable as fsync would before returning (O_SYNC).
	WriteSync
	// WriteNoData keeps the extent of the write but not its bytes: the range
	// becomes written data that reads as zeros, and p is read for its length
	// only. Everything else (size, times, dirty and durable state, allocation,
	// SEEK_DATA, st_blocks) is as for the same write of zeros. For a run that
	// accounts for time and never looks at what it wrote (a payload-free fio
	// job): the cost of a write no longer grows with its bytes.
	WriteNoData
)

// Fallocate modes, as <linux/falloc.h>.
const (
	FallocKeepSize  = 0x01
	FallocPunchHole = 0x02
	FallocZeroRange = 0x10
)

// ReadAt reads into p from off, as pread64(2): it returns the bytes read, short at
// end of file and 0 at or past it. Holes read as zeros. EISDIR for a directory,
// EINVAL for a negative offset or a file that is not regular.
func (i *Inode) ReadAt(p []byte, off int64) (int, error) {
	return i.read(p, off, true)
}

func (i *Inode) read(p []byte, off int64, cache bool) (int, error) {
	fs := i.fs
	fs.lock()
	n, err := i.readLocked(p, off, cache)
	fs.mu.Unlock()
	return n, err
}

func (i *Inode) readLocked(p []byte, off int64, cache bool) (int, error) {
	fs := i.fs
	if i.mode&S_IFMT != S_IFREG {
		if i.IsDir() {
			return 0, EISDIR
		}
		return 0, EINVAL
	}
	if off < 0 {
		return 0, EINVAL
	}
	var f Fault
	if fs.cfg.injector != nil {
		if f = fs.fault(OpRead, i, ""); f.Errno != 0 {
			return 0, f.Errno
		}
	}
	if off >= i.size || len(p) == 0 {
		return 0, nil
	}
	n := int64(len(p))
	if rest := i.size - off; n > rest {
		n = rest
	}
	if f.Short > 0 && int64(f.Short) < n {
		n = int64(f.Short)
	}
	uncached := i.data.readAt(p[:n], off)
	// A buffered read leaves the pages it read in the page cache, and ext4's
	// SEEK_DATA reports cached pages over unwritten extents as data (see
	// fileData.CacheUnwritten; TestReadCachesUnwritten and its kernel twin). The
	// check first keeps the common read (no unwritten block) free of writes.
	if uncached && cache {
		_ = fs.mutateData(i, off, 0, func(d *fileData) { d.CacheUnwritten(off, n) })
	}
	if f.Corrupt {
		for k := range p[:n] {
			p[k] ^= 0xff
		}
	}
	if i.atime <= i.mtime || i.atime <= i.ctime {
		i.touchAtime()
	}
	return int(n), nil
}

// WriteAt writes p at off into the page cache, as pwrite64(2) on a plain file.
func (i *Inode) WriteAt(p []byte, off int64) (int, error) {
	n, _, err := i.Write(p, off, 0, nil)
	return n, err
}

// Write writes p at off (or at the end of file with WriteAppend) and returns the
// bytes written and the offset just past them. A write that starts at or beyond
// MaxFileSize fails with EFBIG; one that crosses it is cut short there. With
// WriteSync/WriteDSync the data is durable on return, and errseq (the caller's
// open file description's sample, see SampleErrSeq) receives a writeback error
// as fsync would. EINVAL for a negative offset.
func (i *Inode) Write(p []byte, off int64, how WriteMode, errseq *uint64) (n int, end int64, err error) {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if i.mode&S_IFMT != S_IFREG {
		if i.IsDir() {
			return 0, off, EISDIR
		}
		return 0, off, EINVAL
	}
	if how&WriteAppend != 0 {
		off = i.size
	}
	if off < 0 {
		return 0, off, EINVAL
	}
	if len(p) == 0 {
		return 0, off, nil
	}
	max := fs.cfg.maxFileSize
	if off >= max {
		return 0, off, EFBIG
	}
	if rest := max - off; int64(len(p)) > rest {
		p = p[:rest]
	}
	if fs.cfg.injector != nil {
		f := fs.fault(OpWrite, i, "")
		if f.Errno != 0 {
			return 0, off, f.Errno
		}
		if f.Short > 0 && f.Short < len(p) {
			p = p[:f.Short]
		}
	}
	end = off + int64(len(p))
	// ext4_da_do_write_end moves i_disksize with an extending buffered write
	// only when the block holding the new last byte was already mapped written
	// (ext4_da_should_update_i_disksize); otherwise writeback will. An
	// extending O_DIRECT write moves it at completion
	// (ext4_handle_inode_extension).
	disk := end > i.size && (how&WriteDirect != 0 || i.data.kind((end-1)/fs.cfg.blockSize) == 1)
	fs.saveVersions(i, off, int64(len(p)))
	if err := fs.mutateData(i, off, int64(len(p)), func(d *fileData) {
		if how&WriteNoData != 0 {
			d.WriteZeros(off, int64(len(p)))
		} else {
			d.WriteAt(p, off)
		}
	}); err != nil {
		return 0, off, err
	}
	if end > i.size {
		i.size = end
		fs.markSize(i)
	}
	if disk && end > i.diskSize {
		i.diskSize = end
	}
	t := fs.now()
	i.mtime, i.ctime = t, t
	fs.markAttr(i)
	if how&WriteDirect != 0 {
		fs.writebackRange(i, off, int64(len(p)))
	} else {
		fs.markDirty(i, off, int64(len(p)))
	}
	if how&(WriteSync|WriteDSync) != 0 {
		if err := fs.fsyncLocked(i, how&WriteSync == 0, errseq); err != nil {
			return len(p), end, err
		}
	}
	return len(p), end, nil
}

// Populate makes [off, off+n) of regular file i written data that reads
// zeros, as writes of zeros would leave it once written back: a change from
// outside every program, for a file a workload finds in place (fio's
// laid-out file). Blocks the range touches become written, settled extents
// without buffers, so the cost in time and memory is one step and a ~50-byte
// chunk header per 32 blocks, whatever the range's size; a partial block
// keeps its bytes outside the range. The file grows to off+n if it is
// shorter. The change is pending until an fsync makes it durable, as an
// allocation change (fallocate's) is, with the new size and times. ENOSPC,
// EFBIG and EINVAL as a write of n bytes at off.
func (i *Inode) Populate(off, n int64) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if i.IsDir() {
		return EISDIR
	}
	if !i.IsRegular() || off < 0 || n < 0 {
		return EINVAL
	}
	if n == 0 {
		return nil
	}
	if off+n > fs.cfg.maxFileSize || off+n < 0 {
		return EFBIG
	}
	fs.reviseDirty(i, off, off+n)
	if err := fs.mutateData(i, off, n, func(d *fileData) { d.Fill(off, n) }); err != nil {
		return err
	}
	fs.markRange(i, off, n)
	if end := off + n; end > i.size {
		i.size = end
		i.diskSize = max(i.diskSize, end)
		fs.markSize(i)
	}
	t := fs.now()
	i.mtime, i.ctime = t, t
	fs.markAttr(i)
	return nil
}

// mutateData applies fn to the inode's page-cache data, enforcing the capacity
// limit: when the change would allocate more blocks than are free it is undone and
// ENOSPC returned.
func (fs *FS) mutateData(i *Inode, off, n int64, fn func(d *fileData)) error {
	i.blocksOK = false
	fs.changed()
	if i.dataShared {
		i.data = shareData(i.data) // not Clone: see shareData
		i.dataShared = false
	}
	if fs.cfg.capacity <= 0 {
		fn(i.data)
		return nil
	}
	before := i.data.Blocks()
	bs := fs.cfg.blockSize
	spanned := ((off+n+bs-1)/bs - off/bs + 1) * bs
	var saved *fileData
	if fs.used+spanned > fs.cfg.capacity {
		saved = shareData(i.data)
	}
	fn(i.data)
	after := i.data.Blocks()
	delta := (after - before) * 512
	if delta > 0 && fs.used+delta > fs.cfg.capacity && saved != nil {
		i.data = saved
		return ENOSPC
	}
	fs.used += delta
	return nil
}

// Truncate sets the file size, as ftruncate(2): data beyond the new size is gone,
// growth reads as a hole. EINVAL for a negative size or a file that is not
// regular, EISDIR for a directory, EFBIG beyond MaxFileSize.
func (i *Inode) Truncate(size int64) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if i.IsDir() {
		return EISDIR
	}
	if !i.IsRegular() || size < 0 {
		return EINVAL
	}
	if size > fs.cfg.maxFileSize {
		return EFBIG
	}
	if f := fs.fault(OpTruncate, i, ""); f.Errno != 0 {
		return f.Errno
	}
	return fs.truncateLocked(i, size)
}

func (fs *FS) truncateLocked(i *Inode, size int64) error {
	old := i.size
	if size <= old {
		// Truncating to the same size still frees blocks fallocated with
		// KEEP_SIZE beyond the end of file, as ext4 does.
		fs.reviseDirty(i, size, -1)
		_ = fs.mutateData(i, size, 0, func(d *fileData) { d.Truncate(size) })
		fs.markRange(i, size, max(old-size, fs.cfg.blockSize))
		if size == 0 {
			// ext4_truncate: auto_da_alloc's replace-via-truncate (see Release).
			i.daAllocClose.Store(true)
		}
	}
	i.size = size
	t := fs.now()
	i.mtime, i.ctime = t, t
	fs.markAttr(i)
	if size != old {
		fs.markSize(i)
		i.diskSize = size // ext4_setattr
	}
	return nil
}

// Fallocate manipulates the allocation of [off, off+n), as fallocate(2) with mode 0,
// FallocKeepSize, FallocPunchHole|FallocKeepSize or FallocZeroRange (with or without
// FallocKeepSize), or moves data with FallocCollapseRange or FallocInsertRange
// (shift.go). EINVAL for a negative offset or a length <= 0, EOPNOTSUPP for
// other modes, EFBIG when off+n passes MaxFileSize, EISDIR for a directory.
func (i *Inode) Fallocate(mode uint32, off, n int64) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if off < 0 || n <= 0 {
		return EINVAL
	}
	switch mode {
	case 0, FallocKeepSize, FallocPunchHole | FallocKeepSize, FallocZeroRange, FallocZeroRange | FallocKeepSize,
		FallocCollapseRange, FallocInsertRange:
	default:
		return EOPNOTSUPP
	}
	if i.IsDir() {
		return EISDIR
	}
	if !i.IsRegular() {
		return ENODEV
	}
	if off+n > fs.cfg.maxFileSize || off+n < 0 {
		return EFBIG
	}
	if mode == FallocCollapseRange || mode == FallocInsertRange {
		return fs.shiftRange(i, mode, off, n)
	}
	if f := fs.fault(OpFallocate, i, ""); f.Errno != 0 {
		return f.Errno
	}
	var err error
	switch {
	case mode&FallocPunchHole != 0:
		// ext4: nothing happens at or past the end of file; a range that runs past
		// it ends at the end of the block holding it.
		if off < i.size {
			size := i.size
			fs.reviseDirty(i, off, off+n)
			err = fs.mutateData(i, off, n, func(d *fileData) { d.PunchHoleAtSize(off, n, size) })
			fs.markRange(i, off, min(n, size+fs.cfg.blockSize-off))
		}
	case mode&FallocZeroRange != 0:
		fs.reviseDirty(i, off, off+n)
		err = fs.mutateData(i, off, n, func(d *fileData) { d.ZeroRange(off, n) })
		fs.markRange(i, off, n)
	default:
		err = fs.mutateData(i, off, n, func(d *fileData) { d.Allocate(off, n) })
		fs.markRange(i, off, n)
	}
	if err != nil {
		return err
	}
	t := fs.now()
	if mode&FallocKeepSize == 0 {
		// ext4_do_fallocate, ext4_zero_range: ext4_update_inode_size moves
		// i_disksize to the end of the range too, even within i_size.
		i.diskSize = max(i.diskSize, off+n)
	}
	if mode&FallocKeepSize == 0 && off+n > i.size {
		i.size = off + n
		fs.markSize(i)
		i.mtime = t
	}
	if mode&(FallocPunchHole|FallocZeroRange) != 0 {
		i.mtime = t
	}
	i.ctime = t
	fs.markAttr(i)
	return nil
}

// SeekData returns where the next data at or after off starts, as lseek(SEEK_DATA):
// ENXIO when off is negative or at or past the end of file, or no data follows.
func (i *Inode) SeekData(off int64) (int64, error) {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if !i.IsRegular() {
		return i.seekOther(off, false)
	}
	if off < 0 || off >= i.size {
		return 0, ENXIO
	}
	r := i.data.SeekData(off, i.size)
	if r < 0 {
		return 0, ENXIO
	}
	return r, nil
}

// SeekHole returns where the next hole at or after off starts, as
// lseek(SEEK_HOLE); the end of file counts as a hole. ENXIO when off is negative
// or at or past the end of file.
func (i *Inode) SeekHole(off int64) (int64, error) {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if !i.IsRegular() {
		return i.seekOther(off, true)
	}
	if off < 0 || off >= i.size {
		return 0, ENXIO
	}
	r := i.data.SeekHole(off, i.size)
	if r < 0 {
		return 0, ENXIO
	}
	return r, nil
}

// HoleIn reports whether [off, off+n) of a regular file holds a hole below
// its size (what SEEK_HOLE would find there), looking at that range only;
// false for other inodes.
func (i *Inode) HoleIn(off, n int64) bool {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	return i.IsRegular() && i.data != nil && i.data.HoleIn(off, n, i.size)
}

// seekOther answers SEEK_DATA/SEEK_HOLE for a directory as generic_file_llseek
// would for a file of the directory's size: all data.
func (i *Inode) seekOther(off int64, hole bool) (int64, error) {
	size := int64(0)
	if i.IsDir() {
		size = i.fs.cfg.blockSize
	}
	if off < 0 || off >= size {
		return 0, ENXIO
	}
	if hole {
		return size, nil
	}
	return off, nil
}

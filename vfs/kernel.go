package vfs

// Kernel is the kernel model's side of an inode: the hooks that a model of the
// Linux syscall layer (package sim) calls at the points of its syscalls where
// ext4 or the kernel's VFS does more to the file system than the contract of
// Inode states, and its fast paths. They are
//
//   - open(2) with its writeback-error sample under one lock (OpenSampled), and
//     the error order of a call with two paths (LookupParent);
//   - read(2)'s fast path (ReadCached);
//   - O_DIRECT: the page-cache flush before a direct read or write, the blocks a
//     direct read maps, a read that leaves no page cached, and the truncation
//     that ends a failed extending direct write (WrittenIn, ReadAtDirect,
//     FlushForDirectRead, FlushForDirectWrite, TruncateFailedWrite);
//   - writeback that a syscall starts or waits for beyond fsync(2): fadvise's
//     POSIX_FADV_DONTNEED (StartWriteback) and msync's ranged fdatasync
//     (FdatasyncRange);
//   - the release of delayed-allocation blocks at the last close of a file
//     truncated to 0 (Release);
//   - the mode change a POSIX access ACL makes (ChmodRWX).
//
// Each states the behaviour it reproduces and, for ext4's, the kernel function
// and what was observed on Linux; the kernel-differential tests of package sim
// pin them. A program that uses the file system through Inode or the afero face
// never needs them (the afero face calls Release itself).
//
// A Kernel holds only its inode: take it with Inode.Kernel where it is used,
// at no cost. It is safe for concurrent use, as the inode is.
type Kernel struct{ i *Inode }

// Kernel returns the kernel model's hooks on i (see type Kernel).
func (i *Inode) Kernel() Kernel { return Kernel{i} }

// OpenSampled is Inode.Open that also returns the writeback-error cursor a new
// open file description takes (see Inode.SampleErrSeq), under one acquisition
// of the file system's lock: the open(2) fast path.
func (k Kernel) OpenSampled(path string, flags int, perm uint32) (ino *Inode, errseq uint64, err error) {
	dir := k.i
	fs := dir.fs
	fs.lock()
	ino, _, err = dir.openLocked(path, flags, perm)
	if err == nil {
		errseq = ino.sampleErrSeqLocked()
	}
	fs.mu.Unlock()
	return ino, errseq, err
}

// LookupParent returns the error, if any, of looking up the directory that
// would hold path's last component (filename_parentat): the errors a call with
// two paths reports for the first before it looks at the second.
func (k Kernel) LookupParent(path string) error {
	dir := k.i
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	_, _, _, err := fs.walkParent(dir, path, &links)
	return err
}

// ReadAtDirect is Inode.ReadAt for an O_DIRECT read: it bypasses the page cache, so the
// pages of unwritten extents it reads are not left cached (SEEK_DATA keeps seeing
// them as holes).
func (k Kernel) ReadAtDirect(p []byte, off int64) (int, error) {
	i := k.i
	return i.read(p, off, false)
}

// ReadCached is Inode.ReadAt in its commonest case, done in one step: a regular file
// with no fault rules, and a read at off >= 0 whose bytes (up to the end of
// file) all lie in one block holding written data, or a read of nothing (at or
// past the end of file, or len(p) == 0). ok is false, and nothing is done (no
// data copied, no access time), in every other case; the caller then takes
// Inode.ReadAt, which gives the same result.
func (k Kernel) ReadCached(p []byte, off int64) (int, bool) {
	i := k.i
	fs := i.fs
	fs.lock()
	// One function, each way out unlocking: this runs for most reads.
	if i.mode&S_IFMT != S_IFREG || fs.cfg.injector != nil || off < 0 {
		fs.mu.Unlock()
		return 0, false
	}
	n := min(int64(len(p)), i.size-off)
	if n <= 0 {
		fs.mu.Unlock()
		return 0, true // as readLocked: nothing read, the access time untouched
	}
	b, ok := i.data.lastChunkBlock(off, n) // inlined: most reads
	if !ok {
		b = i.data.blockSlow(off, n)
	}
	if b == nil {
		fs.mu.Unlock()
		return 0, false // crosses a block, or a hole or unwritten block
	}
	copy(p[:n], b[off&(i.data.bs-1):])
	if i.atime <= i.mtime || i.atime <= i.ctime {
		i.touchAtime()
	}
	fs.mu.Unlock()
	return int(n), true
}

// WrittenIn reports whether some block of [off, off+n) holds written data by the
// extent tree: holes and unwritten blocks do not, whether or not a buffered read
// cached their pages (SEEK_DATA reports those as data). This is what iomap maps
// for an O_DIRECT read: only written extents are read from the device and checked
// for alignment; the rest is zero-filled. False for a non-regular file.
func (k Kernel) WrittenIn(off, n int64) bool {
	i := k.i
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if !i.IsRegular() || n <= 0 {
		return false
	}
	w := i.data.SeekWritten(off, i.size)
	return w >= 0 && w < off+n
}

// FlushForDirectRead is the flush of the page cache that an O_DIRECT read of
// [off, off+n) makes first (iomap_dio_rw: kiocb_write_and_wait), before any
// alignment check, when off is before the end of file and n > 0: the dirty
// blocks of the range are written back, which allocates their delayed blocks.
// As for Release, the model applies the extent-tree side only (allocDirtyRange).
//
// Observed on Linux 6.18, ext4: five delayed one-block extents, then an
// O_DIRECT pread over them: FIEMAP shows them allocated and st_blocks 48.
func (k Kernel) FlushForDirectRead(off, n int64) {
	i := k.i
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if off >= 0 && off < i.size && n > 0 {
		fs.allocDirtyRange(i, off, n)
	}
}

// FlushForDirectWrite is the start of an O_DIRECT write of [off, off+n) that
// is going to fail (the caller has found it misaligned), up to the failure:
// ext4_dio_write_iter decides first whether the write is extending
// (ext4_extending_io: off+n beyond i_size or beyond i_disksize, which lags
// i_size until an extending buffered write is written back), then
// iomap_dio_rw flushes the page cache over the range (kiocb_write_and_wait),
// which maps its delayed and unconverted blocks and may move i_disksize. It
// returns whether the write was extending: the caller then applies
// TruncateFailedWrite once the failure is done (after the allocation
// ext4_iomap_begin made below EOF, see the sim's dioFailAlloc).
//
// Observed on Linux 6.18, ext4: a buffered 4096-byte write at 0 (delayed),
// fallocate(KEEP_SIZE) of blocks 4-7, then a 100-byte O_DIRECT pwrite at 0
// (EINVAL): block 0 is allocated and blocks 4-7 are freed (st_blocks 8); with
// an fsync before the fallocate nothing is freed (40).
func (k Kernel) FlushForDirectWrite(off, n int64) (extending bool) {
	i := k.i
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if !i.IsRegular() || off < 0 || n <= 0 {
		return false
	}
	extending = off+n > i.size || off+n > i.diskSize
	fs.allocDirtyRange(i, off, n)
	return extending
}

// TruncateFailedWrite is the end of an extending O_DIRECT write at off
// (FlushForDirectWrite) that fails, whatever the error (EINVAL for
// misalignment, EFAULT alike):
//
//   - if the block holding off lies at or past EOF and is a hole,
//     ext4_iomap_begin has given it a written extent (ext4_iomap_alloc:
//     EXT4_GET_BLOCKS_CREATE past i_size) before the failure, and that
//     insertion ran ext4_ext_try_to_merge_up: a one-leaf tree with at most 4
//     extents went back into the inode (see fileData.Blocks);
//   - ext4_inode_extension_cleanup then calls ext4_truncate_failed_write:
//     ext4_truncate at the unchanged i_size frees every block past the block
//     holding the end of file (that new block, KEEP_SIZE preallocation), as
//     ftruncate to the same size does; no time changes.
//
// Observed on Linux 6.18, ext4: size 4196 (block 1 delayed), blocks 4-7
// fallocated with KEEP_SIZE, a failing O_DIRECT pwrite at 0: blocks 4-7 are
// freed, block 1 stays. Five one-block extents written back (a leaf, 48),
// truncated to 2537 bytes (16: the leaf stays), then a failing O_DIRECT
// pwrite at 4096 or 81920: st_blocks 8, the leaf is gone; the same write at
// 0 (block 0 mapped, nothing allocated): 16.
func (k Kernel) TruncateFailedWrite(off int64) {
	i := k.i
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if !i.IsRegular() {
		return
	}
	size := i.size
	bs := fs.cfg.blockSize
	if start := off / bs * bs; off >= 0 && start >= size {
		_ = fs.mutateData(i, start, bs, func(d *fileData) { d.AllocateWritten(start, bs) })
	}
	_ = fs.mutateData(i, size, 0, func(d *fileData) { d.Truncate(size) })
	fs.markRange(i, size, fs.cfg.blockSize)
	if size == 0 {
		i.daAllocClose.Store(true) // ext4_truncate, as in truncateLocked
	}
}

// StartWriteback starts writeback of the dirty blocks of [off, off+n) (n < 0:
// to the end of file) without waiting for it, as POSIX_FADV_DONTNEED does
// (generic_fadvise: __filemap_fdatawrite_range, WB_SYNC_NONE). As for
// Release, the model applies the extent-tree side only (allocDirtyRange): the
// data stays pending for durability, which admits every crash outcome the
// kernel's can have.
//
// Observed on Linux 6.18, ext4: five delayed one-block extents (st_blocks
// 40), then fadvise(POSIX_FADV_DONTNEED) of the whole file: 48, the fifth
// extent took a leaf block.
func (k Kernel) StartWriteback(off, n int64) {
	i := k.i
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if off >= 0 {
		fs.allocDirtyRange(i, off, n)
	}
}

// Release is ext4_release_file for the last reference to an open file
// description of i (close of its last fd, exit): if i was truncated to size 0
// since the last release (EXT4_STATE_DA_ALLOC_CLOSE, set by ext4_truncate
// unless the file system is mounted noauto_da_alloc), ext4_alloc_da_blocks
// starts writeback of its dirty pages, which allocates their delayed blocks.
// The model applies that to the extent tree only (allocDirty): the writeback
// is started, not waited for, so the data stays pending for durability, which
// admits every crash outcome the kernel's can have. O_PATH descriptions have
// no release and must not call it.
//
// Observed on Linux 6.18, ext4: ftruncate(0), five one-block writes at blocks
// 0, 2, 4, 6, 8, then open and close of another descriptor: FIEMAP shows the
// five extents allocated and st_blocks 48 (the fifth extent took a leaf
// block); without the truncate the blocks stay delayed (40).
func (k Kernel) Release() {
	i := k.i
	if i.daAllocClose.Load() { // inlined: most closes stop here
		i.releaseDelayed()
	}
}

// releaseDelayed is the rest of Release, once a truncate to 0 has set
// daAllocClose.
func (i *Inode) releaseDelayed() {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if i.daAllocClose.Swap(false) {
		fs.allocDaBlocks(i)
	}
}

// FdatasyncRange is fdatasync of the byte range [off, off+n) only, as
// msync(MS_SYNC) asks it of ext4 (vfs_fsync_range: ext4_sync_file writes back
// and waits for the range alone, then commits the journal): the dirty blocks
// outside the range stay pending, and the size made durable is i_disksize
// (diskSize) after that writeback, which counts only the extending blocks
// written back by now. Errors as Inode.Fdatasync.
func (k Kernel) FdatasyncRange(off, n int64, errseq *uint64) error {
	i := k.i
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if f := fs.fault(OpFsync, i, ""); f.Errno != 0 {
		return f.Errno
	}
	if !i.IsRegular() {
		return fs.fsyncLocked(i, true, errseq)
	}
	var err error
	fs.withDirtyIn(i, off, n, func() {
		fs.allocDirty(i) // moves diskSize over what this writeback maps
		err = fs.fsyncUpTo(i, true, min(i.size, i.diskSize), errseq)
	})
	if i.size != i.diskSize {
		fs.markSize(i) // the rest of the size is still to be committed
	}
	return err
}

// ChmodRWX replaces the permission bits (0777) with perm's, keeping the
// set-id and sticky bits, as setting a POSIX access ACL does.
func (k Kernel) ChmodRWX(perm uint32) {
	i := k.i
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	i.mode = i.mode&^0o777 | perm&0o777
	i.ctime = fs.now()
	fs.markAttr(i)
}

package sim

import (
	"math"
	"slices"
	"syscall"
	"unsafe"

	"github.com/iosim/iosim/vfs"
)

// sysRead implements read(2): count is len(c.Buf). EBADF for a closed fd or one
// without read access (checked before a zero count, as vfs_read does), EISDIR for a
// directory, EINVAL for O_DIRECT misalignment; otherwise the bytes at the file offset
// (short at end of file, 0 at or past it), and the offset moves by what was read.
func (k *Kernel) sysRead(c *Call) Result { return k.read(c.Task, int(c.Args[0]), c.Buf) }

// read is read(2) of fd into p by t.
func (k *Kernel) read(t *Task, fd int, p []byte) Result {
	// The commonest case first, in one step: a table with one user (no reference
	// to take), a description held once (no offset lock to take), open for
	// reading without O_DIRECT, and a read that vfs.Kernel.ReadCached serves. In
	// every other case nothing is done here and the general path below gives
	// the same result.
	if tbl := t.files; tbl.users.Load() == 1 {
		if f := tbl.get(fd); f != nil && f.special == nil && f.refs.Load() == 1 {
			if fl := f.flags.Load(); readableFlags(fl) && fl&oDirect == 0 && f.off <= math.MaxInt64-int64(len(p)) {
				if n, ok := f.ino.Kernel().ReadCached(p, f.off); ok {
					f.off += int64(n)
					return Result{Ret: int64(n)}
				}
			}
		}
	}
	f, ref := t.fget(fd)
	if f == nil {
		return Fail(syscall.EBADF)
	}
	r := k.readFile(f, p, 0, false)
	if ref {
		f.decRef()
	}
	return r
}

// sysPread implements pread64(2): as read at Args[3] without moving the offset.
// EINVAL for a negative offset comes first (before EBADF), ESPIPE for a pipe or
// socket, EISDIR for a directory.
func (k *Kernel) sysPread(c *Call) Result {
	return k.pread(c.Task, int(c.Args[0]), c.Buf, c.Args[3])
}

// pread is pread64(2) of fd into p at off by t.
func (k *Kernel) pread(t *Task, fd int, p []byte, off int64) Result {
	if off < 0 {
		return Fail(syscall.EINVAL)
	}
	f, ref := t.fget(fd)
	if f == nil {
		return Fail(syscall.EBADF)
	}
	r := k.readFile(f, p, off, true)
	if ref {
		f.decRef()
	}
	return r
}

// sysWrite implements write(2): EBADF without write access; with O_APPEND the data
// goes at the end of file, wherever the offset was, and the offset moves past it;
// O_SYNC/O_DSYNC make it durable before returning (a writeback error is the call's
// error, and the offset does not move); O_DIRECT checks alignment (EINVAL) and
// bypasses the page cache. EFBIG at s_maxbytes; a write crossing it is short.
func (k *Kernel) sysWrite(c *Call) Result { return k.write(c.Task, int(c.Args[0]), c.Buf) }

// write is write(2) of p to fd by t.
func (k *Kernel) write(t *Task, fd int, p []byte) Result {
	f, ref := t.fget(fd)
	if f == nil {
		return Fail(syscall.EBADF)
	}
	r := k.writeFile(f, p, 0, false)
	if ref {
		f.decRef()
	}
	return r
}

// sysPwrite implements pwrite64(2): as write at Args[3] without moving the offset;
// on an O_APPEND description Linux appends anyway (and still leaves the offset).
func (k *Kernel) sysPwrite(c *Call) Result {
	return k.pwrite(c.Task, int(c.Args[0]), c.Buf, c.Args[3])
}

// pwrite is pwrite64(2) of p to fd at off by t.
func (k *Kernel) pwrite(t *Task, fd int, p []byte, off int64) Result {
	if off < 0 {
		return Fail(syscall.EINVAL)
	}
	f, ref := t.fget(fd)
	if f == nil {
		return Fail(syscall.EBADF)
	}
	r := k.writeFile(f, p, off, true)
	if ref {
		f.decRef()
	}
	return r
}

// dioCheck applies O_DIRECT's alignment rules: the offset and the length must be
// multiples of the logical block size, and the buffer's address must satisfy the
// rule of WithDirectIOMemAlign (by default: every piece of the buffer between 4 KiB
// page boundaries has a length that is a multiple of 512). A Go slice's address is
// taken with unsafe.Pointer(&p[0]); it is what the kernel would see for a buffer
// passed by x/sys/unix.
func (k *Kernel) dioCheck(p []byte, off int64) bool {
	if (off|int64(len(p)))&(LogicalBlockSize-1) != 0 {
		return false
	}
	if len(p) == 0 {
		return true
	}
	addr := uintptr(unsafe.Pointer(&p[0]))
	if k.dioMemAlign > 0 {
		return addr%k.dioMemAlign == 0
	}
	return addr%LogicalBlockSize == 0 || addr%PageSize+uintptr(len(p)) <= PageSize
}

// dioReadSpan is how much of an O_DIRECT read at off the alignment checks see: the
// kernel maps the file up to the end of its last block and truncates the request to
// that before checking (measured: a 5000-byte read at 0 of a 512-byte file returns
// 512, a 100-byte read at 0 of a 4099-byte file is EINVAL).
func (k *Kernel) dioReadSpan(size, off int64) int64 {
	bs := k.fs.BlockSize()
	return (size+bs-1)/bs*bs - off
}

// dioReadOK applies dioCheck to an O_DIRECT read: a read at or past the end of file
// returns 0 without any check, only the part up to the end of the file's last block
// is checked, and a read of a hole is not checked.
func (k *Kernel) dioReadOK(ino *vfs.Inode, p []byte, off int64) bool {
	size := ino.Size()
	if off >= size {
		return true
	}
	if span := k.dioReadSpan(size, off); int64(len(p)) > span {
		p = p[:span]
	}
	if k.dioHole(ino, off, int64(len(p))) {
		return true
	}
	return k.dioCheck(p, off)
}

// dioHole reports whether [off, off+n) holds no written data (holes and
// unwritten extents, even where a buffered read cached their pages, which
// SEEK_DATA then reports as data): iomap fills such a range with zeros without
// building a bio, so no alignment is checked (measured: a 100-byte read at an odd
// offset into a hole returns 100).
func (k *Kernel) dioHole(ino *vfs.Inode, off, n int64) bool {
	return !ino.Kernel().WrittenIn(off, n)
}

// dioFailAlloc reproduces an ext4 quirk measured on the reference machine: an
// O_DIRECT write that fails the alignment check has already had its first block
// allocated (iomap_begin runs before the bio alignment check) when that block starts
// before the end of file. The block is allocated as fallocate(KEEP_SIZE) would
// (st_blocks grows, the data still reads as before). A write starting in a block at
// or past EOF is extending: the block ext4 gives it there is freed again by the
// truncate that follows (vfs TruncateFailedWrite, which applies both).
func (k *Kernel) dioFailAlloc(ino *vfs.Inode, off int64) {
	bs := k.fs.BlockSize()
	start := off / bs * bs
	if off >= 0 && start < ino.Size() {
		_ = ino.Fallocate(fallocKeepSize, start, bs)
	}
}

// dioFailWrite applies to ino what a failing O_DIRECT write of n bytes at off
// leaves behind on ext4 (ext4_dio_write_iter): the page-cache flush of the
// range and the extending check (vfs FlushForDirectWrite), the blocks
// ext4_iomap_begin allocated below EOF (dioFailAlloc), and, for an extending
// write, the block it allocated past EOF and the truncate of every block past
// EOF (ext4_inode_extension_cleanup -> ext4_truncate_failed_write, vfs
// TruncateFailedWrite).
func (k *Kernel) dioFailWrite(ino *vfs.Inode, off, n int64) {
	extending := ino.Kernel().FlushForDirectWrite(off, n)
	k.dioFailAlloc(ino, off)
	if extending {
		ino.Kernel().TruncateFailedWrite(off)
	}
}

// readFile reads into p from the file offset (positional false: read, readv) or
// from off (pread, preadv, AIO), after the fd checks: EBADF without read access;
// rw_verify_area's overflow check (EINVAL, before a directory's EISDIR); O_DIRECT
// alignment (EINVAL), and a read that bypasses the page cache for O_DIRECT. The
// offset moves by what a non-positional read returned.
func (k *Kernel) readFile(f *File, p []byte, off int64, positional bool) Result {
	fl := f.flags.Load()
	if s := f.special; s != nil && positional && !s.Seekable() {
		return Fail(syscall.ESPIPE) // FMODE_PREAD is checked first (ksys_pread64)
	}
	if !readableFlags(fl) {
		return Fail(syscall.EBADF)
	}
	if s := f.special; s != nil {
		n, e := specialRead(f, s, p, true)
		if e != 0 {
			return Fail(e)
		}
		return Result{Ret: int64(n)}
	}
	ino := f.ino
	if len(p) > maxRW {
		p = p[:maxRW]
	}
	locked := false
	if !positional {
		locked = f.lockPos()
		off = f.off
	}
	var r Result
	switch {
	case off > math.MaxInt64-int64(len(p)):
		r = Fail(syscall.EINVAL)
	case ino.IsDir():
		r = Fail(syscall.EISDIR)
	case len(p) == 0:
	case fl&oDirect != 0:
		ino.Kernel().FlushForDirectRead(off, int64(len(p)))
		if !k.dioReadOK(ino, p, off) {
			r = Fail(syscall.EINVAL)
			break
		}
		r = res(ino.Kernel().ReadAtDirect(p, off))
	default:
		r = res(ino.ReadAt(p, off))
	}
	if !positional {
		if r.Errno == 0 {
			f.off += r.Ret
		}
		f.unlockPos(locked)
	}
	return r
}

// writeMode maps status flags to vfs write modes.
func writeMode(fl uint32) vfs.WriteMode {
	var how vfs.WriteMode
	if fl&syscall.O_APPEND != 0 {
		how |= vfs.WriteAppend
	}
	if fl&oDirect != 0 {
		how |= vfs.WriteDirect
	}
	if fl&oSyncOnly != 0 {
		how |= vfs.WriteSync
	} else if fl&oDsync != 0 {
		how |= vfs.WriteDSync
	}
	return how
}

func (k *Kernel) writeFile(f *File, p []byte, off int64, positional bool) Result {
	if s := f.special; s != nil && positional && !s.Seekable() {
		return Fail(syscall.ESPIPE) // FMODE_PWRITE is checked first (ksys_pwrite64)
	}
	if !f.writable() {
		return Fail(syscall.EBADF)
	}
	if s := f.special; s != nil {
		n, e := specialWrite(f, s, p)
		if e != 0 {
			return Fail(e)
		}
		return Result{Ret: int64(n)}
	}
	ino := f.ino
	if len(p) > maxRW {
		p = p[:maxRW]
	}
	fl := f.flags.Load()
	how := writeMode(fl)
	if f.noData {
		how |= vfs.WriteNoData
	}
	if len(p) == 0 {
		if ino.IsDir() {
			return Fail(syscall.EISDIR)
		}
		return Result{}
	}
	locked := false
	if !positional {
		locked = f.lockPos()
		off = f.off
	}
	if how&vfs.WriteDirect != 0 {
		at := off
		if how&vfs.WriteAppend != 0 {
			at = ino.Size()
		}
		if !k.dioCheck(p, at) {
			k.dioFailWrite(ino, at, int64(len(p)))
			f.unlockPos(locked)
			return Fail(syscall.EINVAL)
		}
	}
	n, end, err := ino.Write(p, off, how, &f.errseq)
	if err == nil && !positional {
		f.off = end
	}
	f.unlockPos(locked)
	if n > 0 && k.mm.active.Load() > 0 {
		k.mm.refresh(ino, end-int64(n), int64(n))
	}
	if err != nil {
		return Fail(errnoOf(err))
	}
	return Result{Ret: int64(n)}
}

// iovLen is the total length of an iovec array.
func iovLen(iov [][]byte) int64 {
	var n int64
	for _, b := range iov {
		n += int64(len(b))
	}
	return n
}

// withVecFile runs fn with the file of a vector call after the checks the vector
// calls share, in Linux's order: EINVAL for a negative position, EBADF for a
// closed fd or one without the access (read, or write when write is set), EINVAL
// beyond UIO_MAXIOV iovecs.
func withVecFile(c *Call, positional bool, off int64, write bool, fn func(f *File) Result) Result {
	if positional && off < 0 {
		return Fail(syscall.EINVAL)
	}
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		switch {
		case write && !f.writable(), !write && !f.readable():
			return Fail(syscall.EBADF)
		case len(c.Iov) > uioMaxIov:
			return Fail(syscall.EINVAL)
		}
		return fn(f)
	})
}

// RWF_* flags of preadv2, pwritev2 and AIO iocbs (<linux/fs.h>).
const (
	rwfHipri     = 0x1
	rwfDsync     = 0x2
	rwfSync      = 0x4
	rwfNowait    = 0x8
	rwfAppend    = 0x10
	rwfNoappend  = 0x20
	rwfAtomic    = 0x40
	rwfDontcache = 0x80
	rwfNosignal  = 0x100
	// rwfSupported is RWF_SUPPORTED as of Linux 6.17.
	rwfSupported = rwfHipri | rwfDsync | rwfSync | rwfNowait | rwfAppend | rwfNoappend |
		rwfAtomic | rwfDontcache | rwfNosignal
)

// rwfErr is kiocb_set_rw_flags's refusal of rwf, as on ext4 (measured on this
// machine's 6.18 kernel): unknown flags EOPNOTSUPP, RWF_APPEND with RWF_NOAPPEND
// EINVAL, RWF_ATOMIC EOPNOTSUPP (no atomic-write support). RWF_HIPRI, RWF_NOWAIT
// (but see sysWritev), RWF_DONTCACHE and RWF_NOSIGNAL are accepted and change
// nothing in the model, whose pages are all in the page cache.
func rwfErr(rwf int64) syscall.Errno {
	switch {
	case rwf&^rwfSupported != 0:
		return syscall.EOPNOTSUPP
	case rwf&(rwfAppend|rwfNoappend) == rwfAppend|rwfNoappend:
		return syscall.EINVAL
	case rwf&rwfAtomic != 0:
		return syscall.EOPNOTSUPP
	}
	return 0
}

// rwfMode is how with the RWF_* flags of one write applied: RWF_SYNC and
// RWF_DSYNC as O_SYNC and O_DSYNC, RWF_APPEND as O_APPEND, RWF_NOAPPEND clears
// O_APPEND.
func rwfMode(how vfs.WriteMode, rwf int64) vfs.WriteMode {
	switch {
	case rwf&rwfSync != 0:
		how |= vfs.WriteSync
	case rwf&rwfDsync != 0 && how&vfs.WriteSync == 0:
		how |= vfs.WriteDSync
	}
	if rwf&rwfAppend != 0 {
		how |= vfs.WriteAppend
	}
	if rwf&rwfNoappend != 0 {
		how &^= vfs.WriteAppend
	}
	return how
}

// sysReadv implements readv(2), preadv(2) and preadv2(2) (positional, offset from
// Args[3]; preadv2 with offset -1 uses the file offset; rwf is preadv2's RWF_*
// flags, see rwfErr). The iovecs are c.Iov: EINVAL beyond UIO_MAXIOV (1024); they
// are filled in order and the call stops at the first short one. An empty vector
// returns 0 after the fd checks, whatever the flags.
func (k *Kernel) sysReadv(c *Call, positional bool, off, rwf int64) Result {
	return withVecFile(c, positional, off, false, func(f *File) Result { return k.readv(c, f, positional, off, rwf) })
}

// readv is sysReadv on f, after withVecFile's checks.
func (k *Kernel) readv(c *Call, f *File, positional bool, off, rwf int64) Result {
	if f.special != nil {
		if positional && !f.special.Seekable() {
			return Fail(syscall.ESPIPE)
		}
		if e := rwfErr(rwf); e != 0 && iovLen(c.Iov) > 0 {
			return Fail(e)
		}
		var total int64
		for _, b := range c.Iov {
			n, e := specialRead(f, f.special, b, total == 0)
			if e != 0 {
				if total > 0 {
					break
				}
				return Fail(e)
			}
			total += int64(n)
			if n < len(b) {
				break
			}
		}
		return Result{Ret: total}
	}
	ino := f.ino
	want := iovLen(c.Iov)
	if want == 0 {
		return Result{} // do_iter_read returns 0 for no bytes, before read_iter (EISDIR)
	}
	if !positional {
		f.mu.Lock()
		defer f.mu.Unlock()
		off = f.off
	}
	if off > math.MaxInt64-want {
		return Fail(syscall.EINVAL) // rw_verify_area: pos + count overflows
	}
	if ino.IsDir() {
		// No read_iter: do_loop_readv_writev refuses every flag but RWF_HIPRI,
		// then the directory's read says EISDIR.
		if rwf&^rwfHipri != 0 {
			return Fail(syscall.EOPNOTSUPP)
		}
		return Fail(syscall.EISDIR)
	}
	if e := rwfErr(rwf); e != 0 {
		return Fail(e)
	}
	if f.flags.Load()&oDirect != 0 {
		ino.Kernel().FlushForDirectRead(off, want)
		if size := ino.Size(); off < size && !k.dioHole(ino, off, k.dioReadSpan(size, off)) {
			rest := k.dioReadSpan(size, off)
			for _, b := range c.Iov {
				if rest <= 0 {
					break
				}
				b = b[:min(int64(len(b)), rest)]
				rest -= int64(len(b))
				if len(b) > 0 && !k.dioCheck(b, off) {
					return Fail(syscall.EINVAL)
				}
			}
		}
	}
	read := ino.ReadAt
	if f.flags.Load()&oDirect != 0 {
		read = ino.Kernel().ReadAtDirect
	}
	var total int64
	for _, b := range c.Iov {
		if len(b) == 0 {
			continue
		}
		n, err := read(b, off+total)
		if err != nil {
			if total > 0 {
				break
			}
			return Fail(errnoOf(err))
		}
		total += int64(n)
		if n < len(b) {
			break
		}
	}
	if !positional {
		f.off += total
	}
	return Result{Ret: total}
}

// sysWritev implements writev(2), pwritev(2) and pwritev2(2): the iovecs are
// written in order as one write (with O_APPEND, at the end of file); EINVAL beyond
// UIO_MAXIOV. rwf is pwritev2's RWF_* flags (see rwfErr and rwfMode): RWF_DSYNC
// and RWF_SYNC make this write durable as O_DSYNC and O_SYNC would, RWF_APPEND
// writes it at the end of file, RWF_NOAPPEND where asked despite O_APPEND.
func (k *Kernel) sysWritev(c *Call, positional bool, off, rwf int64) Result {
	return withVecFile(c, positional, off, true, func(f *File) Result { return k.writev(c, f, positional, off, rwf) })
}

// writev is sysWritev on f, after withVecFile's checks.
func (k *Kernel) writev(c *Call, f *File, positional bool, off, rwf int64) Result {
	if f.special != nil {
		if positional && !f.special.Seekable() {
			return Fail(syscall.ESPIPE)
		}
		if e := rwfErr(rwf); e != 0 && iovLen(c.Iov) > 0 {
			return Fail(e)
		}
		if isPipeEnd(f.special) && len(c.Iov) > 1 {
			// pipe_write takes the iovecs as one write: PIPE_BUF atomicity
			// is of their total.
			n, e := specialWrite(f, f.special, slices.Concat(c.Iov...))
			if e != 0 {
				return Fail(e)
			}
			return Result{Ret: int64(n)}
		}
		var total int64
		for _, b := range c.Iov {
			n, e := specialWrite(f, f.special, b)
			if e != 0 {
				if total > 0 {
					break
				}
				return Fail(e)
			}
			total += int64(n)
		}
		return Result{Ret: total}
	}
	ino := f.ino
	fl := f.flags.Load()
	how := writeMode(fl)
	if f.noData {
		how |= vfs.WriteNoData
	}
	if rwf != 0 && iovLen(c.Iov) > 0 {
		if e := rwfErr(rwf); e != 0 {
			return Fail(e)
		}
		if rwf&rwfNowait != 0 && how&vfs.WriteDirect == 0 {
			return Fail(syscall.EOPNOTSUPP) // ext4_buffered_write_iter
		}
		how = rwfMode(how, rwf)
	}
	if !positional {
		f.mu.Lock()
		defer f.mu.Unlock()
		off = f.off
	}
	if how&vfs.WriteDirect != 0 && iovLen(c.Iov) > 0 {
		at := off
		if how&vfs.WriteAppend != 0 {
			at = ino.Size()
		}
		for _, b := range c.Iov {
			if len(b) > 0 && !k.dioCheck(b, at) {
				k.dioFailWrite(ino, at, iovLen(c.Iov))
				return Fail(syscall.EINVAL)
			}
		}
	}
	var total int64
	pos := off
	for _, b := range c.Iov {
		if len(b) == 0 {
			continue
		}
		n, end, err := ino.Write(b, pos, how, &f.errseq)
		if n > 0 && k.mm.active.Load() > 0 {
			k.mm.refresh(ino, end-int64(n), int64(n))
		}
		if err != nil {
			if total > 0 && n == 0 {
				break
			}
			return Fail(errnoOf(err))
		}
		total += int64(n)
		pos = end
		if n < len(b) {
			break
		}
	}
	if total == 0 && ino.IsDir() {
		return Fail(syscall.EISDIR)
	}
	if !positional && total > 0 {
		f.off = pos
	}
	return Result{Ret: total}
}

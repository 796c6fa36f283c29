package sim

import (
	"math"
	"syscall"

	"github.com/iosim/iosim/vfs"
)

// sysFsync implements fsync(2) and fdatasync(2): writeback, metadata (fsync; for
// fdatasync only what is needed to read the data back) and a cache flush, as vfs
// describes. A writeback error is reported once per open file description (the
// description's errseq cursor, sampled at open). EBADF for a closed fd; EINVAL for
// special objects (pipes, sockets, /dev/null), which cannot be synced. Directories
// and read-only fds can be synced.
func (k *Kernel) sysFsync(c *Call, data bool) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if f.special != nil {
			return Fail(syscall.EINVAL)
		}
		var err error
		if data {
			err = f.ino.Fdatasync(&f.errseq)
		} else {
			err = f.ino.Fsync(&f.errseq)
		}
		return res(0, err)
	})
}

// sysSyncfs implements syncfs(2): everything becomes durable; the model has one file
// system per kernel, so it is sync(2) plus a writeback error report. EBADF.
func (k *Kernel) sysSyncfs(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		return res(0, k.fs.Sync())
	})
}

// sync_file_range(2) flags.
const (
	syncFileRangeWaitBefore = 1
	syncFileRangeWrite      = 2
	syncFileRangeWaitAfter  = 4
)

// sysSyncFileRange implements sync_file_range(2) (Args: fd, offset, nbytes, flags):
// EBADF (O_PATH too) first, as ksys_sync_file_range looks the fd up before
// sync_file_range checks the rest; then EINVAL for unknown flags, a negative offset
// or length, or a range overflowing LLONG_MAX; ESPIPE for anything but a regular
// file, a directory, a symlink or a block device (so for pipes, sockets and
// character devices such as /dev/null). With SYNC_FILE_RANGE_WRITE the range's
// dirty pages are written back to the device cache (not flushed: not durable with
// a write cache, and no metadata); nbytes 0 means to the end of file. The model's
// writeback is synchronous, so the WAIT flags add nothing.
func (k *Kernel) sysSyncFileRange(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		off, n, flags := c.Args[1], c.Args[2], c.Args[3]
		if flags&^(syncFileRangeWaitBefore|syncFileRangeWrite|syncFileRangeWaitAfter) != 0 {
			return Fail(syscall.EINVAL)
		}
		if off < 0 || n < 0 || n > 0 && off > math.MaxInt64-n {
			return Fail(syscall.EINVAL)
		}
		if f.special != nil {
			// sync_file_range: !S_ISREG && !S_ISBLK && !S_ISDIR && !S_ISLNK is ESPIPE.
			if f.special.Mode()&vfs.S_IFMT == vfs.S_IFBLK {
				return Result{}
			}
			return Fail(syscall.ESPIPE)
		}
		if flags&syncFileRangeWrite == 0 || !f.ino.IsRegular() {
			return Result{}
		}
		return res(0, f.ino.SyncFileRange(off, n))
	})
}

// sysFtruncate implements ftruncate(2): EBADF; EINVAL for a negative length, a
// description without write access or a file that is not regular (a directory
// too); EFBIG beyond s_maxbytes.
func (k *Kernel) sysFtruncate(c *Call) Result {
	length := c.Args[1]
	if length < 0 {
		return Fail(syscall.EINVAL)
	}
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if f.special != nil || !f.ino.IsRegular() || !f.writable() {
			return Fail(syscall.EINVAL)
		}
		err := f.ino.Truncate(length)
		if err == nil && k.mm.active.Load() > 0 {
			k.mm.refresh(f.ino, 0, math.MaxInt64)
		}
		return res(0, err)
	})
}

// sysTruncate implements truncate(2): EINVAL for a negative length (before the path
// is looked up), EISDIR for a directory, EFBIG beyond s_maxbytes, and the path errors. Symlinks are followed.
func (k *Kernel) sysTruncate(c *Call) Result {
	length := c.Args[1]
	if length < 0 {
		return Fail(syscall.EINVAL) // do_sys_truncate checks it before the lookup
	}
	ino, _, e := k.resolveAt(c.Task, atFdcwd, c.Path, true, false)
	if e != 0 {
		return Fail(e)
	}
	if ino.IsDir() {
		return Fail(syscall.EISDIR)
	}
	err := ino.Truncate(length)
	if err == nil && k.mm.active.Load() > 0 {
		k.mm.refresh(ino, 0, math.MaxInt64)
	}
	return res(0, err)
}

// fallocate(2) modes the model knows.
const (
	fallocKeepSize  = 0x01
	fallocPunchHole = 0x02
	fallocZeroRange = 0x10
)

// sysFallocate implements fallocate(2) (Args: fd, mode, offset, len) in vfs_fallocate's
// order: EINVAL for a negative offset or len <= 0; EOPNOTSUPP for modes other than 0,
// KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE, ZERO_RANGE[|KEEP_SIZE], COLLAPSE_RANGE and
// INSERT_RANGE (these two alone: vfs/shift.go); EBADF without write
// access (a directory opened read-only is EBADF, not EISDIR); then ESPIPE for pipes,
// EISDIR, ENODEV, EFBIG.
func (k *Kernel) sysFallocate(c *Call) Result {
	mode, off, n := uint32(c.Args[1]), c.Args[2], c.Args[3]
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if off < 0 || n <= 0 {
			return Fail(syscall.EINVAL)
		}
		shift := false
		switch mode {
		case 0, fallocKeepSize, fallocPunchHole | fallocKeepSize, fallocZeroRange, fallocZeroRange | fallocKeepSize:
		case vfs.FallocCollapseRange, vfs.FallocInsertRange:
			shift = true
		default:
			return Fail(syscall.EOPNOTSUPP) // COLLAPSE or INSERT with other flags too (Linux 6.18)
		}
		if !f.writable() {
			return Fail(syscall.EBADF)
		}
		if f.special != nil {
			if f.special.Seekable() {
				return Fail(syscall.ENODEV)
			}
			return Fail(syscall.ESPIPE)
		}
		err := f.ino.Fallocate(mode, off, n)
		if err == nil && shift && k.mm.active.Load() > 0 {
			k.mm.refresh(f.ino, off, math.MaxInt64-off) // the data moved from off on
		} else if err == nil && mode&(fallocPunchHole|fallocZeroRange) != 0 && k.mm.active.Load() > 0 {
			k.mm.refresh(f.ino, off, n)
		}
		return res(0, err)
	})
}

// sysFadvise implements fadvise64(2) (Args: fd, offset, len, advice): EBADF, ESPIPE
// for pipes and FIFOs, EINVAL for an unknown advice or a negative length. POSIX_FADV_DONTNEED
// starts writeback of the range's dirty pages (generic_fadvise:
// __filemap_fdatawrite_range, WB_SYNC_NONE), which the model applies to the
// extent tree only (vfs.Kernel.StartWriteback); the other advice changes no
// file state. With a device profile, the time model applies the advice to the
// page cache and the file's read-ahead (timeModel.fadvise).
func (k *Kernel) sysFadvise(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if f.special != nil && f.statMode()&vfs.S_IFMT == vfs.S_IFIFO {
			return Fail(syscall.ESPIPE) // S_ISFIFO; a socket has advice checked, no effect
		}
		if c.Args[2] < 0 || c.Args[3] < 0 || c.Args[3] > 5 {
			return Fail(syscall.EINVAL)
		}
		if c.Args[3] == fadvDontneed && f.ino != nil && f.ino.IsRegular() {
			n := c.Args[2]
			if n == 0 {
				n = -1 // len 0: to the end of the file
			}
			f.ino.Kernel().StartWriteback(c.Args[1], n)
		}
		return Result{}
	})
}

// posix_fadvise(2) advice values.
const (
	fadvNormal     = 0
	fadvRandom     = 1
	fadvSequential = 2
	fadvDontneed   = 4
)

// sysReadahead implements readahead(2): EBADF, EBADF without read access, EINVAL
// for a file that is not regular; no effect.
func (k *Kernel) sysReadahead(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if !f.readable() {
			return Fail(syscall.EBADF)
		}
		if f.special != nil || !f.ino.IsRegular() {
			return Fail(syscall.EINVAL)
		}
		return Result{}
	})
}

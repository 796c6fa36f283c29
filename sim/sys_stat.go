package sim

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

func timespecOf(t vfs.Timespec) unix.Timespec {
	s, ns := t/1e9, t%1e9
	if ns < 0 {
		s, ns = s-1, ns+1e9
	}
	return unix.Timespec{Sec: s, Nsec: ns}
}

// fillStat converts a vfs.Stat to struct stat.
func fillStat(st *unix.Stat_t, s *vfs.Stat) {
	*st = unix.Stat_t{
		Dev: s.Dev, Ino: s.Ino, Nlink: uint64(s.Nlink), Mode: s.Mode, Uid: s.Uid, Gid: s.Gid,
		Rdev: s.Rdev, Size: s.Size, Blksize: s.Blksize, Blocks: s.Blocks,
		Atim: timespecOf(s.Atime), Mtim: timespecOf(s.Mtime), Ctim: timespecOf(s.Ctime),
	}
}

// statFile fills s for what f refers to.
func (k *Kernel) statFile(f *File, s *vfs.Stat) {
	if f.ino != nil {
		f.ino.Stat(s)
		return
	}
	if e, ok := f.special.(*pipeEnd); ok {
		// pipefs and sockfs: no size, the time of the call's clock is not kept.
		*s = vfs.Stat{Dev: 0xe, Ino: e.ino, Mode: e.mode, Nlink: 1, Blksize: 4096,
			Atime: Epoch, Mtime: Epoch, Ctime: Epoch}
		return
	}
	if f.special != nil {
		*s = vfs.Stat{Dev: 5, Ino: 1, Mode: f.special.Mode(), Nlink: 1, Rdev: f.special.Rdev(), Blksize: 4096,
			Atime: Epoch, Mtime: Epoch, Ctime: Epoch}
		return
	}
	f.ino.Stat(s)
}

// sysFstat implements fstat(2): Obj is a *unix.Stat_t. EBADF for a closed fd.
func (k *Kernel) sysFstat(c *Call) Result {
	return c.Task.withFileRaw(int(c.Args[0]), func(f *File) Result {
		st, _ := c.Obj.(*unix.Stat_t)
		if st == nil {
			return Fail(syscall.EFAULT)
		}
		var s vfs.Stat
		k.statFile(f, &s)
		fillStat(st, &s)
		return Result{}
	})
}

// resolveAt resolves an "at" call's (dirfd, path) to an inode or, with
// AT_EMPTY_PATH and an empty path, to the description dirfd refers to (which may be
// a special object or any file type, as fstat).
func (k *Kernel) resolveAt(t *Task, dirfd int, path string, follow, emptyOK bool) (*vfs.Inode, *File, syscall.Errno) {
	if path == "" {
		if !emptyOK {
			return nil, nil, syscall.ENOENT
		}
		if dirfd == atFdcwd {
			return t.g.cwd.Load(), nil, 0
		}
		f := t.g.files.get(dirfd)
		if f == nil {
			return nil, nil, syscall.EBADF
		}
		return f.ino, f, 0
	}
	var dir *vfs.Inode
	if f, rest, ok, e := t.procFd(path); ok && (follow || rest != "") {
		switch {
		case e != 0:
			return nil, nil, e
		case rest == "":
			return f.ino, f, 0
		case f.ino == nil || !f.ino.IsDir():
			return nil, nil, syscall.ENOTDIR
		}
		dir, path = f.ino, rest
	} else {
		var e syscall.Errno
		if dir, e = t.dirOf(dirfd, path); e != 0 {
			return nil, nil, e
		}
	}
	ino, err := dir.Resolve(path, follow)
	if err != nil {
		return nil, nil, errnoOf(err)
	}
	return ino, nil, 0
}

// sysFstatat implements newfstatat(2), stat(2) and lstat(2): Obj is a *unix.Stat_t.
// Flags: AT_SYMLINK_NOFOLLOW (lstat), AT_EMPTY_PATH (stat dirfd itself),
// AT_NO_AUTOMOUNT and AT_STATX_SYNC_TYPE's bits (ignored, either or both, as
// vfs_statx accepts them); others are EINVAL. An empty path without AT_EMPTY_PATH
// is ENOENT. As in vfs_fstatat, an empty path with AT_EMPTY_PATH and a dirfd >= 0
// is fstat(dirfd): the flags are not checked.
func (k *Kernel) sysFstatat(c *Call, dirfd int, path string, flags int) Result {
	fstat := path == "" && flags&atEmptyPath != 0 && dirfd >= 0
	if !fstat && flags&^(atSymlinkNofollow|atEmptyPath|atNoAutomount|atStatxSyncType) != 0 {
		return Fail(syscall.EINVAL)
	}
	st, _ := c.Obj.(*unix.Stat_t)
	if st == nil {
		return Fail(syscall.EFAULT)
	}
	ino, f, e := k.resolveAt(c.Task, dirfd, path, flags&atSymlinkNofollow == 0, flags&atEmptyPath != 0)
	if e != 0 {
		return Fail(e)
	}
	var s vfs.Stat
	if f != nil {
		k.statFile(f, &s)
	} else {
		ino.Stat(&s)
	}
	fillStat(st, &s)
	return Result{}
}

// statx(2) constants.
const (
	statxBasicStats = 0x7ff
	statxMntID      = 0x1000
	statxReserved   = 0x80000000
)

// sysStatx implements statx(2) (Args: dirfd, -, flags, mask; Obj *unix.Statx_t).
// Flags as fstatat plus AT_STATX_SYNC_TYPE (both sync bits at once is EINVAL); a
// mask with STATX__RESERVED is EINVAL. The model fills the basic stats and the mount
// id (stx_mask 0x17ff, as ext4 answers a STATX_BASIC_STATS request); btime,
// attributes and the direct I/O alignment fields are not modelled (left zero and not
// in stx_mask). As in the statx syscall, an empty path with AT_EMPTY_PATH and a
// dirfd >= 0 goes to do_statx_fd, which checks the mask and the sync type but not
// the other flags.
func (k *Kernel) sysStatx(c *Call) Result {
	dirfd, flags, mask := int(c.Args[0]), int(c.Args[2]), uint32(c.Args[3])
	fdOnly := c.Path == "" && flags&atEmptyPath != 0 && dirfd >= 0
	if !fdOnly && flags&^(atSymlinkNofollow|atEmptyPath|atNoAutomount|atStatxSyncType) != 0 ||
		flags&atStatxSyncType == atStatxSyncType {
		return Fail(syscall.EINVAL)
	}
	if mask&statxReserved != 0 {
		return Fail(syscall.EINVAL)
	}
	sx, _ := c.Obj.(*unix.Statx_t)
	if sx == nil {
		return Fail(syscall.EFAULT)
	}
	ino, f, e := k.resolveAt(c.Task, dirfd, c.Path, flags&atSymlinkNofollow == 0, flags&atEmptyPath != 0)
	if e != 0 {
		return Fail(e)
	}
	var s vfs.Stat
	if f != nil {
		k.statFile(f, &s)
	} else {
		ino.Stat(&s)
	}
	ts := func(t vfs.Timespec) unix.StatxTimestamp {
		x := timespecOf(t)
		return unix.StatxTimestamp{Sec: x.Sec, Nsec: uint32(x.Nsec)}
	}
	*sx = unix.Statx_t{
		Mask: statxBasicStats | statxMntID, Blksize: uint32(s.Blksize), Nlink: s.Nlink,
		Uid: s.Uid, Gid: s.Gid, Mode: uint16(s.Mode), Ino: s.Ino, Size: uint64(s.Size),
		Blocks: uint64(s.Blocks), Atime: ts(s.Atime), Ctime: ts(s.Ctime), Mtime: ts(s.Mtime),
		Rdev_major: uint32(s.Rdev >> 8 & 0xfff), Rdev_minor: uint32(s.Rdev&0xff | s.Rdev>>12&0xfff00),
		Dev_major: uint32(s.Dev >> 8 & 0xfff), Dev_minor: uint32(s.Dev&0xff | s.Dev>>12&0xfff00),
		Mnt_id: 1,
	}
	return Result{}
}

// sysFaccessat implements access(2), faccessat(2) and faccessat2(2) for uid 0:
// mode bits other than R_OK|W_OK|X_OK are EINVAL, flags other than AT_EACCESS,
// AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH are EINVAL; read and write are always
// granted (the model has no read-only mounts); X_OK needs a directory or some
// execute bit (EACCES otherwise), as for root.
func (k *Kernel) sysFaccessat(c *Call, dirfd int, mode uint32, flags int) Result {
	if mode&^7 != 0 {
		return Fail(syscall.EINVAL)
	}
	if flags&^(atEaccess|atSymlinkNofollow|atEmptyPath) != 0 {
		return Fail(syscall.EINVAL)
	}
	ino, f, e := k.resolveAt(c.Task, dirfd, c.Path, flags&atSymlinkNofollow == 0, flags&atEmptyPath != 0)
	if e != 0 {
		return Fail(e)
	}
	if mode&1 != 0 {
		var m uint32
		if f != nil {
			m = f.statMode()
		} else {
			m = ino.Mode()
		}
		if m&vfs.S_IFMT != vfs.S_IFDIR && m&0o111 == 0 {
			return Fail(syscall.EACCES)
		}
	}
	return Result{}
}

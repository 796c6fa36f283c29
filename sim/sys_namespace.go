package sim

import (
	"encoding/binary"
	"math"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// atDir returns the start directory of an "at" call with a path argument, after the
// empty-path check (ENOENT) that getname does before the dirfd is looked at.
func atDir(t *Task, dirfd int, path string) (*vfs.Inode, syscall.Errno) {
	if path == "" {
		return nil, syscall.ENOENT
	}
	return t.dirOf(dirfd, path)
}

// sysUnlinkat implements unlink(2), rmdir(2) and unlinkat(2) (flags: AT_REMOVEDIR
// only, else EINVAL). unlink of a directory is EISDIR, rmdir of a file ENOTDIR,
// rmdir of "." EINVAL, of ".." ENOTEMPTY, of "/" EBUSY.
func (k *Kernel) sysUnlinkat(c *Call, dirfd int, flags int) Result {
	if flags&^atRemovedir != 0 {
		return Fail(syscall.EINVAL)
	}
	dir, e := atDir(c.Task, dirfd, c.Path)
	if e != 0 {
		return Fail(e)
	}
	if flags&atRemovedir != 0 {
		return res(0, dir.Rmdir(c.Path))
	}
	return res(0, dir.Unlink(c.Path))
}

// sysRenameat2 implements rename(2), renameat(2) and renameat2(2) (Path → Path2;
// flags RENAME_NOREPLACE, RENAME_EXCHANGE; RENAME_WHITEOUT and unknown flags are
// EINVAL). The order is do_renameat2's: the flags (before either path or dirfd),
// then the old path's parent lookup (getname's ENOENT for an empty path, the
// dirfd, the walk), then the new path's.
func (k *Kernel) sysRenameat2(c *Call, olddirfd, newdirfd int, flags uint) Result {
	if flags&^(vfs.RenameNoreplace|vfs.RenameExchange) != 0 ||
		flags == vfs.RenameNoreplace|vfs.RenameExchange {
		return Fail(syscall.EINVAL)
	}
	od, e := atDir(c.Task, olddirfd, c.Path)
	if e != 0 {
		return Fail(e)
	}
	nd, e := atDir(c.Task, newdirfd, c.Path2)
	if e != 0 {
		// The new path's own errors wait for the old path's parent lookup.
		return res(0, firstErr(od.Kernel().LookupParent(c.Path), e))
	}
	return res(0, od.Rename(c.Path, nd, c.Path2, int(flags)))
}

// firstErr returns err if it is not nil, else e.
func firstErr(err error, e syscall.Errno) error {
	if err != nil {
		return err
	}
	return e
}

// sysLinkat implements link(2) and linkat(2) (Path → Path2; flags
// AT_SYMLINK_FOLLOW, AT_EMPTY_PATH, others EINVAL). The order is do_linkat's: the
// flags, the old path's lookup (with AT_EMPTY_PATH an empty path is the file
// dirfd refers to, any fd, O_PATH included: the caller is root and has
// CAP_DAC_READ_SEARCH), then the new path (filename_create), then vfs_link's
// checks (a directory is EPERM, an unlinked file ENOENT).
func (k *Kernel) sysLinkat(c *Call, olddirfd, newdirfd int, flags int) Result {
	if flags&^(atSymlinkFollow|atEmptyPath) != 0 {
		return Fail(syscall.EINVAL)
	}
	var src *vfs.Inode // the fd's file, with AT_EMPTY_PATH and an empty path
	fromFd := c.Path == "" && flags&atEmptyPath != 0
	if fromFd {
		ino, f, e := k.resolveAt(c.Task, olddirfd, "", false, true)
		if e != 0 {
			return Fail(e)
		}
		if f == nil || f.special == nil {
			src = ino // else another mount: LinkFrom's EXDEV
		}
	} else if isProcPath(c.Path) {
		// /proc/self/fd/N: followed (AT_SYMLINK_FOLLOW), the fd's file, an
		// O_TMPFILE one included; not followed, the magic link itself, on
		// another mount (LinkFrom's EXDEV).
		if f, rest, ok, e := c.Task.procFd(c.Path); ok {
			if e != 0 {
				return Fail(e)
			}
			if rest == "" {
				fromFd = true
				if flags&atSymlinkFollow != 0 && f.special == nil {
					src = f.ino
				}
			}
		}
	}
	var od *vfs.Inode
	if !fromFd {
		var e syscall.Errno
		if od, e = atDir(c.Task, olddirfd, c.Path); e != 0 {
			return Fail(e)
		}
	}
	nd, e := atDir(c.Task, newdirfd, c.Path2)
	if e != 0 {
		// The new path's own errors wait for the old path's lookup.
		if od != nil {
			_, err := od.Resolve(c.Path, flags&atSymlinkFollow != 0)
			return res(0, firstErr(err, e))
		}
		return Fail(e)
	}
	if fromFd {
		return res(0, nd.LinkFrom(src, c.Path2))
	}
	return res(0, od.Link(c.Path, nd, c.Path2, flags&atSymlinkFollow != 0))
}

// sysSymlinkat implements symlink(2) and symlinkat(2): Path is the new link's path,
// Path2 its target (ENOENT when empty).
func (k *Kernel) sysSymlinkat(c *Call, newdirfd int) Result {
	// getname of the target comes first (do_symlinkat): ENOENT when empty,
	// ENAMETOOLONG when it does not fit in PATH_MAX.
	if c.Path2 == "" {
		return Fail(syscall.ENOENT)
	}
	if len(c.Path2) >= vfs.MaxPathLen {
		return Fail(syscall.ENAMETOOLONG)
	}
	dir, e := atDir(c.Task, newdirfd, c.Path)
	if e != 0 {
		return Fail(e)
	}
	return res(0, dir.Symlink(c.Path2, c.Path))
}

// sysReadlinkat implements readlink(2) and readlinkat(2): the target is copied into
// Buf, truncated to its length, without a NUL; the result is the bytes copied. A
// buffer of length 0 is EINVAL (before the path), a path that is not a symlink
// EINVAL. As do_readlinkat looks the path up with LOOKUP_EMPTY, an empty path is
// the dirfd itself (EBADF when closed), and ENOENT when that is not a symlink.
func (k *Kernel) sysReadlinkat(c *Call, dirfd int) Result {
	if len(c.Buf) <= 0 {
		return Fail(syscall.EINVAL)
	}
	if c.Path == "" {
		ino, f, e := k.resolveAt(c.Task, dirfd, "", false, true)
		if e != 0 {
			return Fail(e)
		}
		if (f != nil && f.special != nil) || ino == nil || !ino.IsSymlink() {
			return Fail(syscall.ENOENT)
		}
		return Result{Ret: int64(copy(c.Buf, ino.Target()))}
	}
	dir, e := atDir(c.Task, dirfd, c.Path)
	if e != 0 {
		return Fail(e)
	}
	target, err := dir.Readlink(c.Path)
	if err != nil {
		return Fail(errnoOf(err))
	}
	return Result{Ret: int64(copy(c.Buf, target))}
}

// sysMkdirat implements mkdir(2) and mkdirat(2): mode & 07777 & ~umask (the sticky
// and set-id bits are kept as given, as Linux does for directories).
func (k *Kernel) sysMkdirat(c *Call, dirfd int, mode uint32) Result {
	dir, e := atDir(c.Task, dirfd, c.Path)
	if e != 0 {
		return Fail(e)
	}
	// vfs_mkdir's vfs_prepare_mode keeps only S_IRWXUGO|S_ISVTX of the mode: the
	// set-user-ID and set-group-ID bits asked for are dropped (a directory is
	// set-group-ID only by inheritance, inode_init_owner).
	return res(0, dir.Mkdir(c.Path, mode&0o1777&^c.Task.g.umask.Load()))
}

// direntHeader is the fixed part of struct linux_dirent64: d_ino, d_off, d_reclen,
// d_type.
const direntHeader = 19

// sysGetdents64 implements getdents64(2) (and getdents, encoded the same way): it
// fills Buf with struct linux_dirent64 records {d_ino u64, d_off s64, d_reclen u16,
// d_type u8, d_name NUL-terminated, padded to 8 bytes}, as many as fit, and returns
// the bytes used; 0 at the end. EINVAL when the buffer cannot hold the next entry,
// ENOTDIR for a file that is not a directory, EBADF for a closed fd.
//
// The position in the description is an index into the directory's entries ("."
// and ".." first, then by name, as vfs.Dirents lists them); d_off is the position
// after the entry, LLONG_MAX after the last one, as ext4 reports the end (so the
// offset after a full listing is LLONG_MAX). The entries are read when the position
// is 0 (after open or a rewind) and kept until the next rewind; entries created
// meanwhile are not seen.
func (k *Kernel) sysGetdents64(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if f.special != nil || !f.ino.IsDir() {
			return Fail(syscall.ENOTDIR)
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.off == 0 || f.dirents == nil {
			ents, err := f.ino.Dirents()
			if err != nil {
				return Fail(errnoOf(err))
			}
			f.dirents = ents
		}
		if f.off < 0 || f.off >= int64(len(f.dirents)) {
			return Result{}
		}
		buf := c.Buf
		used := 0
		i := int(f.off)
		for ; i < len(f.dirents); i++ {
			d := &f.dirents[i]
			reclen := (direntHeader + len(d.Name) + 1 + 7) &^ 7
			if used+reclen > len(buf) {
				if used == 0 {
					return Fail(syscall.EINVAL)
				}
				break
			}
			next := int64(i + 1)
			if i == len(f.dirents)-1 {
				next = math.MaxInt64
			}
			b := buf[used : used+reclen]
			binary.LittleEndian.PutUint64(b[0:], d.Ino)
			binary.LittleEndian.PutUint64(b[8:], uint64(next))
			binary.LittleEndian.PutUint16(b[16:], uint16(reclen))
			b[18] = d.Type
			n := copy(b[direntHeader:], d.Name)
			clear(b[direntHeader+n:])
			used += reclen
		}
		if i == len(f.dirents) {
			f.off = math.MaxInt64
		} else {
			f.off = int64(i)
		}
		return Result{Ret: int64(used)}
	})
}

// sysChdir implements chdir(2): ENOENT, ENOTDIR (a file), and the path errors.
func (k *Kernel) sysChdir(c *Call) Result {
	if c.Path == "" {
		return Fail(syscall.ENOENT)
	}
	ino, err := c.Task.g.cwd.Load().Resolve(c.Path, true)
	if err != nil {
		return Fail(errnoOf(err))
	}
	if !ino.IsDir() {
		return Fail(syscall.ENOTDIR)
	}
	c.Task.g.cwd.Store(ino)
	return Result{}
}

// sysFchdir implements fchdir(2): EBADF, ENOTDIR.
func (k *Kernel) sysFchdir(c *Call) Result {
	return c.Task.withFileRaw(int(c.Args[0]), func(f *File) Result {
		if f.special != nil || !f.ino.IsDir() {
			return Fail(syscall.ENOTDIR)
		}
		c.Task.g.cwd.Store(f.ino)
		return Result{}
	})
}

// sysGetcwd implements the getcwd(2) syscall: it copies the cwd's path and a NUL
// into Buf and returns the length including the NUL (the syscall's answer; glibc's
// wrapper returns the pointer). ERANGE when Buf is too small, ENOENT when the cwd
// has been removed.
func (k *Kernel) sysGetcwd(c *Call) Result {
	cwd := c.Task.g.cwd.Load()
	if cwd.Nlink() == 0 {
		return Fail(syscall.ENOENT)
	}
	p := cwd.Path()
	if len(p)+1 > len(c.Buf) {
		return Fail(syscall.ERANGE)
	}
	n := copy(c.Buf, p)
	c.Buf[n] = 0
	return Result{Ret: int64(n + 1)}
}

// sysFchmodat implements chmod(2), fchmodat(2) and fchmodat2(2) (mode & 07777;
// flags AT_SYMLINK_NOFOLLOW and AT_EMPTY_PATH, others EINVAL; changing the mode of a
// symlink itself is EOPNOTSUPP, as on Linux).
func (k *Kernel) sysFchmodat(c *Call, dirfd int, mode uint32, flags int) Result {
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return Fail(syscall.EINVAL)
	}
	ino, f, e := k.resolveAt(c.Task, dirfd, c.Path, flags&atSymlinkNofollow == 0, flags&atEmptyPath != 0)
	if e != 0 {
		return Fail(e)
	}
	if f != nil && f.special != nil {
		return Result{}
	}
	if ino.IsSymlink() {
		return Fail(syscall.EOPNOTSUPP)
	}
	return res(0, ino.Chmod(mode&0o7777))
}

// sysFchmod implements fchmod(2) (works on any open fd, O_RDONLY included).
func (k *Kernel) sysFchmod(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if f.special != nil {
			return Result{}
		}
		return res(0, f.ino.Chmod(uint32(c.Args[1])&0o7777))
	})
}

// sysFchownat implements chown(2), lchown(2) and fchownat(2) (flags
// AT_SYMLINK_NOFOLLOW, AT_EMPTY_PATH; others EINVAL). -1 leaves an id unchanged.
func (k *Kernel) sysFchownat(c *Call, dirfd, uid, gid, flags int) Result {
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return Fail(syscall.EINVAL)
	}
	ino, f, e := k.resolveAt(c.Task, dirfd, c.Path, flags&atSymlinkNofollow == 0, flags&atEmptyPath != 0)
	if e != 0 {
		return Fail(e)
	}
	if f != nil && f.special != nil {
		return Result{}
	}
	return res(0, ino.Chown(int(int32(uid)), int(int32(gid))))
}

// sysFchown implements fchown(2).
func (k *Kernel) sysFchown(c *Call) Result {
	return c.Task.withFile(int(c.Args[0]), func(f *File) Result {
		if f.special != nil {
			return Result{}
		}
		return res(0, f.ino.Chown(int(int32(c.Args[1])), int(int32(c.Args[2]))))
	})
}

// utimensat(2) special nanosecond values.
const (
	utimeNow  = (1 << 30) - 1
	utimeOmit = (1 << 30) - 2
)

// sysUtimensat implements utimensat(2) (Args: dirfd, -, -, flags; Obj is a
// *[2]unix.Timespec or nil for "both now"). The order is Linux's (the utimensat
// syscall, do_utimes, vfs_utimes): both times UTIME_OMIT is 0 before anything
// else is looked at; a NULL path with a dirfd other than AT_FDCWD is futimens
// (do_utimes_fd: flags other than 0 are EINVAL, then the fd, which may not be
// O_PATH: EBADF); else (do_utimes_path) flags other than AT_SYMLINK_NOFOLLOW and
// AT_EMPTY_PATH are EINVAL, then the path lookup (a NULL path with AT_FDCWD is
// EFAULT); a tv_nsec outside [0, 1e9) that is not UTIME_NOW or UTIME_OMIT is
// EINVAL only after that (vfs_utimes).
func (k *Kernel) sysUtimensat(c *Call) Result {
	dirfd, flags := int(c.Args[0]), int(c.Args[3])
	ts, _ := c.Obj.(*[2]unix.Timespec)
	if ts != nil && ts[0].Nsec == utimeOmit && ts[1].Nsec == utimeOmit {
		return Result{} // Linux returns 0 without resolving the path
	}
	if c.Path == "" && c.Args[1] == PathNull && dirfd != atFdcwd {
		// utimensat(fd, NULL, times, 0) is futimens(fd): the fd itself.
		if flags != 0 {
			return Fail(syscall.EINVAL)
		}
		return c.Task.withFile(dirfd, func(f *File) Result { return utimens(f.ino, f, ts) })
	}
	if flags&^(atSymlinkNofollow|atEmptyPath) != 0 {
		return Fail(syscall.EINVAL)
	}
	if c.Path == "" && c.Args[1] == PathNull {
		return Fail(syscall.EFAULT)
	}
	ino, f, e := k.resolveAt(c.Task, dirfd, c.Path, flags&atSymlinkNofollow == 0, flags&atEmptyPath != 0)
	if e != 0 {
		return Fail(e)
	}
	return utimens(ino, f, ts)
}

// utimens sets ino's times to ts (nil: now) for utimensat, once its path or fd
// is resolved (f, when not nil, is the description it went through).
func utimens(ino *vfs.Inode, f *File, ts *[2]unix.Timespec) Result {
	at, mt := vfs.UtimeNow, vfs.UtimeNow
	if ts != nil {
		conv := func(t unix.Timespec) (vfs.Timespec, bool) {
			switch t.Nsec {
			case utimeNow:
				return vfs.UtimeNow, true
			case utimeOmit:
				return vfs.UtimeOmit, true
			}
			if t.Nsec < 0 || t.Nsec >= 1e9 {
				return 0, false
			}
			return t.Sec*1e9 + t.Nsec, true
		}
		var ok1, ok2 bool
		at, ok1 = conv(ts[0])
		mt, ok2 = conv(ts[1])
		if !ok1 || !ok2 {
			return Fail(syscall.EINVAL)
		}
	}
	if f != nil && f.special != nil {
		return Result{}
	}
	return res(0, ino.Utimens(at, mt))
}

package sim

import (
	"strconv"
	"strings"
	"syscall"

	"github.com/iosim/iosim/vfs"
)

// Linux flag values the model uses that package syscall lacks or spells differently.
const (
	atFdcwd           = -100
	atSymlinkNofollow = 0x100
	atRemovedir       = 0x200
	atEaccess         = 0x200
	atSymlinkFollow   = 0x400
	atNoAutomount     = 0x800
	atEmptyPath       = 0x1000
	atStatxSyncType   = 0x6000

	oLargefile = 0x8000
	oDirect    = 0x4000
	oDsync     = 0x1000
	oSyncOnly  = 0x100000 // __O_SYNC: with oDsync it makes O_SYNC
	oPath      = 0x200000
	oTmpfile   = 0x400000 // __O_TMPFILE (O_TMPFILE adds O_DIRECTORY)
	oNoatime   = 0x40000
	oAsync     = 0x2000

	// validOpenFlags is VALID_OPEN_FLAGS: open silently ignores other bits.
	validOpenFlags = syscall.O_ACCMODE | syscall.O_CREAT | syscall.O_EXCL | syscall.O_NOCTTY |
		syscall.O_TRUNC | syscall.O_APPEND | syscall.O_NONBLOCK | oDsync | oAsync | oDirect |
		oLargefile | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | oNoatime | syscall.O_CLOEXEC |
		oSyncOnly | oPath | oTmpfile
)

// sysOpenat implements open(2), openat(2) and creat(2).
//
// Modelled: O_CREAT (mode & ~umask), O_EXCL, O_TRUNC (even with O_RDONLY), O_DIRECTORY,
// O_NOFOLLOW, O_APPEND/O_NONBLOCK/O_DSYNC/O_SYNC/O_DIRECT/O_NOATIME kept as status
// flags (F_GETFL also shows O_LARGEFILE, which the kernel forces on 64-bit opens),
// O_CLOEXEC on the fd; EMFILE is decided after the flags and the path string are
// checked and before the path is looked at (see openat); O_DIRECT on a file system
// without direct I/O, or on a directory, is EINVAL after the file was created, as
// open_check_o_direct runs last; O_CREAT with O_DIRECTORY is EINVAL (Linux 6.4+).
//
// O_TMPFILE makes an unnamed file in the directory (see openTmpfile).
//
// Not modelled: permissions (the caller is root), O_PATH
// beyond "an fd that can neither read nor write", O_NOCTTY, O_ASYNC signals.
// openat2 and its RESOLVE_* flags: sys_openat2.go.
func (k *Kernel) sysOpenat(c *Call, dirfd int, flags64 int64, mode uint32) Result {
	return k.openat(c.Task, dirfd, c.Path, flags64, mode)
}

// openat is openat(2) by t. The order of its checks is Linux's
// (do_sys_openat2): the flags (build_open_flags) and the path string (getname)
// first, then the fd (get_unused_fd_flags, EMFILE), then the lookup.
func (k *Kernel) openat(t *Task, dirfd int, path string, flags64 int64, mode uint32) Result {
	flags := int(flags64) & validOpenFlags
	if flags&oPath != 0 {
		// O_PATH beats everything else (build_open_how): open and openat
		// keep only O_PATH_FLAGS, so O_TMPFILE leaves O_DIRECTORY and
		// O_CREAT and O_TRUNC are dropped, not refused.
		flags &= oPath | syscall.O_DIRECTORY | syscall.O_NOFOLLOW | syscall.O_CLOEXEC
	}
	if e := openArgsErr(path, flags); e != 0 {
		return Fail(e)
	}
	g := t.g
	tbl := g.files
	limit := g.nofile.Load()
	cloexec := flags&syscall.O_CLOEXEC != 0
	if tbl.users.Load() == 1 {
		// The table's one user is this thread: nobody can take the free fd
		// before it is filled, so it is found once.
		fd := tbl.firstFree(0)
		if int64(fd) >= limit {
			return Fail(syscall.EMFILE)
		}
		f, e := k.openFile(t, dirfd, path, flags, mode)
		if e != 0 {
			return Fail(e)
		}
		tbl.place(fd, 0, f, cloexec)
		return Result{Ret: int64(fd)}
	}
	if !tbl.hasFree(limit) {
		return Fail(syscall.EMFILE)
	}
	f, e := k.openFile(t, dirfd, path, flags, mode)
	if e != 0 {
		return Fail(e)
	}
	fd, e := tbl.alloc(f, 0, limit, cloexec)
	if e != 0 {
		f.decRef()
		return Fail(e)
	}
	return Result{Ret: int64(fd)}
}

// openArgsErr is what open refuses before it takes an fd: flags that
// build_open_flags rejects (O_TMPFILE without O_DIRECTORY or without write
// access, O_CREAT with O_DIRECTORY since Linux 6.4), an empty path (ENOENT)
// and one of PATH_MAX bytes or more (ENAMETOOLONG), which getname rejects.
func openArgsErr(path string, flags int) syscall.Errno {
	if flags&oTmpfile != 0 && (flags&syscall.O_DIRECTORY == 0 || flags&syscall.O_ACCMODE == syscall.O_RDONLY) {
		return syscall.EINVAL
	}
	if flags&(syscall.O_CREAT|syscall.O_DIRECTORY) == syscall.O_CREAT|syscall.O_DIRECTORY {
		return syscall.EINVAL
	}
	if path == "" {
		return syscall.ENOENT
	}
	if len(path) >= vfs.MaxPathLen {
		return syscall.ENAMETOOLONG
	}
	return 0
}

// openFile does the path part of open and returns a new description; the
// caller has checked openArgsErr.
func (k *Kernel) openFile(t *Task, dirfd int, path string, flags int, mode uint32) (*File, syscall.Errno) {
	var dir *vfs.Inode
	if isProcPath(path) {
		if f, rest, ok, e := t.procFd(path); ok {
			switch {
			case e != 0:
				return nil, e
			case rest == "" && flags&oNofollowFlag != 0:
				return nil, syscall.ELOOP
			case rest == "":
				return k.reopen(f, flags)
			case f.ino == nil || !f.ino.IsDir():
				return nil, syscall.ENOTDIR
			}
			dir, path = f.ino, rest
		}
	}
	if dir == nil {
		var e syscall.Errno
		if dir, e = t.dirOf(dirfd, path); e != 0 {
			return nil, e
		}
	}
	return k.openFileIn(t, dir, path, flags, mode)
}

// openFileIn is openFile of path relative to dir (or absolute).
func (k *Kernel) openFileIn(t *Task, dir *vfs.Inode, path string, flags int, mode uint32) (*File, syscall.Errno) {
	if flags&oTmpfile != 0 {
		return k.openTmpfile(t, dir, path, flags, mode)
	}
	vflags := flags
	if flags&oPath != 0 {
		vflags = flags & (syscall.O_DIRECTORY | syscall.O_NOFOLLOW | oPath)
	}
	perm := mode & 0o7777 &^ t.g.umask.Load()
	ino, errseq, err := dir.Kernel().OpenSampled(path, vflags, perm)
	if err != nil {
		return nil, errnoOf(err)
	}
	if flags&oDirect != 0 && flags&oPath == 0 && (!ino.IsRegular() || !k.fs.SupportsDirectIO()) {
		return nil, syscall.EINVAL // FMODE_CAN_ODIRECT: regular files of a DIO-capable fs only
	}
	f := newFileFor(t, ino, flags)
	f.errseq = errseq
	if m := ino.Mode() & vfs.S_IFMT; flags&oPath == 0 && m != vfs.S_IFREG && m != vfs.S_IFDIR && m != vfs.S_IFLNK {
		if e := k.openSpecial(f, ino, flags); e != 0 {
			f.decRef()
			return nil, e
		}
	}
	return f, 0
}

// sysClose implements close(2): EBADF for a closed fd; otherwise the fd is freed,
// POSIX locks the process holds on the file are released (whichever fd took them),
// and the description goes with its last reference. The model reports no deferred
// writeback error at close (ext4 does not either).
func (k *Kernel) sysClose(c *Call) Result { return k.close(c.Task, int(c.Args[0])) }

// close is close(2) of fd by t.
func (k *Kernel) close(t *Task, fd int) Result {
	g := t.g
	f := g.files.remove(fd)
	if f == nil {
		return Fail(syscall.EBADF)
	}
	k.closeFile(g, f)
	return Result{}
}

// statMode is the st_mode of what f refers to.
func (f *File) statMode() uint32 {
	if f.special != nil {
		return f.special.Mode()
	}
	return f.ino.Mode()
}

const oNofollowFlag = syscall.O_NOFOLLOW

// procFd recognises the magic links /proc/self/fd/N, /proc/thread-self/fd/N and
// /proc/PID/fd/N (PID the caller's), as programs use them (tar's
// chmod("/proc/self/fd/3"), fexecve, reopening an fd): ok says path starts with
// one, f is the description fd N refers to (ENOENT when N is not open, as Linux's
// lookup of a missing fd entry) and rest what follows the link ("" for none).
func (t *Task) procFd(path string) (f *File, rest string, ok bool, e syscall.Errno) {
	f, ok, e = t.procFdLink(path)
	if !ok || e != 0 {
		return f, "", ok, e
	}
	i := strings.Index(path, "/fd/") + len("/fd/")
	if j := strings.IndexByte(path[i:], '/'); j >= 0 {
		rest = strings.TrimLeft(path[i+j:], "/")
	}
	return f, rest, true, 0
}

// isProcPath reports whether path may name a /proc magic link (see procFd).
func isProcPath(path string) bool { return strings.HasPrefix(path, "/proc/") }

func (t *Task) procFdLink(path string) (f *File, ok bool, e syscall.Errno) {
	rest, found := strings.CutPrefix(path, "/proc/")
	if !found {
		return nil, false, 0
	}
	who, rest, found := strings.Cut(rest, "/")
	if !found {
		return nil, false, 0
	}
	switch who {
	case "self", "thread-self":
	default:
		pid, err := strconv.Atoi(who)
		if err != nil || (pid != t.g.pid && pid != t.tid) {
			return nil, false, 0
		}
	}
	num, found := strings.CutPrefix(rest, "fd/")
	if !found {
		return nil, false, 0
	}
	num, _, _ = strings.Cut(num, "/")
	fd, err := strconv.Atoi(num)
	if err != nil || fd < 0 || strconv.Itoa(fd) != num {
		return nil, false, 0
	}
	if f = t.g.files.get(fd); f == nil {
		return nil, true, syscall.ENOENT
	}
	return f, true, 0
}

// reopen opens what description f refers to again, as open("/proc/self/fd/N")
// does: a new description with flags (O_CREAT and O_EXCL have nothing to create;
// O_TRUNC truncates; a directory refuses write access with EISDIR).
func (k *Kernel) reopen(f *File, flags int) (*File, syscall.Errno) {
	if f.ino == nil {
		return newFile(k, nil, f.special, flags), 0
	}
	ino := f.ino
	acc := flags & syscall.O_ACCMODE
	if ino.IsDir() && (acc != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0) {
		return nil, syscall.EISDIR
	}
	if flags&syscall.O_DIRECTORY != 0 && !ino.IsDir() {
		return nil, syscall.ENOTDIR
	}
	if flags&syscall.O_TRUNC != 0 && ino.IsRegular() {
		if err := ino.Truncate(0); err != nil {
			return nil, errnoOf(err)
		}
	}
	nf := newFile(k, ino, nil, flags)
	nf.errseq = ino.SampleErrSeq()
	return nf, 0
}

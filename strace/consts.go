package strace

import (
	"syscall"
)

// Linux x86_64 values of the symbolic constants strace prints in the
// arguments of file-related calls. Signal names (SIGCHLD in clone flags) are
// looked up in signalTable as well.
var constList = []struct {
	name string
	v    int64
}{
	{"NULL", 0},
	// open(2) flags
	{"O_RDONLY", 0}, {"O_WRONLY", 01}, {"O_RDWR", 02}, {"O_ACCMODE", 03},
	{"O_CREAT", 0100}, {"O_EXCL", 0200}, {"O_NOCTTY", 0400}, {"O_TRUNC", 01000},
	{"O_APPEND", 02000}, {"O_NONBLOCK", 04000}, {"O_NDELAY", 04000}, {"O_DSYNC", 010000},
	{"O_ASYNC", 020000}, {"FASYNC", 020000}, {"O_DIRECT", 040000}, {"O_LARGEFILE", 0100000},
	{"O_DIRECTORY", 0200000}, {"O_NOFOLLOW", 0400000}, {"O_NOATIME", 01000000},
	{"O_CLOEXEC", 02000000}, {"__O_SYNC", 04000000}, {"O_SYNC", 04010000}, {"O_RSYNC", 04010000},
	{"O_PATH", 010000000}, {"__O_TMPFILE", 020000000}, {"O_TMPFILE", 020200000},
	// *at(2)
	{"AT_FDCWD", -100}, {"AT_SYMLINK_NOFOLLOW", 0x100}, {"AT_REMOVEDIR", 0x200}, {"AT_EACCESS", 0x200},
	{"AT_SYMLINK_FOLLOW", 0x400}, {"AT_NO_AUTOMOUNT", 0x800}, {"AT_EMPTY_PATH", 0x1000},
	{"AT_STATX_SYNC_AS_STAT", 0}, {"AT_STATX_FORCE_SYNC", 0x2000}, {"AT_STATX_DONT_SYNC", 0x4000},
	{"AT_RECURSIVE", 0x8000},
	// splice(2), tee(2), vmsplice(2)
	{"SPLICE_F_MOVE", 0x1}, {"SPLICE_F_NONBLOCK", 0x2}, {"SPLICE_F_MORE", 0x4}, {"SPLICE_F_GIFT", 0x8},
	// memfd_create(2)
	{"MFD_CLOEXEC", 0x1}, {"MFD_ALLOW_SEALING", 0x2}, {"MFD_HUGETLB", 0x4}, {"MFD_NOEXEC_SEAL", 0x8}, {"MFD_EXEC", 0x10},
	// openat2(2)
	{"RESOLVE_NO_XDEV", 0x01}, {"RESOLVE_NO_MAGICLINKS", 0x02}, {"RESOLVE_NO_SYMLINKS", 0x04},
	{"RESOLVE_BENEATH", 0x08}, {"RESOLVE_IN_ROOT", 0x10}, {"RESOLVE_CACHED", 0x20},
	// lseek(2)
	{"SEEK_SET", 0}, {"SEEK_CUR", 1}, {"SEEK_END", 2}, {"SEEK_DATA", 3}, {"SEEK_HOLE", 4},
	// fallocate(2)
	{"FALLOC_FL_KEEP_SIZE", 0x01}, {"FALLOC_FL_PUNCH_HOLE", 0x02}, {"FALLOC_FL_NO_HIDE_STALE", 0x04},
	{"FALLOC_FL_COLLAPSE_RANGE", 0x08}, {"FALLOC_FL_ZERO_RANGE", 0x10}, {"FALLOC_FL_INSERT_RANGE", 0x20},
	{"FALLOC_FL_UNSHARE_RANGE", 0x40},
	// fcntl(2)
	{"F_DUPFD", 0}, {"F_GETFD", 1}, {"F_SETFD", 2}, {"F_GETFL", 3}, {"F_SETFL", 4},
	{"F_GETLK", 5}, {"F_SETLK", 6}, {"F_SETLKW", 7}, {"F_SETOWN", 8}, {"F_GETOWN", 9},
	{"F_SETSIG", 10}, {"F_GETSIG", 11}, {"F_SETOWN_EX", 15}, {"F_GETOWN_EX", 16},
	{"F_OFD_GETLK", 36}, {"F_OFD_SETLK", 37}, {"F_OFD_SETLKW", 38},
	{"F_SETLEASE", 1024}, {"F_GETLEASE", 1025}, {"F_NOTIFY", 1026}, {"F_DUPFD_CLOEXEC", 1030},
	{"F_SETPIPE_SZ", 1031}, {"F_GETPIPE_SZ", 1032}, {"F_ADD_SEALS", 1033}, {"F_GET_SEALS", 1034},
	{"FD_CLOEXEC", 1}, {"F_RDLCK", 0}, {"F_WRLCK", 1}, {"F_UNLCK", 2},
	{"F_GET_RW_HINT", 1035}, {"F_SET_RW_HINT", 1036}, {"F_GET_FILE_RW_HINT", 1037}, {"F_SET_FILE_RW_HINT", 1038},
	{"F_SEAL_SEAL", 0x1}, {"F_SEAL_SHRINK", 0x2}, {"F_SEAL_GROW", 0x4}, {"F_SEAL_WRITE", 0x8},
	{"F_SEAL_FUTURE_WRITE", 0x10}, {"F_SEAL_EXEC", 0x20},
	{"DN_ACCESS", 0x1}, {"DN_MODIFY", 0x2}, {"DN_CREATE", 0x4}, {"DN_DELETE", 0x8}, {"DN_RENAME", 0x10},
	{"DN_ATTRIB", 0x20}, {"DN_MULTISHOT", -0x80000000},
	// flock(2)
	{"LOCK_SH", 1}, {"LOCK_EX", 2}, {"LOCK_NB", 4}, {"LOCK_UN", 8},
	// file modes
	{"S_IFMT", 0170000}, {"S_IFSOCK", 0140000}, {"S_IFLNK", 0120000}, {"S_IFREG", 0100000},
	{"S_IFBLK", 060000}, {"S_IFDIR", 040000}, {"S_IFCHR", 020000}, {"S_IFIFO", 010000},
	{"S_ISUID", 04000}, {"S_ISGID", 02000}, {"S_ISVTX", 01000},
	// access(2)
	{"F_OK", 0}, {"X_OK", 1}, {"W_OK", 2}, {"R_OK", 4},
	// renameat2(2)
	{"RENAME_NOREPLACE", 1}, {"RENAME_EXCHANGE", 2}, {"RENAME_WHITEOUT", 4},
	// sync_file_range(2)
	{"SYNC_FILE_RANGE_WAIT_BEFORE", 1}, {"SYNC_FILE_RANGE_WRITE", 2}, {"SYNC_FILE_RANGE_WAIT_AFTER", 4},
	// preadv2/pwritev2
	{"RWF_HIPRI", 1}, {"RWF_DSYNC", 2}, {"RWF_SYNC", 4}, {"RWF_NOWAIT", 8}, {"RWF_APPEND", 0x10},
	// aio
	{"IOCB_CMD_PREAD", 0}, {"IOCB_CMD_PWRITE", 1}, {"IOCB_CMD_FSYNC", 2}, {"IOCB_CMD_FDSYNC", 3},
	{"IOCB_CMD_POLL", 5}, {"IOCB_CMD_NOOP", 6}, {"IOCB_CMD_PREADV", 7}, {"IOCB_CMD_PWRITEV", 8},
	{"IOCB_FLAG_RESFD", 1}, {"IOCB_FLAG_IOPRIO", 2},
	// mmap/mprotect
	{"PROT_NONE", 0}, {"PROT_READ", 1}, {"PROT_WRITE", 2}, {"PROT_EXEC", 4},
	{"MAP_SHARED", 1}, {"MAP_PRIVATE", 2}, {"MAP_SHARED_VALIDATE", 3}, {"MAP_FIXED", 0x10},
	{"MAP_ANONYMOUS", 0x20}, {"MAP_32BIT", 0x40}, {"MAP_GROWSDOWN", 0x100}, {"MAP_DENYWRITE", 0x800},
	{"MAP_EXECUTABLE", 0x1000}, {"MAP_LOCKED", 0x2000}, {"MAP_NORESERVE", 0x4000},
	{"MAP_POPULATE", 0x8000}, {"MAP_NONBLOCK", 0x10000}, {"MAP_STACK", 0x20000},
	{"MAP_HUGETLB", 0x40000}, {"MAP_SYNC", 0x80000}, {"MAP_FIXED_NOREPLACE", 0x100000},
	// getrandom, sockets
	{"GRND_NONBLOCK", 1}, {"GRND_RANDOM", 2}, {"GRND_INSECURE", 4},
	{"SOCK_STREAM", 1}, {"SOCK_DGRAM", 2}, {"SOCK_RAW", 3}, {"SOCK_SEQPACKET", 5},
	{"SOCK_NONBLOCK", 04000}, {"SOCK_CLOEXEC", 02000000},
	{"AF_UNSPEC", 0}, {"AF_UNIX", 1}, {"AF_LOCAL", 1}, {"AF_INET", 2}, {"AF_INET6", 10}, {"AF_NETLINK", 16},
	// posix_fadvise
	{"POSIX_FADV_NORMAL", 0}, {"POSIX_FADV_RANDOM", 1}, {"POSIX_FADV_SEQUENTIAL", 2},
	{"POSIX_FADV_WILLNEED", 3}, {"POSIX_FADV_DONTNEED", 4}, {"POSIX_FADV_NOREUSE", 5},
	// epoll, eventfd, timerfd, inotify-style CLOEXEC aliases
	{"EPOLL_CLOEXEC", 02000000}, {"EFD_CLOEXEC", 02000000}, {"EFD_NONBLOCK", 04000},
	{"EFD_SEMAPHORE", 1}, {"TFD_CLOEXEC", 02000000}, {"TFD_NONBLOCK", 04000},
	{"SFD_CLOEXEC", 02000000}, {"SFD_NONBLOCK", 04000},
	// clone
	{"CLONE_VM", 0x100}, {"CLONE_FS", 0x200}, {"CLONE_FILES", 0x400}, {"CLONE_SIGHAND", 0x800},
	{"CLONE_PIDFD", 0x1000}, {"CLONE_PTRACE", 0x2000}, {"CLONE_VFORK", 0x4000}, {"CLONE_PARENT", 0x8000},
	{"CLONE_THREAD", 0x10000}, {"CLONE_NEWNS", 0x20000}, {"CLONE_SYSVSEM", 0x40000},
	{"CLONE_SETTLS", 0x80000}, {"CLONE_PARENT_SETTID", 0x100000}, {"CLONE_CHILD_CLEARTID", 0x200000},
	{"CLONE_DETACHED", 0x400000}, {"CLONE_UNTRACED", 0x800000}, {"CLONE_CHILD_SETTID", 0x1000000},
	// wait4
	{"WNOHANG", 1}, {"WUNTRACED", 2}, {"WSTOPPED", 2}, {"WEXITED", 4}, {"WCONTINUED", 8},
	{"WNOWAIT", 0x1000000}, {"__WNOTHREAD", 0x20000000}, {"__WALL", 0x40000000}, {"__WCLONE", -0x80000000},
	// sigprocmask
	{"SIG_BLOCK", 0}, {"SIG_UNBLOCK", 1}, {"SIG_SETMASK", 2}, {"SIG_DFL", 0}, {"SIG_IGN", 1},
	// prlimit
	{"RLIMIT_CPU", 0}, {"RLIMIT_FSIZE", 1}, {"RLIMIT_DATA", 2}, {"RLIMIT_STACK", 3}, {"RLIMIT_CORE", 4},
	{"RLIMIT_RSS", 5}, {"RLIMIT_NPROC", 6}, {"RLIMIT_NOFILE", 7}, {"RLIMIT_MEMLOCK", 8}, {"RLIMIT_AS", 9},
	{"RLIM64_INFINITY", -1}, {"RLIM_INFINITY", -1},
	// setxattr, msync
	{"XATTR_CREATE", 1}, {"XATTR_REPLACE", 2},
	{"MS_ASYNC", 1}, {"MS_INVALIDATE", 2}, {"MS_SYNC", 4},
}

var (
	constByName map[string]int64
	errnoByName map[string]int // index into errnoTable
	errnoByNum  map[int]int    // index into errnoTable (first name wins)
)

func init() {
	constByName = make(map[string]int64, len(constList)+len(signalTable))
	for _, s := range signalTable {
		constByName[s.name] = int64(s.num)
	}
	for _, c := range constList {
		constByName[c.name] = c.v
	}
	learnTableNames()
	errnoByName = make(map[string]int, len(errnoTable))
	errnoByNum = make(map[int]int, len(errnoTable))
	for i, e := range errnoTable {
		errnoByName[e.name] = i
		if _, ok := errnoByNum[e.num]; !ok {
			errnoByNum[e.num] = i
		}
	}
}

// constValue returns the Linux x86_64 value of a symbolic constant.
func constValue(name []byte) (int64, bool) {
	v, ok := constByName[string(name)]
	return v, ok
}

// ConstValue returns the Linux x86_64 value of a symbolic constant that
// strace prints (O_CLOEXEC, SEEK_HOLE, AT_FDCWD, FALLOC_FL_PUNCH_HOLE,
// SIGCHLD, ...).
func ConstValue(name string) (int64, bool) {
	v, ok := constByName[name]
	return v, ok
}

// ErrnoByName returns the Linux x86_64 errno called name ("ENOENT",
// "ERESTARTSYS").
func ErrnoByName(name string) (syscall.Errno, bool) {
	i, ok := errnoByName[name]
	if !ok {
		return 0, false
	}
	return syscall.Errno(errnoTable[i].num), true
}

// ErrnoName returns the Linux name of e ("ENOENT") or "".
func ErrnoName(e syscall.Errno) string {
	if i, ok := errnoByNum[int(e)]; ok {
		return errnoTable[i].name
	}
	return ""
}

// ErrnoDesc returns the strerror(3) text strace prints for e ("No such file
// or directory") or "".
func ErrnoDesc(e syscall.Errno) string {
	if i, ok := errnoByNum[int(e)]; ok {
		return errnoTable[i].desc
	}
	return ""
}

// errnoLookup returns the table's copy of name (so no allocation) and number.
func errnoLookup(name []byte) (string, syscall.Errno, bool) {
	i, ok := errnoByName[string(name)]
	if !ok {
		return "", 0, false
	}
	return errnoTable[i].name, syscall.Errno(errnoTable[i].num), true
}

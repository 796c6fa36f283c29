package sim

import (
	"strconv"
	"sync"
)

// Sysno is a Linux x86-64 system call number (arch/x86/entry/syscalls/syscall_64.tbl).
// The constants SYS_READ ... are generated in zsysno_amd64.go from golang.org/x/sys/unix;
// every name strace prints for an x86-64 process has one.
type Sysno uint32

// String returns the name strace prints ("pread64", "newfstatat"), or "syscall_NNN"
// for a number Linux x86-64 does not define.
func (s Sysno) String() string {
	if int(s) < len(sysnoNames) && sysnoNames[s] != "" {
		return sysnoNames[s]
	}
	return "syscall_" + strconv.Itoa(int(s))
}

var (
	byNameOnce sync.Once
	byName     map[string]Sysno
)

// SysnoByName maps a name as strace prints it ("openat", "pread64", "_llseek" is not
// x86-64 and is not found) to its number.
func SysnoByName(name string) (Sysno, bool) {
	byNameOnce.Do(func() {
		byName = make(map[string]Sysno, len(sysnoNames))
		for i, n := range sysnoNames {
			if n != "" {
				byName[n] = Sysno(i)
			}
		}
	})
	s, ok := byName[name]
	return s, ok
}

// Support says how much of a syscall the model implements.
type Support uint8

const (
	// NotModelled: the call is accepted and returns 0 with no effect (brk, futex,
	// sockets, signals...). Callers count these and report them by name.
	NotModelled Support = iota
	// Partial: the call is modelled but some of its behaviour is not (see the note).
	Partial
	// Supported: the call is modelled with Linux's return values and errnos on every
	// path the model can reach.
	Supported
)

func (s Support) String() string {
	switch s {
	case Supported:
		return "supported"
	case Partial:
		return "partial"
	}
	return "not modelled"
}

// SyscallInfo is one row of the support table.
type SyscallInfo struct {
	Nr      Sysno
	Name    string
	Support Support
	Note    string
}

// support is the table of modelled syscalls; every other number is NotModelled.
// It doubles as the index of this package: the file that implements each family is
// named in the note's prefix-free form sys_<family>.go.
var support = map[Sysno]struct {
	s    Support
	note string
}{
	SYS_READ:              {Supported, "sys_read_write.go; special files (pipes, sockets) answer as told"},
	SYS_WRITE:             {Supported, "sys_read_write.go; RLIMIT_FSIZE/SIGXFSZ not modelled"},
	SYS_PREAD64:           {Supported, "sys_read_write.go"},
	SYS_PWRITE64:          {Supported, "sys_read_write.go; O_APPEND appends and keeps the offset, as Linux"},
	SYS_READV:             {Supported, "sys_read_write.go; EINVAL beyond UIO_MAXIOV (1024) iovecs"},
	SYS_WRITEV:            {Supported, "sys_read_write.go"},
	SYS_PREADV:            {Supported, "sys_read_write.go"},
	SYS_PWRITEV:           {Supported, "sys_read_write.go"},
	SYS_PREADV2:           {Supported, "sys_read_write.go; RWF_* checked as ext4 does; offset -1 uses the file offset"},
	SYS_PWRITEV2:          {Supported, "sys_read_write.go; RWF_DSYNC/SYNC/APPEND/NOAPPEND modelled, the rest checked as ext4 does"},
	SYS_OPEN:              {Supported, "sys_open.go; uid 0 (no permission checks), O_TMPFILE (sys_tmpfile.go), O_PATH as an fd that can neither read nor write"},
	SYS_OPENAT:            {Supported, "sys_open.go; as open"},
	SYS_CREAT:             {Supported, "sys_open.go"},
	SYS_CLOSE:             {Supported, "sys_open.go; releases POSIX locks of the file held by the process"},
	SYS_LSEEK:             {Supported, "sys_seek.go; SEEK_SET/CUR/END/DATA/HOLE; directories as ext4 htree (EOF = LLONG_MAX)"},
	SYS_FCNTL:             {Partial, "sys_fcntl.go; FD, FL, DUPFD, record and OFD locks; leases, owners, signals, seals, pipe sizes accepted as no-ops"},
	SYS_FLOCK:             {Supported, "sys_fcntl.go"},
	SYS_DUP:               {Supported, "sys_dup.go"},
	SYS_DUP2:              {Supported, "sys_dup.go"},
	SYS_DUP3:              {Supported, "sys_dup.go"},
	SYS_FSYNC:             {Supported, "sys_sync.go; writeback errors reported once per open file description"},
	SYS_FDATASYNC:         {Supported, "sys_sync.go"},
	SYS_SYNC:              {Supported, "sys_sync.go"},
	SYS_SYNCFS:            {Supported, "sys_sync.go; one file system per kernel"},
	SYS_SYNC_FILE_RANGE:   {Partial, "sys_sync.go; WAIT_BEFORE/WAIT_AFTER are implied: the model's writeback is synchronous"},
	SYS_FTRUNCATE:         {Supported, "sys_sync.go"},
	SYS_TRUNCATE:          {Supported, "sys_sync.go"},
	SYS_FALLOCATE:         {Supported, "sys_sync.go; modes 0, KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE, ZERO_RANGE[|KEEP_SIZE], COLLAPSE_RANGE, INSERT_RANGE"},
	SYS_FSTAT:             {Supported, "sys_stat.go"},
	SYS_STAT:              {Supported, "sys_stat.go"},
	SYS_LSTAT:             {Supported, "sys_stat.go"},
	SYS_NEWFSTATAT:        {Supported, "sys_stat.go; AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW"},
	SYS_STATX:             {Partial, "sys_stat.go; no btime, no attributes, no DIO alignment fields"},
	SYS_ACCESS:            {Supported, "sys_stat.go; as uid 0: R/W always granted, X when some x bit is set"},
	SYS_FACCESSAT:         {Supported, "sys_stat.go"},
	SYS_FACCESSAT2:        {Supported, "sys_stat.go"},
	SYS_UNLINK:            {Supported, "sys_namespace.go"},
	SYS_UNLINKAT:          {Supported, "sys_namespace.go"},
	SYS_RENAME:            {Supported, "sys_namespace.go"},
	SYS_RENAMEAT:          {Supported, "sys_namespace.go"},
	SYS_RENAMEAT2:         {Partial, "sys_namespace.go; RENAME_WHITEOUT → EINVAL"},
	SYS_LINK:              {Supported, "sys_namespace.go"},
	SYS_LINKAT:            {Supported, "sys_namespace.go; AT_EMPTY_PATH as root (CAP_DAC_READ_SEARCH), /proc/self/fd/N with AT_SYMLINK_FOLLOW"},
	SYS_SYMLINK:           {Supported, "sys_namespace.go"},
	SYS_SYMLINKAT:         {Supported, "sys_namespace.go"},
	SYS_READLINK:          {Supported, "sys_namespace.go"},
	SYS_READLINKAT:        {Supported, "sys_namespace.go"},
	SYS_MKDIR:             {Supported, "sys_namespace.go"},
	SYS_MKDIRAT:           {Supported, "sys_namespace.go"},
	SYS_RMDIR:             {Supported, "sys_namespace.go"},
	SYS_GETDENTS64:        {Supported, "sys_namespace.go; entries in the model's order (., .., then by name); d_off = index, LLONG_MAX at the end as ext4"},
	SYS_GETDENTS:          {Partial, "sys_namespace.go; encoded as getdents64 (linux_dirent is not modelled)"},
	SYS_CHDIR:             {Supported, "sys_namespace.go"},
	SYS_FCHDIR:            {Supported, "sys_namespace.go"},
	SYS_GETCWD:            {Supported, "sys_namespace.go"},
	SYS_UMASK:             {Supported, "sys_namespace.go"},
	SYS_CHMOD:             {Supported, "sys_namespace.go"},
	SYS_FCHMOD:            {Supported, "sys_namespace.go"},
	SYS_FCHMODAT:          {Supported, "sys_namespace.go"},
	SYS_CHOWN:             {Supported, "sys_namespace.go"},
	SYS_FCHOWN:            {Supported, "sys_namespace.go"},
	SYS_LCHOWN:            {Supported, "sys_namespace.go"},
	SYS_FCHOWNAT:          {Supported, "sys_namespace.go"},
	SYS_UTIMENSAT:         {Supported, "sys_namespace.go; a NULL path (futimens) is the fd itself, as do_utimes_fd"},
	SYS_MMAP:              {Partial, "sys_mmap.go; file mappings only; stores into a shared mapping reach the file at msync/munmap"},
	SYS_MUNMAP:            {Partial, "sys_mmap.go"},
	SYS_MSYNC:             {Partial, "sys_mmap.go"},
	SYS_IO_SETUP:          {Supported, "sys_aio.go"},
	SYS_IO_DESTROY:        {Supported, "sys_aio.go"},
	SYS_IO_SUBMIT:         {Partial, "sys_aio.go; each iocb completes at submit; RESFD/eventfd not modelled"},
	SYS_IO_GETEVENTS:      {Partial, "sys_aio.go; never waits: returns what is complete even below min_nr"},
	SYS_IO_PGETEVENTS:     {Partial, "sys_aio.go; as io_getevents, signal mask ignored"},
	SYS_IO_CANCEL:         {Partial, "sys_aio.go; always EINVAL: every iocb has completed"},
	SYS_FORK:              {Supported, "task.go"},
	SYS_VFORK:             {Supported, "task.go; as fork"},
	SYS_CLONE:             {Partial, "task.go; CLONE_THREAD makes a thread, CLONE_FILES is implied for threads only"},
	SYS_CLONE3:            {Partial, "task.go; as clone with flags in Args[0]"},
	SYS_EXECVE:            {Partial, "task.go; closes FD_CLOEXEC descriptors; no program is loaded"},
	SYS_EXECVEAT:          {Partial, "task.go; as execve"},
	SYS_EXIT:              {Supported, "task.go"},
	SYS_EXIT_GROUP:        {Supported, "task.go"},
	SYS_GETPID:            {Supported, "task.go"},
	SYS_GETTID:            {Supported, "task.go"},
	SYS_CLOSE_RANGE:       {Partial, "sys_dup.go; CLOSE_RANGE_CLOEXEC supported, UNSHARE ignored"},
	SYS_FADVISE64:         {Partial, "sys_sync.go; advice validated; DONTNEED starts writeback (extent tree only), the rest no effect"},
	SYS_READAHEAD:         {Partial, "sys_sync.go; validated, no effect"},
	SYS_GETRLIMIT:         {Partial, "task.go; RLIMIT_NOFILE only (others 0)"},
	SYS_SETRLIMIT:         {Partial, "task.go; RLIMIT_NOFILE only"},
	SYS_PRLIMIT64:         {Partial, "task.go; RLIMIT_NOFILE of the caller only"},
	SYS_COPY_FILE_RANGE:   {Partial, "sys_copy.go: copies through the page cache; no reflink, no cross-file-system EXDEV"},
	SYS_SENDFILE:          {Supported, "sys_copy.go"},
	SYS_SPLICE:            {NotModelled, ""},
	SYS_OPENAT2:           {NotModelled, ""},
	SYS_MKNOD:             {NotModelled, ""},
	SYS_MKNODAT:           {NotModelled, ""},
	SYS_STATFS:            {NotModelled, ""},
	SYS_FSTATFS:           {NotModelled, ""},
	SYS_IOCTL:             {NotModelled, ""},
	SYS_GETXATTR:          {NotModelled, ""},
	SYS_SETXATTR:          {Partial, acl},
	SYS_LSETXATTR:         {Partial, acl},
	SYS_REMOVEXATTR:       {Partial, acl},
	SYS_LREMOVEXATTR:      {Partial, acl},
	SYS_FREMOVEXATTR:      {Partial, acl},
	SYS_FGETXATTR:         {NotModelled, ""},
	SYS_FSETXATTR:         {Partial, acl},
	SYS_LGETXATTR:         {NotModelled, ""},
	SYS_LISTXATTR:         {NotModelled, ""},
	SYS_INOTIFY_ADD_WATCH: {NotModelled, ""},
}

// acl is the support note of the xattr calls that sys_xattr.go models.
const acl = "sys_xattr.go; POSIX access ACLs set the permission bits, default ACLs are checked but not applied to new files, other names EOPNOTSUPP"

// SupportOf returns how much of the syscall the model implements, with a note.
func SupportOf(nr Sysno) (Support, string) {
	if e, ok := support[nr]; ok {
		return e.s, e.note
	}
	return NotModelled, ""
}

// Syscalls returns the support table for every x86-64 syscall, in number order.
func Syscalls() []SyscallInfo {
	out := make([]SyscallInfo, 0, len(sysnoNames))
	for i, n := range sysnoNames {
		if n == "" {
			continue
		}
		s, note := SupportOf(Sysno(i))
		out = append(out, SyscallInfo{Nr: Sysno(i), Name: n, Support: s, Note: note})
	}
	return out
}

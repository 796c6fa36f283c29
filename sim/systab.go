package sim

//go:generate go test -run TestDispatchGenerated -update-dispatch

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// The syscall table: one row per syscall the model implements or that replay and
// the tracer must know the shape of, with its handler, its support level and note,
// and the layout of its arguments. Everything that needs to know "what does this
// syscall take and touch" reads it:
//
//   - Kernel.dispatch calls the row's handler (no handler: accepted, no effect);
//     it is generated from the rows into zdispatch.go (go generate), a switch the
//     compiler can see through: through the table's function values every Call
//     would escape to the heap. The FastPath rows (read, write, pread64, lseek)
//     have a switch of their own, first. The facade has the one other route:
//     bound to the kernel itself, with nothing between that could see a Call,
//     Process calls the handlers of its hottest calls directly, sparing the
//     building and dispatch of a Call (Process.direct states when);
//   - SupportOf and Syscalls (`iosim syscalls`) give the row's support and note;
//   - replay rebuilds a Call from an strace line slot by slot from Args, and finds
//     the fds, dirfds and new fds of a call from it;
//   - the tracer (interposer.Trace) prints a Call slot by slot from Args.
//
// Calls whose arguments no layout can say (fcntl's third argument depends on the
// command, utimensat's times, xattr names and values, mmap, the AIO structures,
// prlimit64, copy_file_range and sendfile's offset pointers) carry the Custom
// property: replay decodes them by hand, one case each (buildCustom); the tracer
// prints fcntl by hand, and the slots of the others that a layout cannot say
// (times, values, structures, offset pointers) one case each (appendCustomSlot).
// TestSyscallTableConsistent (and the tests of replay and interposer that range
// over this table) fail when a row and one of its readers disagree.

// ArgKind says what one argument slot of a syscall holds. A slot's index is its
// position in the C prototype, which is also its position in strace's output and in
// Call.Args.
type ArgKind uint8

// Argument kinds.
const (
	// ArgNone: no argument in this slot.
	ArgNone ArgKind = iota
	// ArgInt: an integer passed as it is (a length, a uid, an access mode, a
	// command).
	ArgInt
	// ArgFd: an fd the call operates on. A call may have two (sendfile,
	// copy_file_range).
	ArgFd
	// ArgNewFd: the fd number a call makes refer to something (dup2/dup3's newfd).
	ArgNewFd
	// ArgDirfd: an "at" directory fd, which resolves the path in the next slot.
	ArgDirfd
	// ArgPath: the first path, carried in Call.Path (the slot stays zero).
	ArgPath
	// ArgPath2: the second path, carried in Call.Path2.
	ArgPath2
	// ArgInBuf: a buffer the call reads (write's data), carried in Call.Buf; its
	// length is the ArgCount slot.
	ArgInBuf
	// ArgOutBuf: a buffer the call fills (read's data), carried in Call.Buf.
	ArgOutBuf
	// ArgInIov: an iovec array the call reads, carried in Call.Iov; the ArgCount
	// slot is the number of iovecs.
	ArgInIov
	// ArgOutIov: an iovec array the call fills, carried in Call.Iov.
	ArgOutIov
	// ArgCount: the length of the call's buffer or iovec array.
	ArgCount
	// ArgOffset: a file offset or length in bytes.
	ArgOffset
	// ArgMode: permission bits.
	ArgMode
	// ArgFlags: a flag set or enumeration whose names are Arg.Flags.
	ArgFlags
	// ArgStat: a struct stat the call fills, carried in Call.Obj as *unix.Stat_t.
	ArgStat
	// ArgStatx: a struct statx the call fills, carried in Call.Obj as *unix.Statx_t.
	ArgStatx
	// ArgPtr: another pointer, decoded by hand (see the Custom property).
	ArgPtr
	// ArgAddr: a memory address or an AIO context passed as a number, printed in
	// hexadecimal (NULL for 0) as strace does.
	ArgAddr
)

// Arg is the layout of one argument slot.
type Arg struct {
	Kind ArgKind
	// Flags names the values of an ArgFlags slot.
	Flags *FlagSet
	// Optional: strace omits the argument when it does not matter (open's mode
	// without O_CREAT or __O_TMPFILE); a trace without it means 0.
	Optional bool
	// Hex: strace prints the integer in hexadecimal (mmap's offset).
	Hex bool
}

// FlagName is one name of a flag set and its Linux x86-64 value.
type FlagName struct {
	Value int64
	Name  string
}

// FlagStyle says how strace prints a flag set.
type FlagStyle uint8

// Flag styles.
const (
	// FlagsCombined: names joined with '|', unknown bits as 0x..., 0 as "0".
	FlagsCombined FlagStyle = iota
	// FlagsOpen: the access mode (O_RDONLY, O_WRONLY, O_RDWR) first, then as
	// FlagsCombined.
	FlagsOpen
	// FlagsOne: a value equal to one name is that name, anything else a number
	// (Base 10 or 16).
	FlagsOne
)

// FlagSet is the names one flag argument takes.
type FlagSet struct {
	Names []FlagName
	Style FlagStyle
	Base  int    // FlagsOne: the base of a value that is not a name
	Zero  string // FlagsCombined: the name of 0 ("0" when empty)
}

// RetKind says what a successful call returns.
type RetKind uint8

// Result kinds.
const (
	// RetZero: 0.
	RetZero RetKind = iota
	// RetFd: a new fd, the lowest free one.
	RetFd
	// RetNewFd: the fd of the call's ArgNewFd slot.
	RetNewFd
	// RetFdOrValue: a new fd for some commands (fcntl F_DUPFD), a value for others.
	RetFdOrValue
	// RetCount: a byte count (or an entry count).
	RetCount
	// RetOffset: a file offset.
	RetOffset
	// RetValue: another value (a pid, a mask, an address).
	RetValue
)

// Prop is a set of properties of a syscall.
type Prop uint32

// Syscall properties.
const (
	// Custom: replay decodes the call and the tracer prints it by hand; Args says
	// only where its fds, dirfds and paths are.
	Custom Prop = 1 << iota
	// Data: the call moves file data; its result is the number of bytes moved.
	Data
	// FdTable: the call works on the fd table itself (close, dup, fcntl), so it
	// reaches the kernel even for an fd that stands for something outside the
	// model.
	FdTable
	// ClosesFd: a successful call can close fds (close, close_range, dup2 and
	// dup3 closing their newfd).
	ClosesFd
	// FastPath: dispatch tries the row first, in a switch of its own (the
	// calls of a program's steady state).
	FastPath
	// Lifecycle: the call creates, transforms or ends a task (fork, clone, execve,
	// exit); replay follows it from the trace's task structure. One of Forks,
	// Execs, EndsGroup goes with it, or none for exit (one thread ends).
	Lifecycle
	// Forks: the call may make a new process with a copy of the fd table (fork,
	// vfork, clone without CLONE_THREAD).
	Forks
	// Execs: the call replaces the program; FD_CLOEXEC descriptors close.
	Execs
	// EndsGroup: the call ends every thread of the process and its fd table.
	EndsGroup
	// SetsNofile: the call may change RLIMIT_NOFILE, the bound of new fds.
	SetsNofile
	// NewFds: a successful call stores two new fds, the lowest free, in an
	// int[2] (Call.Obj *[2]int32): pipe, pipe2, socketpair.
	NewFds

	// The families: what code that treats a kind of call alike asks of a
	// row (TestSyscallFamilies keeps them true to the layouts).

	// Reads: the call reads a file's bytes into the caller's buffers
	// through its fd (read, readv, pread64, preadv, preadv2).
	Reads
	// Writes: the call writes the caller's buffers to a file through its
	// fd (write, writev, pwrite64, pwritev, pwritev2).
	Writes
	// Positional: a Reads or Writes call at the offset of its ArgOffset
	// slot, leaving the file offset alone (pread64, pwrite64, preadv,
	// pwritev; preadv2 and pwritev2, for which -1 there means the file
	// offset, moved).
	Positional
	// SyncsFile: the call makes one file's data, and what reading it back
	// needs, durable (fsync, fdatasync).
	SyncsFile
	// SyncsAll: the call makes everything durable (sync, syncfs).
	SyncsAll
	// Resizes: the call changes a file's size or allocation (truncate,
	// ftruncate, fallocate).
	Resizes
	// AIOWait: the call waits for AIO completions (io_getevents,
	// io_pgetevents, io_destroy).
	AIOWait
)

// PosSlot is the slot of a Positional call's offset.
const PosSlot = 3

// Flag sets of the table.
var (
	// OpenFlags are open(2)'s flags as strace prints them. O_LARGEFILE is the
	// kernel's value on x86-64 (0x8000; x/sys/unix defines it as 0 on amd64).
	OpenFlags = &FlagSet{Style: FlagsOpen, Names: []FlagName{
		{unix.O_CREAT, "O_CREAT"}, {unix.O_EXCL, "O_EXCL"}, {unix.O_NOCTTY, "O_NOCTTY"},
		{unix.O_TRUNC, "O_TRUNC"}, {unix.O_APPEND, "O_APPEND"}, {unix.O_NONBLOCK, "O_NONBLOCK"},
		{unix.O_SYNC, "O_SYNC"}, {unix.O_DSYNC, "O_DSYNC"}, {unix.O_ASYNC, "O_ASYNC"},
		{unix.O_DIRECT, "O_DIRECT"}, {oLargefile, "O_LARGEFILE"},
		{unix.O_DIRECTORY, "O_DIRECTORY"}, {unix.O_NOFOLLOW, "O_NOFOLLOW"},
		{unix.O_NOATIME, "O_NOATIME"}, {unix.O_CLOEXEC, "O_CLOEXEC"}, {unix.O_PATH, "O_PATH"},
		{oTmpfile, "__O_TMPFILE"},
	}}
	whence = &FlagSet{Style: FlagsOne, Base: 10, Names: []FlagName{
		{unix.SEEK_SET, "SEEK_SET"}, {unix.SEEK_CUR, "SEEK_CUR"}, {unix.SEEK_END, "SEEK_END"},
		{unix.SEEK_DATA, "SEEK_DATA"}, {unix.SEEK_HOLE, "SEEK_HOLE"}}}
	statAt = &FlagSet{Style: FlagsOne, Base: 16, Names: []FlagName{
		{unix.AT_EMPTY_PATH, "AT_EMPTY_PATH"}, {unix.AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"}}}
	removeAt = &FlagSet{Style: FlagsOne, Base: 10, Names: []FlagName{{unix.AT_REMOVEDIR, "AT_REMOVEDIR"}}}
	cloexec  = &FlagSet{Style: FlagsOne, Base: 10, Names: []FlagName{{unix.O_CLOEXEC, "O_CLOEXEC"}}}
	nofollow = &FlagSet{Names: []FlagName{
		{unix.AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"}, {unix.AT_EMPTY_PATH, "AT_EMPTY_PATH"}}}
	linkAt = &FlagSet{Names: []FlagName{
		{unix.AT_SYMLINK_FOLLOW, "AT_SYMLINK_FOLLOW"}, {unix.AT_EMPTY_PATH, "AT_EMPTY_PATH"}}}
	accessAt = &FlagSet{Names: []FlagName{
		{unix.AT_EACCESS, "AT_EACCESS"}, {unix.AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"},
		{unix.AT_EMPTY_PATH, "AT_EMPTY_PATH"}}}
	statxAt = &FlagSet{Names: []FlagName{
		{unix.AT_SYMLINK_NOFOLLOW, "AT_SYMLINK_NOFOLLOW"}, {unix.AT_NO_AUTOMOUNT, "AT_NO_AUTOMOUNT"},
		{unix.AT_EMPTY_PATH, "AT_EMPTY_PATH"}, {unix.AT_STATX_FORCE_SYNC, "AT_STATX_FORCE_SYNC"},
		{unix.AT_STATX_DONT_SYNC, "AT_STATX_DONT_SYNC"}}}
	// statxMask: the masks made of others first, as strace prints them.
	statxMask = &FlagSet{Names: []FlagName{
		{unix.STATX_ALL, "STATX_ALL"}, {unix.STATX_BASIC_STATS, "STATX_BASIC_STATS"},
		{unix.STATX_TYPE, "STATX_TYPE"}, {unix.STATX_MODE, "STATX_MODE"}, {unix.STATX_NLINK, "STATX_NLINK"},
		{unix.STATX_UID, "STATX_UID"}, {unix.STATX_GID, "STATX_GID"}, {unix.STATX_ATIME, "STATX_ATIME"},
		{unix.STATX_MTIME, "STATX_MTIME"}, {unix.STATX_CTIME, "STATX_CTIME"}, {unix.STATX_INO, "STATX_INO"},
		{unix.STATX_SIZE, "STATX_SIZE"}, {unix.STATX_BLOCKS, "STATX_BLOCKS"}, {unix.STATX_BTIME, "STATX_BTIME"},
		{unix.STATX_MNT_ID, "STATX_MNT_ID"}, {unix.STATX_DIOALIGN, "STATX_DIOALIGN"},
		{0x4000, "STATX_MNT_ID_UNIQUE"}, {0x8000, "STATX_SUBVOL"}, {0x10000, "STATX_WRITE_ATOMIC"},
		{0x20000, "STATX_DIO_READ_ALIGN"}}}
	rwf = &FlagSet{Names: []FlagName{
		{unix.RWF_HIPRI, "RWF_HIPRI"}, {unix.RWF_DSYNC, "RWF_DSYNC"}, {unix.RWF_SYNC, "RWF_SYNC"},
		{unix.RWF_NOWAIT, "RWF_NOWAIT"}, {unix.RWF_APPEND, "RWF_APPEND"}}}
	lockOps = &FlagSet{Names: []FlagName{
		{unix.LOCK_SH, "LOCK_SH"}, {unix.LOCK_EX, "LOCK_EX"}, {unix.LOCK_NB, "LOCK_NB"}, {unix.LOCK_UN, "LOCK_UN"}}}
	accessModes = &FlagSet{Zero: "F_OK", Names: []FlagName{{unix.R_OK, "R_OK"}, {unix.W_OK, "W_OK"}, {unix.X_OK, "X_OK"}}}
	syncRange   = &FlagSet{Names: []FlagName{
		{syncFileRangeWaitBefore, "SYNC_FILE_RANGE_WAIT_BEFORE"}, {syncFileRangeWrite, "SYNC_FILE_RANGE_WRITE"},
		{syncFileRangeWaitAfter, "SYNC_FILE_RANGE_WAIT_AFTER"}}}
	fallocModes = &FlagSet{Names: []FlagName{
		{unix.FALLOC_FL_KEEP_SIZE, "FALLOC_FL_KEEP_SIZE"}, {unix.FALLOC_FL_PUNCH_HOLE, "FALLOC_FL_PUNCH_HOLE"},
		{unix.FALLOC_FL_NO_HIDE_STALE, "FALLOC_FL_NO_HIDE_STALE"}, {unix.FALLOC_FL_COLLAPSE_RANGE, "FALLOC_FL_COLLAPSE_RANGE"},
		{unix.FALLOC_FL_ZERO_RANGE, "FALLOC_FL_ZERO_RANGE"}, {unix.FALLOC_FL_INSERT_RANGE, "FALLOC_FL_INSERT_RANGE"},
		{unix.FALLOC_FL_UNSHARE_RANGE, "FALLOC_FL_UNSHARE_RANGE"}}}
	renameFlags = &FlagSet{Names: []FlagName{
		{unix.RENAME_NOREPLACE, "RENAME_NOREPLACE"}, {unix.RENAME_EXCHANGE, "RENAME_EXCHANGE"},
		{unix.RENAME_WHITEOUT, "RENAME_WHITEOUT"}}}
	xattrFlags = &FlagSet{Names: []FlagName{{unix.XATTR_CREATE, "XATTR_CREATE"}, {unix.XATTR_REPLACE, "XATTR_REPLACE"}}}
	mmapProt   = &FlagSet{Zero: "PROT_NONE", Names: []FlagName{
		{unix.PROT_READ, "PROT_READ"}, {unix.PROT_WRITE, "PROT_WRITE"}, {unix.PROT_EXEC, "PROT_EXEC"}}}
	// mmapFlags: the mapping type (MAP_SHARED_VALIDATE before the two bits it is
	// made of), then the flags.
	mmapFlags = &FlagSet{Names: []FlagName{
		{unix.MAP_SHARED_VALIDATE, "MAP_SHARED_VALIDATE"}, {unix.MAP_SHARED, "MAP_SHARED"},
		{unix.MAP_PRIVATE, "MAP_PRIVATE"}, {unix.MAP_FIXED, "MAP_FIXED"}, {unix.MAP_ANONYMOUS, "MAP_ANONYMOUS"},
		{unix.MAP_32BIT, "MAP_32BIT"}, {unix.MAP_GROWSDOWN, "MAP_GROWSDOWN"}, {unix.MAP_DENYWRITE, "MAP_DENYWRITE"},
		{unix.MAP_EXECUTABLE, "MAP_EXECUTABLE"}, {unix.MAP_LOCKED, "MAP_LOCKED"}, {unix.MAP_NORESERVE, "MAP_NORESERVE"},
		{unix.MAP_POPULATE, "MAP_POPULATE"}, {unix.MAP_NONBLOCK, "MAP_NONBLOCK"}, {unix.MAP_STACK, "MAP_STACK"},
		{unix.MAP_HUGETLB, "MAP_HUGETLB"}, {unix.MAP_SYNC, "MAP_SYNC"}, {unix.MAP_FIXED_NOREPLACE, "MAP_FIXED_NOREPLACE"}}}
	// ResolveFlags are openat2(2)'s resolve flags, in strace's order.
	ResolveFlags = &FlagSet{Names: []FlagName{
		{unix.RESOLVE_NO_XDEV, "RESOLVE_NO_XDEV"}, {unix.RESOLVE_NO_MAGICLINKS, "RESOLVE_NO_MAGICLINKS"},
		{unix.RESOLVE_NO_SYMLINKS, "RESOLVE_NO_SYMLINKS"}, {unix.RESOLVE_BENEATH, "RESOLVE_BENEATH"},
		{unix.RESOLVE_IN_ROOT, "RESOLVE_IN_ROOT"}, {resolveCached, "RESOLVE_CACHED"}}}
	memfdFlags = &FlagSet{Names: []FlagName{
		{mfdCloexec, "MFD_CLOEXEC"}, {mfdAllowSealing, "MFD_ALLOW_SEALING"}, {mfdHugetlb, "MFD_HUGETLB"},
		{mfdNoexecSeal, "MFD_NOEXEC_SEAL"}, {mfdExec, "MFD_EXEC"}}}
	spliceFlags = &FlagSet{Names: []FlagName{
		{spliceMove, "SPLICE_F_MOVE"}, {spliceNonblock, "SPLICE_F_NONBLOCK"}, {spliceMore, "SPLICE_F_MORE"},
		{spliceGift, "SPLICE_F_GIFT"}}}
	pipeFlags = &FlagSet{Names: []FlagName{
		{unix.O_NONBLOCK, "O_NONBLOCK"}, {unix.O_DIRECT, "O_DIRECT"}, {unix.O_CLOEXEC, "O_CLOEXEC"}}}
	// mknodModes: the file type; the permission bits follow as an octal number.
	mknodModes = &FlagSet{Names: []FlagName{
		{unix.S_IFREG, "S_IFREG"}, {unix.S_IFCHR, "S_IFCHR"}, {unix.S_IFBLK, "S_IFBLK"},
		{unix.S_IFIFO, "S_IFIFO"}, {unix.S_IFSOCK, "S_IFSOCK"}}}
	sockDomains = &FlagSet{Style: FlagsOne, Base: 10, Names: []FlagName{
		{unix.AF_UNIX, "AF_UNIX"}, {unix.AF_INET, "AF_INET"}, {unix.AF_INET6, "AF_INET6"}}}
	// sockTypes: the type (those made of others first), then SOCK_CLOEXEC and SOCK_NONBLOCK.
	sockTypes = &FlagSet{Names: []FlagName{
		{unix.SOCK_SEQPACKET, "SOCK_SEQPACKET"}, {unix.SOCK_RAW, "SOCK_RAW"}, {unix.SOCK_STREAM, "SOCK_STREAM"}, {unix.SOCK_DGRAM, "SOCK_DGRAM"},
		{unix.SOCK_CLOEXEC, "SOCK_CLOEXEC"}, {unix.SOCK_NONBLOCK, "SOCK_NONBLOCK"}}}
	msyncFlags = &FlagSet{Names: []FlagName{
		{unix.MS_ASYNC, "MS_ASYNC"}, {unix.MS_INVALIDATE, "MS_INVALIDATE"}, {unix.MS_SYNC, "MS_SYNC"}}}
	rlimits = &FlagSet{Style: FlagsOne, Base: 10, Names: []FlagName{
		{unix.RLIMIT_CPU, "RLIMIT_CPU"}, {unix.RLIMIT_FSIZE, "RLIMIT_FSIZE"}, {unix.RLIMIT_DATA, "RLIMIT_DATA"},
		{unix.RLIMIT_STACK, "RLIMIT_STACK"}, {unix.RLIMIT_CORE, "RLIMIT_CORE"}, {unix.RLIMIT_RSS, "RLIMIT_RSS"},
		{unix.RLIMIT_NPROC, "RLIMIT_NPROC"}, {unix.RLIMIT_NOFILE, "RLIMIT_NOFILE"},
		{unix.RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK"}, {unix.RLIMIT_AS, "RLIMIT_AS"}}}
)

// Slot layouts, named for the rows below.
var (
	aInt    = Arg{Kind: ArgInt}
	aFd     = Arg{Kind: ArgFd}
	aNewFd  = Arg{Kind: ArgNewFd}
	aDirfd  = Arg{Kind: ArgDirfd}
	aPath   = Arg{Kind: ArgPath}
	aPath2  = Arg{Kind: ArgPath2}
	aIn     = Arg{Kind: ArgInBuf}
	aOut    = Arg{Kind: ArgOutBuf}
	aInIov  = Arg{Kind: ArgInIov}
	aOutIov = Arg{Kind: ArgOutIov}
	aCount  = Arg{Kind: ArgCount}
	aOff    = Arg{Kind: ArgOffset}
	aMode   = Arg{Kind: ArgMode}
	aStat   = Arg{Kind: ArgStat}
	aPtr    = Arg{Kind: ArgPtr}
	aAddr   = Arg{Kind: ArgAddr}
	aOpen   = Arg{Kind: ArgFlags, Flags: OpenFlags}
	aOptMod = Arg{Kind: ArgMode, Optional: true}
)

func flags(s *FlagSet) Arg { return Arg{Kind: ArgFlags, Flags: s} }

func args(a ...Arg) []Arg { return append([]Arg{}, a...) }

// row is one entry of the table as written below.
type row struct {
	nr      Sysno
	handler func(k *Kernel, c *Call) Result
	support Support
	note    string
	args    []Arg
	ret     RetKind
	props   Prop
}

// rows is the syscall table. A row without a handler is NotModelled: it is here for
// its layout (the fds and results replay and the interposers must follow).
var rows = []row{
	// sys_read_write.go
	{SYS_READ, (*Kernel).sysRead, Supported, "sys_read_write.go; pipes and FIFOs as sys_pipe.go; objects not modelled (sockets) answer as told",
		args(aFd, aOut, aCount), RetCount, Data | FastPath | Reads},
	{SYS_WRITE, (*Kernel).sysWrite, Supported, "sys_read_write.go; RLIMIT_FSIZE/SIGXFSZ not modelled",
		args(aFd, aIn, aCount), RetCount, Data | FastPath | Writes},
	{SYS_PREAD64, (*Kernel).sysPread, Supported, "sys_read_write.go",
		args(aFd, aOut, aCount, aOff), RetCount, Data | FastPath | Reads | Positional},
	{SYS_PWRITE64, (*Kernel).sysPwrite, Supported, "sys_read_write.go; O_APPEND appends and keeps the offset, as Linux",
		args(aFd, aIn, aCount, aOff), RetCount, Data | Writes | Positional},
	{SYS_READV, func(k *Kernel, c *Call) Result { return k.sysReadv(c, false, 0, 0) },
		Supported, "sys_read_write.go; EINVAL beyond UIO_MAXIOV (1024) iovecs",
		args(aFd, aOutIov, aCount), RetCount, Data | Reads},
	{SYS_WRITEV, func(k *Kernel, c *Call) Result { return k.sysWritev(c, false, 0, 0) },
		Supported, "sys_read_write.go", args(aFd, aInIov, aCount), RetCount, Data | Writes},
	{SYS_PREADV, func(k *Kernel, c *Call) Result { return k.sysReadv(c, true, c.Args[3], 0) },
		Supported, "sys_read_write.go", args(aFd, aOutIov, aCount, aOff), RetCount, Data | Reads | Positional},
	{SYS_PWRITEV, func(k *Kernel, c *Call) Result { return k.sysWritev(c, true, c.Args[3], 0) },
		Supported, "sys_read_write.go", args(aFd, aInIov, aCount, aOff), RetCount, Data | Writes | Positional},
	{SYS_PREADV2, func(k *Kernel, c *Call) Result { return k.sysReadv(c, c.Args[3] != -1, c.Args[3], c.Args[4]) },
		Supported, "sys_read_write.go; RWF_* checked as ext4 does; offset -1 uses the file offset",
		args(aFd, aOutIov, aCount, aOff, flags(rwf)), RetCount, Data | Reads | Positional},
	{SYS_PWRITEV2, func(k *Kernel, c *Call) Result { return k.sysWritev(c, c.Args[3] != -1, c.Args[3], c.Args[4]) },
		Supported, "sys_read_write.go; RWF_DSYNC/SYNC/APPEND/NOAPPEND modelled, the rest checked as ext4 does",
		args(aFd, aInIov, aCount, aOff, flags(rwf)), RetCount, Data | Writes | Positional},
	// sys_copy.go: offsets are loff_t pointers (NullOffset for NULL)
	{SYS_COPY_FILE_RANGE, (*Kernel).sysCopyFileRange,
		Partial, "sys_copy.go: copies through the page cache; no reflink, no cross-file-system EXDEV",
		args(aFd, aPtr, aFd, aPtr, aInt, aInt), RetCount, Data | Custom},
	{SYS_SENDFILE, (*Kernel).sysSendfile, Supported, "sys_copy.go",
		args(aFd, aFd, aPtr, aInt), RetCount, Data | Custom},
	// sys_splice.go: a pipe on one side at least; offsets as copy_file_range's
	{SYS_SPLICE, (*Kernel).sysSplice, Partial, "sys_splice.go; an offset given is not written back",
		args(aFd, aPtr, aFd, aPtr, aInt, flags(spliceFlags)), RetCount, Data | Custom},
	{SYS_TEE, (*Kernel).sysTee, Supported, "sys_splice.go", args(aFd, aFd, aInt, flags(spliceFlags)), RetCount, Data},
	{SYS_VMSPLICE, (*Kernel).sysVmsplice, Supported, "sys_splice.go; as writev or readv on the pipe",
		args(aFd, aInIov, aCount, flags(spliceFlags)), RetCount, Data},

	// sys_open.go
	{SYS_OPEN, func(k *Kernel, c *Call) Result { return k.sysOpenat(c, atFdcwd, c.Args[1], uint32(c.Args[2])) },
		Supported, "sys_open.go; uid 0 (no permission checks), O_TMPFILE (sys_tmpfile.go), O_PATH as an fd that can neither read nor write",
		args(aPath, aOpen, aOptMod), RetFd, 0},
	{SYS_OPENAT, func(k *Kernel, c *Call) Result {
		return k.sysOpenat(c, int(c.Args[0]), c.Args[2], uint32(c.Args[3]))
	}, Supported, "sys_open.go; as open", args(aDirfd, aPath, aOpen, aOptMod), RetFd, 0},
	{SYS_CREAT, func(k *Kernel, c *Call) Result {
		return k.sysOpenat(c, atFdcwd, syscall.O_CREAT|syscall.O_WRONLY|syscall.O_TRUNC, uint32(c.Args[1]))
	}, Supported, "sys_open.go", args(aPath, aMode), RetFd, 0},
	{SYS_CLOSE, (*Kernel).sysClose, Supported, "sys_open.go; releases POSIX locks of the file held by the process",
		args(aFd), RetZero, FdTable | ClosesFd},
	// openat2: the flags, mode and resolve flags are a struct open_how (Obj *unix.OpenHow)
	{SYS_OPENAT2, (*Kernel).sysOpenat2, Supported, "sys_openat2.go; RESOLVE_* as Linux for one file system (NO_XDEV: /proc only); every lookup is cached",
		args(aDirfd, aPath, aPtr, aInt), RetFd, Custom},

	// sys_seek.go
	{SYS_LSEEK, (*Kernel).sysLseek, Supported, "sys_seek.go; SEEK_SET/CUR/END/DATA/HOLE; directories as ext4 htree (EOF = LLONG_MAX)",
		args(aFd, aOff, flags(whence)), RetOffset, FastPath},

	// sys_fcntl.go: the third argument is an int, a flag set or a struct flock by command
	{SYS_FCNTL, (*Kernel).sysFcntl, Partial, "sys_fcntl.go; FD, FL, DUPFD, record and OFD locks, pipe sizes; leases, owners, signals, seals accepted as no-ops",
		args(aFd, aInt, aPtr), RetFdOrValue, FdTable | Custom},
	{SYS_FLOCK, (*Kernel).sysFlock, Supported, "sys_fcntl.go", args(aFd, flags(lockOps)), RetZero, 0},

	// sys_dup.go
	{SYS_DUP, (*Kernel).sysDup, Supported, "sys_dup.go", args(aFd), RetFd, FdTable},
	{SYS_DUP2, (*Kernel).sysDup2, Supported, "sys_dup.go", args(aFd, aNewFd), RetNewFd, FdTable | ClosesFd},
	{SYS_DUP3, (*Kernel).sysDup3, Supported, "sys_dup.go", args(aFd, aNewFd, flags(cloexec)), RetNewFd, FdTable | ClosesFd},
	{SYS_CLOSE_RANGE, (*Kernel).sysCloseRange, Partial, "sys_dup.go; CLOSE_RANGE_CLOEXEC supported, UNSHARE ignored",
		args(aInt, aInt, aInt), RetZero, ClosesFd},

	// sys_sync.go
	{SYS_FSYNC, func(k *Kernel, c *Call) Result { return k.sysFsync(c, false) },
		Supported, "sys_sync.go; writeback errors reported once per open file description", args(aFd), RetZero, SyncsFile},
	{SYS_FDATASYNC, func(k *Kernel, c *Call) Result { return k.sysFsync(c, true) },
		Supported, "sys_sync.go", args(aFd), RetZero, SyncsFile},
	{SYS_SYNC, func(k *Kernel, c *Call) Result { _ = k.fs.Sync(); return ok(0) },
		Supported, "sys_sync.go", args(), RetZero, SyncsAll},
	{SYS_SYNCFS, (*Kernel).sysSyncfs, Supported, "sys_sync.go; one file system per kernel", args(aFd), RetZero, SyncsAll},
	{SYS_SYNC_FILE_RANGE, (*Kernel).sysSyncFileRange,
		Partial, "sys_sync.go; WAIT_BEFORE/WAIT_AFTER are implied: the model's writeback is synchronous",
		args(aFd, aOff, aOff, flags(syncRange)), RetZero, 0},
	{SYS_FTRUNCATE, (*Kernel).sysFtruncate, Supported, "sys_sync.go", args(aFd, aOff), RetZero, Resizes},
	{SYS_TRUNCATE, (*Kernel).sysTruncate, Supported, "sys_sync.go", args(aPath, aOff), RetZero, Resizes},
	{SYS_FALLOCATE, (*Kernel).sysFallocate, Supported, "sys_sync.go; modes 0, KEEP_SIZE, PUNCH_HOLE|KEEP_SIZE, ZERO_RANGE[|KEEP_SIZE], COLLAPSE_RANGE, INSERT_RANGE",
		args(aFd, flags(fallocModes), aOff, aOff), RetZero, Resizes},
	{SYS_FADVISE64, (*Kernel).sysFadvise, Partial, "sys_sync.go; advice validated; DONTNEED starts writeback (extent tree only), the rest no effect",
		args(aFd, aOff, aOff, aInt), RetZero, 0},
	{SYS_READAHEAD, (*Kernel).sysReadahead, Partial, "sys_sync.go; validated, no effect",
		args(aFd, aOff, aOff), RetZero, 0},

	// sys_stat.go
	{SYS_FSTAT, (*Kernel).sysFstat, Supported, "sys_stat.go", args(aFd, aStat), RetZero, 0},
	{SYS_STAT, func(k *Kernel, c *Call) Result { return k.sysFstatat(c, atFdcwd, c.Path, 0) },
		Supported, "sys_stat.go", args(aPath, aStat), RetZero, 0},
	{SYS_LSTAT, func(k *Kernel, c *Call) Result { return k.sysFstatat(c, atFdcwd, c.Path, atSymlinkNofollow) },
		Supported, "sys_stat.go", args(aPath, aStat), RetZero, 0},
	{SYS_NEWFSTATAT, func(k *Kernel, c *Call) Result { return k.sysFstatat(c, int(c.Args[0]), c.Path, int(c.Args[3])) },
		Supported, "sys_stat.go; AT_EMPTY_PATH, AT_SYMLINK_NOFOLLOW", args(aDirfd, aPath, aStat, flags(statAt)), RetZero, 0},
	{SYS_STATX, (*Kernel).sysStatx, Partial, "sys_stat.go; no btime, no attributes, no DIO alignment fields",
		args(aDirfd, aPath, flags(statxAt), flags(statxMask), Arg{Kind: ArgStatx}), RetZero, 0},
	{SYS_ACCESS, func(k *Kernel, c *Call) Result { return k.sysFaccessat(c, atFdcwd, uint32(c.Args[1]), 0) },
		Supported, "sys_stat.go; as uid 0: R/W always granted, X when some x bit is set",
		args(aPath, flags(accessModes)), RetZero, 0},
	{SYS_FACCESSAT, func(k *Kernel, c *Call) Result { return k.sysFaccessat(c, int(c.Args[0]), uint32(c.Args[2]), 0) },
		Supported, "sys_stat.go", args(aDirfd, aPath, flags(accessModes)), RetZero, 0},
	{SYS_FACCESSAT2, func(k *Kernel, c *Call) Result {
		return k.sysFaccessat(c, int(c.Args[0]), uint32(c.Args[2]), int(c.Args[3]))
	}, Supported, "sys_stat.go", args(aDirfd, aPath, flags(accessModes), flags(accessAt)), RetZero, 0},
	// sys_statfs.go: struct statfs in Obj (*unix.Statfs_t)
	{SYS_STATFS, func(k *Kernel, c *Call) Result { return k.sysStatfs(c, false) },
		Partial, statfsNote, args(aPath, aPtr), RetZero, Custom},
	{SYS_FSTATFS, func(k *Kernel, c *Call) Result { return k.sysStatfs(c, true) },
		Partial, statfsNote, args(aFd, aPtr), RetZero, Custom},

	// sys_namespace.go
	{SYS_UNLINK, func(k *Kernel, c *Call) Result { return k.sysUnlinkat(c, atFdcwd, 0) },
		Supported, "sys_namespace.go", args(aPath), RetZero, 0},
	{SYS_UNLINKAT, func(k *Kernel, c *Call) Result { return k.sysUnlinkat(c, int(c.Args[0]), int(c.Args[2])) },
		Supported, "sys_namespace.go", args(aDirfd, aPath, flags(removeAt)), RetZero, 0},
	{SYS_RMDIR, func(k *Kernel, c *Call) Result { return k.sysUnlinkat(c, atFdcwd, atRemovedir) },
		Supported, "sys_namespace.go", args(aPath), RetZero, 0},
	{SYS_RENAME, func(k *Kernel, c *Call) Result { return k.sysRenameat2(c, atFdcwd, atFdcwd, 0) },
		Supported, "sys_namespace.go", args(aPath, aPath2), RetZero, 0},
	{SYS_RENAMEAT, func(k *Kernel, c *Call) Result { return k.sysRenameat2(c, int(c.Args[0]), int(c.Args[2]), 0) },
		Supported, "sys_namespace.go", args(aDirfd, aPath, aDirfd, aPath2), RetZero, 0},
	{SYS_RENAMEAT2, func(k *Kernel, c *Call) Result {
		return k.sysRenameat2(c, int(c.Args[0]), int(c.Args[2]), uint(c.Args[4]))
	}, Partial, "sys_namespace.go; RENAME_WHITEOUT → EINVAL", args(aDirfd, aPath, aDirfd, aPath2, flags(renameFlags)), RetZero, 0},
	{SYS_LINK, func(k *Kernel, c *Call) Result { return k.sysLinkat(c, atFdcwd, atFdcwd, 0) },
		Supported, "sys_namespace.go", args(aPath, aPath2), RetZero, 0},
	{SYS_LINKAT, func(k *Kernel, c *Call) Result {
		return k.sysLinkat(c, int(c.Args[0]), int(c.Args[2]), int(c.Args[4]))
	}, Supported, "sys_namespace.go; AT_EMPTY_PATH as root (CAP_DAC_READ_SEARCH), /proc/self/fd/N with AT_SYMLINK_FOLLOW",
		args(aDirfd, aPath, aDirfd, aPath2, flags(linkAt)), RetZero, 0},
	// symlink(target, linkpath): Path is the new link, Path2 its target.
	{SYS_SYMLINK, func(k *Kernel, c *Call) Result { return k.sysSymlinkat(c, atFdcwd) },
		Supported, "sys_namespace.go", args(aPath2, aPath), RetZero, 0},
	{SYS_SYMLINKAT, func(k *Kernel, c *Call) Result { return k.sysSymlinkat(c, int(c.Args[1])) },
		Supported, "sys_namespace.go", args(aPath2, aDirfd, aPath), RetZero, 0},
	{SYS_READLINK, func(k *Kernel, c *Call) Result { return k.sysReadlinkat(c, atFdcwd) },
		Supported, "sys_namespace.go", args(aPath, aOut, aCount), RetCount, 0},
	{SYS_READLINKAT, func(k *Kernel, c *Call) Result { return k.sysReadlinkat(c, int(c.Args[0])) },
		Supported, "sys_namespace.go", args(aDirfd, aPath, aOut, aCount), RetCount, 0},
	{SYS_MKDIR, func(k *Kernel, c *Call) Result { return k.sysMkdirat(c, atFdcwd, uint32(c.Args[1])) },
		Supported, "sys_namespace.go", args(aPath, aMode), RetZero, 0},
	{SYS_MKDIRAT, func(k *Kernel, c *Call) Result { return k.sysMkdirat(c, int(c.Args[0]), uint32(c.Args[2])) },
		Supported, "sys_namespace.go", args(aDirfd, aPath, aMode), RetZero, 0},
	{SYS_GETDENTS64, (*Kernel).sysGetdents64,
		Supported, "sys_namespace.go; entries in the model's order (., .., then by name); d_off = index, LLONG_MAX at the end as ext4",
		args(aFd, aOut, aCount), RetCount, 0},
	{SYS_GETDENTS, (*Kernel).sysGetdents64, Partial, "sys_namespace.go; encoded as getdents64 (linux_dirent is not modelled)",
		args(aFd, aOut, aCount), RetCount, 0},
	{SYS_CHDIR, (*Kernel).sysChdir, Supported, "sys_namespace.go", args(aPath), RetZero, 0},
	{SYS_FCHDIR, (*Kernel).sysFchdir, Supported, "sys_namespace.go", args(aFd), RetZero, 0},
	{SYS_GETCWD, (*Kernel).sysGetcwd, Supported, "sys_namespace.go", args(aOut, aCount), RetCount, 0},
	{SYS_UMASK, func(k *Kernel, c *Call) Result { return ok(int64(c.Task.g.umask.Swap(uint32(c.Args[0]) & 0o777))) },
		Supported, "sys_namespace.go", args(aMode), RetValue, 0},
	{SYS_CHMOD, func(k *Kernel, c *Call) Result { return k.sysFchmodat(c, atFdcwd, uint32(c.Args[1]), 0) },
		Supported, "sys_namespace.go", args(aPath, aMode), RetZero, 0},
	{SYS_FCHMOD, (*Kernel).sysFchmod, Supported, "sys_namespace.go", args(aFd, aMode), RetZero, 0},
	{SYS_FCHMODAT, func(k *Kernel, c *Call) Result { return k.sysFchmodat(c, int(c.Args[0]), uint32(c.Args[2]), 0) },
		Supported, "sys_namespace.go", args(aDirfd, aPath, aMode), RetZero, 0},
	{SYS_FCHMODAT2, func(k *Kernel, c *Call) Result {
		return k.sysFchmodat(c, int(c.Args[0]), uint32(c.Args[2]), int(c.Args[3]))
	}, Supported, "sys_namespace.go; AT_SYMLINK_NOFOLLOW on a symlink → EOPNOTSUPP, as ext4",
		args(aDirfd, aPath, aMode, flags(nofollow)), RetZero, 0},
	{SYS_CHOWN, func(k *Kernel, c *Call) Result {
		return k.sysFchownat(c, atFdcwd, int(c.Args[1]), int(c.Args[2]), 0)
	}, Supported, "sys_namespace.go", args(aPath, aInt, aInt), RetZero, 0},
	{SYS_LCHOWN, func(k *Kernel, c *Call) Result {
		return k.sysFchownat(c, atFdcwd, int(c.Args[1]), int(c.Args[2]), atSymlinkNofollow)
	}, Supported, "sys_namespace.go", args(aPath, aInt, aInt), RetZero, 0},
	{SYS_FCHOWNAT, func(k *Kernel, c *Call) Result {
		return k.sysFchownat(c, int(c.Args[0]), int(c.Args[2]), int(c.Args[3]), int(c.Args[4]))
	}, Supported, "sys_namespace.go", args(aDirfd, aPath, aInt, aInt, flags(nofollow)), RetZero, 0},
	{SYS_FCHOWN, (*Kernel).sysFchown, Supported, "sys_namespace.go", args(aFd, aInt, aInt), RetZero, 0},
	// utimensat: a NULL path (futimens) and the times array are decoded by hand.
	{SYS_UTIMENSAT, (*Kernel).sysUtimensat, Supported, "sys_namespace.go; a NULL path (futimens) is the fd itself, as do_utimes_fd",
		args(aDirfd, aPath, aPtr, flags(nofollow)), RetZero, Custom},
	// mknod's mode carries the file type (S_IFIFO|0644) and its dev is printed as
	// makedev(major, minor): decoded by hand.
	// sys_utime.go: utime's utimbuf and utimes' timevals (Obj) are decoded by hand
	{SYS_UTIME, (*Kernel).sysUtime, Supported, "sys_utime.go; as utimensat with whole seconds",
		args(aPath, aPtr), RetZero, Custom},
	{SYS_UTIMES, func(k *Kernel, c *Call) Result { return k.sysFutimesat(c, atFdcwd) },
		Supported, "sys_utime.go; as utimensat, microseconds", args(aPath, aPtr), RetZero, Custom},
	{SYS_FUTIMESAT, func(k *Kernel, c *Call) Result { return k.sysFutimesat(c, int(c.Args[0])) },
		Supported, "sys_utime.go; as utimes, a NULL path is the fd", args(aDirfd, aPath, aPtr), RetZero, Custom},
	{SYS_MKNOD, func(k *Kernel, c *Call) Result { return k.sysMknodat(c, atFdcwd, uint32(c.Args[1]), c.Args[2]) },
		Supported, "sys_pipe.go; FIFOs, device nodes (opening 1:3 and 1:5 only), sockets, regular files",
		args(aPath, flags(mknodModes), aInt), RetZero, Custom},
	{SYS_MKNODAT, func(k *Kernel, c *Call) Result {
		return k.sysMknodat(c, int(c.Args[0]), uint32(c.Args[2]), c.Args[3])
	}, Supported, "sys_pipe.go; as mknod", args(aDirfd, aPath, flags(mknodModes), aInt), RetZero, Custom},

	// sys_xattr.go: (path or fd, name, value, size, flags); Path2 carries the name
	{SYS_SETXATTR, func(k *Kernel, c *Call) Result { return k.sysSetxattr(c, true, false) },
		Partial, acl, args(aPath, aPath2, aPtr, aInt, flags(xattrFlags)), RetZero, Custom},
	{SYS_LSETXATTR, func(k *Kernel, c *Call) Result { return k.sysSetxattr(c, false, false) },
		Partial, acl, args(aPath, aPath2, aPtr, aInt, flags(xattrFlags)), RetZero, Custom},
	{SYS_FSETXATTR, func(k *Kernel, c *Call) Result { return k.sysSetxattr(c, false, true) },
		Partial, acl, args(aFd, aPath2, aPtr, aInt, flags(xattrFlags)), RetZero, Custom},
	{SYS_REMOVEXATTR, func(k *Kernel, c *Call) Result { return k.sysRemovexattr(c, true, false) },
		Partial, acl, args(aPath, aPath2), RetZero, Custom},
	{SYS_LREMOVEXATTR, func(k *Kernel, c *Call) Result { return k.sysRemovexattr(c, false, false) },
		Partial, acl, args(aPath, aPath2), RetZero, Custom},
	{SYS_FREMOVEXATTR, func(k *Kernel, c *Call) Result { return k.sysRemovexattr(c, false, true) },
		Partial, acl, args(aFd, aPath2), RetZero, Custom},
	{SYS_GETXATTR, func(k *Kernel, c *Call) Result { return k.sysGetxattr(c, true, false) },
		Partial, getxattrNote, args(aPath, aPath2, aPtr, aInt), RetCount, Custom},
	{SYS_LGETXATTR, func(k *Kernel, c *Call) Result { return k.sysGetxattr(c, false, false) },
		Partial, getxattrNote, args(aPath, aPath2, aPtr, aInt), RetCount, Custom},
	{SYS_FGETXATTR, func(k *Kernel, c *Call) Result { return k.sysGetxattr(c, false, true) },
		Partial, getxattrNote, args(aFd, aPath2, aPtr, aInt), RetCount, Custom},
	{SYS_LISTXATTR, func(k *Kernel, c *Call) Result { return k.sysListxattr(c, true, false) },
		Partial, listxattrNote, args(aPath, aPtr, aInt), RetCount, Custom},
	{SYS_LLISTXATTR, func(k *Kernel, c *Call) Result { return k.sysListxattr(c, false, false) },
		Partial, listxattrNote, args(aPath, aPtr, aInt), RetCount, Custom},
	{SYS_FLISTXATTR, func(k *Kernel, c *Call) Result { return k.sysListxattr(c, false, true) },
		Partial, listxattrNote, args(aFd, aPtr, aInt), RetCount, Custom},

	// sys_mmap.go: addresses are not reproducible; replay rebuilds file mappings only
	{SYS_MMAP, (*Kernel).sysMmap, Partial, "sys_mmap.go; file mappings only; stores into a shared mapping reach the file at msync/munmap",
		args(aAddr, aInt, flags(mmapProt), flags(mmapFlags), aFd, Arg{Kind: ArgOffset, Hex: true}), RetValue, Custom},
	{SYS_MUNMAP, (*Kernel).sysMunmap, Partial, "sys_mmap.go", args(aAddr, aInt), RetZero, Custom},
	{SYS_MSYNC, (*Kernel).sysMsync, Partial, "sys_mmap.go", args(aAddr, aInt, flags(msyncFlags)), RetZero, Custom},
	{SYS_MPROTECT, nil, NotModelled, "", args(aAddr, aInt, flags(mmapProt)), RetZero, Custom},
	{SYS_MADVISE, nil, NotModelled, "", args(aAddr, aInt, aInt), RetZero, Custom},

	// sys_aio.go: contexts, iocbs and events are structures decoded by hand
	{SYS_IO_SETUP, (*Kernel).sysIoSetup, Supported, "sys_aio.go", args(aInt, aPtr), RetZero, Custom},
	{SYS_IO_DESTROY, (*Kernel).sysIoDestroy, Supported, "sys_aio.go", args(aAddr), RetZero, Custom | AIOWait},
	{SYS_IO_SUBMIT, (*Kernel).sysIoSubmit, Partial, "sys_aio.go; an iocb completes at submit, or under a time model (WithDevice) an O_DIRECT one when the device does; RESFD/eventfd not modelled",
		args(aAddr, aInt, aPtr), RetCount, Custom},
	{SYS_IO_GETEVENTS, (*Kernel).sysIoGetevents, Partial, "sys_aio.go; waits on the virtual clock until min_nr events or the timeout",
		args(aAddr, aInt, aInt, aPtr, aPtr), RetCount, Custom | AIOWait},
	{SYS_IO_PGETEVENTS, (*Kernel).sysIoGetevents, Partial, "sys_aio.go; as io_getevents, signal mask ignored",
		args(aAddr, aInt, aInt, aPtr, aPtr, aPtr), RetCount, Custom | AIOWait},
	{SYS_IO_CANCEL, func(k *Kernel, c *Call) Result { return Fail(syscall.EINVAL) },
		Partial, "sys_aio.go; always EINVAL: every iocb has completed", args(aAddr, aPtr, aPtr), RetZero, Custom},

	// task.go
	{SYS_FORK, func(k *Kernel, c *Call) Result { return ok(int64(k.fork(c.Task, 0).tid)) },
		Supported, "task.go", args(), RetValue, Lifecycle | Forks},
	{SYS_VFORK, func(k *Kernel, c *Call) Result { return ok(int64(k.fork(c.Task, 0).tid)) },
		Supported, "task.go; as fork", args(), RetValue, Lifecycle | Forks},
	{SYS_CLONE, sysClone, Partial, "task.go; CLONE_THREAD makes a thread, CLONE_FILES is implied for threads only",
		args(aInt), RetValue, Lifecycle | Forks},
	{SYS_CLONE3, sysClone, Partial, "task.go; as clone with flags in Args[0]", args(aPtr, aInt), RetValue, Lifecycle | Forks},
	{SYS_EXECVE, sysExecve, Partial, "task.go; closes FD_CLOEXEC descriptors; no program is loaded",
		args(aPath, aPtr, aPtr), RetZero, Lifecycle | Execs},
	{SYS_EXECVEAT, sysExecve, Partial, "task.go; as execve", args(aDirfd, aPath, aPtr, aPtr, aInt), RetZero, Lifecycle | Execs},
	{SYS_EXIT, func(k *Kernel, c *Call) Result { k.exitThread(c.Task); return ok(0) },
		Supported, "task.go", args(aInt), RetZero, Lifecycle},
	{SYS_EXIT_GROUP, func(k *Kernel, c *Call) Result { k.exitGroup(c.Task.g); return ok(0) },
		Supported, "task.go", args(aInt), RetZero, Lifecycle | EndsGroup},
	{SYS_GETPID, func(k *Kernel, c *Call) Result { return ok(int64(c.Task.g.pid)) },
		Supported, "task.go", args(), RetValue, 0},
	{SYS_GETTID, func(k *Kernel, c *Call) Result { return ok(int64(c.Task.tid)) },
		Supported, "task.go", args(), RetValue, 0},
	{SYS_GETRLIMIT, (*Kernel).sysRlimit, Partial, "task.go; RLIMIT_NOFILE only (others 0)", args(flags(rlimits), aPtr), RetZero, Custom},
	{SYS_SETRLIMIT, (*Kernel).sysRlimit, Partial, "task.go; RLIMIT_NOFILE only", args(flags(rlimits), aPtr), RetZero, Custom | SetsNofile},
	{SYS_PRLIMIT64, (*Kernel).sysRlimit, Partial, "task.go; RLIMIT_NOFILE of the caller only",
		args(aInt, flags(rlimits), aPtr, aPtr), RetZero, Custom | SetsNofile},

	// Not modelled, described for the fds they use or make.
	{SYS_IOCTL, nil, NotModelled, "", args(aFd, aInt, aPtr), RetValue, Custom},
	{SYS_INOTIFY_ADD_WATCH, nil, NotModelled, "", args(aFd, aPath, aInt), RetValue, 0},
	{SYS_SOCKET, nil, NotModelled, "", args(aInt, aInt, aInt), RetFd, 0},
	// sys_pipe.go: the fds come back in an int[2] (Obj *[2]int32)
	{SYS_PIPE, func(k *Kernel, c *Call) Result { c.Args[1] = 0; return k.sysPipe2(c) },
		Supported, "sys_pipe.go; capacity 65536, PIPE_BUF atomic writes, EPIPE without readers (no SIGPIPE)",
		args(aPtr), RetZero, Custom | NewFds},
	{SYS_PIPE2, (*Kernel).sysPipe2, Supported, "sys_pipe.go; as pipe; O_DIRECT (packet mode) is a stream",
		args(aPtr, flags(pipeFlags)), RetZero, Custom | NewFds},
	{SYS_SOCKETPAIR, (*Kernel).sysSocketpair, Partial, "sys_pipe.go; AF_UNIX as two crossed pipes, O_RDWR ends; datagrams are a stream",
		args(flags(sockDomains), flags(sockTypes), aInt, aPtr), RetZero, Custom | NewFds},
	{SYS_ACCEPT, nil, NotModelled, "", args(aFd, aPtr, aPtr), RetFd, Custom},
	{SYS_ACCEPT4, nil, NotModelled, "", args(aFd, aPtr, aPtr, aInt), RetFd, Custom},
	{SYS_EVENTFD, nil, NotModelled, "", args(aInt), RetFd, 0},
	{SYS_EVENTFD2, nil, NotModelled, "", args(aInt, aInt), RetFd, 0},
	{SYS_EPOLL_CREATE, nil, NotModelled, "", args(aInt), RetFd, 0},
	{SYS_EPOLL_CREATE1, nil, NotModelled, "", args(aInt), RetFd, 0},
	{SYS_MEMFD_CREATE, (*Kernel).sysMemfdCreate, Partial, "sys_memfd.go; an unnamed file of the model's file system (its blocks count against the capacity); no hugetlbfs",
		args(aPath, flags(memfdFlags)), RetFd, 0},
	{SYS_TIMERFD_CREATE, nil, NotModelled, "", args(aInt, aInt), RetFd, 0},
	{SYS_SIGNALFD4, nil, NotModelled, "", args(aFd, aPtr, aInt, aInt), RetFd, Custom},
	{SYS_INOTIFY_INIT1, nil, NotModelled, "", args(aInt), RetFd, 0},
	{SYS_PIDFD_OPEN, nil, NotModelled, "", args(aInt, aInt), RetFd, 0},
}

// statfsNote is the support note of statfs and fstatfs.
const statfsNote = "sys_statfs.go; ext4's f_type, the capacity (WithCapacity, else 1 TiB) and blocks used; pipefs, sockfs"

// Support notes of the xattr calls that read.
const (
	getxattrNote  = "sys_xattr.go; no attribute is kept: POSIX ACL names ENODATA, others EOPNOTSUPP"
	listxattrNote = "sys_xattr.go; no attribute is kept: an empty list"
)

// acl is the support note of the xattr calls that sys_xattr.go models.
const acl = "sys_xattr.go; POSIX access ACLs set the permission bits, default ACLs are checked but not applied to new files, other names EOPNOTSUPP"

func sysClone(k *Kernel, c *Call) Result {
	if c.Args[0]&syscall.CLONE_THREAD != 0 {
		return ok(int64(k.newThread(c.Task.g, 0).tid))
	}
	return ok(int64(k.fork(c.Task, 0).tid))
}

func sysExecve(k *Kernel, c *Call) Result {
	c.Task.g.exec()
	return ok(0)
}

// SyscallInfo is one row of the syscall table.
type SyscallInfo struct {
	Nr      Sysno
	Name    string
	Support Support
	Note    string
	// Args is the layout of the arguments in the C prototype's order (nil for a
	// call the table does not describe).
	Args  []Arg
	Ret   RetKind
	Props Prop
	// Modelled: the kernel has a handler (Support is not NotModelled).
	Modelled bool
}

// infos holds a row for every number (unknown and undescribed ones are
// NotModelled with no layout). The handlers are called by Kernel.dispatch
// (zdispatch.go), a switch generated from rows.
var infos = buildInfos()

func buildInfos() (infos [len(sysnoNames)]SyscallInfo) {
	for i, n := range sysnoNames {
		infos[i] = SyscallInfo{Nr: Sysno(i), Name: n}
	}
	for _, r := range rows {
		if infos[r.nr].Args != nil {
			panic("sim: two rows for " + r.nr.String())
		}
		if (r.handler != nil) != (r.support != NotModelled) {
			panic("sim: row " + r.nr.String() + ": a handler goes with a support level")
		}
		infos[r.nr] = SyscallInfo{Nr: r.nr, Name: r.nr.String(), Support: r.support, Note: r.note,
			Args: r.args, Ret: r.ret, Props: r.props, Modelled: r.handler != nil}
	}
	return infos
}

// Info returns the table's row of nr (a NotModelled row without layout for a
// number the table does not describe). The row must not be modified.
func Info(nr Sysno) *SyscallInfo {
	if int(nr) < len(infos) {
		return &infos[nr]
	}
	return &SyscallInfo{Nr: nr, Name: nr.String()}
}

// Is reports whether nr's row has every property of p (a family, say).
func (nr Sysno) Is(p Prop) bool {
	if int(nr) < len(infos) {
		return infos[nr].Props&p == p
	}
	return false
}

// Slot returns the index of the n-th (from 0) argument of kind k in the row, or -1.
func (s *SyscallInfo) Slot(k ArgKind, n int) int {
	for i, a := range s.Args {
		if a.Kind == k {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

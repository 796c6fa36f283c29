package sim

import (
	"sync"
	"syscall"
)

// Call is one system call as a value: what a process asks of the kernel. Everything
// between a program and the model crosses Handler.Syscall with a Call, the way
// everything between a process and Linux crosses the syscall table, so tracing,
// counting, fault injection and caching are each one Handler, and replaying a strace
// line is building a Call.
//
// A Call crosses Handler.Syscall by pointer, so a stack of layers passes one Call
// down without copying it (see Handler for who may change it and for how long it
// is valid). Buffers (Buf, Iov) and Obj are owned by the caller; a Handler may use
// them only until it returns.
type Call struct {
	Nr   Sysno // which syscall (Linux x86-64 numbering)
	Task *Task // the calling thread; never nil

	// Args holds the integer arguments in the order of the syscall's C prototype
	// (fd, flags, mode, offset, whence, count, ...). A slot whose C argument is a
	// path, buffer or struct pointer is unused (zero) and the value travels in
	// Path, Path2, Buf, Iov or Obj instead.
	Args [6]int64

	// Path is the first path argument (open's pathname, rename's oldpath,
	// symlink's linkpath...). A NULL pathname (utimensat(fd, NULL, ...), which is
	// futimens) is Path "" with PathNull in the path's Args slot.
	Path  string
	Path2 string // second path argument (rename's newpath, link's newpath, symlink's target)

	// Buf is the data buffer: read/pread64/getdents64/readlink/getcwd fill it,
	// write/pwrite64 send it. Its length is the count argument.
	Buf []byte
	// Iov is the iovec array of readv/writev/preadv/pwritev.
	Iov [][]byte
	// Obj carries a struct argument, always as a pointer: *unix.Stat_t (stat
	// family), *unix.Statx_t, *unix.Flock_t (fcntl locks), *[2]unix.Timespec
	// (utimensat), *unix.Rlimit (getrlimit/setrlimit/prlimit64), *[]byte
	// (mmap: receives the mapping), and the AIO types of this package
	// (*AioContext for io_setup, []*Iocb for io_submit, []IoEvent for
	// io_getevents). In copy_file_range and sendfile Calls made by Process, an
	// unexported marker says which offset arguments point to -1 (see NullOffset).
	Obj any
}

// PathNull, in the Args slot of a path argument, says that the pointer was NULL
// rather than an empty string.
const PathNull = 1

// Result is what the kernel answers: the return value and, when the call failed,
// a Linux errno. Errno is zero on success. On failure Ret is -1, as the C library
// returns it (strace prints "= -1 ENOENT"). Data results travel in the Call's
// buffers and Obj.
type Result struct {
	Ret   int64
	Errno syscall.Errno
}

// Err returns the errno as an error, or nil on success. Converting an Errno to an
// error does not allocate (all Linux errnos are below 256).
func (r Result) Err() error {
	if r.Errno == 0 {
		return nil
	}
	return r.Errno
}

// Fail is the Result of a call that failed with e.
func Fail(e syscall.Errno) Result { return Result{Ret: -1, Errno: e} }

// Handler is the one-method interface that the kernel model and every interposer
// implement. An interposer holds the next Handler and passes through what it does
// not interpose (the dlsym(RTLD_NEXT) of an LD_PRELOAD library).
//
// The Call is lent for the duration of Syscall: it is valid only until Syscall
// returns, and a Handler must not keep c (nor anything that points into it) after
// it returns. A layer may change the Call before passing it on (fsync into
// fdatasync, say) and must restore what it changed before it returns, so every
// layer above sees, after the call, the Call it sent: data results travel only in
// the buffers and Obj. A caller that sends one Call to several handlers, or keeps
// it, may rely on that. The facade (Process) lends each thread's Calls from one
// slot of its Task, so a Call through the stack costs no allocation and no copy
// per layer; a layer that makes calls of its own sends them with Send.
//
// Implementations must be safe for concurrent use by the threads of every process.
type Handler interface {
	Syscall(c *Call) Result
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(c *Call) Result

// Syscall calls f(c).
func (f HandlerFunc) Syscall(c *Call) Result { return f(c) }

// callPool holds the Calls that Send lends.
var callPool = sync.Pool{New: func() any { return new(Call) }}

// Send sends c down h: the way for a layer (or any caller without a Call of its
// own to lend) to make a call without allocating. c is copied into a Call lent
// from a pool for the duration of the call.
func Send(h Handler, c Call) Result {
	lent := callPool.Get().(*Call)
	*lent = c
	r := h.Syscall(lent)
	*lent = Call{} // the pool keeps no buffers alive
	callPool.Put(lent)
	return r
}

package interposer

import (
	"sync"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// DefaultOrausPath is the path cache_oraus.so used when oraus_msb_file was unset.
const DefaultOrausPath = "/oracle/app/oracle/product/8.1.7/rdbms/mesg/oraus.msb"

func init() {
	register(&Info{
		Name:    "oraus",
		Summary: "the published cache_oraus.so (Oracle message file, Solaris, 2002–2003), bugs included: read does not advance the offset and returns the full count past end of file, lseek ignores whence, close is ignored (a specimen, not a cache to use)",
		Params: []Param{
			{Name: "path", Default: DefaultOrausPath, Doc: "the file to cache; matched by exact string compare (env oraus_msb_file)"},
		},
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			return NewOraus(next, a.String("path")), nil
		},
	})
}

// Oraus reproduces cache_oraus.so (Oracle message file, Solaris, 2002–2003) as
// published — it is the specimen that the read-equivalence properties must catch,
// not a cache to use.
// It interposes open/openat, fcntl, lseek, read and close; everything else passes
// through to the next layer.
//
// Contract (the published behaviour, deliberately kept):
//   - The first open of Path (exact string compare, any dirfd) really opens it with the
//     caller's flags, fstats it and copies it whole into memory (the published code
//     mmaps it; the size is taken once, there and then). If that open fails the
//     published code calls perror and exit(1); here the failure is returned.
//   - Every later open of Path returns that same fd, whatever the flags: an O_RDWR or
//     O_TRUNC open gets the read-only fd, and the open does not reach the kernel.
//   - The first fcntl on the fd really runs; its result is returned for every later
//     fcntl on the fd, whatever cmd (F_GETFL after F_SETFD answers 0).
//   - lseek on the fd stores offset and returns it, ignoring whence (SEEK_END and
//     SEEK_CUR are treated as SEEK_SET; negative offsets are accepted). The stored
//     offset is a C int: truncated to 32 bits (the return value is not).
//   - read on the fd copies count bytes from memory at the stored offset and returns
//     count, even past end of file or before its start (the bytes outside the copy
//     are zero here; in the original they are whatever lies around the mapping, or
//     SIGSEGV/SIGBUS), and does not advance the offset. Bytes written to the file
//     later are never seen.
//   - close on the fd is ignored and returns 0: the fd is never released, so a program
//     that closes it and opens another file gets a different fd number than it would
//     have, and the fd stays valid.
//   - pread64, readv, fstat, dup, write ... are not interposed and reach the kernel
//     with the kernel's own offset of the fd (never moved by the cached lseek).
//
// The original is not thread-safe (its author says so); this one holds a mutex only
// so that Go's race detector stays quiet — the logic is the unsynchronised one. State
// is per process (an LD_PRELOAD library's statics live in one address space).
type Oraus struct {
	next sim.Handler
	Path string

	mu    sync.Mutex
	procs map[procID]*orausState
}

type orausState struct {
	bmFd      int // k_bm_fd
	fcntlFd   int // k_fcntl_bm_fd
	fcntlRet  sim.Result
	offset    int32 // k_bm_offset (a C int)
	buf       []byte
	stat      unix.Stat_t
	fcntlSeen bool
}

var _ sim.Handler = (*Oraus)(nil)

// NewOraus returns the cache_oraus interposer for path over next.
func NewOraus(next sim.Handler, path string) *Oraus {
	return &Oraus{next: next, Path: path, procs: map[procID]*orausState{}}
}

// Unwrap returns the next layer.
func (o *Oraus) Unwrap() sim.Handler { return o.next }

func (o *Oraus) state(t *sim.Task) *orausState {
	k := procOf(t)
	s := o.procs[k]
	if s == nil {
		s = &orausState{bmFd: -1, fcntlFd: -1}
		o.procs[k] = s
	}
	return s
}

// Syscall implements sim.Handler.
func (o *Oraus) Syscall(c *sim.Call) sim.Result {
	switch c.Nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_FCNTL, sim.SYS_LSEEK, sim.SYS_READ, sim.SYS_CLOSE:
	default:
		return o.next.Syscall(c)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.state(c.Task)
	fd := int(int32(c.Args[0]))
	switch c.Nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT:
		if c.Path != o.Path {
			return o.next.Syscall(c)
		}
		if s.bmFd != -1 {
			return sim.Result{Ret: int64(s.bmFd)} // re-open: the same fd, whatever the flags
		}
		r := o.next.Syscall(c)
		if r.Errno != 0 || r.Ret <= 0 {
			return r // published: perror(path); exit(1)
		}
		s.bmFd = int(r.Ret)
		s.stat, _ = callFstat(o.next, c.Task, s.bmFd)
		s.buf = readWhole(o.next, c.Task, s.bmFd, s.stat.Size)
		return r
	case sim.SYS_FCNTL:
		if !s.fcntlSeen {
			if s.bmFd != -1 && fd == s.bmFd {
				s.fcntlRet = o.next.Syscall(c)
				s.fcntlFd = s.bmFd
				s.fcntlSeen = true
				return s.fcntlRet
			}
		} else if fd == s.fcntlFd {
			return s.fcntlRet
		}
		return o.next.Syscall(c)
	}
	if s.bmFd == -1 || fd != s.bmFd {
		// The published lseek/read/close compare with k_bm_fd == -1 too (lseek(-1, ...)
		// then "succeeds"; read(-1, ...) crashes); here they pass through until the
		// file is open.
		return o.next.Syscall(c)
	}
	switch c.Nr {
	case sim.SYS_LSEEK:
		s.offset = int32(c.Args[1]) // k_bm_offset = offset; return offset;
		return sim.Result{Ret: c.Args[1]}
	case sim.SYS_READ:
		copyPastEnd(c.Buf, s.buf, int64(s.offset))
		return sim.Result{Ret: int64(len(c.Buf))}
	default: // close
		return sim.Result{}
	}
}

// copyPastEnd copies src[off:] into dst and zero-fills what lies outside src.
func copyPastEnd(dst, src []byte, off int64) {
	n := 0
	if off >= 0 && off < int64(len(src)) {
		n = copy(dst, src[off:])
	}
	clear(dst[n:])
}

// readWhole reads size bytes of fd from offset 0 with pread64 through h.
func readWhole(h sim.Handler, t *sim.Task, fd int, size int64) []byte {
	buf := make([]byte, size)
	var off int64
	for off < size {
		r := sim.Send(h, sim.Call{Nr: sim.SYS_PREAD64, Task: t, Args: [6]int64{int64(fd), 0, size - off, off}, Buf: buf[off:]})
		if r.Errno != 0 || r.Ret <= 0 {
			break
		}
		off += r.Ret
	}
	return buf[:off]
}

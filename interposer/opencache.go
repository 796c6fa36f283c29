package interposer

import (
	"sync"

	"github.com/iosim/iosim/sim"
)

func init() {
	register(&Info{
		Name:    "opencache",
		Summary: "caches open/close of one path, as the published cache_open_calls.so (Oracle message file, Solaris, 2002–2003) did, bugs included: a later open gets the first fd whatever its flags",
		Params: []Param{
			{Name: "path", Default: DefaultOrausPath, Doc: "the file whose open/close are cached (exact string compare)"},
		},
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			return NewOpenCache(next, a.String("path")), nil
		},
	})
}

// OpenCache reproduces cache_open_calls.so (Oracle message file, Solaris,
// 2002–2003) as published: it interposes only open/openat and close of Path; every other call passes through.
//
// Contract (the published behaviour, deliberately kept):
//   - The first open of Path (exact string compare) reaches the kernel; every later open
//     of Path returns that fd without reaching it, whatever the flags (O_WRONLY,
//     O_TRUNC and O_CREAT|O_EXCL are all answered with the first, perhaps read-only, fd).
//   - close of that fd returns 0 and does nothing: the fd is never released, and its
//     open file description — with its offset — lives on, so a program that reads the
//     file sequentially after each open starts where the previous pass stopped, and
//     the fd numbers of later opens differ from the kernel's.
//
// State is per process. The original is not thread-safe; this one holds a mutex.
type OpenCache struct {
	next sim.Handler
	Path string

	mu  sync.Mutex
	fds map[procID]int
}

var _ sim.Handler = (*OpenCache)(nil)

// NewOpenCache returns the cache_open_calls interposer for path over next.
func NewOpenCache(next sim.Handler, path string) *OpenCache {
	return &OpenCache{next: next, Path: path, fds: map[procID]int{}}
}

// Unwrap returns the next layer.
func (o *OpenCache) Unwrap() sim.Handler { return o.next }

// Syscall implements sim.Handler.
func (o *OpenCache) Syscall(c *sim.Call) sim.Result {
	switch c.Nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT:
		if c.Path != o.Path {
			return o.next.Syscall(c)
		}
		o.mu.Lock()
		defer o.mu.Unlock()
		k := procOf(c.Task)
		if fd, ok := o.fds[k]; ok {
			return sim.Result{Ret: int64(fd)}
		}
		r := o.next.Syscall(c)
		if r.Errno == 0 && r.Ret > 0 {
			o.fds[k] = int(r.Ret)
		}
		return r
	case sim.SYS_CLOSE:
		o.mu.Lock()
		fd, ok := o.fds[procOf(c.Task)]
		o.mu.Unlock()
		if ok && fd == int(int32(c.Args[0])) {
			return sim.Result{}
		}
	}
	return o.next.Syscall(c)
}

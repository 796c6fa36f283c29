package interposer

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"

	"github.com/iosim/iosim/sim"
)

func init() {
	register(&Info{
		Name:    "trace",
		Summary: "writes every call as an strace line (openat(AT_FDCWD, \"x\", O_RDONLY) = 3)",
		Params: []Param{
			{Name: "out", Default: "stderr", Doc: "where to write: stderr, stdout or a file path (created)"},
			{Name: "s", Default: "32", Doc: "string size, as strace -s"},
			{Name: "pid", Default: "false", Doc: "prefix each line with the tid, as strace -f"},
		},
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			var w io.Writer
			switch out := a.String("out"); out {
			case "stderr":
				w = os.Stderr
			case "stdout":
				w = os.Stdout
			default:
				f, err := os.Create(out)
				if err != nil {
					return nil, fmt.Errorf("interposer trace: out=%s: %w", out, err)
				}
				w = f
			}
			t := NewTrace(next, w)
			n, err := a.Int("s")
			if err != nil {
				return nil, err
			}
			if n < 0 {
				return nil, a.errf("s", a.String("s"), "must be >= 0")
			}
			t.StrSize = int(n)
			if t.Pids, err = a.Bool("pid"); err != nil {
				return nil, err
			}
			return t, nil
		},
	})
}

// Trace writes one line per call in strace's notation to W, after the call
// returns: `openat(AT_FDCWD, "x", O_RDONLY) = 3`, `read(3, "..."..., 512) = 512`,
// `close(9) = -1 EBADF (Bad file descriptor)`. Buffers are shown as strace shows them
// (read data after the call, at most StrSize bytes then "..."); struct results
// (fstat) show st_mode and st_size. Pointers strace would print (a failed read's
// buffer, a lock struct) are printed as a fixed fake address. Calls it has no layout
// for are printed with their path and integer arguments.
//
// Lines are written whole, one Write each, under a mutex: safe for concurrent use,
// and lines of concurrent threads never interleave. Write errors are ignored (the
// first is kept in Err).
type Trace struct {
	next    sim.Handler
	W       io.Writer
	StrSize int  // as strace -s (default 32)
	Pids    bool // prefix lines with the tid, as strace -f does

	mu  sync.Mutex
	buf []byte
	Err error
}

var _ sim.Handler = (*Trace)(nil)

// NewTrace returns a tracing layer over next writing to w.
func NewTrace(next sim.Handler, w io.Writer) *Trace {
	return &Trace{next: next, W: w, StrSize: 32}
}

// Unwrap returns the next layer.
func (t *Trace) Unwrap() sim.Handler { return t.next }

// Syscall implements sim.Handler.
func (t *Trace) Syscall(c *sim.Call) sim.Result {
	r := t.next.Syscall(c)
	t.mu.Lock()
	b := t.buf[:0]
	if t.Pids && c.Task != nil {
		b = strconv.AppendInt(b, int64(c.Task.Tid()), 10)
		b = append(b, ' ')
	}
	b = appendCall(b, c, r, t.StrSize)
	b = append(b, '\n')
	if _, err := t.W.Write(b); err != nil && t.Err == nil {
		t.Err = err
	}
	t.buf = b
	t.mu.Unlock()
	return r
}

// FormatCall returns the strace line (without newline) for a call and its result.
func FormatCall(c sim.Call, r sim.Result) string {
	return string(appendCall(nil, &c, r, 32))
}

package interposer

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync/atomic"

	"github.com/iosim/iosim/sim"
)

func init() {
	register(&Info{
		Name:    "count",
		Summary: "counts calls, errors, bytes and virtual time per syscall, like strace -c",
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			return NewCount(next), nil
		},
	})
}

// maxSysno bounds the syscall numbers Count tracks (x86-64 numbers are below 512).
const maxSysno = 512

// Count counts, per syscall, the calls that pass through it, those that failed, the
// bytes moved (the return value of successful read/write-family calls) and the
// virtual time spent below it (the kernel's clock read before and after the call;
// with concurrent threads the clock is shared, so a call's time includes what other
// threads were charged meanwhile). It is safe for concurrent use: counters are atomic.
type Count struct {
	next sim.Handler
	// Clock returns the virtual time in ns; nil means the calling task's kernel's
	// clock (sim.Kernel.Now). Set it before use.
	Clock func(t *sim.Task) int64

	rows [maxSysno]countRow
	// other counts calls whose number is out of range.
	other countRow
}

type countRow struct {
	calls, errors, bytes, ns atomic.Int64
}

var _ sim.Handler = (*Count)(nil)

// NewCount returns a counting layer over next.
func NewCount(next sim.Handler) *Count { return &Count{next: next} }

// Unwrap returns the next layer.
func (k *Count) Unwrap() sim.Handler { return k.next }

// Syscall implements sim.Handler.
func (k *Count) Syscall(c *sim.Call) sim.Result {
	row := &k.other
	if uint(c.Nr) < maxSysno {
		row = &k.rows[c.Nr]
	}
	clock := k.Clock
	if clock == nil {
		clock = kernelClock
	}
	t0 := clock(c.Task)
	r := k.next.Syscall(c)
	row.calls.Add(1)
	if r.Errno != 0 {
		row.errors.Add(1)
	}
	if b := ioBytes(c, r); b > 0 {
		row.bytes.Add(b)
	}
	row.ns.Add(clock(c.Task) - t0)
	return r
}

// kernelClock reads the virtual clock of the task's kernel.
func kernelClock(t *sim.Task) int64 {
	if t == nil {
		return 0
	}
	return t.Kernel().Now()
}

// CountRow is one syscall's line of the table.
type CountRow struct {
	Sysno  sim.Sysno
	Name   string
	Calls  int64
	Errors int64
	Bytes  int64
	Ns     int64 // virtual time in ns (zero without a clock)
}

// Table returns the syscalls seen so far, most time first, then most calls, then by
// name: a deterministic order.
func (k *Count) Table() []CountRow {
	var out []CountRow
	for i := range k.rows {
		r := &k.rows[i]
		if n := r.calls.Load(); n > 0 {
			nr := sim.Sysno(i)
			out = append(out, CountRow{Sysno: nr, Name: nr.String(), Calls: n, Errors: r.errors.Load(), Bytes: r.bytes.Load(), Ns: r.ns.Load()})
		}
	}
	if n := k.other.calls.Load(); n > 0 {
		out = append(out, CountRow{Sysno: maxSysno, Name: "(other)", Calls: n, Errors: k.other.errors.Load(), Bytes: k.other.bytes.Load(), Ns: k.other.ns.Load()})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Ns != b.Ns {
			return a.Ns > b.Ns
		}
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return a.Name < b.Name
	})
	return out
}

// Calls returns how many calls of nr passed through.
func (k *Count) Calls(nr sim.Sysno) int64 {
	if uint(nr) < maxSysno {
		return k.rows[nr].calls.Load()
	}
	return 0
}

// Total returns the number of calls that passed through.
func (k *Count) Total() int64 {
	var n int64
	for i := range k.rows {
		n += k.rows[i].calls.Load()
	}
	return n + k.other.calls.Load()
}

// Reset zeroes every counter.
func (k *Count) Reset() {
	for i := range k.rows {
		k.rows[i] = countRow{}
	}
	k.other = countRow{}
}

// WriteTo renders the table in the layout of strace -c, with a bytes column.
func (k *Count) WriteTo(w io.Writer) (int64, error) {
	var b strings.Builder
	rows := k.Table()
	var tot CountRow
	for _, r := range rows {
		tot.Calls += r.Calls
		tot.Errors += r.Errors
		tot.Bytes += r.Bytes
		tot.Ns += r.Ns
	}
	fmt.Fprintf(&b, "%6s %11s %11s %9s %9s %12s %s\n", "% time", "seconds", "usecs/call", "calls", "errors", "bytes", "syscall")
	sep := "------ ----------- ----------- --------- --------- ------------ ----------------\n"
	b.WriteString(sep)
	line := func(r CountRow) {
		pct := 0.0
		if tot.Ns > 0 {
			pct = 100 * float64(r.Ns) / float64(tot.Ns)
		}
		per := int64(0)
		if r.Calls > 0 {
			per = r.Ns / 1000 / r.Calls
		}
		errs := ""
		if r.Errors > 0 {
			errs = fmt.Sprint(r.Errors)
		}
		fmt.Fprintf(&b, "%6.2f %11.6f %11d %9d %9s %12d %s\n", pct, float64(r.Ns)/1e9, per, r.Calls, errs, r.Bytes, r.Name)
	}
	for _, r := range rows {
		line(r)
	}
	b.WriteString(sep)
	tot.Name = "total"
	line(tot)
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// String renders the table.
func (k *Count) String() string {
	var b strings.Builder
	k.WriteTo(&b)
	return b.String()
}

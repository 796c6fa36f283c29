package sim

import (
	"sync/atomic"

	"github.com/iosim/iosim/vfs"
)

// Epoch is the virtual time at which a Kernel starts: 2023-11-14T22:13:20Z, in ns
// since the Unix epoch. File timestamps are Epoch plus the virtual time elapsed.
const Epoch int64 = 1_700_000_000_000_000_000

// CostModel prices a call: how many virtual nanoseconds it took, given what it
// returned. The kernel consults it once per call, after the call, and advances the
// clock by the answer. Implementations must be safe for concurrent use and must not
// allocate if the fast path is to stay allocation-free.
//
// A device profile (syscall entry, page-cache copy, seek, transfer, flush) is a
// CostModel; so is the layer that served a call (an interposer may advance the clock
// itself through Kernel.Clock for the work it did).
type CostModel interface {
	Cost(c *Call, r Result) int64
}

// ConstantCost charges the same number of nanoseconds for every call.
type ConstantCost int64

// Cost returns c.
func (k ConstantCost) Cost(*Call, Result) int64 { return int64(k) }

// DefaultCost is the default cost model: 100 ns per call.
const DefaultCost = ConstantCost(100)

// Clock is the kernel's virtual clock: nanoseconds since Epoch. It only moves when
// a call is charged (or when someone calls Advance); nothing reads the wall clock.
// It is safe for concurrent use.
type Clock struct {
	ns atomic.Int64
}

// Now returns the virtual nanoseconds elapsed since the kernel started.
func (c *Clock) Now() int64 { return c.ns.Load() }

// Advance moves the clock forward by d nanoseconds (d <= 0 is ignored) and returns
// the new time.
func (c *Clock) Advance(d int64) int64 {
	if d <= 0 {
		return c.ns.Load()
	}
	return c.ns.Add(d)
}

// Timespec returns the current time as a vfs timestamp (Epoch + Now()).
func (c *Clock) Timespec() vfs.Timespec { return Epoch + c.ns.Load() }

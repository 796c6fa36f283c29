package interposer

import (
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

func init() {
	register(&Info{
		Name:    "dsync",
		Summary: "turns O_SYNC into O_DSYNC in open flags: each write waits for its data and size, not for timestamps (open(2))",
		build: func(next sim.Handler, a *Args) (sim.Handler, error) {
			return NewDsync(next), nil
		},
	})
}

// oSyncOnly is the bit O_SYNC adds to O_DSYNC on Linux (__O_SYNC).
const oSyncOnly = unix.O_SYNC &^ unix.O_DSYNC

// Dsync rewrites open/openat flags O_SYNC into O_DSYNC: every write is still durable
// when it returns (data and the size needed to read it back), but timestamps are not
// synced per write — the same trade as fdatasync for fsync. Other calls pass through.
// fcntl(F_SETFL) cannot set O_SYNC on Linux, so only opens are rewritten.
type Dsync struct {
	next sim.Handler
}

var _ sim.Handler = (*Dsync)(nil)

// NewDsync returns the O_SYNC→O_DSYNC interposer over next.
func NewDsync(next sim.Handler) *Dsync { return &Dsync{next: next} }

// Unwrap returns the next layer.
func (d *Dsync) Unwrap() sim.Handler { return d.next }

// Syscall implements sim.Handler.
func (d *Dsync) Syscall(c *sim.Call) sim.Result {
	if i, ok := openFlagsIndex(c.Nr); ok && c.Args[i]&oSyncOnly != 0 {
		flags := c.Args[i]
		c.Args[i] &^= oSyncOnly
		r := d.next.Syscall(c)
		c.Args[i] = flags // restored for the layers above (sim.Handler)
		return r
	}
	return d.next.Syscall(c)
}

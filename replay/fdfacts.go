package replay

import (
	"fmt"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// fds from before the trace: a call that got a higher fd than the model's
// lowest free one shows the fds below it open (fillFrom), and a stat of a
// stand-in shows its type (standInShown). Both are noted.

// fillFrom fills in stand-ins for the fds in [lo, hi) that are free in the
// model, as the call of ev, which got hi where the model's lowest free fd
// was lo, shows them open, and notes it (for a task the trace shows from its
// start: of others, a note says that fds are taken as recorded).
func (r *replayer) fillFrom(ev *strace.Event, t *sim.Task, lo, hi int) {
	before := r.filled
	r.fill(t, lo, hi)
	if n := r.filled - before; n > 0 && r.blind[t.Group()] == 0 && r.shows() == allCalls {
		fds := fmt.Sprintf("fd %d", lo)
		if hi-lo > 1 {
			fds = fmt.Sprintf("fds %d to %d", lo, hi-1)
		}
		r.world.fact(ev, "%s open before the trace (or made by calls it does not show): the call got fd %d where the model's lowest free fd was %d", fds, hi, lo)
	}
}

// standInShown: a recorded stat of fd (nr, event ev), a stand-in for a
// description from before the trace, shows its type: a pipe, a socket or a
// character device (a terminal, /dev/null) is taken, and noted when it is
// not what the stand-in assumed.
func (r *replayer) standInShown(t *sim.Task, nr sim.Sysno, ev *strace.Event, fd int) {
	if !ev.RetKnown || ev.Failed() || !r.filledIn(t, fd) {
		return
	}
	in := sim.Info(nr)
	i := in.Slot(sim.ArgStat, 0)
	if nr == sim.SYS_STATX {
		i = in.Slot(sim.ArgStatx, 0)
	}
	if i < 0 {
		return
	}
	p, ok := t.File(fd).Special().(*sim.Placeholder)
	kind := statKind(ev.Arg(i))
	if !ok || kind == 0 || p.Mode()&vfs.S_IFMT == kind {
		return
	}
	var what string
	switch kind {
	case vfs.S_IFIFO:
		what = "a pipe or FIFO"
	case vfs.S_IFSOCK:
		what = "a socket"
	case vfs.S_IFCHR:
		what = "a character device"
	default:
		return // a file or directory stand-in cannot be: it has no path
	}
	if r.shownKind == nil {
		r.shownKind = map[*sim.Placeholder]uint32{}
	}
	if was := r.shownKind[p]; was != 0 && was != kind {
		r.world.fact(ev, "contradiction: fd %d, a description from before the trace that an earlier stat showed of another type, is %s; taken", fd, what)
	} else {
		r.world.fact(ev, "fd %d was %s before the trace", fd, what)
	}
	r.shownKind[p] = kind
	p.Kind = kind
}

// onItself reports whether the dirfd argument idx of ev comes with an empty
// path (AT_EMPTY_PATH): the call is on the fd itself, which need not be a
// directory.
func onItself(ev *strace.Event, idx int) bool {
	p, ok := pathArg(ev, idx+1)
	return ok && p == ""
}

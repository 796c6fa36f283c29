package replay

import (
	"strings"
	"syscall"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// unmodelledFds installs placeholders for the fds that calls the model does not
// simulate (sockets, pipes, eventfds, epoll) return, so that later fd numbers
// come out as recorded.
func (r *replayer) unmodelledFds(t *sim.Task, nr sim.Sysno, ev *strace.Event) {
	if !ev.RetKnown || ev.Failed() {
		return
	}
	switch nr {
	case sim.SYS_SOCKET, sim.SYS_ACCEPT, sim.SYS_ACCEPT4, sim.SYS_EVENTFD, sim.SYS_EVENTFD2,
		sim.SYS_EPOLL_CREATE, sim.SYS_EPOLL_CREATE1, sim.SYS_TIMERFD_CREATE, sim.SYS_SIGNALFD4,
		sim.SYS_INOTIFY_INIT, sim.SYS_INOTIFY_INIT1, sim.SYS_PIDFD_OPEN:
		if ev.Ret >= 0 {
			r.placeholder(t, int(ev.Ret), syscall.O_RDWR, vfs.S_IFSOCK)
		}
	case sim.SYS_PIPE, sim.SYS_PIPE2, sim.SYS_SOCKETPAIR:
		idx := 0
		if nr == sim.SYS_SOCKETPAIR {
			idx = 3
		}
		flags := 0
		if nr == sim.SYS_PIPE2 {
			if v, ok := ev.Int(1); ok && v&syscall.O_CLOEXEC != 0 {
				flags = syscall.O_CLOEXEC
			}
		}
		arr := ev.Arg(idx)
		var fds []int
		if arr != nil && arr.Kind == strace.NodeArray {
			for i := range arr.Kids {
				if v, ok := arr.Kids[i].Value(); ok {
					fds = append(fds, int(v))
				}
			}
		}
		if len(fds) < 2 { // not shown (-s 0): the kernel took the lowest free fds
			fds = []int{lowestFree(t, 0), 0}
			r.placeholder(t, fds[0], flags|syscall.O_RDONLY, vfs.S_IFIFO)
			fds[1] = lowestFree(t, 0)
		}
		r.placeholder(t, fds[0], flags|syscall.O_RDONLY, vfs.S_IFIFO)
		r.placeholder(t, fds[1], flags|syscall.O_WRONLY, vfs.S_IFIFO)
	}
}

func (r *replayer) placeholder(t *sim.Task, fd, flags int, kind uint32) {
	r.installSpecial(t, fd, &sim.Placeholder{Kind: kind}, flags)
}

// installSpecial puts a special object at fd of t's process, outside the stack,
// and tells the stack's layers that keep a model of the fd table.
func (r *replayer) installSpecial(t *sim.Task, fd int, s sim.Special, flags int) {
	if t.InstallSpecial(fd, s, flags) == nil {
		interposer.NotifyInstalled(r.top, t, fd)
	}
}

// installPath opens path at fd of t's process, outside the stack (see
// installSpecial).
func (r *replayer) installPath(t *sim.Task, fd int, path string, flags int) error {
	err := t.InstallPath(fd, path, flags, 0)
	if err == nil {
		interposer.NotifyInstalled(r.top, t, fd)
	}
	return err
}

// lowestFree returns the lowest fd >= min not open in t's process.
func lowestFree(t *sim.Task, min int) int {
	fd := min
	for _, o := range t.FDs() {
		if o < fd {
			continue
		}
		if o != fd {
			break
		}
		fd++
	}
	return fd
}

// ensureFd makes fd exist in t's process when the recording used it successfully
// but the model never saw it opened: inherited fds, fds of a trace attached with -p.
func (r *replayer) ensureFd(t *sim.Task, ev *strace.Event, idx, fd int) {
	if fd < 0 || t.File(fd) != nil || ev.Errno == syscall.EBADF || !ev.RetKnown {
		return
	}
	if r.plan.created(ev, fd) {
		// The trace made this fd itself: its absence is the model's, unless
		// a thread the trace does not follow or a call that a trace of some
		// calls does not show (-e trace=%file hides socket) made it anew.
		r.untracedThreads()
		if r.blind[t.Group()] != untracedThread && r.shows() == allCalls {
			return
		}
	}
	if fd >= sim.NrOpen {
		return // no Linux process has such an fd: the model's EBADF stands
	}
	if g := t.Group(); fd >= g.Nofile() {
		// The recorded process had a higher RLIMIT_NOFILE than the model's
		// default: it evidently used this fd.
		g.SetNofile(fd + 1)
	}
	n := ev.Arg(idx)
	if n != nil && n.Kind == strace.NodeFd && len(n.Text) > 0 && !isExternalDecoration(string(n.Text)) && !n.Deleted {
		p := string(n.Text)
		kind := uint32(vfs.S_IFREG)
		if ev.Name == "getdents64" || ev.Name == "fchdir" || idx != 0 || (idx == 0 && ev.Name != "" && strings.HasSuffix(ev.Name, "at") && ev.Name != "openat" && !onItself(ev, idx)) {
			kind = vfs.S_IFDIR
		}
		r.world.ensure(p, kind, "")
		flags := syscall.O_RDWR
		if kind == vfs.S_IFDIR {
			flags = syscall.O_RDONLY | syscall.O_DIRECTORY
		}
		if err := r.installPath(t, fd, p, flags); err == syscall.EISDIR {
			_ = r.installPath(t, fd, p, syscall.O_RDONLY)
		}
		if t.File(fd) != nil {
			return
		}
	}
	kind := uint32(vfs.S_IFSOCK)
	if n != nil && n.Kind == strace.NodeFd && strings.HasPrefix(string(n.Text), "pipe:") {
		kind = vfs.S_IFIFO
	}
	r.placeholder(t, fd, syscall.O_RDWR, kind)
	r.inherited(t, fd)
}

// inherited notes that the descriptions at fds of t's table stand in for
// ones the task had before the trace (or that calls the trace does not show
// made): their flags are not known (see filledIn).
func (r *replayer) inherited(t *sim.Task, fds ...int) {
	for _, fd := range fds {
		if f := t.File(fd); f != nil {
			r.standIns[f] = true
		}
	}
}

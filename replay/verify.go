package replay

import (
	"bytes"
	"encoding/binary"
	"fmt"
	pathpkg "path"
	"slices"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// resultString prints a result as strace does: "3" or "-1 ENOENT".
func resultString(ret int64, e syscall.Errno) string {
	if e != 0 {
		return "-1 " + strace.ErrnoName(e)
	}
	return itoa(ret)
}

// returnsFd says whether the call's result is a new fd number.
func returnsFd(nr sim.Sysno, c *sim.Call) bool {
	switch sim.Info(nr).Ret {
	case sim.RetFd:
		return true
	case sim.RetFdOrValue: // fcntl
		return c.Args[1] == unix.F_DUPFD || c.Args[1] == unix.F_DUPFD_CLOEXEC
	}
	return false
}

// verify compares the simulated result of the call with the recorded one.
func (r *replayer) verify(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, res sim.Result, recErr syscall.Errno) {
	r.report.Verified++
	if (res.Errno == syscall.EINVAL || res.Errno == syscall.ENOENT) && !ev.Failed() && (nr == sim.SYS_READLINK || nr == sim.SYS_READLINKAT) && r.unknownLink(t, nr, ev, c) {
		return
	}
	if ev.Failed() || res.Errno != 0 {
		if res.Errno != recErr {
			r.diverge(ev, "result", resultString(ev.Ret, recErr), resultString(res.Ret, res.Errno))
		}
		return
	}
	switch nr {
	case sim.SYS_MMAP:
		return // addresses are not reproducible
	case sim.SYS_GETPID, sim.SYS_GETTID:
		if ev.Pid == 0 {
			return // a trace without pids: this call is what reveals it
		}
	case sim.SYS_GETDENTS64, sim.SYS_GETDENTS:
		if f := t.File(int(c.Args[0])); f != nil && !r.world.isExt(f.Inode()) {
			if r.treeHidden() {
				r.dentsAsRecorded++
				return
			}
			r.verifyDents(ev, c, res)
		}
		return
	}
	if nr == sim.SYS_UMASK && !r.umaskSeen {
		// The first umask call reveals the mask inherited from before the trace.
		r.umaskSeen = true
		if res.Ret != ev.Ret {
			return
		}
	}
	if res.Ret != ev.Ret && nr == sim.SYS_FCNTL && c.Args[1] == unix.F_GETFL && r.filledIn(t, int(c.Args[0])) {
		return // the flags of an fd from before the trace are the launcher's
	}
	if res.Ret != ev.Ret && nr.Is(sim.Reads) && r.writesHidden() {
		return // what files hold was written where the trace does not show it
	}
	if res.Ret != ev.Ret {
		allowed, inherited := false, false
		if returnsFd(nr, c) {
			allowed, inherited = r.fdAllowed(t, ev, res.Ret)
		}
		if !allowed {
			r.diverge(ev, "return value", itoa(ev.Ret), itoa(res.Ret))
		}
		if returnsFd(nr, c) {
			r.followFd(t, ev, res, inherited)
		}
		return
	}
	switch {
	case nr.Is(sim.Reads) && sim.Info(nr).Slot(sim.ArgOutBuf, 0) >= 0:
		// r.curIno: the file the kernel or, for an fd it serves, a layer read.
		if r.curIno == 0 || r.world.ext[r.curIno] != nil {
			return
		}
		start := r.curPos
		if nr.Is(sim.Positional) {
			start = c.Args[sim.PosSlot]
		}
		r.verifyBytes(ev, 1, r.curIno, start, c.Buf[:res.Ret])
	case nr.Is(sim.Reads):
		r.verifyIov(nr, ev, c, res)
	case nr == sim.SYS_STAT || nr == sim.SYS_LSTAT || nr == sim.SYS_NEWFSTATAT || nr == sim.SYS_FSTAT:
		idx := 1
		if nr == sim.SYS_NEWFSTATAT {
			idx = 2
		}
		r.verifyStat(ev, ev.Arg(idx), c.Obj.(*unix.Stat_t))
	case nr == sim.SYS_GETCWD:
		if b, trunc, ok := ev.Str(0); ok && !trunc && res.Ret > 0 {
			if got := string(c.Buf[:res.Ret-1]); got != string(b) {
				r.diverge(ev, "cwd", strconv.Quote(string(b)), strconv.Quote(got))
			}
		}
	case nr == sim.SYS_READLINK || nr == sim.SYS_READLINKAT:
		bi := 1
		if nr == sim.SYS_READLINKAT {
			bi = 2
		}
		if b, trunc, ok := ev.Str(bi); ok && !trunc {
			if got := string(c.Buf[:res.Ret]); got != string(b) {
				r.diverge(ev, "link target", strconv.Quote(string(b)), strconv.Quote(got))
			}
		}
	case nr == sim.SYS_IO_GETEVENTS:
		r.verifyAioEvents(ev, c, res)
	case nr == sim.SYS_IO_DESTROY:
		r.verifyAioLeft(ev, uint64(c.Args[0]))
	}
}

// fdAllowed reports whether the recorded fd of an fd-returning call of t, other
// than the lowest free one the model chose (got), is one Linux could have
// returned: when another thread had an fd-creating call in flight, or closed an
// fd while this call was in flight (the order in which concurrent calls took and
// freed their fds is not in the trace), or had a close of the recorded fd in
// flight (the fd is free from the close's start; see closedEarly), or when every
// fd from got up to the recorded one was taken by something the trace never
// shows being created (an fd inherited before tracing began; inherited then says
// so). In a blind fd table (see task) tasks the trace does not show may have
// taken any fd from got up, or closed one that the replay filled in for them;
// so may calls that a trace of some calls only (see shows) does not show, and
// where it shows no close, any fd may have been freed.
func (r *replayer) fdAllowed(t *sim.Task, ev *strace.Event, got int64) (ok, inherited bool) {
	want := ev.Ret
	if want < 0 || want >= sim.NrOpen {
		return false, false // no Linux process has such an fd
	}
	r.untracedThreads()
	blind := r.blind[t.Group()] != 0 || r.shows() != allCalls
	if want < got {
		// The model still holds want for another task's close in flight: that
		// close is done now, and not run again when its result comes.
		if pid, line, ok := r.plan.closeInFlight(ev, int(want)); ok {
			r.closedEarly[closeKey{pid, line}] = true
			return true, false
		}
		if f := t.File(int(want)); blind && f != nil {
			if _, ok := f.Special().(*sim.Placeholder); ok {
				return true, false
			}
			if r.shows() == someCallsNoClose {
				return true, false // closed where the trace does not show it
			}
			if r.hiddenExec(t, want) {
				return true, false // closed by an exec the trace does not show
			}
		}
		return false, false
	}
	if r.plan.inFlight(ev) {
		return true, false
	}
	if blind {
		return true, true
	}
	if r.plan.createdIn(ev, int(got), int(want)) {
		return false, false
	}
	return true, true
}

// verifyBytes compares the bytes a read shows (argument idx) with what the model
// read at start of inode ino, skipping bytes the trace never showed being written.
func (r *replayer) verifyBytes(ev *strace.Event, idx int, ino uint64, start int64, got []byte) {
	want := shown(ev, idx)
	n := min(len(want), len(got))
	r.unknownRead(ino, start, int64(n))
	if bytes.Equal(want[:n], got[:n]) || r.writesHidden() {
		return
	}
	// Compare the known parts only: cut out the spans the trace did not show.
	known := []span{{start, start + int64(n)}}
	for _, u := range r.world.unknown[ino] {
		known = cut(known, u.off, u.end)
	}
	for _, s := range known {
		a, b := s.off-start, s.end-start
		if bytes.Equal(want[a:b], got[a:b]) {
			continue
		}
		for k := a; k < b; k++ {
			if want[k] != got[k] {
				r.diverge(ev, fmt.Sprintf("byte at file offset %d", start+k), strconv.QuoteToASCII(string(want[k:min(k+16, b)])), strconv.QuoteToASCII(string(got[k:min(k+16, b)])))
				return
			}
		}
	}
}

func (r *replayer) verifyIov(nr sim.Sysno, ev *strace.Event, c *sim.Call, res sim.Result) {
	// r.curIno: the file the kernel or, for an fd it serves, a layer read.
	ino, arr := r.curIno, ev.Arg(1)
	if ino == 0 || r.world.ext[ino] != nil || arr == nil || arr.Kind != strace.NodeArray {
		return
	}
	start := r.curPos
	if nr.Is(sim.Positional) && c.Args[sim.PosSlot] != -1 {
		start = c.Args[sim.PosSlot] // -1: preadv2 at the file offset
	}
	left := res.Ret
	for k := range arr.Kids {
		if k >= len(c.Iov) || left <= 0 {
			break
		}
		b := c.Iov[k][:min(int64(len(c.Iov[k])), left)]
		if base := arr.Kids[k].Field("iov_base"); base != nil && base.Kind == strace.NodeStr {
			want := base.Text
			n := min(len(want), len(b))
			r.unknownRead(ino, start, int64(n))
			for j := 0; j < n; j++ {
				if want[j] != b[j] && !r.world.unknownAt(ino, start+int64(j)) {
					r.diverge(ev, fmt.Sprintf("iov %d byte %d", k, j), strconv.QuoteToASCII(string(want[j:j+1])), strconv.QuoteToASCII(string(b[j:j+1])))
					return
				}
			}
		}
		start += int64(len(b))
		left -= int64(len(b))
	}
}

// verifyStat compares the fields a recorded stat shows that the model determines:
// size and file type (and, for what the trace made, permissions and link count).
func (r *replayer) verifyStat(ev *strace.Event, st *strace.Node, got *unix.Stat_t) {
	if st == nil || st.Kind != strace.NodeStruct {
		return
	}
	check := func(name string, v int64) {
		if f := st.Field(name); f != nil {
			if want, ok := f.Value(); ok && want != v && (name == "st_nlink" || !r.writesHidden()) {
				r.diverge(ev, name, itoa(want), itoa(v))
			}
		}
	}
	ext := r.world.ext[got.Ino] != nil
	if f := st.Field("st_mode"); f != nil {
		if want, ok := f.Value(); ok {
			mask := int64(unix.S_IFMT)
			switch k := want & unix.S_IFMT; {
			case !ext && !r.world.permUnknown[got.Ino] && (want&0o7777 == int64(got.Mode)&0o7777 || r.shows() == allCalls):
				// (a trace of some calls may leave out the mkdir, chmod,
				// fchmod, umask or ACL that set the bits: -e trace= classes
				// each hold some of them)
				mask |= 0o7777
			case ext && (k == unix.S_IFCHR || k == unix.S_IFBLK || k == unix.S_IFIFO || k == unix.S_IFSOCK):
				// an inferred device, fifo or socket: the model, which
				// cannot make one, stands in a file for it
				mask = 0
			}
			if want&mask != int64(got.Mode)&mask {
				r.diverge(ev, "st_mode", fmt.Sprintf("%#o", want&mask), fmt.Sprintf("%#o", int64(got.Mode)&mask))
			}
		}
	}
	if got.Mode&unix.S_IFMT == unix.S_IFREG {
		check("st_size", got.Size)
		if !ext {
			check("st_blocks", got.Blocks)
			check("st_nlink", int64(got.Nlink))
		}
	}
}

// hiddenExec runs in the model the exec that a trace of some calls showing
// no execve does not show, when fd, which the trace says is free, is open
// with FD_CLOEXEC in the model; it reports whether it did.
func (r *replayer) hiddenExec(t *sim.Task, fd int64) bool {
	if r.shows() == allCalls || r.plan.hasCall("execve", "execveat") {
		return false
	}
	fl := r.k.Syscall(&sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{fd, unix.F_GETFD}})
	if fl.Errno != 0 || fl.Ret&unix.FD_CLOEXEC == 0 {
		return false
	}
	sim.Send(r.top, sim.Call{Nr: sim.SYS_EXECVE, Task: t})
	return true
}

// maxFill bounds the placeholders a replay fills in below the fds it
// follows: a hostile trace's jumps to fds near 1000000 cost no million
// files (the fds left free are taken as recorded by the same rules).
const maxFill = 4096

// fill installs stand-ins at the free fds of t in [lo, hi): what the trace
// does not show holds them (see fdAllowed), within the replay's maxFill.
func (r *replayer) fill(t *sim.Task, lo, hi int) {
	for fd := lo; fd < hi && r.filled < maxFill; fd++ {
		if t.File(fd) == nil {
			r.placeholder(t, fd, unix.O_RDWR, 0)
			r.inherited(t, fd)
			r.filled++
		}
	}
}

// filledIn reports whether fd refers to a description that replay filled
// in for one from before the trace (or made by a call the trace does not
// show), whose flags are the launcher's.
func (r *replayer) filledIn(t *sim.Task, fd int) bool {
	f := t.File(fd)
	return f != nil && f.Special() != nil && r.standIns[f] // (a description reused for a file is no stand-in)
}

// unknownLink reports whether a readlink that succeeded in the trace, and
// failed in the model, read a link whose target the trace does not show (-s 0)
// at a path that the model does not have, or inferred as a file from calls
// that follow links (stat, open): the model cannot know the link, so there is
// nothing to compare.
func (r *replayer) unknownLink(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) bool {
	dirfd, bi := int64(atFdcwd), 1
	if nr == sim.SYS_READLINKAT {
		dirfd, bi = c.Args[0], 2
	}
	if _, trunc, ok := ev.Str(bi); ok && !trunc {
		return false
	}
	abs := r.world.abs(t, dirfd, c.Path)
	ino, err := r.fs.Root().Resolve(abs, false)
	if err == nil {
		return r.world.isExt(ino) // a link where replay inferred a file
	}
	if err != syscall.ENOENT {
		return false
	}
	// Missing: unknown only under an inferred directory (or the root),
	// whose entries the model does not all know; one the trace made it knows.
	for p := abs; p != "/" && !r.world.removed[p]; {
		p = pathpkg.Dir(p)
		if dir, e := r.fs.Root().Resolve(p, true); e == nil {
			return r.world.isExt(dir) || p == "/"
		}
	}
	return false
}

// treeHidden reports whether tasks or calls the trace does not show may have
// changed the tree: a trace of some calls (strace -e trace=), a process that
// began before the trace, threads it does not follow. Listings are then taken
// as recorded.
func (r *replayer) treeHidden() bool {
	if r.shows() != allCalls {
		return true
	}
	r.untracedThreads()
	for _, b := range r.blind {
		if b != 0 {
			return true
		}
	}
	return false
}

// writesHidden reports whether the trace shows some calls only (see shows)
// and none that write file data: the model's sizes and bytes are then not
// the program's. Asked only when a size, a count or bytes differ: it waits
// for the read-ahead pass to end.
func (r *replayer) writesHidden() bool {
	return r.shows() != allCalls && !r.plan.hasCall("write", "pwrite64", "writev", "pwritev", "pwritev2")
}

// verifyDents checks that the entries a recorded getdents64 shows are the ones the
// model returned, in any order (the order is the file system's).
func (r *replayer) verifyDents(ev *strace.Event, c *sim.Call, res sim.Result) {
	arr := ev.Arg(1)
	if arr == nil || arr.Kind != strace.NodeArray {
		if res.Ret != ev.Ret {
			r.diverge(ev, "return value", itoa(ev.Ret), itoa(res.Ret))
		}
		return
	}
	var want []string
	for k := range arr.Kids {
		el := &arr.Kids[k]
		if el.Kind == strace.NodeEllipsis {
			return // not all shown
		}
		if n := el.Field("d_name"); n != nil && n.Kind == strace.NodeStr {
			want = append(want, string(n.Text))
		}
	}
	var got []string
	b := c.Buf[:max(res.Ret, 0)]
	for len(b) >= 19 {
		reclen := int(binary.LittleEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		if i := slices.Index(name, 0); i >= 0 {
			name = name[:i]
		}
		got = append(got, string(name))
		b = b[reclen:]
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		r.diverge(ev, "directory entries", fmt.Sprint(want), fmt.Sprint(got))
	} else if res.Ret != ev.Ret {
		r.diverge(ev, "return value", itoa(ev.Ret), itoa(res.Ret))
	}
}

// followFd moves the fd the model gave (res.Ret) to the one the recording
// shows (ev.Ret): the program goes on with the fd it got. inherited: the
// recorded fd stood for one open before the trace, whose facts it takes.
func (r *replayer) followFd(t *sim.Task, ev *strace.Event, res sim.Result, inherited bool) {
	if ev.Ret < 0 || ev.Ret >= sim.NrOpen {
		return
	}
	if g := t.Group(); int(ev.Ret) >= g.Nofile() {
		g.SetNofile(int(ev.Ret) + 1) // its RLIMIT_NOFILE was higher
	}
	cloexec := int64(0)
	if t.File(int(res.Ret)) != nil {
		var fdflags sim.Result = r.k.Syscall(&sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{res.Ret, unix.F_GETFD}})
		if fdflags.Ret&unix.FD_CLOEXEC != 0 {
			cloexec = unix.O_CLOEXEC
		}
	}
	// Through the stack, so that layers keeping a model of the fd
	// table see the move.
	sim.Send(r.top, sim.Call{Nr: sim.SYS_DUP3, Task: t, Args: [6]int64{res.Ret, ev.Ret, cloexec}})
	sim.Send(r.top, sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{res.Ret}})
	if inherited {
		r.fillFrom(ev, t, int(res.Ret), int(ev.Ret))
	}
}

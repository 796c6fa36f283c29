package replay

import (
	"fmt"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// Failed calls as evidence: an error result says something about the world
// before the trace, as Linux checks the conditions in a known order. Each fact
// taken from one is a note (fact), and a fact that an earlier inference
// contradicts is reported as such, never picked silently.

// inferState is the world's state of the inferences from results that
// evidence.go, creat.go, aioalign.go and mounts.go make.
type inferState struct {
	// facts are the notes of what recorded results showed of the world
	// before the trace (fact), factsMore the facts past maxFacts.
	facts     []string
	factsMore int
	// creat holds the files O_CREAT opens made that may have existed
	// (creat.go); creatPending and creatMode the open being replayed.
	creat        map[uint64]*creatCand
	creatPending string
	creatMode    uint32
	// aioOrd counts the write iocbs submitted per recorded context and
	// aio_data (misalignAio).
	aioOrd map[aioKey]int
	// mounts is the mount table (mounts.go); mountinfo holds, per fd of a
	// mountinfo file, the part of a line its reads showed so far.
	mounts          []mountPoint
	mountinfo       map[*sim.File][]byte
	mountinfoOpened bool // an open named a mountinfo file
	// unlisted maps a directory to the entry that stands for entries the
	// trace does not name (notempty.go).
	unlisted map[uint64]string
}

// maxFacts bounds the facts noted one by one; the rest are counted.
const maxFacts = 100

// fact records an inferred fact about the world before the trace, with the
// recorded call it came from.
func (w *world) fact(ev *strace.Event, format string, args ...any) {
	if len(w.facts) >= maxFacts {
		w.factsMore++
		return
	}
	w.facts = append(w.facts, fmt.Sprintf("%s:%d: %s: ", ev.File, ev.Line, callErr(ev))+fmt.Sprintf(format, args...))
}

// callErr names a recorded call and its result: "renameat2 = -1 EEXIST".
func callErr(ev *strace.Event) string {
	if ev.Failed() {
		return ev.Name + " = -1 " + strace.ErrnoName(ev.Errno)
	}
	return ev.Name
}

// factNotes returns the notes of the inferred facts, in trace order.
func (w *world) factNotes() []string {
	out := make([]string, 0, len(w.facts)+1)
	for _, f := range w.facts {
		out = append(out, "inferred: "+f)
	}
	if w.factsMore > 0 {
		out = append(out, fmt.Sprintf("inferred: %d more fact(s) from recorded results, not listed", w.factsMore))
	}
	return out
}

// kindName names a file type for a note.
func kindName(kind uint32) string {
	switch kind {
	case vfs.S_IFDIR:
		return "a directory"
	case vfs.S_IFLNK:
		return "a symlink"
	}
	return "a file (not a directory)"
}

// inodeKind returns ino's file type.
func inodeKind(ino *vfs.Inode) uint32 {
	switch {
	case ino.IsDir():
		return vfs.S_IFDIR
	case ino.IsSymlink():
		return vfs.S_IFLNK
	}
	return vfs.S_IFREG
}

// existed makes abs exist as kind (S_IFREG: any non-directory; 0: of a type
// not shown, made a file) before the call of ev, because its result shows
// so, and notes it; when the model already holds something else there that
// an inference made, it notes the contradiction and leaves the model as it
// is.
func (w *world) existed(ev *strace.Event, abs string, kind uint32, why string) {
	if abs == "" || abs[0] != '/' || isProcFd(abs) {
		return
	}
	clean := strings.TrimRight(abs, "/")
	if clean == "" {
		return
	}
	if ino, err := w.fs.Root().Resolve(clean, kind != vfs.S_IFLNK); err == nil {
		have := inodeKind(ino)
		if kind == 0 || have == kind || kind == vfs.S_IFREG && have != vfs.S_IFDIR {
			return // the model agrees already
		}
		if w.isExt(ino) && !(have == vfs.S_IFREG && ino.Size() == 0) {
			w.fact(ev, "contradiction: %s shows %s is %s, an earlier inference made it %s; kept", why, clean, kindName(kind), kindName(have))
			return
		}
		if !w.isExt(ino) {
			return // the trace's own: the call diverges
		}
	}
	var got *vfs.Inode
	if kind == vfs.S_IFLNK {
		// its target unknown until a readlink shows it, as inferLink's
		if got = w.ensure(clean, vfs.S_IFLNK, "?"); w.isExt(got) && got.IsSymlink() {
			w.linkUnknown[got.Ino()] = true
		}
	} else {
		mk := kind
		if mk == 0 {
			mk = vfs.S_IFREG
		}
		got = w.ensure(clean, mk, "")
	}
	switch {
	case got != nil && kind == 0:
		w.fact(ev, "%s: %s existed before the trace (of a type not shown: taken as a file)", why, clean)
	case got != nil:
		w.fact(ev, "%s: %s existed before the trace, %s", why, clean, kindName(kind))
	}
}

// inferFailed takes what the error of a failed call c (event ev) shows.
func (w *world) inferFailed(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	switch ev.Errno {
	case syscall.EEXIST:
		w.failedExists(t, nr, ev, c)
		w.failedNotEmpty(t, nr, ev, c) // rmdir may say EEXIST for ENOTEMPTY
	case syscall.ENOTDIR:
		w.failedNotDir(t, nr, ev, c)
	case syscall.ELOOP:
		if (nr == sim.SYS_OPEN || nr == sim.SYS_OPENAT) && c.Path != "" {
			flags := c.Args[sim.Info(nr).Slot(sim.ArgFlags, 0)]
			abs := w.abs(t, pathDirfd(nr, c), c.Path)
			if flags&unix.O_NOFOLLOW != 0 && flags&unix.O_PATH == 0 && !strings.HasSuffix(abs, "/") && w.isDir(parentDir(abs)) {
				w.existed(ev, abs, vfs.S_IFLNK, "O_NOFOLLOW refused the last component")
			}
		}
	case syscall.EINVAL:
		w.failedDirect(t, nr, ev, c)
	case syscall.EXDEV:
		w.failedXdev(t, nr, ev, c)
	case syscall.EISDIR:
		w.failedIsDir(t, nr, ev, c)
	case syscall.ENOTEMPTY:
		w.failedNotEmpty(t, nr, ev, c)
	}
}

// isDir reports whether abs is a directory in the model.
func (w *world) isDir(abs string) bool {
	ino, err := w.fs.Root().Resolve(abs, true)
	return err == nil && ino.IsDir()
}

// failedExists: link and linkat look their source up before they find the
// new name taken, as renameat2 with RENAME_NOREPLACE does (do_linkat,
// do_renameat2): both names existed. symlink, mknod and mkdir found their
// name taken.
func (w *world) failedExists(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	second := func() string {
		dirfd := int64(atFdcwd)
		if i := sim.Info(nr).Slot(sim.ArgDirfd, 1); i >= 0 {
			dirfd = c.Args[i]
		}
		return w.abs(t, dirfd, c.Path2)
	}
	switch nr {
	case sim.SYS_RENAMEAT2:
		if c.Args[4]&unix.RENAME_NOREPLACE == 0 {
			return
		}
		w.existed(ev, w.abs(t, pathDirfd(nr, c), c.Path), 0, "the source of a rename that found its target")
		w.existed(ev, second(), 0, "RENAME_NOREPLACE found the target")
	case sim.SYS_LINK, sim.SYS_LINKAT:
		if nr == sim.SYS_LINKAT && c.Args[4]&unix.AT_EMPTY_PATH != 0 && c.Path == "" {
			w.existed(ev, second(), 0, "the new name of a link")
			return
		}
		w.existed(ev, w.abs(t, pathDirfd(nr, c), c.Path), 0, "the source of a link that found its new name taken")
		w.existed(ev, second(), 0, "the new name of a link")
	case sim.SYS_SYMLINK, sim.SYS_SYMLINKAT, sim.SYS_MKNOD, sim.SYS_MKNODAT:
		w.existed(ev, w.abs(t, pathDirfd(nr, c), c.Path), 0, "the name taken")
	}
}

// failedNotDir: ENOTDIR from a rename whose new name ends in a slash, with
// a source that does not, names a source that is not a directory
// (do_renameat2); from a call of one path, a component that is not a
// directory on the way, or the last one when the call wanted a directory
// (O_DIRECTORY, a trailing slash, chdir). When the model does not tell
// which component it was, nothing is inferred, and that is noted.
func (w *world) failedNotDir(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	switch nr {
	case sim.SYS_RENAME, sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2:
		dirfd2 := int64(atFdcwd)
		if i := sim.Info(nr).Slot(sim.ArgDirfd, 1); i >= 0 {
			dirfd2 = c.Args[i]
		}
		from, to := w.abs(t, pathDirfd(nr, c), c.Path), w.abs(t, dirfd2, c.Path2)
		exchange := nr == sim.SYS_RENAMEAT2 && c.Args[4]&unix.RENAME_EXCHANGE != 0
		if from == "" || to == "" || exchange || !w.isDir(parentDir(from)) || !w.isDir(parentDir(to)) {
			return
		}
		switch {
		case strings.HasSuffix(to, "/") && !strings.HasSuffix(from, "/"):
			w.existed(ev, from, vfs.S_IFREG, "a rename to a name ending in a slash")
		case !strings.HasSuffix(to, "/") && w.isDir(strings.TrimRight(from, "/")):
			w.existed(ev, to, vfs.S_IFREG, "the target of a rename of a directory")
		}
		return
	}
	if c.Path == "" || c.Path2 != "" {
		return
	}
	wantDir := strings.HasSuffix(c.Path, "/") || nr == sim.SYS_CHDIR
	if nr == sim.SYS_OPEN || nr == sim.SYS_OPENAT {
		wantDir = wantDir || c.Args[sim.Info(nr).Slot(sim.ArgFlags, 0)]&unix.O_DIRECTORY != 0
	}
	if nr == sim.SYS_RMDIR || nr == sim.SYS_UNLINKAT && c.Args[2]&unix.AT_REMOVEDIR != 0 {
		wantDir = true
	}
	abs := strings.TrimRight(w.abs(t, pathDirfd(nr, c), c.Path), "/")
	if abs == "" || isProcFd(abs) {
		return
	}
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	missing, inferred := -1, false
	for k := range parts {
		p := "/" + strings.Join(parts[:k+1], "/")
		ino, err := w.fs.Root().Resolve(p, true)
		if err != nil {
			if err == syscall.ENOENT {
				missing = k
			}
			break
		}
		last := k == len(parts)-1
		if !ino.IsDir() && (!last || wantDir) {
			return // the model answers ENOTDIR too
		}
		inferred = inferred || w.isExt(ino) && (!last || wantDir)
		if last && inferred {
			w.fact(ev, "contradiction: the model's %s is all directories (inferred earlier), where Linux found one that is not; kept", abs)
			return
		}
	}
	if missing < 0 {
		return
	}
	// The components from missing on are candidates: all but the last,
	// and the last when the call wanted a directory.
	lastCand := len(parts) - 2
	if wantDir {
		lastCand = len(parts) - 1
	}
	switch {
	case missing == lastCand:
		w.existed(ev, "/"+strings.Join(parts[:missing+1], "/"), vfs.S_IFREG, "not a directory on the way")
	case missing < lastCand:
		w.fact(ev, "one of the components of %s from %s on is not a directory; which is not shown: nothing inferred", abs, "/"+strings.Join(parts[:missing+1], "/"))
	}
}

// failedDirect: an O_DIRECT read that failed with EINVAL (a misaligned
// buffer, offset or length) got past the check that returns 0 at or past
// EOF (iomap_dio_rw), so the file has data at its offset.
func (w *world) failedDirect(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	var off, count int64
	switch nr {
	case sim.SYS_READ:
		off, count = w.r.curPos, c.Args[2]
	case sim.SYS_PREAD64:
		off, count = c.Args[3], c.Args[2]
	case sim.SYS_WRITE, sim.SYS_PWRITE64:
		w.misalignWrite(t, nr, ev, c)
		return
	default:
		return
	}
	f := t.File(int(c.Args[0]))
	if f == nil || f.Flags()&unix.O_DIRECT == 0 || count <= 0 || off < 0 {
		return
	}
	w.hadData(ev, f.Inode(), off)
}

// hadData makes an inferred file hold data at off, as a failed direct read
// at off shows, and notes it.
func (w *world) hadData(ev *strace.Event, ino *vfs.Inode, off int64) {
	if !w.isExt(ino) || !ino.IsRegular() {
		return
	}
	if d, err := ino.SeekData(off); err == nil && d == off {
		return // the model has data there already
	}
	if ino.Size() <= off {
		w.resize(ino, off+1)
	}
	w.dataIn(ino, off, off+1) // data, not a hole, which a direct read does not check
	w.fact(ev, "an O_DIRECT read that failed its alignment check at offset %d: %s held data there before the trace (its bytes unknown)", off, ino.Path())
}

// outBuf returns the buffer of n bytes for a read into argument i of ev. A
// failed read shows the buffer's address: the buffer gets its offset within
// a page, so that O_DIRECT's alignment check sees what Linux saw (EINVAL for
// a misaligned one); other reads share the replayer's scratch.
func outBuf(r *replayer, ev *strace.Event, i int, n int64) []byte {
	if !ev.Failed() || n > 1<<20 {
		return r.scratch(n)
	}
	if a := ev.Arg(i); a != nil && a.Kind == strace.NodeInt {
		if addr, ok := a.Value(); ok && addr%sim.PageSize != 0 {
			return bufAt(n, uint64(addr))
		}
	}
	return r.scratch(n)
}

// failedIsDir: a rename that failed with EISDIR found a directory at its
// target and something else at its source (do_renameat2).
func (w *world) failedIsDir(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	if nr != sim.SYS_RENAME && nr != sim.SYS_RENAMEAT && nr != sim.SYS_RENAMEAT2 {
		return
	}
	dirfd2 := int64(atFdcwd)
	if i := sim.Info(nr).Slot(sim.ArgDirfd, 1); i >= 0 {
		dirfd2 = c.Args[i]
	}
	from, to := w.abs(t, pathDirfd(nr, c), c.Path), w.abs(t, dirfd2, c.Path2)
	if from == "" || to == "" || !w.isDir(parentDir(from)) || !w.isDir(parentDir(to)) {
		return
	}
	w.existed(ev, from, vfs.S_IFREG, "the source of a rename onto a directory")
	w.existed(ev, to, vfs.S_IFDIR, "the target of a rename that failed with EISDIR")
}

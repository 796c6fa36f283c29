package replay

import (
	"bytes"
	pathpkg "path"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// Inference: what a recorded call shows about the files that existed before the
// trace, written into the model before the call runs (before), and what the call
// did that the model must remember (after), one function per syscall family.
//
// The model's files change here outside every call of the traced program, below
// the interposer stack. So that no layer keeps serving what a file held before (the
// filecache interposer keeps files' bytes and stats), every change goes through
// changed, resize, chmod or writeAt, which tell each layer (sim.NotifyWorldChanged).
// A notification, not calls sent down the stack: the layers must not count, charge,
// trace or fault what the program never did. For the same reason the file and
// offset of an fd that a layer serves without the kernel holding it are asked of
// the layer with a query that has no effect on it (sim.ServedFd), not with fstat
// and lseek.

// changed tells every layer of the stack that inode ino (0: the namespace) changed.
func (w *world) changed(ino uint64) {
	if w.r.top != nil {
		sim.NotifyWorldChanged(w.r.top, ino)
	}
}

// resize sets an inferred file's size.
func (w *world) resize(ino *vfs.Inode, size int64) {
	if ino.Size() == size {
		return
	}
	_ = ino.Truncate(size)
	w.changed(ino.Ino())
	w.settle(ino)
}

// chmod sets an inferred file's permission bits.
func (w *world) chmod(ino *vfs.Inode, perm uint32) {
	if ino.Mode()&0o7777 == perm {
		return
	}
	_ = ino.Chmod(perm)
	w.changed(ino.Ino())
	w.settle(ino)
}

// writeAt writes b at off into a file, when it does not hold it already.
func (w *world) writeAt(ino *vfs.Inode, b []byte, off int64) {
	if int64(cap(w.cmp)) < int64(len(b)) {
		w.cmp = make([]byte, len(b))
	}
	have := w.cmp[:len(b)]
	// Direct: the comparison leaves no page cached over an unwritten extent.
	if n, _ := ino.Kernel().ReadAtDirect(have, off); n == len(b) && bytes.Equal(have, b) {
		return
	}
	_, _ = ino.WriteAt(b, off)
	w.changed(ino.Ino())
	w.settle(ino)
}

// settle tells Options.Settle that ino now stands for state from before the
// trace.
func (w *world) settle(ino *vfs.Inode) {
	if w.r.opts.Settle != nil {
		w.r.opts.Settle(ino)
	}
}

// fileOf returns the inode fd refers to in t's process: the kernel's, or, for an
// fd that a layer serves without the kernel holding it, the inferred inode the
// layer names (sim.ServedFd).
func (w *world) fileOf(t *sim.Task, fd int64) *vfs.Inode {
	if f := t.File(int(fd)); f != nil {
		return f.Inode()
	}
	if ino, _, ok := sim.ServedFd(w.r.top, t, int(fd)); ok {
		return w.ext[ino]
	}
	return nil
}

// pathDirfd returns the directory fd c's path is relative to: the row's dirfd
// argument, or AT_FDCWD.
func pathDirfd(nr sim.Sysno, c *sim.Call) int64 {
	if i := sim.Info(nr).Slot(sim.ArgDirfd, 0); i >= 0 {
		return c.Args[i]
	}
	return atFdcwd
}

// before prepares the world for the call of ev: it infers what the recorded result
// shows existed. It returns false when the call was fully handled here (an open of a
// device file replay provides itself).
func (w *world) before(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) bool {
	ok := ev.RetKnown && !ev.Failed()
	if ev.Errno == syscall.ENOENT && c.Path != "" {
		// Whatever was missing, the directories on the way were directories.
		w.dirsAbove(w.abs(t, pathDirfd(nr, c), c.Path))
	}
	if ok || ev.Errno == syscall.ENOENT {
		w.usedAsDir(t, nr, c)
	}
	if ev.RetKnown && ev.Failed() {
		w.inferFailed(t, nr, ev, c)
	}
	if ok {
		w.listedOrEmptied(t, nr, c)
		w.creatEvidence(t, nr, ev, c)
		switch nr {
		case sim.SYS_IO_SUBMIT:
			w.misalignAio(t, ev, c)
		case sim.SYS_READ:
			w.readMountinfo(t, nr, ev, c)
		case sim.SYS_OPEN, sim.SYS_OPENAT:
			w.openedMountinfo(c)
		}
	}
	w.creatBefore(t, nr, ev, c)
	switch nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT:
		return w.inferOpen(t, nr, ev, c, ok)
	case sim.SYS_STAT, sim.SYS_LSTAT, sim.SYS_NEWFSTATAT, sim.SYS_STATX:
		if ok {
			w.inferStat(t, nr, ev, c)
		}
	case sim.SYS_FSTAT:
		if ok {
			w.retypeFd(t, c.Args[0], ev.Arg(1))
			w.adjust(w.fileOf(t, c.Args[0]), ev.Arg(1))
		}
	case sim.SYS_ACCESS, sim.SYS_FACCESSAT, sim.SYS_FACCESSAT2:
		if ok {
			w.inferAccess(t, nr, c)
		}
	case sim.SYS_TRUNCATE, sim.SYS_CHMOD, sim.SYS_LINK, sim.SYS_RENAME, sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2,
		sim.SYS_LINKAT, sim.SYS_UNLINK, sim.SYS_UNLINKAT, sim.SYS_RMDIR, sim.SYS_CHDIR:
		w.inferPathUse(t, nr, ev, c, ok)
		if ok {
			w.inferNewName(t, nr, c)
		}
	case sim.SYS_GETXATTR, sim.SYS_LGETXATTR, sim.SYS_LISTXATTR, sim.SYS_LLISTXATTR,
		sim.SYS_UTIME, sim.SYS_UTIMES, sim.SYS_FUTIMESAT, sim.SYS_STATFS:
		// The path resolved when the call succeeded or failed on the
		// attribute (ENODATA, ERANGE, EOPNOTSUPP).
		if c.Path != "" && (ok || ev.Errno == syscall.ENODATA || ev.Errno == syscall.ERANGE || ev.Errno == syscall.EOPNOTSUPP) {
			w.ensure(w.abs(t, pathDirfd(nr, c), c.Path), vfs.S_IFREG, "")
		}
	case sim.SYS_SYMLINK, sim.SYS_SYMLINKAT:
		if ok {
			w.inferNewName(t, nr, c)
		}
	case sim.SYS_MKDIR, sim.SYS_MKDIRAT:
		abs := w.abs(t, pathDirfd(nr, c), c.Path)
		if ev.Errno == syscall.EEXIST {
			w.ensure(abs, vfs.S_IFDIR, "")
		} else if ok {
			w.ensure(parentDir(abs), vfs.S_IFDIR, "")
		}
	case sim.SYS_READLINK, sim.SYS_READLINKAT:
		w.inferReadlink(t, nr, ev, c, ok)
	case sim.SYS_GETDENTS64, sim.SYS_GETDENTS:
		if ok && ev.Ret > 0 {
			if dir := w.fileOf(t, c.Args[0]); w.isExt(dir) {
				w.entries(dir, ev.Arg(1))
			}
		}
	case sim.SYS_READ, sim.SYS_PREAD64:
		if ok {
			w.inferRead(t, nr, ev, c)
		}
	case sim.SYS_READV, sim.SYS_PREADV, sim.SYS_PREADV2:
		if ok {
			w.inferReadv(t, nr, ev, c)
		}
	case sim.SYS_FALLOCATE:
		if ok {
			w.inferShift(t, c)
		}
	case sim.SYS_IO_SUBMIT:
		// the iocbs Linux took: the first ev.Ret
		if cbs, _ := c.Obj.([]*sim.Iocb); ok && len(cbs) > 0 {
			w.r.noteAioReads(t, uint64(c.Args[0]), cbs[:min(int64(len(cbs)), max(ev.Ret, 0))])
		}
	case sim.SYS_COPY_FILE_RANGE, sim.SYS_SENDFILE:
		if ok {
			w.inferCopySource(t, nr, ev, c)
		}
	case sim.SYS_LSEEK:
		if !ok {
			break
		}
		ino := w.fileOf(t, c.Args[0])
		if !w.isExt(ino) || !ino.IsRegular() {
			break
		}
		switch c.Args[2] {
		case unix.SEEK_END: // the size is revealed
			if size := ev.Ret - c.Args[1]; size >= 0 {
				w.resize(ino, size)
			}
		case unix.SEEK_DATA:
			// Data at ev.Ret: the file is longer than that (ENXIO at or
			// past EOF).
			if ino.Size() <= ev.Ret {
				w.resize(ino, ev.Ret+1)
			}
			w.dataIn(ino, ev.Ret, ev.Ret+1)
		case unix.SEEK_HOLE:
			// A hole at ev.Ret: the file is at least that long (EOF is
			// the last hole), with data from the offset asked up to it.
			if ino.Size() < ev.Ret {
				w.resize(ino, ev.Ret)
			}
			w.dataIn(ino, c.Args[1], ev.Ret)
		}
	}
	return true
}

// usedAsDir: a call that resolved a relative path against a dirfd (or found
// nothing there: ENOENT), or listed or entered an fd (getdents64, fchdir), shows
// that the fd is a directory, whatever the open that made it said (a directory
// opened without O_DIRECTORY).
func (w *world) usedAsDir(t *sim.Task, nr sim.Sysno, c *sim.Call) {
	switch nr {
	case sim.SYS_GETDENTS64, sim.SYS_GETDENTS, sim.SYS_FCHDIR:
		w.dirFd(t, c.Args[0])
		return
	}
	in := sim.Info(nr)
	for k := 0; ; k++ {
		i := in.Slot(sim.ArgDirfd, k)
		if i < 0 {
			return
		}
		p := c.Path
		if in.Args[i+1].Kind == sim.ArgPath2 {
			p = c.Path2
		}
		if fd := c.Args[i]; fd >= 0 && p != "" && p[0] != '/' {
			w.dirFd(t, fd)
		}
	}
}

// inferOpen: an open that succeeded without O_CREAT found its file (a directory
// with O_DIRECTORY); one that created it, or failed with EEXIST, found its
// directory; EISDIR names a directory. The devices replay provides are installed
// here, and the call is not run (false).
func (w *world) inferOpen(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, ok bool) bool {
	flags := int64(unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC) // creat
	if i := sim.Info(nr).Slot(sim.ArgFlags, 0); i >= 0 {
		flags = c.Args[i]
	}
	abs := w.abs(t, pathDirfd(nr, c), c.Path)
	if dev, isDev := device(abs); isDev {
		if ok {
			w.installDevice(t, ev, dev, int(flags))
		}
		return false
	}
	switch {
	case ok && flags&unix.O_CREAT == 0:
		kind := uint32(vfs.S_IFREG)
		if flags&unix.O_DIRECTORY != 0 {
			kind = vfs.S_IFDIR
		}
		w.ensure(abs, kind, "")
	case ok || ev.Errno == syscall.EEXIST:
		w.ensure(parentDir(abs), vfs.S_IFDIR, "")
		if ev.Errno == syscall.EEXIST {
			w.ensure(abs, vfs.S_IFREG, "")
		}
	case ev.Errno == syscall.EISDIR:
		w.ensure(abs, vfs.S_IFDIR, "")
	}
	return true
}

// installDevice puts the device replay provides at the fd the recorded open
// returned.
func (w *world) installDevice(t *sim.Task, ev *strace.Event, dev sim.Special, flags int) {
	if got := lowestFree(t, 0); int64(got) != ev.Ret {
		// fdAllowed's rules, as for the files of the model
		allowed, inherited := w.r.fdAllowed(t, ev, int64(got))
		if !allowed && w.r.opts.Verify {
			w.r.diverge(ev, "fd", itoa(ev.Ret), itoa(int64(got)))
		}
		if t.File(int(ev.Ret)) != nil {
			sim.Send(w.r.top, sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{ev.Ret}})
		}
		if inherited {
			w.r.fillFrom(ev, t, got, int(ev.Ret))
		}
	}
	w.r.installSpecial(t, int(ev.Ret), dev, flags)
}

// inferStat: a successful stat shows the path's type and, for an inferred file,
// its size and mode. A symlink's target is unknown until readlink shows it.
func (w *world) inferStat(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	dirfd := pathDirfd(nr, c)
	st := ev.Arg(sim.Info(nr).Slot(sim.ArgStat, 0))
	if nr == sim.SYS_STATX {
		st = ev.Arg(sim.Info(nr).Slot(sim.ArgStatx, 0))
	}
	if c.Path == "" {
		w.retypeFd(t, dirfd, st)
		w.adjust(w.fileOf(t, dirfd), st)
		return
	}
	kind := statKind(st)
	switch kind {
	case vfs.S_IFREG, vfs.S_IFDIR, vfs.S_IFIFO, vfs.S_IFSOCK:
	case vfs.S_IFLNK:
		if nofollow(nr, c) {
			w.inferLink(w.abs(t, dirfd, c.Path), st)
		}
		return
	default:
		kind = vfs.S_IFREG
	}
	w.adjust(w.ensure(w.abs(t, dirfd, c.Path), kind, ""), st)
}

// nofollow says whether a stat call does not follow a final symlink.
func nofollow(nr sim.Sysno, c *sim.Call) bool {
	switch nr {
	case sim.SYS_LSTAT:
		return true
	case sim.SYS_NEWFSTATAT:
		return c.Args[3]&unix.AT_SYMLINK_NOFOLLOW != 0
	case sim.SYS_STATX:
		return c.Args[2]&unix.AT_SYMLINK_NOFOLLOW != 0
	}
	return false
}

// inferLink makes abs a symlink, as a stat that does not follow links shows it
// (S_IFLNK): its target, which the stat does not show, stands as a name of the
// recorded length (st_size) that resolves nowhere, until a readlink shows it
// (inferReadlink).
func (w *world) inferLink(abs string, st *strace.Node) {
	n := int64(1)
	for _, name := range []string{"st_size", "stx_size"} {
		if f := st.Field(name); f != nil {
			if v, ok := f.Value(); ok && v > 0 && v < 4096 {
				n = v
			}
		}
	}
	if ino := w.ensure(abs, vfs.S_IFLNK, strings.Repeat("?", int(n))); w.isExt(ino) && ino.IsSymlink() {
		w.linkUnknown[ino.Ino()] = true
	}
}

// inferAccess: a successful access found its path; X_OK granted shows an execute
// bit (the model runs as root, which needs one).
func (w *world) inferAccess(t *sim.Task, nr sim.Sysno, c *sim.Call) {
	mode := c.Args[sim.Info(nr).Slot(sim.ArgFlags, 0)]
	ino := w.ensure(w.abs(t, pathDirfd(nr, c), c.Path), vfs.S_IFREG, "")
	if w.isExt(ino) && mode&unix.X_OK != 0 && ino.Mode()&0o111 == 0 {
		w.chmod(ino, ino.Mode()&0o7777|0o111)
	}
}

// inferPathUse: the namespace calls that found their path. rmdir, chdir and
// unlinkat(AT_REMOVEDIR) found a directory, as did an unlink that failed with
// EISDIR (what rm -r tries first); an rmdir that failed with ENOTDIR found a file.
func (w *world) inferPathUse(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, ok bool) {
	abs := w.abs(t, pathDirfd(nr, c), c.Path)
	removeDir := nr == sim.SYS_RMDIR || nr == sim.SYS_UNLINKAT && c.Args[2]&unix.AT_REMOVEDIR != 0
	switch {
	case ok && (removeDir || nr == sim.SYS_CHDIR):
		w.ensure(abs, vfs.S_IFDIR, "")
	case ok:
		w.ensure(abs, vfs.S_IFREG, "")
	case ev.Errno == syscall.EISDIR && (nr == sim.SYS_UNLINK || nr == sim.SYS_UNLINKAT && !removeDir):
		w.ensure(abs, vfs.S_IFDIR, "")
	case ev.Errno == syscall.ENOTDIR && removeDir:
		w.ensure(abs, vfs.S_IFREG, "")
	}
	if nr == sim.SYS_RENAMEAT2 && (ok && c.Args[4]&unix.RENAME_EXCHANGE != 0 ||
		ev.Errno == syscall.EEXIST && c.Args[4]&unix.RENAME_NOREPLACE != 0) {
		// Exchanged with, or not replacing, a name that existed.
		w.ensure(w.abs(t, c.Args[2], c.Path2), vfs.S_IFREG, "")
	}
}

// inferNewName: a call that made a name (symlink, link, rename) shows that
// the directory the name went in existed.
func (w *world) inferNewName(t *sim.Task, nr sim.Sysno, c *sim.Call) {
	var abs string
	switch nr {
	case sim.SYS_SYMLINK, sim.SYS_SYMLINKAT:
		abs = w.abs(t, pathDirfd(nr, c), c.Path)
	case sim.SYS_LINK, sim.SYS_LINKAT, sim.SYS_RENAME, sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2:
		dirfd := int64(atFdcwd)
		if i := sim.Info(nr).Slot(sim.ArgDirfd, 1); i >= 0 {
			dirfd = c.Args[i]
		}
		abs = w.abs(t, dirfd, c.Path2)
	default:
		return
	}
	if abs != "" {
		w.ensure(parentDir(abs), vfs.S_IFDIR, "")
	}
}

// inferReadlink: EINVAL names something that is not a link; a target shown whole
// names a link.
func (w *world) inferReadlink(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, ok bool) {
	abs := w.abs(t, pathDirfd(nr, c), c.Path)
	if ev.Errno == syscall.EINVAL {
		w.ensure(abs, vfs.S_IFREG, "")
	}
	if !ok {
		return
	}
	if b, trunc, sok := ev.Str(sim.Info(nr).Slot(sim.ArgOutBuf, 0)); sok && !trunc && int64(len(b)) == ev.Ret && int64(len(b)) < int64(len(c.Buf)) {
		if l, err := w.fs.Root().Resolve(abs, false); err == nil && l.IsSymlink() && w.linkUnknown[l.Ino()] {
			// the link a stat showed: now its target is known
			delete(w.linkUnknown, l.Ino())
			if w.fs.Root().Unlink(abs) == nil {
				delete(w.ext, l.Ino())
				w.changed(0)
			}
		}
		w.ensure(abs, vfs.S_IFLNK, string(b))
	}
}

// inferRead: a read of an inferred file shows its bytes, and a short read its size.
func (w *world) inferRead(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	ino := w.fileOf(t, c.Args[0])
	if !w.isExt(ino) || !ino.IsRegular() {
		return
	}
	off := c.Args[3]
	if nr == sim.SYS_READ {
		off = w.r.curPos
	}
	w.inject(ino, off, ev, 1, c.Args[2])
}

// maxDataFill is how much of inferred files' holes dataIn fills in one replay.
const maxDataFill = 256 << 20

// dataIn makes [from, to) of an inferred file data where the model has a hole,
// as a recorded SEEK_DATA or SEEK_HOLE shows it: zeros, the bytes being unknown
// (a later read's inference writes those it shows). Past maxDataFill bytes in
// all the rest stays a hole, and the call diverges rather than cost that much
// memory.
func (w *world) dataIn(ino *vfs.Inode, from, to int64) {
	if from < 0 {
		return
	}
	to = min(to, ino.Size(), from+maxDataFill-w.filled)
	changed := false
	for off := from; off < to; {
		d, err := ino.SeekData(off)
		if err != nil {
			d = to // no data up to EOF
		}
		for hole := min(d, to); off < hole; {
			n := min(hole-off, int64(len(zeroBlock)))
			_, _ = ino.WriteAt(zeroBlock[:n], off)
			off += n
			w.filled += n
			changed = true
		}
		if d >= to {
			break
		}
		h, err := ino.SeekHole(d)
		if err != nil {
			break
		}
		off = h
	}
	if changed {
		w.changed(ino.Ino())
	}
}

var zeroBlock = make([]byte, 1<<20)

// inferReadv: readv, preadv and preadv2 of an inferred file show the bytes of
// each iovec in turn, and a short read the size.
func (w *world) inferReadv(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	ino := w.fileOf(t, c.Args[0])
	if !w.isExt(ino) || !ino.IsRegular() {
		return
	}
	off := c.Args[3]
	if nr == sim.SYS_READV || nr == sim.SYS_PREADV2 && off == -1 {
		off = w.r.curPos
	}
	if off < 0 {
		return
	}
	count := int64(0)
	for _, b := range c.Iov {
		count += int64(len(b))
	}
	got := ev.Ret
	if end := off + got; got < count || ino.Size() < end {
		w.resize(ino, end)
	}
	arr := ev.Arg(1)
	if arr == nil || arr.Kind != strace.NodeArray {
		return
	}
	for k := 0; k < len(arr.Kids) && k < len(c.Iov) && got > 0; k++ {
		n := min(int64(len(c.Iov[k])), got)
		if base := arr.Kids[k].Field("iov_base"); base != nil && base.Kind == strace.NodeStr {
			if b := base.Text; len(b) > 0 {
				w.writeAt(ino, b[:min(int64(len(b)), n)], off)
			}
		}
		off += n
		got -= n
	}
}

// inferShift: a fallocate that collapsed or inserted a range of an inferred
// file shows its size: a collapse ends before EOF, an insert starts before it
// (ext4_collapse_range, ext4_insert_range).
func (w *world) inferShift(t *sim.Task, c *sim.Call) {
	ino := w.fileOf(t, c.Args[0])
	if !w.isExt(ino) || !ino.IsRegular() {
		return
	}
	least := int64(-1)
	switch mode, off, n := c.Args[1], c.Args[2], c.Args[3]; mode {
	case vfs.FallocCollapseRange:
		least = off + n + 1
	case vfs.FallocInsertRange:
		least = off + 1
	}
	if least > ino.Size() {
		w.resize(ino, least)
	}
}

// inferCopySource: copy_file_range or sendfile from an inferred file shows its
// size (the bytes stay unknown).
func (w *world) inferCopySource(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	inIdx, offIdx, count := 0, 1, c.Args[4]
	if nr == sim.SYS_SENDFILE {
		inIdx, offIdx, count = 1, 2, c.Args[3]
	}
	f := t.File(int(c.Args[inIdx]))
	if f == nil || !w.isExt(f.Inode()) || !f.Inode().IsRegular() {
		return
	}
	off := c.Args[offIdx]
	if off == sim.NullOffset {
		off = f.Offset()
	}
	ino := f.Inode()
	if end := off + ev.Ret; ev.Ret < count && ino.Size() != end || ino.Size() < end {
		w.resize(ino, end)
	}
}

// inject writes into an inferred file the bytes a recorded read shows, and sets the
// size a short read reveals.
func (w *world) inject(ino *vfs.Inode, off int64, ev *strace.Event, idx int, count int64) {
	if off < 0 {
		return
	}
	got := ev.Ret
	b, _, _ := ev.Str(idx)
	if int64(len(b)) > got {
		b = b[:got]
	}
	if end := off + got; got < count || ino.Size() < end {
		w.resize(ino, end)
	}
	if len(b) > 0 {
		w.writeAt(ino, b, off)
	}
}

// entries creates in an inferred directory the entries a recorded getdents shows.
func (w *world) entries(dir *vfs.Inode, arr *strace.Node) {
	if arr == nil || arr.Kind != strace.NodeArray {
		return
	}
	base := dir.Path()
	for k := range arr.Kids {
		el := &arr.Kids[k]
		name := el.Field("d_name")
		if name == nil || name.Kind != strace.NodeStr || name.Truncated {
			continue
		}
		n := string(name.Text)
		if n == "." || n == ".." || bytes.ContainsRune(name.Text, '/') {
			continue
		}
		kind := uint32(vfs.S_IFREG)
		if ty := el.Field("d_type"); ty != nil && string(ty.Raw) == "DT_DIR" {
			kind = vfs.S_IFDIR
		}
		w.ensure(pathpkg.Join(base, n), kind, "")
	}
}

// after records what the call did to the namespace and which written bytes are
// unknown.
func (w *world) after(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, res sim.Result) {
	w.creatChanged(t, nr, ev, c, res)
	w.creatAfter(t, ev, res)
	if res.Errno != 0 {
		return
	}
	switch nr {
	case sim.SYS_CHMOD, sim.SYS_FCHMOD, sim.SYS_FCHMODAT, sim.SYS_FCHMODAT2, sim.SYS_SETXATTR, sim.SYS_LSETXATTR, sim.SYS_FSETXATTR:
		if len(w.permUnknown) > 0 {
			w.permKnown(t, nr, c)
		}
	case sim.SYS_UNLINK, sim.SYS_RMDIR, sim.SYS_UNLINKAT, sim.SYS_RENAME, sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2:
		w.removed[w.abs(t, pathDirfd(nr, c), c.Path)] = true
	case sim.SYS_WRITE, sim.SYS_PWRITE64, sim.SYS_WRITEV, sim.SYS_PWRITEV, sim.SYS_PWRITEV2:
		w.afterWrite(t, nr, ev, c, res)
	case sim.SYS_IO_SUBMIT:
		w.afterSubmit(t, ev, res)
	case sim.SYS_MMAP:
		w.afterMmap(t, ev, c)
	case sim.SYS_COPY_FILE_RANGE, sim.SYS_SENDFILE:
		w.afterCopy(t, nr, c, res)
	}
}

// permKnown: the permission bits of the file a chmod or an ACL set are the
// trace's again.
func (w *world) permKnown(t *sim.Task, nr sim.Sysno, c *sim.Call) {
	if fd := sim.Info(nr).Slot(sim.ArgFd, 0); fd >= 0 {
		if ino := w.fileOf(t, c.Args[fd]); ino != nil {
			delete(w.permUnknown, ino.Ino())
		}
		return
	}
	if ino, err := w.fs.Root().Resolve(w.abs(t, pathDirfd(nr, c), c.Path), nr != sim.SYS_LSETXATTR); err == nil {
		delete(w.permUnknown, ino.Ino())
	}
}

// afterWrite: the bytes of a write that the trace did not show (strace -s cut
// them) are unknown, the shown ones known.
func (w *world) afterWrite(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, res sim.Result) {
	if ino, start, pieces := w.written(t, nr, ev, c, res.Ret, false); ino != nil {
		w.wrote(ino, start, res.Ret, pieces)
	}
}

// written returns where a write of ret bytes (the call c of event ev) wrote
// and its pieces; ino is nil when it wrote no file. Every shape of write is
// one: write and pwrite64 show one string, writev, pwritev and pwritev2 a
// string per iovec (and strace may cut the array itself after -s elements).
// before says that the call has not run yet: an append then starts at the
// file's size.
func (w *world) written(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, ret int64, before bool) (ino *vfs.Inode, start int64, pieces []piece) {
	f := t.File(int(c.Args[0]))
	if f == nil || f.Inode() == nil || !f.Inode().IsRegular() || ret <= 0 {
		return nil, 0, nil
	}
	start = c.Args[3]
	rwf := int64(0)
	if nr == sim.SYS_PWRITEV2 {
		rwf = c.Args[4]
	}
	switch {
	case (f.Flags()&unix.O_APPEND != 0 || rwf&unix.RWF_APPEND != 0) && rwf&unix.RWF_NOAPPEND == 0:
		start = f.Inode().Size()
		if !before {
			start -= ret
		}
	case nr == sim.SYS_WRITE, nr == sim.SYS_WRITEV, nr == sim.SYS_PWRITEV2 && start == -1:
		start = w.r.curPos
	}
	if nr == sim.SYS_WRITE || nr == sim.SYS_PWRITE64 {
		pieces = []piece{{ret, int64(len(shown(ev, 1)))}}
	} else {
		pieces = iovPieces(ev, ev.Arg(1), ret)
	}
	return f.Inode(), start, pieces
}

// afterSubmit: the bytes of the write iocbs io_submit queued that the trace
// did not show are unknown, the shown ones known.
func (w *world) afterSubmit(t *sim.Task, ev *strace.Event, res sim.Result) {
	w.submitted(t, ev, res.Ret, func(ino *vfs.Inode, off, n int64, pieces []piece) { w.wrote(ino, off, n, pieces) })
}

// submitted calls fn for each write iocb (IOCB_CMD_PWRITE, IOCB_CMD_PWRITEV)
// of the first ret that io_submit event ev submitted on a regular file: its
// file, aio_offset, length and pieces. They are taken as written once
// io_submit has returned, as the model writes them.
func (w *world) submitted(t *sim.Task, ev *strace.Event, ret int64, fn func(ino *vfs.Inode, off, n int64, pieces []piece)) {
	arr := ev.Arg(2)
	if arr == nil || arr.Kind != strace.NodeArray {
		return
	}
	for k := range min(int64(len(arr.Kids)), ret) {
		el := &arr.Kids[k]
		if el.Kind != strace.NodeStruct {
			continue
		}
		get := func(name string) int64 {
			if fl := el.Field(name); fl != nil {
				v, _ := fl.Value()
				return v
			}
			return 0
		}
		op, fd, off := get("aio_lio_opcode"), get("aio_fildes"), get("aio_offset")
		var pieces []piece
		switch op {
		case sim.IOCB_CMD_PWRITE:
			n := get("aio_nbytes")
			pieces = []piece{{n, 0}}
			if b := el.Field("aio_buf"); b != nil && b.Kind == strace.NodeStr {
				pieces[0].shown = int64(len(b.Text))
			}
		case sim.IOCB_CMD_PWRITEV:
			pieces = iovPieces(nil, el.Field("aio_buf"), -1)
		default:
			continue
		}
		f := t.File(int(fd))
		if f == nil || f.Inode() == nil || !f.Inode().IsRegular() {
			continue
		}
		var n int64
		for _, p := range pieces {
			n += max(p.n, 0)
		}
		fn(f.Inode(), off, n, pieces)
	}
}

// piece is one buffer of a write: n bytes, of which the trace shows the
// first shown.
type piece struct{ n, shown int64 }

// iovPieces returns the pieces of the iovec array arr that a call wrote, ret
// bytes in all (-1: every iovec's length). An array strace cut after -s
// elements ends with a piece of the bytes it does not show (iovArg). With ev's
// `-e write=` dump, every byte the dump holds is shown.
func iovPieces(ev *strace.Event, arr *strace.Node, ret int64) []piece {
	if ev != nil && len(ev.Dump) > 0 {
		return []piece{{ret, int64(len(ev.Dump))}}
	}
	if arr == nil || arr.Kind != strace.NodeArray {
		return []piece{{max(ret, 0), 0}}
	}
	var out []piece
	var total int64
	for k := range arr.Kids {
		el := &arr.Kids[k]
		if el.Kind == strace.NodeEllipsis {
			break
		}
		var p piece
		if ln := el.Field("iov_len"); ln != nil {
			p.n, _ = ln.Value()
		}
		if base := el.Field("iov_base"); base != nil && base.Kind == strace.NodeStr {
			p.shown = int64(len(base.Text))
		}
		total += p.n
		out = append(out, p)
	}
	if ret > total {
		out = append(out, piece{ret - total, 0})
	}
	return out
}

// wrote records a write of n bytes at start of ino, made of pieces in order:
// the shown prefix of each is known, its rest unknown.
func (w *world) wrote(ino *vfs.Inode, start, n int64, pieces []piece) {
	id := ino.Ino()
	w.unknown[id] = cut(w.unknown[id], start, start+n)
	eachUnknown(start, n, pieces, func(s span, _ piece) { w.addUnknown(ino, s) })
	w.keepShared(id)
}

// eachUnknown calls fn with each range of a write of n bytes at start, made of
// pieces in order, that the trace does not show, and the piece it is in.
func eachUnknown(start, n int64, pieces []piece, fn func(s span, p piece)) {
	pos, left := start, n
	for _, p := range pieces {
		if left <= 0 {
			break
		}
		m := min(max(p.n, 0), left)
		if known := min(max(p.shown, 0), m); known < m {
			fn(span{pos + known, pos + m}, piece{m, known})
		}
		pos += m
		left -= m
	}
}

// afterMmap: a shared writable mapping changes the file with stores, which no
// trace shows: its bytes are unknown from now on, even after a read shows them
// (keepShared).
func (w *world) afterMmap(t *sim.Task, ev *strace.Event, c *sim.Call) {
	prot, flags, length, off := c.Args[2], c.Args[3], c.Args[1], c.Args[5]
	if kind := flags & unix.MAP_TYPE; prot&unix.PROT_WRITE == 0 || kind != unix.MAP_SHARED && kind != unix.MAP_SHARED_VALIDATE {
		return
	}
	if f := t.File(int(c.Args[4])); f != nil && f.Inode() != nil && f.Inode().IsRegular() && length > 0 {
		id := f.Inode().Ino()
		if ev.RetKnown && len(w.maps) < maxMaps {
			w.maps = append(w.maps, mapping{t.Group(), uint64(ev.Ret), uint64(length), id, span{off, off + length}})
		}
		w.addUnknown(f.Inode(), span{off, off + length})
		w.tell(f.Inode(), span{off, off + length}, mapped{ev})
	}
}

// afterCopy: the bytes copy_file_range or sendfile copied are as known as the
// ones they were copied from.
func (w *world) afterCopy(t *sim.Task, nr sim.Sysno, c *sim.Call, res sim.Result) {
	inFd, inOff, outFd, outOff := c.Args[0], c.Args[1], c.Args[2], c.Args[3]
	if nr == sim.SYS_SENDFILE {
		inFd, inOff, outFd, outOff = c.Args[1], c.Args[2], c.Args[0], sim.NullOffset
	}
	in, out, n := t.File(int(inFd)), t.File(int(outFd)), res.Ret
	if in == nil || out == nil || in.Inode() == nil || out.Inode() == nil || n <= 0 {
		return
	}
	if inOff == sim.NullOffset {
		inOff = in.Offset() - n // the call moved the fd's offset by n
	}
	if outOff == sim.NullOffset {
		outOff = out.Offset() - n
	}
	w.copySpans(in.Inode(), inOff, out.Inode(), outOff, n)
}

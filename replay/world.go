package replay

import (
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"iosim/sim"
	"iosim/strace"
	"iosim/vfs"
)

// world infers the state the traced program found, and tracks which bytes of the
// model's files the trace actually showed.
type world struct {
	r       *replayer
	fs      *vfs.FS
	cwd     string
	ext     map[uint64]bool   // inode numbers of inferred (external) inodes
	removed map[string]bool   // absolute paths the trace removed: never inferred again
	unknown map[uint64][]span // per inode: byte ranges written with bytes the trace did not show
	// maps holds the live shared writable mappings of files, by the
	// address the trace shows: stores may change their ranges at any time,
	// until munmap, exec or exit (see keepShared).
	maps []mapping
	// permUnknown holds the inodes whose permission bits an access ACL that
	// the trace did not show (-s) set, until the trace sets them again.
	permUnknown map[uint64]bool
	inferred    int // paths created by inference
}

// span is a byte range [off, end).
type span struct{ off, end int64 }

func newWorld(r *replayer) *world {
	return &world{r: r, fs: r.fs, ext: map[uint64]bool{}, removed: map[string]bool{}, unknown: map[uint64][]span{}, permUnknown: map[uint64]bool{}}
}

// abs returns the absolute, lexically cleaned form of path as t would resolve it
// relative to dirfd (AT_FDCWD or a directory fd); "" when it cannot tell.
//
// A trailing slash is kept (it says the path names a directory); ensure reads it.
func (w *world) abs(t *sim.Task, dirfd int64, p string) string {
	if p == "" {
		return ""
	}
	slash := ""
	if len(p) > 1 && p[len(p)-1] == '/' {
		slash = "/"
	}
	if p[0] == '/' {
		return strings.TrimSuffix(pathpkg.Clean(p), "/") + slash
	}
	var base string
	if dirfd == atFdcwd {
		base = t.Group().Cwd().Path()
	} else if f := t.File(int(dirfd)); f != nil && f.Inode() != nil {
		base = f.Inode().Path()
	}
	if base == "" {
		return ""
	}
	return strings.TrimSuffix(pathpkg.Join(base, p), "/") + slash
}

// dirsAbove makes every inferred, empty regular file on the way to abs a
// directory: a recorded ENOENT or a success below it shows it is one (the model
// would answer ENOTDIR).
func (w *world) dirsAbove(abs string) {
	abs = strings.TrimSuffix(abs, "/")
	for i := 1; i < len(abs); i++ {
		if abs[i] != '/' {
			continue
		}
		if ino, err := w.fs.Root().Resolve(abs[:i], true); err == nil && w.isExt(ino) && ino.IsRegular() && ino.Size() == 0 {
			w.ensure(abs[:i], vfs.S_IFDIR, "")
		}
	}
}

// isProcFd reports whether abs goes through a /proc/PID/fd/N magic link, which
// the kernel model resolves itself.
func isProcFd(abs string) bool {
	rest, ok := strings.CutPrefix(abs, "/proc/")
	if !ok {
		return false
	}
	_, rest, _ = strings.Cut(rest, "/")
	return strings.HasPrefix(rest, "fd/")
}

// isExt reports whether ino was inferred (external state).
func (w *world) isExt(ino *vfs.Inode) bool { return ino != nil && w.ext[ino.Ino()] }

// ensure makes abs exist with the given type (S_IFREG, S_IFDIR or S_IFLNK with
// target) when the model does not have it, creating missing parents as
// directories. It never re-creates a path the trace removed, and never changes what
// the trace itself made. It returns the inode abs names, or nil.
func (w *world) ensure(abs string, kind uint32, target string) *vfs.Inode {
	if abs == "" || abs[0] != '/' || isProcFd(abs) {
		return nil
	}
	if len(abs) > 1 && abs[len(abs)-1] == '/' {
		abs, kind = strings.TrimRight(abs, "/"), vfs.S_IFDIR
	}
	root := w.fs.Root()
	if ino, err := root.Resolve(abs, kind != vfs.S_IFLNK); err == nil {
		switch {
		case w.isExt(ino) && ino.IsRegular() && kind == vfs.S_IFDIR && ino.Size() == 0,
			w.isExt(ino) && !ino.IsDir() && kind == vfs.S_IFLNK && !ino.IsSymlink():
			// An inferred file turned out to be a directory or a symlink.
			_ = root.Unlink(abs)
		default:
			return ino
		}
	}
	parts := strings.Split(strings.TrimPrefix(abs, "/"), "/")
	cur := ""
	for k, name := range parts {
		cur += "/" + name
		last := k == len(parts)-1
		if last {
			if l, err := root.Resolve(cur, false); err == nil && l.IsSymlink() {
				// a link whose target is missing: a call that follows it
				// would create the target, one that does not (unlink,
				// lstat) finds the link; inference, which is not told
				// which the call is, invents neither
				return nil
			}
		}
		ino, err := root.Resolve(cur, true)
		if err == nil {
			if !last && !ino.IsDir() {
				if !w.isExt(ino) || ino.Size() != 0 {
					return nil
				}
				_ = root.Unlink(cur)
			} else {
				if last {
					return ino
				}
				continue
			}
		} else if err != syscall.ENOENT || w.removed[cur] {
			return nil
		}
		switch {
		case !last || kind == vfs.S_IFDIR:
			if root.Mkdir(cur, 0o755) != nil {
				return nil
			}
		case kind == vfs.S_IFLNK:
			if target == "" || root.Symlink(target, cur) != nil {
				return nil
			}
		default:
			if _, _, err := root.Open(cur, syscall.O_CREAT|syscall.O_RDWR, 0o644); err != nil {
				return nil
			}
		}
		ino, err = root.Resolve(cur, false)
		if err != nil {
			return nil
		}
		w.ext[ino.Ino()] = true
		w.inferred++
		w.settle(ino)
		if last {
			return ino
		}
	}
	return nil
}

// aclNotShown notes that the call c, a successful setxattr of an access
// ACL whose value the trace does not show (or of an attribute whose name it
// does not show), may have set its file's permission bits to something
// unknown.
func (w *world) aclNotShown(t *sim.Task, nr sim.Sysno, c *sim.Call) {
	var ino *vfs.Inode
	if nr == sim.SYS_FSETXATTR {
		ino = w.fileOf(t, c.Args[0])
	} else if i, err := w.fs.Root().Resolve(w.abs(t, atFdcwd, c.Path), nr == sim.SYS_SETXATTR); err == nil {
		ino = i
	}
	if ino != nil {
		w.permUnknown[ino.Ino()] = true
	}
}

// adjust makes an inferred inode agree with what a recorded stat shows.
func (w *world) adjust(ino *vfs.Inode, st *strace.Node) {
	if ino == nil || st == nil || !w.isExt(ino) {
		return
	}
	if f := st.Field("st_size"); f != nil && ino.IsRegular() {
		if v, ok := f.Value(); ok && v != ino.Size() && v >= 0 {
			_ = ino.Truncate(v)
		}
	}
	if f := st.Field("st_mode"); f != nil {
		if v, ok := f.Value(); ok && uint32(v)&0o7777 != ino.Mode()&0o7777 {
			_ = ino.Chmod(uint32(v) & 0o7777)
		}
	}
	w.settle(ino)
}

// retypeFd handles an inferred file opened without O_DIRECTORY that a recorded
// fstat shows to be a directory: the path becomes a directory and the fd is opened
// again on it.
func (w *world) retypeFd(t *sim.Task, fd int64, st *strace.Node) {
	f := t.File(int(fd))
	if f == nil || f.Inode() == nil || !w.isExt(f.Inode()) || statKind(st) != vfs.S_IFDIR || f.Inode().IsDir() {
		return
	}
	p := f.Inode().Path()
	if p == "" || w.ensure(p, vfs.S_IFDIR, "") == nil {
		return
	}
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY
	if r := w.r.k.Syscall(sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{fd, syscall.F_GETFD}}); r.Errno == 0 && r.Ret&syscall.FD_CLOEXEC != 0 {
		flags |= syscall.O_CLOEXEC
	}
	_ = w.r.installPath(t, int(fd), p, flags)
}

// statKind returns the file type a recorded stat struct shows, or 0.
func statKind(st *strace.Node) uint32 {
	if st == nil {
		return 0
	}
	if f := st.Field("st_mode"); f != nil {
		if v, ok := f.Value(); ok {
			return uint32(v) & vfs.S_IFMT
		}
	}
	if f := st.Field("stx_mode"); f != nil {
		if v, ok := f.Value(); ok {
			return uint32(v) & vfs.S_IFMT
		}
	}
	return 0
}

// devices are the special files replay provides itself.
func device(abs string) (sim.Special, bool) {
	switch abs {
	case "/dev/null":
		return sim.DevNull{}, true
	case "/dev/zero":
		return sim.DevZero{}, true
	case "/dev/full", "/dev/urandom", "/dev/random", "/dev/tty", "/dev/console":
		return &sim.Placeholder{Kind: vfs.S_IFCHR}, true
	}
	return nil, false
}

func (w *world) fileOf(t *sim.Task, fd int64) *vfs.Inode {
	if f := t.File(int(fd)); f != nil {
		return f.Inode()
	}
	return nil
}

// before prepares the world for the call of ev: it infers what the recorded result
// shows existed. It returns false when the call was fully handled here (an open of a
// device file replay provides itself).
func (w *world) before(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) bool {
	ok := ev.RetKnown && !ev.Failed()
	if ev.Errno == syscall.ENOENT && c.Path != "" {
		// Whatever was missing, the directories on the way were directories.
		dirfd := int64(atFdcwd)
		if _, at, _ := fdArgs(nr); at == 0 {
			dirfd = c.Args[0]
		}
		w.dirsAbove(w.abs(t, dirfd, c.Path))
	}
	switch nr {
	case sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT:
		dirfd, flags := int64(atFdcwd), c.Args[1]
		switch nr {
		case sim.SYS_OPENAT:
			dirfd, flags = c.Args[0], c.Args[2]
		case sim.SYS_CREAT:
			flags = syscall.O_CREAT | syscall.O_WRONLY | syscall.O_TRUNC
		}
		abs := w.abs(t, dirfd, c.Path)
		if dev, isDev := device(abs); isDev {
			if ok {
				if got := lowestFree(t, 0); int64(got) != ev.Ret {
					// fdAllowed's rules, as for the files of the model
					allowed, inherited := w.r.fdAllowed(t, ev, int64(got))
					if !allowed && w.r.opts.Verify {
						w.r.diverge(ev, "fd", itoa(ev.Ret), itoa(int64(got)))
					}
					if t.File(int(ev.Ret)) != nil {
						w.r.top.Syscall(sim.Call{Nr: sim.SYS_CLOSE, Task: t, Args: [6]int64{ev.Ret}})
					}
					if inherited {
						w.r.fill(t, got, int(ev.Ret))
					}
				}
				w.r.installSpecial(t, int(ev.Ret), dev, int(flags))
			}
			return false
		}
		switch {
		case ok && flags&syscall.O_CREAT == 0:
			kind := uint32(vfs.S_IFREG)
			if flags&syscall.O_DIRECTORY != 0 {
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
	case sim.SYS_STAT, sim.SYS_LSTAT, sim.SYS_NEWFSTATAT, sim.SYS_STATX:
		if !ok {
			return true
		}
		dirfd, stIdx := int64(atFdcwd), 1
		if nr == sim.SYS_NEWFSTATAT || nr == sim.SYS_STATX {
			dirfd, stIdx = c.Args[0], 2
			if nr == sim.SYS_STATX {
				stIdx = 4
			}
		}
		st := ev.Arg(stIdx)
		if c.Path == "" {
			w.retypeFd(t, dirfd, st)
			w.adjust(w.fileOf(t, dirfd), st)
			return true
		}
		kind := statKind(st)
		switch kind {
		case vfs.S_IFREG, vfs.S_IFDIR:
		case vfs.S_IFLNK:
			kind = 0 // the target is unknown until readlink shows it
		default:
			kind = vfs.S_IFREG
		}
		if kind != 0 {
			ino := w.ensure(w.abs(t, dirfd, c.Path), kind, "")
			w.adjust(ino, st)
		}
	case sim.SYS_FSTAT:
		if ok {
			w.retypeFd(t, c.Args[0], ev.Arg(1))
			w.adjust(w.fileOf(t, c.Args[0]), ev.Arg(1))
		}
	case sim.SYS_ACCESS, sim.SYS_FACCESSAT, sim.SYS_FACCESSAT2:
		if ok {
			dirfd, mode := int64(atFdcwd), c.Args[1]
			if nr != sim.SYS_ACCESS {
				dirfd, mode = c.Args[0], c.Args[2]
			}
			ino := w.ensure(w.abs(t, dirfd, c.Path), vfs.S_IFREG, "")
			if w.isExt(ino) && mode&1 != 0 && ino.Mode()&0o111 == 0 {
				_ = ino.Chmod(ino.Mode()&0o7777 | 0o111) // X_OK succeeded: it is executable
			}
		}
	case sim.SYS_TRUNCATE, sim.SYS_CHMOD, sim.SYS_UNLINK, sim.SYS_LINK, sim.SYS_RENAME:
		if ok {
			w.ensure(w.abs(t, atFdcwd, c.Path), vfs.S_IFREG, "")
		}
	case sim.SYS_UNLINKAT, sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2, sim.SYS_LINKAT:
		if ok {
			kind := uint32(vfs.S_IFREG)
			if nr == sim.SYS_UNLINKAT && c.Args[2]&0x200 != 0 {
				kind = vfs.S_IFDIR
			}
			w.ensure(w.abs(t, c.Args[0], c.Path), kind, "")
		}
	case sim.SYS_CHDIR, sim.SYS_RMDIR:
		if ok || (nr == sim.SYS_UNLINK && ev.Errno == syscall.EISDIR) {
			w.ensure(w.abs(t, atFdcwd, c.Path), vfs.S_IFDIR, "")
		} else if nr == sim.SYS_RMDIR && ev.Errno == syscall.ENOTDIR {
			w.ensure(w.abs(t, atFdcwd, c.Path), vfs.S_IFREG, "")
		}
	case sim.SYS_MKDIR, sim.SYS_MKDIRAT:
		dirfd := int64(atFdcwd)
		if nr == sim.SYS_MKDIRAT {
			dirfd = c.Args[0]
		}
		abs := w.abs(t, dirfd, c.Path)
		if ev.Errno == syscall.EEXIST {
			w.ensure(abs, vfs.S_IFDIR, "")
		} else if ok {
			w.ensure(parentDir(abs), vfs.S_IFDIR, "")
		}
	case sim.SYS_READLINK, sim.SYS_READLINKAT:
		dirfd, bi := int64(atFdcwd), 1
		if nr == sim.SYS_READLINKAT {
			dirfd, bi = c.Args[0], 2
		}
		if ev.Errno == syscall.EINVAL {
			w.ensure(w.abs(t, dirfd, c.Path), vfs.S_IFREG, "")
		}
		if ok {
			if b, trunc, sok := ev.Str(bi); sok && !trunc && int64(len(b)) == ev.Ret && int64(len(b)) < int64(len(c.Buf)) {
				w.ensure(w.abs(t, dirfd, c.Path), vfs.S_IFLNK, string(b))
			}
		}
	case sim.SYS_GETDENTS64, sim.SYS_GETDENTS:
		if ok && ev.Ret > 0 {
			dir := w.fileOf(t, c.Args[0])
			if w.isExt(dir) {
				w.entries(dir, ev.Arg(1))
			}
		}
	case sim.SYS_READ, sim.SYS_PREAD64:
		if !ok {
			return true
		}
		ino := w.fileOf(t, c.Args[0])
		if !w.isExt(ino) || !ino.IsRegular() {
			return true
		}
		off := c.Args[3]
		if nr == sim.SYS_READ {
			off = w.r.curPos
		}
		w.inject(ino, off, ev, 1, c.Args[2])
	case sim.SYS_COPY_FILE_RANGE, sim.SYS_SENDFILE:
		inIdx, offIdx, count := 0, 1, c.Args[4]
		if nr == sim.SYS_SENDFILE {
			inIdx, offIdx, count = 1, 2, c.Args[3]
		}
		f := t.File(int(c.Args[inIdx]))
		if !ok || f == nil || !w.isExt(f.Inode()) || !f.Inode().IsRegular() {
			return true
		}
		off := c.Args[offIdx]
		if off == sim.NullOffset {
			off = f.Offset()
		}
		ino := f.Inode()
		if end := off + ev.Ret; ev.Ret < count && ino.Size() != end || ino.Size() < end {
			_ = ino.Truncate(end) // the bytes are unknown; the size is shown
		}
	case sim.SYS_LSEEK:
		if ok && c.Args[2] == 2 { // SEEK_END: the size is revealed
			if ino := w.fileOf(t, c.Args[0]); w.isExt(ino) && ino.IsRegular() {
				if size := ev.Ret - c.Args[1]; size >= 0 && size != ino.Size() {
					_ = ino.Truncate(size)
				}
			}
		}
	}
	return true
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
	if got < count {
		if end := off + got; ino.Size() != end {
			_ = ino.Truncate(end)
		}
	} else if end := off + got; ino.Size() < end {
		_ = ino.Truncate(end)
	}
	if len(b) > 0 {
		_, _ = ino.WriteAt(b, off)
	}
	w.settle(ino)
}

// settle tells Options.Settle that ino now stands for state from before the
// trace.
func (w *world) settle(ino *vfs.Inode) {
	if w.r.opts.Settle != nil {
		w.r.opts.Settle(ino)
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
		if n == "." || n == ".." || strings.Contains(n, "/") {
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
	if res.Errno != 0 {
		return
	}
	switch nr {
	case sim.SYS_CHMOD, sim.SYS_FCHMOD, sim.SYS_FCHMODAT, sim.SYS_FCHMODAT2, sim.SYS_SETXATTR, sim.SYS_LSETXATTR, sim.SYS_FSETXATTR:
		if len(w.permUnknown) > 0 { // the bits are the trace's again
			if nr == sim.SYS_FCHMOD || nr == sim.SYS_FSETXATTR {
				if ino := w.fileOf(t, c.Args[0]); ino != nil {
					delete(w.permUnknown, ino.Ino())
				}
			} else if dirfd := int64(atFdcwd); true {
				if nr == sim.SYS_FCHMODAT || nr == sim.SYS_FCHMODAT2 {
					dirfd = c.Args[0]
				}
				if ino, err := w.fs.Root().Resolve(w.abs(t, dirfd, c.Path), nr != sim.SYS_LSETXATTR); err == nil {
					delete(w.permUnknown, ino.Ino())
				}
			}
		}
	case sim.SYS_UNLINK, sim.SYS_RMDIR:
		w.removed[w.abs(t, atFdcwd, c.Path)] = true
	case sim.SYS_UNLINKAT:
		w.removed[w.abs(t, c.Args[0], c.Path)] = true
	case sim.SYS_RENAME:
		w.removed[w.abs(t, atFdcwd, c.Path)] = true
	case sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2:
		w.removed[w.abs(t, c.Args[0], c.Path)] = true
	case sim.SYS_WRITE, sim.SYS_PWRITE64:
		f := t.File(int(c.Args[0]))
		if f == nil || f.Inode() == nil || res.Ret <= 0 {
			return
		}
		start := c.Args[3]
		if nr == sim.SYS_WRITE || f.Flags()&syscall.O_APPEND != 0 {
			if nr == sim.SYS_WRITE && f.Flags()&syscall.O_APPEND == 0 {
				start = w.r.curPos
			} else {
				start = f.Inode().Size() - res.Ret
			}
		}
		known := min(int64(len(shown(ev, 1))), res.Ret)
		id := f.Inode().Ino()
		w.unknown[id] = cut(w.unknown[id], start, start+known)
		if known < res.Ret {
			w.unknown[id] = addSpan(w.unknown[id], span{start + known, start + res.Ret})
		}
		w.keepShared(id)
	case sim.SYS_MMAP:
		// A shared writable mapping changes the file with stores, which no
		// trace shows: its bytes are unknown from now on, even after a
		// read shows them (keepShared).
		const protWrite, mapShared, mapSharedValidate = 0x2, 0x1, 0x3
		if kind := c.Args[3] & 0x3; c.Args[2]&protWrite == 0 || kind != mapShared && kind != mapSharedValidate {
			return
		}
		if f := t.File(int(c.Args[4])); f != nil && f.Inode() != nil && f.Inode().IsRegular() && c.Args[1] > 0 {
			id := f.Inode().Ino()
			if ev.RetKnown && len(w.maps) < maxMaps {
				w.maps = append(w.maps, mapping{t.Group(), uint64(ev.Ret), uint64(c.Args[1]), id, span{c.Args[5], c.Args[5] + c.Args[1]}})
			}
			w.unknown[id] = addSpan(w.unknown[id], span{c.Args[5], c.Args[5] + c.Args[1]})
		}
	case sim.SYS_COPY_FILE_RANGE, sim.SYS_SENDFILE:
		// The copied bytes are as known as the ones they were copied from.
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
}

// copySpans makes [doff, doff+n) of dst as unknown as [soff, soff+n) of
// src, which the model copied there: all of it for an inferred src, whose
// bytes the model does not know.
func (w *world) copySpans(src *vfs.Inode, soff int64, dst *vfs.Inode, doff, n int64) {
	from := slices.Clone(w.unknown[src.Ino()])
	id := dst.Ino()
	w.unknown[id] = cut(w.unknown[id], doff, doff+n)
	if w.isExt(src) {
		w.unknown[id] = addSpan(w.unknown[id], span{doff, doff + n})
		w.keepShared(id)
		return
	}
	for _, u := range from {
		if x, y := max(u.off, soff), min(u.end, soff+n); x < y {
			w.unknown[id] = addSpan(w.unknown[id], span{x - soff + doff, y - soff + doff})
		}
	}
	w.keepShared(id)
}

// keepShared makes the ranges of inode id that are mapped shared and
// writable unknown again, after a write or a read taught their bytes.
func (w *world) keepShared(id uint64) {
	for _, m := range w.maps {
		if m.ino == id {
			w.unknown[id] = addSpan(w.unknown[id], m.span)
		}
	}
}

// mapping is a shared writable mapping of file ino's span at addr.
type mapping struct {
	group     *sim.ThreadGroup
	addr, len uint64
	ino       uint64
	span
}

// maxMaps bounds the mappings tracked (a hostile trace maps without end).
const maxMaps = 1 << 16

// unmapped drops the mappings of group that [addr, addr+n) covers (a
// munmap), or all of them (n 0: exec or exit).
func (w *world) unmapped(group *sim.ThreadGroup, addr, n uint64) {
	w.maps = slices.DeleteFunc(w.maps, func(m mapping) bool {
		return m.group == group && (n == 0 || m.addr >= addr && m.addr+m.len <= addr+n)
	})
}

// cut removes [off, end) from the spans.
func cut(spans []span, off, end int64) []span {
	if !overlaps(spans, off, end) {
		return spans
	}
	out := make([]span, 0, len(spans)+1)
	for _, s := range spans {
		if s.end <= off || s.off >= end {
			out = append(out, s)
			continue
		}
		if s.off < off {
			out = append(out, span{s.off, off})
		}
		if s.end > end {
			out = append(out, span{end, s.end})
		}
	}
	return out
}

// overlaps reports whether [off, end) meets one of the spans.
func overlaps(spans []span, off, end int64) bool {
	for _, s := range spans {
		if s.off < end && off < s.end {
			return true
		}
	}
	return false
}

// addSpan adds s to the spans (kept few: adjacent spans merge).
func addSpan(spans []span, s span) []span {
	spans = cut(spans, s.off, s.end)
	for k := range spans {
		if spans[k].end == s.off {
			spans[k].end = s.end
			return spans
		}
		if spans[k].off == s.end {
			spans[k].off = s.off
			return spans
		}
	}
	return append(spans, s)
}

// unknownAt reports whether byte off of inode id was written unseen.
func (w *world) unknownAt(id uint64, off int64) bool {
	for _, s := range w.unknown[id] {
		if off >= s.off && off < s.end {
			return true
		}
	}
	return false
}

// seedFromHost copies a host directory tree into the model (reading only). Paths
// keep their host names, so a trace's absolute paths find them.
func (w *world) seedFromHost(root string) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	at := w.r.opts.RootAt
	return filepath.WalkDir(root, func(host string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		p := host
		if at != "" {
			rel, err := filepath.Rel(root, host)
			if err != nil {
				return err
			}
			p = pathpkg.Join(at, filepath.ToSlash(rel))
		}
		defer func() {
			if ino, err := w.fs.Root().Resolve(p, false); err == nil {
				w.settle(ino)
			}
		}()
		info, err := d.Info()
		if err != nil {
			return err
		}
		perm := uint32(info.Mode().Perm())
		switch {
		case d.IsDir():
			if err := w.fs.MkdirAll(p, info.Mode().Perm()); err != nil {
				return err
			}
			if ino, err := w.fs.Root().Resolve(p, true); err == nil {
				_ = ino.Chmod(perm)
			}
		case info.Mode()&os.ModeSymlink != 0:
			t, err := os.Readlink(host)
			if err != nil {
				return err
			}
			return w.fs.Root().Symlink(t, p)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(host)
			if err != nil {
				return err
			}
			ino, _, err := w.fs.Root().Open(p, syscall.O_CREAT|syscall.O_WRONLY, perm)
			if err != nil {
				return err
			}
			_, err = ino.WriteAt(data, 0)
			return err
		}
		return nil
	})
}

// parentDir returns the directory that holds abs (a trailing slash ignored).
func parentDir(abs string) string {
	return pathpkg.Dir(strings.TrimRight(abs, "/"))
}

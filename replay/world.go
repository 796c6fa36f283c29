package replay

import (
	"io/fs"
	"os"
	pathpkg "path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// world infers the state the traced program found, and tracks which bytes of the
// model's files the trace actually showed.
type world struct {
	r       *replayer
	fs      *vfs.FS
	cwd     string
	ext     map[uint64]*vfs.Inode // the inferred (external) inodes, by number
	removed map[string]bool       // absolute paths the trace removed: never inferred again
	unknown map[uint64][]span     // per inode: byte ranges written with bytes the trace did not show
	// unknownIno holds the inodes of unknown's keys: a read through an fd a
	// layer serves names its file by number only (sim.ServedFd).
	unknownIno map[uint64]*vfs.Inode
	filled     int64 // bytes of holes dataIn made data, of maxDataFill
	// maps holds the live shared writable mappings of files, by the
	// address the trace shows: stores may change their ranges at any time,
	// until munmap, exec or exit (see keepShared).
	maps []mapping
	// permUnknown holds the inodes whose permission bits an access ACL that
	// the trace did not show (-s) set, until the trace sets them again.
	permUnknown map[uint64]bool
	// linkUnknown holds the inferred symlinks whose target no readlink has
	// shown yet (inferLink).
	linkUnknown map[uint64]bool
	inferred    int    // paths created by inference
	cmp         []byte // scratch of writeAt

	// what the results of calls showed (evidence.go)
	inferState
}

// span is a byte range [off, end).
type span struct{ off, end int64 }

func newWorld(r *replayer) *world {
	return &world{r: r, fs: r.fs, ext: map[uint64]*vfs.Inode{}, removed: map[string]bool{}, unknown: map[uint64][]span{}, unknownIno: map[uint64]*vfs.Inode{}, permUnknown: map[uint64]bool{}, linkUnknown: map[uint64]bool{}}
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
func (w *world) isExt(ino *vfs.Inode) bool { return ino != nil && w.ext[ino.Ino()] != nil }

// ensure makes abs exist with the given type (S_IFREG, S_IFDIR, S_IFIFO,
// S_IFSOCK, or S_IFLNK with target) when the model does not have it, creating missing parents as
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
			w.changed(0)
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
				w.changed(0)
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
		case kind == vfs.S_IFIFO || kind == vfs.S_IFSOCK:
			if root.Mknod(cur, kind, 0o644, 0) != nil {
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
		w.ext[ino.Ino()] = ino
		w.inferred++
		w.changed(0)
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
		if v, ok := f.Value(); ok && v >= 0 {
			w.resize(ino, v)
		}
	}
	if f := st.Field("st_mode"); f != nil {
		if v, ok := f.Value(); ok {
			w.chmod(ino, uint32(v)&0o7777)
		}
	}
}

// retypeFd handles an inferred file opened without O_DIRECTORY that a recorded
// fstat shows to be a directory: the path becomes a directory and the fd is opened
// again on it.
func (w *world) retypeFd(t *sim.Task, fd int64, st *strace.Node) {
	if statKind(st) == vfs.S_IFDIR {
		w.dirFd(t, fd)
	}
}

// dirFd makes the inferred file fd was opened on a directory, and opens fd again
// on it: a recorded call showed the fd to be one (see retypeFd and usedAsDir).
func (w *world) dirFd(t *sim.Task, fd int64) {
	f := t.File(int(fd))
	if f == nil || f.Inode() == nil || !w.isExt(f.Inode()) || f.Inode().IsDir() {
		return
	}
	p := f.Inode().Path()
	if p == "" || w.ensure(p, vfs.S_IFDIR, "") == nil {
		return
	}
	// The open's own flags, as F_GETFL shows them (O_DIRECTORY was not
	// among them); a directory opens only for reading.
	flags := f.Flags()
	if flags&unix.O_PATH == 0 {
		flags = flags&^syscall.O_ACCMODE | syscall.O_RDONLY
	}
	if r := w.r.k.Syscall(&sim.Call{Nr: sim.SYS_FCNTL, Task: t, Args: [6]int64{fd, syscall.F_GETFD}}); r.Errno == 0 && r.Ret&syscall.FD_CLOEXEC != 0 {
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

// copySpans makes [doff, doff+n) of dst as unknown as [soff, soff+n) of
// src, which the model copied there: all of it for an inferred src, whose
// bytes the model does not know.
func (w *world) copySpans(src *vfs.Inode, soff int64, dst *vfs.Inode, doff, n int64) {
	from := slices.Clone(w.unknown[src.Ino()])
	id := dst.Ino()
	w.unknown[id] = cut(w.unknown[id], doff, doff+n)
	if w.isExt(src) {
		w.addUnknown(dst, span{doff, doff + n})
		w.keepShared(id)
		return
	}
	for _, u := range from {
		if x, y := max(u.off, soff), min(u.end, soff+n); x < y {
			w.addUnknown(dst, span{x - soff + doff, y - soff + doff})
		}
	}
	w.keepShared(id)
}

// addUnknown makes span s of ino unknown.
func (w *world) addUnknown(ino *vfs.Inode, s span) {
	id := ino.Ino()
	w.unknown[id] = addSpan(w.unknown[id], s)
	w.unknownIno[id] = ino
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

// seedFromHost copies a host directory tree into the model (reading only). spec is
// DIR, whose paths keep their host names (so a trace's absolute paths find them), or
// DIR:/MOUNT, which puts DIR's contents at /MOUNT in the model.
func (w *world) seedFromHost(spec string) error {
	root, mount := spec, ""
	if i := strings.LastIndex(spec, ":"); i >= 0 && strings.HasPrefix(spec[i+1:], "/") {
		root, mount = spec[:i], pathpkg.Clean(spec[i+1:])
	}
	root, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	if mount == "" {
		mount = filepath.ToSlash(root)
	}
	return filepath.WalkDir(root, func(hp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, hp)
		if err != nil {
			return err
		}
		p := pathpkg.Join(mount, filepath.ToSlash(rel))
		defer func() {
			if ino, err := w.fs.Root().Resolve(p, false); err == nil {
				w.settle(ino)
			}
		}()
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
			t, err := os.Readlink(hp)
			if err != nil {
				return err
			}
			return w.fs.Root().Symlink(t, p)
		case info.Mode().IsRegular():
			data, err := os.ReadFile(hp)
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

package replay

import (
	"bytes"
	"fmt"
	pathpkg "path"
	"strconv"
	"strings"
	"syscall"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// The model has one file system; Linux has many. The mount table says which
// path is on which: rename and link across two of them fail with EXDEV, as
// copy_file_range does, and replay answers so without running the call. The
// table comes from Options.Mounts and Options.Root's DIR:/MOUNT, from a
// recorded read of /proc/self/mountinfo, and from recorded EXDEV results;
// every mount not given is noted. A tmpfs or ramfs mount is empty after a
// crash.

// mountPoint is one mount of the table.
type mountPoint struct {
	path, fstype string
}

// wellKnown are mount points Linux systems commonly have, the deepest first:
// an EXDEV result between a path below one and a path outside is taken to be
// at it.
var wellKnown = []mountPoint{
	{"/dev/shm", "tmpfs"}, {"/dev/mqueue", "mqueue"}, {"/run/user", "tmpfs"}, {"/run/lock", "tmpfs"},
	{"/dev", "devtmpfs"}, {"/run", "tmpfs"}, {"/proc", "proc"}, {"/sys", "sysfs"},
}

// ParseMount parses a --mount spec, TYPE:/PATH.
func ParseMount(spec string) (fstype, path string, err error) {
	fstype, path, ok := strings.Cut(spec, ":")
	if !ok || fstype == "" || !strings.HasPrefix(path, "/") {
		return "", "", fmt.Errorf("mount %q: want TYPE:/PATH (e.g. tmpfs:/dev/shm)", spec)
	}
	return fstype, pathpkg.Clean(path), nil
}

// addMount puts a mount at path (cleaned, absolute) into the table; one
// there already is replaced. A file system kept in memory (tmpfs, ramfs)
// is empty after a crash (vfs.FS.SetRAM).
func (w *world) addMount(path, fstype string) {
	if inRAM(fstype) {
		w.fs.SetRAM(path)
	}
	for i := range w.mounts {
		if w.mounts[i].path == path {
			w.mounts[i].fstype = fstype
			return
		}
	}
	w.mounts = append(w.mounts, mountPoint{path, fstype})
}

// mountOf returns the mount point that abs is on ("/" when the table has
// none above it).
func (w *world) mountOf(abs string) string {
	best := "/"
	for _, m := range w.mounts {
		if (abs == m.path || strings.HasPrefix(abs, m.path+"/")) && len(m.path) > len(best) {
			best = m.path
		}
	}
	return best
}

// crossDev answers a rename, link or copy_file_range between two mounts of
// the table with EXDEV (handled), as Linux checks it once both parent
// directories are found (do_renameat2, do_linkat, vfs_copy_file_range).
func (w *world) crossDev(t *sim.Task, nr sim.Sysno, c *sim.Call) (res sim.Result, handled bool) {
	if len(w.mounts) == 0 {
		return sim.Result{}, false
	}
	a, b := w.twoPlaces(t, nr, c)
	if a == "" || b == "" || w.mountOf(a) == w.mountOf(b) {
		return sim.Result{}, false
	}
	if _, err := w.fs.Root().Resolve(a, true); err != nil {
		return sim.Result{}, false // the lookup fails first
	}
	if _, err := w.fs.Root().Resolve(b, true); err != nil {
		return sim.Result{}, false
	}
	return sim.Fail(syscall.EXDEV), true
}

// twoPlaces returns the directories whose mounts a rename or link compares
// (the parents of its two paths), or the files of copy_file_range's fds;
// "" when the call is none of those or a path is not known.
func (w *world) twoPlaces(t *sim.Task, nr sim.Sysno, c *sim.Call) (string, string) {
	switch nr {
	case sim.SYS_RENAME, sim.SYS_RENAMEAT, sim.SYS_RENAMEAT2, sim.SYS_LINK, sim.SYS_LINKAT:
		if c.Path == "" || c.Path2 == "" {
			return "", ""
		}
		dirfd2 := int64(atFdcwd)
		if i := sim.Info(nr).Slot(sim.ArgDirfd, 1); i >= 0 {
			dirfd2 = c.Args[i]
		}
		a, b := w.abs(t, pathDirfd(nr, c), c.Path), w.abs(t, dirfd2, c.Path2)
		if a == "" || b == "" {
			return "", ""
		}
		return parentDir(a), parentDir(b)
	case sim.SYS_COPY_FILE_RANGE:
		in, out := t.File(int(c.Args[0])), t.File(int(c.Args[2]))
		if in == nil || out == nil || in.Inode() == nil || out.Inode() == nil {
			return "", ""
		}
		return in.Inode().Path(), out.Inode().Path()
	}
	return "", ""
}

// failedXdev: an EXDEV result shows the two places on two file systems.
// When the table puts them on one, a mount is added: the deepest well-known
// mount point above one side but not the other, else the first directory
// of the second path that the first is not below (a guess, which the note
// says).
func (w *world) failedXdev(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	a, b := w.twoPlaces(t, nr, c)
	if a == "" || b == "" {
		return
	}
	if nr != sim.SYS_COPY_FILE_RANGE {
		// both parent directories were found before the mounts compared
		w.existed(ev, a, vfs.S_IFDIR, "EXDEV comes after the parent directories are found")
		w.existed(ev, b, vfs.S_IFDIR, "EXDEV comes after the parent directories are found")
	}
	if w.mountOf(a) != w.mountOf(b) {
		return
	}
	under := func(p, m string) bool { return p == m || strings.HasPrefix(p, m+"/") }
	for _, m := range wellKnown {
		if under(a, m.path) != under(b, m.path) {
			w.addMount(m.path, m.fstype)
			w.fact(ev, "%s and %s are on two file systems: %s taken as a mount point (%s, where Linux systems have one)", a, b, m.path, orUnknown(m.fstype))
			return
		}
	}
	pa := strings.Split(strings.TrimPrefix(a, "/"), "/")
	pb := strings.Split(strings.TrimPrefix(b, "/"), "/")
	k := 0
	for k < len(pa) && k < len(pb) && pa[k] == pb[k] {
		k++
	}
	if k >= len(pb) || b == "/" {
		w.fact(ev, "contradiction: %s and %s are on two file systems, which no mount below a common directory explains; kept", a, b)
		return
	}
	m := "/" + strings.Join(pb[:k+1], "/")
	w.addMount(m, "")
	w.fact(ev, "%s and %s are on two file systems: %s taken as a mount point (a guess: the trace does not show where the mount is)", a, b, m)
}

// inRAM reports whether a file system of type fstype keeps its files in
// memory only, so that a power loss empties it.
func inRAM(fstype string) bool { return fstype == "tmpfs" || fstype == "ramfs" }

// orUnknown names a file system type, "" as unknown.
func orUnknown(fstype string) string {
	if fstype == "" {
		return "type unknown"
	}
	return fstype
}

// readMountinfo takes the mounts that a recorded read of a mountinfo file
// (/proc/self/mountinfo, /proc/PID/mountinfo) shows: whole lines, with what
// earlier reads of the same fd showed before them.
func (w *world) readMountinfo(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	if !w.mountinfoOpened {
		return
	}
	f := t.File(int(c.Args[0]))
	if f == nil || f.Inode() == nil || !isMountinfo(f.Inode().Path()) {
		return
	}
	b, trunc, ok := ev.Str(1)
	if !ok || trunc || int64(len(b)) != ev.Ret {
		return
	}
	if w.mountinfo == nil {
		w.mountinfo = map[*sim.File][]byte{}
	}
	buf := append(w.mountinfo[f], b...)
	if len(buf) > 1<<20 {
		buf = nil
	}
	n := 0
	for {
		i := bytes.IndexByte(buf, '\n')
		if i < 0 {
			break
		}
		if p, fstype, ok := mountinfoLine(string(buf[:i])); ok && p != "/" {
			w.addMount(p, fstype)
			n++
		}
		buf = buf[i+1:]
	}
	w.mountinfo[f] = buf
	if n > 0 {
		w.fact(ev, "%d mount(s) read from %s taken into the mount table", n, f.Inode().Path())
	}
}

// isMountinfo reports whether abs is a process's mountinfo file.
func isMountinfo(abs string) bool {
	rest, ok := strings.CutPrefix(abs, "/proc/")
	if !ok {
		return false
	}
	pid, file, ok := strings.Cut(rest, "/")
	if !ok || file != "mountinfo" {
		return false
	}
	if pid == "self" || pid == "thread-self" {
		return true
	}
	_, err := strconv.Atoi(pid)
	return err == nil
}

// mountinfoLine parses one line of mountinfo (proc(5)): its mount point
// (octal escapes decoded) and file system type.
func mountinfoLine(line string) (path, fstype string, ok bool) {
	left, right, ok := strings.Cut(line, " - ")
	if !ok {
		return "", "", false
	}
	f := strings.Fields(left)
	r := strings.Fields(right)
	if len(f) < 5 || len(r) < 1 || !strings.HasPrefix(f[4], "/") {
		return "", "", false
	}
	return pathpkg.Clean(unescapeOctal(f[4])), r[0], true
}

// unescapeOctal decodes the \NNN escapes of a mountinfo field.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mountsGiven puts Options.Mounts and Root's DIR:/MOUNT into the table.
func (w *world) mountsGiven(opts Options) error {
	if i := strings.LastIndex(opts.Root, ":"); i >= 0 && strings.HasPrefix(opts.Root[i+1:], "/") && pathpkg.Clean(opts.Root[i+1:]) != "/" {
		w.addMount(pathpkg.Clean(opts.Root[i+1:]), "")
	}
	for _, spec := range opts.Mounts {
		fstype, p, err := ParseMount(spec)
		if err != nil {
			return err
		}
		w.addMount(p, fstype)
	}
	return nil
}

// openedMountinfo notes that an open (call c) named a mountinfo file, so
// that reads are looked at (readMountinfo).
func (w *world) openedMountinfo(c *sim.Call) {
	if !w.mountinfoOpened && strings.HasSuffix(c.Path, "mountinfo") {
		w.mountinfoOpened = true
	}
}

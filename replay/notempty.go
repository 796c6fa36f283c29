package replay

import (
	pathpkg "path"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// A directory that an rmdir (or a rename onto it) found not empty held
// entries the trace may never name. An inferred directory the model has
// empty gets one entry, unlistedName, standing for them, so that the model
// refuses the same rmdir; it goes once a recorded listing of the directory
// shows its entries (which inference then makes) or a recorded rmdir of it
// succeeds (it was empty by then).

// unlistedName is the entry standing for entries of a directory the trace
// does not show.
const unlistedName = ".iosim-unlisted-entries"

// failedNotEmpty: ENOTEMPTY (or EEXIST, which rmdir may return for it) from
// rmdir or unlinkat(AT_REMOVEDIR), or ENOTEMPTY from a rename onto a
// directory, shows a directory with entries.
func (w *world) failedNotEmpty(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	var abs string
	switch {
	case nr == sim.SYS_RMDIR || nr == sim.SYS_UNLINKAT && c.Args[2]&unix.AT_REMOVEDIR != 0:
		abs = w.abs(t, pathDirfd(nr, c), c.Path)
	case ev.Errno == syscall.ENOTEMPTY && (nr == sim.SYS_RENAME || nr == sim.SYS_RENAMEAT || nr == sim.SYS_RENAMEAT2):
		dirfd2 := int64(atFdcwd)
		if i := sim.Info(nr).Slot(sim.ArgDirfd, 1); i >= 0 {
			dirfd2 = c.Args[i]
		}
		abs = w.abs(t, dirfd2, c.Path2)
		if from := w.abs(t, pathDirfd(nr, c), c.Path); from != "" && abs != "" {
			// a directory too: a file's rename onto one fails with EISDIR
			w.existed(ev, from, vfs.S_IFDIR, "the source of a rename onto a directory with entries")
		}
	default:
		return
	}
	if abs == "" {
		return
	}
	w.existed(ev, abs, vfs.S_IFDIR, "a directory with entries")
	dir, err := w.fs.Root().Resolve(abs, true)
	if err != nil || !dir.IsDir() || !w.isExt(dir) {
		return
	}
	if ents, err := dir.Dirents(); err != nil || len(ents) > 2 {
		return
	}
	p := pathpkg.Join(dir.Path(), unlistedName)
	if w.ensure(p, vfs.S_IFREG, "") == nil {
		return
	}
	if w.unlisted == nil {
		w.unlisted = map[uint64]string{}
	}
	w.unlisted[dir.Ino()] = p
	w.fact(ev, "%s held entries before the trace that it does not name: %s stands for them until a listing or an rmdir shows them", dir.Path(), unlistedName)
}

// listedOrEmptied drops the entry standing for a directory's unnamed
// entries before a successful getdents of it (its entries are then
// inferred) or an rmdir (it was empty).
func (w *world) listedOrEmptied(t *sim.Task, nr sim.Sysno, c *sim.Call) {
	if len(w.unlisted) == 0 {
		return
	}
	var dir *vfs.Inode
	switch {
	case nr == sim.SYS_GETDENTS64 || nr == sim.SYS_GETDENTS:
		dir = w.fileOf(t, c.Args[0])
	case nr == sim.SYS_RMDIR || nr == sim.SYS_UNLINKAT && c.Args[2]&unix.AT_REMOVEDIR != 0:
		if d, err := w.fs.Root().Resolve(w.abs(t, pathDirfd(nr, c), c.Path), true); err == nil {
			dir = d
		}
	}
	if dir == nil {
		return
	}
	if p, ok := w.unlisted[dir.Ino()]; ok {
		delete(w.unlisted, dir.Ino())
		if ino, err := w.fs.Root().Resolve(p, false); err == nil && w.fs.Root().Unlink(p) == nil {
			delete(w.ext, ino.Ino())
			w.changed(0)
		}
	}
}

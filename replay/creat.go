package replay

import (
	"fmt"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// An open with O_CREAT and neither O_EXCL nor O_TRUNC succeeds alike on a file
// that existed and on one it creates: the result does not tell. The model
// creates the file (a trace usually shows a program's new files); the file
// stays a candidate for having existed until it changes, and a later result
// that shows what a new empty file cannot have (a size, bytes read, permission
// bits the open's mode did not hold) makes it an inferred file from before the
// trace, noted. Candidates never shown to have existed are counted in a note.

// creatCand is a file an O_CREAT open may have found rather than made.
type creatCand struct {
	ino  *vfs.Inode
	path string
	line int    // the open's line
	mode uint32 // the open's mode argument
}

// creatBefore remembers an O_CREAT open (neither O_EXCL nor O_TRUNC) that
// succeeded where the model has nothing and the trace removed nothing: the
// model is about to create the file (creatAfter).
func (w *world) creatBefore(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	w.creatPending = ""
	if !ev.RetKnown || ev.Failed() || nr != sim.SYS_OPEN && nr != sim.SYS_OPENAT {
		return
	}
	in := sim.Info(nr)
	flags := c.Args[in.Slot(sim.ArgFlags, 0)]
	if flags&unix.O_CREAT == 0 || flags&(unix.O_EXCL|unix.O_TRUNC) != 0 || flags&unix.O_TMPFILE == unix.O_TMPFILE {
		return
	}
	abs := w.abs(t, pathDirfd(nr, c), c.Path)
	if abs == "" || w.removed[abs] || isProcFd(abs) {
		return
	}
	if _, err := w.fs.Root().Resolve(abs, true); err == nil {
		return
	}
	if _, isDev := device(abs); isDev {
		return
	}
	w.creatPending, w.creatMode = abs, 0
	if i := in.Slot(sim.ArgMode, 0); i >= 0 {
		w.creatMode = uint32(c.Args[i]) & 0o7777
	}
}

// creatAfter makes the file the model created for the open creatBefore
// remembered a candidate.
func (w *world) creatAfter(t *sim.Task, ev *strace.Event, res sim.Result) {
	abs := w.creatPending
	w.creatPending = ""
	if abs == "" || res.Errno != 0 {
		return
	}
	f := t.File(int(res.Ret))
	if f == nil || f.Inode() == nil || !f.Inode().IsRegular() || w.isExt(f.Inode()) {
		return
	}
	if w.creat == nil {
		w.creat = map[uint64]*creatCand{}
	}
	w.creat[f.Inode().Ino()] = &creatCand{f.Inode(), abs, ev.Line, w.creatMode}
}

// creatEvidence: a successful call about to be inferred from (event ev) that
// shows a candidate file, still as the open made it (empty), to have existed
// before the trace makes it an inferred file, so that the inference of the
// call fills it in. In a trace of some calls, or of a process with threads
// it does not follow, writes it does not show may explain the call: there,
// nothing is promoted.
func (w *world) creatEvidence(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	if len(w.creat) == 0 || w.r.shows() != allCalls || w.r.blind[t.Group()] == untracedThread {
		return // writes the trace does not show may explain what it shows
	}
	cand := func(ino *vfs.Inode) *creatCand {
		if ino == nil {
			return nil
		}
		if k := w.creat[ino.Ino()]; k != nil && k.ino == ino && ino.Size() == 0 && !w.isExt(ino) {
			return k
		}
		return nil
	}
	switch nr {
	case sim.SYS_FSTAT, sim.SYS_STAT, sim.SYS_LSTAT, sim.SYS_NEWFSTATAT, sim.SYS_STATX:
		var ino *vfs.Inode
		st := ev.Arg(sim.Info(nr).Slot(sim.ArgStat, 0))
		if nr == sim.SYS_STATX {
			st = ev.Arg(sim.Info(nr).Slot(sim.ArgStatx, 0))
		}
		if nr == sim.SYS_FSTAT {
			ino = w.fileOf(t, c.Args[0])
		} else if c.Path == "" {
			ino = w.fileOf(t, pathDirfd(nr, c))
		} else if i, err := w.fs.Root().Resolve(w.abs(t, pathDirfd(nr, c), c.Path), !nofollow(nr, c)); err == nil {
			ino = i
		}
		k := cand(ino)
		if k == nil || st == nil {
			return
		}
		for _, name := range []string{"st_size", "stx_size"} {
			if f := st.Field(name); f != nil {
				if v, ok := f.Value(); ok && v > 0 {
					w.promote(ev, k, fmt.Sprintf("its size, %d", v))
					return
				}
			}
		}
		for _, name := range []string{"st_mode", "stx_mode"} {
			if f := st.Field(name); f != nil {
				if v, ok := f.Value(); ok && uint32(v)&0o7777&^k.mode != 0 {
					w.promote(ev, k, fmt.Sprintf("its permission bits, %04o, which the open's mode %04o does not hold", uint32(v)&0o7777, k.mode))
					return
				}
			}
		}
	case sim.SYS_LSEEK:
		if k := cand(w.fileOf(t, c.Args[0])); k != nil && c.Args[2] == unix.SEEK_END && ev.Ret-c.Args[1] > 0 {
			w.promote(ev, k, fmt.Sprintf("its end, at %d", ev.Ret-c.Args[1]))
		}
	case sim.SYS_READ, sim.SYS_PREAD64, sim.SYS_READV, sim.SYS_PREADV, sim.SYS_PREADV2:
		if k := cand(w.fileOf(t, c.Args[0])); k != nil && ev.Ret > 0 {
			w.promote(ev, k, fmt.Sprintf("%d byte(s) read", ev.Ret))
		}
	}
}

// promote makes candidate k an inferred file from before the trace, as the
// call of ev shows (what), and notes it.
func (w *world) promote(ev *strace.Event, k *creatCand, what string) {
	delete(w.creat, k.ino.Ino())
	w.ext[k.ino.Ino()] = k.ino
	w.inferred++
	w.changed(k.ino.Ino())
	w.settle(k.ino)
	w.fact(ev, "%s, opened with O_CREAT at line %d, existed before the trace: the call shows %s", k.path, k.line, what)
}

// creatNote returns the note of the candidates no result showed to have
// existed, or "".
func (w *world) creatNote() string {
	if len(w.creat) == 0 {
		return ""
	}
	return fmt.Sprintf("%d file(s) opened with O_CREAT and neither O_EXCL nor O_TRUNC are taken as created by the trace: no recorded result shows that they existed before it", len(w.creat))
}

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
// stays a candidate for having existed until it changes other than by appends,
// and a later result that shows what a new file holding only those appends
// cannot have (a larger size, bytes read, permission bits the open's mode did
// not hold) makes it an inferred file from before the trace, with the appends
// moved to its end, noted. Candidates never shown to have existed are counted
// in a note.

// creatCand is a file an O_CREAT open may have found rather than made.
type creatCand struct {
	ino  *vfs.Inode
	path string
	line int    // the open's line
	mode uint32 // the open's mode argument
	// appended is how many bytes appends (O_APPEND, RWF_APPEND) wrote to
	// it since; changed says another call changed it.
	appended int64
	changed  bool
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
	w.creat[f.Inode().Ino()] = &creatCand{ino: f.Inode(), path: abs, line: ev.Line, mode: w.creatMode}
}

// creatEvidence: a successful call about to be inferred from (event ev) that
// shows a candidate file, still as the open made it (empty), to have existed
// before the trace makes it an inferred file, so that the inference of the
// call fills it in. In a trace of some calls, or of a process with threads
// it does not follow, writes it does not show may explain the call: there,
// nothing is promoted.
func (w *world) creatEvidence(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	if len(w.creat) == 0 {
		return
	}
	cand := func(ino *vfs.Inode) *creatCand {
		if ino == nil {
			return nil
		}
		k := w.creat[ino.Ino()]
		if k == nil || k.ino != ino || k.changed || ino.Size() != k.appended || w.isExt(ino) {
			return nil
		}
		if w.r.shows() != allCalls || w.r.blind[t.Group()] == untracedThread {
			return nil // writes the trace does not show may explain what it shows
		}
		return k
	}
	switch {
	case nr == sim.SYS_FSTAT || nr == sim.SYS_STAT || nr == sim.SYS_LSTAT || nr == sim.SYS_NEWFSTATAT || nr == sim.SYS_STATX:
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
				if v, ok := f.Value(); ok && v > k.appended {
					w.promote(ev, k, v-k.appended, fmt.Sprintf("its size, %d", v))
					return
				}
			}
		}
		for _, name := range []string{"st_mode", "stx_mode"} {
			if f := st.Field(name); f != nil {
				if v, ok := f.Value(); ok && uint32(v)&0o7777&^k.mode != 0 {
					w.promote(ev, k, 0, fmt.Sprintf("its permission bits, %04o, which the open's mode %04o does not hold", uint32(v)&0o7777, k.mode))
					return
				}
			}
		}
	case nr == sim.SYS_LSEEK:
		if k := cand(w.fileOf(t, c.Args[0])); k != nil && c.Args[2] == unix.SEEK_END && ev.Ret-c.Args[1] > k.appended {
			w.promote(ev, k, ev.Ret-c.Args[1]-k.appended, fmt.Sprintf("its end, at %d", ev.Ret-c.Args[1]))
		}
	case nr.Is(sim.Reads):
		if k := cand(w.fileOf(t, c.Args[0])); k != nil && k.appended == 0 && ev.Ret > 0 {
			w.promote(ev, k, 0, fmt.Sprintf("%d byte(s) read", ev.Ret))
		}
	}
}

// promote makes candidate k an inferred file from before the trace, as the
// call of ev shows (what), and notes it. prefix is how long the file was
// before the appends the program made to it (0: not shown): their bytes
// move to its end, after a prefix of bytes the trace has not shown.
func (w *world) promote(ev *strace.Event, k *creatCand, prefix int64, what string) {
	ino := k.ino
	delete(w.creat, ino.Ino())
	var tail []byte
	if k.appended > 0 && prefix > 0 {
		tail = make([]byte, k.appended)
		if n, _ := ino.ReadAt(tail, 0); int64(n) != k.appended {
			tail = nil
		}
		_ = ino.Truncate(0)
	}
	if prefix > 0 {
		_ = ino.Truncate(prefix)
	}
	w.ext[ino.Ino()] = ino
	w.inferred++
	w.changed(ino.Ino())
	// state from before the trace: the file, with its prefix; the appends
	// after it stay the program's
	w.settle(ino)
	if tail != nil {
		_, _ = ino.WriteAt(tail, prefix)
		id := ino.Ino()
		var moved []span
		for _, u := range w.unknown[id] {
			moved = append(moved, span{u.off + prefix, u.end + prefix})
		}
		w.unknown[id] = moved
		w.changed(id)
	}
	if k.appended > 0 {
		what += fmt.Sprintf(", past the %d byte(s) the program appended", k.appended)
	}
	w.fact(ev, "%s, opened with O_CREAT at line %d, existed before the trace: the call shows %s", k.path, k.line, what)
}

// creatChanged follows, after a successful call, what the program did to
// candidate files: appends are counted (promote moves them), any other
// change ends the candidacy's use (the model cannot tell then what a later
// size shows).
func (w *world) creatChanged(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call, res sim.Result) {
	if len(w.creat) == 0 || res.Errno != 0 {
		return
	}
	candOf := func(fd int64) *creatCand {
		if f := t.File(int(fd)); f != nil && f.Inode() != nil {
			if k := w.creat[f.Inode().Ino()]; k != nil && k.ino == f.Inode() {
				return k
			}
		}
		return nil
	}
	switch {
	case nr.Is(sim.Writes):
		k := candOf(c.Args[0])
		if k == nil || res.Ret <= 0 {
			return
		}
		f := t.File(int(c.Args[0]))
		rwf := int64(0)
		if nr == sim.SYS_PWRITEV2 {
			rwf = c.Args[4]
		}
		if (f.Flags()&unix.O_APPEND != 0 || rwf&unix.RWF_APPEND != 0) && rwf&unix.RWF_NOAPPEND == 0 {
			k.appended += res.Ret
		} else {
			k.changed = true
		}
	case nr == sim.SYS_FTRUNCATE || nr == sim.SYS_FALLOCATE || nr == sim.SYS_MMAP:
		fd := c.Args[0]
		if nr == sim.SYS_MMAP {
			fd = c.Args[4]
		}
		if k := candOf(fd); k != nil {
			k.changed = true
		}
	case nr == sim.SYS_COPY_FILE_RANGE || nr == sim.SYS_SENDFILE || nr == sim.SYS_SPLICE:
		out := c.Args[2]
		if nr == sim.SYS_SENDFILE {
			out = c.Args[0]
		}
		if k := candOf(out); k != nil {
			k.changed = true
		}
	case nr == sim.SYS_IO_SUBMIT || nr == sim.SYS_TRUNCATE:
		// iocbs and paths: every candidate is taken as changed
		for _, k := range w.creat {
			k.changed = true
		}
	}
}

// creatNote returns the note of the candidates no result showed to have
// existed, or "".
func (w *world) creatNote() string {
	if len(w.creat) == 0 {
		return ""
	}
	return fmt.Sprintf("%d file(s) opened with O_CREAT and neither O_EXCL nor O_TRUNC are taken as created by the trace: no recorded result shows that they existed before it", len(w.creat))
}

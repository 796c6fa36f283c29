package replay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// Unknown is a byte range of a regular file that the model holds with bytes
// the trace does not show: the model holds zeros there, which the program may
// never have written. It is what Options.Unknown is told.
type Unknown struct {
	Ino      uint64 // the file's inode in the model (0 with Stdout)
	Off, End int64  // the range [Off, End)
	// Stdout: the range is of the program's standard output, the bytes it
	// announced (Options.Stdout), not of a file: an announcement whose
	// data strace's -s cut. Options.Stdout is given the bytes shown.
	Stdout bool
	File   string // the trace file and line of the call that wrote the range
	Line   int
	Call   string // the call's name
	// Why says what the trace did not show ("the trace shows 32 of the 8192
	// bytes this call wrote (strace -s 32 cut the data)"), Fix how to record
	// or replay it so that it does.
	Why, Fix string
}

func (u Unknown) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", u.File, u.Line, u.Call, u.Why)
}

// ErrUnknownBytes is the error Explore returns (wrapped) for a trace after
// which a crash state would hold bytes the trace does not show.
var ErrUnknownBytes = errors.New("a crash state would hold bytes the trace does not show")

// unknownCause is why a range became unknown.
type unknownCause interface {
	event() *strace.Event
	why() string
	fix() string
}

// cutWrite: a write of n bytes of one buffer, of which the trace shows the
// first shown (strace's -s cut the string, or the iovec array after -s
// elements).
type cutWrite struct {
	ev       *strace.Event
	shown, n int64
}

func (c cutWrite) event() *strace.Event { return c.ev }

func (c cutWrite) why() string {
	s := ""
	if c.shown > 0 {
		s = fmt.Sprintf(" %d", c.shown) // strace prints -s bytes of a cut string
	}
	return fmt.Sprintf("the trace shows %d of the %d bytes this call wrote (strace -s%s cut the data)", c.shown, c.n, s)
}

func (c cutWrite) fix() string {
	return "record with a -s at least the largest write (strace -s 1048576) or with iosim record"
}

// mapped: a shared writable mapping, whose stores no trace shows.
type mapped struct{ ev *strace.Event }

func (m mapped) event() *strace.Event { return m.ev }

func (m mapped) why() string {
	return "a shared writable mapping: the stores through it are not in the trace"
}

func (m mapped) fix() string { return "no strace recording shows the stores through a mapping" }

// copied: copy_file_range or sendfile copied bytes the model does not know:
// of a file from before the trace (ext), or written unseen.
type copied struct {
	ev  *strace.Event
	ext bool
}

func (c copied) event() *strace.Event { return c.ev }

func (c copied) why() string {
	if c.ext {
		return "copied from a file that existed before the trace, whose bytes it does not show (pass its directory as --root)"
	}
	return "copied bytes the trace does not show"
}

func (c copied) fix() string {
	if c.ext {
		return "give the file's directory as it was before the run (--root)"
	}
	return "record the writes of the bytes copied with a larger -s (strace -s 1048576) or with iosim record"
}

// beforeData tells Options.Unknown, before call c of event ev runs, of the
// ranges of regular files it will write with bytes the trace does not show:
// a crash state at the point the call ends may hold them. The ranges are
// those of the recorded result.
func (w *world) beforeData(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	if !ev.RetKnown || ev.Failed() || ev.Ret <= 0 {
		return
	}
	tellPieces := func(ino *vfs.Inode, start, n int64, pieces []piece) {
		eachUnknown(start, n, pieces, func(s span, p piece) { w.tell(ino, s, cutWrite{ev: ev, shown: p.shown, n: p.n}) })
	}
	switch {
	case nr.Is(sim.Writes):
		if ino, start, pieces := w.written(t, nr, ev, c, ev.Ret, true); ino != nil {
			tellPieces(ino, start, ev.Ret, pieces)
		}
	case nr == sim.SYS_IO_SUBMIT:
		w.submitted(t, ev, ev.Ret, tellPieces)
	case nr == sim.SYS_COPY_FILE_RANGE || nr == sim.SYS_SENDFILE:
		inFd, inOff, outFd, outOff := c.Args[0], c.Args[1], c.Args[2], c.Args[3]
		if nr == sim.SYS_SENDFILE {
			inFd, inOff, outFd, outOff = c.Args[1], c.Args[2], c.Args[0], sim.NullOffset
		}
		in, out, n := t.File(int(inFd)), t.File(int(outFd)), ev.Ret
		if in == nil || out == nil || in.Inode() == nil || out.Inode() == nil || !out.Inode().IsRegular() {
			return
		}
		if inOff == sim.NullOffset {
			inOff = in.Offset()
		}
		if outOff == sim.NullOffset {
			outOff = out.Offset()
		}
		if w.isExt(in.Inode()) {
			w.tell(out.Inode(), span{outOff, outOff + n}, copied{ev: ev, ext: true})
			return
		}
		for _, u := range w.unknown[in.Inode().Ino()] {
			if x, y := max(u.off, inOff), min(u.end, inOff+n); x < y {
				w.tell(out.Inode(), span{x - inOff + outOff, y - inOff + outOff}, copied{ev: ev})
			}
		}
	}
}

// tell tells Options.Unknown that span s of regular file ino holds bytes the
// trace does not show, for the reason why; an error it returns stops the
// replay.
func (w *world) tell(ino *vfs.Inode, s span, why unknownCause) {
	if w.r.opts.Unknown == nil || w.r.stop != nil || !ino.IsRegular() || s.off >= s.end {
		return
	}
	ev := why.event()
	w.r.stop = w.r.opts.Unknown(Unknown{Ino: ino.Ino(), Off: s.off, End: s.end, File: ev.File, Line: ev.Line, Call: ev.Name, Why: why.why(), Fix: why.fix()})
}

// unknownRead counts the bytes in [start, start+n) of inode ino that the model
// holds unknown: a read that shows them cannot be compared there.
func (r *replayer) unknownRead(ino uint64, start, n int64) {
	for _, u := range r.world.unknown[ino] {
		if x, y := max(u.off, start), min(u.end, start+n); x < y {
			r.unknownReadBytes += y - x
		}
	}
}

// announce gives Options.Stdout what the write of ev printed on the
// program's standard output (the bytes shown, or `-e write=`'s dump).
func (r *replayer) announce(ev *strace.Event) {
	if !ev.RetKnown || ev.Ret <= 0 {
		return
	}
	b := shown(ev, 1)
	var cut unknownCause
	if int64(len(b)) < ev.Ret {
		cut = cutWrite{ev: ev, shown: int64(len(b)), n: ev.Ret}
	} else {
		b = b[:ev.Ret]
	}
	r.announceBytes(ev, b, cut)
}

// announceVec gives Options.Stdout what the writev of ev printed on the
// program's standard output: its iovecs' bytes, in order (`-e write=`'s
// dump, or the strings shown up to the first that -s cut).
func (r *replayer) announceVec(ev *strace.Event) {
	if !ev.RetKnown || ev.Ret <= 0 {
		return
	}
	if int64(len(ev.Dump)) >= ev.Ret {
		r.announceBytes(ev, ev.Dump[:ev.Ret], nil)
		return
	}
	var b []byte
	cut := true
	if arr := ev.Arg(1); arr != nil && arr.Kind == strace.NodeArray {
		cut = false
		for k := range arr.Kids {
			if int64(len(b)) >= ev.Ret {
				break
			}
			el := &arr.Kids[k]
			base, ln := el.Field("iov_base"), el.Field("iov_len")
			if el.Kind == strace.NodeEllipsis || base == nil || base.Kind != strace.NodeStr || ln == nil {
				cut = true
				break
			}
			b = append(b, base.Text...)
			if n, ok := ln.Value(); !ok || int64(len(base.Text)) < n {
				cut = true
				break
			}
		}
	}
	if int64(len(b)) > ev.Ret {
		b = b[:ev.Ret]
	}
	var why unknownCause
	if cut || int64(len(b)) < ev.Ret {
		why = cutWrite{ev: ev, shown: int64(len(b)), n: ev.Ret}
	}
	r.announceBytes(ev, b, why)
}

// announceCopy gives Options.Stdout what a copy_file_range or sendfile of
// ev (`cat FILE`) copied from a file of the model to the program's
// standard output: the model's bytes where the trace shows them.
func (r *replayer) announceCopy(t *sim.Task, nr sim.Sysno, ev *strace.Event) {
	if !ev.RetKnown || ev.Ret <= 0 || ev.Ret > maxBuf {
		return
	}
	inIdx, offIdx := 0, 1
	if nr == sim.SYS_SENDFILE {
		inIdx, offIdx = 1, 2
	}
	fd, ok := ev.Int(inIdx)
	off, offOK := offsetArg(ev, offIdx)
	var f *sim.File
	if ok && offOK {
		f = t.File(int(fd))
	}
	if f == nil || f.Inode() == nil || !f.Inode().IsRegular() {
		r.announceBytes(ev, nil, copied{ev: ev})
		return
	}
	ino := f.Inode()
	if off == sim.NullOffset {
		off = r.recPos(f)
		r.pos[f] = off + ev.Ret // the program's offset moved; the model's did not run the call
	}
	b := make([]byte, ev.Ret)
	n, _ := ino.ReadAt(b, off)
	b = b[:n]
	var unseen unknownCause
	if r.world.isExt(ino) {
		unseen = copied{ev: ev, ext: true}
	}
	for _, u := range r.world.unknown[ino.Ino()] {
		if u.off < off+int64(n) && u.end > off {
			unseen = copied{ev: ev}
		}
	}
	if int64(n) < ev.Ret && unseen == nil {
		unseen = copied{ev: ev}
	}
	if unseen != nil {
		b = nil
	}
	r.announceBytes(ev, b, unseen)
}

// announceBytes gives Options.Stdout bytes b that the call of ev printed.
// When the trace does not show all of them (why), it tells Options.Unknown
// first (an error stops the replay, and nothing is announced), then gives
// the bytes known.
func (r *replayer) announceBytes(ev *strace.Event, b []byte, why unknownCause) {
	if why != nil {
		if r.opts.Unknown != nil && r.stop == nil {
			r.stop = r.opts.Unknown(Unknown{Stdout: true, Off: r.announced + int64(len(b)), End: r.announced + ev.Ret, File: ev.File, Line: ev.Line, Call: ev.Name,
				Why: strings.Replace(why.why(), "this call wrote", "the program printed", 1), Fix: why.fix()})
		}
		if r.stop != nil {
			return
		}
	}
	r.announced += ev.Ret
	r.opts.Stdout(b)
}

package replay

import (
	"fmt"

	"github.com/iosim/iosim/strace"
)

// Unknown is a byte range of a regular file that the model holds with bytes
// the trace does not show: the model holds zeros there, which the program may
// never have written. It is what Options.Unknown is told.
type Unknown struct {
	Ino      uint64 // the file's inode in the model
	Off, End int64  // the range [Off, End)
	File     string // the trace file and line of the call that wrote the range
	Line     int
	Call     string // the call's name
	// Why says what the trace did not show and how to record it so that it
	// does ("write of 8192 bytes shows 32 (strace -s 32 cut the data)...").
	Why string
}

func (u Unknown) String() string {
	return fmt.Sprintf("%s:%d: %s: %s", u.File, u.Line, u.Call, u.Why)
}

// unknownCause is why a range became unknown.
type unknownCause interface {
	event() *strace.Event
	why() string
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
	return fmt.Sprintf("the trace shows %d of the %d bytes this call wrote (strace -s%s cut the data): record with a -s at least the largest write (strace -s 1048576) or with iosim record", c.shown, c.n, s)
}

// mapped: a shared writable mapping, whose stores no trace shows.
type mapped struct{ ev *strace.Event }

func (m mapped) event() *strace.Event { return m.ev }

func (m mapped) why() string {
	return "a shared writable mapping: the stores through it are not in the trace"
}

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

// unknownRead counts the bytes in [start, start+n) of inode ino that the model
// holds unknown: a read that shows them cannot be compared there.
func (r *replayer) unknownRead(ino uint64, start, n int64) {
	for _, u := range r.world.unknown[ino] {
		if x, y := max(u.off, start), min(u.end, start+n); x < y {
			r.unknownReadBytes += y - x
		}
	}
}

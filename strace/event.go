package strace

import (
	"bytes"
	"syscall"
)

// Kind says what a line (or a joined pair of lines) of strace output records.
type Kind uint8

const (
	// KindSyscall is a system call: `name(args) = result`.
	KindSyscall Kind = iota
	// KindSignal is a delivered signal: `--- SIGCHLD {si_signo=...} ---`.
	// Name holds the signal name and Args its siginfo (if printed).
	KindSignal
	// KindExit is `+++ exited with N +++`; Ret holds N.
	KindExit
	// KindKilled is `+++ killed by SIGKILL [(core dumped)] +++`; Name holds the signal.
	KindKilled
	// KindAttached is `strace: Process N attached`; Pid is N.
	KindAttached
	// KindDetached is `strace: Process N detached`; Pid is N.
	KindDetached
	// KindMessage is any other line strace writes about the tracing itself
	// (`strace: ...`, `[ Process PID=N runs in 32 bit mode. ]`); Text holds it.
	KindMessage
)

var kindNames = [...]string{"syscall", "signal", "exit", "killed", "attached", "detached", "message"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(?)"
}

// TimeKind says what Event.Time measures.
type TimeKind uint8

const (
	// TimeNone: the line has no timestamp.
	TimeNone TimeKind = iota
	// TimeOfDay: -t or -tt, nanoseconds since midnight (in the recording's
	// time zone; the date is not in the trace).
	TimeOfDay
	// TimeEpoch: -ttt, nanoseconds since the Unix epoch.
	TimeEpoch
	// TimeRelative: -r, nanoseconds since the previous line's timestamp.
	TimeRelative
)

var timeKindNames = [...]string{"none", "time-of-day", "epoch", "relative"}

func (k TimeKind) String() string {
	if int(k) < len(timeKindNames) {
		return timeKindNames[k]
	}
	return "TimeKind(?)"
}

// PidStyle says how the pid was written on the line.
type PidStyle uint8

const (
	// PidNone: no pid on the line (plain output, or -ff where the pid comes
	// from the file name).
	PidNone PidStyle = iota
	// PidColumn: `12345 ` leading column (-f with -o).
	PidColumn
	// PidBracket: `[pid 12345] ` prefix (-f to a terminal).
	PidBracket
)

// Event is one record of the trace. It is owned by the Parser that returned
// it and is valid, with every slice reachable from it, until the next call to
// Next (or Merger.Next); use Clone to keep it longer. Do not modify it:
// the parser reuses it and does not clear every field for every line
// (modify a Clone).
type Event struct {
	File     string // file name given to NewParser
	Line     int    // 1-based line number (of the `<unfinished ...>` part for a joined call)
	EndLine  int    // line of the `<... resumed>` part; equal to Line for one-line events
	Pid      int    // task id; from the line, else from the file name; 0 when unknown
	PidStyle PidStyle

	// Nr is the syscall number that -n printed ("[ 257] "), when HasNr. IP is
	// the instruction pointer that -i printed ("[00007f6aa14d6b1d] "), when
	// HasIP; IPUnknown when it printed question marks instead.
	Nr        int
	HasNr     bool
	IP        uint64
	HasIP     bool
	IPUnknown bool

	Kind     Kind
	Time     int64 // nanoseconds; meaning given by TimeKind
	TimeKind TimeKind
	TimePrec uint8 // digits after the decimal point in the timestamp (0, 6 or 9)

	Duration    int64 // -T time spent in the call, nanoseconds
	HasDuration bool
	DurPrec     uint8 // digits after the decimal point in the duration

	// Name is the syscall name (KindSyscall) or the signal name (KindSignal,
	// KindKilled). It is interned: it never aliases parser buffers.
	Name string

	// RawArgs is the exact text between the call's parentheses (joined across
	// an unfinished/resumed pair), the siginfo text of a signal, or the text
	// of a KindMessage line.
	RawArgs []byte

	Ret        int64 // return value (exit status for KindExit); meaningful if RetKnown
	RetKnown   bool  // false for `= ?` and for calls that never resumed
	RetHex     bool  // the return value was printed in hex (0x7f...)
	RetPath    []byte
	RetHasPath bool // the return value had a -y decoration `= 3</path>` (RetPath, escapes decoded)
	RetDeleted bool // the decoration was followed by (deleted)
	Errno      syscall.Errno
	ErrnoName  string // "ENOENT", "ERESTARTSYS", ...; empty when no error was printed
	ErrnoDesc  []byte // "No such file or directory" as printed
	RetComment []byte // other trailer of the result, e.g. "flags FD_CLOEXEC" or "Timeout"
	Injected   bool   // the result is marked (INJECTED)
	Unfinished bool   // an `<unfinished ...>` call whose resumption never came (flushed at EOF)
	CoreDumped bool   // KindKilled with "(core dumped)"

	// Dump holds the bytes of the `-e write=`/`-e read=` hex dump lines that
	// followed the call.
	Dump []byte

	// Text is the raw text of the line (for a joined call, the synthesized
	// one-line form `name(args) = result`), without the trailing newline.
	Text []byte

	p       *Parser
	parsed  bool
	args    []Node
	ownTree *tree // set by Clone

	// flat is the split of a flat argument list (see flat.go), kept in the
	// owning tree and set on first use; nil until then.
	flat *flatArgs
}

// Args returns the parsed top-level arguments of a syscall (or the siginfo
// of a signal; nil for other kinds). The tree is built on the first call into
// the parser's reused buffers and is valid as long as the event.
func (ev *Event) Args() []Node {
	if ev.Kind != KindSyscall && ev.Kind != KindSignal {
		return nil
	}
	if !ev.parsed {
		ev.parsed = true
		ev.args = ev.tree().parse(ev.RawArgs)
	}
	return ev.args
}

// tree returns the tree the event's arguments are parsed into: the parser's,
// or the event's own for a Clone (or an Event built by hand). Every write of
// the lazy state (parsed, args, flat) goes with a call here: for the
// parser's event, it tells the parser that the event needs clearing
// (evRare).
func (ev *Event) tree() *tree {
	if ev.ownTree != nil {
		return ev.ownTree
	}
	if ev.p != nil {
		ev.p.evRare = true
		return &ev.p.tree
	}
	ev.ownTree = new(tree)
	return ev.ownTree
}

// NArgs returns the number of top-level arguments.
func (ev *Event) NArgs() int {
	if !ev.parsed {
		if f, ok := ev.flatList(); ok {
			return int(f.n)
		}
	}
	return len(ev.Args())
}

// Arg returns argument i, or nil if there is none.
func (ev *Event) Arg(i int) *Node {
	a := ev.Args()
	if i < 0 || i >= len(a) {
		return nil
	}
	return &a[i]
}

// Int returns argument i as an integer: a number, an fd (with or without
// decoration), or a symbolic constant or flag set whose value is known.
func (ev *Event) Int(i int) (int64, bool) {
	if !ev.parsed && ev.Kind == KindSyscall {
		if f, ok := ev.flatList(); ok {
			// Numbers, names and strings only: evaluate just this argument.
			if i < 0 || i >= int(f.n) || f.str&(1<<i) != 0 {
				return 0, false
			}
			return f.value(ev.RawArgs, i)
		}
		if tok, ok := plainArg(ev.RawArgs, i); ok {
			// Arguments made only of numbers and names: parse just this one
			// (the whole tree is built only if something else is asked).
			if a := ev.tree().parse(tok); len(a) == 1 {
				return a[0].Value()
			}
		}
	}
	n := ev.Arg(i)
	if n == nil {
		return 0, false
	}
	return n.Value()
}

// plainByte marks the bytes of argument lists that plainArg handles: digits,
// letters, '_', '|', '-', ',' and ' '.
var plainByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	for _, c := range "_|-, " {
		t[c] = true
	}
	return t
}()

// plainArg returns the text of top-level argument i when the whole argument list
// holds nothing but numbers, names and flag sets (no strings, structs, arrays,
// comments or decorations), so commas separate the arguments.
func plainArg(raw []byte, i int) ([]byte, bool) {
	start, k := 0, 0
	for j := 0; j <= len(raw); j++ {
		if j == len(raw) || raw[j] == ',' {
			if k == i {
				tok := raw[start:j]
				for len(tok) > 0 && tok[0] == ' ' {
					tok = tok[1:]
				}
				return tok, len(tok) > 0
			}
			k++
			start = j + 1
			continue
		}
		if !plainByte[raw[j]] {
			return nil, false
		}
	}
	return nil, false
}

// Str returns the decoded bytes of string argument i and whether strace cut
// it (`"..."...`, the bytes are then only a prefix).
func (ev *Event) Str(i int) (b []byte, truncated bool, ok bool) {
	if !ev.parsed {
		if f, fok := ev.flatList(); fok {
			if i < 0 || i >= int(f.n) || f.str&(1<<i) == 0 {
				return nil, false, false
			}
			b, truncated = ev.flatStr(f, i)
			return b, truncated, true
		}
	}
	n := ev.Arg(i)
	if n == nil || n.Kind != NodeStr {
		return nil, false, false
	}
	return n.Text, n.Truncated, true
}

// Fd returns argument i as a file descriptor and its -y decoration path (nil
// without -y). AT_FDCWD gives -100.
func (ev *Event) Fd(i int) (fd int, path []byte, ok bool) {
	n := ev.Arg(i)
	if n == nil {
		return 0, nil, false
	}
	switch n.Kind {
	case NodeFd:
		return int(n.Int), n.Text, true
	case NodeInt, NodeIdent:
		if v, ok := n.Value(); ok {
			return int(v), nil, true
		}
	}
	return 0, nil, false
}

// Flags returns the numeric value of argument i, mapping symbolic names
// (O_RDONLY|O_CLOEXEC, SEEK_END, AT_EMPTY_PATH, FALLOC_FL_*, F_SETFD, S_IFREG|0644,
// ...) to their Linux x86_64 values. With -X verbose the printed number is used.
// ok is false when a name is unknown.
func (ev *Event) Flags(i int) (uint64, bool) {
	v, ok := ev.Int(i)
	return uint64(v), ok
}

// Field returns the member called name of struct argument i, or nil.
func (ev *Event) Field(i int, name string) *Node {
	n := ev.Arg(i)
	if n == nil {
		return nil
	}
	return n.Field(name)
}

// Failed reports whether the call returned an error.
func (ev *Event) Failed() bool { return ev.ErrnoName != "" }

// Clone returns a deep copy of ev that does not share memory with the parser
// and stays valid after Next.
func (ev *Event) Clone() *Event {
	c := *ev
	c.p = nil
	c.parsed = false
	c.args = nil
	c.ownTree = new(tree)
	c.flat = nil
	c.RawArgs = cloneBytes(ev.RawArgs)
	c.RetPath = cloneBytes(ev.RetPath)
	c.ErrnoDesc = cloneBytes(ev.ErrnoDesc)
	c.RetComment = cloneBytes(ev.RetComment)
	c.Dump = cloneBytes(ev.Dump)
	c.Text = cloneBytes(ev.Text)
	return &c
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

// NodeKind is the type of a parsed argument value.
type NodeKind uint8

const (
	// NodeRaw is text the parser does not interpret (expressions such as
	// `8192*1024` or `WIFEXITED(s) && ...`, signal sets `~[RTMIN RT_1]`,
	// `<... resuming interrupted read ...>`). Raw holds it.
	NodeRaw NodeKind = iota
	// NodeInt is a number (decimal, 0x hex, 0 octal); Int holds it.
	NodeInt
	// NodeStr is a quoted string; Text holds the decoded bytes, Truncated
	// says strace printed only a prefix.
	NodeStr
	// NodeIdent is a symbolic constant (NULL, SEEK_END, O_RDONLY); Text holds
	// the name, Int its value when Known.
	NodeIdent
	// NodeFlags is `A|B|0644`; Kids are the parts, Int their OR when Known.
	NodeFlags
	// NodeStruct is `{a=1, b=2, ...}`; Kids are the members (Key set).
	NodeStruct
	// NodeArray is `[x, y, ...]`.
	NodeArray
	// NodeFd is an fd with a -y decoration `3</path>`; Int is the fd, Text
	// the decoded path, Dev the -yy device part (`char 1:5`), Deleted the
	// `(deleted)` mark that follows the decoration of an unlinked file.
	NodeFd
	// NodeCall is a function-like value `makedev(0x1, 0x3)`; Text is the name,
	// Kids the arguments.
	NodeCall
	// NodeEllipsis is `...` (elements strace did not print).
	NodeEllipsis
	// NodeInOut is `in => out` (a value changed by the call, e.g. clone3);
	// Kids[0] is the value on entry, Kids[1] on exit.
	NodeInOut
)

var nodeKindNames = [...]string{"raw", "int", "str", "ident", "flags", "struct", "array", "fd", "call", "ellipsis", "inout"}

func (k NodeKind) String() string {
	if int(k) < len(nodeKindNames) {
		return nodeKindNames[k]
	}
	return "NodeKind(?)"
}

// Node is one parsed value. Its slices alias the owning Event's buffers.
type Node struct {
	Kind      NodeKind
	Known     bool   // Int holds the numeric value (NodeInt, NodeFd, and NodeIdent/NodeFlags with known names)
	Truncated bool   // NodeStr: only a prefix was printed
	Deleted   bool   // NodeFd: the decoration was followed by "(deleted)"
	Key       []byte // member name when written `key=value`, else nil
	Raw       []byte // exact text of the value (key excluded)
	Int       int64
	Text      []byte // NodeStr: decoded bytes; NodeFd: path; NodeIdent, NodeCall: name
	Dev       []byte // NodeFd: nested -yy decoration such as "char 1:5"
	Comment   []byte // text inside a trailing /* ... */ comment
	Kids      []Node // NodeStruct, NodeArray, NodeFlags, NodeCall, NodeInOut
}

// Value returns the node's numeric value when it has one: numbers, fds,
// known constants and flag sets.
func (n *Node) Value() (int64, bool) {
	switch n.Kind {
	case NodeInt, NodeFd, NodeIdent, NodeFlags:
		return n.Int, n.Known
	case NodeInOut:
		return n.Kids[0].Value()
	}
	return 0, false
}

// Field returns the struct member called name, or nil.
func (n *Node) Field(name string) *Node {
	for i := range n.Kids {
		if string(n.Kids[i].Key) == name {
			return &n.Kids[i]
		}
	}
	return nil
}

// Names returns the symbolic names of a NodeIdent or NodeFlags (appended to
// dst), for example ["O_RDONLY" "O_CLOEXEC"]; with -X verbose the names in the
// comment are not parsed: read Comment.
func (n *Node) Names(dst [][]byte) [][]byte {
	switch n.Kind {
	case NodeIdent:
		dst = append(dst, n.Text)
	case NodeFlags:
		for i := range n.Kids {
			if n.Kids[i].Kind == NodeIdent {
				dst = append(dst, n.Kids[i].Text)
			}
		}
	}
	return dst
}

package strace

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultMaxLineLen is the longest line a Parser accepts unless
// Options.MaxLineLen says otherwise.
const DefaultMaxLineLen = 16 << 20

// maxPending bounds the number of tasks with an `<unfinished ...>` call in
// flight, so hostile input cannot grow memory without bound.
const maxPending = 1 << 16

// maxPendingBytes bounds the argument text held for unfinished calls.
const maxPendingBytes = 64 << 20

// maxInterned bounds the syscall-name intern table.
const maxInterned = 4096

// Options configure a Parser. The zero value is ready to use.
type Options struct {
	// KeepGoing skips malformed lines (counting them, see Parser.Skipped and
	// Parser.Errors) instead of returning their *SyntaxError from Next.
	KeepGoing bool
	// MaxLineLen caps the length of a line; longer lines are a SyntaxError.
	// Zero means DefaultMaxLineLen.
	MaxLineLen int
	// Pid, when non-zero, is the pid of lines that carry none, overriding the
	// pid derived from the file name.
	Pid int
}

// SyntaxError reports a malformed line.
type SyntaxError struct {
	File string
	Line int // 1-based
	Col  int // 1-based byte column; 0 when not known
	Msg  string
}

func (e *SyntaxError) Error() string {
	if e.Col > 0 {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// maxKeptErrors is how many SyntaxErrors a KeepGoing parser remembers.
const maxKeptErrors = 100

// pending is an `<unfinished ...>` call waiting for its resumption.
type pending struct {
	name     string
	line     int
	time     int64
	timeKind TimeKind
	timePrec uint8
	pidStyle PidStyle
	args     []byte
}

// Parser reads strace text one event at a time. It is not safe for
// concurrent use.
type Parser struct {
	opts    Options
	file    string
	filePid int
	in      lineReader
	maxLen  int

	lineNo int
	// lastUnfinished is the line of the latest `<unfinished ...>` call, of
	// pid lastUnfinishedPid (see parseContinuation).
	lastUnfinished, lastUnfinishedPid int
	lineBuf                           []byte // the current line when it does not alias the read buffer
	evBuf                             []byte // the current call's line, copied when dump lines follow it
	aliased                           bool   // the current line aliases the read buffer
	eof                               bool
	// evRare says that ev may hold values in fields that parseFast does
	// not set (see frame.go); noFast turns parseFast off (for tests).
	evRare, noFast bool

	ev      Event
	tree    tree
	brk     []byte
	joinBuf []byte
	pathBuf []byte
	dumpBuf []byte

	pending      map[int]*pending
	pendingBytes int
	flush        []flushItem // pending calls being flushed at EOF, by line
	freePend     []*pending
	names        map[string]string
	nameCache    [256]string
	calls        [1 << callBits][2]callName // syscall names by their first bytes (lookupCall)

	skipped int
	errs    []*SyntaxError

	// std is set once strace's messages show that its stderr was
	// captured (see stderr.go); held is the head of a call line that a
	// message cut, of line heldLine, while holding.
	std        *stderrState
	held       []byte
	heldLine   int
	headLen    int // the length of the held head, once joined
	holding    bool
	heldNoFast bool // noFast before holding
}

// NewParser returns a parser reading strace text from r. name is used in
// events and errors; a name ending in `.PID` or `ffpidPID[.strace]` (strace
// -ff output) gives the pid of lines that carry none.
func NewParser(r io.Reader, name string, opts Options) *Parser {
	p := &Parser{
		opts:    opts,
		file:    name,
		filePid: PidFromFileName(name),
		in:      newLineReader(r, 64<<10),
		maxLen:  opts.MaxLineLen,
		lineBuf: make([]byte, 0, 4096), // grows to the longest line copied
		pending: make(map[int]*pending),
		names:   make(map[string]string),
		evRare:  true, // ev has none of the fields parseFast expects
	}
	if opts.Pid != 0 {
		p.filePid = opts.Pid
	}
	if p.maxLen <= 0 {
		p.maxLen = DefaultMaxLineLen
	}
	return p
}

// PidFromFileName returns the task id encoded in an strace -ff output file
// name: `prefix.12345`, or this repository's `case.ffpid12345.strace`. It
// returns 0 if there is none.
func PidFromFileName(name string) int {
	base := filepath.Base(name)
	base = strings.TrimSuffix(base, ".strace")
	i := len(base)
	for i > 0 && isDigit(base[i-1]) {
		i--
	}
	if i == len(base) || len(base)-i > 9 {
		return 0
	}
	if !strings.HasSuffix(base[:i], ".") && !strings.HasSuffix(base[:i], "ffpid") {
		return 0
	}
	pid := 0
	for _, c := range base[i:] {
		pid = pid*10 + int(c-'0')
	}
	return pid
}

// Skipped returns the number of malformed lines skipped under KeepGoing.
func (p *Parser) Skipped() int { return p.skipped }

// Errors returns the first SyntaxErrors skipped under KeepGoing (at most 100).
func (p *Parser) Errors() []*SyntaxError { return p.errs }

// File returns the name given to NewParser.
func (p *Parser) File() string { return p.file }

func (p *Parser) errorf(line, col int, format string, args ...any) *SyntaxError {
	return &SyntaxError{File: p.file, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

// fail records a syntax error: it returns it, or counts it under KeepGoing
// and returns nil.
func (p *Parser) fail(err *SyntaxError) error {
	if !p.opts.KeepGoing {
		return err
	}
	p.skipped++
	if len(p.errs) < maxKeptErrors {
		p.errs = append(p.errs, err)
	}
	return nil
}

// peekLen is how many bytes of the next line readDumps looks at. A line
// is left aliasing the read buffer only if at least peekLen more bytes are
// buffered, so peeking never refills (and so never moves) the buffer.
const peekLen = 32

// readLine reads the next line (without its newline). In the common case
// the line aliases the read buffer; otherwise it is copied into lineBuf. It
// returns a *SyntaxError for an over-long line (which it consumes), io.EOF
// at the end, or a read error.
func (p *Parser) readLine() ([]byte, int, error) {
	p.aliased = false
	if p.eof {
		return nil, p.lineNo, io.EOF
	}
	in := &p.in
	buf := in.buf[in.r:in.w]
	if k := bytes.IndexByte(buf, '\n'); k >= 0 && k <= p.maxLen {
		// A whole line in the buffer: what readSlice would return.
		if len(buf)-(k+1) >= peekLen {
			// takeLine's common case, written out
			in.r += k + 1
			p.lineNo++
			p.aliased = true
			line := buf[:k]
			for len(line) > 0 && line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			return line, p.lineNo, nil
		}
		in.r += k + 1
		return p.takeLine(buf[:k+1])
	}
	return p.readLineSlow()
}

// takeLine returns the line in chunk, which holds a whole line and its
// newline just consumed from the read buffer. The line aliases the buffer
// when at least peekLen more bytes are buffered, else it is copied into
// lineBuf.
func (p *Parser) takeLine(chunk []byte) ([]byte, int, error) {
	p.lineNo++
	line := trimEOL(chunk)
	if p.in.buffered() >= peekLen {
		p.aliased = true
		return line, p.lineNo, nil
	}
	p.lineBuf = append(p.lineBuf[:0], line...)
	return p.lineBuf, p.lineNo, nil
}

// readLineSlow is readLine for a line that is not all in the buffer, is too
// long, or is the last one, and for read errors.
func (p *Parser) readLineSlow() ([]byte, int, error) {
	chunk, err := p.in.readSlice('\n')
	if err == nil && len(chunk) <= p.maxLen+1 {
		return p.takeLine(chunk)
	}
	b := p.lineBuf[:0]
	tooLong := false
	for {
		if !tooLong {
			if len(b)+len(chunk) > p.maxLen+1 {
				tooLong = true
				b = b[:0]
			} else {
				b = append(b, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			chunk, err = p.in.readSlice('\n')
			continue
		}
		if err == io.EOF {
			p.eof = true
			if len(b) == 0 && !tooLong {
				p.lineBuf = b
				return nil, p.lineNo, io.EOF
			}
			break
		}
		if err != nil {
			p.lineBuf = b
			return nil, p.lineNo, err
		}
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			break
		}
		chunk, err = p.in.readSlice('\n')
	}
	p.lineNo++
	p.lineBuf = b
	if tooLong {
		return nil, p.lineNo, p.errorf(p.lineNo, 0, "line longer than %d bytes", p.maxLen)
	}
	return trimEOL(b), p.lineNo, nil
}

// trimEOL removes the newline and any carriage returns before it (CRLF
// files).
func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	for n := len(b); n > 0 && b[n-1] == '\r'; n-- {
		b = b[:n-1]
	}
	return b
}

// Next returns the next event, or io.EOF after the last one. The event and
// all memory reachable from it are owned by the parser and valid until the
// next call to Next. Malformed input yields a *SyntaxError (unless
// KeepGoing); the parser can continue after one.
func (p *Parser) Next() (*Event, error) {
	// The common case, written out: a whole line in the buffer (readLine's
	// first case) that parseFast takes.
	in := &p.in
	r, w := in.r, in.w
	k, bar := frameNext(in.buf[:w], r)
	if k < 0 || k > p.maxLen || w-r-(k+1) < peekLen || p.noFast || p.eof {
		return p.next(nil, 0, false, false, nil)
	}
	in.r = r + k + 1
	p.lineNo++
	p.aliased = true
	line := in.buf[r : r+k]
	if k > 0 && line[k-1] == '\r' {
		line = trimEOL(line)
	}
	handled, serr := p.parseFast(line, p.lineNo)
	if !handled || serr != nil {
		return p.next(line, p.lineNo, true, handled, serr)
	}
	// the test below, for the KindSyscall event of parseFast and the
	// peekLen bytes known to follow the line (bar: frameNext's hasBar24)
	if bar && isDumpLine(in.buf[in.r:in.r+peekLen]) {
		p.readDumps(p.lineNo)
	}
	return &p.ev, nil
}

// next is Next's loop. When have is set, it starts with line number no,
// just read, and parseFast's answer for it (none under noFast).
func (p *Parser) next(line []byte, no int, have, handled bool, serr *SyntaxError) (*Event, error) {
	for {
		head := 0 // the line a call cut by a message of strace's began on
		if !have {
			var err error
			if line, no, err = p.readLine(); err != nil {
				if err == io.EOF {
					if p.holding {
						p.holding, p.noFast = false, p.heldNoFast
						if err := p.fail(p.errorf(p.heldLine, len(p.held)+1, "the call cut by strace's message has no rest: the input ends")); err != nil {
							return nil, err
						}
						continue
					}
					if len(p.pending) > 0 {
						p.flushPending()
						return &p.ev, nil
					}
					return nil, io.EOF
				}
				var se *SyntaxError
				if errors.As(err, &se) {
					if err := p.fail(se); err != nil {
						return nil, err
					}
					continue
				}
				return nil, err
			}
			handled, serr = false, nil
			if p.holding {
				line, head = p.joinHeld(line)
			}
			if !p.noFast {
				handled, serr = p.parseFast(line, no)
			}
		}
		have = false
		ok := true
		if !handled {
			ok, serr = p.parseLine(line, no)
		}
		if serr != nil && p.continues(line, no) {
			ok, serr = p.parseContinuation(line, no)
		}
		if serr != nil && head == 0 {
			if j, end, found, err := p.programOutput(line, no); found {
				if serr = err; err == nil {
					p.aliased = false
					if ok, serr = p.parseLine(j, no); serr == nil && ok {
						p.ev.EndLine = end
					}
				}
			}
		}
		if serr != nil {
			if k := spliceAt(line); k > 0 {
				ok, serr = p.holdSplice(line, k, no)
				if head > 0 {
					p.heldLine = head // cut twice: the call began at head
				}
			}
		} else if head > 0 && ok && p.ev.Line == no {
			p.ev.Line = head
		}
		if serr != nil && head > 0 {
			serr = p.cutError(serr, head)
		}
		if serr != nil {
			if err := p.fail(p.hint(serr, line)); err != nil {
				return nil, err
			}
			continue
		}
		if !ok {
			continue
		}
		// readDumps if the next line may be a dump line: the test of its
		// loop, with peekNext's common case written out (a call per line
		// costs more than this line).
		if in := &p.in; p.ev.Kind == KindSyscall && (in.buffered() < peekLen || hasBar24(in.buf[in.r:in.r+peekLen]) && isDumpLine(in.buf[in.r:in.r+peekLen])) {
			p.readDumps(no)
		}
		return &p.ev, nil
	}
}

// peekNext returns the first peekLen bytes after the current line, fewer at
// the end of the input (bufio.Reader.Peek's answer). They are in the buffer
// already unless the line was copied.
func (p *Parser) peekNext() []byte {
	if in := &p.in; in.buffered() >= peekLen {
		return in.buf[in.r : in.r+peekLen]
	}
	pk, _ := p.in.peek(peekLen)
	return pk
}

// readDumps attaches the hex-dump lines (`-e write=`/`-e read=`) that follow
// the current call. It peeks at the next line and consumes it only if it is
// a dump line.
func (p *Parser) readDumps(no int) {
	d := p.dumpBuf[:0]
	got := false
	for {
		if !isDumpLine(p.peekNext()) {
			break
		}
		if !got && p.ev.EndLine == p.ev.Line {
			// Reading on may move the read buffer or reuse lineBuf: parse
			// the call again from a private copy of its line first. (A
			// joined call lives in joinBuf already.)
			p.evBuf = append(p.evBuf[:0], p.ev.Text...)
			p.aliased = false
			if ok, err := p.parseLine(p.evBuf, no); !ok || err != nil {
				break // cannot happen: the line parsed before
			}
		}
		b, _, err := p.readLine()
		if err != nil {
			break
		}
		d, _ = dumpBytes(b, d)
		got = true
	}
	p.dumpBuf = d
	if got {
		p.ev.Dump = d
		p.evRare = true
	}
}

// isDumpLine reports whether b starts like a hex-dump line. Next asks it
// of the peekLen bytes after every call, so it first looks for the '|' that
// such a line has at b[len(b)-9] at the latest: in 24 to 32 bytes, among the
// first 24, which it tests eight bytes at a time (hasBar24, which Next
// inlines before the call).
func isDumpLine(b []byte) bool {
	if n := len(b); n >= 24 && n <= 24+8 && !hasBar24(b) {
		return false
	}
	i := 0
	for i < len(b) && (b[i] == ' ' || isDigit(b[i])) {
		i++
	}
	if i+9 > len(b) || b[i] != '|' || b[i+1] != ' ' {
		return false
	}
	for k := i + 2; k < i+7; k++ {
		if hexVal(b[k]) < 0 {
			return false
		}
	}
	return b[i+7] == ' ' && b[i+8] == ' '
}

// hasBar24 reports whether one of the first 24 bytes of b is a '|'. b must
// hold 24 bytes at least.
func hasBar24(b []byte) bool {
	w0, w1, w2 := binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[8:16]), binary.LittleEndian.Uint64(b[16:24])
	return hasZeroByte(w0^ones*'|')|hasZeroByte(w1^ones*'|')|hasZeroByte(w2^ones*'|') != 0
}

// dumpBytes decodes a hex-dump line ` | 00000  41 42 ...  AB |` (optionally
// after a pid column), appending the bytes to dst.
func dumpBytes(b, dst []byte) ([]byte, bool) {
	i := 0
	for i < len(b) && (b[i] == ' ' || isDigit(b[i])) {
		i++
	}
	if i+9 > len(b) || b[i] != '|' || b[i+1] != ' ' {
		return dst, false
	}
	i += 2
	for k := 0; k < 5; k++ {
		if hexVal(b[i+k]) < 0 {
			return dst, false
		}
	}
	i += 5
	if i+2 > len(b) || b[i] != ' ' || b[i+1] != ' ' {
		return dst, false
	}
	i += 2
	for n := 0; n < 16; n++ {
		gap := 0
		for i < len(b) && b[i] == ' ' {
			i++
			gap++
		}
		if (n > 0 && gap > 2) || (n == 0 && gap > 0) || i+2 > len(b) {
			break
		}
		h, l := hexVal(b[i]), hexVal(b[i+1])
		if h < 0 || l < 0 || (i+2 < len(b) && b[i+2] != ' ') {
			break
		}
		dst = append(dst, byte(h<<4|l))
		i += 2
	}
	return dst, true
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func (p *Parser) intern(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	h := (uint(len(b))*31 + uint(b[0])*7 + uint(b[len(b)-1]) + uint(b[len(b)/2])*131) & uint(len(p.nameCache)-1)
	if s := p.nameCache[h]; s == string(b) {
		return s
	}
	s, ok := p.names[string(b)]
	if !ok {
		s = string(b)
		if len(p.names) < maxInterned {
			p.names[s] = s
		}
	}
	p.nameCache[h] = s
	return s
}

// resetEvent clears p.ev for a new line, keeping its buffers.
func (p *Parser) resetEvent(line []byte, no int) *Event {
	ev := &p.ev
	*ev = Event{} // a plain clear: cheaper than assigning a composite literal
	p.evRare = true
	ev.File, ev.Line, ev.EndLine, ev.Pid, ev.Text, ev.p = p.file, no, no, p.filePid, line, p
	return ev
}

// parseLine parses one line into p.ev. ok is false when the line produced no
// event (blank, or an `<unfinished ...>` call now pending).
func (p *Parser) parseLine(line []byte, no int) (ok bool, err *SyntaxError) {
	ev := p.resetEvent(line, no)
	i := skipSpaces(line, 0)
	if i == len(line) {
		return false, nil
	}
	// [pid N] prefix (terminal output of -f)
	if hasPrefix(line[i:], "[pid ") {
		j := skipSpaces(line, i+5)
		v, k, _, okd := parseUint(line, j)
		if okd && k < len(line) && line[k] == '<' { // --decode-pids=comm: [pid N<comm>]
			if e := bytes.Index(line[k:min(len(line), k+64)], []byte(">]")); e > 0 {
				k += e + 1
			}
		}
		if !okd || k >= len(line) || line[k] != ']' || v > 1<<31 {
			return false, p.errorf(no, j+1, "expected a pid in '[pid N]'")
		}
		ev.Pid, ev.PidStyle = int(v), PidBracket
		if i = skipSpaces(line, k+1); p.std != nil && !hasPrefix(line[i:], "strace: ") {
			ev.Pid = p.bracketPid(ev.Pid)
		}
	}
	// pid column (with --decode-pids=comm, "PID<comm>") and timestamp
	if i < len(line) && isDigit(line[i]) {
		j := skipDigits(line, i)
		if j < len(line) && line[j] == '<' && ev.PidStyle == PidNone {
			// a comm is at most 15 bytes, each at most 4 when escaped
			if k := bytes.Index(line[j:min(len(line), j+64)], []byte("> ")); k > 0 {
				v, _, _, _ := parseUint(line, i)
				if j-i > 10 || v > 1<<31 {
					return false, p.errorf(no, i+1, "pid out of range")
				}
				ev.Pid, ev.PidStyle = int(v), PidColumn
				j += k + 1
				i = skipSpaces(line, j)
			}
		} else if j < len(line) && line[j] == ' ' && ev.PidStyle == PidNone {
			v, _, _, _ := parseUint(line, i)
			if j-i > 10 || v > 1<<31 {
				return false, p.errorf(no, i+1, "pid out of range")
			}
			ev.Pid, ev.PidStyle = int(v), PidColumn
			i = skipSpaces(line, j)
		}
	}
	if i < len(line) && isDigit(line[i]) {
		j, serr := p.parseTime(ev, line, i, no)
		if serr != nil {
			return false, serr
		}
		if j >= len(line) || line[j] != ' ' {
			return false, p.errorf(no, j+1, "expected ' ' after the timestamp")
		}
		i = skipSpaces(line, j)
	}
	// -n's syscall number "[ 257] " and -i's instruction pointer
	// "[00007f6aa14d6b1d] " (question marks where unknown), in that order.
	if i < len(line) && line[i] == '[' {
		i = parseNrIP(ev, line, i)
	}
	if i >= len(line) {
		return false, p.errorf(no, i+1, "expected an event after the line prefix")
	}
	rest := line[i:]
	switch {
	case isIdentStart(line[i]) && !hasPrefix(rest, "strace: "):
		return p.parseCall(ev, line, i, no)
	case hasPrefix(rest, "strace: "):
		p.parseMessage(ev, line, i)
		return true, nil
	case hasPrefix(rest, "<... "):
		return p.parseResumed(ev, line, i, no)
	case hasPrefix(rest, "+++ "):
		return true, p.parseExit(ev, line, i, no)
	case hasPrefix(rest, "--- "):
		return true, p.parseSignal(ev, line, i, no)
	case hasPrefix(rest, "[ "):
		p.parseMessage(ev, line, i)
		return true, nil
	case i > 0 && hasPrefix(rest, "> ") && line[i-1] == ' ':
		return false, nil // a -k stack frame " > /lib/...(func+0x10) [0x...]": skipped
	case hasPrefix(rest, "| "):
		return false, p.errorf(no, i+1, "hex dump line with no preceding call")
	}
	return false, p.errorf(no, i+1, "expected a syscall name, '<... resumed>', '+++', '---' or 'strace:'")
}

// parseNrIP parses the -n and -i prefixes at line[i] == '[' into ev (Nr and
// HasNr; IP) and returns the index after them. A bracket that is neither (a
// "[ Process PID=... ]" message) is left for the caller.
func parseNrIP(ev *Event, line []byte, i int) int {
	if j := skipSpaces(line, i+1); j < len(line) && isDigit(line[j]) {
		v, k, _, ok := parseUint(line, j)
		if ok && k+1 < len(line) && line[k] == ']' && line[k+1] == ' ' && v < 1<<31 {
			ev.Nr, ev.HasNr = int(v), true
			i = k + 2
		}
	}
	if j := i + 17; j+1 < len(line) && line[i] == '[' && line[j] == ']' && line[j+1] == ' ' {
		if ip, known, ok := parseIP(line[i+1 : j]); ok {
			ev.IP, ev.HasIP, ev.IPUnknown = ip, true, !known
			i = j + 2
		}
	}
	return i
}

// parseIP parses what -i prints inside its brackets: 16 hex digits, or 16
// question marks when the address is unknown (known false).
func parseIP(b []byte) (ip uint64, known, ok bool) {
	if string(b) == "????????????????" {
		return 0, false, true
	}
	for _, c := range b {
		v := hexVal(c)
		if v < 0 {
			return 0, false, false
		}
		ip = ip<<4 | uint64(v)
	}
	return ip, true, true
}

// hasPrefix reports whether b starts with s. Inlined with a constant s it
// compares a few words in place (bytes.HasPrefix with a []byte literal
// copies the literal first): parseLine runs it several times a line.
func hasPrefix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[:len(s)]) == s
}

// hasSuffix reports whether b ends with s, comparing in place as hasPrefix
// does.
func hasSuffix(b []byte, s string) bool {
	return len(b) >= len(s) && string(b[len(b)-len(s):]) == s
}

// parseTime parses -t/-tt (HH:MM:SS[.frac]), -ttt (epoch.frac) or -r
// (relative seconds) at line[i] into ev and returns the index after it. The
// usual -tt form followed by a space takes a word-at-a-time path; the
// results are parseTimeText's (tested by TestParseTimeFastPath and
// FuzzParseTime).
func (p *Parser) parseTime(ev *Event, line []byte, i, no int) (int, *SyntaxError) {
	if ns, ok := clockMicros(line, i); ok {
		ev.Time, ev.TimeKind, ev.TimePrec = ns, TimeOfDay, 6
		return i + 15, nil
	}
	return p.parseTimeText(ev, line, i, no)
}

// parseTimeText is parseTime for any timestamp, a byte at a time.
func (p *Parser) parseTimeText(ev *Event, line []byte, i, no int) (int, *SyntaxError) {
	j := skipDigits(line, i)
	if j < len(line) && line[j] == ':' {
		if j-i != 2 || j+6 > len(line) || line[j+3] != ':' || !isDigit(line[j+1]) || !isDigit(line[j+2]) ||
			!isDigit(line[j+4]) || !isDigit(line[j+5]) {
			return j, p.errorf(no, i+1, "expected a timestamp HH:MM:SS")
		}
		h := int64(line[i]-'0')*10 + int64(line[i+1]-'0')
		m := int64(line[j+1]-'0')*10 + int64(line[j+2]-'0')
		s := int64(line[j+4]-'0')*10 + int64(line[j+5]-'0')
		if h > 23 || m > 59 || s > 60 {
			return j, p.errorf(no, i+1, "timestamp out of range")
		}
		ev.Time = ((h*60+m)*60 + s) * 1e9
		ev.TimeKind = TimeOfDay
		k := j + 6
		if us, ok := micros(line, k); ok {
			// -tt's usual HH:MM:SS.uuuuuu, what parseFrac below gives too
			ev.Time += us * 1000
			ev.TimePrec = 6
			return k + 7, nil
		}
		if k < len(line) && line[k] == '.' {
			frac, e, prec, ok := parseFrac(line, k-2)
			if !ok {
				return e, p.errorf(no, k+1, "expected fraction digits in the timestamp")
			}
			ev.Time += frac - (s * 1e9)
			ev.TimePrec = prec
			k = e
		}
		return k, nil
	}
	ns, e, prec, ok := parseFrac(line, i)
	if !ok || prec == 0 {
		return e, p.errorf(no, i+1, "expected a timestamp (HH:MM:SS, epoch.usec or relative seconds)")
	}
	ev.Time, ev.TimePrec = ns, prec
	// strace -r prints seconds since the previous line, -ttt seconds since
	// the epoch: a value before 1973 can only be relative.
	if ns >= 1e8*1e9 {
		ev.TimeKind = TimeEpoch
	} else {
		ev.TimeKind = TimeRelative
	}
	return e, nil
}

const unfinishedMark = "<unfinished ...>"

// unfinishedTail is the last eight bytes of unfinishedMark. Testing them
// first compares one word in place; comparing a longer string is a call.
const unfinishedTail = "hed ...>"

// parseCall parses `name(args) = result` or `name(args <unfinished ...>`.
// line[i] starts an identifier.
func (p *Parser) parseCall(ev *Event, line []byte, i, no int) (bool, *SyntaxError) {
	name, j, ok := p.lookupCall(line, i)
	if !ok {
		if name, j, ok = p.scanCallName(line, i); !ok {
			return false, p.errorf(no, j+1, "expected '(' after syscall name %q", line[i:j])
		}
	}
	ev.Kind = KindSyscall
	ev.Name = name
	open := j + 1
	if hasSuffix(line, unfinishedTail) && hasSuffix(line, unfinishedMark) {
		args := line[open : len(line)-len(unfinishedMark)]
		if n := len(args); n > 0 && args[n-1] == ' ' {
			args = args[:n-1]
		}
		return false, p.addPending(ev, args, no)
	}
	if err := p.parseArgsResult(ev, line, open, no); err != nil {
		return true, err
	}
	if name == "write" && !countLast(ev.RawArgs) {
		return false, p.errorf(no, open+len(ev.RawArgs)+1, "expected the count to end write's arguments")
	}
	return true, nil
}

// callName is an entry of Parser.calls: a syscall name of 1 to 15 bytes,
// which has been checked to be an identifier, zero-padded to 16 bytes and
// loaded as two words. The zero value is an empty entry.
type callName struct {
	w0, w1 uint64
	n      int
	name   string // interned
}

// callBits is the log2 of the number of sets of Parser.calls. A set holds
// two entries: the name entered last, and the one it displaced. (With one
// entry a set, fcntl and fchown, each a tenth of a trace of the corpus,
// took each other's place.)
const callBits = 7

// callSet returns the set of p.calls for the words of a callName.
func (p *Parser) callSet(w0, w1 uint64) *[2]callName {
	return &p.calls[((w0^bits.RotateLeft64(w1, 29))*0x9e3779b97f4a7c15)>>(64-callBits)]
}

// findCall returns the entry of p.calls for the words of a callName of n
// bytes, or nil.
func (p *Parser) findCall(w0, w1 uint64, n int) *callName {
	s := p.callSet(w0, w1)
	if e := &s[0]; e.n == n && e.w0 == w0 && e.w1 == w1 {
		return e
	}
	if e := &s[1]; e.n == n && e.w0 == w0 && e.w1 == w1 {
		return e
	}
	return nil
}

// lookupCall returns the syscall name starting at line[i] and the index of
// the '(' after it, when the 16 bytes at line[i] start with a name in
// p.calls and '(': then scanCallName would return the same (tested by
// TestLookupCall and FuzzLookupCall). Otherwise ok is false. It takes the n
// bytes before the first '(' among the 16, zero-padded like a callName's:
// they match an entry of n bytes exactly when they are its name.
func (p *Parser) lookupCall(line []byte, i int) (name string, open int, ok bool) {
	if i < 0 || i+16 > len(line) {
		return "", 0, false
	}
	w0, w1 := binary.LittleEndian.Uint64(line[i:i+8]), binary.LittleEndian.Uint64(line[i+8:i+16])
	var n int
	if m := hasZeroByte(w0 ^ ones*'('); m != 0 {
		n = bits.TrailingZeros64(m) >> 3
		w0, w1 = w0&(1<<(8*n)-1), 0
	} else if m := hasZeroByte(w1 ^ ones*'('); m != 0 {
		n = bits.TrailingZeros64(m) >> 3
		w1 &= 1<<(8*n) - 1
		n += 8
	} else {
		return "", 0, false
	}
	if e := p.findCall(w0, w1, n); e != nil {
		return e.name, i + n, true
	}
	return "", 0, false
}

// scanCallName returns the identifier starting at line[i], interned, and
// the index j after it; ok says whether line[j] is the '(' that must follow a
// syscall name. It enters a name it accepts in p.calls.
func (p *Parser) scanCallName(line []byte, i int) (name string, j int, ok bool) {
	j = i
	for j < len(line) && isIdent(line[j]) {
		j++
	}
	if j >= len(line) || line[j] != '(' {
		return "", j, false
	}
	name = p.intern(line[i:j])
	p.rememberCall(name)
	return name, j, true
}

// rememberCall enters name, an identifier just found followed by '(', in
// p.calls if it is short enough.
func (p *Parser) rememberCall(name string) {
	if n := len(name); n > 0 && n < 16 {
		var pad [16]byte
		copy(pad[:], name)
		w0, w1 := binary.LittleEndian.Uint64(pad[:8]), binary.LittleEndian.Uint64(pad[8:])
		s := p.callSet(w0, w1)
		if e := &s[0]; e.n != n || e.w0 != w0 || e.w1 != w1 {
			s[1] = *e
		}
		s[0] = callName{w0, w1, n, name}
	}
}

// parseArgsResult validates the arguments starting at line[open] and parses
// the result after the closing ')'.
func (p *Parser) parseArgsResult(ev *Event, line []byte, open, no int) *SyntaxError {
	if wideArgs {
		if end := scanArgsWide(line, open); end >= 0 {
			ev.RawArgs = line[open:end:end]
			return p.parseResult(ev, line, end+1, no)
		}
	}
	return p.parseArgsResultBytes(ev, line, open, no)
}

// parseArgsResultBytes is parseArgsResult for the text scanArgsWide
// declines: it validates the arguments a byte at a time (scanArgsBytes),
// which reports the problem, or takes the text if it is well-formed after
// all (brackets nested deeper than scanArgsWide keeps).
func (p *Parser) parseArgsResultBytes(ev *Event, line []byte, open, no int) *SyntaxError {
	end, col, msg, st := scanArgsBytes(line, open, p.brk)
	p.brk = st
	if end < 0 {
		return p.errorf(no, col+1, "%s", msg)
	}
	ev.RawArgs = line[open:end:end]
	return p.parseResult(ev, line, end+1, no)
}

// parseResult parses ` = value [ERRNO (desc)] [(comment)] [(INJECTED)] [<dur>]`.
func (p *Parser) parseResult(ev *Event, line []byte, i, no int) *SyntaxError {
	if i >= 0 && i+4 <= len(line) && isEquals(binary.LittleEndian.Uint32(line[i:i+4])) {
		i += 3 // the usual " = ": what the general case below finds
	} else {
		i = skipPad(line, i)
		if i >= len(line) || line[i] != '=' {
			return p.errorf(no, i+1, "expected '= result' after the arguments")
		}
		i = skipSpaces(line, i+1)
		if i >= len(line) {
			return p.errorf(no, i+1, "expected a return value after '='")
		}
	}
	if line[i] == '?' {
		i++
	} else {
		neg := line[i] == '-'
		s := i
		if neg {
			s++
		}
		// parseUint's decimal case, the usual one, a byte at a time: no
		// leading zero and not "0x" (the value wraps the same way)
		var v uint64
		e, hex, ok := s, false, false
		if s < len(line) && line[s]-'1' < 9 {
			for e < len(line) && line[e]-'0' < 10 {
				v = v*10 + uint64(line[e]-'0')
				e++
			}
			ok = true
		} else if s < len(line) && line[s] == '0' && (s+1 == len(line) || line[s+1]-'0' >= 10 && line[s+1]|0x20 != 'x') {
			e, ok = s+1, true
		} else if v, e, hex, ok = parseUint(line, s); !ok {
			return p.errorf(no, i+1, "expected a return value after '='")
		}
		ev.Ret, ev.RetKnown, ev.RetHex = int64(v), true, hex
		if neg {
			ev.Ret = -ev.Ret
		}
		i = e
		if i < len(line) && line[i] == '<' {
			e := skipDecoration(line, i)
			if e < 0 {
				return p.errorf(no, i+1, "unterminated fd decoration '<...>' on the return value")
			}
			p.evRare = true
			ev.RetHasPath = true
			ev.RetPath = p.decodePath(line[i+1 : e-1])
			i = e
			if bytes.HasPrefix(line[i:], deletedMark) {
				ev.RetDeleted = true
				i += len(deletedMark)
			}
		}
	}
	// the usual ends: none, and a -T duration
	if i == len(line) {
		return nil
	}
	if i >= 0 && i+11 == len(line) {
		// durationMicros, written out: " <S" then ".uuuuuu>"
		if v := binary.LittleEndian.Uint32(line[i : i+4]); v&0xffff == ' '|'<'<<8 && byte(v>>16)-'0' < 10 {
			if us, ok := fracMicros(binary.LittleEndian.Uint64(line[i+3:i+11]), fracClose); ok {
				ev.Duration, ev.HasDuration, ev.DurPrec = int64(byte(v>>16)-'0')*1e9+us*1000, true, 6
				return nil
			}
		}
	}
	for {
		i = skipSpaces(line, i)
		if i >= len(line) {
			return nil
		}
		c := line[i]
		switch {
		case c == 'E' && ev.ErrnoName == "":
			p.evRare = true
			e := i
			for e < len(line) && isIdent(line[e]) {
				e++
			}
			name, errno, ok := errnoLookup(line[i:e])
			if !ok {
				name = p.intern(line[i:e])
			}
			ev.ErrnoName, ev.Errno = name, errno
			i = e
		case c == '(':
			e := matchParen(line, i)
			if e < 0 {
				return p.errorf(no, i+1, "expected ')' in the result")
			}
			body := line[i+1 : e]
			p.evRare = true
			switch {
			case string(body) == "INJECTED":
				ev.Injected = true
			case ev.ErrnoName != "" && ev.ErrnoDesc == nil:
				ev.ErrnoDesc = body
			default:
				ev.RetComment = body
			}
			i = e + 1
		case c == '/' && i+1 < len(line) && line[i+1] == '*':
			e := skipComment(line, i)
			if e < 0 {
				return p.errorf(no, i+1, "unterminated comment in the result")
			}
			p.evRare = true
			ev.RetComment = bytes.TrimSpace(line[i+2 : e-2])
			i = e
		case c == '<':
			ns, e, prec, ok := parseDuration(line, i)
			if !ok {
				return p.errorf(no, i+1, "expected a duration '<seconds>'")
			}
			ev.Duration, ev.HasDuration, ev.DurPrec = ns, true, prec
			i = e
		default:
			return p.errorf(no, i+1, "unexpected text after the return value")
		}
	}
}

// parseDuration parses -T's "<seconds>" at b[i] == '<' into nanoseconds and
// returns the index after the '>' and the number of fraction digits. The
// usual "<S.uuuuuu>" takes a word-at-a-time path; the results are
// parseDurationText's (tested by TestParseDurationFastPath and
// FuzzParseDuration).
func parseDuration(b []byte, i int) (ns int64, end int, prec uint8, ok bool) {
	if ns, ok := durationMicros(b, i); ok {
		return ns, i + 10, 6, true
	}
	return parseDurationText(b, i)
}

// parseDurationText is parseDuration a byte at a time.
func parseDurationText(b []byte, i int) (ns int64, end int, prec uint8, ok bool) {
	ns, e, prec, ok := parseFrac(b, i+1)
	if !ok || e >= len(b) || b[e] != '>' {
		return 0, 0, 0, false
	}
	return ns, e + 1, prec, true
}

// matchParen returns the index of the ')' matching the '(' at b[i], skipping
// strings and nested brackets, or -1.
func matchParen(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		if i = skipPlain(b, i, &parenSpecial); i >= len(b) {
			break
		}
		switch b[i] {
		case '"':
			j := skipString(b, i)
			if j < 0 {
				return -1
			}
			i = j
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				if b[i] != ')' {
					return -1
				}
				return i
			}
		}
		i++
	}
	return -1
}

// parenSpecial marks the bytes matchParen looks at.
var parenSpecial = [256]bool{'"': true, '(': true, ')': true, '[': true, ']': true, '{': true, '}': true}

// decodePath returns the -y path d with escapes decoded (aliasing d when
// there are none).
func (p *Parser) decodePath(d []byte) []byte {
	if bytes.IndexByte(d, '\\') < 0 {
		return d
	}
	p.pathBuf = unescape(p.pathBuf[:0], d)
	return p.pathBuf
}

func (p *Parser) addPending(ev *Event, args []byte, no int) *SyntaxError {
	if old, ok := p.pending[ev.Pid]; ok {
		return p.errorf(no, 0, "unfinished %s while %s (line %d) of pid %d is still unfinished", ev.Name, old.name, old.line, ev.Pid)
	}
	if len(p.pending) >= maxPending {
		return p.errorf(no, 0, "more than %d unfinished calls", maxPending)
	}
	if p.pendingBytes+len(args) > maxPendingBytes {
		return p.errorf(no, 0, "more than %d bytes of unfinished calls", maxPendingBytes)
	}
	p.pendingBytes += len(args)
	var pd *pending
	if n := len(p.freePend); n > 0 {
		pd, p.freePend = p.freePend[n-1], p.freePend[:n-1]
	} else {
		pd = new(pending)
	}
	pd.name, pd.line, pd.time, pd.timeKind, pd.timePrec, pd.pidStyle = ev.Name, no, ev.Time, ev.TimeKind, ev.TimePrec, ev.PidStyle
	pd.args = append(pd.args[:0], args...)
	p.pending[ev.Pid] = pd
	p.lastUnfinished, p.lastUnfinishedPid = no, ev.Pid
	return nil
}

var resumedMark = []byte(" resumed>")

// parseResumed joins `<... name resumed>rest` with the pending start of the
// same pid.
func (p *Parser) parseResumed(ev *Event, line []byte, i, no int) (bool, *SyntaxError) {
	s := i + 5
	j := s
	for j < len(line) && isIdent(line[j]) {
		j++
	}
	if !bytes.HasPrefix(line[j:], resumedMark) {
		return false, p.errorf(no, j+1, "expected '<... NAME resumed>'")
	}
	name := line[s:j]
	pd, ok := p.pending[ev.Pid]
	if !ok {
		return false, p.errorf(no, i+1, "%s resumed, but pid %d has no unfinished call", name, ev.Pid)
	}
	if pd.name != string(name) {
		return false, p.errorf(no, s+1, "%s resumed, but the unfinished call of pid %d is %s (line %d)", name, ev.Pid, pd.name, pd.line)
	}
	return p.resume(ev, pd, line[j+len(resumedMark):], no)
}

// continues reports whether line, which did not parse as an event, is the
// rest of the call left `<unfinished ...>` on the line before it: strace -z
// and -e status= print a call's second half so, without a pid or a
// `<... name resumed>` prefix. Such a line does not start as an event does
// (a pid or timestamp, `[pid`, `<...`, `+++`, `---`, `strace:`).
func (p *Parser) continues(line []byte, no int) bool {
	pd, ok := p.pending[p.lastUnfinishedPid]
	if !ok || p.lastUnfinished != no-1 || pd.line != no-1 {
		return false
	}
	i := skipSpaces(line, 0)
	if j := skipDigits(line, i); j > i && j < len(line) && (line[j] == ' ' || line[j] == ':' || line[j] == '.') {
		return false
	}
	for _, prefix := range []string{"[pid ", "<... ", "+++ ", "--- ", "strace: "} {
		if hasPrefix(line[i:], prefix) {
			return false
		}
	}
	return true
}

// parseContinuation parses line, for which continues holds, as the rest of
// the unfinished call on the line before it.
func (p *Parser) parseContinuation(line []byte, no int) (bool, *SyntaxError) {
	pd := p.pending[p.lastUnfinishedPid]
	ev := p.resetEvent(line, no)
	ev.Pid = p.lastUnfinishedPid
	return p.resume(ev, pd, line, no)
}

// resume completes the pending call pd of ev's pid with rest, the text after
// `<... name resumed>`, into ev.
func (p *Parser) resume(ev *Event, pd *pending, rest []byte, no int) (bool, *SyntaxError) {
	delete(p.pending, ev.Pid)
	p.pendingBytes -= len(pd.args)
	p.freePend = append(p.freePend, pd)
	jb := append(p.joinBuf[:0], pd.name...)
	jb = append(jb, '(')
	open := len(jb)
	jb = append(jb, pd.args...)
	jb = append(jb, rest...)
	p.joinBuf = jb
	ev.Kind, ev.Name, ev.Text = KindSyscall, pd.name, jb
	p.aliased = false // the event references joinBuf only
	ev.Line, ev.EndLine = pd.line, no
	ev.Time, ev.TimeKind, ev.TimePrec, ev.PidStyle = pd.time, pd.timeKind, pd.timePrec, pd.pidStyle
	if err := p.parseArgsResult(ev, jb, open, no); err != nil {
		// Columns refer to the joined text; report them against this line.
		err.Col = 0
		err.Msg += " (in the call joined with line " + fmt.Sprint(pd.line) + ")"
		return false, err
	}
	return true, nil
}

// flushPending emits the earliest call that was never resumed. On the first
// call it moves the pending calls to a list sorted by line, so flushing n
// calls costs O(n log n).
func (p *Parser) flushPending() {
	if p.flush == nil {
		for pid, pd := range p.pending {
			p.flush = append(p.flush, flushItem{pid, pd})
		}
		sort.Slice(p.flush, func(i, j int) bool { return p.flush[i].pd.line < p.flush[j].pd.line })
	}
	it := p.flush[0]
	p.flush = p.flush[1:]
	delete(p.pending, it.pid)
	pd := it.pd
	p.pendingBytes -= len(pd.args)
	jb := append(p.joinBuf[:0], pd.name...)
	jb = append(jb, '(')
	jb = append(jb, pd.args...)
	jb = append(jb, " <unfinished ...>"...)
	p.joinBuf = jb
	ev := &p.ev
	p.evRare = true
	*ev = Event{File: p.file, Line: pd.line, EndLine: pd.line, Pid: it.pid, PidStyle: pd.pidStyle, p: p,
		Kind: KindSyscall, Name: pd.name, Time: pd.time, TimeKind: pd.timeKind, TimePrec: pd.timePrec,
		RawArgs: jb[len(pd.name)+1 : len(pd.name)+1+len(pd.args)], Unfinished: true, Text: jb}
}

type flushItem struct {
	pid int
	pd  *pending
}

// parseExit parses `+++ exited with N +++` and `+++ killed by SIG [(core dumped)] +++`.
func (p *Parser) parseExit(ev *Event, line []byte, i, no int) *SyntaxError {
	body, ok := bytes.CutSuffix(line[i+4:], []byte(" +++"))
	if !ok {
		return p.errorf(no, len(line)+1, "expected ' +++' at the end of the line")
	}
	if n, ok := bytes.CutPrefix(body, []byte("exited with ")); ok {
		neg := len(n) > 0 && n[0] == '-'
		s := 0
		if neg {
			s = 1
		}
		v, e, _, okd := parseUint(n, s)
		if !okd || e != len(n) {
			return p.errorf(no, i+17, "expected an exit status")
		}
		ev.Kind, ev.Ret, ev.RetKnown = KindExit, int64(v), true
		if neg {
			ev.Ret = -ev.Ret
		}
		p.gone(ev.Pid)
		return nil
	}
	if n, ok := bytes.CutPrefix(body, []byte("killed by ")); ok {
		if c, ok := bytes.CutSuffix(n, []byte(" (core dumped)")); ok {
			n, ev.CoreDumped = c, true
		}
		if len(n) == 0 {
			return p.errorf(no, i+15, "expected a signal name")
		}
		ev.Kind, ev.Name = KindKilled, p.intern(n)
		p.gone(ev.Pid)
		return nil
	}
	ev.Kind, ev.RawArgs = KindMessage, line[i:]
	return nil
}

// parseSignal parses `--- SIGNAME {siginfo} ---` (and `--- stopped by SIG ---`).
func (p *Parser) parseSignal(ev *Event, line []byte, i, no int) *SyntaxError {
	body, ok := bytes.CutSuffix(line[i+4:], []byte(" ---"))
	if !ok {
		return p.errorf(no, len(line)+1, "expected ' ---' at the end of the line")
	}
	j := 0
	for j < len(body) && isIdent(body[j]) {
		j++
	}
	if j == 0 {
		return p.errorf(no, i+5, "expected a signal name")
	}
	ev.Kind, ev.Name = KindSignal, p.intern(body[:j])
	args := body[j:]
	if len(args) > 0 && args[0] == ' ' {
		args = args[1:]
	}
	if len(args) > 0 && args[0] == '{' {
		// Balanced text makes scanArgsBytes run off the end looking for the ')'
		// that would close an argument list.
		end, col, msg, st := scanArgsBytes(args, 0, p.brk) // rare: no wide scan
		p.brk = st
		if end >= 0 {
			col, msg = end, "unbalanced ')' in siginfo"
		}
		if end >= 0 || msg != msgNoClose {
			return p.errorf(no, i+4+j+1+col+1, "%s", msg)
		}
	}
	ev.RawArgs = args
	return nil
}

// parseMessage parses `strace: Process N attached|detached` and other
// messages from strace itself.
func (p *Parser) parseMessage(ev *Event, line []byte, i int) {
	ev.Kind, ev.RawArgs = KindMessage, line[i:]
	n, ok := bytes.CutPrefix(line[i:], []byte("strace: Process "))
	if !ok {
		return
	}
	v, e, _, okd := parseUint(n, 0)
	if !okd || v > 1<<31 {
		return
	}
	switch {
	case bytes.HasPrefix(n[e:], []byte(" attached")):
		ev.Kind = KindAttached
	case bytes.HasPrefix(n[e:], []byte(" detached")):
		ev.Kind = KindDetached
	default:
		return
	}
	ev.Pid, ev.RawArgs = int(v), nil
	p.noteMessage(ev.Kind, ev.Pid)
}

package strace

import (
	"bytes"
	"fmt"
	"strings"
)

// strace writing to its own stderr (`strace -f prog 2> FILE`) differs from
// `-o FILE` in two ways, both handled here, on the parser's slow path:
//
//   - Its messages (`strace: Process N attached`, `detached`, ...) are
//     written as they happen, also in the middle of a call line that is
//     not finished yet; the call goes on, on the next line:
//
//     clone(child_stack=NULL, flags=...|SIGCHLDstrace: Process 24132 attached
//     , child_tidptr=0x7f2f4825ea10) = 24132
//     vfork(strace: Process 24127 attached
//     <unfinished ...>
//
//     A line that does not parse and ends with such a message is cut there:
//     the message is an event of its own, and the head of the line is held
//     and joined with the next line (holdSplice, joinHeld).
//
//   - The `[pid N] ` prefix is printed only while more than one task is
//     traced (strace's printleader: `nprocs > 1 && !outfname`): the first
//     task's lines carry none until its first child is attached, and once
//     a task is alone again its lines carry none either. From the first
//     `Process N attached` message on, the parser keeps the set of traced
//     tasks (attached ones, less those that exited, were killed or
//     detached) and gives a line without a prefix the pid of the only task
//     left (Parser.filePid, which the fast path reads too). The first task's
//     own pid shows only in its bracketed lines: the first bracketed pid
//     that no message announced is taken as the first task's and mapped to
//     the pid its earlier lines had (0 unless the file name gives one), so
//     that its calls keep one pid throughout.

// stderrState is the parser's view of the traced tasks once strace's
// messages show that its stderr is being read.
type stderrState struct {
	live    map[int]bool // traced tasks, by the pid events carry
	root    int          // the pid of the first task's unprefixed lines
	alias   int          // the first task's bracketed pid, once seen
	aliased bool
}

// noteMessage notes strace's message that it traces (attached) or no longer
// traces pid.
func (p *Parser) noteMessage(kind Kind, pid int) {
	if p.std == nil {
		if kind != KindAttached {
			return
		}
		p.std = &stderrState{live: map[int]bool{p.filePid: true}, root: p.filePid}
	}
	if kind == KindAttached {
		p.std.live[pid] = true
		return
	}
	p.gone(pid)
}

// gone removes a task that exited, was killed or was detached; the pid of
// unprefixed lines becomes that of the only task left, if one is.
func (p *Parser) gone(pid int) {
	st := p.std
	if st == nil {
		return
	}
	delete(st.live, pid)
	if len(st.live) == 1 {
		for q := range st.live {
			p.filePid = q
		}
	}
}

// bracketPid maps the pid of a `[pid N]` prefix once strace's messages
// have been seen: the first pid no message announced is the first task's.
func (p *Parser) bracketPid(v int) int {
	st := p.std
	if st == nil || st.live[v] {
		return v
	}
	if st.aliased && v == st.alias {
		return st.root
	}
	if !st.aliased && st.root == 0 {
		st.aliased, st.alias = true, v
		return st.root
	}
	st.live[v] = true // a task from before the first message
	return v
}

// spliceAt returns where a message of strace's begins in line, when line
// ends with one that does not start it (a call line it cut), else -1.
func spliceAt(line []byte) int {
	k := bytes.LastIndex(line, []byte("strace: "))
	if k <= 0 {
		return -1
	}
	return k
}

// holdSplice parses the message that ends line at k as an event and holds
// the head of the line to be joined with the next line (see joinHeld).
func (p *Parser) holdSplice(line []byte, k, no int) (bool, *SyntaxError) {
	if len(line) > p.maxLen {
		return false, p.errorf(no, k+1, "line longer than %d bytes", p.maxLen)
	}
	p.held = append(p.held[:0], line[:k]...)
	p.holding, p.heldLine, p.heldNoFast = true, no, p.noFast
	p.noFast = true // Next's fast path must not take the continuation alone
	return p.parseLine(line[k:], no)
}

// joinHeld returns the held head of a cut call line joined with line, its
// continuation, and the line number the call started on.
func (p *Parser) joinHeld(line []byte) ([]byte, int) {
	p.headLen = len(p.held)
	p.held = append(p.held, line...)
	p.holding, p.noFast = false, p.heldNoFast
	p.aliased = false
	return p.held, p.heldLine
}

// cutError places err, found in a call line that a message of strace's
// cut at line head and the next line continued, on the continuation.
func (p *Parser) cutError(err *SyntaxError, head int) *SyntaxError {
	if err.Col > p.headLen {
		err.Col -= p.headLen
	} else {
		err.Col = 0
	}
	err.Msg += fmt.Sprintf(" (in the call that strace's message cut at line %d: strace's stderr was captured, as with `strace -f prog 2> FILE`; record with `strace -o FILE`)", head)
	return err
}

// hint adds what a malformed line suggests about how the trace was
// recorded to err's message.
func (p *Parser) hint(err *SyntaxError, line []byte) *SyntaxError {
	switch {
	case strings.Contains(err.Msg, "record with"):
	case bytes.HasPrefix(bytes.TrimSpace(line), []byte("% time")):
		err.Msg += " (this is the summary of `strace -c`, not a trace: record without -c, or with -C for both)"
	case spliceAt(line) > 0:
		err.Msg += " (strace's own messages are mixed into the calls: its stderr was captured, as with `strace -f prog 2> FILE`; record with `strace -o FILE`)"
	case p.std != nil && strings.HasPrefix(err.Msg, "expected"):
		err.Msg += " (the traced program's own stderr output is mixed in with strace's (`strace prog 2> FILE`); record with `strace -o FILE`)"
	}
	return err
}

// The traced program's own output, when it shares strace's stderr, lands in
// the middle of the line of the write that wrote it: strace prints the
// arguments at the call's entry and the result at its exit, and the bytes
// reach the file in between:
//
//	write(2, "to stderr\n", 10to stderr
//	)                       = 10
//
// A write line that does not parse is joined with its rest when the bytes
// after its count are the bytes its buffer shows (all of them, or the
// prefix -s kept) and the count's worth of them, through as many lines as
// they span, is followed by the rest of the call (programOutput).

// programOutput returns line, a write call that did not parse, with the
// program's output that follows its count removed, reading the lines that
// output spans; ok is false when line is not such a call. The joined line
// is in p.held; end is the number of the last line read.
func (p *Parser) programOutput(line []byte, no int) (joined []byte, end int, ok bool, serr *SyntaxError) {
	ev := &p.ev
	if ev.Kind != KindSyscall {
		return nil, 0, false, nil
	}
	if ev.Name != "write" {
		return p.outputBeforeResult(line, no)
	}
	i := bytes.Index(line, []byte("write("))
	if i < 0 {
		return nil, 0, false, nil
	}
	// write(FD[<path>], "...", N
	q := bytes.Index(line[i:], []byte(`, "`))
	if q < 0 {
		return nil, 0, false, nil
	}
	s := i + q + 2
	e := s + 1
	for e < len(line) && line[e] != '"' {
		if line[e] == '\\' {
			e++
		}
		e++
	}
	if e >= len(line) {
		return nil, 0, false, nil
	}
	shown := unescape(p.pathBuf[:0], line[s+1:e])
	p.pathBuf = shown
	e++
	truncated := hasPrefix(line[e:], "...")
	if truncated {
		e += 3
	}
	if !hasPrefix(line[e:], ", ") {
		return nil, 0, false, nil
	}
	d := e + 2
	// the count: the digits before the output; the output begins with the
	// bytes shown, which may be digits too
	for k := d + 1; k <= len(line) && k-d <= 19 && isDigit(line[k-1]); k++ {
		n, _, _, okn := parseUint(line[:k], d)
		if !okn || n > 1<<30 || int(n) < len(shown) || !truncated && int(n) != len(shown) {
			continue
		}
		out := line[k:]
		if !bytes.HasPrefix(out, shown[:min(len(shown), len(out))]) {
			continue
		}
		return p.skipOutput(line[:k], out, int64(n), no)
	}
	return nil, 0, false, nil
}

// outputBeforeResult is programOutput for a call whose buffer the line
// does not show (copy_file_range, sendfile, splice to the shared file): when
// the next line is the rest of the call, `) = N`, the N bytes before it (the
// last of them the line break) are the program's output.
func (p *Parser) outputBeforeResult(line []byte, no int) ([]byte, int, bool, *SyntaxError) {
	next := p.peekNext()
	if len(next) == 0 || next[0] != ')' {
		return nil, 0, false, nil
	}
	j := skipSpaces(next, 1)
	if !hasPrefix(next[j:], "= ") {
		return nil, 0, false, nil
	}
	n, _, _, ok := parseUint(next, j+2)
	open := bytes.IndexByte(line, '(')
	if !ok || n < 1 || open < 0 || int64(len(line)-open-1) < int64(n-1) {
		return nil, 0, false, nil
	}
	return p.skipOutput(line[:len(line)-int(n-1)], line[len(line)-int(n-1):], int64(n), no)
}

// skipOutput joins head with what follows n bytes of output that start
// with out (the rest of head's line, no): the lines after it count one
// byte more each, for their line break.
func (p *Parser) skipOutput(head, out []byte, n int64, no int) ([]byte, int, bool, *SyntaxError) {
	p.held = append(p.held[:0], head...)
	for int64(len(out)) < n {
		n -= int64(len(out)) + 1 // the line break
		line, next, err := p.readLine()
		if err != nil {
			return nil, 0, true, p.errorf(no, len(head)+1, "the program's output after the count of this write ends the input (its stderr is mixed in with strace's: record with `strace -o FILE`)")
		}
		if n < 0 {
			// the output ended with the line break: this line is the rest
			return append(p.held, line...), next, true, nil
		}
		no, out = next, line
	}
	return append(p.held, out[n:]...), no, true, nil
}

// countLast reports whether a write's arguments end with its count (digits
// after the last ", "), as they do unless the program's output follows it.
func countLast(args []byte) bool {
	k := bytes.LastIndex(args, []byte(", "))
	if k < 0 || k+2 == len(args) {
		return false
	}
	for _, c := range args[k+2:] {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

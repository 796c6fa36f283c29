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
	if !p.holding {
		p.holding, p.heldLine, p.heldNoFast = true, no, p.noFast
	}
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
	case spliceAt(line) > 0:
		err.Msg += " (strace's own messages are mixed into the calls: its stderr was captured, as with `strace -f prog 2> FILE`; record with `strace -o FILE`)"
	case p.std != nil && strings.HasPrefix(err.Msg, "expected"):
		err.Msg += " (the traced program's own stderr output is mixed in with strace's (`strace prog 2> FILE`); record with `strace -o FILE`)"
	}
	return err
}

package strace

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// lineReader is the parser's input buffer: bufio.Reader's ReadSlice and
// Peek (same code, same results, same errors), with the unread bytes
// buf[r:w] open to the parser. That lets the parser take a line, and look at
// the start of the next one, without a call into bufio for each.
type lineReader struct {
	rd   io.Reader
	buf  []byte // its capacity holds frameSlack bytes more, never read into
	r, w int    // buf[r:w] holds the bytes read from rd and not yet consumed
	err  error  // the error rd returned, not yet reported
}

// maxEmptyReads is bufio's limit on consecutive reads returning no data and
// no error, after which reading fails with io.ErrNoProgress.
const maxEmptyReads = 100

var errNegativeRead = errors.New("strace: reader returned negative count from Read")

func newLineReader(rd io.Reader, size int) lineReader {
	return lineReader{rd: rd, buf: make([]byte, size, size+frameSlack)}
}

// buffered returns how many unread bytes the buffer holds.
func (b *lineReader) buffered() int { return b.w - b.r }

// fill slides the unread bytes to the start of the buffer and reads more
// (bufio.Reader.fill). The buffer must not be full.
func (b *lineReader) fill() {
	if b.r > 0 {
		copy(b.buf, b.buf[b.r:b.w])
		b.w -= b.r
		b.r = 0
	}
	for i := maxEmptyReads; i > 0; i-- {
		n, err := b.rd.Read(b.buf[b.w:len(b.buf):len(b.buf)]) // not into the slack
		if n < 0 {
			b.err = errNegativeRead // a broken io.Reader: an error, not a panic
			return
		}
		b.w += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}

// readErr returns the pending read error and clears it.
func (b *lineReader) readErr() error {
	err := b.err
	b.err = nil
	return err
}

// readSlice is bufio.Reader.ReadSlice: it consumes and returns the bytes up
// to and including delim. Without delim it returns what there is with the
// read error, or the full buffer with bufio.ErrBufferFull. The slice is valid
// until the next read.
func (b *lineReader) readSlice(delim byte) (line []byte, err error) {
	s := 0 // the bytes before buf[r+s] have no delim
	for {
		if i := bytes.IndexByte(b.buf[b.r+s:b.w], delim); i >= 0 {
			i += s
			line = b.buf[b.r : b.r+i+1]
			b.r += i + 1
			return line, nil
		}
		if b.err != nil {
			line = b.buf[b.r:b.w]
			b.r = b.w
			return line, b.readErr()
		}
		if b.buffered() >= len(b.buf) {
			b.r = b.w
			return b.buf, bufio.ErrBufferFull
		}
		s = b.w - b.r
		b.fill()
	}
}

// peek is bufio.Reader.Peek for 0 <= n <= len(buf): the next n unread bytes
// (fewer, with the read error or bufio.ErrBufferFull, if there are not n
// bytes to be had), without consuming them.
func (b *lineReader) peek(n int) ([]byte, error) {
	for b.w-b.r < n && b.w-b.r < len(b.buf) && b.err == nil {
		b.fill()
	}
	var err error
	if avail := b.w - b.r; avail < n {
		n = avail
		err = b.readErr()
		if err == nil {
			err = bufio.ErrBufferFull
		}
	}
	return b.buf[b.r : b.r+n], err
}

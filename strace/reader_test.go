package strace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// readers returns the io.Readers the lineReader tests feed data through:
// whole, a byte at a time, half reads, data with EOF, a timeout, an error
// in the middle, and empty reads.
func readers(data []byte) []func() io.Reader {
	return []func() io.Reader{
		func() io.Reader { return bytes.NewReader(data) },
		func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
		func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
		func() io.Reader { return iotest.TimeoutReader(bytes.NewReader(data)) },
		func() io.Reader {
			return io.MultiReader(bytes.NewReader(data[:len(data)/2]), iotest.ErrReader(errors.New("boom")), bytes.NewReader(data[len(data)/2:]))
		},
		func() io.Reader { return &emptyReads{r: bytes.NewReader(data)} },
	}
}

// emptyReads returns (0, nil) before every read of its reader, and forever
// once that reader is drained (which must end in io.ErrNoProgress).
type emptyReads struct {
	r    io.Reader
	odd  bool
	done bool
}

func (e *emptyReads) Read(b []byte) (int, error) {
	if e.odd = !e.odd; e.odd || e.done {
		return 0, nil
	}
	n, err := e.r.Read(b)
	if err == io.EOF {
		e.done, err = true, nil
	}
	return n, err
}

// checkLineReader runs the same sequence of ReadSlice and Peek calls (ops:
// even bytes read a slice, odd ones peek at op/2 bytes) on a lineReader
// and on a bufio.Reader of the same size, and compares every answer.
func checkLineReader(t *testing.T, data, ops []byte, size int) {
	t.Helper()
	for k, mk := range readers(data) {
		lr := newLineReader(mk(), size)
		br := bufio.NewReaderSize(mk(), size)
		if br.Size() != size {
			t.Fatalf("bufio size %d", br.Size())
		}
		for n := 0; n < 4*len(data)+len(ops)+8; n++ {
			var got, want string
			op := byte(0)
			if len(ops) > 0 {
				op = ops[n%len(ops)]
			}
			if op%2 == 0 {
				b1, e1 := lr.readSlice('\n')
				b2, e2 := br.ReadSlice('\n')
				got, want = fmt.Sprintf("readSlice %q %v", b1, e1), fmt.Sprintf("readSlice %q %v", b2, e2)
			} else {
				m := min(int(op/2), size)
				b1, e1 := lr.peek(m)
				b2, e2 := br.Peek(m)
				got, want = fmt.Sprintf("peek(%d) %q %v", m, b1, e1), fmt.Sprintf("peek(%d) %q %v", m, b2, e2)
			}
			if got != want {
				t.Fatalf("reader %d, op %d: %s, bufio: %s", k, n, got, want)
			}
			if lr.buffered() != br.Buffered() {
				t.Fatalf("reader %d, op %d: %d buffered, bufio %d", k, n, lr.buffered(), br.Buffered())
			}
		}
	}
}

// TestLineReaderMatchesBufio: lineReader answers ReadSlice and Peek as
// bufio.Reader does, through short and long lines, lines longer than the
// buffer, a missing final newline and read errors.
func TestLineReaderMatchesBufio(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 40)
	for _, data := range [][]byte{
		[]byte("a\nbc\n\ndef"),
		[]byte("read(3, \"ab\", 2) = 2\n | 00000  61 62  ab |\nclose(3) = 0\n"),
		append(append([]byte("x\n"), long...), "\nyy\n"...),
		long,
		{},
	} {
		for _, ops := range []string{"", "\x01", "\x00\x41", "\x40\x00\x00\x03", "\x02\x05\x00\x21\x00"} {
			checkLineReader(t, data, []byte(ops), 16)
		}
	}
}

// FuzzLineReader compares lineReader with bufio.Reader on any input and
// sequence of calls.
//
//	go test -fuzz=FuzzLineReader ./strace
func FuzzLineReader(f *testing.F) {
	f.Add([]byte("a\nbc\n\ndef"), []byte("\x00\x41"))
	f.Add([]byte("read(3, \"ab\", 2) = 2\n | 00000  61 62  ab |\n"), []byte("\x40\x00\x00\x03"))
	f.Fuzz(func(t *testing.T, data, ops []byte) {
		checkLineReader(t, data, ops, 16)
	})
}

// negReader is a broken io.Reader that reports a negative count.
type negReader struct{}

func (negReader) Read([]byte) (int, error) { return -1, nil }

// TestBrokenReaderIsAnError: a Read returning a negative count makes Next
// fail with an error instead of panicking (bufio.Reader would panic).
func TestBrokenReaderIsAnError(t *testing.T) {
	p := NewParser(negReader{}, "broken", Options{})
	_, err := p.Next()
	if !errors.Is(err, errNegativeRead) {
		t.Fatalf("Next = %v, want the negative-count error", err)
	}
}

// TestLineReaderSlack: the read buffer's capacity holds the frameSlack bytes
// frameNext reads past its end (TestFrameNextGuardPage shows it needs them),
// and a fill does not read into them.
func TestLineReaderSlack(t *testing.T) {
	lr := newLineReader(strings.NewReader(strings.Repeat("x\n", 100)), 64)
	require.GreaterOrEqual(t, cap(lr.buf), len(lr.buf)+frameSlack)
	lr.fill()
	require.Equal(t, 64, lr.w)
	require.Equal(t, make([]byte, frameSlack), lr.buf[len(lr.buf):cap(lr.buf)])
	p := NewParser(strings.NewReader(""), "x", Options{})
	require.GreaterOrEqual(t, cap(p.in.buf), len(p.in.buf)+frameSlack)
}

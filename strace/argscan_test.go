package strace

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// scanArgsWide and argMasks are checked against the byte-at-a-time code:
// argMasks (assembly on amd64) against argMasksGeneric and a byte loop, and
// scanArgsWide against scanArgs on the corpus, on every one-byte change and
// truncation of argument lists that exercise each rule, and by
// FuzzScanArgsWide.

// masksByBytes is argMasks a byte at a time: the oracle.
func masksByBytes(w *[windowLen]byte) (m windowMasks) {
	for k, c := range w {
		bit := uint64(1) << k
		switch c {
		case '"':
			m.quote |= bit
		case '\\':
			m.bslash |= bit
		case '(', ')', '[', ']', '{', '}':
			m.brk |= bit
		case '/':
			m.slash |= bit
		case '<':
			m.less |= bit
		case '>':
			m.greater |= bit
		}
	}
	return m
}

func checkMasks(t *testing.T, w *[windowLen]byte) {
	t.Helper()
	want := masksByBytes(w)
	got := windowMasks{quote: 1, greater: 1} // argMasks must overwrite it
	argMasks(w, &got)
	require.Equal(t, want, got, "argMasks(%q)", w[:])
	got = windowMasks{bslash: 1, less: 1}
	argMasksGeneric(w, &got)
	require.Equal(t, want, got, "argMasksGeneric(%q)", w[:])
}

// TestArgMasks tries every byte value at every position of a window of
// spaces and of a window of specials, and random windows.
func TestArgMasks(t *testing.T) {
	for _, fill := range []byte{' ', '"', '>', 0x00, 0xff, 0x80} {
		for k := range windowLen {
			for c := range 256 {
				var w [windowLen]byte
				for i := range w {
					w[i] = fill
				}
				w[k] = byte(c)
				checkMasks(t, &w)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []byte("\"\\/<>()[]{}*aZ09 ,\x00\xff\x7b\x5b\x29\x28\x2f\x3c\xa2\xdc")
	for range 20000 {
		var w [windowLen]byte
		for i := range w {
			if rng.IntN(4) == 0 {
				w[i] = byte(rng.Uint32())
			} else {
				w[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		checkMasks(t, &w)
	}
}

// checkScanArgs compares scanArgsWide with scanArgs on b from i, with b's
// capacity ending at its length (the padded-copy path) and with b followed
// by bytes that would change the answer if they were looked at.
func checkScanArgs(t testing.TB, b []byte, i int) {
	t.Helper()
	wantEnd, _, _, wantStack := scanArgsBytes(b, i, nil)
	for _, tail := range []string{"", `")]}"\"(/*<`, ") = 0"} {
		buf := make([]byte, len(b), len(b)+len(tail)+windowLen)
		copy(buf, b)
		in := buf
		if tail != "" {
			in = append(buf, tail...)[:len(b)]
		} else {
			in = buf[:len(b):len(b)]
		}
		end := scanArgsWide(in, i)
		if end < 0 {
			// it declines only text scanArgsBytes rejects, or brackets
			// nested deeper than its register holds
			if wantEnd >= 0 && nesting(b, i) <= maxWideDepth {
				t.Fatalf("scanArgsWide(%q, %d) declined; scanArgsBytes found ')' at %d", b, i, wantEnd)
			}
			continue
		}
		if end != wantEnd || len(wantStack) != 0 {
			t.Fatalf("scanArgsWide(%q, %d) = %d; scanArgsBytes: %d %q", b, i, end, wantEnd, wantStack)
		}
	}
}

// nesting returns how deeply brackets nest in the well-formed argument
// text at b[i:], skipping strings, comments and decorations as
// scanArgsBytes does.
func nesting(b []byte, i int) int {
	depth, most := 0, 0
	for i < len(b) {
		if j := skipAtom(b, i); j != i {
			if j < 0 {
				return most
			}
			i = j
			continue
		}
		switch argClass[b[i]] {
		case clsOpen:
			depth++
			most = max(most, depth)
		case clsClose:
			if depth--; depth < 0 {
				return most
			}
		}
		i++
	}
	return most
}

// TestScanArgsWideCorpus compares the two scans on every line of the
// recorded traces, from just after each '(' of the line.
func TestScanArgsWideCorpus(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "traces", "*.strace"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		require.NoError(t, err)
		for line := range bytes.Lines(data) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			for i, c := range line {
				if c == '(' {
					checkScanArgs(t, line, i+1)
					n++
				}
			}
		}
	}
	require.Greater(t, n, 18000)
}

// TestScanArgsWideMutations changes each byte of argument lists that
// exercise every rule (strings with escaped quotes and backslash runs,
// strings longer than a window, comments, decorations, nested brackets) to
// each special byte, deletes it, and truncates the list.
func TestScanArgsWideMutations(t *testing.T) {
	long := bytes.Repeat([]byte(`\300\"x\\`), 12)
	cases := []string{
		`3, "abc"..., 512) = 512`,
		`AT_FDCWD, "/tmp/a\"b\\", O_RDONLY) = 3`,
		`1, "` + string(long) + `"..., 4096) = 4096 <0.000012>`,
		`3</tmp/x\x3e<char 1:5>>, [{iov_base="a)", iov_len=2}], 1) = 2`,
		`0x7f, /* 12 entries */ {st_mode=S_IFREG|0644, st_size=3}) = 0`,
		`3, 0 /* SEEK_SET */, /* ) " */ F_SETLK, /*/ ) **/ 1, /**/ 2) = 0`,
		`{sa_family=AF_UNIX, sun_path="/run/(x)"}, 110) = -1 ENOENT (No such file or directory)`,
		`"\\\\\"", "\\", "\"") = 0`,
		`[[[{(")")}]]], <x, a<b, 1/2) = 0`,
		`3</a/b>, 4<UNIX-STREAM:[1->2]>, 5</(x)>, 6</a"b>"> = 3</c>`,
		`3<a\>)>, 5) = 0`, // the escaped '>' does not close
		strings.Repeat("([{", maxWideDepth/3) + "[]" + strings.Repeat("}])", maxWideDepth/3) + ") = 0",
		strings.Repeat("(", maxWideDepth+1) + strings.Repeat(")", maxWideDepth+1) + ") = 0",
		`AT_FDCWD</tmp/corpus-work/run/oraus.curend/a long path past one window/oraus.msb>, "x") = 0`,
	}
	subst := []byte("\"\\/<>*()[]{}x ")
	for _, s := range cases {
		for k := 0; k <= len(s); k++ {
			checkScanArgs(t, []byte(s[:k]), 0)
		}
		for k := range len(s) {
			for _, c := range subst {
				b := []byte(s)
				b[k] = c
				checkScanArgs(t, b, 0)
			}
			checkScanArgs(t, append([]byte(s[:k]), s[k+1:]...), 0)
		}
		// the same text at every offset within a window
		for pad := 1; pad < windowLen; pad++ {
			b := append(bytes.Repeat([]byte("a"), pad), s...)
			checkScanArgs(t, b, pad)
		}
	}
}

// FuzzScanArgsWide compares scanArgsWide with scanArgs at every offset of
// the input.
//
//	go test -fuzz=FuzzScanArgsWide ./strace
func FuzzScanArgsWide(f *testing.F) {
	f.Add([]byte(`3, "abc\"\\"..., 512) = 512`))
	f.Add([]byte(`3</a\x3eb<char 1:5>>, /* x */ [{a=(1)}]) = 0`))
	f.Add(append(append([]byte(`1, "`), bytes.Repeat([]byte(`\\\"`), 30)...), `") = 1`...))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1024 { // every offset: quadratic in the length
			b = b[:1024]
		}
		for i := 0; i <= len(b); i++ {
			checkScanArgs(t, b, i)
		}
	})
}

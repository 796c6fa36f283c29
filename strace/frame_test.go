package strace

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseFast (frame.go) must leave every event exactly as parseLine leaves
// it, with the Event reused from line to line: these tests run a parser
// with the fast path and one without (noFast: every line cleared and parsed
// by parseLine) over the same text and compare every event, error and
// count, using the events' lazy argument state in between as callers do.

// diffParse parses data with and without parseFast and fails at the first
// difference.
func diffParse(t testing.TB, data []byte, opts Options) {
	t.Helper()
	diffParseLazy(t, data, opts, true)
	diffParseLazy(t, data, opts, false) // no lazy state: stale fields are not cleared by it
}

// diffParseLazy is diffParse; with touch, it uses the lazy argument state
// of some events (Args, Int, NArgs), which makes the parser clear the next
// event in full.
func diffParseLazy(t testing.TB, data []byte, opts Options, touch bool) {
	t.Helper()
	fast := NewParser(bytes.NewReader(data), "diff.4321", opts)
	slow := NewParser(bytes.NewReader(data), "diff.4321", opts)
	slow.noFast = true
	for n := 0; ; n++ {
		ev1, err1 := fast.Next()
		ev2, err2 := slow.Next()
		if !reflect.DeepEqual(err1, err2) {
			t.Fatalf("event %d: error %v, without the fast path %v\n%s", n, err1, err2, excerpt(data, slow.lineNo))
		}
		if err1 == io.EOF {
			break
		}
		if err1 != nil {
			continue
		}
		if (ev1 == nil) != (ev2 == nil) {
			t.Fatalf("event %d: %v, without the fast path %v", n, ev1, ev2)
		}
		a, b := *ev1, *ev2
		a.p, b.p = nil, nil
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("event %d (line %d) differs:\n%+v\nwithout the fast path:\n%+v\n%s", n, ev2.Line, a, b, excerpt(data, slow.lineNo))
		}
		// the lazy state parseFast checks before reusing the event
		if !touch {
			continue
		}
		switch n % 5 {
		case 1:
			ev1.Args()
			ev2.Args()
		case 2:
			ev1.Int(0)
			ev2.Int(0)
		case 3:
			ev1.NArgs()
			ev2.NArgs()
		}
	}
	if fast.Skipped() != slow.Skipped() || !reflect.DeepEqual(fast.Errors(), slow.Errors()) || fast.lineNo != slow.lineNo {
		t.Fatalf("skipped %d, errors %v, lines %d; without the fast path %d, %v, %d",
			fast.Skipped(), fast.Errors(), fast.lineNo, slow.Skipped(), slow.Errors(), slow.lineNo)
	}
}

// excerpt returns the lines of data around line no (1-based).
func excerpt(data []byte, no int) string {
	lines := strings.Split(string(data), "\n")
	lo, hi := max(no-3, 0), min(no+1, len(lines))
	var b strings.Builder
	for i := lo; i < hi; i++ {
		fmt.Fprintf(&b, "%6d %q\n", i+1, lines[i])
	}
	return b.String()
}

// frameSeeds are lines of every prefix and result shape parseFast meets or
// must decline, beyond those of the corpus.
var frameSeeds = []string{
	"12345 01:29:07.195780 read(3, \"abc\", 512) = 3 <0.000020>",
	"12345  01:29:07.195780  read(3, \"abc\", 512)   = 3   <0.000020>",
	"1 01:29:07.195780 read(3, \"abc\", 512) = 0",
	"1234567 01:29:07.195780 read(3, \"abc\", 512) = 1234567",
	"12345678 01:29:07.195780 read(3, \"abc\", 512) = 12345678",
	"0123 01:29:07.195780 read(3, \"abc\", 512) = 0123",
	"0 01:29:07.195780 read(3, \"abc\", 512) = 0x1f",
	"01:29:07.195780 lseek(3, 0, SEEK_END) = 8192 <0.000010>",
	"01:29:07 lseek(3, 0, SEEK_END) = 8192 <0.000010>",
	"01:29:07.195 lseek(3, 0, SEEK_END) = 8192 <0.000010>",
	"     0.000123 close(3) = 0 <0.000004>",
	"12345 1796002145.161709 close(3) = 0",
	"1796002145.161709 close(3) = -1 EBADF (Bad file descriptor) <0.000004>",
	"[pid 12345] 01:29:07.195780 read(3, \"abc\", 512) = 3",
	"12345 [ 257] openat(AT_FDCWD, \"x\", O_RDONLY) = 3",
	"12345 [00007f6aa14d6b1d] openat(AT_FDCWD, \"x\", O_RDONLY) = 3",
	"openat(AT_FDCWD, \"x\", O_RDONLY) = 3</tmp/x> <0.000012>",
	"openat(AT_FDCWD, \"x\", O_RDONLY) = 3</tmp/x (deleted)>",
	"openat(AT_FDCWD, \"x\", O_RDONLY) = -1 ENOENT (No such file or directory)",
	"fcntl(3, F_GETFD)                       = 0x1 (flags FD_CLOEXEC) <0.000003>",
	"read(3, \"abc\", 512) = 3 (INJECTED) <0.000020>",
	"read(3, \"abc\", 512) = ? <0.000020>",
	"read(3, \"abc\", 512) = 3 /* comment */",
	"read(3, \"abc\", 512) = -512 <0.000020> ",
	"read(3, \"abc\", 512) = 512 <0.0000200>",
	"read(3, \"abc\", 512) = 512 <10.000020>",
	"read(3, \"abc\", 512) = 512\r",
	"12345 01:29:07.195780 read(3,  <unfinished ...>",
	"12345 01:29:07.195790 <... read resumed>\"abc\", 512) = 3",
	"12345 01:29:07.195780 +++ exited with 0 +++",
	"12345 01:29:07.195780 --- SIGCHLD {si_signo=SIGCHLD} ---",
	"strace: Process 12345 attached",
	"write(1, \"ab\", 2) = 2",
	" | 00000  61 62                                             ab               |",
}

// rareLines leave rare fields set in the reused event, or come from
// parseLine, before the line under test.
var rareLines = []string{
	"read(3, \"abc\", 512) = 3 <0.000020>",
	"openat(AT_FDCWD, \"x\", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000004>",
	"12345 [ 257] [00007f6aa14d6b1d] read(3, \"abc\", 512) = 3</tmp/x> (deleted) (INJECTED) <0.000020>",
	"fcntl(3, F_GETFD) = 0x1 (flags FD_CLOEXEC) /* c */",
	"12345 +++ killed by SIGKILL (core dumped) +++",
	"write(1, \"ab\", 2) = 2\n | 00000  61 62                                             ab               |",
	"read(3, (",
}

// cornerSeeds returns frameSeeds and, of each corpus trace, the first line
// of each shape (as FuzzParse picks its seeds).
func cornerSeeds(t testing.TB) []string {
	seeds := append([]string(nil), frameSeeds...)
	files, err := filepath.Glob("../testdata/traces/*.strace")
	if err != nil || len(files) == 0 {
		t.Fatalf("no traces: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			key := l
			if i := strings.IndexAny(l, "(+-<"); i >= 0 {
				key = l[:i+1]
				if j := strings.LastIndexByte(key, ' '); j >= 0 {
					key = key[j+1:]
				}
				key += fmt.Sprint(strings.Contains(l, " = -1 "), strings.Contains(l, ">, "), strings.Contains(l, ") = "))
			}
			if !seen[key] {
				seen[key] = true
				seeds = append(seeds, l)
			}
		}
	}
	return seeds
}

// TestParseFastCorpus: with and without parseFast, every trace parses to
// the same events.
func TestParseFastCorpus(t *testing.T) {
	files, _ := filepath.Glob("../testdata/traces/*.strace")
	var all []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		diffParse(t, b, Options{})
		all = append(all, b...)
	}
	diffParse(t, all, Options{KeepGoing: true})
}

// TestParseFast: with and without parseFast, every truncation of each seed
// line and every change of one of its bytes (to each of a set of bytes that
// matter to the framing; for the first few seeds, to every byte value) parses
// to the same events, after each kind of previous event.
func TestParseFast(t *testing.T) {
	const interesting = " 019(x)<>=-?E.:[|\r\"/*\t\x00\xff"
	for si, s := range cornerSeeds(t) {
		var b bytes.Buffer
		b.WriteString(s) // so that its name is known (lookupCall)
		b.WriteByte('\n')
		// each changed line follows a rare line (which parseFast does not
		// take: the event is cleared) or, every other time, the line
		// itself (parseFast reuses the event as that line left it)
		added := 0
		add := func(m string) {
			if added++; added%2 == 0 {
				b.WriteString(s)
			} else {
				b.WriteString(rareLines[b.Len()%len(rareLines)])
			}
			b.WriteByte('\n')
			b.WriteString(m)
			b.WriteByte('\n')
		}
		add(s)
		for n := 0; n < len(s); n++ {
			add(s[:n])
		}
		for k := 0; k < len(s); k++ {
			for c := 0; c < 256; c++ {
				if si >= 6 && strings.IndexByte(interesting, byte(c)) < 0 {
					continue
				}
				m := []byte(s)
				m[k] = byte(c)
				add(string(m))
			}
		}
		diffParse(t, b.Bytes(), Options{})
	}
}

// TestParseFastSequences compares parsing with and without parseFast on
// lines that follow a line parseFast took: fields that line set must not
// leak into the next event, and the fast path must reject what parseLine
// rejects (times out of range).
func TestParseFastSequences(t *testing.T) {
	tt := `01:29:07.195780 read(3, "a", 1) = 1` + "\n"
	for _, next := range []string{
		`01:29:07 read(3, "a", 1) = 1`,        // -t: TimePrec 0
		`read(3, "a", 1) = 1`,                 // no time at all
		`01:29:61.000000 read(3, "a", 1) = 1`, // seconds out of range
		`01:29:60.000000 read(3, "a", 1) = 1`, // a leap second
		`24:00:00.000000 read(3, "a", 1) = 1`, // hours out of range
		`23:60:00.000000 read(3, "a", 1) = 1`, // minutes out of range
		`01:29:07.195780 read(3, "a", 1) = 1 <0.000004>`,
		`01:29:07.195780 read(3, "a", 1) = -1 EAGAIN (Resource temporarily unavailable)`,
		`01:29:07.195780 read(3</a\>b>, "a", 1) = 1`,
	} {
		diffParse(t, []byte(strings.Repeat(tt, 4)+next+"\n"+tt), Options{})
		diffParse(t, []byte(strings.Repeat(tt, 4)+next+"\n"+tt), Options{KeepGoing: true})
	}
}

// TestResultShortcuts checks parseResult's shortcuts for the usual " = N"
// and a final " <S.uuuuuu>", which both parse paths share and diffParse
// cannot compare, against the results and errors the general code gives
// for the same text (written down here).
func TestResultShortcuts(t *testing.T) {
	for _, tc := range []struct {
		result  string
		ret     int64
		dur     int64
		errText string // a SyntaxError containing this, when not empty
	}{
		{result: " = 0", ret: 0},
		{result: " =  0", ret: 0},              // two spaces: not the shortcut
		{result: "     = 7", ret: 7},           // padding
		{result: " = 0 <0.000004>", dur: 4000}, // the duration shortcut
		{result: " = 12 <0.000004>", ret: 12, dur: 4000},
		{result: " = 0  <0.000004>", dur: 4000},
		{result: " = 0 <0.000004>x", errText: "unexpected text after the return value"},
		{result: " = 0 <0.000004> ", dur: 4000},
		{result: " = 0 <1.5>", dur: 1.5e9},
		{result: " = 3 <12.000004>", ret: 3, dur: 12000004000}, // two digits: the general code
		{result: " = 0 >0.000004>", errText: "unexpected text after the return value"},
		{result: " = 0  0.000004>", errText: "unexpected text after the return value"},
		{result: " = 0 <0.000004)", errText: "expected a duration"},
		{result: " = 0 <a.000004>", errText: "expected a duration"},
		{result: " = 0 <0.00000a>", errText: "expected a duration"},
		{result: " =\t0", errText: "expected a return value"}, // not " = ": the general code
		{result: " = -1 EBADF (Bad file descriptor) <0.000004>", ret: -1, dur: 4000},
		{result: "x= 0", errText: "expected '= result'"},             // not " = " in its first byte
		{result: "\t= 0 <0.000004>", errText: "expected '= result'"}, // nor a tab
		{result: " =0", ret: 0},                                      // no space after the =: the general code
		{result: " = ", errText: "expected a return value"},
		{result: " x 0", errText: "expected '= result'"},
	} {
		p := NewParser(strings.NewReader(`close(3)`+tc.result+"\n"), "r", Options{})
		ev, err := p.Next()
		if tc.errText != "" {
			require.ErrorContains(t, err, tc.errText, "%q", tc.result)
			continue
		}
		require.NoError(t, err, "%q", tc.result)
		require.Equal(t, tc.ret, ev.Ret, "%q", tc.result)
		require.Equal(t, tc.dur, ev.Duration, "%q", tc.result)
	}
}

// FuzzParseFast compares parsing with and without parseFast.
//
//	go test -fuzz=FuzzParseFast ./strace
func FuzzParseFast(f *testing.F) {
	for _, s := range frameSeeds {
		f.Add([]byte(s + "\n" + s + "\n"))
	}
	for i := range rareLines {
		f.Add([]byte(frameSeeds[0] + "\n" + rareLines[i] + "\n" + frameSeeds[i] + "\n" + frameSeeds[0]))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		diffParse(t, data, Options{MaxLineLen: 1 << 12})
		diffParse(t, data, Options{KeepGoing: true, MaxLineLen: 1 << 12})
	})
}

// secondsSeeds are -r and -ttt timestamps, and near misses.
var secondsSeeds = []string{
	"0.000050 x", "     0.000050 x", "1796002145.161709 x", "9000000000.999999 x", "9000000001.000000 x",
	"12345678901.000000 x", "0999999999.123456 x", "99999999.000001 x", "1234567.123456 x",
	"12345678.123456 x", "123456789.123456 x", "0.0000500 x", "0.00005 x", "0.000050", "0.000050>x",
	"01:29:07.195780 x", "00000000000000000000000000.000001 x",
}

// checkSecondsMicros checks secondsMicros against parseFrac at every start
// of b.
func checkSecondsMicros(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i <= len(b); i++ {
		ns, end, ok := secondsMicros(b, i)
		if !ok {
			continue
		}
		wns, wend, wprec, wok := parseFrac(b, i)
		if !wok || ns != wns || end != wend || wprec != 6 || b[end] != ' ' {
			t.Fatalf("secondsMicros(%q, %d) = %d, %d; parseFrac: %d, %d, %d, %v", b, i, ns, end, wns, wend, wprec, wok)
		}
	}
}

// TestSecondsMicros: when secondsMicros answers, parseFrac answers the
// same, on every truncation and single-byte change of secondsSeeds; and it
// answers for the usual forms.
func TestSecondsMicros(t *testing.T) {
	for _, s := range secondsSeeds {
		for _, b := range mutations(s) {
			checkSecondsMicros(t, b)
		}
	}
	for _, s := range []string{"0.000050 x              ", "1796002145.161709 x     ", "9000000000.999999 read("} {
		if _, _, ok := secondsMicros([]byte(s), 0); !ok {
			t.Errorf("secondsMicros(%q) declines", s)
		}
	}
}

// FuzzSecondsMicros compares secondsMicros with parseFrac.
//
//	go test -fuzz=FuzzSecondsMicros ./strace
func FuzzSecondsMicros(f *testing.F) {
	for _, s := range secondsSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkSecondsMicros(t, b)
	})
}

// TestCallSet: the two names last entered in a set of Parser.calls are
// both found (fcntl and fchown share one), a third one displaces the older,
// and lookupCall still agrees with scanCallName.
func TestCallSet(t *testing.T) {
	p := NewParser(nil, "t", Options{})
	line := func(name string) []byte { return []byte(name + "(3, F_GETFD, 0x1234567890) = 0") }
	if p.callSet(callWords("fcntl")) != p.callSet(callWords("fchown")) {
		t.Skip("fcntl and fchown no longer share a set")
	}
	var third string
	for n := 0; third == ""; n++ {
		if s := fmt.Sprintf("x%d", n); p.callSet(callWords(s)) == p.callSet(callWords("fcntl")) {
			third = s
		}
	}
	found := func(name string) bool {
		got, _, ok := p.lookupCall(line(name), 0)
		return ok && got == name
	}
	p.scanCallName(line("fcntl"), 0)
	p.scanCallName(line("fchown"), 0)
	p.scanCallName(line("fchown"), 0) // again: must not displace fcntl
	if !found("fcntl") || !found("fchown") {
		t.Fatalf("fcntl found %v, fchown found %v", found("fcntl"), found("fchown"))
	}
	p.scanCallName(line(third), 0)
	if found("fcntl") || !found("fchown") || !found(third) {
		t.Fatalf("after %s: fcntl found %v, fchown %v, %s %v", third, found("fcntl"), found("fchown"), third, found(third))
	}
	for _, name := range []string{"fcntl", "fchown", third, "fcntl64"} {
		for _, b := range mutations(string(line(name))[:20]) {
			checkLookupCall(t, p, b)
		}
	}
}

// callWords returns the words of a callName for name.
func callWords(name string) (w0, w1 uint64) {
	var pad [16]byte
	copy(pad[:], name)
	return binary.LittleEndian.Uint64(pad[:8]), binary.LittleEndian.Uint64(pad[8:])
}

// TestParseFastFirstLine: a line parseFast takes as the first line of a
// parser (its name known already) comes out as parseLine's.
func TestParseFastFirstLine(t *testing.T) {
	line := "24189 01:29:08.429447 read(3, \"abc\", 512) = 3 <0.000020>\n"
	data := []byte(line + strings.Repeat("x\n", 20))
	fast := NewParser(bytes.NewReader(data), "first.7", Options{})
	fast.rememberCall("read")
	slow := NewParser(bytes.NewReader(data), "first.7", Options{})
	slow.noFast = true
	ev1, err1 := fast.Next()
	ev2, err2 := slow.Next()
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, _, ok := fast.lookupCall([]byte(line), 22); !ok {
		t.Fatal("read is not known")
	}
	a, b := *ev1, *ev2
	if a.p != fast || b.p != slow {
		t.Fatalf("event's parser %p, %p; want %p, %p", a.p, b.p, fast, slow)
	}
	a.p, b.p = nil, nil
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("first event:\n%+v\nwithout the fast path:\n%+v", a, b)
	}
}

// TestFrameNext compares frameNext (assembly on amd64) with frameBytes on
// random buffers, from every offset: newlines and bars fall at every
// position of the 16-, 32- and 64-byte blocks it reads, and the bytes past
// the buffer's length, which it reads but must not count, are newlines and
// bars.
func TestFrameNext(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 400 {
		size := rng.IntN(260)
		buf := make([]byte, size+frameSlack)
		for i := range buf {
			switch r := rng.IntN(60); {
			case i >= size:
				buf[i] = "\n|"[i%2]
			case r == 0:
				buf[i] = '\n'
			case r < 8:
				buf[i] = '|'
			default:
				buf[i] = 'a'
			}
		}
		b := buf[:size]
		for i := 0; i <= size; i++ {
			checkFrameNext(t, b, i)
		}
	}
}

// TestFrameNextPlaces puts a newline at each position of the blocks
// frameNext reads and a '|' at each distance after it up to 33 bytes (and
// none), and frames from a few bytes before the newline.
func TestFrameNextPlaces(t *testing.T) {
	for nl := range 2 * windowLen {
		for bar := 0; bar <= 33; bar++ {
			buf := bytes.Repeat([]byte("a"), 4*windowLen+frameSlack)
			buf[nl] = '\n'
			if bar > 0 {
				buf[nl+bar] = '|'
			}
			b := buf[:4*windowLen]
			for _, i := range []int{0, max(nl-1, 0), max(nl-17, 0), max(nl-33, 0), nl} {
				checkFrameNext(t, b, i)
			}
		}
	}
}

func checkFrameNext(t *testing.T, b []byte, i int) {
	t.Helper()
	k, bar := frameNext(b, i)
	wantK, wantBar := frameBytes(b, i)
	require.Equal(t, wantK, k, "frameNext(%q, %d)", b, i)
	if k >= 0 && i+k+1+24 <= len(b) {
		require.Equal(t, wantBar, bar, "frameNext(%q, %d): the bar", b, i)
	}
}

// FuzzFrameNext compares frameNext with frameBytes, on a buffer and the
// stale bytes after it, which the fuzzer chooses too.
//
//	go test -fuzz=FuzzFrameNext ./strace
func FuzzFrameNext(f *testing.F) {
	f.Add([]byte("read(3) = 0\n | 00000  61  a |\n"), uint16(12), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, size, i uint16) {
		// data[:size] is the buffer and the rest stale bytes in its slack
		n := min(int(size), len(data))
		buf := make([]byte, n+frameSlack)
		copy(buf, data)
		b := buf[:n]
		checkFrameNext(t, b, int(i)%(n+1))
	})
}

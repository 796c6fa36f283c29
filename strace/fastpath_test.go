package strace

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// The word-at-a-time fast paths of the line parser (clockMicros,
// durationMicros, lookupCall, ...) decline to a byte-at-a-time general path
// whenever they are not sure; these tests check that when they answer, they
// answer what the general path does, on every single-byte change and every
// truncation of typical text, and on fuzzed input.

// mutations returns s, every truncation of s, and s with each byte in turn
// replaced by each byte value.
func mutations(s string) [][]byte {
	out := [][]byte{[]byte(s)}
	for n := 0; n < len(s); n++ {
		out = append(out, []byte(s[:n]))
	}
	for k := 0; k < len(s); k++ {
		for c := 0; c < 256; c++ {
			b := []byte(s)
			b[k] = byte(c)
			out = append(out, b)
		}
	}
	return out
}

// TestMatchDigits compares matchDigits with a byte-at-a-time check for every
// pattern, every byte value at every position of a matching word, and
// random words.
func TestMatchDigits(t *testing.T) {
	for _, tc := range []struct {
		text          string
		pattern, seps uint64
	}{
		{"00:00:00", clockPattern, clockSeps},
		{".000000 ", fracSpace, fracSeps},
		{".000000>", fracClose, fracSeps},
	} {
		if w := binary.LittleEndian.Uint64([]byte(tc.text)); w != tc.pattern {
			t.Fatalf("pattern %#x is not %q", tc.pattern, tc.text)
		}
		want := func(w [8]byte) bool {
			for k, c := range w {
				if tc.seps>>(8*k)&0xff == 0xff {
					if c != tc.text[k] {
						return false
					}
				} else if !isDigit(c) {
					return false
				}
			}
			return true
		}
		check := func(w [8]byte) {
			t.Helper()
			d, ok := matchDigits(binary.LittleEndian.Uint64(w[:]), tc.pattern, tc.seps)
			if ok != want(w) {
				t.Fatalf("matchDigits(%q, %q) = %v", w[:], tc.text, ok)
			}
			if !ok {
				return
			}
			for k, c := range w {
				if v := byte(d >> (8 * k)); tc.seps>>(8*k)&0xff == 0 && v != c-'0' {
					t.Fatalf("matchDigits(%q) byte %d = %d", w[:], k, v)
				}
			}
		}
		for _, base := range []string{tc.text, "12:34:56", ".123456 ", ".987654>", "99:99:99"} {
			for pos := 0; pos < 8; pos++ {
				for c := 0; c < 256; c++ {
					var w [8]byte
					copy(w[:], base)
					w[pos] = byte(c)
					check(w)
				}
			}
		}
		r := rand.New(rand.NewPCG(3, 4))
		for n := 0; n < 3e5; n++ {
			var w [8]byte
			for k := range w {
				if r.IntN(4) == 0 {
					w[k] = byte(r.Uint32())
				} else {
					w[k] = tc.text[k] + byte(r.IntN(10))*(1-byte(tc.seps>>(8*k)&1))
				}
			}
			check(w)
		}
	}
}

// TestFracMicros compares fracMicros with micros, which reads the same
// fraction a byte at a time.
func TestFracMicros(t *testing.T) {
	for _, end := range []byte{' ', '>'} {
		pattern := uint64(fracSpace)
		if end == '>' {
			pattern = fracClose
		}
		for _, b := range mutations(".123456" + string(end)) {
			if len(b) != 8 {
				continue
			}
			us, ok := fracMicros(binary.LittleEndian.Uint64(b), pattern)
			wus, wok := micros(b, 0)
			wok = wok && b[7] == end
			if ok != wok || (ok && us != wus) {
				t.Fatalf("fracMicros(%q) = %d, %v; micros: %d, %v", b, us, ok, wus, wok)
			}
		}
	}
}

// timeSeeds are timestamps, and near misses, as parseTime meets them.
var timeSeeds = []string{
	"01:29:07.195780 openat(", "23:59:60.999999 x", "24:00:00.000000 x", "00:60:00.000000 x",
	"00:00:61.000000 x", "1796002145.161709 x", "0.000064 x", "01:29:07 x", "01:29:07.1957801 x",
	"01:29:07.19578 x", "9:29:07.195780 x", "01:29:07.195780", "01:29:07.195780>", "01:29:07.123456789 x",
	"9000000000.999999 x", "9000000001.000000 x", "12345678901.000000 x", "0999999999.123456 x",
	"99999999.000001 x", "0.000064", "00000000000000000000000000.000001 x",
}

// checkParseTime compares parseTime with parseTimeText on line at the
// starts up to maxStart.
func checkParseTime(t *testing.T, p *Parser, line []byte, maxStart int) {
	t.Helper()
	for i := 0; i <= min(len(line), maxStart); i++ {
		var ev1, ev2 Event
		j1, err1 := p.parseTime(&ev1, line, i, 7)
		j2, err2 := p.parseTimeText(&ev2, line, i, 7)
		if j1 != j2 || !reflect.DeepEqual(err1, err2) || !reflect.DeepEqual(ev1, ev2) {
			t.Fatalf("parseTime(%q, %d) = %d, %v, %+v; parseTimeText: %d, %v, %+v", line, i, j1, err1, ev1, j2, err2, ev2)
		}
	}
}

// TestParseTimeFastPath: parseTime (with the fast path for -tt) agrees
// with parseTimeText.
func TestParseTimeFastPath(t *testing.T) {
	p := NewParser(nil, "t", Options{})
	for _, s := range timeSeeds {
		for _, b := range mutations(s) {
			checkParseTime(t, p, b, 1)
		}
	}
}

// FuzzParseTime compares parseTime with parseTimeText.
//
//	go test -fuzz=FuzzParseTime ./strace
func FuzzParseTime(f *testing.F) {
	for _, s := range timeSeeds {
		f.Add([]byte(s))
	}
	p := NewParser(nil, "t", Options{})
	f.Fuzz(func(t *testing.T, line []byte) {
		checkParseTime(t, p, line, len(line))
	})
}

// durationSeeds are durations, and near misses, as parseResult meets them.
var durationSeeds = []string{
	"<0.000020>", "<1.000020> ", "<0.00002>", "<0.0000200>", "<10.000020>", "<0.123456789>", "<0.000020",
}

// checkParseDuration compares parseDuration with parseDurationText at
// every start of b.
func checkParseDuration(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i < len(b); i++ {
		ns1, e1, p1, ok1 := parseDuration(b, i)
		ns2, e2, p2, ok2 := parseDurationText(b, i)
		if ns1 != ns2 || e1 != e2 || p1 != p2 || ok1 != ok2 {
			t.Fatalf("parseDuration(%q, %d) = %d %d %d %v; parseDurationText: %d %d %d %v", b, i, ns1, e1, p1, ok1, ns2, e2, p2, ok2)
		}
	}
}

// TestParseDurationFastPath: parseDuration (with the fast path for
// microseconds) agrees with parseDurationText.
func TestParseDurationFastPath(t *testing.T) {
	for _, s := range durationSeeds {
		for _, b := range mutations(s) {
			checkParseDuration(t, b)
		}
	}
}

// FuzzParseDuration compares parseDuration with parseDurationText.
//
//	go test -fuzz=FuzzParseDuration ./strace
func FuzzParseDuration(f *testing.F) {
	for _, s := range durationSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkParseDuration(t, b)
	})
}

// callSeeds are syscall names followed by their arguments, of every length
// around the 15 bytes a cached name can have.
var callSeeds = []string{
	"openat(AT_FDCWD, \"/etc/ld.so.cache\", O_RDONLY) = 3", "brk(NULL) = 0x5640f8ad2000",
	"rt_sigprocmask(SIG_BLOCK, [], NULL, 8) = 0", "rt_sigaction(SIGHUP, NULL, {}, 8) = 0",
	"clock_nanosleep(CLOCK_REALTIME, 0, {}, NULL) = 0", "set_robust_list(0x7f, 24) = 0",
	"a(1) = 0 and then some text", "x_1234567890abcd(1) = 0", "x_1234567890abcde(1) = 0",
	"read(3, \"(\", 1) = 1 padding padding", "12345678(1234567(",
}

// checkLookupCall checks that, at every start in line, lookupCall answers
// (if it does) what scanCallName does.
func checkLookupCall(t *testing.T, p *Parser, line []byte) {
	t.Helper()
	for i := 0; i < len(line); i++ {
		name, j, ok := p.lookupCall(line, i)
		if !ok {
			continue
		}
		wname, wj, wok := p.scanCallName(line, i)
		if name != wname || j != wj || !wok {
			t.Fatalf("lookupCall(%q, %d) = %q, %d; scanCallName: %q, %d, %v", line, i, name, j, wname, wj, wok)
		}
	}
}

// TestLookupCall: names entered by scanCallName are found by lookupCall
// exactly where scanCallName would find them.
func TestLookupCall(t *testing.T) {
	p := NewParser(nil, "t", Options{})
	hits := 0
	for _, s := range callSeeds {
		p.scanCallName([]byte(s), 0)
		if _, _, ok := p.lookupCall([]byte(s), 0); ok {
			hits++
		}
	}
	if hits < len(callSeeds)-3 {
		t.Fatalf("only %d of %d names found again", hits, len(callSeeds))
	}
	for _, s := range callSeeds {
		for _, b := range mutations(s) {
			checkLookupCall(t, p, b)
		}
	}
}

// FuzzLookupCall enters the lines of names in a parser's call cache, then
// checks lookupCall against scanCallName on line.
//
//	go test -fuzz=FuzzLookupCall ./strace
func FuzzLookupCall(f *testing.F) {
	f.Add([]byte(callSeeds[0]+"\n"+callSeeds[1]), []byte(callSeeds[0]))
	f.Add([]byte(callSeeds[2]), []byte("rt_sigprocmask(SIG_BLOCK"))
	f.Fuzz(func(t *testing.T, names, line []byte) {
		p := NewParser(nil, "t", Options{})
		for _, n := range bytes.Split(names, []byte("\n")) {
			p.scanCallName(n, 0)
		}
		checkLookupCall(t, p, line)
	})
}

// isDumpLineBytes is isDumpLine without its word-at-a-time rejection.
func isDumpLineBytes(b []byte) bool {
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

// dumpSeeds are the starts of dump lines and of lines after a call.
var dumpSeeds = []string{
	" | 00000  61 62 63 64 65 66 67 68  69 6a 6b 6c",
	"12345  | 00010  61 62 63 64 65 66 67 68  69 6a",
	"                       | 00000  61 62 63 64 65",
	"01:29:07.195780 openat(AT_FDCWD, \"/etc/ld.so.cache\"",
	"mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE",
	"000000000000000000000000| 00000  61 62", // '|' after the first 24 bytes
}

// TestIsDumpLine compares isDumpLine with isDumpLineBytes on every
// single-byte change and truncation of dumpSeeds, and of their first peekLen
// bytes (what Next passes).
func TestIsDumpLine(t *testing.T) {
	for _, s := range dumpSeeds {
		for _, b := range append(mutations(s[:peekLen]), mutations(s)...) {
			if got, want := isDumpLine(b), isDumpLineBytes(b); got != want {
				t.Fatalf("isDumpLine(%q) = %v, want %v", b, got, want)
			}
		}
	}
}

// FuzzIsDumpLine compares isDumpLine with isDumpLineBytes.
//
//	go test -fuzz=FuzzIsDumpLine ./strace
func FuzzIsDumpLine(f *testing.F) {
	for _, s := range dumpSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := isDumpLine(b), isDumpLineBytes(b); got != want {
			t.Fatalf("isDumpLine(%q) = %v, want %v", b, got, want)
		}
	})
}

// parseUintBytes is parseUint a byte at a time.
func parseUintBytes(b []byte, i int) (v uint64, j int, hex bool, ok bool) {
	if i+1 < len(b) && b[i] == '0' && (b[i+1] == 'x' || b[i+1] == 'X') {
		j = i + 2
		for j < len(b) && hexVal(b[j]) >= 0 {
			v = v<<4 | uint64(hexVal(b[j]))
			j++
		}
		return v, j, true, j > i+2
	}
	if i < len(b) && b[i] == '0' && i+1 < len(b) && isDigit(b[i+1]) {
		j = i + 1
		for j < len(b) && b[j] >= '0' && b[j] <= '7' {
			v = v<<3 | uint64(b[j]-'0')
			j++
		}
		return v, j, false, true
	}
	j = i
	for j < len(b) && isDigit(b[j]) {
		v = v*10 + uint64(b[j]-'0')
		j++
	}
	return v, j, false, j > i
}

// checkDigits compares parseUint with parseUintBytes, and skipDigits with
// a byte loop, at every start in b.
func checkDigits(t *testing.T, b []byte) {
	t.Helper()
	for i := 0; i <= len(b); i++ {
		v, j, hex, ok := parseUint(b, i)
		wv, wj, whex, wok := parseUintBytes(b, i)
		if v != wv || j != wj || hex != whex || ok != wok {
			t.Fatalf("parseUint(%q, %d) = %d %d %v %v, want %d %d %v %v", b, i, v, j, hex, ok, wv, wj, whex, wok)
		}
		k := i
		for k < len(b) && isDigit(b[k]) {
			k++
		}
		if got := skipDigits(b, i); got != k {
			t.Fatalf("skipDigits(%q, %d) = %d, want %d", b, i, got, k)
		}
	}
}

// TestParseUint: parseUint (eight decimal digits at a time) agrees with
// parseUintBytes on numbers of every length up to 24 digits (wrapping
// modulo 2^64 past 19), at every offset, with every byte after them, and
// on single-byte changes of typical text.
func TestParseUint(t *testing.T) {
	digits := "918273645546372819012345"
	for n := 0; n <= len(digits); n++ {
		for _, pre := range []string{"", " = ", "0x", "0", "x"} {
			for c := 0; c < 256; c++ {
				checkDigits(t, []byte(pre+digits[:n]+string([]byte{byte(c)})+"9"))
			}
			checkDigits(t, []byte(pre+digits[:n]))
		}
	}
	for _, s := range []string{"24189 01:29:08.429447 ", " = 512 <0.000020>", "= 0x7f577cb6b000", "0644, 18446744073709551615"} {
		for _, b := range mutations(s) {
			checkDigits(t, b)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 1e5; n++ {
		b := make([]byte, r.IntN(30))
		for k := range b {
			b[k] = "0123456789 x.a\xff"[r.IntN(15)]
		}
		checkDigits(t, b)
	}
}

// FuzzParseUint compares parseUint with parseUintBytes and skipDigits with
// a byte loop.
//
//	go test -fuzz=FuzzParseUint ./strace
func FuzzParseUint(f *testing.F) {
	f.Add([]byte("24189 01:29:08.429447 "))
	f.Add([]byte(" = 123456789012 <0.000020>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		checkDigits(t, b)
	})
}

// TestSkipPad: skipPad (eight bytes at a time) agrees with skipSpaces on
// runs of spaces of every length followed by every byte, at every start.
func TestSkipPad(t *testing.T) {
	for n := 0; n <= 40; n++ {
		for c := 0; c < 256; c++ {
			b := []byte("x)" + strings.Repeat(" ", n) + string([]byte{byte(c)}) + " = 0")
			for _, b := range [][]byte{b, b[:2+n]} {
				for i := 0; i <= len(b); i++ {
					if got, want := skipPad(b, i), skipSpaces(b, i); got != want {
						t.Fatalf("skipPad(%q, %d) = %d, want %d", b, i, got, want)
					}
				}
			}
		}
	}
}

// TestUnfinishedTail: parseCall tests unfinishedTail before unfinishedMark.
func TestUnfinishedTail(t *testing.T) {
	if len(unfinishedTail) != 8 || !strings.HasSuffix(unfinishedMark, unfinishedTail) {
		t.Fatalf("unfinishedTail %q is not the last word of %q", unfinishedTail, unfinishedMark)
	}
}

// skipCommentRef is skipComment a byte at a time: the oracle.
func skipCommentRef(b []byte, i int) int {
	for j := i + 2; j+1 < len(b); j++ {
		if b[j] == '*' && b[j+1] == '/' {
			return j + 2
		}
	}
	return -1
}

// FuzzSkipComment compares skipComment (which searches for each '*') with
// skipCommentRef at every offset of the input.
//
//	go test -fuzz=FuzzSkipComment ./strace
func FuzzSkipComment(f *testing.F) {
	for _, s := range []string{"/* 12 entries */", "/**/", "/*/", "/* a * b **/x", "/* no end *", "/*", "*/*/"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 { // every offset: quadratic in the length
			b = b[:4096]
		}
		for i := 0; i+2 <= len(b); i++ {
			if got, want := skipComment(b, i), skipCommentRef(b, i); got != want {
				t.Fatalf("skipComment(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}

package strace

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// Low-level scanning helpers shared by the line parser (which validates the
// argument text) and the lazy tree parser (which must agree with it on where
// strings, comments and -y decorations begin and end).

// special marks the bytes the argument scanner has to look at (those with
// an argClass); everything else is skipped in a tight loop.
var special = func() (t [256]bool) {
	for c, k := range argClass {
		t[c] = k != 0
	}
	return t
}()

// argClass sorts the special bytes for the argument scans' switch: one table load
// and a small dense switch instead of a search among nine byte values.
var argClass = [256]uint8{'"': clsQuote, '/': clsSlash, '<': clsLess,
	'(': clsOpen, '[': clsOpen, '{': clsOpen, ')': clsClose, ']': clsClose, '}': clsClose}

// The classes of argClass; the bytes not in special are 0. The first three
// are the bytes that may start an atom (see skipAtom).
const (
	clsQuote = 1 + iota // starts a string
	clsSlash            // may start a comment
	clsLess             // may start a decoration
	clsOpen             // opens a bracket
	clsClose            // closes one
)

// specialComma is special plus ','.
var specialComma = [256]bool{'"': true, '/': true, '<': true, '(': true, ')': true, '[': true, ']': true, '{': true, '}': true, ',': true}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
func isIdent(c byte) bool { return identByte[c] }

// identByte marks the bytes isIdent accepts: one load instead of three
// range tests on the syscall name and errno scans.
var identByte = func() (t [256]bool) {
	for c := range t {
		t[c] = isIdentStart(byte(c)) || isDigit(byte(c))
	}
	return t
}()

func skipSpaces(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// skipPad is skipSpaces for the padding strace writes to align results (up
// to column 40): it looks at eight bytes at a time.
func skipPad(b []byte, i int) int {
	for i >= 0 && i+8 <= len(b) {
		if x := binary.LittleEndian.Uint64(b[i:i+8]) ^ ones*' '; x != 0 {
			return i + bits.TrailingZeros64(x)>>3
		}
		i += 8
	}
	return skipSpaces(b, i)
}

// skipDigits returns the index of the first byte at or after i that is not
// a decimal digit, or len(b), looking at eight bytes at a time.
func skipDigits(b []byte, i int) int {
	for i >= 0 && i+8 <= len(b) {
		if m, _ := nonDigits(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// skipString returns the index after the closing quote of the string that
// opens at b[i] == '"', or -1 if it is not terminated.
func skipString(b []byte, i int) int {
	i++
	for {
		k := bytes.IndexByte(b[i:], '"')
		if k < 0 {
			return -1
		}
		j := i + k
		// the quote is escaped if an odd number of backslashes precede it
		n := 0
		for j-n-1 >= i && b[j-n-1] == '\\' {
			n++
		}
		if n&1 == 0 {
			return j + 1
		}
		i = j + 1
	}
}

// skipComment returns the index after the "*/" of the comment opening at
// b[i:i+2] == "/*", or -1.
func skipComment(b []byte, i int) int {
	for j := i + 2; j+1 < len(b); j++ {
		k := bytes.IndexByte(b[j:len(b)-1], '*') // a '*' with a byte after it
		if k < 0 {
			return -1
		}
		if j += k; b[j+1] == '/' {
			return j + 2
		}
	}
	return -1
}

// opensDecoration reports whether the '<' at b[i] starts a -y decoration:
// it follows an fd number, a name such as AT_FDCWD, or a -X verbose comment.
func opensDecoration(b []byte, i int) bool {
	if i == 0 {
		return false
	}
	c := b[i-1]
	return isIdent(c) || (c == '/' && i >= 2 && b[i-2] == '*')
}

// skipDecoration returns the index after the '>' closing the decoration that
// opens at b[i] == '<', or -1. Decorations nest (`</dev/zero<char 1:5>>`),
// and '<'/'>' inside [...] or "..." do not count
// (`<UNIX-STREAM:[1->2,"/path"]>`).
func skipDecoration(b []byte, i int) int {
	depth, brackets := 1, 0 // inside the '<' at b[i]
	for i++; i < len(b); {
		i = skipDecPlain(b, i)
		if i >= len(b) {
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
		case '\\':
			i += 2
			continue
		case '[':
			brackets++
		case ']':
			if brackets > 0 {
				brackets--
			}
		case '<':
			if brackets == 0 {
				depth++
			}
		case '>':
			if brackets == 0 {
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		i++
	}
	return -1
}

var decSpecial = [256]bool{'"': true, '\\': true, '[': true, ']': true, '<': true, '>': true}

// skipDecPlain is skipPlain(b, i, &decSpecial). A decoration is mostly a
// path with no special byte in tens of bytes, so it looks at eight bytes at a
// time (decSpecials; the last word of b is padded with zero bytes, which are
// not special).
func skipDecPlain(b []byte, i int) int {
	for i >= 0 && i+8 <= len(b) { // whole words: load8's first case
		if m := decSpecials(binary.LittleEndian.Uint64(b[i : i+8])); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	if i >= len(b) {
		return len(b)
	}
	// fewer than eight bytes left: the last word of b, shifted (load8)
	w, ok := load8(b, i)
	if !ok {
		return skipPlain(b, i, &decSpecial) // b is shorter than a word
	}
	if m := decSpecials(w); m != 0 {
		return min(i+bits.TrailingZeros64(m)>>3, len(b))
	}
	return len(b)
}

// skipAtom skips a string, comment or decoration starting at b[i]. It returns
// i unchanged if b[i] starts none of them, and -1 if it is not terminated.
func skipAtom(b []byte, i int) int {
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '/':
		if i+1 < len(b) && b[i+1] == '*' {
			return skipComment(b, i)
		}
	case '<':
		if opensDecoration(b, i) {
			return skipDecoration(b, i)
		}
	}
	return i
}

// closerOf maps an opening bracket to its closer.
func closerOf(c byte) byte {
	switch c {
	case '(':
		return ')'
	case '[':
		return ']'
	}
	return '}'
}

// scanArgsBytes validates the argument text starting at b[i] (just after
// the call's '(') a byte at a time and returns the index of the ')' that
// closes the argument list. On failure it returns a negative index, the
// column of the problem and a message. Where argMasks is vectorised
// (wideArgs), parseArgsResult tries scanArgsWide first.
func scanArgsBytes(b []byte, i int, stack []byte) (end int, col int, msg string, st []byte) {
	stack = stack[:0]
	for i < len(b) {
		i = skipPlain(b, i, &special)
		if i >= len(b) {
			break
		}
		c := b[i]
		switch argClass[c] {
		case clsQuote: // skipAtom's cases, written out
			j := skipString(b, i)
			if j < 0 {
				return -1, i, "unterminated string", stack
			}
			i = j
			continue
		case clsSlash:
			if i+1 < len(b) && b[i+1] == '*' {
				j := skipComment(b, i)
				if j < 0 {
					return -1, i, "unterminated comment", stack
				}
				i = j
				continue
			}
		case clsLess:
			if opensDecoration(b, i) {
				j := skipDecoration(b, i)
				if j < 0 {
					return -1, i, "unterminated fd decoration '<...>'", stack
				}
				i = j
				continue
			}
		case clsOpen:
			stack = append(stack, closerOf(c))
		case clsClose:
			if len(stack) == 0 {
				if c == ')' {
					return i, 0, "", stack
				}
				return -1, i, "unbalanced '" + string(c) + "' in arguments", stack
			}
			if want := stack[len(stack)-1]; want != c {
				return -1, i, "expected '" + string(want) + "', found '" + string(c) + "'", stack
			}
			stack = stack[:len(stack)-1]
		}
		i++
	}
	if len(stack) > 0 {
		return -1, i, "expected '" + string(stack[len(stack)-1]) + "' before end of line", stack
	}
	return -1, i, msgNoClose, stack
}

const msgNoClose = "expected ')' closing the argument list"

// scanValueEnd returns the index of the ',' or unmatched closer that ends the
// value starting at b[i], or len(b). It skips strings, comments, decorations
// and nested brackets.
func scanValueEnd(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		c := b[i]
		if !specialComma[c] {
			i++
			continue
		}
		switch c {
		case '"', '/', '<':
			j := skipAtom(b, i)
			if j < 0 {
				return len(b)
			}
			if j == i {
				j++
			}
			i = j
			continue
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			if depth == 0 {
				return i
			}
			depth--
		case ',':
			if depth == 0 {
				return i
			}
		}
		i++
	}
	return len(b)
}

// parseUint parses decimal, 0x hexadecimal or 0-prefixed octal digits at
// b[i]. It returns the value (wrapping modulo 2^64), the index after the
// digits, whether it was hex, and ok=false if there were no digits.
func parseUint(b []byte, i int) (v uint64, j int, hex bool, ok bool) {
	if i+1 < len(b) && b[i] == '0' && (b[i+1] == 'x' || b[i+1] == 'X') {
		j = i + 2
		for j < len(b) {
			c := b[j]
			var d byte
			switch {
			case c >= '0' && c <= '9':
				d = c - '0'
			case c >= 'a' && c <= 'f':
				d = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				d = c - 'A' + 10
			default:
				return v, j, true, j > i+2
			}
			v = v<<4 | uint64(d)
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
	for j >= 0 && j+8 <= len(b) {
		// eight bytes at a time: the n digits among them, as one number
		m, d := nonDigits(binary.LittleEndian.Uint64(b[j : j+8]))
		n := bits.TrailingZeros64(m) >> 3 // 8 when all are digits
		if n > 0 {
			v = v*pow10[n] + eightDigits(d<<(8*(8-n)))
		}
		j += n
		if n < 8 {
			return v, j, false, j > i
		}
	}
	for j < len(b) && isDigit(b[j]) {
		v = v*10 + uint64(b[j]-'0')
		j++
	}
	return v, j, false, j > i
}

// pow10 holds the powers of ten that parseUint scales by.
var pow10 = [9]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8}

// parseFrac parses "SSS.FFFFFF" at b[i] into nanoseconds. It returns the
// index after it, the number of fraction digits, and ok.
func parseFrac(b []byte, i int) (ns int64, j int, prec uint8, ok bool) {
	var sec int64
	j = i
	for j < len(b) && isDigit(b[j]) {
		sec = sec*10 + int64(b[j]-'0')
		if sec > 9e9 { // keeps sec*1e9 within int64
			return 0, j, 0, false
		}
		j++
	}
	if j == i {
		return 0, j, 0, false
	}
	ns = sec * 1e9
	if us, ok := micros(b, j); ok {
		// the common case: microseconds
		return ns + us*1000, j + 7, 6, true
	}
	if j < len(b) && b[j] == '.' {
		j++
		k := j
		var frac int64
		for j < len(b) && isDigit(b[j]) {
			if j-k < 9 {
				frac = frac*10 + int64(b[j]-'0')
			}
			j++
		}
		n := j - k
		if n == 0 {
			return 0, j, 0, false
		}
		for d := n; d < 9; d++ {
			frac *= 10
		}
		if n > 9 {
			n = 9
		}
		prec = uint8(n)
		ns += frac
	}
	return ns, j, prec, true
}

// micros parses exactly six fraction digits ".uuuuuu" at b[j], not followed
// by another digit, as microseconds.
func micros(b []byte, j int) (int64, bool) {
	if j < 0 || j+7 > len(b) || b[j] != '.' || (j+7 < len(b) && isDigit(b[j+7])) {
		return 0, false
	}
	d := b[j+1 : j+7 : j+7]
	if !isDigit(d[0]) || !isDigit(d[1]) || !isDigit(d[2]) || !isDigit(d[3]) || !isDigit(d[4]) || !isDigit(d[5]) {
		return 0, false
	}
	return int64(d[0]-'0')*100000 + int64(d[1]-'0')*10000 + int64(d[2]-'0')*1000 +
		int64(d[3]-'0')*100 + int64(d[4]-'0')*10 + int64(d[5]-'0'), true
}

// unescape appends the C-escaped text s (strace's quoting) to dst, decoded.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			// The bytes up to the next backslash are themselves: copy the run.
			n := bytes.IndexByte(s[i:], '\\')
			if n < 0 {
				n = len(s) - i
			}
			dst = append(dst, s[i:i+n]...)
			i += n - 1
			continue
		}
		if i+1 >= len(s) {
			dst = append(dst, c)
			continue
		}
		i++
		c = s[i]
		switch c {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'v':
			dst = append(dst, '\v')
		case 'f':
			dst = append(dst, '\f')
		case 'a':
			dst = append(dst, '\a')
		case 'b':
			dst = append(dst, '\b')
		case 'e':
			dst = append(dst, 0x1b)
		case 'x':
			var v byte
			n := 0
			for n < 2 && i+1 < len(s) {
				d := s[i+1]
				switch {
				case d >= '0' && d <= '9':
					d -= '0'
				case d >= 'a' && d <= 'f':
					d -= 'a' - 10
				case d >= 'A' && d <= 'F':
					d -= 'A' - 10
				default:
					n = 2
					continue
				}
				v = v<<4 | d
				i++
				n++
			}
			dst = append(dst, v)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := c - '0'
			for n := 1; n < 3 && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'; n++ {
				i++
				v = v<<3 | (s[i] - '0')
			}
			dst = append(dst, v)
		default: // \" \\ \' \? and anything unknown: the character itself
			dst = append(dst, c)
		}
	}
	return dst
}

// skipPlain returns the index of the first byte at or after i that is in
// set, or len(b).
func skipPlain(b []byte, i int, set *[256]bool) int {
	if i >= len(b) {
		return len(b)
	}
	for k, c := range b[i:] {
		if set[c] {
			return i + k
		}
	}
	return len(b)
}

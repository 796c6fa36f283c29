package strace

import "encoding/binary"

// Word-at-a-time helpers for the line parser: skipDecPlain, the fixed-format
// timestamps and durations, and decimal digits. A word holds eight bytes of
// a line loaded little-endian: the first byte is the low byte. The tests
// compare each function with its byte-at-a-time counterpart.

const (
	ones  = 0x0101010101010101 // 0x01 in every byte
	highs = 0x8080808080808080 // the high bit of every byte
)

// load8 returns the eight bytes at b[i:] as a word, with zero bytes standing
// for the bytes past the end of b (a zero byte is not in decSpecial). ok is
// false when b is shorter than eight bytes or i is outside b.
func load8(b []byte, i int) (w uint64, ok bool) {
	if i >= 0 && i+8 <= len(b) {
		return binary.LittleEndian.Uint64(b[i : i+8]), true
	}
	if n := len(b); i >= 0 && i < n && n >= 8 {
		return binary.LittleEndian.Uint64(b[n-8:]) >> (8 * uint(i+8-n)), true
	}
	return 0, false
}

// hasZeroByte is non-zero exactly when one of the eight bytes of x is zero,
// and then its lowest set bit is the high bit of the first zero byte (the
// classic test: a borrow can only start at a zero byte and only propagates
// upwards, and bytes with the high bit set are masked out by ^x).
func hasZeroByte(x uint64) uint64 {
	return (x - ones) &^ x & highs
}

// decSpecials returns a word whose lowest set bit is the high bit of the
// first byte of v that is in decSpecial, or 0 if none is. Each term is
// hasZeroByte of v mapped so that the special bytes, and only they, become
// zero: '<' and '>' (0x3c, 0x3e) are the bytes x with x|0x02 == 0x3e, '\\'
// and ']' (0x5c, 0x5d) those with x|0x01 == 0x5d. (Above the first special
// byte hasZeroByte may also mark others; below it, nothing.)
func decSpecials(v uint64) uint64 {
	return hasZeroByte(v^(ones*'"')) | hasZeroByte((v|ones*0x02)^(ones*'>')) |
		hasZeroByte((v|ones*0x01)^(ones*']')) | hasZeroByte(v^(ones*'['))
}

// The patterns of matchDigits: the text a word must hold, little-endian,
// with '0' where a digit goes, and the masks of the bytes that must match
// exactly (0xff) rather than be a digit.
const (
	clockPattern = 0x30303a30303a3030 // "00:00:00"
	clockSeps    = 0x0000ff0000ff0000 // the two ':'
	fracSpace    = 0x203030303030302e // ".000000 "
	fracClose    = 0x3e3030303030302e // ".000000>"
	fracSeps     = 0xff000000000000ff // the '.' and the byte after the digits
)

// matchDigits reports whether the word w holds the text of pattern with any
// decimal digit where pattern has '0': the bytes of seps equal pattern's,
// the others are digits. d is w ^ pattern, which then holds each digit's
// value in its byte (and zero in the bytes of seps). A byte x^'0' is at most
// 9 exactly when x is a digit; adding 0x76 sets the high bit of a byte above
// 9, and cannot carry out of a byte whose high bit is clear.
func matchDigits(w, pattern, seps uint64) (d uint64, ok bool) {
	d = w ^ pattern
	return d, (d|(d+ones*0x76))&highs == 0 && d&seps == 0
}

// fracMicros parses a word holding ".uuuuuu" and then the last byte of
// pattern (fracSpace or fracClose): six fraction digits, as microseconds.
func fracMicros(w, pattern uint64) (int64, bool) {
	d, ok := matchDigits(w, pattern, fracSeps)
	if !ok {
		return 0, false
	}
	d >>= 8          // the six digit values in bytes 0-5, most significant first
	t := d*10 + d>>8 // each pair's value in bytes 0, 2 and 4 (at most 99: no carries)
	return int64(t&0xff)*10000 + int64(t>>16&0xff)*100 + int64(t>>32&0xff), true
}

// clockMicros parses -tt's usual timestamp "HH:MM:SS.uuuuuu " (with the
// space after it) at b[i] into nanoseconds since midnight. It declines (ok
// false) whatever else is there, including an out-of-range time, which
// parseTimeText reports.
func clockMicros(b []byte, i int) (ns int64, ok bool) {
	if i < 0 || i+16 > len(b) {
		return 0, false
	}
	d, ok := matchDigits(binary.LittleEndian.Uint64(b[i:i+8]), clockPattern, clockSeps)
	if !ok {
		return 0, false
	}
	us, ok := fracMicros(binary.LittleEndian.Uint64(b[i+8:i+16]), fracSpace)
	if !ok {
		return 0, false
	}
	t := d*10 + d>>8 // HH in byte 0, MM in byte 3, SS in byte 6
	h, m, s := int64(t&0xff), int64(t>>24&0xff), int64(t>>48&0xff)
	if h > 23 || m > 59 || s > 60 {
		return 0, false
	}
	return ((h*60+m)*60+s)*1e9 + us*1000, true
}

// durationMicros parses -T's usual duration "<S.uuuuuu>" at b[i] (which
// holds '<') into nanoseconds, and declines (ok false) whatever else is
// there.
func durationMicros(b []byte, i int) (ns int64, ok bool) {
	if i < 0 || i+10 > len(b) || !isDigit(b[i+1]) {
		return 0, false
	}
	us, ok := fracMicros(binary.LittleEndian.Uint64(b[i+2:i+10]), fracClose)
	if !ok {
		return 0, false
	}
	return int64(b[i+1]-'0')*1e9 + us*1000, true
}

// nonDigits returns a word with the high bit set in the bytes of w that are
// not decimal digits, exactly so up to the first of them (above it, a carry
// out of that byte may mark a '9' too), and d, which holds the value of each
// digit below the first non-digit in its byte. See matchDigits.
func nonDigits(w uint64) (m, d uint64) {
	d = w ^ ones*'0'
	return (d | (d + ones*0x76)) & highs, d
}

// eightDigits returns the number whose eight decimal digits d holds, one
// value (0-9) a byte, the most significant in the first (low) byte: digit
// pairs, then quadruples, then the whole, each step multiplying the higher
// half by its weight and adding it in (the common SWAR parse).
func eightDigits(d uint64) uint64 {
	d = (d * (10<<8 + 1)) >> 8 & 0x00ff00ff00ff00ff
	d = (d * (100<<16 + 1)) >> 16 & 0x0000ffff0000ffff
	return (d * (10000<<32 + 1)) >> 32
}

// isEquals reports whether the four bytes of v are " = " and then not a
// space: parseResult's usual start.
func isEquals(v uint32) bool {
	return v&0xffffff == ' '|'='<<8|' '<<16 && v>>24 != ' '
}

package strace

import "encoding/binary"

// Word-at-a-time helpers for skipDecPlain. A word holds eight bytes of a
// line loaded little-endian: the first byte is the low byte. The tests
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

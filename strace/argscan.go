package strace

import (
	"encoding/binary"
	"math/bits"
)

// The vectorised argument scan. scanArgsBytes looks at the argument text a
// byte at a time; scanArgsWide finds the same ')' from bit masks of 64 bytes
// at a time (windowMasks, made by argMasks: in assembly on amd64). Between
// two bytes that matter it does no work at all, and a string or a -y
// decoration that ends inside the window costs a few bit operations instead
// of a call to skipString or skipDecoration.
//
// scanArgsWide answers only for well-formed text, with exactly
// scanArgsBytes's end; on anything else (an unterminated string, comment or
// decoration, an unbalanced bracket, no ')') it declines, and scanArgsBytes
// finds and reports the problem. What the masks cannot settle
// (a string, decoration or comment that goes on past the window, a
// backslash or a bracket inside a decoration) is left to scanArgsBytes's
// own helpers (skipString, skipDecoration, skipComment), after which the
// scan takes a new window. The two scans are compared on the corpus, on every
// one-byte change of text that exercises each rule and by FuzzScanArgsWide
// (argscan_test.go).

// windowLen is how many bytes one windowMasks covers.
const windowLen = 64

// windowMasks has a bit per byte of a window, bit k for byte k, in each mask
// that names the byte.
type windowMasks struct {
	quote   uint64 // '"'
	bslash  uint64 // '\\'
	brk     uint64 // ( ) [ ] { }
	slash   uint64 // '/'
	less    uint64 // '<'
	greater uint64 // '>'
}

// scanArgsWide is scanArgsBytes for well-formed argument text: it returns
// the index of the ')' that closes the argument list starting at b[i], or -1
// when the text is not well-formed (or when it cannot tell), and the caller
// then runs scanArgsBytes. It keeps the closers of the open brackets in a
// register, two bits a level (closerCode), so brackets nested more than
// maxWideDepth deep decline.
func scanArgsWide(b []byte, i int) (end int) {
	var m windowMasks
	var open uint64 // closerCode of the open brackets, innermost in the low bits
	depth := 0
	for base := i; base < len(b); base += windowLen {
		// The masks of b[base:base+windowLen], read in place when b's
		// capacity holds the window (a line in the read buffer is followed
		// by more of the buffer), else from a zero-padded copy (zero bytes
		// are in no mask); bits at or past len(b) are then cleared.
		if base+windowLen <= cap(b) {
			argMasks((*[windowLen]byte)(b[base:base+windowLen]), &m)
		} else {
			paddedMasks(b[base:], &m)
		}
		todo := m.quote | m.brk | m.slash | m.less // the bytes to look at, in order
		if n := len(b) - base; n < windowLen {
			todo &= uint64(1)<<n - 1
		}
		for todo != 0 {
			k := bits.TrailingZeros64(todo)
			pos := base + k
			c := b[pos]
			switch argClass[c] {
			case clsQuote:
				// The string closes at the first later quote with an even
				// run of backslashes before it. No such quote in the window:
				// skipString takes it from here.
				if close, found := closingQuote(m.quote, m.bslash, k); found && base+close < len(b) {
					todo &^= 2<<close - 1 // every byte up to and including the quote
					continue
				}
				j := skipString(b, pos)
				if j < 0 {
					return -1
				}
				base = j - windowLen // next window at j
				todo = 0
				continue
			case clsSlash:
				if pos+1 < len(b) && b[pos+1] == '*' {
					// A -X verbose comment (`/* SEEK_SET */`) closes at the
					// first later '/' that has a '*' before it, the '*' at
					// least two bytes after this '/'.
					if close, found := closingSlash(b, base, m.slash, k); found {
						todo &^= 2<<close - 1
						continue
					}
					j := skipComment(b, pos)
					if j < 0 {
						return -1
					}
					base = j - windowLen
					todo = 0
					continue
				}
			case clsLess:
				if opensDecoration(b, pos) {
					// A decoration closes at the first '>' if no byte before
					// it nests or escapes anything (a path, usually).
					if close, found := closingGreater(&m, k); found && base+close < len(b) {
						todo &^= 2<<close - 1
						continue
					}
					j := skipDecoration(b, pos)
					if j < 0 {
						return -1
					}
					base = j - windowLen
					todo = 0
					continue
				}
			case clsOpen:
				if depth == maxWideDepth {
					return -1
				}
				open = open<<2 | uint64(closerCode[c])
				depth++
			case clsClose:
				if depth == 0 {
					if c == ')' {
						return pos
					}
					return -1
				}
				if uint64(closerCode[c]) != open&3 {
					return -1
				}
				open >>= 2
				depth--
			}
			todo &= todo - 1
		}
	}
	return -1
}

// maxWideDepth is how deeply brackets may nest in scanArgsWide's register.
const maxWideDepth = 32

// closerCode numbers the three closers, and each opener by its closer, for
// scanArgsWide's register of open brackets.
var closerCode = [256]uint8{'(': 1, ')': 1, '[': 2, ']': 2, '{': 3, '}': 3}

// closingQuote returns the position, in a window whose quote and backslash
// masks are given, of the quote that closes the string opened by the quote
// at bit k: the first later quote not escaped, that is, preceded by an even
// run of backslashes. The run cannot reach back past bit k, which is a
// quote. found is false if the window holds no such quote.
func closingQuote(quote, bslash uint64, k int) (close int, found bool) {
	later := quote &^ (2<<k - 1)
	for later != 0 {
		c := bits.TrailingZeros64(later) // c > k >= 0
		// the backslashes just before bit c: the leading ones of bslash
		// shifted so that bit c-1 is the top bit
		if run := bits.LeadingZeros64(^(bslash << (64 - c))); run&1 == 0 {
			return c, true
		}
		later &= later - 1
	}
	return 0, false
}

// closingSlash returns the position of the '/' that ends the comment
// opened by the "/*" at bit k of the window at b[base:], when the window
// holds it (skipComment's answer: the first "*/" after the "/*").
func closingSlash(b []byte, base int, slash uint64, k int) (close int, found bool) {
	later := slash &^ (8<<k - 1) // from k+3: in "/*/" the "*/" is not a close
	for later != 0 {
		c := bits.TrailingZeros64(later)
		if base+c >= len(b) {
			return 0, false
		}
		if b[base+c-1] == '*' {
			return c, true
		}
		later &= later - 1
	}
	return 0, false
}

// closingGreater returns the position of the '>' that closes the -y
// decoration opened by the '<' at bit k of the window, when that is the
// first '>' after it and no quote, backslash, bracket or '<' comes between
// (skipDecoration's rules then reduce to that). found is false otherwise.
func closingGreater(m *windowMasks, k int) (close int, found bool) {
	later := m.greater &^ (2<<k - 1)
	if later == 0 {
		return 0, false
	}
	c := bits.TrailingZeros64(later)
	between := (uint64(1)<<c - 1) &^ (2<<k - 1)
	if (m.quote|m.bslash|m.brk|m.less)&between != 0 {
		return 0, false
	}
	return c, true
}

// paddedMasks sets m to the masks of b (shorter than a window, or at the end
// of its capacity) from a zero-padded copy.
func paddedMasks(b []byte, m *windowMasks) {
	var pad [windowLen]byte
	copy(pad[:], b)
	argMasks(&pad, m)
}

// argMasksGeneric is argMasks in Go, eight bytes at a time.
func argMasksGeneric(w *[windowLen]byte, m *windowMasks) {
	*m = windowMasks{}
	for k := 0; k < windowLen; k += 8 {
		v := binary.LittleEndian.Uint64(w[k : k+8])
		m.quote |= byteMask(eqBytes(v, '"')) << k
		m.bslash |= byteMask(eqBytes(v, '\\')) << k
		m.brk |= byteMask(eqBytes(v|ones*0x01, ')')|eqBytes(v|ones*0x20, '{')|eqBytes(v|ones*0x20, '}')) << k
		m.slash |= byteMask(eqBytes(v, '/')) << k
		m.less |= byteMask(eqBytes(v, '<')) << k
		m.greater |= byteMask(eqBytes(v, '>')) << k
	}
}

// eqBytes returns the high bit of each byte of v that equals c, exactly
// (hasZeroByte is exact only for the lowest match).
func eqBytes(v uint64, c byte) uint64 {
	x := v ^ (ones * uint64(c))
	// a byte of x is zero iff adding 0x7f to its low seven bits carries
	// nothing into its high bit and that bit is clear
	return ^((x&(ones*0x7f) + ones*0x7f) | x) & highs
}

// byteMask packs the high bit of each byte of m into the low eight bits,
// byte 0 to bit 0.
func byteMask(m uint64) uint64 {
	return (m >> 7) * 0x0102040810204080 >> 56
}

package strace

import (
	"bytes"
	"testing"
)

// unescapeRef is unescape as it was before it copied plain runs in bulk, one
// byte at a time: the reference FuzzUnescape holds it to.
func unescapeRef(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
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

// FuzzUnescape: unescape decodes every input as the byte-at-a-time
// reference does.
func FuzzUnescape(f *testing.F) {
	for _, s := range []string{``, `abc`, `\`, `a\`, `\\`, `\"x\"`, `\x41\x4g\x`, `\101\7\08\777`, `v00 00006, 00000, \"message 6 of `, `\0\0\0\377ELF\2\1`, `\n\t\r\v\f\a\b\e\q`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		pre := []byte("pre")
		got := unescape(bytes.Clone(pre), s)
		want := unescapeRef(bytes.Clone(pre), s)
		if !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	})
}

package strace

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// TestDecSpecials checks that the lowest bit decSpecials sets marks the
// first byte in the decSpecial table: every byte value at every position of
// a word of other bytes, two specials in a word, and random words.
func TestDecSpecials(t *testing.T) {
	want := func(w [8]byte) int {
		for k, c := range w {
			if decSpecial[c] {
				return k
			}
		}
		return 8
	}
	check := func(w [8]byte) {
		t.Helper()
		if got := bits.TrailingZeros64(decSpecials(binary.LittleEndian.Uint64(w[:]))) >> 3; got != want(w) {
			t.Fatalf("decSpecials(%q) marks byte %d first, want %d", w[:], got, want(w))
		}
	}
	for a := 0; a < 8; a++ {
		for b := a + 1; b < 8; b++ {
			for _, pair := range []string{`<>`, `"[`, `]\`, `\"`, `[<`} {
				w := [8]byte{'a', 'a', 'a', 'a', 'a', 'a', 'a', 'a'}
				w[a], w[b] = pair[0], pair[1]
				check(w)
			}
		}
	}
	for pos := 0; pos < 8; pos++ {
		for c := 0; c < 256; c++ {
			for _, fill := range []byte{'a', 0, 0xff, '/', 0x80} {
				var w [8]byte
				for k := range w {
					w[k] = fill
				}
				w[pos] = byte(c)
				check(w)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n < 1e6; n++ {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], r.Uint64())
		check(w)
	}
}

// TestSkipDecPlain: skipDecPlain finds the first decSpecial byte, as
// skipPlain does, from every start of strings holding them at every offset.
func TestSkipDecPlain(t *testing.T) {
	for _, s := range []string{
		"", "a", "/tmp/corpus-work/run/oraus.curend/oraus.msb>", `3</a\x3eb<char 1:5>>`,
		"UNIX-STREAM:[1->2,\"/path\"]>", "0123456789abcdef\"0123456789abcdef",
		"\x80\xff\x00\x01abcdefghijklmnop[q", "abcdefgh]ijklmnop", "abcdefghijklmnop",
	} {
		b := []byte(s)
		for i := 0; i <= len(b); i++ {
			if got, want := skipDecPlain(b, i), skipPlain(b, i, &decSpecial); got != want {
				t.Errorf("skipDecPlain(%q, %d) = %d, want %d", s, i, got, want)
			}
		}
	}
}

// TestLoad8 checks load8 against the bytes it stands for, zero-padded, at
// every offset of texts of every length up to 20.
func TestLoad8(t *testing.T) {
	src := []byte("abcdefghijklmnopqrst")
	for n := 0; n <= len(src); n++ {
		b := src[:n]
		for i := -1; i <= n+1; i++ {
			w, ok := load8(b, i)
			if want := n >= 8 && i >= 0 && i < n; ok != want {
				t.Fatalf("load8(%q, %d) ok = %v", b, i, ok)
			}
			if !ok {
				continue
			}
			var pad [8]byte
			copy(pad[:], b[i:])
			if want := binary.LittleEndian.Uint64(pad[:]); w != want {
				t.Fatalf("load8(%q, %d) = %#x, want %#x", b, i, w, want)
			}
		}
	}
}

// FuzzSkipDecPlain compares skipDecPlain (eight bytes at a time) with
// skipPlain over decSpecial at every offset of the input.
//
//	go test -fuzz=FuzzSkipDecPlain ./strace
func FuzzSkipDecPlain(f *testing.F) {
	f.Add([]byte("/tmp/corpus-work/run/oraus.curend/oraus.msb>, 512"))
	f.Add([]byte(`3</a\x3eb<char 1:5>>(deleted)`))
	f.Add([]byte(`UNIX-STREAM:[1->2,"/path"]>`))
	f.Add(bytes.Repeat([]byte("\x00\xff\x80<>[]\\\""), 3))
	f.Fuzz(func(t *testing.T, b []byte) {
		for i := 0; i <= len(b); i++ {
			if got, want := skipDecPlain(b, i), skipPlain(b, i, &decSpecial); got != want {
				t.Fatalf("skipDecPlain(%q, %d) = %d, want %d", b, i, got, want)
			}
		}
	})
}

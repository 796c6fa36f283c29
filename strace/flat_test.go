package strace

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// flatDisagreement returns how the flat-list fast paths of Int, Str and NArgs
// differ from the full tree for the argument text raw, or "".
func flatDisagreement(raw []byte) string {
	fast := &Event{Kind: KindSyscall, RawArgs: raw}
	full := &Event{Kind: KindSyscall, RawArgs: raw}
	full.Args()
	if a, b := fast.NArgs(), full.NArgs(); a != b {
		return fmt.Sprintf("NArgs: fast %d, tree %d", a, b)
	}
	for i := -1; i <= maxFlatArgs+1; i++ {
		fv, fok := fast.Int(i)
		tv, tok := full.Int(i)
		if fv != tv || fok != tok {
			return fmt.Sprintf("Int(%d): fast %d %v, tree %d %v", i, fv, fok, tv, tok)
		}
		// Twice: the second answer comes from the cache.
		for range 2 {
			fb, ftr, fok := fast.Str(i)
			tb, ttr, tok := full.Str(i)
			if !bytes.Equal(fb, tb) || (fb == nil) != (tb == nil) || ftr != ttr || fok != tok {
				return fmt.Sprintf("Str(%d): fast %q %v %v, tree %q %v %v", i, fb, ftr, fok, tb, ttr, tok)
			}
		}
	}
	// Strings decoded earlier stay valid while the event is.
	for i := 0; i < maxFlatArgs; i++ {
		fb, _, _ := fast.Str(i)
		tb, _, _ := full.Str(i)
		if !bytes.Equal(fb, tb) {
			return fmt.Sprintf("Str(%d) after others: fast %q, tree %q", i, fb, tb)
		}
	}
	return ""
}

// TestFlatArgsAgree: for every call of the corpus the fast paths answer what
// the full tree answers, and most calls of a file-I/O trace take them.
func TestFlatArgsAgree(t *testing.T) {
	calls, flat := 0, 0
	forEachCorpusCall(t, func(name string, ev *Event) {
		calls++
		if _, ok := ev.flatList(); ok {
			flat++
		}
		raw := bytes.Clone(ev.RawArgs)
		require.Empty(t, flatDisagreement(raw), "%s:%d: %s", name, ev.Line, ev.Text)
	})
	require.Greater(t, flat, calls/2, "flat lists: %d of %d calls", flat, calls)
}

// TestFlatArgsEdges covers the shapes at the edge of the flat grammar.
func TestFlatArgsEdges(t *testing.T) {
	for _, raw := range []string{
		``, `3`, `3, 4`, `3,4`, `3, `, `3,`, ` 3`, `3 `, `3,  4`, `-1`, `-`, `0x`, `0x1f`, `0644`, `09`,
		`12abc`, `A-B`, `|A`, `A|`, `A||B`, `1|0x2`, `-1|2`, `O_RDONLY|O_CLOEXEC`, `O_RDONLY|BOGUS`, `BOGUS`,
		`""`, `"a"`, `"a"...`, `"a"..`, `"a"....`, `"..."`, `"a\"b"`, `"\\"`, `"\x41\101"...`, `"a`, `"a\"`,
		`3, "x", 5`, `3, "x"..., 5`, `3, "x" , 5`, `3, "x"y, 5`, `3, x"y", 5`, `"a", "b\n", "c\t"`,
		`1, 2, 3, 4, 5, 6`, `1, 2, 3, 4, 5, 6, 7`, `a=1`, `3</a>`, `NULL`, `{a=1}`, `[1]`, `[1] => [2]`,
		`99999999999999999999999`, `-0x8000000000000000`,
	} {
		require.Empty(t, flatDisagreement([]byte(raw)), "%q", raw)
	}
}

// FuzzFlatArgs: for any argument text the fast paths agree with the tree.
func FuzzFlatArgs(f *testing.F) {
	for _, s := range []string{`3, "x"..., 512`, `AT_FDCWD, "a\\nb", O_RDONLY|O_CLOEXEC`, `3, 0, SEEK_END`, `"a", "b\\x41"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if d := flatDisagreement(raw); d != "" {
			t.Fatalf("%q: %s", raw, d)
		}
	})
}

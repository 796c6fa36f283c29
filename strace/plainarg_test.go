package strace

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestIntFastPathAgrees: Int's fast path for plain argument lists gives, for every
// argument of every call in the corpus, what the full tree gives.
func TestIntFastPathAgrees(t *testing.T) {
	checked := 0
	forEachCorpusCall(t, func(name string, ev *Event) {
		if _, plain := plainArg(ev.RawArgs, 0); !plain {
			return
		}
		var fast [][2]int64
		for i := 0; i < 6; i++ {
			v, ok := ev.Int(i)
			fast = append(fast, [2]int64{v, b2i(ok)})
			ev.parsed = false // keep asking the fast path
		}
		for i := 0; i < 6; i++ {
			ev.parsed = false
			ev.args = nil
			n := ev.Arg(i)
			var want [2]int64
			if n != nil {
				v, ok := n.Value()
				want = [2]int64{v, b2i(ok)}
			}
			require.Equal(t, want, fast[i], "%s:%d arg %d: %s", name, ev.Line, i, ev.Text)
			checked++
		}
	})
	require.Greater(t, checked, 10000)
}

// forEachCorpusCall parses every bundled trace and calls f with each syscall
// event (valid until f returns).
func forEachCorpusCall(t *testing.T, f func(name string, ev *Event)) {
	t.Helper()
	files, err := filepath.Glob("../testdata/traces/*.strace")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, name := range files {
		r, err := os.Open(name)
		require.NoError(t, err)
		p := NewParser(r, name, Options{})
		for {
			ev, err := p.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			if ev.Kind == KindSyscall {
				f(name, ev)
			}
		}
		r.Close()
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

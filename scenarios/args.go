package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/iosim/iosim/fio"
)

// MalformedError is a scenario that cannot be run as written: an unknown
// command, an unknown, missing or mistyped argument, a missing input. Pos is
// file:line.
type MalformedError struct {
	Pos string
	Msg string
}

func (e *MalformedError) Error() string { return e.Pos + ": " + e.Msg }

// AssertionError is an `expect` whose claim does not hold.
type AssertionError struct {
	Pos string
	Msg string
}

func (e *AssertionError) Error() string { return e.Pos + ": " + e.Msg }

func malformed(td *datadriven.TestData, format string, a ...any) error {
	return &MalformedError{Pos: td.Pos, Msg: td.Cmd + ": " + fmt.Sprintf(format, a...)}
}

// args is a command's checked arguments: the bare words (names, in order)
// and the key=value pairs.
type args struct {
	td    *datadriven.TestData
	words []string
	kv    map[string][]string
}

// parseArgs checks td's arguments against what the command accepts: between
// minWords and maxWords bare words (maxWords < 0: any number), and the keys
// listed (a key ending in "..." may take several values, key=(a, b)).
func parseArgs(td *datadriven.TestData, minWords, maxWords int, keys ...string) (*args, error) {
	a := &args{td: td, kv: map[string][]string{}}
	multi := map[string]bool{}
	known := map[string]bool{}
	for _, k := range keys {
		if m, ok := strings.CutSuffix(k, "..."); ok {
			multi[m], known[m] = true, true
			continue
		}
		known[k] = true
	}
	for _, ca := range td.CmdArgs {
		if len(ca.Vals) == 0 {
			a.words = append(a.words, ca.Key)
			continue
		}
		if !known[ca.Key] {
			return nil, malformed(td, "unknown argument %s= (%s)", ca.Key, want(keys))
		}
		if _, dup := a.kv[ca.Key]; dup {
			return nil, malformed(td, "argument %s= given twice", ca.Key)
		}
		if len(ca.Vals) > 1 && !multi[ca.Key] {
			return nil, malformed(td, "argument %s= takes one value, not %d", ca.Key, len(ca.Vals))
		}
		a.kv[ca.Key] = ca.Vals
	}
	switch {
	case len(a.words) < minWords:
		return nil, malformed(td, "want %d name(s) after the command, got %d", minWords, len(a.words))
	case maxWords >= 0 && len(a.words) > maxWords:
		extra := a.words[maxWords]
		if maxWords == 0 {
			return nil, malformed(td, "unexpected word %q (%s)", extra, want(keys))
		}
		return nil, malformed(td, "unexpected word %q: want at most %d name(s) (%s)", extra, maxWords, want(keys))
	}
	return a, nil
}

func want(keys []string) string {
	if len(keys) == 0 {
		return "it takes no key=value arguments"
	}
	return "known: " + strings.Join(keys, ", ")
}

func (a *args) has(k string) bool { _, ok := a.kv[k]; return ok }

func (a *args) str(k, def string) string {
	if v, ok := a.kv[k]; ok {
		return v[0]
	}
	return def
}

func (a *args) list(k string) []string { return a.kv[k] }

func (a *args) int(k string, def int64) (int64, error) {
	v, ok := a.kv[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseInt(v[0], 0, 64)
	if err != nil {
		return 0, malformed(a.td, "argument %s=%s: want an integer", k, v[0])
	}
	return n, nil
}

// size reads a byte count with fio's suffixes (4k, 1m, 2GiB: powers of 1024).
func (a *args) size(k string, def int64) (int64, error) {
	v, ok := a.kv[k]
	if !ok {
		return def, nil
	}
	n, err := fio.ParseSize(v[0])
	if err != nil {
		return 0, malformed(a.td, "argument %s=%s: %v", k, v[0], err)
	}
	return n, nil
}

// oneOf reads a key whose value must be one of choices.
func (a *args) oneOf(k, def string, choices ...string) (string, error) {
	v := a.str(k, def)
	for _, c := range choices {
		if v == c {
			return v, nil
		}
	}
	return "", malformed(a.td, "argument %s=%s: want one of %s", k, v, strings.Join(choices, ", "))
}

// flagWord reports whether the bare word w was given (and removes it from
// the words still to check).
func (a *args) flagWord(w string) bool {
	for i, x := range a.words {
		if x == w {
			a.words = append(a.words[:i], a.words[i+1:]...)
			return true
		}
	}
	return false
}

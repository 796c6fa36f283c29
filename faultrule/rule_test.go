package faultrule_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/faultrule"
)

func TestParsePrint(t *testing.T) {
	for _, c := range []struct{ in, out string }{
		{in: "write@/db/*#nth=3=EIO"},
		{in: "fsync=delay:10ms"},
		{in: "read@fd:5#p=0.1=short:100"},
		{in: "pwrite64|fdatasync@/wal/*#after=100=ENOSPC"},
		{in: "*@/data/x#every=2=delay:1ms+EIO"},
		{in: "read=short:0"},
		{in: "read=corrupt+short:1+delay:1.5ms", out: "read=delay:1.5ms+short:1+corrupt"},
		{in: "write#p=0.5#after=2#every=3#nth=9=EIO", out: "write#nth=9#every=3#after=2#p=0.5=EIO"},
		{in: "write=delay:1000ms", out: "write=delay:1s"},
	} {
		r, err := faultrule.Parse(c.in, nil)
		require.NoError(t, err, c.in)
		want := c.out
		if want == "" {
			want = c.in
		}
		require.Equal(t, want, r.String())
	}
}

func TestParseErrors(t *testing.T) {
	known := func(n string) bool { return n == "read" || n == "write" }
	for _, c := range []struct{ in, err string }{
		{"", "column 1: want an operation name or '*'"},
		{"write", "column 6: want '=' and an effect"},
		{"=EIO", "column 1: want an operation name"},
		{"frob=EIO", `column 1: unknown operation "frob"`},
		{"read|=EIO", "column 6: want an operation name"},
		{"read|read=EIO", `column 6: operation "read" given twice`},
		{"wr-ite=EIO", `column 1: want an operation name, got "wr-ite"`},
		{"write=EWHAT", `column 7: want an errno name (EIO), short:N, delay:D or corrupt, got "EWHAT"`},
		{"write#nth=0=EIO", `column 11: want a positive integer after nth=, got "0"`},
		{"write#nth=03=EIO", `column 11: want a positive integer after nth=, got "03"`},
		{"write#nth=1#nth=2=EIO", "column 13: trigger nth given twice"},
		{"write#p=2=EIO", `column 9: want a probability 0 < p <= 1 after p= (0.25), got "2"`},
		{"write#p=0x1p-1=EIO", `column 9: want a probability`},
		{"write#when=3=EIO", `column 7: want a trigger nth, every, after or p, got "when"`},
		{"write#nth", `column 10: want '=' after trigger "nth"`},
		{"write=short:x", `column 13: want a byte count after short:, got "x"`},
		{"write=delay:fast", `column 13: want a positive duration after delay:`},
		{"write@fd:x=EIO", `column 10: want an fd number after @fd:, got "x"`},
		{"write@=EIO", "column 7: want a path glob or fd:N after '@'"},
		{"write@[=EIO", `column 7: bad path glob "["`},
		{"write@/a,b=EIO", `column 9: want '@', '#' or '=', got ','`},
		{"write=short:3+EIO", "column 15: an errno excludes short: and corrupt"},
		{"write=EIO+EIO", "column 11: two errnos"},
		{"write=EIO+", "column 11: want an effect"},
		{"write=short:1+short:2", "column 15: effect short given twice"},
	} {
		_, err := faultrule.Parse(c.in, known)
		require.ErrorContains(t, err, c.err, c.in)
		var pe *faultrule.Error
		require.ErrorAs(t, err, &pe)
		require.Equal(t, c.in, pe.Text)
	}
	_, err := faultrule.ParseList("write=EIO;;read#nth=x=EIO", known)
	require.EqualError(t, err, `fault rule "write=EIO;;read#nth=x=EIO": column 21: want a positive integer after nth=, got "x"`)
}

func TestParseList(t *testing.T) {
	rs, err := faultrule.ParseList("write=EIO;;read=short:1;", nil)
	require.NoError(t, err)
	require.Equal(t, "write=EIO;read=short:1", faultrule.FormatList(rs))
}

// TestProbabilitySpellings: p= takes a probability however it is written in
// decimal, and prints it in one form that parses back.
func TestProbabilitySpellings(t *testing.T) {
	for in, want := range map[string]string{"0.5": "0.5", ".5": "0.5", "1.0": "1", "0.00001": "1e-05", "1e-5": "1e-05", "0.25": "0.25"} {
		r, err := faultrule.Parse("write#p="+in+"=EIO", nil)
		require.NoError(t, err, in)
		require.Equal(t, "write#p="+want+"=EIO", r.String(), in)
	}
	for _, bad := range []string{"0", "1.5", "-0.5", "+0.5", "NaN", "Inf", "0x1p-2", "1e-400", ""} {
		_, err := faultrule.Parse("write#p="+bad+"=EIO", nil)
		require.Error(t, err, bad)
	}
}

// TestDelayPrintsASCII: a delay prints as it is typed (us, not µs).
func TestDelayPrintsASCII(t *testing.T) {
	r, err := faultrule.Parse("write=delay:1.5us", nil)
	require.NoError(t, err)
	require.Equal(t, "write=delay:1.5us", r.String())
}

func TestErrnoNames(t *testing.T) {
	for name, e := range map[string]unix.Errno{"EIO": unix.EIO, "ENOSPC": unix.ENOSPC, "EROFS": unix.EROFS, "EDQUOT": unix.EDQUOT, "EAGAIN": unix.EAGAIN} {
		got, ok := faultrule.ErrnoByName(name)
		require.True(t, ok)
		require.Equal(t, e, got)
		require.Equal(t, name, faultrule.ErrnoName(e))
	}
	// Linux's second names parse; 95 prints as strace prints it.
	for name, e := range map[string]unix.Errno{"EOPNOTSUPP": 95, "ENOTSUP": 95, "EWOULDBLOCK": unix.EAGAIN, "EDEADLOCK": unix.EDEADLK} {
		got, ok := faultrule.ErrnoByName(name)
		require.True(t, ok, name)
		require.Equal(t, e, got, name)
	}
	require.Equal(t, "EOPNOTSUPP", faultrule.ErrnoName(unix.EOPNOTSUPP))
	r, err := faultrule.Parse("fallocate=ENOTSUP", nil)
	require.NoError(t, err)
	require.Equal(t, "fallocate=EOPNOTSUPP", r.String())
	_, ok := faultrule.ErrnoByName("EWHAT")
	require.False(t, ok)
	require.Equal(t, "errno 9999", faultrule.ErrnoName(9999))
}

// genRule draws any rule the language can express.
func genRule(t *rapid.T) faultrule.Rule {
	ops := rapid.SliceOfNDistinct(rapid.SampledFrom([]string{"read", "write", "pread64", "fsync", "writeback", "openat"}), 0, 3,
		func(s string) string { return s }).Draw(t, "ops")
	r := faultrule.New(ops...)
	switch rapid.IntRange(0, 2).Draw(t, "where") {
	case 1:
		r.Glob = rapid.SampledFrom([]string{"/db/*", "*.log", "/a/b/c", "/x/[ab]*", "?"}).Draw(t, "glob")
	case 2:
		r.Fd = rapid.IntRange(0, 1<<20).Draw(t, "fd")
	}
	if rapid.Bool().Draw(t, "nth") {
		r.Nth = rapid.Int64Range(1, 1<<40).Draw(t, "n")
	}
	if rapid.Bool().Draw(t, "every") {
		r.Every = rapid.Int64Range(1, 1000).Draw(t, "k")
	}
	if rapid.Bool().Draw(t, "after") {
		r.After = rapid.Int64Range(1, 1000).Draw(t, "a")
	}
	if rapid.Bool().Draw(t, "p") {
		r.P = rapid.Float64Range(0, 1).Filter(func(f float64) bool { return f > 0 }).Draw(t, "pv")
	}
	if rapid.Bool().Draw(t, "delay") {
		r.Delay = time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "d"))
	}
	switch rapid.IntRange(0, 3).Draw(t, "eff") {
	case 1:
		r.Errno = rapid.SampledFrom([]unix.Errno{unix.EIO, unix.ENOSPC, unix.EINTR, unix.EAGAIN, unix.EDQUOT}).Draw(t, "errno")
	case 2:
		r.Short, r.HasShort = rapid.Int64Range(0, 1<<30).Draw(t, "short"), true
		r.Corrupt = rapid.Bool().Draw(t, "corrupt")
	case 3:
		r.Corrupt = true
	}
	if r.Errno == 0 && !r.HasShort && !r.Corrupt && r.Delay == 0 {
		r.Errno = unix.EIO
	}
	return r
}

// TestRoundTripRule: parse(print(r)) == r for every rule.
func TestRoundTripRule(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRule(t)
		back, err := faultrule.Parse(r.String(), nil)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		require.Equal(t, r, back, r.String())
	})
}

// TestRoundTripText: print(parse(s)) == canonical(s), where s writes a rule's
// triggers and effects in any order and its delay in nanoseconds, and canonical
// orders them as String does.
func TestRoundTripText(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := genRule(t)
		head := "*"
		if len(r.Ops) > 0 {
			head = strings.Join(r.Ops, "|")
		}
		if r.Glob != "" {
			head += "@" + r.Glob
		} else if r.Fd >= 0 {
			head += "@fd:" + strconv.Itoa(r.Fd)
		}
		var trig, eff []string
		for _, kv := range []struct {
			k string
			v int64
		}{{"nth", r.Nth}, {"every", r.Every}, {"after", r.After}} {
			if kv.v > 0 {
				trig = append(trig, "#"+kv.k+"="+strconv.FormatInt(kv.v, 10))
			}
		}
		if r.P > 0 {
			trig = append(trig, "#p="+strconv.FormatFloat(r.P, 'g', -1, 64))
		}
		if r.Delay > 0 {
			eff = append(eff, "delay:"+strconv.FormatInt(int64(r.Delay), 10)+"ns")
		}
		if r.HasShort {
			eff = append(eff, "short:"+strconv.FormatInt(r.Short, 10))
		}
		if r.Corrupt {
			eff = append(eff, "corrupt")
		}
		if r.Errno != 0 {
			eff = append(eff, faultrule.ErrnoName(r.Errno))
		}
		s := head + strings.Join(rapid.Permutation(trig).Draw(t, "triggers"), "") + "=" +
			strings.Join(rapid.Permutation(eff).Draw(t, "effects"), "+")
		got, err := faultrule.Parse(s, nil)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		require.Equal(t, r.String(), got.String(), s)
		again, err := faultrule.Parse(got.String(), nil)
		require.NoError(t, err)
		require.Equal(t, got, again)
	})
}

// FuzzParse: no input panics; whatever parses prints to text that parses back to
// the same rule and prints the same; an error names a column inside the text.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"write@/db/*#nth=3=EIO", "read@fd:5#p=0.1=short:100", "*=delay:1ms+EIO",
		"pwrite64|fdatasync@/wal/*#after=100#every=2=ENOSPC", "read=corrupt", "write#nth", "write@[=EIO", "a|b|c=short:0+delay:3us"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := faultrule.Parse(s, nil)
		if err != nil {
			pe, ok := err.(*faultrule.Error)
			if !ok || pe.Column < 1 || pe.Column > len(s)+1 {
				t.Fatalf("%q: error %v has no column inside the text", s, err)
			}
			return
		}
		back, err := faultrule.Parse(r.String(), nil)
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %v", s, r.String(), err)
		}
		if back.String() != r.String() {
			t.Fatalf("%q printed as %q, then as %q", s, r.String(), back.String())
		}
	})
}

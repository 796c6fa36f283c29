package main

import (
	"encoding/json"
	"flag"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestInterleavedFlags: flags are taken anywhere among the arguments, `--`
// ends them (unless it is a flag's value), and the positional arguments keep
// their order.
func TestInterleavedFlags(t *testing.T) {
	for _, c := range []struct {
		args  []string
		pos   []string
		v     bool
		s     string
		stack []string
	}{
		{args: nil},
		{args: []string{"a", "b"}, pos: []string{"a", "b"}},
		{args: []string{"--v", "a"}, pos: []string{"a"}, v: true},
		{args: []string{"a", "--v"}, pos: []string{"a"}, v: true},
		{args: []string{"a", "-s", "x", "b", "--v"}, pos: []string{"a", "b"}, v: true, s: "x"},
		{args: []string{"a", "--s=x", "b"}, pos: []string{"a", "b"}, s: "x"},
		{args: []string{"--stack", "p", "a", "--stack=q", "b"}, pos: []string{"a", "b"}, stack: []string{"p", "q"}},
		{args: []string{"a", "--", "--v", "-s"}, pos: []string{"a", "--v", "-s"}},
		{args: []string{"--", "a", "--v"}, pos: []string{"a", "--v"}},
		{args: []string{"a", "--v", "--", "b", "--"}, pos: []string{"a", "b", "--"}, v: true},
		{args: []string{"--s", "--", "a", "--v"}, pos: []string{"a"}, s: "--", v: true},
		{args: []string{"--v", "--", "a"}, pos: []string{"a"}, v: true},
		{args: []string{"-", "--v"}, pos: []string{"-"}, v: true},
	} {
		fl := flag.NewFlagSet("t", flag.ContinueOnError)
		v := fl.Bool("v", false, "")
		s := fl.String("s", "", "")
		var stack stackFlag
		fl.Var(&stack, "stack", "")
		var o, e strings.Builder
		code, done := parseFlags(fl, c.args, func(int) bool { return true }, "", &o, &e)
		require.False(t, done, "%q: %s", c.args, e.String())
		require.Zero(t, code)
		pos := fl.Args()
		if len(pos) == 0 {
			pos = nil
		}
		require.Equal(t, c.pos, pos, "%q", c.args)
		require.Equal(t, c.v, *v, "%q", c.args)
		require.Equal(t, c.s, *s, "%q", c.args)
		require.Equal(t, c.stack, []string(stack), "%q", c.args)
	}
}

// TestFlagsAfterArguments: every command takes its flags after the file
// names too.
func TestFlagsAfterArguments(t *testing.T) {
	code, out, errOut := runCmd("replay", "../../testdata/traces/oraus.seek.strace", "--verify")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "divergences: 0")

	code, out, errOut = runCmd("crash", crashData+"update.safe.strace", "--root", crashData+"update.snapshot:/tmp/rec/safe/app", "--json")
	require.Equal(t, 0, code, errOut)
	require.True(t, json.Valid([]byte(out)), out)

	code, out, errOut = runCmd("run", "../../scenarios/oraus.scen", "--rewrite=false")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "ok   ../../scenarios/oraus.scen")

	p := filepath.Join(t.TempDir(), "j.fio")
	require.NoError(t, os.WriteFile(p, []byte("[r]\nrw=read\nbs=4k\nsize=64k\n"), 0o644))
	code, out, errOut = runCmd("fio", p, "--output-format", "json")
	require.Equal(t, 0, code, errOut)
	require.True(t, json.Valid([]byte(out)), out)

	code, _, errOut = runCmd("calibrate", t.TempDir(), "--duration", "0s")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "iosim calibrate: --duration 0s: want a positive duration")
}

// TestHelp: `iosim help X`, `iosim X -h` and `iosim X --help` print the
// command's full help (usage, description, flags as --name) on stdout and
// exit 0, for every command of the table.
func TestHelp(t *testing.T) {
	singleDash := regexp.MustCompile(`(?m)^  -[a-z][a-z-]+`)
	for _, c := range commands {
		for _, args := range [][]string{{"help", c.name}, {c.name, "-h"}, {c.name, "--help"}} {
			code, out, errOut := runCmd(args...)
			require.Equal(t, 0, code, "%q", args)
			require.Empty(t, errOut, "%q", args)
			require.True(t, strings.HasPrefix(out, "usage: iosim "+c.name), "%q: %s", args, out)
			require.Greater(t, strings.Count(out, "\n"), 2, "%q: more than a usage line: %s", args, out)
			require.NotRegexp(t, singleDash, out, "%q: flags are written --name", args)
		}
	}
	code, out, _ := runCmd("help", "replay")
	require.Equal(t, 0, code)
	require.Contains(t, out, "\n  --compare NAME[:key=value,...]\n")
	require.Contains(t, out, "\n  --max-divergences N\n")
	code, out, _ = runCmd("help", "calibrate")
	require.Equal(t, 0, code)
	require.Contains(t, out, "\n  -o FILE\n", "a one-letter flag keeps one dash")

	code, out, errOut := runCmd("help")
	require.Equal(t, 0, code)
	require.Empty(t, errOut)
	for _, c := range commands {
		require.Contains(t, out, "\n  "+c.name+" ")
	}
}

// TestUsageErrors: a usage error is one line naming the problem and a hint,
// on stderr, exit 2, nothing on stdout.
func TestUsageErrors(t *testing.T) {
	trace := "../../testdata/traces/oraus.seek.strace"
	for _, c := range []struct {
		args []string
		msg  string
		hint string // the command the hint names
	}{
		{[]string{"replay", trace, "--no-such-flag"}, "iosim replay: flag provided but not defined: --no-such-flag", "replay"},
		{[]string{"replay"}, "iosim replay: no trace files given", "replay"},
		{[]string{"replay", "--max-divergences", "-1", trace}, `iosim replay: invalid value "-1" for flag --max-divergences: want at least 0`, "replay"},
		{[]string{"replay", trace, "--device"}, "iosim replay: flag needs an argument: --device", "replay"},
		{[]string{"crash", trace, "--depth", "-1"}, `iosim crash: invalid value "-1" for flag --depth: want at least 1`, "crash"},
		{[]string{"crash", "--depth=0", trace}, `iosim crash: invalid value "0" for flag --depth: want at least 1`, "crash"},
		{[]string{"crash", "--sample", "-3", trace}, `iosim crash: invalid value "-3" for flag --sample: want at least 0`, "crash"},
		{[]string{"crash", "--jobs", "0", trace}, `iosim crash: invalid value "0" for flag --jobs: want at least 1`, "crash"},
		{[]string{"crash", "--depth", "two", trace}, `iosim crash: invalid value "two" for flag --depth: want an integer`, "crash"},
		{[]string{"crash"}, "iosim crash: no trace files given", "crash"},
		{[]string{"run"}, "iosim run: no scenario files given", "run"},
		{[]string{"fio", "a.fio", "b.fio"}, "iosim fio: want one job file", "fio"},
		{[]string{"calibrate"}, "iosim calibrate: want one directory to measure in", "calibrate"},
		{[]string{"calibrate", "-o"}, "iosim calibrate: flag needs an argument: -o", "calibrate"},
		{[]string{"syscalls", "x"}, "iosim syscalls: takes no arguments", "syscalls"},
		{[]string{"devices", "--json"}, "iosim devices: flag provided but not defined: --json", "devices"},
		{[]string{"version", "x"}, "iosim version: takes no arguments", "version"},
		{[]string{"frobnicate"}, `iosim: unknown command "frobnicate"`, ""},
		{[]string{"help", "frobnicate"}, `iosim help: unknown command "frobnicate"`, ""},
	} {
		code, out, errOut := runCmd(c.args...)
		require.Equal(t, 2, code, "%q", c.args)
		require.Empty(t, out, "%q", c.args)
		hint := "Run 'iosim help' for the commands."
		if c.hint != "" {
			hint = "Run 'iosim help " + c.hint + "' for usage."
		}
		require.Equal(t, c.msg+"\n"+hint+"\n", errOut, "%q", c.args)
	}
}

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}, {"-version"}} {
		code, out, errOut := runCmd(args...)
		require.Equal(t, 0, code, "%q", args)
		require.Empty(t, errOut)
		require.Regexp(t, `^iosim github\.com/iosim/iosim \S+ .*`+regexp.QuoteMeta(runtime.Version())+"\n$", out)
	}
}

// TestNoSystemCalls: an empty trace (or one of strace messages only) is an
// input error for replay and crash, not a clean run.
func TestNoSystemCalls(t *testing.T) {
	p := filepath.Join(t.TempDir(), "empty.strace")
	require.NoError(t, os.WriteFile(p, nil, 0o644))
	for _, args := range [][]string{
		{"replay", p}, {"replay", "--verify", p}, {"replay", "--device", "nvme", p}, {"replay", "--json", p},
		{"crash", p}, {"crash", "--json", p},
	} {
		code, out, errOut := runCmd(args...)
		require.Equal(t, 2, code, "%q", args)
		require.Empty(t, out, "%q", args)
		require.Equal(t, "iosim "+args[0]+": "+p+": no system calls (an empty file, or not strace output)\n", errOut, "%q", args)
	}
	require.NoError(t, os.WriteFile(p, []byte("\x7fELF\x02\x01\n"), 0o644))
	for _, cmd := range []string{"replay", "crash"} {
		code, _, errOut := runCmd(cmd, "--keep-going", p)
		require.Equal(t, 2, code)
		require.Equal(t, "iosim "+cmd+": "+p+": no system calls (1 malformed line(s) skipped, no other)\n", errOut)
	}
}

// TestStopIsAParseError: a replay that stopped at a malformed line counts it.
func TestStopIsAParseError(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cut.strace")
	require.NoError(t, os.WriteFile(p, []byte("close(3) = -1 EBADF (Bad file descriptor)\nopenat(AT_FDCWD, \"a\n"), 0o644))
	code, out, _ := runCmd("replay", p)
	require.Equal(t, 2, code)
	require.Contains(t, out, "stopped: "+p+":2:18: unterminated string")
	require.Contains(t, out, "parse errors: 1 (the replay stopped at the malformed line)\n")
	require.NotContains(t, out, "parse errors: 0")

	code, out, _ = runCmd("replay", "--json", p)
	require.Equal(t, 2, code)
	var m struct {
		ParseErrors int `json:"parse_errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, 1, m.ParseErrors)
}

// TestCrashMergeRefuses: --merge takes the shard reports of one run, each
// once; anything else is an input error naming the file or shard.
func TestCrashMergeRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		return p
	}
	empty := write("empty.json", "{}")
	s0 := write("s0.json", `{"shard":"0/3","models":["posix"],"crash_points":2,"states":4}`)
	s1 := write("s1.json", `{"shard":"1/3","models":["posix"],"crash_points":2,"states":4}`)
	s2 := write("s2.json", `{"shard":"2/3","models":["posix"],"crash_points":2,"states":4}`)
	t0 := write("t0.json", `{"shard":"0/2","models":["posix"],"crash_points":2,"states":4}`)
	for _, c := range []struct {
		files []string
		err   string
	}{
		{[]string{empty}, empty + `: not a shard report (no "shard": written by iosim crash --json --shard I/N)`},
		{[]string{s0, s2}, "shard 1/3 missing: the merge would count part of the states"},
		{[]string{s0, s1, s1, s2}, "shard 1/3 given twice: " + s1 + " and " + s1},
		{[]string{s0, s1, t0}, s0 + " is shard 0/3, " + t0 + " shard 0/2: shards of different splits"},
	} {
		code, out, errOut := runCmd(append([]string{"crash", "--merge"}, c.files...)...)
		require.Equal(t, 2, code, "%q", c.files)
		require.Empty(t, out)
		require.Equal(t, "iosim crash --merge: "+c.err+"\n", errOut)
	}
	code, out, errOut := runCmd("crash", "--merge", s2, s0, s1)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "findings: 0")
}

// TestPackageDocListsCommands: `go doc ./cmd/iosim` names every command of
// the table.
func TestPackageDocListsCommands(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	require.NoError(t, err)
	require.NotNil(t, f.Doc)
	doc := f.Doc.Text()
	for _, c := range commands {
		require.Contains(t, doc, "iosim "+c.name+" ", "the package doc lists %s", c.name)
	}
}

// TestRunMissingSeparator: a scenario whose `----` is missing is malformed
// (exit 2, naming file and line), not a mismatch.
func TestRunMissingSeparator(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.scen")
	require.NoError(t, os.WriteFile(p, []byte("calls a\nclose(1) = 0\n----\narm a: 1 calls in 1 thread(s); device default, no stack\n\nrun a\n\nexpect calls=1 arm=a\n----\nok: a's calls = 1, want 1\n"), 0o644))
	code, out, _ := runCmd("run", p)
	require.Equal(t, 2, code)
	require.Contains(t, out, "FAIL "+p+": "+p+":6: run: takes no input, but \"expect calls=1 arm=a\" follows it before `----`")
}

// TestFioNotAJobFile: a binary file given to iosim fio is one short line,
// not a dump of its bytes.
func TestFioNotAJobFile(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	b, err := os.ReadFile(exe)
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "bin.fio")
	require.NoError(t, os.WriteFile(p, b[:4096], 0o644))
	code, out, errOut := runCmd("fio", p)
	require.Equal(t, 2, code)
	require.Empty(t, out)
	require.Equal(t, "iosim fio: "+p+":1: not a fio job file: binary data (byte 0x7f at column 1)\n", errOut)
}

// TestRunAnswers: iosim run ends with a line per file holding its answers
// (the claims checked, with the measured values); -v prints every answer
// under its file instead: ratios, crash findings with their fix, claims.
func TestRunAnswers(t *testing.T) {
	seed, crashScen := "../../scenarios/seed-001-osync.scen", "../../scenarios/crash-file-update.scen"
	// The answers as the scenario files' expected outputs state them.
	claims := func(path string) []string {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		var out []string
		for _, l := range strings.Split(string(b), "\n") {
			if c, ok := strings.CutPrefix(l, "ok: "); ok {
				out = append(out, c)
			}
		}
		require.NotEmpty(t, out)
		return out
	}
	code, out, errOut := runCmd("run", seed, crashScen)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "\nanswers (iosim run -v prints every one):\n")
	require.Regexp(t, `\n  seed-001-osync\.scen +`+regexp.QuoteMeta(claims(seed)[0]+"; "+claims(seed)[1])+` \(\+1 more\)\n`, out)
	require.Regexp(t, `\n  crash-file-update\.scen +`+regexp.QuoteMeta(claims(crashScen)[0]+"; "), out)
	require.True(t, strings.HasSuffix(out, "\n2 of 2 scenario files passed\n"), out)

	code, out, errOut = runCmd("run", "-v", seed, crashScen)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "answers (")
	for _, c := range append(claims(seed), claims(crashScen)...) {
		require.Regexp(t, `\n +\d+  expect `+regexp.QuoteMeta(c)+"\n", out)
	}
	require.Regexp(t, `\n +\d+  ratio \(time\) osync/buffered = [0-9.]+\n`, out)
	require.Regexp(t, `\n +\d+  crash unsafe: [1-9]\d* findings? \(\d+ of \d+ distinct states failed\)\n +ordering \(lost write /db/config\.tmp; persisted rename /db/config\.tmp -> /db/config\) under [a-z0-9, -]+: \d+ states\n +fix: fsync the file before renaming it over the old one\n`, out)
}

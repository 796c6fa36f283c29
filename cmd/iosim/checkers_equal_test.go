package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/replay"
)

// aliceServer runs an ALICE-convention Python checker script as a checker
// server: per line, the script afresh (its own globals) with argv DIR
// STDOUT, its exit status the verdict and its output the reason.
const aliceServer = `import contextlib, io, runpy, sys
script = sys.argv[1]
for line in sys.stdin:
    d, o = line.rstrip("\n").split(" ", 1)
    sys.argv = [script, d, o]
    out, code = io.StringIO(), 0
    with contextlib.redirect_stdout(out):
        try:
            runpy.run_path(script, run_name="__main__")
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 1
    why = " | ".join(out.getvalue().strip().splitlines()[:5])
    sys.stdout.write("ok\n" if code == 0 else "fail: %s\n" % why)
    sys.stdout.flush()
`

// The ways of running an external checker give the same report on a real
// recording (SQLite FULL, whose journal unlink is not synced): once per
// distinct state, each in a directory made for it; once per distinct
// content, in reused directories (in /dev/shm: TMPDIR is unset); and
// through --checker-server. The findings are the same causes,
// models, states, examples and messages (the per-process checker's message
// names its exit status, the server's does not).
func TestCheckerRunsAgree(t *testing.T) {
	python(t)
	script, err := filepath.Abs(crashData + "sqlite_checker.py")
	require.NoError(t, err)
	const dir = "/tmp/sq/FULL/app"
	plain := "/usr/bin/python3 -I " + script
	server := "/usr/bin/python3 -I -c '" + aliceServer + "' " + script
	explore := func(tmpdir string, c crash.Checker) *crash.Report {
		t.Setenv("TMPDIR", tmpdir)
		rep, _, err := replay.Explore([]string{crashData + "sqlite.FULL.strace"},
			replay.Options{Root: crashData + "sqlite.FULL.snapshot:" + dir}, crash.Options{Checkers: []crash.Checker{c}, Jobs: 2})
		require.NoError(t, err)
		return rep
	}
	sv := crash.NewServer(server, dir, 2)
	defer sv.Close()
	reps := map[string]*crash.Report{
		"per state":   explore(t.TempDir(), crash.External{Command: plain, Dir: dir}),
		"per content": explore("", crash.NewExternal(plain, dir)),
		"server":      explore(t.TempDir(), sv),
	}
	want := reps["per state"]
	require.NotEmpty(t, want.Findings, "SQLite FULL can lose the last commit")
	require.Greater(t, want.DistinctStates, 100)
	for name, r := range reps {
		require.Equal(t, want.States, r.States, name)
		require.Equal(t, want.DistinctStates, r.DistinctStates, name)
		require.Equal(t, want.Failed, r.Failed, name)
		require.Equal(t, want.Points, r.Points, name)
		require.Len(t, r.Findings, len(want.Findings), name)
		for k, f := range r.Findings {
			w := *want.Findings[k]
			g := *f
			w.Messages, g.Messages = reasons(w.Messages), reasons(g.Messages)
			require.Equal(t, w, g, "%s: finding %d", name, k)
			require.NotEmpty(t, g.Messages)
		}
	}
	left, err := filepath.Glob(filepath.Join(t.TempDir(), "..", "*", "iosim-crash-*"))
	require.NoError(t, err)
	require.Empty(t, left, "the state directories are removed")
}

// reasons are a checker's messages without the command and exit status
// before the reason.
func reasons(ms []string) []string {
	var out []string
	for _, m := range ms {
		if i := strings.Index(m, "exit status 1: "); i >= 0 {
			m = m[i+len("exit status 1: "):]
		} else if i := strings.Index(m, ".py: "); i >= 0 {
			m = m[i+len(".py: "):]
		}
		out = append(out, m)
	}
	return out
}

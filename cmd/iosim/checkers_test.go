package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// linksArgs explores the recorded unsafe update with a checker that the two
// links exist together.
var linksArgs = []string{"--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app", "--workload-dir=/tmp/rec/unsafe/app", crashData + "update.unsafe.strace"}

const linksCheck = `test -e "$D/link1"; a=$?; test -e "$D/link2"; b=$?; [ $a = $b ]`

// An external checker runs once per distinct content of the directory and
// stdout it is given, not once per state: each run logs a digest of what it
// got, and no digest is logged twice, while the explorer meets more distinct
// states (its content keys cover the whole file system and the promises).
func TestCrashCheckerOncePerContent(t *testing.T) {
	log := filepath.Join(t.TempDir(), "runs")
	checker := `sh -c 'D=$0; (cd "$D" && find . -printf "%p %y %s\n" | sort && find . -type f | sort | xargs cat; cat "$1") | md5sum >> ` + log + `; ` + linksCheck + ` || { echo one link without the other; exit 1; }'`
	code, r, errOut := crashRun(t, append([]string{"--checker", checker, "--jobs=2"}, linksArgs...)...)
	require.Equal(t, 1, code, errOut)
	b, err := os.ReadFile(log)
	require.NoError(t, err)
	runs := strings.Split(strings.TrimSpace(string(b)), "\n")
	distinct := slices.Compact(slices.Sorted(slices.Values(runs)))
	require.Len(t, runs, len(distinct), "a content checked twice")
	require.Less(t, len(runs), r.DistinctStates, "the checker runs fewer times than there are distinct states")
	require.NotEmpty(t, r.Findings)
}

// A checker server answers the same as the same check run per state, starts
// at most --jobs times, and a server that dies or answers out of protocol is
// an error naming the state.
func TestCrashCheckerServer(t *testing.T) {
	dir := t.TempDir()
	starts := filepath.Join(dir, "starts")
	perState := `sh -c 'D=$0; ` + linksCheck + ` || { echo one link without the other; exit 1; }'`
	server := `echo started >> ` + starts + `; while read D O; do if ` + linksCheck + `; then echo ok; else echo "fail: one link without the other"; fi; done`
	code, want, errOut := crashRun(t, append([]string{"--checker", perState, "--jobs=2"}, linksArgs...)...)
	require.Equal(t, 1, code, errOut)
	code, got, errOut := crashRun(t, append([]string{"--checker-server", server, "--jobs=2"}, linksArgs...)...)
	require.Equal(t, 1, code, errOut)
	require.NotEmpty(t, got.Findings)
	for _, f := range got.Findings {
		require.Equal(t, []string{"checker"}, f.Checks)
		require.Contains(t, strings.Join(f.Messages, "\n"), "one link without the other")
	}
	require.Equal(t, len(want.Findings), len(got.Findings))
	require.Equal(t, want.Failed, got.Failed)
	b, err := os.ReadFile(starts)
	require.NoError(t, err)
	require.LessOrEqual(t, strings.Count(string(b), "started"), 2, "at most --jobs servers")

	for _, c := range []struct{ server, want string }{
		{`read l; exit 3`, "gave no answer (exit status 3)"},
		{`while read l; do echo maybe; done`, `answered "maybe": want ok, fail or fail: REASON`},
	} {
		code, r, errOut := crashRun(t, append([]string{"--checker-server", c.server, "--jobs=1"}, linksArgs...)...)
		require.Equal(t, 1, code, errOut)
		require.NotEmpty(t, r.Findings)
		for _, f := range r.Findings {
			require.Equal(t, []string{"checker-error"}, f.Checks)
			for _, m := range f.Messages {
				require.Contains(t, m, c.want)
				require.Regexp(t, `^checker-error: (\S+: )?state \S+`, m)
			}
		}
	}
}

// The example SQLite checker server answers ok for a database holding every
// announced row and fails one that lacks a row.
func TestExampleSQLiteCheckerServer(t *testing.T) {
	python(t)
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good"), filepath.Join(dir, "bad")
	for _, d := range []string{good, bad} {
		require.NoError(t, os.Mkdir(d, 0o755))
	}
	mk := exec.Command("/usr/bin/python3", "-c", `import sqlite3,sys
for d, n in ((sys.argv[1], 2), (sys.argv[2], 1)):
    c = sqlite3.connect(d + "/db"); c.execute("PRAGMA journal_mode=WAL"); c.execute("CREATE TABLE t(k INTEGER PRIMARY KEY, v TEXT)")
    for i in range(1, n + 1): c.execute("INSERT INTO t VALUES(?, 'r')", (i,))
    c.commit(); c.close()`, good, bad)
	out, err := mk.CombinedOutput()
	require.NoError(t, err, string(out))
	stdout := filepath.Join(dir, "stdout")
	require.NoError(t, os.WriteFile(stdout, []byte("wal\ncommitted 1\ncommitted 2\n"), 0o644))
	srv := exec.Command("/usr/bin/python3", "../../examples/checkers/sqlite_check_server.py")
	srv.Stdin = strings.NewReader(good + " " + stdout + "\n" + bad + " " + stdout + "\n")
	out, err = srv.Output()
	require.NoError(t, err)
	require.Equal(t, "ok\nfail: announced rows missing: [2]\n", string(out))
}

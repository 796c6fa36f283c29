package main

import (
	"encoding/json"
	"os/exec"
	"testing"
)

// walArgs explore the SQLite WAL NORMAL recording (testdata/crash/README.md)
// from an empty directory, with the model's bytes in place of the wal-index
// strace cannot show.
func walArgs(dir string) []string {
	return []string{"crash", "--json", "--unknown-bytes=assume", "--root=" + dir + ":/tmp/ck/w", "--workload-dir=/tmp/ck/w", crashData + "sqlite-wal-normal.strace"}
}

// BenchmarkCrashSQLiteWAL runs iosim crash on the SQLite WAL NORMAL recording
// with the example checker, examples/checkers/sqlite_check.py
// (integrity_check and the announced rows), run by /usr/bin/python3 -I:
// "plain" starts it once per distinct content (ALICE's convention),
// "server" through --checker-server, "builtin" with the built-in checks
// only (the exploration alone). Each reports the run's states/s (every
// state of every model), distinct/s (the distinct states, each checked
// once or found equal in content to one checked) and the wall time of a
// run. BENCHMARKS.md has the figures and the command.
func BenchmarkCrashSQLiteWAL(b *testing.B) {
	if _, err := exec.Command("/usr/bin/python3", "-c", "import sqlite3").CombinedOutput(); err != nil {
		b.Skip("no /usr/bin/python3 with sqlite3")
	}
	const checkers = "../../examples/checkers/"
	// Without a checker nothing reads the rows the run announced, so the
	// built-in checks find nothing; the checkers find what was not synced.
	for _, c := range []struct {
		name, flag, cmd string
		want            int
	}{
		{"builtin", "", "", 0},
		{"server", "--checker-server", "/usr/bin/python3 -I " + checkers + "sqlite_check_server.py", 1},
		{"plain", "--checker", "/usr/bin/python3 -I " + checkers + "sqlite_check.py", 1},
	} {
		b.Run(c.name, func(b *testing.B) {
			if c.cmd != "" && testing.Short() {
				b.Skip("-short: a run with a Python checker takes tens of seconds")
			}
			args := walArgs(b.TempDir())
			if c.flag != "" {
				args = append(args[:1], append([]string{c.flag, c.cmd}, args[1:]...)...)
			}
			var states, distinct int
			for b.Loop() {
				code, out, errOut := runCmd(args...)
				if code != c.want {
					b.Fatalf("exit %d, want %d (WAL NORMAL loses what it did not sync; only a checker sees it): %s", code, c.want, errOut)
				}
				var r crashJSON
				if err := json.Unmarshal([]byte(out), &r); err != nil {
					b.Fatal(err)
				}
				states += r.States
				distinct += r.DistinctStates
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(states)/s, "states/s")
			b.ReportMetric(float64(distinct)/s, "distinct/s")
			b.ReportMetric(s/float64(b.N), "s/run")
		})
	}
}

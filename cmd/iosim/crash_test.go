package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/crash"
)

const crashData = "../../testdata/crash/"

type crashJSON struct {
	States          int     `json:"states"`
	DistinctStates  int     `json:"distinct_states"`
	Failed          int     `json:"failed"`
	StatesPerSecond float64 `json:"states_per_second"`
	Vulnerabilities []struct {
		Kind    string   `json:"kind"`
		Lines   []int    `json:"lines"`
		Models  []string `json:"models"`
		Message string   `json:"message"`
	} `json:"vulnerabilities"`
}

func crashRun(t *testing.T, args ...string) (int, crashJSON, string) {
	t.Helper()
	code, out, errOut := runCmd(append([]string{"crash", "--json"}, args...)...)
	var r crashJSON
	if code == 0 || code == 1 {
		require.NoError(t, json.Unmarshal([]byte(out), &r), out+errOut)
	}
	return code, r, errOut
}

// python returns a python3 with the sqlite3 module, or skips.
func python(t *testing.T) string {
	p, err := exec.LookPath("python3")
	if err != nil || exec.Command(p, "-c", "import sqlite3").Run() != nil {
		t.Skip("no python3 with sqlite3")
	}
	abs, err := filepath.Abs(crashData)
	require.NoError(t, err)
	return "python3 " + abs + "/"
}

// long skips a test that runs a Python checker per crash state (minutes on a
// loaded machine) unless IOSIM_LONG is set.
func long(t *testing.T) {
	if os.Getenv("IOSIM_LONG") == "" {
		t.Skip("runs a Python checker per state: set IOSIM_LONG=1")
	}
}

// An external checker in ALICE's convention gets the crashed workload
// directory and the announced output: a shell checker that the two links
// exist together finds the states where one was lost, under every model.
func TestCrashExternalChecker(t *testing.T) {
	checker := `sh -c 'if [ -e "$0/link1" ] != [ -e "$0/link2" ]; then :; fi; test -e "$0/link1"; a=$?; test -e "$0/link2"; b=$?; grep -q Updated "$1" && u=1 || u=0; if [ $a != $b ]; then echo "one link without the other (announced: $u)"; exit 1; fi'`
	code, r, errOut := crashRun(t, "--root="+crashData+"update.snapshot:/tmp/rec/unsafe/app", "--workload-dir=/tmp/rec/unsafe/app",
		"--checker", checker, "--jobs=2", crashData+"update.unsafe.strace")
	require.Equal(t, 1, code, errOut)
	require.NotEmpty(t, r.Vulnerabilities)
	every := false
	for _, v := range r.Vulnerabilities {
		require.Equal(t, "checker", v.Kind)
		require.Contains(t, v.Message, "one link without the other (announced: 1)")
		every = every || len(v.Models) == len(crash.DefaultModels())
	}
	require.True(t, every, "the lost link breaks the update under every model")

	code, r, errOut = crashRun(t, "--root="+crashData+"update.snapshot:/tmp/rec/safe/app", "--workload-dir=/tmp/rec/safe/app",
		"--checker", checker, crashData+"update.safe.strace")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Vulnerabilities)

	// A checker named by a path relative to where iosim runs is found there.
	data, err := filepath.Abs(crashData)
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "links.sh"), []byte(`test -e "$1/link1"; a=$?; test -e "$1/link2"; b=$?
if [ $a != $b ]; then echo "one link without the other"; exit 1; fi
`), 0o644))
	t.Chdir(dir)
	code, r, errOut = crashRun(t, "--root="+data+"/update.snapshot:/tmp/rec/unsafe/app", "--workload-dir=/tmp/rec/unsafe/app",
		"--checker", "sh links.sh", data+"/update.unsafe.strace")
	require.Equal(t, 1, code, errOut)
	require.NotEmpty(t, r.Vulnerabilities)
	for _, v := range r.Vulnerabilities {
		require.Contains(t, v.Message, "one link without the other", "the checker ran (not: cannot open links.sh)")
	}
}

// The classic unsafe update, recorded: the built-in checks find the renamed
// file empty or mixed under every model but ext4-ordered (auto_da_alloc) and
// ext4-journal (data journalled in order); xfs and btrfs do not order the
// data before the rename.
func TestCrashClassicUpdateBuiltin(t *testing.T) {
	root := "--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app"
	code, r, errOut := crashRun(t, root, crashData+"update.unsafe.strace")
	require.Equal(t, 1, code, errOut)
	models := map[string]bool{}
	for _, v := range r.Vulnerabilities {
		require.Equal(t, "atomic-replace", v.Kind)
		require.Equal(t, []int{314}, v.Lines, "the write the rename exposes")
		for _, m := range v.Models {
			models[m] = true
		}
	}
	require.Equal(t, map[string]bool{"posix": true, "ext4-writeback": true, "xfs": true, "btrfs": true}, models)

	root = "--root=" + crashData + "update.snapshot:/tmp/rec/safe/app"
	code, r, errOut = crashRun(t, root, crashData+"update.safe.strace")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Vulnerabilities)
	require.Greater(t, r.DistinctStates, 10)
}

// --svg draws the states and vulnerabilities per crash point along the trace:
// the chart names the trace, carries the three series and writes the count
// of the four atomic-replace vulnerabilities on their crash point's bar; a
// crash point after every call, drawn from shard reports merged, too.
func TestCrashSVG(t *testing.T) {
	dir := t.TempDir()
	root := "--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app"
	path := filepath.Join(dir, "crash.svg")
	code, _, errOut := runCmd("crash", "--svg", path, root, crashData+"update.unsafe.strace")
	require.Equal(t, 1, code, errOut)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	svg := string(b)
	require.Contains(t, svg, "crash update.unsafe.strace: states and vulnerabilities per crash point")
	for _, s := range []string{">states<", ">failing states<", ">vulnerabilities first found<", ">4<"} {
		require.Contains(t, svg, s)
	}

	var shards []string
	for i := range 2 {
		code, out, errOut := runCmd("crash", "--json", "--every-call", fmt.Sprintf("--shard=%d/2", i), root, crashData+"update.unsafe.strace")
		require.Equal(t, 1, code, errOut)
		f := filepath.Join(dir, fmt.Sprintf("shard%d.json", i))
		require.NoError(t, os.WriteFile(f, []byte(out), 0o644))
		shards = append(shards, f)
	}
	merged := filepath.Join(dir, "merged.svg")
	code, _, errOut = runCmd(append([]string{"crash", "--merge", "--svg", merged}, shards...)...)
	require.Equal(t, 1, code, errOut)
	b, err = os.ReadFile(merged)
	require.NoError(t, err)
	require.Contains(t, string(b), ">vulnerabilities first found<")

	code, _, errOut = runCmd("crash", "--svg", filepath.Join(dir, "no-such-dir", "x.svg"), root, crashData+"update.unsafe.strace")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--svg")
}

// With the application's checker (ALICE's convention), the announcement that
// is not durable and the links that can appear one without the other break
// the unsafe update under every model.
func TestCrashClassicUpdateChecker(t *testing.T) {
	py := python(t)
	long(t)
	args := []string{"--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app", "--workload-dir=/tmp/rec/unsafe/app",
		"--checker", py + "update_checker.py", "--jobs=2", crashData + "update.unsafe.strace"}
	code, r, errOut := crashRun(t, args...)
	require.Equal(t, 1, code, errOut)
	byMsg := map[string][]string{}
	for _, v := range r.Vulnerabilities {
		require.Equal(t, "checker", v.Kind)
		if len(v.Models) > len(byMsg[v.Message]) {
			byMsg[v.Message] = v.Models
		}
	}
	all := crash.ModelNames()
	found := func(s string) []string {
		for m, ms := range byMsg {
			if strings.HasSuffix(m, ": "+s) {
				return ms
			}
		}
		return nil
	}
	require.Equal(t, all, found("printed Updated but config is the old one"), "%v", byMsg)
	require.Equal(t, all, found("one link without the other"), "%v", byMsg)
	require.Equal(t, []string{"posix", "alice"}, found("config is neither old nor new (0 bytes)"), "%v", byMsg)
	// ext4-writeback: the size commits with the rename, the data need not
	require.Equal(t, []string{"posix", "ext4-writeback", "alice"}, found("config is neither old nor new (6000 bytes)"), "%v", byMsg)

	args[0], args[1] = "--root="+crashData+"update.snapshot:/tmp/rec/safe/app", "--workload-dir=/tmp/rec/safe/app"
	args[len(args)-1] = crashData + "update.safe.strace"
	code, r, errOut = crashRun(t, args...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Vulnerabilities)
}

// SQLite in rollback-journal mode: FULL can roll back the last announced
// commit (the journal's unlink is not followed by a directory sync), EXTRA
// shows nothing, OFF loses announced commits and corrupts the database.
func TestCrashSQLite(t *testing.T) {
	py := python(t)
	long(t)
	run := func(mode string) (int, crashJSON) {
		code, r, errOut := crashRun(t, "--root="+crashData+"sqlite."+mode+".snapshot:/tmp/sq/"+mode+"/app",
			"--workload-dir=/tmp/sq/"+mode+"/app", "--checker", py+"sqlite_checker.py", "--jobs=2", crashData+"sqlite."+mode+".strace")
		require.Contains(t, []int{0, 1}, code, errOut)
		return code, r
	}
	code, r := run("FULL")
	require.Equal(t, 1, code)
	require.Len(t, r.Vulnerabilities, 3)
	for k, v := range r.Vulnerabilities {
		require.Contains(t, v.Message, []string{"1 commits announced, rows []", "2 commits announced, rows [0]", "3 commits announced, rows [0, 1]"}[k])
		require.Equal(t, crash.ModelNames(), v.Models)
	}
	code, r = run("EXTRA")
	require.Equal(t, 0, code)
	require.Empty(t, r.Vulnerabilities)
	require.Greater(t, r.DistinctStates, 100)
	code, r = run("OFF")
	require.Equal(t, 1, code)
	lost, corrupt := false, false
	for _, v := range r.Vulnerabilities {
		lost = lost || strings.Contains(v.Message, "3 commits announced, rows [0, 1]")
		corrupt = corrupt || strings.Contains(v.Message, "integrity_check")
	}
	require.True(t, lost && corrupt)
}

// Shards split the states; merged they find what one run finds.
func TestCrashShardsMerge(t *testing.T) {
	root := "--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app"
	_, whole, _ := crashRun(t, root, crashData+"update.unsafe.strace")
	dir := t.TempDir()
	var files []string
	for i := range 3 {
		code, out, errOut := runCmd("crash", "--json", "--shard", []string{"0/3", "1/3", "2/3"}[i], root, crashData+"update.unsafe.strace")
		require.Contains(t, []int{0, 1}, code, errOut)
		f := filepath.Join(dir, []string{"a", "b", "c"}[i]+".json")
		require.NoError(t, os.WriteFile(f, []byte(out), 0o644))
		files = append(files, f)
	}
	code, r, errOut := crashRun(t, append([]string{"--merge"}, files...)...)
	require.Equal(t, 1, code, errOut)
	require.Equal(t, whole.States, r.States)
	require.Equal(t, len(whole.Vulnerabilities), len(r.Vulnerabilities))
	for k := range r.Vulnerabilities {
		require.Equal(t, whole.Vulnerabilities[k].Lines, r.Vulnerabilities[k].Lines)
		require.Equal(t, whole.Vulnerabilities[k].Models, r.Vulnerabilities[k].Models)
		require.Equal(t, whole.Vulnerabilities[k].Message, r.Vulnerabilities[k].Message)
	}
}

func TestCrashBadInput(t *testing.T) {
	for _, c := range []struct{ args []string }{
		{[]string{"crash", "--model", "zfs", crashData + "update.safe.strace"}},
		{[]string{"crash", "--shard", "3/3", crashData + "update.safe.strace"}},
		{[]string{"crash", "--root", "nocolon", crashData + "update.safe.strace"}},
		{[]string{"crash", "--checker", "true", crashData + "update.safe.strace"}},
		{[]string{"crash", "--checker", "durabilty", crashData + "update.safe.strace"}},
		{[]string{"crash", "--merge", crashData + "update.safe.strace"}},
		{[]string{"crash"}},
	} {
		code, _, errOut := runCmd(c.args...)
		require.Equal(t, 2, code, "%v", c.args)
		require.NotEmpty(t, errOut)
	}
}

// The same input, options and seed give the same report (but for the timing
// fields); --every-call makes more crash points; the JSON has the summary.
func TestCrashDeterministic(t *testing.T) {
	root := "--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app"
	strip := func(out string) map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		for _, k := range []string{"states", "distinct_states", "failed", "states_per_second", "vulnerabilities"} {
			require.Contains(t, m, k)
		}
		delete(m, "states_per_second")
		delete(m, "seconds")
		return m
	}
	args := []string{"crash", "--json", "--sample", "30", "--seed", "9", "--depth", "2", root, crashData + "update.unsafe.strace"}
	_, a, _ := runCmd(args...)
	_, b, _ := runCmd(args...)
	require.Equal(t, strip(a), strip(b))
	require.Greater(t, strip(a)["states"].(float64), 0.0)

	_, every, _ := runCmd("crash", "--json", "--every-call", root, crashData+"update.unsafe.strace")
	_, dflt, _ := runCmd("crash", "--json", root, crashData+"update.unsafe.strace")
	require.Greater(t, strip(every)["crash_points"].(float64), strip(dflt)["crash_points"].(float64))
}

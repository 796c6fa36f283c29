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
	Findings        []struct {
		Property string `json:"property"`
		Calls    []struct {
			Role  string `json:"role"`
			Call  string `json:"call"`
			Path  string `json:"path"`
			Lines []int  `json:"lines"`
		} `json:"calls"`
		Models   []string `json:"models"`
		Checks   []string `json:"checks"`
		Messages []string `json:"messages"`
		States   int      `json:"states"`
		Examples []string `json:"examples"`
	} `json:"findings"`
}

// messages are the findings' messages, joined.
func (r crashJSON) messages() string {
	var b strings.Builder
	for _, f := range r.Findings {
		for _, m := range f.Messages {
			b.WriteString(m + "\n")
		}
	}
	return b.String()
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
	require.NotEmpty(t, r.Findings)
	every := false
	for _, v := range r.Findings {
		require.Equal(t, []string{"checker"}, v.Checks)
		require.Contains(t, v.Messages[0], "one link without the other (announced: 1)")
		every = every || len(v.Models) == len(crash.DefaultModels())
	}
	require.True(t, every, "the lost link breaks the update under every model")

	code, r, errOut = crashRun(t, "--root="+crashData+"update.snapshot:/tmp/rec/safe/app", "--workload-dir=/tmp/rec/safe/app",
		"--checker", checker, crashData+"update.safe.strace")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Findings)

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
	require.NotEmpty(t, r.Findings)
	for _, v := range r.Findings {
		require.Contains(t, v.Messages[0], "one link without the other", "the checker ran (not: cannot open links.sh)")
	}
}

// The classic unsafe update, recorded: the built-in checks find one cause,
// the write not ordered before the rename that exposes it (the renamed file
// empty, zeros, or new bytes then zeros), under every model but ext4-ordered
// (auto_da_alloc) and ext4-journal (data journalled in order); xfs and btrfs
// do not order the data before the rename.
func TestCrashClassicUpdateBuiltin(t *testing.T) {
	root := "--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app"
	code, r, errOut := crashRun(t, root, crashData+"update.unsafe.strace")
	require.Equal(t, 1, code, errOut)
	require.Len(t, r.Findings, 1)
	f := r.Findings[0]
	require.Equal(t, "ordering", f.Property)
	require.Equal(t, []string{"atomic-replace"}, f.Checks)
	require.Len(t, f.Calls, 2)
	require.Equal(t, "write", f.Calls[0].Call)
	require.Equal(t, []int{314}, f.Calls[0].Lines, "the write the rename exposes")
	require.Equal(t, "rename", f.Calls[1].Call)
	require.Equal(t, "persisted", f.Calls[1].Role)
	require.Equal(t, []int{316}, f.Calls[1].Lines)
	require.Equal(t, []string{"posix", "ext4-writeback", "xfs", "btrfs"}, f.Models)
	require.Positive(t, f.States)
	require.LessOrEqual(t, f.States, r.States)
	require.NotEmpty(t, f.Examples)
	msgs := r.messages()
	require.Contains(t, msgs, "(6000 bytes): empty\n")
	require.Contains(t, msgs, "(6000 bytes): zeros (6000 bytes)\n")
	require.NotContains(t, msgs, "0 zero bytes")
	require.NotContains(t, msgs, "mix")

	root = "--root=" + crashData + "update.snapshot:/tmp/rec/safe/app"
	code, r, errOut = crashRun(t, root, crashData+"update.safe.strace")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Findings)
	require.Greater(t, r.DistinctStates, 10)
}

// --svg draws the states and findings per crash point along the trace: the
// chart names the trace, carries the three series and writes the count of
// the findings on their crash point's bar; a
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
	require.Contains(t, svg, "crash update.unsafe.strace: states and findings per crash point")
	for _, s := range []string{">states<", ">failing states<", ">findings first found<", ">1<"} {
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
	require.Contains(t, string(b), ">findings first found<")

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
	// each message with the models of the finding that shows it
	byMsg := map[string][]string{}
	for _, v := range r.Findings {
		require.Equal(t, []string{"checker"}, v.Checks)
		for _, m := range v.Messages {
			if len(v.Models) > len(byMsg[m]) {
				byMsg[m] = v.Models
			}
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
	require.NotNil(t, found("config is neither old nor new (0 bytes)"), "%v", byMsg)
	require.NotNil(t, found("config is neither old nor new (6000 bytes)"), "%v", byMsg)

	args[0], args[1] = "--root="+crashData+"update.snapshot:/tmp/rec/safe/app", "--workload-dir=/tmp/rec/safe/app"
	args[len(args)-1] = crashData + "update.safe.strace"
	code, r, errOut = crashRun(t, args...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Findings)
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
	// one cause, at each of the three commits: the journal's unlink lost
	require.Len(t, r.Findings, 1)
	require.Equal(t, "durability", r.Findings[0].Property)
	require.Equal(t, "unlink", r.Findings[0].Calls[0].Call)
	require.Equal(t, crash.ModelNames(), r.Findings[0].Models)
	for _, m := range []string{"1 commits announced, rows []", "2 commits announced, rows [0]", "3 commits announced, rows [0, 1]"} {
		require.Contains(t, r.messages(), m)
	}
	code, r = run("EXTRA")
	require.Equal(t, 0, code)
	require.Empty(t, r.Findings)
	require.Greater(t, r.DistinctStates, 100)
	code, r = run("OFF")
	require.Equal(t, 1, code)
	require.Contains(t, r.messages(), "integrity_check")
	for _, f := range r.Findings {
		require.LessOrEqual(t, f.States, r.States)
	}
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
	require.Equal(t, whole.Findings, r.Findings, "the same findings, states and examples")
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
		for _, k := range []string{"states", "distinct_states", "failed", "states_per_second", "findings"} {
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

// treeHash hashes the files under dir (names and contents), as the checker
// in TestCrashStateOut does.
func treeHash(t *testing.T, dir string) string {
	out, err := exec.Command("sh", "-c", `cd "$0" && find . -type f | sort | xargs -r sha256sum | sha256sum | cut -c1-16`, dir).Output()
	require.NoError(t, err)
	return strings.TrimSpace(string(out))
}

// --keep-failed writes every failing state into a directory named by its
// ID, and --state ID --out DIR writes one state again: both hold what the
// checker saw (a checker that fails every state and records the hash of the
// directory it got), and the same state twice is the same files.
func TestCrashStateOut(t *testing.T) {
	dir := t.TempDir()
	seen := filepath.Join(dir, "seen")
	checker := `sh -c 'cd "$0" && h=$(find . -type f | sort | xargs -r sha256sum | sha256sum | cut -c1-16) && echo $h >> ` + seen + ` && echo "h=$h" && exit 1'`
	keep := filepath.Join(dir, "kept")
	args := []string{"--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app", "--workload-dir=/tmp/rec/unsafe/app", "--model=posix"}
	code, r, errOut := crashRun(t, append(args, "--checker", checker, "--keep-failed", keep, crashData+"update.unsafe.strace")...)
	require.Equal(t, 1, code, errOut)
	b, err := os.ReadFile(seen)
	require.NoError(t, err)
	hashes := map[string]bool{}
	for _, h := range strings.Fields(string(b)) {
		hashes[h] = true
	}
	ents, err := os.ReadDir(keep)
	require.NoError(t, err)
	kept := map[string]bool{}
	for _, e := range ents {
		_, err := crash.ParseStateID(e.Name())
		require.NoError(t, err, "named by state ID")
		kept[e.Name()] = true
		require.True(t, hashes[treeHash(t, filepath.Join(keep, e.Name(), "crashed"))], "state %s: what the checker saw", e.Name())
		require.FileExists(t, filepath.Join(keep, e.Name(), "stdout"))
	}
	states := 0
	for _, f := range r.Findings {
		states += f.States
		for _, id := range f.Examples {
			require.True(t, kept[id], "example %s kept", id)
		}
	}
	require.Equal(t, r.States, states, "every state fails this checker, each in one finding")
	require.GreaterOrEqual(t, len(kept), r.DistinctStates)

	// one state again, alone: the same files and stdout as kept
	id := r.Findings[len(r.Findings)-1].Examples[0]
	out := filepath.Join(dir, "one")
	code, stdout, errOut := runCmd(append(append([]string{"crash", "--state", id, "--out", out}, args...), crashData+"update.unsafe.strace")...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "state "+id+" written to "+out)
	require.Equal(t, treeHash(t, filepath.Join(keep, id)), treeHash(t, out))

	// bad IDs, a state the run does not have, --state without --out
	for _, c := range [][]string{
		{"--state", "x", "--out", filepath.Join(dir, "x")},
		{"--state", "999.0", "--out", filepath.Join(dir, "y")},
		{"--state", id},
		{"--state", id, "--out", out}, // exists
		{"--state", id, "--out", filepath.Join(dir, "z"), "--keep-failed", filepath.Join(dir, "k2")},
	} {
		code, _, errOut := runCmd(append(append(append([]string{"crash"}, c...), args...), crashData+"update.unsafe.strace")...)
		require.Equal(t, 2, code, "%v", c)
		require.NotEmpty(t, errOut)
	}
	require.NoDirExists(t, filepath.Join(dir, "y"))
}

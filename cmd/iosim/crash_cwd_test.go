package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A trace whose paths are all relative (no -y, no getcwd or chdir) ran where
// --workload-dir says, with a note: the safe update is safe, the unsafe one
// loses the announced content, and an external checker with no state before
// the run is refused.
func TestCrashRelativeTrace(t *testing.T) {
	checker, err := filepath.Abs(crashData + "relative_checker.sh")
	require.NoError(t, err)
	args := func(mode string) []string {
		return []string{"--root", crashData + "relative.snapshot:/tmp/rel/app", "--workload-dir", "/tmp/rel/app",
			"--checker", "sh " + checker, crashData + "relative." + mode + ".strace"}
	}
	code, r, errOut := crashRun(t, args("safe")...)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Findings)
	require.Positive(t, r.DistinctStates)
	code, out, _ := runCmd(append([]string{"crash"}, args("safe")...)...)
	require.Equal(t, 0, code)
	require.Contains(t, out, "note: the trace does not show the directory the program started in: taken as /tmp/rel/app, --workload-dir (pass --cwd to say where it ran); the first relative path that depends on it: "+crashData+"relative.safe.strace:280\n")
	require.NotContains(t, out, "is it the directory the program ran in?")

	// a --root the trace never touches is said
	code, out, _ = runCmd("crash", "--root", crashData+"relative.snapshot:/elsewhere", "--cwd", "/tmp/rel/app", crashData+"relative.safe.strace")
	require.NotEqual(t, 2, code)
	require.Contains(t, out, "note: no call of the trace that changes files is under --root's directory /elsewhere: is it the directory the program ran in?")

	code, r, errOut = crashRun(t, args("unsafe")...)
	require.Equal(t, 1, code, errOut)
	var msgs []string
	for _, f := range r.Findings {
		msgs = append(msgs, f.Messages...)
	}
	require.Contains(t, strings.Join(msgs, "\n"), "announced done, but file1 holds 'hello'")

	code, _, errOut = runCmd("crash", "--workload-dir", "/tmp/rel/app", "--checker", "sh "+checker, crashData+"relative.safe.strace")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "needs the state before the run: --root SNAPSHOT:/traced/dir")

	// without --root, the built-in checks run, and the report says what was inferred
	code, out, _ = runCmd("crash", crashData+"relative.unsafe.strace")
	require.NotEqual(t, 2, code)
	require.Contains(t, out, "note: no --root: what existed before the trace is inferred")
	require.Contains(t, out, "taken as /tmp/iosim, the default")
}

// The shell's redirection idiom (dash's `echo "line 1" >> notes.txt; echo
// "committed 1"`: fcntl(1, F_DUPFD, 10) saves stdout, dup2 puts the file on
// 1 and the saved fd back) keeps its announcement on stdout and the line in
// the file in every crash state, though the model hands out other fd numbers
// than the recording.
func TestCrashShellRedirection(t *testing.T) {
	snap := t.TempDir()
	log := filepath.Join(t.TempDir(), "seen")
	checker := `sh -c 'D=$0 O=$1; if grep -q committed "$D/notes.txt" 2>/dev/null; then echo "notes.txt holds the announcement"; exit 1; fi; if grep -q "committed 1" "$O"; then cat "$D/notes.txt" >> ` + log + `; fi; exit 0'`
	code, r, errOut := crashRun(t, "--root", snap+":/tmp/dash/app", "--workload-dir", "/tmp/dash/app", "--checker", checker, crashData+"dash-append.strace")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Findings)
	seen, err := os.ReadFile(log)
	require.NoError(t, err, "no state's stdout holds the announcement")
	require.Contains(t, string(seen), "line 1\n")
}

// The checker's stdout is the standard output the program started with and
// its duplicates: a write to an fd 1 that dup2 made a pipe's end is not an
// announcement (stdout-dup.strace, written by hand).
func TestCrashStdoutIsTheStartingOne(t *testing.T) {
	snap := t.TempDir()
	log := filepath.Join(t.TempDir(), "seen")
	checker := `sh -c 'cat "$1" >> ` + log + `'`
	code, _, errOut := crashRun(t, "--root", snap+":/a", "--workload-dir", "/a", "--checker", checker, crashData+"stdout-dup.strace")
	require.Equal(t, 0, code, errOut)
	seen, err := os.ReadFile(log)
	require.NoError(t, err)
	require.Contains(t, string(seen), "announced\n")
	require.NotContains(t, string(seen), "to the pipe")
}

// A program that forks, traced without -f: the child is not in the trace,
// and the report says so (fork-nof.strace: a Python program whose child
// appends to a log, recorded with strace -o).
func TestReplayNotesUntracedChild(t *testing.T) {
	code, out, errOut := runCmd("replay", "--verify", "../../replay/testdata/rec/fork-nof.strace")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "note: 1 child process(es) the trace does not follow (traced without -f)")
	code, out, _ = runCmd("replay", "--verify", "../../testdata/traces/threads.f.strace")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "the trace does not follow", "strace -f follows every child")
}

// An announcement longer than strace's default -s 32 (announce_update.py,
// the unsafe update, prints "the configuration was updated: done"): the
// checker would read a stdout without "done" and the lost rename's finding
// would vanish, so the run is refused, naming the write and the -s to
// record with; recorded with -s 65536, the lost rename is found.
func TestCrashCutAnnouncement(t *testing.T) {
	checker, err := filepath.Abs(crashData + "relative_checker.sh")
	require.NoError(t, err)
	args := []string{"--root", crashData + "relative.snapshot:/tmp/rel/app", "--workload-dir", "/tmp/rel/app", "--checker", "sh " + checker}
	code, out, errOut := runCmd(append(append([]string{"crash"}, args...), crashData+"announce.unsafe.strace")...)
	require.Equal(t, 2, code, out)
	require.Contains(t, errOut, "announce.unsafe.strace:285: write: the trace shows 32 of the 36 bytes the program printed (strace -s 32 cut the data)")

	code, r, errOut := crashRun(t, append(args, crashData+"announce.unsafe.s65536.strace")...)
	require.Equal(t, 1, code, errOut)
	var lost []string
	for _, f := range r.Findings {
		for _, c := range f.Calls {
			if c.Role == "lost" && f.Property == "durability" {
				lost = append(lost, c.Call+" "+c.Path)
			}
		}
	}
	require.Equal(t, []string{"rename /tmp/rel/app/file1.tmp -> /tmp/rel/app/file1"}, lost)
	require.Contains(t, r.messages(), "announced done, but file1 holds 'hello'")
}

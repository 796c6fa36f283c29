package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/bundle"
	"github.com/iosim/iosim/strace"
)

// needStrace skips a test that records with the real strace when there is none.
func needStrace(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed: iosim record cannot be run (apt-get install strace)")
	}
}

// needPython returns /usr/bin/python3, or skips.
func needPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3 to record")
	}
	return py
}

// The configuration update of README's first example, as a program: safe
// syncs the temp file and the directory before announcing; unsafe syncs
// nothing.
const updateProg = `import os, sys
safe = sys.argv[1] == "safe"
fd = os.open("config.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"new")
if safe:
    os.fsync(fd)
os.close(fd)
os.rename("config.tmp", "config")
if safe:
    d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(d)
    os.close(d)
print("Updated")
`

// updateChecker is its checker in ALICE's convention: config holds the old or
// the new content, the new one once "Updated" was printed (a missing config
// with the whole new temp file is recoverable: ALICE's model splits a rename).
const updateChecker = `cfg=$(cat "$1/config" 2>/dev/null) || cfg=$(cat "$1/config.tmp" 2>/dev/null) || cfg=missing
case "$cfg" in old|new) ;; *) echo "config is '$cfg'"; exit 1 ;; esac
if grep -q Updated "$2" && [ "$cfg" != new ]; then echo "announced Updated, config is $cfg"; exit 1; fi
`

// recordUpdate records updateProg in a fresh workload directory holding the
// old config and returns the bundle's directory and the checker's command.
func recordUpdate(t *testing.T, mode string) (string, string) {
	t.Helper()
	py := needPython(t)
	tmp := t.TempDir()
	work, progs := filepath.Join(tmp, "app"), filepath.Join(tmp, "progs")
	require.NoError(t, os.Mkdir(work, 0o755))
	require.NoError(t, os.Mkdir(progs, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(work, "config"), []byte("old"), 0o644))
	prog := filepath.Join(progs, "update.py")
	require.NoError(t, os.WriteFile(prog, []byte(updateProg), 0o644))
	checker := filepath.Join(progs, "check.sh")
	require.NoError(t, os.WriteFile(checker, []byte(updateChecker), 0o644))
	out := filepath.Join(tmp, "rec-"+mode)
	code, stdout, stderr := runCmd("record", "-o", out, "--workload-dir", work, "--", py, "-S", "-I", prog, mode)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "Updated\n", stdout, "the program's stdout passes through")
	require.Contains(t, stderr, "iosim record: "+out)
	got, err := os.ReadFile(filepath.Join(out, bundle.StdoutFile))
	require.NoError(t, err)
	require.Equal(t, "Updated\n", string(got))
	return out, "sh " + checker
}

// iosim record, then iosim crash OUT --checker CMD: the README's two steps.
// The safe update has no vulnerability; the unsafe one loses the announced
// rename under every model.
func TestRecordThenCrash(t *testing.T) {
	needStrace(t)
	safe, checker := recordUpdate(t, "safe")
	code, out, errOut := runCmd("replay", "--verify", safe)
	require.Equal(t, 0, code, "%s%s", out, errOut)
	require.Contains(t, out, "divergences: 0")

	code, r, errOut := crashRun(t, "--checker", checker, safe)
	require.Equal(t, 0, code, errOut)
	require.Positive(t, r.DistinctStates)
	require.Empty(t, r.Findings)
	require.Empty(t, errOut, "the trace's stdout matches the recorded one: no note")
	code, r, errOut = crashRun(t, safe)
	require.Equal(t, 0, code, errOut)
	require.Empty(t, r.Findings, "nor do the built-in checks find anything")

	unsafe, checker := recordUpdate(t, "unsafe")
	code, r, errOut = crashRun(t, "--checker", checker, unsafe)
	require.Equal(t, 1, code, errOut)
	announced := false
	for _, f := range r.Findings {
		require.Equal(t, []string{"checker"}, f.Checks)
		if strings.Contains(strings.Join(f.Messages, "\n"), "announced Updated, config is old") {
			require.Contains(t, f.Models, "ext4-ordered", "no model keeps a rename nothing synced")
			announced = true
		}
	}
	require.True(t, announced, "the rename is not durable when Updated is printed, under every model: %+v", r.Findings)

	// A flag given overrides the bundle's, with a note.
	code, _, errOut = runCmd("replay", "--cwd", "/elsewhere", unsafe)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "note: --cwd /elsewhere replaces the bundle's cwd ")

	// The recorded stdout is cross-checked with the trace's writes to fd 1.
	require.NoError(t, os.WriteFile(filepath.Join(unsafe, bundle.StdoutFile), []byte("Updates\n"), 0o644))
	code, _, errOut = crashRun(t, "--checker", checker, unsafe)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "note: the trace's writes to the program's standard output (8 bytes) differ from the recorded "+filepath.Join(unsafe, bundle.StdoutFile)+" (8 bytes) from byte 6 on")
}

// A program that fails still yields a bundle, and its exit status is iosim
// record's.
func TestRecordFailingProgram(t *testing.T) {
	needStrace(t)
	work := t.TempDir()
	out := filepath.Join(t.TempDir(), "rec")
	code, stdout, errOut := runCmd("record", "-o", out, "--workload-dir", work, "--", "sh", "-c", "echo partial; echo oops >&2; exit 3")
	require.Equal(t, 3, code, errOut)
	require.Equal(t, "partial\n", stdout)
	require.Contains(t, errOut, "oops\n", "the program's stderr passes through")
	require.Contains(t, errOut, "exit status 3")
	b, err := bundle.Open(out)
	require.NoError(t, err)
	require.Equal(t, 3, b.ExitStatus)
	require.Equal(t, []string{"sh", "-c", "echo partial; echo oops >&2; exit 3"}, b.Argv)
	code, _, errOut = runCmd("replay", "--verify", out)
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, errOut, "note:")

	// a string longer than -s is cut: record and replay say so
	out = filepath.Join(t.TempDir(), "rec")
	code, _, errOut = runCmd("record", "-o", out, "--workload-dir", work, "-s", "4", "--", "sh", "-c", "echo partial")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "note: ")
	require.Contains(t, errOut, "longer than -s 4")
	code, _, errOut = runCmd("replay", out)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `note: [1-9][0-9]* string\(s\) of .*trace.strace were cut at strace's -s 4`, errOut)

	// killed by a signal: 128+N, and the signal named
	out = filepath.Join(t.TempDir(), "rec")
	code, _, errOut = runCmd("record", "-o", out, "--workload-dir", work, "--", "sh", "-c", "kill -TERM $$")
	require.Equal(t, 128+15, code, errOut)
	require.Contains(t, errOut, "killed by SIGTERM")
	b, err = bundle.Open(out)
	require.NoError(t, err)
	require.Equal(t, "SIGTERM", b.Signal)
}

// Without strace, record says how to install it and makes no bundle.
func TestRecordNoStrace(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	out := filepath.Join(t.TempDir(), "rec")
	code, _, errOut := runCmd("record", "-o", out, "--", "/bin/true")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "iosim record: strace is not installed")
	require.Contains(t, errOut, "apt-get install strace")
	require.NoDirExists(t, out)
}

func TestRecordUsage(t *testing.T) {
	work := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "--", "true"}, "-o OUT is required"},
		{[]string{"record", "-o", "x"}, "no program given"},
		{[]string{"record", "-o", filepath.Join(work, "rec"), "--workload-dir", work, "--", "true"}, "is inside the workload directory " + work},
		{[]string{"record", "-o", t.TempDir(), "--workload-dir", work, "--", "no-such-program-iosim"}, "program no-such-program-iosim: not found in PATH"},
		{[]string{"record", "-o", t.TempDir(), "--workload-dir", work, "--", "./missing"}, "relative to the workload directory"},
	} {
		code, _, errOut := runCmd(tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, errOut)
		require.Contains(t, errOut, tc.want, "%v", tc.args)
	}
	require.NoDirExists(t, filepath.Join(work, "rec"))
}

// A bundle that is not whole is refused, naming the file.
func TestBundleBad(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCmd("crash", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, dir+": not a bundle: no bundle.json")

	m := bundle.Manifest{Format: bundle.Format, Version: 2, Argv: []string{"true"}, Cwd: "/w", WorkloadDir: "/w", StringLimit: 32}
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, bundle.ManifestFile), raw, 0o644))
	code, _, errOut = runCmd("replay", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, filepath.Join(dir, "bundle.json")+": version 2: this iosim reads bundles of version 1")

	m.Version = 1
	raw, err = json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, bundle.ManifestFile), raw, 0o644))
	code, _, errOut = runCmd("crash", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, filepath.Join(dir, "trace.strace")+": the bundle lacks it")

	code, _, errOut = runCmd("replay", dir, "../../testdata/traces/oraus.seek.strace")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "a recording bundle is given alone")
}

// A bundle whose trace has lines longer than the parser's default (a write
// of more than 16 MiB recorded whole) replays: the manifest's longest_line
// raises the bound.
func TestBundleLongLine(t *testing.T) {
	dir := t.TempDir()
	n := strace.DefaultMaxLineLen + 10
	write := `write(3, "` + strings.Repeat("a", n) + `", ` + strconv.Itoa(n) + `) = ` + strconv.Itoa(n) + "\n"
	trace := `openat(AT_FDCWD, "big", O_WRONLY|O_CREAT, 0644) = 3` + "\n" + write
	require.NoError(t, os.WriteFile(filepath.Join(dir, bundle.TraceFile), []byte(trace), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, bundle.StdoutFile), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, bundle.SnapshotDir), 0o755))
	m := bundle.Manifest{Format: bundle.Format, Version: bundle.Version, Argv: []string{"w"}, Cwd: "/w", WorkloadDir: "/w",
		StringLimit: bundle.DefaultStringLimit << 1, LongestLine: len(write)}
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, bundle.ManifestFile), raw, 0o644))

	code, _, errOut := runCmd("replay", filepath.Join(dir, bundle.TraceFile))
	require.Equal(t, 2, code, "the trace alone exceeds the default bound")
	require.NotEmpty(t, errOut)
	code, out, errOut := runCmd("replay", "--verify", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "divergences: 0")
}

// The same two steps on a C program (testdata/bundles/update.c), checked by
// the built-in checks: the unsafe update's renamed file can be empty.
func TestRecordCProgram(t *testing.T) {
	needStrace(t)
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no gcc to build testdata/bundles/update.c")
	}
	bin := filepath.Join(t.TempDir(), "update")
	b, err := exec.Command(gcc, "-O2", "-o", bin, "../../testdata/bundles/update.c").CombinedOutput()
	require.NoError(t, err, string(b))
	for _, mode := range []string{"safe", "unsafe"} {
		work := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(work, "config"), []byte("old\n"), 0o644))
		out := filepath.Join(t.TempDir(), "rec")
		code, stdout, errOut := runCmd("record", "-o", out, "--workload-dir", work, "--", bin, mode)
		require.Equal(t, 0, code, errOut)
		require.Equal(t, "Updated\n", stdout)
		code, r, errOut := crashRun(t, out)
		if mode == "safe" {
			require.Equal(t, 0, code, errOut)
			require.Empty(t, r.Findings)
			continue
		}
		require.Equal(t, 1, code, errOut)
		require.NotEmpty(t, r.Findings)
		for _, f := range r.Findings {
			require.Equal(t, []string{"atomic-replace"}, f.Checks)
			require.Contains(t, strings.Join(f.Messages, "\n"), "holds neither the old content nor the new")
		}
	}
}

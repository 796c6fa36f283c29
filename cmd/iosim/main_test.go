package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func runCmd(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestReplayVerifyBundledTrace(t *testing.T) {
	code, out, errOut := runCmd("replay", "--verify", "../../testdata/traces/oraus.seek.strace")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "divergences: 0")
	require.Contains(t, out, "read")
}

func TestReplayJSON(t *testing.T) {
	code, out, errOut := runCmd("replay", "--verify", "--json", "../../testdata/traces/fdtable.basic.strace")
	require.Equal(t, 0, code, errOut)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	for _, k := range []string{"calls", "replayed", "not_modelled", "parse_errors", "divergences", "kernel_calls"} {
		require.Contains(t, m, k)
	}
	require.EqualValues(t, 127, m["calls"])
	require.IsType(t, map[string]any{}, m["not_modelled"])
}

func TestReplayDivergenceExitStatus(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.strace")
	require.NoError(t, os.WriteFile(p, []byte("openat(AT_FDCWD, \"f\", O_RDONLY|O_CREAT, 0644) = 3\nclose(3) = 0\nclose(3) = 0\n"), 0o644))
	code, out, _ := runCmd("replay", "--verify", p)
	require.Equal(t, 1, code)
	require.Contains(t, out, p+":3: close(3) = 0: result: recorded 0, simulated -1 EBADF")
	code, _, _ = runCmd("replay", p)
	require.Equal(t, 0, code, "without --verify nothing is compared")
}

// TestReplayVerifyNothingFails: a --verify that compared no call does not pass
// (a trace of calls replay cannot rebuild); input with no system call at all
// (strace messages only, or not strace output) is an input error.
func TestReplayVerifyNothingFails(t *testing.T) {
	p := filepath.Join(t.TempDir(), "anon.strace")
	require.NoError(t, os.WriteFile(p, []byte("mmap(NULL, 8192, PROT_READ|PROT_WRITE, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000\n"), 0o644))
	code, _, errOut := runCmd("replay", "--verify", p)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "--verify compared no call")
	code, _, _ = runCmd("replay", p)
	require.Equal(t, 0, code, "without --verify nothing is compared")

	p = filepath.Join(t.TempDir(), "messages.strace")
	require.NoError(t, os.WriteFile(p, []byte("[ Process PID=1 runs in 32 bit mode. ]\n+++ exited with 0 +++\n"), 0o644))
	for _, args := range [][]string{{"replay", "--verify", p}, {"replay", p}} {
		code, _, errOut = runCmd(args...)
		require.Equal(t, 2, code, "%q", args)
		require.Equal(t, "iosim replay: "+p+": no system calls (an empty file, or not strace output)\n", errOut)
	}
}

func TestBadUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"frobnicate"},
		{"replay"},
		{"replay", "--no-such-flag", "x"},
		{"replay", "/no/such/file.strace"},
		{"replay", "--stack", "nosuch", "../../testdata/traces/oraus.seek.strace"},
		{"run"},
		{"run", "--no-such-flag", "x"},
		{"fio"},
		{"fio", "a.fio", "b.fio"},
		{"syscalls", "x"},
	} {
		code, _, errOut := runCmd(args...)
		require.Equal(t, 2, code, "%q", args)
		require.NotEmpty(t, strings.TrimSpace(errOut), "%q must say what is wrong", args)
	}
}

func TestListings(t *testing.T) {
	code, out, _ := runCmd("syscalls")
	require.Equal(t, 0, code)
	require.Contains(t, out, "pread64")
	require.Contains(t, out, "not modelled")
	code, out, _ = runCmd("interposers")
	require.Equal(t, 0, code)
	require.Contains(t, out, "filecache")
}

// TestReplayNotes: the summary says what replay took as recorded because the
// trace does not show it (here one file of an -ff set, its thread's siblings
// missing), and --json carries it as notes.
func TestReplayNotes(t *testing.T) {
	code, out, errOut := runCmd("replay", "--verify", "../../testdata/traces/threads.ffpid25448.strace")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "note: 1 process(es) began before the trace")
	code, out, _ = runCmd("replay", "--verify", "--json", "../../testdata/traces/threads.ffpid25448.strace")
	require.Equal(t, 0, code)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Len(t, m["notes"], 3) // and the files opened with O_CREAT taken as new, and where it started
	require.Contains(t, m["notes"], "the trace does not show the directory the program started in: taken as /tmp/iosim, the default (pass --cwd to say where it ran); the first relative path that depends on it: ../../testdata/traces/threads.ffpid25448.strace:4")
	code, out, _ = runCmd("replay", "--verify", "../../testdata/traces/threads.ffpid25447.strace", "../../testdata/traces/threads.ffpid25448.strace",
		"../../testdata/traces/threads.ffpid25449.strace", "../../testdata/traces/threads.ffpid25450.strace")
	require.Equal(t, 0, code)
	require.NotContains(t, out, "began before the trace", "the whole -ff set shows every task")
	require.Contains(t, out, "note: 2 file(s) opened with O_CREAT and neither O_EXCL nor O_TRUNC are taken as created by the trace")
}

// TestReplayStopNotAPass: a replay that stopped at a malformed line says so
// in both outputs and prints no verdict that reads clean; --keep-going
// --verify with skipped lines is not a pass either.
func TestReplayStopNotAPass(t *testing.T) {
	p := filepath.Join(t.TempDir(), "cut.strace")
	require.NoError(t, os.WriteFile(p, []byte("openat(AT_FDCWD, \"f\", O_RDONLY|O_CREAT, 0644) = 3\nclose(3strace: Process 9 attached\nclose(3) = 0\n"), 0o644))
	want := p + ":3:13: expected ')' closing the argument list"

	code, out, errOut := runCmd("replay", "--verify", p)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, want)
	require.Contains(t, errOut, "record with `strace -o FILE`", "the hint at the cause")
	require.Contains(t, out, "stopped: "+want)
	require.NotContains(t, out, "divergences: 0")
	require.Contains(t, out, "not verified: the replay stopped")
	require.Contains(t, out, "--keep-going skips malformed lines")

	// A trace that cannot be read (reading /proc/self/mem at 0 fails with
	// EIO) is no malformed line: --keep-going would not help, and is not
	// offered.
	code, out, _ = runCmd("replay", "--verify", "/proc/self/mem")
	require.Equal(t, 2, code)
	require.Contains(t, out, "stopped: read /proc/self/mem: input/output error")
	require.NotContains(t, out, "--keep-going")
	// A directory is taken for a recording bundle.
	dir := t.TempDir()
	code, _, errOut = runCmd("replay", "--verify", dir)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, dir+": not a bundle: no bundle.json")

	code, out, _ = runCmd("replay", "--verify", "--json", p)
	require.Equal(t, 2, code)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, false, m["complete"])
	require.Contains(t, m["error"], want)

	code, out, errOut = runCmd("replay", "--verify", "--keep-going", p)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "1 malformed line(s) skipped")
	require.Contains(t, out, "not verified: 1 line(s) skipped")
	require.NotContains(t, out, "divergences: 0")

	code, out, _ = runCmd("replay", "--verify", "--json", "../../testdata/traces/fdtable.basic.strace")
	require.Equal(t, 0, code)
	m = nil
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Equal(t, true, m["complete"])
	require.NotContains(t, m, "error")
}

// TestReplayMountFlag: --mount TYPE:/PATH puts a mount in the table (a
// rename into it is EXDEV, as recorded, with nothing guessed); a spec of
// another shape is a usage error.
func TestReplayMountFlag(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.strace")
	require.NoError(t, os.WriteFile(p, []byte("mkdir(\"/w\", 0755) = 0\nopenat(AT_FDCWD, \"/w/a\", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3\nrename(\"/w/a\", \"/data/a\") = -1 EXDEV (Invalid cross-device link)\n"), 0o644))
	code, out, errOut := runCmd("replay", "--verify", "--mount", "xfs:/data", p)
	require.Equal(t, 0, code, out+errOut)
	require.NotContains(t, out, "mount point")
	code, out, _ = runCmd("replay", "--verify", p)
	require.Equal(t, 0, code)
	require.Contains(t, out, "/data taken as a mount point (a guess")
	code, _, errOut = runCmd("replay", "--mount", "/data", p)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--mount "/data": want TYPE:/PATH`)
}

// TestCrashMountFlag: iosim crash --mount tmpfs:/PATH: a file synced there
// is gone after every crash, which the built-in checks do not count (exit
// 0), while a checker that looks for it finds it missing (exit 1); a bad
// spec is a usage error.
func TestCrashMountFlag(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.strace")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join([]string{
		`mkdir("/srv/run", 0755) = 0`,
		`openat(AT_FDCWD, "/srv/run/pid", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
		`write(3, "42\n", 3) = 3`,
		`fsync(3) = 0`,
		`close(3) = 0`,
		`openat(AT_FDCWD, "/srv/run", O_RDONLY|O_DIRECTORY) = 3`,
		`fsync(3) = 0`,
		`close(3) = 0`,
	}, "\n")+"\n"), 0o644))
	snap := filepath.Join(dir, "snap")
	require.NoError(t, os.Mkdir(snap, 0o755))
	flags := []string{"crash", "--cwd", "/srv", "--root", snap + ":/srv", "--workload-dir", "/srv"}
	looks := `f() { test -e "$1/run/pid"; }; f`
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--mount", "tmpfs:/srv/run"}, 0},
		{[]string{"--mount", "tmpfs:/srv/run", "--checker", "durability", "--checker", looks}, 1},
	} {
		code, out, errOut := runCmd(append(append(slices.Clone(flags), c.args...), p)...)
		require.Equal(t, c.code, code, "%v: %s", c.args, out+errOut)
	}
	code, _, errOut := runCmd("crash", "--mount", "run", p)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--mount "run": want TYPE:/PATH`)
}

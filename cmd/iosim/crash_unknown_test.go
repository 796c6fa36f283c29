package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A correct 8 KiB update (update8k.c: temp file, fsync, rename, fsync of the
// directory) recorded at strace's default -s 32 is refused: a crash state
// would hold the 8,160 bytes the trace does not show as zeros, and the
// program's own checker would find its file "neither old nor new" under every
// model. --unknown-bytes=skip checks only the states without those bytes and
// counts the others; recorded with -s 1048576 the update is safe.
func TestCrashUnknownBytes(t *testing.T) {
	root := "--root=" + crashData + "update8k.snapshot:/tmp/rec/u8k/app"
	code, out, errOut := runCmd("crash", root, crashData+"update8k.strace")
	require.Equal(t, 2, code, out+errOut)
	require.Empty(t, out)
	require.Contains(t, errOut, "update8k.strace:31: write: the trace shows 32 of the 8192 bytes this call wrote (strace -s 32 cut the data)")
	require.Contains(t, errOut, "record with a -s at least the largest write (strace -s 1048576) or with iosim record")
	require.Contains(t, errOut, "--unknown-bytes=skip")

	code, out, errOut = runCmd("crash", "--unknown-bytes=skip", root, crashData+"update8k.strace")
	require.Equal(t, 0, code, out+errOut)
	require.Regexp(t, `(?m)^unchecked: [1-9]\d* distinct state\(s\) may hold bytes the workload did not show, so no check judged them \(first: \S*update8k.strace:31: write: `, out)

	type report struct {
		DistinctStates int    `json:"distinct_states"`
		Checked        int    `json:"checked"`
		Unchecked      int    `json:"unchecked"`
		UncheckedWhy   string `json:"unchecked_why"`
		Findings       []any  `json:"findings"`
	}
	var lastJSON string // the last run's report as iosim wrote it
	run := func(want int, args ...string) report {
		t.Helper()
		code, out, errOut := runCmd(append([]string{"crash", "--json", root}, args...)...)
		require.Equal(t, want, code, out+errOut)
		lastJSON = out
		var r report
		require.NoError(t, json.Unmarshal([]byte(out), &r), out)
		require.Equal(t, r.DistinctStates, r.Checked+r.Unchecked)
		return r
	}
	r := run(0, "--unknown-bytes=skip", crashData+"update8k.strace")
	require.Positive(t, r.Unchecked)
	require.Contains(t, r.UncheckedWhy, "update8k.strace:31: write:")
	// shards count their unchecked states, and the merge adds them up (as
	// it does the checked ones: a state met again at a later crash point
	// counts once per shard that meets it)
	dir := t.TempDir()
	var shards []string
	sum := 0
	for i := range 2 {
		sr := run(0, "--unknown-bytes=skip", fmt.Sprintf("--shard=%d/2", i), crashData+"update8k.strace")
		require.Positive(t, sr.Unchecked)
		sum += sr.Unchecked
		shards = append(shards, filepath.Join(dir, fmt.Sprintf("s%d.json", i)))
		require.NoError(t, os.WriteFile(shards[i], []byte(lastJSON), 0o644))
	}
	code, out, errOut = runCmd(append([]string{"crash", "--json", "--merge"}, shards...)...)
	require.Equal(t, 0, code, errOut)
	var merged report
	require.NoError(t, json.Unmarshal([]byte(out), &merged))
	require.Equal(t, sum, merged.Unchecked)
	require.Equal(t, r.UncheckedWhy, merged.UncheckedWhy)

	full := run(0, crashData+"update8k.s1048576.strace")
	require.Zero(t, full.Unchecked)
	require.Empty(t, full.UncheckedWhy)
	require.Empty(t, full.Findings)

	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("no python3 for the program's checker")
	}
	data, err := filepath.Abs(crashData)
	require.NoError(t, err)
	checker := []string{"--workload-dir=/tmp/rec/u8k/app", "--checker", "python3 " + data + "/update8k_checker.py", "--jobs=2"}
	r = run(0, append(checker, "--unknown-bytes=skip", crashData+"update8k.strace")...)
	require.Empty(t, r.Findings, "a state with the model's zeros reached the checker")
	require.Positive(t, r.Unchecked)
	// under alice a rename may leave neither name, which the checker reports
	full = run(0, append(checker, "--model=posix,ext4-ordered,ext4-writeback,ext4-journal,xfs,btrfs", crashData+"update8k.s1048576.strace")...)
	require.Empty(t, full.Findings)
	require.Zero(t, full.Unchecked)

	code, _, errOut = runCmd("crash", "--unknown-bytes=zero", crashData+"update8k.s1048576.strace")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--unknown-bytes "zero": want refuse, skip or assume`)

	// assume: every state checked, the model's zeros in place of the unseen
	// bytes, and said
	code, out, errOut = runCmd("crash", "--unknown-bytes=assume", root, crashData+"update8k.strace")
	require.NotEqual(t, 2, code, errOut)
	require.Contains(t, out, "note: the states hold the model's bytes (zeros, or the bytes before) where the workload did not show them, as asked (first: ")
	require.Contains(t, out, "update8k.strace:31: write:")
	require.NotContains(t, out, "unchecked:")
}

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMain lets a test start this binary as iosim (IOSIM_TEST_AS_IOSIM=1: the
// arguments are iosim's), so that several iosim processes run at once without
// building the command.
func TestMain(m *testing.M) {
	if os.Getenv("IOSIM_TEST_AS_IOSIM") == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// comparable drops from a crash report's JSON what a merge of shards sums
// instead of deduplicating (a content met by several shards is checked by
// each) and what depends on the clock.
func comparable(t *testing.T, b []byte) map[string]any {
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	for _, k := range []string{"seconds", "states_per_second", "distinct_states", "checked", "failed"} {
		delete(m, k)
	}
	return m
}

// N shard processes started at once, each taking its shard from a Kubernetes
// Indexed Job's environment, merge to the report of one process.
func TestCrashShardProcessesMergeToOneRun(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	args := []string{"crash", "--json", "--root=" + crashData + "update.snapshot:/tmp/rec/unsafe/app", crashData + "update.unsafe.strace"}
	one := exec.Command(self, args...)
	one.Env = append(os.Environ(), "IOSIM_TEST_AS_IOSIM=1", "JOB_COMPLETION_INDEX=", "IOSIM_SHARD_INDEX=", "IOSIM_SHARDS=", "CI_NODE_INDEX=", "CI_NODE_TOTAL=")
	whole, _ := one.Output()
	const n = 3
	dir := t.TempDir()
	var cmds []*exec.Cmd
	var errs []*bytes.Buffer
	var files []string
	for i := range n {
		c := exec.Command(self, args...)
		c.Env = append(os.Environ(), "IOSIM_TEST_AS_IOSIM=1", fmt.Sprintf("JOB_COMPLETION_INDEX=%d", i), fmt.Sprintf("IOSIM_SHARDS=%d", n))
		f := filepath.Join(dir, fmt.Sprintf("shard-%d.json", i))
		out, err := os.Create(f)
		require.NoError(t, err)
		defer out.Close()
		var e bytes.Buffer
		c.Stdout, c.Stderr = out, &e
		require.NoError(t, c.Start())
		cmds, errs, files = append(cmds, c), append(errs, &e), append(files, f)
	}
	for i, c := range cmds {
		err := c.Wait()
		require.Equal(t, 1, c.ProcessState.ExitCode(), "shard %d: %v %s", i, err, errs[i])
		require.Contains(t, errs[i].String(), fmt.Sprintf("note: checking shard %d/%d, from JOB_COMPLETION_INDEX and IOSIM_SHARDS", i, n))
	}
	code, merged, errOut := runCmd(append([]string{"crash", "--json", "--merge"}, files...)...)
	require.Equal(t, 1, code, errOut)
	require.NotEmpty(t, whole)
	require.Equal(t, comparable(t, whole), comparable(t, []byte(merged)))
}

func TestShardFromEnv(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		i, n int
		ok   bool
		err  string
	}{
		{env: map[string]string{}},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "2", "IOSIM_SHARDS": "4"}, i: 2, n: 4, ok: true},
		{env: map[string]string{"IOSIM_SHARD_INDEX": "0", "IOSIM_SHARDS": "2", "JOB_COMPLETION_INDEX": "1"}, i: 0, n: 2, ok: true},
		{env: map[string]string{"CI_NODE_INDEX": "3", "CI_NODE_TOTAL": "3"}, i: 2, n: 3, ok: true},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, err: "JOB_COMPLETION_INDEX=2 is set but IOSIM_SHARDS, the number of shards, is not"},
		{env: map[string]string{"IOSIM_SHARDS": "2"}, err: "IOSIM_SHARDS=2 is set but no shard index"},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "4", "IOSIM_SHARDS": "4"}, err: "want 0 <= index < 0+count"},
		{env: map[string]string{"CI_NODE_INDEX": "0", "CI_NODE_TOTAL": "3"}, err: "want 1 <= index < 1+count"},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "x", "IOSIM_SHARDS": "4"}, err: `JOB_COMPLETION_INDEX="x": want a number`},
	} {
		i, n, _, ok, err := shardFromEnv(func(k string) string { return c.env[k] })
		if c.err != "" {
			require.ErrorContains(t, err, c.err, "%v", c.env)
			continue
		}
		require.NoError(t, err, "%v", c.env)
		require.Equal(t, []any{c.i, c.n, c.ok}, []any{i, n, ok}, "%v", c.env)
	}
}

// A Kubernetes Indexed Job's index without the count is refused, not taken
// as "all states".
func TestCrashShardEnvRefused(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	t.Setenv("IOSIM_SHARDS", "")
	code, _, errOut := runCmd("crash", crashData+"update.unsafe.strace")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "IOSIM_SHARDS, the number of shards, is not")
}

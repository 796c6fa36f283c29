package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// deployExample is a job-runner example shipped in deploy/: where it runs
// the shards (the environment a shard gets, by its index) and what the
// paths in it stand for in this repository.
type deployExample struct {
	file string
	// shards is the number of shards the example runs, read from it
	shards func(t *testing.T, docs []any) int
	// env is the environment of shard i of n, as the runner sets it,
	// with the example's own env values (vars) given
	env func(vars map[string]string, i, n int) map[string]string
	// paths: the example's paths → this repository's
	paths map[string]string
}

// The examples in deploy/ run what iosim accepts: each iosim command in
// them, its paths mapped to this repository's files, runs (the shard
// commands write one state with --state, the merge merges two shard reports
// of a small run), and the environment the runner gives shard i of n makes
// iosim check shard i/n.
func TestDeployExamples(t *testing.T) {
	repo, err := filepath.Abs("../..")
	require.NoError(t, err)
	wal := map[string]string{
		"/work/sqlite_check_server.py":   "examples/checkers/sqlite_check_server.py",
		"/work/sqlite_check.py":          "examples/checkers/sqlite_check.py",
		"/work/sqlite-wal-normal.strace": "testdata/crash/sqlite-wal-normal.strace",
	}
	for _, ex := range []deployExample{
		{
			file: "deploy/kubernetes/crash-job.yaml",
			shards: func(t *testing.T, docs []any) int {
				n, ok := yamlAt(docs[0], "spec", "completions").(int)
				require.True(t, ok, "spec.completions")
				return n
			},
			env: func(vars map[string]string, i, n int) map[string]string {
				return map[string]string{"JOB_COMPLETION_INDEX": itoa(i), "IOSIM_SHARDS": vars["IOSIM_SHARDS"]}
			},
			paths: wal,
		},
		{
			file: "deploy/github-actions/crash-matrix.yml",
			shards: func(t *testing.T, docs []any) int {
				m, ok := yamlAt(docs[0], "jobs", "shard", "strategy", "matrix", "shard").([]any)
				require.True(t, ok, "jobs.shard.strategy.matrix.shard")
				return len(m)
			},
			env: func(vars map[string]string, i, n int) map[string]string {
				expr := strings.NewReplacer("${{ strategy.job-index }}", itoa(i), "${{ strategy.job-total }}", itoa(n))
				return map[string]string{"IOSIM_SHARD_INDEX": expr.Replace(vars["IOSIM_SHARD_INDEX"]), "IOSIM_SHARDS": expr.Replace(vars["IOSIM_SHARDS"])}
			},
		},
		{
			file: "deploy/gitlab/crash-parallel.yml",
			shards: func(t *testing.T, docs []any) int {
				n, ok := yamlAt(docs[0], "crash-shard", "parallel").(int)
				require.True(t, ok, "crash-shard.parallel")
				return n
			},
			env: func(_ map[string]string, i, n int) map[string]string {
				return map[string]string{"CI_NODE_INDEX": itoa(i + 1), "CI_NODE_TOTAL": itoa(n)}
			},
		},
	} {
		t.Run(filepath.Base(ex.file), func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(repo, ex.file))
			require.NoError(t, err)
			var docs []any
			dec := yaml.NewDecoder(bytes.NewReader(b))
			for {
				var d any
				if err := dec.Decode(&d); errors.Is(err, io.EOF) {
					break
				} else {
					require.NoError(t, err, "%s is YAML", ex.file)
				}
				docs = append(docs, d)
			}
			n := ex.shards(t, docs)
			require.Greater(t, n, 1)
			vars := map[string]string{}
			var cmds []string
			for _, d := range docs {
				collect(d, vars, &cmds)
			}
			var shard, merge [][]string
			for _, c := range cmds {
				for _, line := range strings.Split(c, "\n") {
					for _, part := range strings.Split(line, ";") {
						if rest, ok := strings.CutPrefix(strings.TrimSpace(part), "iosim crash "); ok {
							words := shellWords(t, rest)
							if strings.Contains(rest, "--merge") {
								merge = append(merge, words)
							} else {
								shard = append(shard, words)
							}
						}
					}
				}
			}
			require.Len(t, shard, 1, "one shard command")
			require.Len(t, merge, 1, "one merge command")

			for i := range n {
				env := ex.env(vars, i, n)
				si, sn, from, ok, err := shardFromEnv(func(k string) string { return env[k] })
				require.NoError(t, err)
				require.True(t, ok, "%v names a shard", env)
				require.Equal(t, [2]int{i, n}, [2]int{si, sn}, "shard from %s", from)
			}

			// the shard command, with a scratch directory for its --root
			// and --out, writes a state
			t.Chdir(repo)
			tmp := t.TempDir()
			expand := func(w string) string {
				w = os.Expand(w, func(v string) string {
					switch v {
					case "RUNNER_TEMP", "CI_PROJECT_DIR":
						return tmp
					case "IOSIM_SHARD_INDEX", "CI_NODE_INDEX", "JOB_COMPLETION_INDEX":
						return "0"
					}
					t.Fatalf("%s: $%s: a variable the test does not know", ex.file, v)
					return ""
				})
				for from, to := range ex.paths {
					w = strings.ReplaceAll(w, from, to)
				}
				return strings.ReplaceAll(w, "/tmp/empty", filepath.Join(tmp, "empty"))
			}
			var args []string
			for _, w := range shard[0] {
				args = append(args, expand(w))
			}
			require.NoError(t, os.MkdirAll(filepath.Join(tmp, "empty"), 0o755))
			for _, w := range args {
				for _, f := range strings.Fields(w) {
					if strings.HasSuffix(f, ".py") || strings.HasSuffix(f, ".strace") {
						require.FileExists(t, f, "a file the example names")
					}
				}
			}
			code, out, errOut := runCmd(append(append([]string{"crash"}, args...), "--shard=1/"+itoa(n), "--state=0.0", "--out="+filepath.Join(tmp, "state"))...)
			require.Equal(t, 0, code, "%v: %s", args, errOut)
			require.Contains(t, out, "state 0.0 written")

			// the merge command merges shard reports (of the small update
			// recording, in files named as the example names them)
			var files []string
			for i := range n {
				code, out, errOut := runCmd("crash", "--json", "--root=testdata/crash/update.snapshot:/tmp/rec/unsafe/app", "--shard="+itoa(i)+"/"+itoa(n), "testdata/crash/update.unsafe.strace")
				require.Contains(t, []int{0, 1}, code, errOut)
				f := filepath.Join(tmp, "shard-"+itoa(i)+".json")
				require.NoError(t, os.WriteFile(f, []byte(out), 0o644))
				files = append(files, f)
			}
			var margs []string
			for _, w := range merge[0] {
				if strings.ContainsAny(w, "*") {
					m, err := filepath.Glob(filepath.Join(tmp, filepath.Base(w)))
					require.NoError(t, err)
					require.ElementsMatch(t, files, m, "the merge's pattern matches the shard reports")
					margs = append(margs, m...)
					continue
				}
				margs = append(margs, w)
			}
			code, _, errOut = runCmd(append([]string{"crash"}, margs...)...)
			require.Contains(t, []int{0, 1}, code, errOut)
		})
	}
}

// yamlAt follows keys through nested YAML maps.
func yamlAt(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// collect gathers, from a YAML document, every string that runs iosim crash
// and every env or variables entry (name → value).
func collect(v any, vars map[string]string, cmds *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, c := range v {
			if k == "env" || k == "variables" {
				if m, ok := c.(map[string]any); ok {
					for n, val := range m {
						vars[n] = toString(val)
					}
				}
			}
			collect(c, vars, cmds)
		}
	case []any:
		for _, c := range v {
			if m, ok := c.(map[string]any); ok && m["name"] != nil && m["value"] != nil && len(m) == 2 {
				vars[toString(m["name"])] = toString(m["value"]) // a container's env list
			}
			collect(c, vars, cmds)
		}
	case string:
		if strings.Contains(v, "iosim crash") {
			*cmds = append(*cmds, v)
		}
	}
}

func toString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int:
		return itoa(v)
	}
	return ""
}

func itoa(i int) string { return strconv.Itoa(i) }

// shellWords splits a shell command's words up to its first redirection,
// pipe or list operator: '...' and "..." quote, $NAME is left for the
// caller to expand.
func shellWords(t *testing.T, s string) []string {
	var words []string
	var cur strings.Builder
	in := false // a word is open
	var q rune
	for _, r := range s {
		switch {
		case q != 0 && r == q:
			q = 0
		case q != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			q, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case strings.ContainsRune(">|&;<", r):
			if in {
				words = append(words, cur.String())
			}
			return words
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	require.Zero(t, q, "unterminated quote in %q", s)
	if in {
		words = append(words, cur.String())
	}
	return words
}

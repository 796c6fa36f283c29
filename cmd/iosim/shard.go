package main

import (
	"fmt"
	"strconv"
)

// shardFromEnv finds which shard of how many this process checks when
// --shard is not given, from the job runner's environment:
//
//   - a Kubernetes Indexed Job: the index from JOB_COMPLETION_INDEX (set by
//     Kubernetes), the count from IOSIM_SHARDS (the job's completions, which
//     Kubernetes does not export: the job spec passes it);
//   - a CI matrix: IOSIM_SHARD_INDEX and IOSIM_SHARDS (GitHub Actions passes
//     ${{ strategy.job-index }} and ${{ strategy.job-total }});
//   - GitLab CI's parallel jobs: CI_NODE_INDEX (from 1) and CI_NODE_TOTAL.
//
// ok is false when none is set (all states). from says where the shard came
// from, for the note iosim prints. An index without a count, a count without
// an index, or values that are not 0 <= I < N are errors naming the variables.
func shardFromEnv(getenv func(string) string) (i, n int, from string, ok bool, err error) {
	num := func(name string) (int, error) {
		v, err := strconv.Atoi(getenv(name))
		if err != nil {
			return 0, fmt.Errorf("%s=%q: want a number", name, getenv(name))
		}
		return v, nil
	}
	var idx, cnt string
	base := 0
	switch {
	case getenv("IOSIM_SHARD_INDEX") != "":
		idx, cnt = "IOSIM_SHARD_INDEX", "IOSIM_SHARDS"
	case getenv("JOB_COMPLETION_INDEX") != "":
		idx, cnt = "JOB_COMPLETION_INDEX", "IOSIM_SHARDS"
	case getenv("CI_NODE_INDEX") != "" || getenv("CI_NODE_TOTAL") != "":
		idx, cnt, base = "CI_NODE_INDEX", "CI_NODE_TOTAL", 1
	case getenv("IOSIM_SHARDS") != "":
		return 0, 0, "", false, fmt.Errorf("IOSIM_SHARDS=%s is set but no shard index (JOB_COMPLETION_INDEX or IOSIM_SHARD_INDEX): give --shard I/N", getenv("IOSIM_SHARDS"))
	default:
		return 0, 0, "", false, nil
	}
	if getenv(cnt) == "" {
		return 0, 0, "", false, fmt.Errorf("%s=%s is set but %s, the number of shards, is not: set it (to the job's completions or the matrix size), or give --shard I/N (--shard 0/1 checks every state)", idx, getenv(idx), cnt)
	}
	if i, err = num(idx); err != nil {
		return 0, 0, "", false, err
	}
	if n, err = num(cnt); err != nil {
		return 0, 0, "", false, err
	}
	i -= base
	if n <= 0 || i < 0 || i >= n {
		return 0, 0, "", false, fmt.Errorf("%s=%s, %s=%s: want %d <= index < %d+count", idx, getenv(idx), cnt, getenv(cnt), base, base)
	}
	return i, n, idx + " and " + cnt, true, nil
}

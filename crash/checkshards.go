package crash

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CheckShards checks that reports, read from the files names, are the
// shards of one run, each once, before Merge adds them up: every report is a
// shard report (its Shard is "I/N", as a run with Options.Shards > 1 writes
// it), all have the same N, the same models and the same crash points, no
// shard is given twice, and none of 0..N-1 is missing. The error names the
// files and the shards ("shard 2/4 missing").
func CheckShards(names []string, reports []*Report) error {
	if len(names) != len(reports) {
		return fmt.Errorf("crash: %d names for %d reports", len(names), len(reports))
	}
	if len(reports) == 0 {
		return fmt.Errorf("no shard reports")
	}
	n := 0
	first := -1
	seen := map[int]string{}
	for k, r := range reports {
		i, m, ok := ParseShard(r.Shard)
		ok = ok && m > 1 // a report of one shard has no Shard
		if !ok {
			if r.Shard == "" {
				return fmt.Errorf("%s: not a shard report (no \"shard\": written by iosim crash --json --shard I/N)", names[k])
			}
			return fmt.Errorf("%s: shard %q: want I/N with 0 <= I < N", names[k], r.Shard)
		}
		if first < 0 {
			first, n = k, m
		}
		f := reports[first]
		switch {
		case m != n:
			return fmt.Errorf("%s is shard %s, %s shard %s: shards of different splits", names[first], f.Shard, names[k], r.Shard)
		case !slices.Equal(r.Models, f.Models):
			return fmt.Errorf("%s and %s: shards of different runs (models %s, %s)", names[first], names[k], strings.Join(f.Models, ","), strings.Join(r.Models, ","))
		case r.CrashPoints != f.CrashPoints:
			return fmt.Errorf("%s and %s: shards of different runs (%d crash points, %d)", names[first], names[k], f.CrashPoints, r.CrashPoints)
		}
		if prev, dup := seen[i]; dup {
			return fmt.Errorf("shard %d/%d given twice: %s and %s", i, n, prev, names[k])
		}
		seen[i] = names[k]
	}
	var missing []string
	for i := range n {
		if _, ok := seen[i]; !ok {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("shard %s missing: the merge would count part of the states", missing[0])
	}
	return fmt.Errorf("shards %s missing: the merge would count part of the states", strings.Join(missing, ", "))
}

// ParseShard reads a shard, "I/N" with 0 <= I < N (iosim crash --shard, a
// report's Shard).
func ParseShard(s string) (i, n int, ok bool) {
	a, b, found := strings.Cut(s, "/")
	if !found {
		return 0, 0, false
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	return i, n, err1 == nil && err2 == nil && n > 0 && i >= 0 && i < n
}

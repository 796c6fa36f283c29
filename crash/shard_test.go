package crash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// vulnSummary lists a report's findings by what they are and how many
// states show them, sorted, for comparing runs split differently.
func vulnSummary(r *Report) []string {
	var out []string
	for _, c := range r.Findings {
		ms := slices.Clone(c.Models)
		slices.Sort(ms)
		out = append(out, fmt.Sprintf("%s %v %v %v %q states=%d points=%d %v %v", c.Property, c.Calls, c.How, ms, c.Messages, c.States, c.CrashPoints, c.Points, c.Examples))
	}
	slices.Sort(out)
	return out
}

// TestShardsUnionRapid: on random small programs, the shards of a run merge
// to the whole run (the same states counted and failing at every crash
// point, the same vulnerabilities shown by as many states, at the same
// crash point), and a run, sampled or not, is the same bytes twice, on any
// number of goroutines.
func TestShardsUnionRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workload := randomWorkload(t)
		opts := Options{Depth: rapid.IntRange(0, 2).Draw(t, "depth"), Workers: rapid.IntRange(1, 3).Draw(t, "workers")}
		if rapid.Bool().Draw(t, "sampled") {
			opts.Sample = rapid.IntRange(1, 8).Draw(t, "sample")
			opts.Seed = rapid.Uint64().Draw(t, "seed")
		}
		whole := exploreWith(t, opts, workload, nil)
		other := opts
		other.Workers = rapid.IntRange(1, 3).Draw(t, "other workers")
		again := exploreWith(t, other, workload, nil)
		var a, b bytes.Buffer
		require.NoError(t, whole.WriteJSON(&a))
		require.NoError(t, again.WriteJSON(&b))
		require.Equal(t, a.String(), b.String(), "same options, same report, whatever the goroutines")

		n := rapid.IntRange(2, 4).Draw(t, "shards")
		var shards []*Report
		for i := range n {
			o := opts
			o.Shard, o.Shards = i, n
			r := exploreWith(t, o, workload, nil)
			var j bytes.Buffer // as iosim crash --merge reads them
			require.NoError(t, json.NewEncoder(&j).Encode(r))
			var back Report
			require.NoError(t, json.Unmarshal(j.Bytes(), &back))
			shards = append(shards, &back)
		}
		m := Merge(shards)
		require.Equal(t, whole.States, m.States, "states")
		// a state met again at a later point is checked once per shard
		// that meets it
		require.GreaterOrEqual(t, m.DistinctStates, whole.DistinctStates)
		require.GreaterOrEqual(t, m.Checked, whole.Checked)
		require.GreaterOrEqual(t, m.Failed, whole.Failed)
		require.Len(t, m.Points, len(whole.Points))
		for k := range whole.Points {
			require.Equal(t, whole.Points[k].States, m.Points[k].States, "point %d", k)
			require.Equal(t, whole.Points[k].Failed, m.Points[k].Failed, "point %d", k)
		}
		require.Equal(t, vulnSummary(whole), vulnSummary(m))
	})
}

// TestVerdictsPerPointRapid: a state's verdict is its own crash point's. A
// content met at an earlier point is not checked again, but a promise that a
// change in flight supersedes is not checked at a later point: the states
// counted failing at each point are those whose own check fails there.
func TestVerdictsPerPointRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workload := randomWorkload(t)
		want := map[int]int{} // point index → failing (state, model) pairs
		rep := exploreWith(t, Options{Depth: rapid.IntRange(0, 2).Draw(t, "depth")}, workload, func(e *Explorer) func(*point, []*seenState, []outcome) {
			return func(x *point, todo []*seenState, out []outcome) {
				fails := map[*seenState]bool{}
				for i, st := range todo {
					fails[st] = len(out[i].findings) > 0
				}
				for _, sb := range x.subs {
					if fails[sb.st] {
						want[x.op.Index]++
					}
				}
			}
		})
		for _, p := range rep.Points {
			require.Equal(t, want[p.Point.Index], p.Failed, "point %s", p.Point)
		}
	})
}

package crash

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReportPoints checks the per-point figures of a report: one entry per
// crash point in trace order, adding up to the report's totals, each
// vulnerability counted at its crash point (which has failing states), and
// shard reports merging to the whole run's.
func TestReportPoints(t *testing.T) {
	checkers := []Checker{Durability{}, AtomicReplace{}, Fsck{}, configCheck}
	opts := Options{Depth: 1, Checkers: checkers}
	rep, err := ExploreFunc(opts, configSetup, unsafeUpdate)
	require.NoError(t, err)
	require.NotEmpty(t, rep.Vulnerabilities)
	require.Len(t, rep.Points, rep.CrashPoints)
	states, vulns := 0, 0
	for k, p := range rep.Points {
		if k > 0 {
			require.Greater(t, p.Point.Index, rep.Points[k-1].Point.Index, "trace order")
		}
		require.LessOrEqual(t, p.Failed, p.States)
		states += p.States
		vulns += p.Vulnerabilities
		if p.Vulnerabilities > 0 {
			require.Positive(t, p.Failed, "a vulnerability's first crash point has failing states")
		}
	}
	require.Equal(t, rep.States, states)
	require.Equal(t, len(rep.Vulnerabilities), vulns)
	for _, v := range rep.Vulnerabilities {
		k := rep.pointAt(v.pointIdx)
		require.GreaterOrEqual(t, k, 0)
		require.Equal(t, v.Point, rep.Points[k].Point.String())
	}

	var shards []*Report
	for i := range 2 {
		o := opts
		o.Shard, o.Shards = i, 2
		r, err := ExploreFunc(o, configSetup, unsafeUpdate)
		require.NoError(t, err)
		b, err := json.Marshal(r) // as iosim crash --merge reads them
		require.NoError(t, err)
		var back Report
		require.NoError(t, json.Unmarshal(b, &back))
		shards = append(shards, &back)
	}
	m := Merge(shards)
	require.Len(t, m.Points, len(rep.Points))
	for k := range rep.Points {
		require.Equal(t, rep.Points[k].States, m.Points[k].States, "point %d", k)
		require.Equal(t, rep.Points[k].Failed, m.Points[k].Failed, "point %d", k)
	}
}

// A shard can hold only a larger loss (a write lost and another torn) whose
// smaller one (the write lost alone) another shard found: merged, the larger
// folds into the smaller, as in one run, whatever the order of the shards.
func TestMergeShrinksAcrossShards(t *testing.T) {
	vuln := func(models []string, ops ...string) *Vulnerability {
		return &Vulnerability{Kind: "atomic-replace", Lines: []int{3}, Models: models, Message: "empty", Path: "/f", Ops: ops, States: 1}
	}
	a := &Report{Vulnerabilities: []*Vulnerability{vuln([]string{"xfs"}, "lost t:3: write /f", "torn t:5: write /f")}}
	b := &Report{Vulnerabilities: []*Vulnerability{vuln([]string{"posix"}, "lost t:3: write /f")}}
	c := &Report{Vulnerabilities: []*Vulnerability{vuln([]string{"btrfs"}, "torn t:3: write /f")}}
	for _, rs := range [][]*Report{{a, b, c}, {c, b, a}} {
		m := Merge(rs)
		require.Len(t, m.Vulnerabilities, 2)
		for _, v := range m.Vulnerabilities {
			require.Len(t, v.Ops, 1)
			require.Contains(t, v.Models, "xfs", "the larger loss's model goes to every smaller one")
		}
	}
}

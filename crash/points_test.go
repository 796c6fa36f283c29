package crash

import (
	"encoding/json"
	"strings"
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
	require.NotEmpty(t, rep.Findings)
	require.Len(t, rep.Points, rep.CrashPoints)
	states, vulns := 0, 0
	for k, p := range rep.Points {
		if k > 0 {
			require.Greater(t, p.Point.Index, rep.Points[k-1].Point.Index, "trace order")
		}
		require.LessOrEqual(t, p.Failed, p.States)
		states += p.States
		vulns += p.Findings
		if p.Findings > 0 {
			require.Positive(t, p.Failed, "a finding's first crash point has failing states")
		}
	}
	require.Equal(t, rep.States, states)
	require.Equal(t, len(rep.Findings), vulns)
	for _, c := range rep.Findings {
		k := rep.pointAt(c.pointIdx)
		require.GreaterOrEqual(t, k, 0)
		require.Equal(t, c.Points[0], rep.Points[k].Point.String())
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
// folds into the smaller's finding, as in one run, whatever the order of the
// shards; the same deviation found by two shards is one, its states added.
func TestMergeFoldsAcrossShards(t *testing.T) {
	found := func(static, model string, states int, ops ...string) *FoundCause {
		return &FoundCause{Key: strings.Join(ops, ","), Ops: ops, Static: static, Property: "ordering", Models: []string{model},
			Checks: []string{"atomic-replace"}, Points: []int{5}, States: states, Examples: []StateID{{5, states}}}
	}
	pts := []PointStats{{Point: Op{Index: 5, Line: 6, Call: "rename"}}}
	a := &Report{Found: []*FoundCause{found("S1", "xfs", 2, "lost 3", "torn 5")}, Points: pts}
	b := &Report{Found: []*FoundCause{found("S1", "posix", 3, "lost 3")}, Points: pts}
	c := &Report{Found: []*FoundCause{found("S2", "btrfs", 4, "torn 3"), found("S1", "alice", 5, "lost 3")}, Points: pts}
	for _, rs := range [][]*Report{{a, b, c}, {c, b, a}} {
		m := Merge(rs)
		require.Len(t, m.Findings, 2)
		byStatic := map[string]*Cause{}
		for _, f := range m.Findings {
			byStatic[f.key] = f
		}
		s1, s2 := byStatic["S1"], byStatic["S2"]
		require.NotNil(t, s1)
		require.NotNil(t, s2)
		require.Equal(t, 2+3+5, s1.States, "every deviation's states counted once")
		require.ElementsMatch(t, []string{"xfs", "posix", "alice"}, s1.Models, "the larger loss's model joins the smaller's finding")
		require.Equal(t, 4, s2.States)
		require.Equal(t, []string{"btrfs"}, s2.Models)
		require.Equal(t, []string{"5.2", "5.3", "5.5"}, s1.Examples)
	}
}

package faultrule_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/faultrule"
)

// firing returns which of n operations (all matching every rule) each rule fires on.
func firing(t *testing.T, text string, n int) [][]int {
	rs, err := faultrule.ParseList(text, nil)
	require.NoError(t, err)
	s := faultrule.NewSet(42, rs)
	out := make([][]int, len(rs))
	for k := 1; k <= n; k++ {
		if i := s.Decide(func(int, *faultrule.Rule) bool { return true }); i >= 0 {
			out[i] = append(out[i], k)
		}
	}
	return out
}

func TestTriggers(t *testing.T) {
	require.Equal(t, [][]int{{3}}, firing(t, "x#nth=3=EIO", 10))
	require.Equal(t, [][]int{{3, 6, 9}}, firing(t, "x#every=3=EIO", 10))
	require.Equal(t, [][]int{{8, 9, 10}}, firing(t, "x#after=7=EIO", 10))
	require.Equal(t, [][]int{{1, 2, 3}}, firing(t, "x=EIO", 3))
	// Triggers combine with AND.
	require.Equal(t, [][]int{{6}}, firing(t, "x#nth=6#every=2=EIO", 10))
	require.Equal(t, [][]int{nil}, firing(t, "x#nth=3#every=2=EIO", 10))
	require.Equal(t, [][]int{{4, 6, 8, 10}}, firing(t, "x#after=2#every=2=EIO", 10))
	// Every matching rule counts; the first that fires decides.
	require.Equal(t, [][]int{{2}, {4}}, firing(t, "x#nth=2=EIO;x#every=2=ENOSPC", 4))
	// p=: reproducible, about the rate asked, keyed by the rule's index.
	a := firing(t, "x#p=0.3=EIO", 1000)
	require.Equal(t, a, firing(t, "x#p=0.3=EIO", 1000))
	require.InDelta(t, 300, len(a[0]), 60)
	b := firing(t, "x#nth=1000000=EIO;x#p=0.3=EIO", 1000)
	require.NotEqual(t, a[0], b[1])
	require.Equal(t, [][]int{{2}}, firing(t, "x#after=1#p=1=EIO", 2))
}

func TestSetOnlyMatching(t *testing.T) {
	rs, err := faultrule.ParseList("read#nth=2=EIO;write#nth=1=ENOSPC", nil)
	require.NoError(t, err)
	s := faultrule.NewSet(1, rs)
	var got []int
	for _, op := range []string{"read", "write", "read", "read"} {
		got = append(got, s.Decide(func(_ int, r *faultrule.Rule) bool { return r.HasOp(op) }))
	}
	require.Equal(t, []int{-1, 1, 0, -1}, got)
	require.Equal(t, []int64{1, 1}, s.Fired())
}

package crash

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckShards(t *testing.T) {
	shard := func(s string) *Report {
		return &Report{Shard: s, Models: []string{"posix", "ext4-ordered"}, CrashPoints: 7}
	}
	other := func(s string, points int, models ...string) *Report {
		return &Report{Shard: s, Models: models, CrashPoints: points}
	}
	for _, c := range []struct {
		name    string
		reports []*Report
		err     string // "" when the set is whole
	}{
		{"whole", []*Report{shard("0/2"), shard("1/2")}, ""},
		{"any order", []*Report{shard("2/3"), shard("0/3"), shard("1/3")}, ""},
		{"none", nil, "no shard reports"},
		{"empty object", []*Report{{}}, "r0.json: not a shard report"},
		{"a whole run", []*Report{{Models: []string{"posix"}, CrashPoints: 3}, shard("1/2")}, "r0.json: not a shard report"},
		{"bad shard", []*Report{shard("2/2"), shard("1/2")}, `r0.json: shard "2/2": want I/N`},
		{"one of one", []*Report{shard("0/1")}, `r0.json: shard "0/1": want I/N`},
		{"missing", []*Report{shard("0/4"), shard("1/4"), shard("3/4")}, "shard 2/4 missing"},
		{"several missing", []*Report{shard("1/4")}, "shards 0/4, 2/4, 3/4 missing"},
		{"twice", []*Report{shard("0/2"), shard("1/2"), shard("1/2")}, "shard 1/2 given twice: r1.json and r2.json"},
		{"different N", []*Report{shard("0/2"), shard("1/3")}, "r0.json is shard 0/2, r1.json shard 1/3: shards of different splits"},
		{"different models", []*Report{shard("0/2"), other("1/2", 7, "posix")}, "r0.json and r1.json: shards of different runs (models posix,ext4-ordered, posix)"},
		{"different points", []*Report{shard("0/2"), other("1/2", 8, "posix", "ext4-ordered")}, "r0.json and r1.json: shards of different runs (7 crash points, 8)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var names []string
			for i := range c.reports {
				names = append(names, "r"+string(rune('0'+i))+".json")
			}
			err := CheckShards(names, c.reports)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.err)
		})
	}
}

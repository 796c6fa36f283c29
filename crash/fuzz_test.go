package crash

import (
	"strings"
	"testing"
)

// FuzzParseModels: any input parses to known models or fails with an error
// naming the bad name.
func FuzzParseModels(f *testing.F) {
	for _, s := range []string{"", "all", "posix", "posix,alice", "ext4-ordered, ext4-writeback", "zfs", ",", "posix,,alice"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseModels(s)
		if err != nil {
			if !strings.Contains(err.Error(), "unknown persistence model") {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if len(ms) == 0 {
			t.Fatalf("%q: no models and no error", s)
		}
		for _, m := range ms {
			if ModelByName(m.Name) != m {
				t.Fatalf("%q: model %q not in the table", s, m.Name)
			}
		}
	})
}

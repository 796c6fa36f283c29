package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/crash"
)

const crashData = "../testdata/crash/"

func exploreUpdate(t testing.TB, mode string, copts crash.Options) *crash.Report {
	rep, _, err := Explore([]string{crashData + "update." + mode + ".strace"},
		Options{Root: crashData + "update.snapshot:/tmp/rec/" + mode + "/app"}, copts)
	require.NoError(t, err)
	return rep
}

func BenchmarkExploreUpdate(b *testing.B) {
	for b.Loop() {
		exploreUpdate(b, "unsafe", crash.Options{})
	}
}

// hotJournal is SQLite's recovery rule as a checker: a rollback journal that
// survives with its header (magic d9 d5 05 f9 20 a1 63 d7) is hot, and opening
// the database rolls back its transaction; if the program had announced that
// transaction, an announced commit is lost.
func hotJournal(dir string) crash.Checker {
	magic := []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}
	journal := dir + "/test.db-journal"
	return crash.CheckFunc{ID: "sqlite", F: func(s *crash.State) []crash.Finding {
		j, ok := s.ReadFile(journal)
		if !ok || len(j) < len(magic) || string(j[:len(magic)]) != string(magic) {
			return nil
		}
		created := 0
		for _, op := range s.History() {
			if op.Call == "openat" && op.Path == journal {
				created++
			}
		}
		announced := strings.Count(string(s.Stdout), "committed")
		if announced >= created {
			return []crash.Finding{{Kind: "sqlite", Path: journal, Message: fmt.Sprintf("hot journal: announced commit %d is rolled back", created-1)}}
		}
		return nil
	}}
}

func exploreSQLite(t testing.TB, mode string) *crash.Report {
	dir := "/tmp/sq/" + mode + "/app"
	rep, _, err := Explore([]string{crashData + "sqlite." + mode + ".strace"},
		Options{Root: crashData + "sqlite." + mode + ".snapshot:" + dir},
		crash.Options{Checkers: []crash.Checker{crash.Durability{}, crash.Fsck{}, hotJournal(dir)}})
	require.NoError(t, err)
	return rep
}

// SQLite in rollback-journal mode, recorded (testdata/crash/README.md): with
// synchronous=FULL the journal's unlink, which commits, is never followed by
// a directory sync, so the last announced commit can be rolled back under
// every model; EXTRA syncs the directory and shows nothing; OFF syncs nothing.
func TestExploreSQLite(t *testing.T) {
	rep := exploreSQLite(t, "FULL")
	var b strings.Builder
	rep.WriteText(&b)
	// one cause, met at each of the three commits: the journal's unlink
	// lost, nothing after it persisted
	require.Len(t, rep.Findings, 1, b.String())
	c := rep.Findings[0]
	require.Equal(t, "durability", c.Property)
	require.Equal(t, []string{"sqlite"}, c.Checks)
	require.Equal(t, crash.ModelNames(), c.Models)
	require.Len(t, c.Calls, 1)
	require.Equal(t, "unlink", c.Calls[0].Call)
	require.Equal(t, "/tmp/sq/FULL/app/test.db-journal", c.Calls[0].Path)
	require.Equal(t, 3, c.Calls[0].Instances, "the three commits' unlinks")
	require.Equal(t, []string{"sqlite: /tmp/sq/FULL/app/test.db-journal: hot journal: announced commit 0 is rolled back", "sqlite: /tmp/sq/FULL/app/test.db-journal: hot journal: announced commit 1 is rolled back", "sqlite: /tmp/sq/FULL/app/test.db-journal: hot journal: announced commit 2 is rolled back"}, c.Messages)
	require.LessOrEqual(t, c.States, rep.States)

	rep = exploreSQLite(t, "EXTRA")
	require.Empty(t, rep.Findings)
	require.Greater(t, rep.DistinctStates, 50)

	rep = exploreSQLite(t, "OFF")
	require.NotEmpty(t, rep.Findings)
}

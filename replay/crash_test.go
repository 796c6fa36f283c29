package replay

import (
	"fmt"
	"os/exec"
	"path/filepath"
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

// defaultModels are the names of crash.DefaultModels.
var defaultModels = func() []string {
	var out []string
	for _, m := range crash.DefaultModels() {
		out = append(out, m.Name)
	}
	return out
}()

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
	require.Equal(t, defaultModels, c.Models)
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

// exploreWAL explores SQLite in WAL mode with synchronous=mode, recorded
// (testdata/crash/README.md), checked by sqlite_checker.sh (integrity_check,
// and every announced row present).
func exploreWAL(t testing.TB, mode string, models ...*crash.Model) *crash.Report {
	dir := "/tmp/sqw/" + mode + "/app"
	checker, err := filepath.Abs(crashData + "sqlite_checker.sh")
	require.NoError(t, err)
	rep, _, err := Explore([]string{crashData + "sqlite.WAL-" + mode + ".strace"},
		Options{Root: crashData + "sqlite.WAL-" + mode + ".snapshot:" + dir},
		crash.Options{Jobs: 2, Models: models, AssumeUnknown: true, Checkers: []crash.Checker{crash.External{Command: "sh " + checker, Dir: dir}}})
	require.NoError(t, err)
	return rep
}

// SQLite's documented WAL guarantees (sqlite.org/pragma.html#pragma_synchronous):
// with synchronous=FULL a committed transaction survives a power loss; with
// NORMAL "a transaction committed in WAL mode ... might roll back following a
// power loss" but "the database will not go corrupt". Under every real file
// system's model: FULL shows nothing; NORMAL loses announced commits and
// never fails integrity_check. SQLite writes its wal-index (test.db-shm)
// through a shared mapping, whose stores no trace shows: the exploration
// refuses by default, and is run assuming the model's bytes there, since the
// first connection after a crash rebuilds the wal-index from the WAL
// (sqlite.org/walformat.html, "Recovery").
func TestExploreSQLiteWAL(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("needs the sqlite3 shell")
	}
	_, _, err := Explore([]string{crashData + "sqlite.WAL-FULL.strace"},
		Options{Root: crashData + "sqlite.WAL-FULL.snapshot:/tmp/sqw/FULL/app"}, crash.Options{})
	require.ErrorIs(t, err, ErrUnknownBytes)
	require.Contains(t, err.Error(), "a shared writable mapping")

	rep := exploreWAL(t, "FULL")
	require.Contains(t, rep.Assumed, "a shared writable mapping")
	require.Empty(t, rep.Findings)
	require.Greater(t, rep.DistinctStates, 100)

	rep = exploreWAL(t, "NORMAL")
	require.NotEmpty(t, rep.Findings)
	lost := map[string]bool{}
	for _, f := range rep.Findings {
		require.Equal(t, []string{"checker"}, f.Checks)
		for _, m := range f.Messages {
			require.Contains(t, m, "commits announced, rows 0..", "only durability: never corrupt")
		}
		for _, m := range f.Models {
			lost[m] = true
		}
	}
	for _, m := range defaultModels {
		require.True(t, lost[m], "%s: NORMAL loses an announced commit", m)
	}
}

// exploreLMDB explores py-lmdb's three write transactions, recorded with
// its default syncs and with MDB_NOSYNC (testdata/crash/README.md), checked
// by lmdb_checker.py (the environment opens, every key reads back whole,
// every announced one is there).
func exploreLMDB(t testing.TB, mode string, models ...*crash.Model) *crash.Report {
	dir := "/tmp/lm/" + mode + "/app"
	checker, err := filepath.Abs(crashData + "lmdb_checker.py")
	require.NoError(t, err)
	rep, _, err := Explore([]string{crashData + "lmdb." + mode + ".strace"},
		Options{Root: crashData + "lmdb." + mode + ".snapshot:" + dir},
		crash.Options{Jobs: 2, Models: models, Checkers: []crash.Checker{crash.External{Command: "/usr/bin/python3 -I " + checker, Dir: dir}}})
	require.NoError(t, err)
	return rep
}

// LMDB's documented guarantees (lmdb.h, MDB_NOSYNC): with its syncs a
// committed transaction is durable; without, "a system crash can corrupt
// the database or lose the last transactions ... However, if the filesystem
// preserves write order and the MDB_WRITEMAP flag is not used, transactions
// exhibit ACI (atomicity, consistency, isolation) properties and only lose
// D (durability)". So: no vulnerability with syncs; with MDB_NOSYNC, under
// ext4-journal (every write in call order) only lost commits, and under a
// model that reorders writes, corruption.
func TestExploreLMDB(t *testing.T) {
	if exec.Command("/usr/bin/python3", "-I", "-c", "import lmdb").Run() != nil {
		t.Skip("needs /usr/bin/python3 with the lmdb module (Debian's python3-lmdb)")
	}
	rep := exploreLMDB(t, "sync")
	require.Empty(t, rep.Findings)
	require.Greater(t, rep.DistinctStates, 20)

	// what each model's failing states say, one model a run (a finding
	// keeps its first few distinct messages)
	says := func(model string) (lost, corrupt bool) {
		rep := exploreLMDB(t, "nosync", crash.ModelByName(model))
		for _, f := range rep.Findings {
			for _, m := range f.Messages {
				if strings.Contains(m, "commits announced") {
					lost = true
				} else {
					corrupt = true
				}
			}
		}
		return lost, corrupt
	}
	lost, corrupt := says("ext4-journal")
	require.True(t, lost, "MDB_NOSYNC loses commits")
	require.False(t, corrupt, "a file system that keeps write order keeps LMDB consistent")
	_, corrupt = says("ext4-ordered")
	require.True(t, corrupt, "data written out of order can corrupt it")
}

// TestExploreTmpfs: a file on a tmpfs mount (--mount tmpfs:/dev/shm), even
// synced, is gone in every crash state, and its loss is no finding: tmpfs
// keeps nothing across a power loss. A checker that looks there sees it
// empty. On the disk beside it, the synced file and its name survive.
func TestExploreTmpfs(t *testing.T) {
	trace := writeTrace(t, joinLines([]string{
		`mkdir("/w", 0755) = 0`,
		`openat(AT_FDCWD, "/dev/shm/lock", O_RDWR|O_CREAT|O_EXCL, 0600) = 3`,
		`write(3, "pid 42\n", 7) = 7`,
		`fsync(3) = 0`,
		`openat(AT_FDCWD, "/dev/shm", O_RDONLY|O_DIRECTORY) = 4`,
		`fsync(4) = 0`,
		`openat(AT_FDCWD, "/w/data", O_WRONLY|O_CREAT|O_EXCL, 0644) = 5`,
		`write(5, "hello\n", 6) = 6`,
		`fsync(5) = 0`,
		`openat(AT_FDCWD, "/w", O_RDONLY|O_DIRECTORY) = 6`,
		`fsync(6) = 0`,
		`close(3) = 0`,
		`close(4) = 0`,
		`close(5) = 0`,
		`close(6) = 0`,
	}))
	var states, kept, lock int
	look := crash.CheckFunc{ID: "look", F: func(s *crash.State) []crash.Finding {
		states++
		if _, ok := s.ReadFile("/dev/shm/lock"); ok {
			lock++
		}
		if b, ok := s.ReadFile("/w/data"); ok && string(b) == "hello\n" {
			kept++
		}
		return nil
	}}
	explore := func(mounts []string) *crash.Report {
		states, kept, lock = 0, 0, 0
		rep, _, err := Explore([]string{trace}, Options{Mounts: mounts, Cwd: "/"},
			crash.Options{Checkers: []crash.Checker{crash.Durability{}, crash.AtomicReplace{}, look}})
		require.NoError(t, err)
		return rep
	}
	rep := explore([]string{"tmpfs:/dev/shm"})
	require.Empty(t, rep.Findings, "a tmpfs file lost is no finding")
	require.Positive(t, states)
	require.Zero(t, lock, "the tmpfs file survives no crash")
	require.Positive(t, kept, "the synced file on disk survives")

	// On the disk's own file system the same calls keep the lock file.
	rep = explore(nil)
	require.Empty(t, rep.Findings)
	require.Positive(t, lock)
}

// TestExploreInferredTmpfs: /dev/shm taken as a tmpfs mount from the EXDEV
// of a rename into it (xdev.c) is empty in every crash state: the file the
// program then makes there is in none.
func TestExploreInferredTmpfs(t *testing.T) {
	var states, shm int
	look := crash.CheckFunc{ID: "look", F: func(s *crash.State) []crash.Finding {
		states++
		if _, ok := s.ReadFile("/dev/shm/iosim-xdev-s"); ok {
			shm++
		}
		return nil
	}}
	rep, rrep, err := Explore([]string{recordings + "xdev.strace"}, Options{}, crash.Options{Checkers: []crash.Checker{crash.Durability{}, look}})
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
	require.Contains(t, strings.Join(rrep.Notes, "\n"), "/dev/shm taken as a mount point (tmpfs")
	require.Positive(t, states)
	require.Zero(t, shm)
}

package mount

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func command(t *testing.T, s *Server, line string) string {
	t.Helper()
	out, err := s.Command(line)
	require.NoError(t, err, line)
	return out
}

// clear-cache loses what a program never synced, names included, and keeps
// what it did.
func TestClearCacheLosesUnsynced(t *testing.T) {
	s, dir := mounted(t)
	sh(t, dir, `mkdir kept; echo synced > kept/a; sync kept/a kept .; echo lost > kept/b; echo more >> kept/a`)
	rep := command(t, s, "lazyfs::unsynced-data-report")
	require.Contains(t, rep, "/kept/b")
	require.Contains(t, rep, "/kept/a")
	require.Equal(t, "ok\n", command(t, s, "lazyfs::clear-cache"))
	b, err := os.ReadFile(filepath.Join(dir, "kept/a"))
	require.NoError(t, err)
	require.Equal(t, "synced\n", string(b))
	_, err = os.Stat(filepath.Join(dir, "kept/b"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.NotContains(t, command(t, s, "report"), "/kept/b")
}

func TestCheckpointMakesDurable(t *testing.T) {
	s, dir := mounted(t)
	sh(t, dir, `echo x > a`)
	command(t, s, "lazyfs::cache-checkpoint")
	require.Equal(t, "everything is durable\n", command(t, s, "report"))
	command(t, s, "clear-cache")
	b, err := os.ReadFile(filepath.Join(dir, "a"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(b))
}

// A crash answers EIO until restart, which serves the durable state.
func TestCrashAndRestart(t *testing.T) {
	s, dir := mounted(t)
	name := filepath.Join(dir, "a")
	f, err := os.Create(name)
	require.NoError(t, err)
	_, err = f.WriteString("synced")
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	d, err := os.Open(dir)
	require.NoError(t, err)
	require.NoError(t, d.Sync())
	d.Close()
	_, err = f.WriteString(" lost")
	require.NoError(t, err)
	command(t, s, "crash")
	_, err = f.WriteString(" after")
	require.ErrorIs(t, err, unix.EIO)
	_, err = os.ReadFile(name)
	require.ErrorIs(t, err, unix.EIO)
	_, err = s.Command("crash")
	require.Error(t, err)
	command(t, s, "restart")
	_, err = f.WriteString(" stale")
	require.ErrorIs(t, err, unix.EIO, "a file opened before the crash")
	f.Close()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, "synced", string(b))
}

func TestCommandErrors(t *testing.T) {
	s, _ := mounted(t)
	for _, line := range []string{"", "frobnicate", "crash --seed x", "report now", "restart"} {
		_, err := s.Command(line)
		require.Error(t, err, line)
	}
}

// SQLite in WAL mode: a power cut after commits, a restart, and the database
// is whole; with synchronous=FULL every committed row is there.
func TestSQLiteCrashRestart(t *testing.T) {
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skipf("needs sqlite3: %v", err)
	}
	s, dir := mounted(t)
	sh(t, dir, `sqlite3 full.db 'PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; CREATE TABLE t(x); INSERT INTO t VALUES(1); INSERT INTO t VALUES(2);' >/dev/null`)
	sh(t, dir, `sqlite3 normal.db 'PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE t(x); INSERT INTO t VALUES(1); INSERT INTO t VALUES(2);' >/dev/null`)
	command(t, s, "crash")
	command(t, s, "restart")
	require.Equal(t, "ok\n2\n", sh(t, dir, `sqlite3 full.db 'PRAGMA integrity_check; SELECT count(*) FROM t;'`))
	out := sh(t, dir, `sqlite3 normal.db 'PRAGMA integrity_check;'`)
	require.Equal(t, "ok", strings.TrimSpace(out))
}

// LazyFS's FIFO strings, written to --fifo's pipe, run as commands.
func TestFIFOTakesLazyFSCommands(t *testing.T) {
	s, dir := mounted(t)
	fifo := filepath.Join(t.TempDir(), "faults.fifo")
	logged := make(chan string, 4)
	require.NoError(t, ServeFIFO(s, fifo, func(format string, args ...any) { logged <- format }))
	sh(t, dir, `echo lost > a`)
	f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("lazyfs::clear-cache\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	<-logged
	_, err = os.Stat(filepath.Join(dir, "a"))
	require.ErrorIs(t, err, os.ErrNotExist)
	require.Error(t, ServeFIFO(s, dir, nil), "a directory is no pipe")
}

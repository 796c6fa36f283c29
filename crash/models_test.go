package crash

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// breaksUnder explores workload under each model with a property check and
// returns the models under which it fails.
func breaksUnder(t *testing.T, setup Setup, workload func(*Env) error, holds func(*State) bool) []string {
	t.Helper()
	var out []string
	for _, m := range Models() {
		check := CheckFunc{ID: "property", F: func(s *State) []Finding {
			if holds(s) {
				return nil
			}
			return []Finding{{Kind: "property", Message: "broken"}}
		}}
		rep, err := ExploreFunc(Options{Models: []*Model{m}, Depth: 2, Checkers: []Checker{check}}, setup, workload)
		require.NoError(t, err)
		if len(rep.Findings) > 0 {
			out = append(out, m.Name)
		}
	}
	return out
}

// ext4's fsync commits the whole running transaction: a file created before
// the fsync of another file survives with it (fs/ext4/fsync.c), and so does
// xfs's log force; posix and ALICE promise nothing of the sort, nor does
// btrfs's fsync, which writes the file's own log tree.
func TestFsyncCommitsOtherFilesEntries(t *testing.T) {
	setup := func(fs *vfs.FS) error { return fs.Mkdir("/d", 0o755) }
	workload := func(env *Env) error {
		if err := create(env, "/d/a"); err != nil {
			return err
		}
		fd, err := openW(env, "/d/b", unix.O_CREAT)
		if err != nil {
			return err
		}
		if _, err := env.Proc.Write(fd, []byte("b")); err != nil {
			return err
		}
		if err := env.Proc.Fsync(fd); err != nil {
			return err
		}
		_, err = env.Proc.Write(1, []byte("synced\n"))
		return err
	}
	holds := func(s *State) bool {
		_, a := s.ReadFile("/d/a")
		return a || !bytes.Contains(s.Stdout, []byte("synced"))
	}
	require.Equal(t, []string{"posix", "alice", "btrfs"}, breaksUnder(t, setup, workload, holds))
}

// auto_da_alloc's truncate case: a file truncated to zero, rewritten and
// closed has its data committed with the next transaction, so an operation
// after the close that survives implies the data; before the close the file
// can be empty (the zero-length-file reports that led to auto_da_alloc).
// xfs's and btrfs's flush on close after a truncate only starts writeback:
// nothing orders the data before later commits.
func TestTruncateRewriteClose(t *testing.T) {
	setup := func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 5000)) }
	require.Equal(t, []string{"posix", "ext4-writeback", "alice", "xfs", "btrfs"}, breaksUnder(t, setup, rewriteThenCreate("/f", unix.O_TRUNC), newDataOnceLater))
}

// rewriteThenCreate writes 6000 bytes of 'b' to path (opened with flags),
// closes it, renames it over /f unless it is /f, and creates /g.
func rewriteThenCreate(path string, flags int) func(*Env) error {
	return func(env *Env) error {
		fd, err := openW(env, path, flags)
		if err != nil {
			return err
		}
		if _, err := env.Proc.Write(fd, fill('b', 6000)); err != nil {
			return err
		}
		if err := env.Proc.Close(fd); err != nil {
			return err
		}
		if path != "/f" {
			if err := env.Proc.Rename(path, "/f"); err != nil {
				return err
			}
		}
		return create(env, "/g")
	}
}

// newDataOnceLater: /f holds the new content once /g survived.
func newDataOnceLater(s *State) bool {
	got, _ := s.ReadFile("/f")
	_, g := s.ReadFile("/g")
	return !g || bytes.Equal(got, fill('b', 6000))
}

// A one-block overwrite tears at sectors unless the file system journals the
// data (ext4 data=journal) or writes it elsewhere (btrfs's copy on write).
func TestBlockOverwriteTears(t *testing.T) {
	setup := func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 4096)) }
	workload := func(env *Env) error {
		fd, err := openW(env, "/f", 0)
		if err != nil {
			return err
		}
		_, err = env.Proc.Pwrite(fd, fill('b', 4096), 0)
		return err
	}
	holds := func(s *State) bool {
		got, _ := s.ReadFile("/f")
		return bytes.Equal(got, fill('a', 4096)) || bytes.Equal(got, fill('b', 4096))
	}
	require.Equal(t, []string{"posix", "ext4-ordered", "ext4-writeback", "alice", "xfs"}, breaksUnder(t, setup, workload, holds))
}

// Replacing a file by rename without fsync: only ext4's auto_da_alloc (with
// data ordered or journalled) keeps the renamed file from showing up empty
// once a later operation survived; xfs does not flush on rename and btrfs's
// flush on rename only starts writeback.
func TestRenameOverWithoutFsync(t *testing.T) {
	setup := func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 4096)) }
	require.Equal(t, []string{"posix", "ext4-writeback", "alice", "xfs", "btrfs"}, breaksUnder(t, setup, rewriteThenCreate("/f.tmp", unix.O_CREAT|unix.O_TRUNC), newDataOnceLater))
}

// Durability: a name is promised only by syncing its directory; a file's
// data by fsync, found by inode wherever it is named.
func TestDurabilityOfNames(t *testing.T) {
	setup := func(fs *vfs.FS) error { return fs.Mkdir("/d", 0o755) }
	dirSynced := func(env *Env) error {
		if err := create(env, "/d/a"); err != nil {
			return err
		}
		dir, err := env.Proc.Open("/d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return err
		}
		return env.Proc.Fsync(dir)
	}
	rep, err := ExploreFunc(Options{}, setup, dirSynced)
	require.NoError(t, err)
	require.Empty(t, rep.Findings)

	// The same name removed by a later unsynced unlink is no longer promised.
	rep, err = ExploreFunc(Options{}, setup, func(env *Env) error {
		if err := dirSynced(env); err != nil {
			return err
		}
		return env.Proc.Unlink("/d/a")
	})
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
}

// An O_DSYNC write promises the bytes it wrote, not the rest of the file:
// losing an earlier buffered write elsewhere in the file is no durability
// failure, losing the O_DSYNC bytes (a writeback fault) is.
func TestDurabilityOfDsyncWrites(t *testing.T) {
	workload := func(env *Env) error {
		fd, err := openW(env, "/f", 0)
		if err != nil {
			return err
		}
		if _, err := env.Proc.Pwrite(fd, fill('b', 4096), 0); err != nil {
			return err
		}
		sfd, err := openW(env, "/f", unix.O_DSYNC)
		if err != nil {
			return err
		}
		_, err = env.Proc.Pwrite(sfd, fill('c', 4096), 8192)
		return err
	}
	setup := func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 16384)) }
	rep, err := ExploreFunc(Options{}, setup, workload)
	require.NoError(t, err)
	require.Empty(t, rep.Findings)

	rules, err := vfs.ParseRules(1, "writeback@/f#nth=1=EIO")
	require.NoError(t, err)
	rep, err = ExploreFunc(Options{}, setup, func(env *Env) error {
		env.FS.SetInjector(rules)
		fd, err := openW(env, "/f", unix.O_DSYNC)
		if err != nil {
			return err
		}
		_, err = env.Proc.Pwrite(fd, fill('c', 4096), 8192)
		require.Equal(t, unix.EIO, err)
		// the retried write succeeds: its bytes are promised again
		_, err = env.Proc.Pwrite(fd, fill('c', 4096), 8192)
		return err
	})
	require.NoError(t, err)
	require.Empty(t, rep.Findings, "the retried O_DSYNC write made its bytes durable")
}

// The models explored by default are the real file systems' and posix;
// alice, a hypothetical model, only when named, and labelled so in reports.
func TestDefaultModels(t *testing.T) {
	def, err := ParseModels("")
	require.NoError(t, err)
	require.Equal(t, DefaultModels(), def)
	require.Equal(t, []string{"posix", "ext4-ordered", "ext4-writeback", "ext4-journal", "xfs", "btrfs"}, modelNames(def))
	all, err := ParseModels("all")
	require.NoError(t, err)
	require.Equal(t, Models(), all)
	require.Contains(t, modelNames(all), "alice")
	for _, m := range Models() {
		require.Equal(t, m.Name == "alice", m.Hypothetical, m.Name)
		require.NotEmpty(t, m.Version, m.Name)
		require.Contains(t, m.Describe(), "\n  describes: "+m.Version+"\n")
		for _, r := range m.Rules {
			require.NotEmpty(t, r.Source, "%s: %s", m.Name, r.Text)
		}
	}
	require.Equal(t, "posix, alice (hypothetical)", ModelLabels([]string{"posix", "alice"}))
	rep, err := ExploreFunc(Options{Models: []*Model{ModelByName("alice")}}, nil, func(env *Env) error { return create(env, "/f") })
	require.NoError(t, err)
	require.Equal(t, []string{"alice"}, rep.Hypothetical)
	var buf bytes.Buffer
	rep.WriteText(&buf)
	require.Contains(t, buf.String(), "models: alice (hypothetical)\n")
}

// btrfs's fsync of a file created in the running transaction logs its name
// and its new ancestor directories (fs/btrfs/tree-log.c, Linux 5.12 on):
// the file survives without a directory fsync, as under ext4's and xfs's
// journal commit; posix and ALICE promise nothing of the sort.
func TestFsyncLogsNewName(t *testing.T) {
	workload := func(env *Env) error {
		if err := env.Proc.Mkdir("/d", 0o755); err != nil {
			return err
		}
		fd, err := openW(env, "/d/new", unix.O_CREAT)
		if err != nil {
			return err
		}
		if _, err := env.Proc.Write(fd, []byte("x")); err != nil {
			return err
		}
		if err := env.Proc.Fsync(fd); err != nil {
			return err
		}
		_, err = env.Proc.Write(1, []byte("synced\n"))
		return err
	}
	holds := func(s *State) bool {
		f, ok := s.ReadFile("/d/new")
		return !bytes.Contains(s.Stdout, []byte("synced")) || ok && string(f) == "x"
	}
	require.Equal(t, []string{"posix", "alice"}, breaksUnder(t, nil, workload, holds))
}

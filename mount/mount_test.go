package mount

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// mounted serves a fresh model at a temporary directory, unmounted at the
// end of the test whatever happens.
func mounted(t *testing.T) (*Server, string) {
	t.Helper()
	return mountedThrough(t, func(k *sim.Kernel) sim.Handler { return k })
}

// mountedThrough is mounted with the calls sent to the handler wrap returns.
func mountedThrough(t *testing.T, wrap func(k *sim.Kernel) sim.Handler) (*Server, string) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("needs FUSE: /dev/fuse: %v", err)
	}
	s, err := NewServer(vfs.New(), vfs.Strict, func(fs *vfs.FS) (*sim.Kernel, sim.Handler, error) {
		k := sim.New(fs, sim.WithLockWait(false))
		return k, wrap(k), nil
	})
	require.NoError(t, err)
	dir := t.TempDir()
	srv, err := Mount(s, dir, Options{Debug: os.Getenv("IOSIM_FUSE_DEBUG") != ""})
	require.NoError(t, err)
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	})
	return s, dir
}

// sh runs script with sh in dir and returns its output.
func sh(t *testing.T, dir, script string) string {
	t.Helper()
	// The child changes directory itself, after exec: a chdir into the mount
	// between fork and exec would stop the forking thread (vfork) while the
	// server, in this process, may be waiting for the world to stop.
	cmd := exec.Command("sh", "-ec", `cd "$1"; `+script, "sh", dir)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_DATE=2020-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2020-01-01T00:00:00Z",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t", "HOME="+dir)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", script, out)
	return string(out)
}

// tree lists every file under dir with its type, size and contents' bytes.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	require.NoError(t, filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(dir, p)
		line := rel + " " + fi.Mode().Type().String()
		if fi.Mode().IsRegular() {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			line += " " + string(b)
		}
		out = append(out, line)
		return nil
	}))
	sort.Strings(out)
	return out
}

func TestMountServesTheModel(t *testing.T) {
	s, dir := mounted(t)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a"), []byte("hello"), 0o644))
	// The file is in the model, seen by a process of the model's own.
	p := s.Kernel().Spawn()
	var st unix.Stat_t
	require.NoError(t, p.Stat("/a", &st))
	require.EqualValues(t, 5, st.Size)
	fd, err := p.Open("/b", unix.O_CREAT|unix.O_WRONLY, 0o600)
	require.NoError(t, err)
	_, err = p.Write(fd, []byte("from the model"))
	require.NoError(t, err)
	require.NoError(t, p.Close(fd))
	b, err := os.ReadFile(filepath.Join(dir, "b"))
	require.NoError(t, err)
	require.Equal(t, "from the model", string(b))
	_, err = os.Stat(filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// The same shell commands on a host directory and on the mount give the
// same output and the same files.
func TestMountRunsProgramsAsAHostDirectory(t *testing.T) {
	_, dir := mounted(t)
	host := t.TempDir()
	scripts := []string{
		`mkdir -p d/e; echo one > d/f; echo two >> d/f; mv d/f d/e/g; ln -s e/g d/l; ln d/e/g d/h; cat d/l; ls d d/e; rm d/h; wc -c d/e/g`,
		`printf 'x%.0s' $(seq 1 70000) > big; dd if=big of=copy bs=4096 2>/dev/null; cmp big copy; truncate -s 10 copy; wc -c copy; rm big`,
		`mkdir t; cd t; echo a > a; mkdir s; echo b > s/b; tar cf ../x.tar a s; cd ..; mkdir u; cd u; tar xf ../x.tar; cat a s/b; cd ..; rm -r t x.tar`,
	}
	for _, sc := range scripts {
		require.Equal(t, sh(t, host, sc), sh(t, dir, sc), sc)
	}
	require.Equal(t, strings.Join(tree(t, host), "\n"), strings.Join(tree(t, dir), "\n"))
}

func TestMountSQLiteAndGit(t *testing.T) {
	for _, prog := range []string{"sqlite3", "git"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("needs %s: %v", prog, err)
		}
	}
	_, dir := mounted(t)
	host := t.TempDir()
	scripts := []string{
		`sqlite3 db.sqlite 'PRAGMA journal_mode=DELETE; CREATE TABLE t(x); INSERT INTO t VALUES(1),(2); BEGIN; INSERT INTO t VALUES(3); COMMIT; SELECT sum(x) FROM t; PRAGMA integrity_check;'`,
		`sqlite3 wal.sqlite 'PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE t(x); INSERT INTO t VALUES(1),(2); SELECT count(*) FROM t; PRAGMA wal_checkpoint(TRUNCATE); PRAGMA integrity_check;'`,
		`git init -q r; cd r; echo hi > f; git add f; git commit -qm one; echo more >> f; git commit -qam two; git log --format=%s; git cat-file -p HEAD:f; git fsck --no-progress`,
	}
	for _, sc := range scripts {
		require.Equal(t, sh(t, host, sc), sh(t, dir, sc), sc)
	}
}

// The flags and syncs a program uses reach the model as the calls of the same
// names.
func TestMountCarriesFlagsAndSyncs(t *testing.T) {
	seen := map[sim.Sysno]int{}
	var flags []int
	s, dir := mountedThrough(t, func(k *sim.Kernel) sim.Handler {
		return sim.HandlerFunc(func(c *sim.Call) sim.Result {
			seen[c.Nr]++
			if c.Nr == sim.SYS_OPENAT && c.Path == "/f" {
				flags = append(flags, int(c.Args[2]))
			}
			return k.Syscall(c)
		})
	})
	name := filepath.Join(dir, "f")
	fd, err := unix.Open(name, unix.O_CREAT|unix.O_RDWR|unix.O_DIRECT|unix.O_SYNC, 0o644)
	require.NoError(t, err)
	buf := make([]byte, 8192)
	for i := range buf {
		buf[i] = byte(i)
	}
	// O_DIRECT wants an aligned buffer.
	al, err := unix.Mmap(-1, 0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	defer unix.Munmap(al)
	copy(al, buf)
	n, err := unix.Pwrite(fd, al[:4096], 4096)
	require.NoError(t, err)
	require.Equal(t, 4096, n)
	require.NoError(t, unix.Fallocate(fd, 0, 0, 1<<20))
	require.NoError(t, unix.Fdatasync(fd))
	require.NoError(t, unix.Fsync(fd))
	require.NoError(t, unix.Close(fd))
	require.NoError(t, unix.Renameat2(unix.AT_FDCWD, name, unix.AT_FDCWD, filepath.Join(dir, "g"), unix.RENAME_NOREPLACE))
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	require.NoError(t, unix.Fsync(d))
	require.NoError(t, unix.Close(d))

	require.NotEmpty(t, flags)
	require.NotZero(t, flags[0]&unix.O_DIRECT, "O_DIRECT in %#o", flags)
	require.Equal(t, unix.O_SYNC, flags[0]&unix.O_SYNC, "O_SYNC")
	require.Equal(t, 1, seen[sim.SYS_FDATASYNC])
	require.GreaterOrEqual(t, seen[sim.SYS_FSYNC], 2) // the file's and the directory's
	require.Equal(t, 1, seen[sim.SYS_FALLOCATE])
	require.Equal(t, 1, seen[sim.SYS_RENAMEAT2])
	var st unix.Stat_t
	require.NoError(t, s.Kernel().Spawn().Stat("/g", &st))
	require.EqualValues(t, 1<<20, st.Size)
	b, err := os.ReadFile(filepath.Join(dir, "g"))
	require.NoError(t, err)
	require.Equal(t, buf[:4096], b[4096:8192])
}

// A panic below a handler answers EIO, is counted and logged, and leaves the
// mount serving.
func TestMountPanicIsEIO(t *testing.T) {
	var logged []string
	s, dir := mountedThrough(t, func(k *sim.Kernel) sim.Handler {
		return sim.HandlerFunc(func(c *sim.Call) sim.Result {
			if c.Nr == sim.SYS_UNLINKAT {
				panic("boom")
			}
			return k.Syscall(c)
		})
	})
	s.Log = func(format string, args ...any) { logged = append(logged, format) }
	name := filepath.Join(dir, "a")
	require.NoError(t, os.WriteFile(name, []byte("x"), 0o644))
	require.ErrorIs(t, os.Remove(name), unix.EIO)
	require.EqualValues(t, 1, s.Panics.Load())
	require.Len(t, logged, 1)
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, "x", string(b))
}

func TestLoadDirCopiesTheHost(t *testing.T) {
	host := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(host, "d/e"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(host, "d/f"), []byte("data"), 0o640))
	require.NoError(t, os.Symlink("f", filepath.Join(host, "d/l")))
	s, dir := mounted(t)
	s.mu.Lock()
	err := LoadDir(s.procOf(0), host)
	s.mu.Unlock()
	require.NoError(t, err)
	require.Empty(t, s.Kernel().FS().Pending(), "the copy is durable")
	require.Equal(t, tree(t, host), tree(t, dir))
	fi, err := os.Stat(filepath.Join(dir, "d/f"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o640), fi.Mode().Perm())
}

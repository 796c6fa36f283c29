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
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("needs FUSE: /dev/fuse: %v", err)
	}
	k := sim.New(vfs.New(), sim.WithLockWait(false))
	s := NewServer(k, k)
	dir := t.TempDir()
	srv, err := Mount(s, dir, Options{})
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
	cmd := exec.Command("sh", "-ec", script)
	cmd.Dir = dir
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

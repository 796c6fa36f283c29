package crash

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// treeCompare is a parallel checker that reads each state's directory as
// External does (State.tree, from the walker) and as the state's file
// system has it (dirTree of State.FS), and records whether they differ.
type treeCompare struct {
	dir string

	mu          sync.Mutex
	states      int
	fromWalker  int // states read from the walker (not a fallback to FS)
	differences []string
}

func (*treeCompare) Name() string { return "tree" }
func (*treeCompare) Parallel()    {}

func (c *treeCompare) Check(s *State) []Finding {
	got, errGot := s.tree(c.dir, nil)
	walked := s.fs == nil
	want, errWant := dirTree(s.FS(), c.dir, nil)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.states++
	if walked {
		c.fromWalker++
	}
	switch {
	case errGot != nil || errWant != nil:
		c.differences = append(c.differences, s.ID+": "+errString(errGot)+" / "+errString(errWant))
	case got.key(s.Stdout) != want.key(s.Stdout):
		c.differences = append(c.differences, s.ID+" ("+s.Name+")")
	}
	return nil
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// A state's directory read from the walker's crash state is what the
// state's file system holds, name for name and byte for byte: across
// subdirectories, symbolic links, hard links, renames split by ALICE's
// model, and states where the directory itself is gone.
func TestTreeFromWalker(t *testing.T) {
	for _, c := range []struct {
		name string
		dir  string
	}{{"whole directory", "/app"}, {"subdirectory", "/app/sub"}, {"root", "/"}} {
		t.Run(c.name, func(t *testing.T) {
			tc := &treeCompare{dir: c.dir}
			ms, err := ParseModels("all")
			require.NoError(t, err)
			setup := func(fs *vfs.FS) error {
				if err := fs.Mkdir("/app", 0o755); err != nil {
					return err
				}
				return writeFile(fs, "/app/config", []byte("old config"))
			}
			_, err = ExploreFunc(Options{Models: ms, Checkers: []Checker{tc}, Jobs: 2}, setup, func(env *Env) error {
				p := env.Proc
				must := func(err error) {
					if err != nil {
						panic(err)
					}
				}
				must(p.Mkdir("/app/sub", 0o755))
				fd, err := p.Open("/app/config.tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o640)
				must(err)
				_, err = p.Write(fd, []byte("the new config, longer than the old one"))
				must(err)
				must(p.Fsync(fd))
				must(p.Close(fd))
				must(p.Rename("/app/config.tmp", "/app/config"))
				fd, err = p.Open("/app/sub/readonly", unix.O_WRONLY|unix.O_CREAT, 0o400)
				must(err)
				_, err = p.Write(fd, []byte("a checker may still write it"))
				must(err)
				must(p.Close(fd))
				must(p.Symlink("../config", "/app/sub/link"))
				must(p.Link("/app/config", "/app/sub/hard"))
				fd, err = p.Open("/app/sub/log", unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, 0o600)
				must(err)
				for range 3 {
					_, err = p.Write(fd, make([]byte, 5000))
					must(err)
				}
				must(p.Close(fd))
				must(p.Rename("/app/sub", "/app/sub2"))
				must(p.Rename("/app/sub2", "/app/sub"))
				_, err = env.Stdout.Write([]byte("done\n"))
				return err
			})
			require.NoError(t, err)
			require.Empty(t, tc.differences)
			require.Greater(t, tc.states, 20)
			require.Greater(t, tc.fromWalker, tc.states/2, "most states are read from the walker")
		})
	}
}

// checkerWorkload makes states that differ in the files of /app: config
// replaced through a temporary file, and a log appended to, neither synced.
func checkerWorkload(env *Env) error {
	p := env.Proc
	for i := range 3 {
		fd, err := p.Open("/app/config.tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := p.Write(fd, []byte(strings.Repeat("new config ", i+1))); err != nil {
			return err
		}
		if err := p.Close(fd); err != nil {
			return err
		}
		if err := p.Rename("/app/config.tmp", "/app/config"); err != nil {
			return err
		}
		fd, err = p.Open("/app/log", unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		if _, err := p.Write(fd, make([]byte, 3000)); err != nil {
			return err
		}
		if err := p.Close(fd); err != nil {
			return err
		}
	}
	_, err := env.Stdout.Write([]byte("done\n"))
	return err
}

func checkerSetup(fs *vfs.FS) error {
	if err := fs.Mkdir("/app", 0o755); err != nil {
		return err
	}
	return writeFile(fs, "/app/config", []byte("old config"))
}

// A checker may do anything to the state it is given: what it leaves there
// or in its TMPDIR never reaches the next state, though the directories are
// reused. The checker here fails when it finds anything but the state's
// own files (config, log, config.tmp) or a TMPDIR that is not empty, then
// removes the state's files, adds its own, and writes into TMPDIR.
func TestExternalStatesAreFresh(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	check := `set -e; cd "$0"
for f in *; do case "$f" in config|log|config.tmp|'*') ;; *) echo "left over: $f"; exit 1;; esac; done
test -z "$(ls -A "$TMPDIR")" || { echo "TMPDIR left over: $(ls -A "$TMPDIR")"; exit 1; }
rm -f config log; echo junk > junk; mkdir -p sub/deeper; echo x > sub/deeper/x
echo junk > "$TMPDIR/junk"; mkdir "$TMPDIR/d"; echo checked >> ` + filepath.Join(dir, "runs")
	ms, err := ParseModels("all")
	require.NoError(t, err)
	rep, err := ExploreFunc(Options{Models: ms, Checkers: []Checker{NewExternal(check, "/app")}, Jobs: 2}, checkerSetup, checkerWorkload)
	require.NoError(t, err)
	var msgs []string
	for _, f := range rep.Findings {
		msgs = append(msgs, f.Messages...)
	}
	require.Empty(t, msgs, "every state fresh")
	b, err := os.ReadFile(filepath.Join(dir, "runs"))
	require.NoError(t, err)
	require.Greater(t, strings.Count(string(b), "checked"), 10, "the checker ran")
	left, err := filepath.Glob(filepath.Join(dir, "iosim-crash-*"))
	require.NoError(t, err)
	require.Empty(t, left, "the workspaces are removed when the run ends")
}

// With TMPDIR unset, states are written in the memory file system memDir
// names; a state that does not fit there (ENOSPC) is written in the system's
// temporary directory instead, and checked the same.
func TestExternalMemoryFull(t *testing.T) {
	mem, disk := t.TempDir(), t.TempDir()
	t.Setenv("TMPDIR", "")
	defer func(m func() string, w func(*tree, string, string, []byte) error) { memDir, writeState = m, w }(memDir, writeState)
	memDir = func() string { return mem }
	var mu sync.Mutex
	var full, elsewhere int
	write := writeState
	writeState = func(tr *tree, d, out string, stdout []byte) error {
		mu.Lock()
		defer mu.Unlock()
		if strings.HasPrefix(d, mem) && len(tr.buf) > 6000 {
			full++
			return &os.PathError{Op: "write", Path: d, Err: syscall.ENOSPC}
		}
		if !strings.HasPrefix(d, mem) {
			elsewhere++
		}
		return write(tr, d, out, stdout)
	}
	// os.TempDir with TMPDIR unset is /tmp: the fallback's workspaces go there
	var where []string
	check := `case "$0" in ` + mem + `/*) echo mem >> ` + filepath.Join(disk, "where") + `;; *) echo disk >> ` + filepath.Join(disk, "where") + `;; esac; test -e "$0/config"`
	rep, err := ExploreFunc(Options{Checkers: []Checker{NewExternal(check, "/app")}, Jobs: 2}, checkerSetup, checkerWorkload)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(disk, "where"))
	require.NoError(t, err)
	where = strings.Fields(string(b))
	require.Positive(t, full, "some states did not fit")
	require.Equal(t, full, elsewhere, "each was written elsewhere")
	require.Contains(t, where, "mem")
	require.Contains(t, where, "disk")
	require.Equal(t, rep.Checked, rep.DistinctStates)
	for _, f := range rep.Findings {
		for _, m := range f.Messages {
			require.NotContains(t, m, "materialising", "no state failed to be written")
		}
	}
	left, err := filepath.Glob(filepath.Join(mem, "iosim-crash-*"))
	require.NoError(t, err)
	require.Empty(t, left)
}

// A checker command of plain words runs as those words, without a shell;
// anything the shell would read otherwise (quotes, variables, operators,
// redirections, globs, an assignment, a tilde) runs through /bin/sh.
func TestCheckerCommand(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		args []string // nil: through the shell
	}{
		{"/usr/bin/python3 -I examples/checkers/sqlite_check.py", []string{"/usr/bin/python3", "-I", "examples/checkers/sqlite_check.py", "D", "O"}},
		{"check --db=x.db -v", []string{"check", "--db=x.db", "-v", "D", "O"}},
		{"  spaced\tout  ", []string{"spaced", "out", "D", "O"}},
		{`sh -c 'test -e "$0/db"'`, nil},
		{"check $HOME", nil},
		{"check > log", nil},
		{"a; b", nil},
		{"a && b", nil},
		{"check *.db", nil},
		{"DEBUG=1 check", nil},
		{"check ~/db", nil},
		{"check `x`", nil},
		{`check a\ b`, nil},
	} {
		cmd := checkerCommand(c.cmd, "D", "O")
		if c.args == nil {
			require.Equal(t, []string{"/bin/sh", "-c", c.cmd + ` "$0" "$1"`, "D", "O"}, cmd.Args, c.cmd)
			continue
		}
		require.Equal(t, c.args, cmd.Args, c.cmd)
	}
}

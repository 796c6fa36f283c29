package crash

import (
	"sync"
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

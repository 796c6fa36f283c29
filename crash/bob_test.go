package crash

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// A BOB program (the ALICE paper's Block Order Breaker): a setup made durable,
// a workload, and the persistence property it relies on as a check.
type bobProgram struct {
	name     string
	setup    Setup
	workload func(env *Env) error
	holds    func(s *State) bool
}

func writeFile(fs *vfs.FS, path string, data []byte) error {
	ino, _, err := fs.Root().Open(path, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = ino.WriteAt(data, 0)
	return err
}

func fill(c byte, n int) []byte { return bytes.Repeat([]byte{c}, n) }

func openW(env *Env, path string, flags int) (int, error) {
	return env.Proc.Open(path, unix.O_WRONLY|flags, 0o644)
}

func create(env *Env, path string) error {
	fd, err := openW(env, path, unix.O_CREAT)
	if err != nil {
		return err
	}
	return env.Proc.Close(fd)
}

var bobPrograms = []bobProgram{
	{
		name:  "one-sector overwrite is atomic",
		setup: func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 4096)) },
		workload: func(env *Env) error {
			fd, err := openW(env, "/f", 0)
			if err != nil {
				return err
			}
			_, err = env.Proc.Pwrite(fd, fill('b', 512), 512)
			return err
		},
		holds: func(s *State) bool {
			got, _ := s.ReadFile("/f")
			return bytes.Equal(got, fill('a', 4096)) || bytes.Equal(got, append(append(fill('a', 512), fill('b', 512)...), fill('a', 3072)...))
		},
	},
	{
		name:  "append is atomic (never shows bytes not written)",
		setup: func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 100)) },
		workload: func(env *Env) error {
			fd, err := openW(env, "/f", unix.O_APPEND)
			if err != nil {
				return err
			}
			_, err = env.Proc.Write(fd, fill('b', 8192))
			return err
		},
		holds: func(s *State) bool {
			got, _ := s.ReadFile("/f")
			want := append(fill('a', 100), fill('b', 8192)...)
			return len(got) >= 100 && bytes.HasPrefix(want, got)
		},
	},
	{
		name: "rename is atomic",
		setup: func(fs *vfs.FS) error {
			if err := writeFile(fs, "/old", fill('a', 4096)); err != nil {
				return err
			}
			return writeFile(fs, "/new", fill('b', 4096))
		},
		workload: func(env *Env) error { return env.Proc.Rename("/new", "/old") },
		holds: func(s *State) bool {
			got, ok := s.ReadFile("/old")
			return ok && (bytes.Equal(got, fill('a', 4096)) || bytes.Equal(got, fill('b', 4096)))
		},
	},
	{
		name:  "overwrite persists before later operations",
		setup: func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 4096)) },
		workload: func(env *Env) error {
			fd, err := openW(env, "/f", 0)
			if err != nil {
				return err
			}
			if _, err := env.Proc.Pwrite(fd, fill('b', 4096), 0); err != nil {
				return err
			}
			return create(env, "/g")
		},
		holds: func(s *State) bool {
			got, _ := s.ReadFile("/f")
			_, later := s.ReadFile("/g")
			return !later || bytes.Equal(got, fill('b', 4096))
		},
	},
	{
		name:  "append persists before later operations",
		setup: func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('a', 100)) },
		workload: func(env *Env) error {
			fd, err := openW(env, "/f", unix.O_APPEND)
			if err != nil {
				return err
			}
			if _, err := env.Proc.Write(fd, fill('b', 4096)); err != nil {
				return err
			}
			return create(env, "/g")
		},
		holds: func(s *State) bool {
			got, _ := s.ReadFile("/f")
			_, later := s.ReadFile("/g")
			return !later || bytes.Equal(got, append(fill('a', 100), fill('b', 4096)...))
		},
	},
	{
		name:  "directory operation persists before later operations",
		setup: func(fs *vfs.FS) error { return fs.Mkdir("/d", 0o755) },
		workload: func(env *Env) error {
			if err := create(env, "/d/x"); err != nil {
				return err
			}
			return create(env, "/d/y")
		},
		holds: func(s *State) bool {
			_, x := s.ReadFile("/d/x")
			_, y := s.ReadFile("/d/y")
			return !y || x
		},
	},
}

// TestBOB explores each BOB program under each model and prints which
// persistence properties hold (testdata/bob.txt; -rewrite regenerates it).
func TestBOB(t *testing.T) {
	datadriven.RunTest(t, "testdata/bob.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "bob" {
			d.Fatalf(t, "unknown command %q", d.Cmd)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%-52s", "property")
		for _, m := range Models() {
			fmt.Fprintf(&b, " %-14s", m.Name)
		}
		b.WriteString("\n")
		for _, p := range bobPrograms {
			fmt.Fprintf(&b, "%-52s", p.name)
			for _, m := range Models() {
				check := CheckFunc{ID: "property", F: func(s *State) []Finding {
					if p.holds(s) {
						return nil
					}
					return []Finding{{Kind: "property", Message: p.name}}
				}}
				rep, err := ExploreFunc(Options{Models: []*Model{m}, Depth: 2, Checkers: []Checker{check}}, p.setup, p.workload)
				if err != nil {
					t.Fatal(err)
				}
				verdict := "holds"
				if len(rep.Findings) > 0 {
					verdict = "BREAKS"
				}
				fmt.Fprintf(&b, " %-14s", verdict)
			}
			b.WriteString("\n")
		}
		return b.String()
	})
}

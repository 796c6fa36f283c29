package crash

import (
	"os"
	"path/filepath"
)

// WriteState writes crash state s into the host directory to, which it
// creates (its parent must exist; to itself must not): to/crashed holds the
// subtree at dir of the state, as an external checker gets it
// (Materialize), and to/stdout what the program had written to its
// standard output before the crash, the two arguments of a checker in
// ALICE's convention.
func WriteState(s *State, dir, to string) error {
	if err := os.Mkdir(to, 0o755); err != nil {
		return err
	}
	if err := Materialize(s.FS(), dir, filepath.Join(to, "crashed")); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(to, "stdout"), s.Stdout, 0o644)
}

package crash

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/vfs"
)

func modelNames(ms []*Model) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

// A file overwritten, then grown, then a flag written in another file: a
// model that commits calls in order (ext4-journal) or persists an overwrite
// before every later call (btrfs) never keeps the flag without the
// overwrite and the growth, and no state shows the file at a size it never
// had at a call boundary.
func TestIntermediateVersions(t *testing.T) {
	setup := func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('o', 4096)) }
	workload := func(env *Env) error {
		fd, err := openW(env, "/f", 0)
		if err != nil {
			return err
		}
		if _, err := env.Proc.Pwrite(fd, []byte("A"), 0); err != nil {
			return err
		}
		if _, err := env.Proc.Pwrite(fd, fill('g', 4096), 4096); err != nil {
			return err
		}
		if _, err := env.Proc.Pwrite(fd, []byte("B"), 0); err != nil {
			return err
		}
		return create(env, "/flag")
	}
	holds := func(s *State) bool {
		f, ok := s.ReadFile("/f")
		if !ok {
			return false
		}
		if _, flag := s.ReadFile("/flag"); flag {
			return len(f) == 8192 && f[0] == 'B'
		}
		// between calls: original; A at 4096; A at 8192; B at 8192
		switch {
		case len(f) == 4096:
			return f[0] == 'o' || f[0] == 'A'
		case len(f) == 8192:
			return f[0] == 'A' || f[0] == 'B'
		}
		return false
	}
	// btrfs: the growth is an append, which may persist after later calls
	require.Equal(t, []string{"posix", "ext4-ordered", "ext4-writeback", "alice", "xfs", "btrfs"}, breaksUnder(t, setup, workload, holds))
	// btrfs's overwrites persist before every later call: the flag implies B
	overwritten := func(s *State) bool {
		f, _ := s.ReadFile("/f")
		_, flag := s.ReadFile("/flag")
		return !flag || len(f) > 0 && f[0] == 'B'
	}
	require.Equal(t, []string{"posix", "ext4-ordered", "ext4-writeback", "alice", "xfs"}, breaksUnder(t, setup, workload, overwritten))
}

// ext4 with data=journal journals a write() page by page (a jbd2 handle per
// page), so an in-place rewrite of several pages can be found with its
// first pages new and the rest old; never the other way round.
func TestDataJournalTearsAtPages(t *testing.T) {
	setup := func(fs *vfs.FS) error { return writeFile(fs, "/f", fill('o', 4*4096)) }
	workload := func(env *Env) error {
		fd, err := openW(env, "/f", 0)
		if err != nil {
			return err
		}
		_, err = env.Proc.Pwrite(fd, fill('n', 4*4096), 0)
		return err
	}
	var torn, backwards bool
	check := CheckFunc{ID: "pages", F: func(s *State) []Finding {
		f, _ := s.ReadFile("/f")
		if len(f) != 4*4096 {
			return nil
		}
		old := false
		for p := range 4 {
			switch f[p*4096] {
			case 'o':
				old = true
			case 'n':
				if old {
					backwards = true
				} else if p < 3 && f[(p+1)*4096] == 'o' {
					torn = true
				}
			}
		}
		return nil
	}}
	_, err := ExploreFunc(Options{Models: []*Model{ModelByName("ext4-journal")}, Checkers: []Checker{check}}, setup, workload)
	require.NoError(t, err)
	require.True(t, torn, "no state with the first pages new and the rest old")
	require.False(t, backwards, "a state with new pages after old ones")
}

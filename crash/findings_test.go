package crash

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// lineOf returns the line of this file holding marker.
func lineOf(t *testing.T, marker string) int {
	_, file, _, _ := runtime.Caller(0)
	b, err := readHostFile(file)
	require.NoError(t, err)
	for k, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, marker) && !strings.Contains(l, "lineOf") {
			return k + 1
		}
	}
	t.Fatalf("no line holds %q", marker)
	return 0
}

// oneCause writes a new config without fsync and renames it over the old:
// one cause, whatever the model that shows it.
func oneCause(env *Env) error {
	p := env.Proc
	fd, err := p.Open("/data/config.tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := p.Write(fd, newConfig); err != nil { // the write
		return err
	}
	if err := p.Close(fd); err != nil {
		return err
	}
	return p.Rename("/data/config.tmp", "/data/config") // the rename
}

// A workload with one cause gives one finding: the write not ordered before
// the rename that exposes it, named by the workload's source lines, under
// the models that do not order them, with the states as a count of the
// run's and what the renamed file holds in true words.
func TestOneCauseOneFinding(t *testing.T) {
	rep, err := ExploreFunc(Options{Depth: 1}, configSetup, oneCause)
	require.NoError(t, err)
	var b strings.Builder
	rep.WriteText(&b)
	require.Len(t, rep.Findings, 1, b.String())
	c := rep.Findings[0]
	require.Equal(t, "ordering", c.Property)
	require.Len(t, c.Calls, 2)
	require.Equal(t, "lost", c.Calls[0].Role)
	require.Equal(t, "write", c.Calls[0].Call)
	require.Equal(t, "findings_test.go", filepath.Base(c.Calls[0].File))
	require.Equal(t, []int{lineOf(t, "// the write")}, c.Calls[0].Lines)
	require.Equal(t, "persisted", c.Calls[1].Role)
	require.Equal(t, "renameat", c.Calls[1].Call) // the facade's Rename is renameat(AT_FDCWD, ...)
	require.Equal(t, []int{lineOf(t, "// the rename")}, c.Calls[1].Lines)
	require.Equal(t, []string{"posix", "ext4-writeback", "xfs", "btrfs"}, c.Models)
	require.Equal(t, []string{"atomic-replace"}, c.Checks)
	failing := 0
	for _, p := range rep.Points {
		failing += p.Failed
	}
	require.Equal(t, failing, c.States, "every failing state, once")
	require.Less(t, c.States, rep.States)
	joined := strings.Join(c.Messages, "\n")
	require.Contains(t, joined, "(6000 bytes): empty")
	require.Contains(t, joined, "(6000 bytes): zeros (6000 bytes)")
	require.Contains(t, joined, "(6000 bytes): new bytes, then zeros, then new bytes (2048 + 2048 + 1904 bytes)")
	require.Contains(t, b.String(), "finding 1: ordering (models: posix, ext4-writeback, xfs, btrfs; ")
	for _, id := range c.Examples {
		_, err := ParseStateID(id)
		require.NoError(t, err)
	}
}

// On random programs every failing state is in exactly one finding: the
// findings' states add up to the failing states of the run (which never
// exceed its states), and each finding's to at most the run's.
func TestFindingStatesAddUpRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		workload := randomWorkload(t)
		rep := exploreWith(t, Options{Depth: rapid.IntRange(0, 2).Draw(t, "depth")}, workload, nil)
		failing, sum := 0, 0
		for _, p := range rep.Points {
			failing += p.Failed
		}
		for _, c := range rep.Findings {
			require.Positive(t, c.States)
			require.LessOrEqual(t, c.States, rep.States)
			require.NotEmpty(t, c.Examples)
			require.LessOrEqual(t, len(c.Points), c.CrashPoints)
			sum += c.States
		}
		require.Equal(t, failing, sum)
		require.LessOrEqual(t, sum, rep.States)
		require.Equal(t, failing > 0, len(rep.Findings) > 0)
	})
}

func TestDescribeContent(t *testing.T) {
	newC := bytes.Repeat([]byte("n"), 1500)
	oldC := bytes.Repeat([]byte("o"), 1200)
	zeros := func(n int) []byte { return make([]byte, n) }
	cat := func(bs ...[]byte) []byte { return bytes.Join(bs, nil) }
	for _, c := range []struct {
		have []byte
		want string
	}{
		{nil, "empty"},
		{zeros(1500), "zeros (1500 bytes)"},
		{cat(newC[:1024], zeros(476)), "new bytes, then zeros (1024 + 476 bytes)"},
		{oldC, "old bytes (1200 bytes)"},
		{cat(newC[:512], oldC[512:1024]), "new bytes, then old bytes (512 + 512 bytes)"},
		{cat(oldC[:512], newC[512:]), "old bytes, then new bytes (512 + 988 bytes)"},
		{bytes.Repeat([]byte("x"), 700), "other bytes (700 bytes)"},
		{newC[:700], "new bytes (700 bytes)"},
		{cat(newC, []byte("n")), "new bytes, then other bytes (1024 + 477 bytes)"},
	} {
		require.Equal(t, c.want, describeContent(c.have, newC, [][]byte{oldC}), "%q", c.have)
	}
}

func TestParseStateID(t *testing.T) {
	id, err := ParseStateID("20.3")
	require.NoError(t, err)
	require.Equal(t, StateID{20, 3}, id)
	require.Equal(t, "20.3", id.String())
	for _, bad := range []string{"", "20", "20.", ".3", "a.b", "20.3.1", "-1.2"} {
		_, err := ParseStateID(bad)
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "POINT.K")
	}
}

// Options.Only gives the state a report names: the same content as the
// state the checks saw under that ID, and nothing checked.
func TestOnlyGivesTheNamedState(t *testing.T) {
	seen := map[string][32]byte{} // ID → hash of the state as checked
	hashOf := func(s *State) [32]byte {
		var b bytes.Buffer
		for _, p := range []string{"/data/config", "/data/config.tmp"} {
			got, ok := s.ReadFile(p)
			fmt.Fprintf(&b, "%s %v %d:", p, ok, len(got))
			b.Write(got)
		}
		return sha256.Sum256(b.Bytes())
	}
	rec := CheckFunc{ID: "record", F: func(s *State) []Finding {
		seen[s.ID] = hashOf(s)
		return nil
	}}
	opts := Options{Depth: 1, Checkers: []Checker{AtomicReplace{}, rec}}
	rep, err := ExploreFunc(opts, configSetup, oneCause)
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1)
	require.NotEmpty(t, seen)
	n := 0
	for id, want := range seen {
		sid, err := ParseStateID(id)
		require.NoError(t, err)
		o := opts
		o.Only = &sid
		var got *[32]byte
		o.Visit = func(s *State) {
			require.Equal(t, id, s.ID)
			h := hashOf(s)
			got = &h
		}
		r, err := ExploreFunc(o, configSetup, oneCause)
		require.NoError(t, err)
		require.NotNil(t, got, "state %s", id)
		require.Equal(t, want, *got, "state %s", id)
		require.Empty(t, r.Findings, "nothing checked")
		n++
	}
	// a state the run does not have: never visited
	o := opts
	o.Only = &StateID{Point: 999, K: 0}
	o.Visit = func(*State) { t.Fatal("visited a state the run does not have") }
	_, err = ExploreFunc(o, configSetup, oneCause)
	require.NoError(t, err)
	require.Positive(t, n)
}

// Options.Failed gets every failing state once, by ID, and the findings'
// examples are among them.
func TestFailedGetsEveryFailingState(t *testing.T) {
	ids := map[string]int{}
	rep, err := ExploreFunc(Options{Depth: 1, Failed: func(s *State) { ids[s.ID]++ }}, configSetup, oneCause)
	require.NoError(t, err)
	require.NotEmpty(t, ids)
	for id, n := range ids {
		require.Equal(t, 1, n, id)
	}
	for _, c := range rep.Findings {
		for _, id := range c.Examples {
			require.Contains(t, ids, id)
		}
	}
}

func readHostFile(name string) ([]byte, error) { return os.ReadFile(name) }

// parallelFail is a parallel checker that fails states holding the config
// in neither version (reading the state's file system, as a parallel
// checker does).
type parallelFail struct{}

func (parallelFail) Name() string { return "parallel" }
func (parallelFail) Parallel()    {}
func (parallelFail) Check(s *State) []Finding {
	got := fsRead(s.FS(), "/data/config")
	if bytes.Equal(got, newConfig) || bytes.Equal(got, oldConfig) {
		return nil
	}
	return []Finding{{Kind: "parallel", Message: "neither"}}
}

// With checkers on several goroutines, Failed gets the same states as with
// one serial checker, each once, each the state checked.
func TestFailedWithParallelCheckers(t *testing.T) {
	serial := CheckFunc{ID: "parallel", F: parallelFail{}.Check}
	collect := func(c Checker, jobs int) map[string][]byte {
		var mu sync.Mutex
		got := map[string][]byte{}
		_, err := ExploreFunc(Options{Depth: 2, Jobs: jobs, Checkers: []Checker{c}, Failed: func(s *State) {
			b := fsRead(s.FS(), "/data/config")
			mu.Lock()
			defer mu.Unlock()
			_, dup := got[s.ID]
			require.False(t, dup, s.ID)
			got[s.ID] = b
		}}, configSetup, unsafeUpdate)
		require.NoError(t, err)
		return got
	}
	want := collect(serial, 1)
	require.NotEmpty(t, want)
	require.Equal(t, want, collect(parallelFail{}, 3))
}

// fsRead returns the content of regular file p of fs (nil: none).
func fsRead(fs *vfs.FS, p string) []byte {
	ino, err := fs.Root().Resolve(p, true)
	if err != nil || !ino.IsRegular() {
		return nil
	}
	return readAll(ino)
}

package replay

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNotEmptyRecording: notempty.c's rmdir and rename that failed with
// ENOTEMPTY show directories with entries the trace does not name: an
// entry stands for them, noted, until the listing and the rmdir that
// succeeds; the replay is clean.
func TestNotEmptyRecording(t *testing.T) {
	for _, name := range []string{"notempty.strace", "notempty.tty.strace"} {
		t.Run(name, func(t *testing.T) {
			rep := replayClean(t, Options{}, recordings+name)
			require.EqualValues(t, 3, rep.Syscalls["rmdir"].Calls)
			require.EqualValues(t, 2, rep.Syscalls["rmdir"].Errors)
			facts := strings.Join(factNotesOf(rep), "\n")
			require.Contains(t, facts, name+":30: rmdir = -1 ENOTEMPTY: ")
			require.Contains(t, facts, "/d held entries before the trace that it does not name: .iosim-unlisted-entries stands for them")
			require.Contains(t, facts, name+":31: rename = -1 ENOTEMPTY: the source of a rename onto a directory with entries: ")
		})
	}
}

// TestNotEmptyEntry: the entry standing for a directory's unnamed entries
// goes when a listing shows them and when an rmdir succeeds, and is never
// invented for a directory the trace made.
func TestNotEmptyEntry(t *testing.T) {
	run := func(lines ...string) *Report {
		rep, err := Run([]string{writeTrace(t, joinLines(lines))}, Options{Verify: true})
		require.NoError(t, err)
		return rep
	}
	rep := run(
		`rmdir("/w/d") = -1 ENOTEMPTY (Directory not empty)`,
		`openat(AT_FDCWD, "/w/d", O_RDONLY|O_DIRECTORY) = 3`,
		`getdents64(3, [{d_ino=1, d_off=1, d_reclen=24, d_type=DT_DIR, d_name="."}, {d_ino=2, d_off=2, d_reclen=24, d_type=DT_DIR, d_name=".."}, {d_ino=3, d_off=3, d_reclen=24, d_type=DT_REG, d_name="a"}], 32768) = 72`,
		`getdents64(3, [], 32768) = 0`,
		`close(3) = 0`,
		`unlinkat(AT_FDCWD, "/w/d/a", 0) = 0`,
		`unlinkat(AT_FDCWD, "/w/d", AT_REMOVEDIR) = 0`,
	)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.Contains(t, strings.Join(factNotesOf(rep), "\n"), "/w/d held entries before the trace that it does not name")

	rep = run(
		`rmdir("/w/d") = -1 ENOTEMPTY (Directory not empty)`,
		`rmdir("/w/d") = 0`, // emptied by something the trace does not show
	)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)

	// a directory the trace made empty: the ENOTEMPTY is the model's
	// divergence, not an entry to invent
	rep = run(
		`mkdir("/w", 0755) = 0`,
		`mkdir("/w/d", 0755) = 0`,
		`rmdir("/w/d") = -1 ENOTEMPTY (Directory not empty)`,
	)
	require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
	require.Empty(t, factNotesOf(rep))
}

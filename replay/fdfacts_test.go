package replay

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFdsBeforeTheTrace: fds.c, started with fd 10 open and stdout a pipe:
// F_DUPFD's 11 shows fd 10 open, fstat shows fd 1 a pipe; both are taken and
// noted, and the replay is clean.
func TestFdsBeforeTheTrace(t *testing.T) {
	for _, name := range []string{"fds.strace", "fds.tty.strace"} {
		t.Run(name, func(t *testing.T) {
			rep := replayClean(t, Options{}, recordings+name)
			facts := factNotesOf(rep)
			require.Len(t, facts, 2, "%q", rep.Notes)
			require.Contains(t, facts[0], name+":30: fcntl: fd 10 open before the trace (or made by calls it does not show): the call got fd 11 where the model's lowest free fd was 10")
			require.Contains(t, facts[1], name+":31: newfstatat: fd 1 was a pipe or FIFO before the trace")
		})
	}
}

// TestStandInTypes: a stat of an fd from before the trace sets the type of
// its stand-in, noted once (a second stat of the same type adds nothing);
// two stats that disagree are reported as a contradiction.
func TestStandInTypes(t *testing.T) {
	rep, err := Run([]string{writeTrace(t, joinLines([]string{
		`fstat(1, {st_mode=S_IFSOCK|0777, st_size=0, ...}) = 0`,
		`fstat(1, {st_mode=S_IFSOCK|0777, st_size=0, ...}) = 0`,
		`fstat(2, {st_mode=S_IFIFO|0600, st_size=0, ...}) = 0`,
		`fstat(2, {st_mode=S_IFCHR|0620, st_rdev=makedev(0x88, 0), ...}) = 0`,
	}))}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	facts := factNotesOf(rep)
	require.Len(t, facts, 3, "%q", rep.Notes)
	require.Contains(t, facts[0], ":1: fstat: fd 1 was a socket before the trace")
	require.Contains(t, facts[1], ":3: fstat: fd 2 was a pipe or FIFO before the trace")
	require.Contains(t, facts[2], ":4: fstat: contradiction: fd 2, a description from before the trace that an earlier stat showed of another type, is a character device; taken")
}

package replay

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// recordings are traces made on Linux/ext4 for the shapes of recording
// that replay reads (testdata/rec/README.md says how each was made).
const recordings = "testdata/rec/"

// TestStderrRecordingsReplayAlike: the same program recorded with
// `strace -f -o FILE` and with `strace -f prog 2> FILE` (strace's messages
// cutting call lines, no [pid N] while one task is traced) replays clean,
// with the same calls.
func TestStderrRecordingsReplayAlike(t *testing.T) {
	for _, name := range []string{"pipeline", "threads-fork"} {
		t.Run(name, func(t *testing.T) {
			var reps []*Report
			for _, form := range []string{".o", ".stderr"} {
				rep, err := Run([]string{recordings + name + form + ".strace"}, Options{Verify: true})
				require.NoError(t, err, form)
				require.Zero(t, rep.ParseErrors, form)
				for _, d := range rep.DivergenceList {
					t.Error(form, d)
				}
				require.Positive(t, rep.Verified, form)
				reps = append(reps, rep)
			}
			o, e := reps[0], reps[1]
			require.Equal(t, o.Processes, e.Processes)
			require.Equal(t, o.Replayed, e.Replayed)
			for _, n := range []string{"openat", "read", "write", "close", "unlink", "unlinkat", "newfstatat", "execve"} {
				require.Equal(t, o.Syscalls[n], e.Syscalls[n], n)
			}
		})
	}
}

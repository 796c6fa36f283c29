//go:build amd64

package strace_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

func parseFirst(t *testing.T, line string) *strace.Event {
	t.Helper()
	ev, err := strace.NewParser(strings.NewReader(line+"\n"), "t", strace.Options{}).Next()
	require.NoError(t, err, line)
	return ev
}

// TestTableFlagNamesParse: every name of the syscall table's flag sets parses
// to its value, so an argument strace prints with it is a number to replay.
func TestTableFlagNamesParse(t *testing.T) {
	n := 0
	for _, in := range sim.Syscalls() {
		for _, a := range in.Args {
			if a.Flags == nil {
				continue
			}
			for _, f := range a.Flags.Names {
				v, ok := strace.ConstValue(f.Name)
				require.True(t, ok, "%s: %s does not parse", in.Name, f.Name)
				require.Equal(t, f.Value, v, "%s: %s", in.Name, f.Name)
				n++
			}
		}
	}
	require.Greater(t, n, 100)
	// Names of the arguments fcntl takes by command (not a flag set of the table).
	for _, name := range []string{"STATX_ALL", "STATX_BASIC_STATS", "RESOLVE_BENEATH", "SPLICE_F_MOVE", "S_IFIFO",
		"F_SEAL_SEAL", "F_SEAL_WRITE", "F_SEAL_FUTURE_WRITE", "DN_MODIFY", "DN_MULTISHOT", "F_GET_RW_HINT"} {
		_, ok := strace.ConstValue(name)
		require.True(t, ok, name)
	}
	// A statx call with a mask by name is rebuilt, not skipped.
	ev := parseFirst(t, `statx(AT_FDCWD, "f", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_ALL, stx_attributes=0, stx_mode=S_IFREG|0644, stx_size=0, ...}) = 0`)
	v, ok := ev.Int(3)
	require.True(t, ok)
	require.EqualValues(t, 0xfff, v)
	ev = parseFirst(t, `fcntl(3, F_ADD_SEALS, F_SEAL_SEAL|F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_WRITE) = 0`)
	v, ok = ev.Int(2)
	require.True(t, ok)
	require.EqualValues(t, 0xf, v)
}

package strace_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/strace"
)

// stderrTrace is what `strace -f sh -c '...' 2> FILE` wrote (pids shortened):
// messages cut call lines, and the first task's lines carry no [pid N] until
// its first child is attached, nor after its children are gone.
const stderrTrace = `execve("/bin/sh", ["sh"], 0x7ffc /* 35 vars */) = 0
pipe2([3, 4], 0)                        = 0
clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLDstrace: Process 11 attached
, child_tidptr=0x7ff211f84a10) = 11
[pid 11] close(3strace: Process 12 attached
)                    = 0
[pid 10] close(4 <unfinished ...>
[pid 10] <... close resumed>)        = 0
[pid 10] vfork(strace: Process 13 attached
 <unfinished ...>
[pid 13] exit_group(0)               = ?
[pid 13] +++ exited with 0 +++
[pid 10] <... vfork resumed>)        = 13
[pid 10] clone3({flags=CLONE_VM|CLONE_THREAD, tls=0x7f4b8aa726c0}strace: Process 14 attached
 => {parent_tid=[14]}, 88) = 14
[pid 14] +++ exited with 0 +++
[pid 12] +++ exited with 0 +++
[pid 10] wait4(-1,  <unfinished ...>
[pid 11] +++ exited with 0 +++
<... wait4 resumed>NULL, 0, NULL) = 11
close(5)                                = 0
exit_group(0)                           = ?
+++ exited with 0 +++
`

func TestStraceStderr(t *testing.T) {
	{
		evs, err := parseAll(t, "t", stderrTrace, strace.Options{})
		require.NoError(t, err)
		type got struct {
			kind       strace.Kind
			pid        int
			name, args string
			ret        int64
			line, end  int
		}
		var g []got
		for _, ev := range evs {
			g = append(g, got{ev.Kind, ev.Pid, ev.Name, string(ev.RawArgs), ev.Ret, ev.Line, ev.EndLine})
		}
		require.Equal(t, []got{
			{strace.KindSyscall, 0, "execve", `"/bin/sh", ["sh"], 0x7ffc /* 35 vars */`, 0, 1, 1},
			{strace.KindSyscall, 0, "pipe2", "[3, 4], 0", 0, 2, 2},
			{strace.KindAttached, 11, "", "", 0, 3, 3},
			{strace.KindSyscall, 0, "clone", "child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7ff211f84a10", 11, 3, 4},
			{strace.KindAttached, 12, "", "", 0, 5, 5},
			{strace.KindSyscall, 11, "close", "3", 0, 5, 6},
			// [pid 10] is the first task: its unprefixed lines had pid 0
			{strace.KindSyscall, 0, "close", "4", 0, 7, 8},
			{strace.KindAttached, 13, "", "", 0, 9, 9},
			{strace.KindSyscall, 13, "exit_group", "0", 0, 11, 11},
			{strace.KindExit, 13, "", "", 0, 12, 12},
			{strace.KindSyscall, 0, "vfork", "", 13, 10, 13},
			{strace.KindAttached, 14, "", "", 0, 14, 14},
			{strace.KindSyscall, 0, "clone3", "{flags=CLONE_VM|CLONE_THREAD, tls=0x7f4b8aa726c0} => {parent_tid=[14]}, 88", 14, 14, 15},
			{strace.KindExit, 14, "", "", 0, 16, 16},
			{strace.KindExit, 12, "", "", 0, 17, 17},
			{strace.KindExit, 11, "", "", 0, 19, 19},
			// alone again: no prefix, and the call resumes as the first task's
			{strace.KindSyscall, 0, "wait4", "-1, NULL, 0, NULL", 11, 18, 20},
			{strace.KindSyscall, 0, "close", "5", 0, 21, 21},
			{strace.KindSyscall, 0, "exit_group", "0", 0, 22, 22},
			{strace.KindExit, 0, "", "", 0, 23, 23},
		}, g)
	}
}

// TestStraceStderrSurvivor: when the first task exits first, the lines
// without a prefix are its child's, the only task left.
func TestStraceStderrSurvivor(t *testing.T) {
	evs, err := parseAll(t, "t", "fork()strace: Process 7 attached\n = 7\n[pid 6] exit_group(0) = ?\n[pid 6] +++ exited with 0 +++\nclose(3) = 0\n", strace.Options{})
	require.NoError(t, err)
	require.Len(t, evs, 5)
	require.Equal(t, "close", evs[4].Name)
	require.Equal(t, 7, evs[4].Pid)
	require.Equal(t, 0, evs[2].Pid) // [pid 6] is the first task
}

// TestStraceStderrErrors: what cannot be joined is an error that says how
// the trace was recorded.
func TestStraceStderrErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		// the program's own stderr mixed in
		{"strace: Process 7 attached\nsome text of the program\n", "t:2:5: expected '(' after syscall name \"some\" (the traced program's own stderr output is mixed in"},
		// a cut call with no rest
		{"close(3strace: Process 7 attached\n", "t:1:8: the call cut by strace's message has no rest"},
		// a message in a line that is no call
		{"+++ exit strace: Process 7 attached\n)\n", "record with `strace -o FILE`"},
		// strace -c's summary table given as a trace
		{"% time     seconds  usecs/call     calls    errors syscall\n------ ----------- ----------- --------- --------- ----------------\n", "t:1:1: expected a syscall name"},
		{"% time     seconds  usecs/call     calls    errors syscall\n", "the summary of `strace -c`, not a trace"},
	} {
		_, err := parseAll(t, "t", tc.text, strace.Options{})
		require.Error(t, err, tc.text)
		require.Contains(t, err.Error(), tc.want, tc.text)
	}
}

// TestProgramOutputInLine: the traced program's own stderr output, in the
// middle of the line of the write that wrote it, is taken out.
func TestProgramOutputInLine(t *testing.T) {
	text := strings.Join([]string{
		`write(2, "to stderr", 9to stderr)                = 9`,
		`write(2, "\n", 1`,
		`)                       = 1`,
		`write(2, "two\nlines\n", 10two`,
		`lines`,
		`) = 10`,
		`write(2, "12 apples", 912 apples) = 9`, // output that begins with digits
		`write(2, "abcdefgh"..., 12abcdefghijkl) = 12`, // -s cut the string
		`[pid 7] write(2, "x\n", 2x`,                   // another task's line cut it
		` <unfinished ...>`,
		`[pid 7] <... write resumed>)  = 2`,
		`copy_file_range(3, NULL, 1, NULL, 9223372035781033984, 0ok`, // a buffer not shown: the result's count
		`) = 3`,
		`close(2) = 0`,
	}, "\n") + "\n"
	evs, err := parseAll(t, "t", text, strace.Options{})
	require.NoError(t, err)
	type got struct {
		name, args string
		ret        int64
		line, end  int
	}
	var g []got
	for _, ev := range evs {
		g = append(g, got{ev.Name, string(ev.RawArgs), ev.Ret, ev.Line, ev.EndLine})
	}
	require.Equal(t, []got{
		{"write", `2, "to stderr", 9`, 9, 1, 1},
		{"write", `2, "\n", 1`, 1, 2, 3},
		{"write", `2, "two\nlines\n", 10`, 10, 4, 6},
		{"write", `2, "12 apples", 9`, 9, 7, 7},
		{"write", `2, "abcdefgh"..., 12`, 12, 8, 8},
		{"write", `2, "x\n", 2`, 2, 9, 11},
		{"copy_file_range", "3, NULL, 1, NULL, 9223372035781033984, 0", 3, 12, 13},
		{"close", "2", 0, 14, 14},
	}, g)

	// output that is not the bytes the write shows stays an error
	_, err = parseAll(t, "t", "write(2, \"abc\", 3xyz) = 3\nwrite(2, \"abc\\n\", 4abc\n", strace.Options{})
	require.Error(t, err)
	_, err = parseAll(t, "t", "write(2, \"abc\\n\", 4abc\n", strace.Options{})
	require.ErrorContains(t, err, "the program's output after the count of this write ends the input")
}

// TestStraceStderrOtherMessages: strace's other messages about a process
// cut call lines too, and do not change which tasks are traced.
func TestStraceStderrOtherMessages(t *testing.T) {
	text := strings.Join([]string{
		`read(0, strace: Process 5 suspended`,
		`"x", 1) = 1`,
		`strace: Process 5 resumed`,
		`close(0) = 0`,
	}, "\n") + "\n"
	evs, err := parseAll(t, "t", text, strace.Options{})
	require.NoError(t, err)
	require.Len(t, evs, 4)
	require.Equal(t, strace.KindMessage, evs[0].Kind)
	require.Equal(t, "strace: Process 5 suspended", string(evs[0].RawArgs))
	require.Equal(t, "read", evs[1].Name)
	require.Equal(t, `0, "x", 1`, string(evs[1].RawArgs))
	require.Equal(t, []int{1, 2}, []int{evs[1].Line, evs[1].EndLine})
	require.Equal(t, strace.KindMessage, evs[2].Kind)
	require.Equal(t, 0, evs[3].Pid)
}

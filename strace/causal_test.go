package strace_test

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/strace"
)

// mergeOrder merges the -ff files and returns (pid, line) of each event.
func mergeOrder(t *testing.T, files [][2]string) [][2]int {
	t.Helper()
	var ps []*strace.Parser
	for _, f := range files {
		ps = append(ps, strace.NewParser(strings.NewReader(f[1]), f[0], strace.Options{}))
	}
	m := strace.Merge(ps...)
	var got [][2]int
	for {
		ev, err := m.Next()
		if err == io.EOF {
			return got
		}
		require.NoError(t, err)
		got = append(got, [2]int{ev.Pid, ev.Line})
	}
}

// TestMergeCausalPipes: without timestamps, a read of a pipe comes after
// the writes it reads (the pipe followed through pipe2, fork, dup2, close
// and execve, or named by -y), and a SIGCHLD after the child's end.
func TestMergeCausalPipes(t *testing.T) {
	parent := strings.Join([]string{
		`pipe2([3, 4], 0) = 0`,
		`clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 11`,
		`close(4) = 0`,
		`read(3, "d/.tmp-1\n", 63) = 9`,
		`rename("d/.tmp-1", "d/pack-1") = 0`,
		`read(3, "more", 63) = 4`,
		`--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=11, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---`,
		`getpid() = 10`,
	}, "\n") + "\n"
	child := strings.Join([]string{
		`close(3) = 0`,
		`dup2(4, 1) = 1`,
		`close(4) = 0`,
		`execve("/bin/x", ["x"], 0x7ffc /* 1 var */) = 0`,
		`openat(AT_FDCWD, "d/.tmp-1", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
		`getdents64(4, 0x55 /* 3 entries */, 32768) = 80`,
		`write(1, "d/.tmp-", 7) = 7`,
		`write(1, "1\n", 2) = 2`,
		`write(1, "more", 4) = 4`,
		`getpid() = 11`,
		`exit_group(0) = ?`,
		`+++ exited with 0 +++`,
	}, "\n") + "\n"
	require.Equal(t, [][2]int{
		{10, 1}, {10, 2}, {10, 3},
		{11, 1}, {11, 2}, {11, 3}, {11, 4}, {11, 5}, {11, 6}, {11, 7}, {11, 8}, // until the 9 bytes read are written
		{10, 4}, {10, 5}, // the read, the rename
		{11, 9},                      // the next 4 bytes
		{10, 6},                      // read
		{11, 10}, {11, 11}, {11, 12}, // the child's end before its SIGCHLD
		{10, 7}, {10, 8},
	}, mergeOrder(t, [][2]string{{"t.10", parent}, {"t.11", child}}))

	// with -y, the pipe's inode names it: no fd table needed
	require.Equal(t, [][2]int{
		{10, 1}, {11, 1}, {10, 2}, {10, 3},
	}, mergeOrder(t, [][2]string{
		{"t.10", "getpid() = 10\nread(0<pipe:[77]>, \"ab\", 10) = 2\ngetpid() = 10\n"},
		{"t.11", "write(1<pipe:[77]>, \"ab\", 2) = 2\n"},
	}))

	// a pipe whose writer is not in the input: the read goes on
	require.Equal(t, [][2]int{
		{10, 1}, {10, 2}, {11, 1},
	}, mergeOrder(t, [][2]string{
		{"t.10", "pipe2([3, 4], O_CLOEXEC) = 0\nread(3, \"ab\", 10) = 2\n"},
		{"t.11", "getpid() = 11\n"},
	}))
}

// chooseOrder merges the -ff files with choices and returns (pid, line) of
// each event, and the choices refused.
func chooseOrder(t *testing.T, files [][2]string, cs []strace.Choice) ([][2]int, []strace.Choice) {
	t.Helper()
	var ps []*strace.Parser
	for _, f := range files {
		ps = append(ps, strace.NewParser(strings.NewReader(f[1]), f[0], strace.Options{}))
	}
	m := strace.Merge(ps...)
	m.Choose(cs)
	var got [][2]int
	for {
		ev, err := m.Next()
		if err == io.EOF {
			return got, m.Refused()
		}
		require.NoError(t, err)
		k, _ := m.Last()
		require.Equal(t, ev.File, files[k][0])
		got = append(got, [2]int{ev.Pid, ev.Line})
	}
}

// TestMergeChoose: a choice puts one event of the stream it names at its
// position (without timestamps, a RunOn choice lets that stream go on); a
// stream whose task no clone has made yet, one at its end and a read of a
// pipe nothing has written are refused.
func TestMergeChoose(t *testing.T) {
	main := strings.Join([]string{
		`clone3({flags=CLONE_VM|CLONE_FILES|CLONE_THREAD}, 88) = 11`,
		`clone3({flags=CLONE_VM|CLONE_FILES|CLONE_THREAD}, 88) = 12`,
		`close(3) = 0`,
		`close(4) = 0`,
	}, "\n") + "\n"
	thread := "lseek(3, 0, SEEK_CUR) = 0\nlseek(3, 0, SEEK_CUR) = 0\n"
	files := [][2]string{{"t.10", main}, {"t.11", thread}, {"t.12", thread}}

	got, refused := chooseOrder(t, files, nil)
	require.Empty(t, refused)
	require.Equal(t, [][2]int{{10, 1}, {11, 1}, {11, 2}, {10, 2}, {12, 1}, {12, 2}, {10, 3}, {10, 4}}, got)

	// One event of main between the first thread's two.
	got, refused = chooseOrder(t, files, []strace.Choice{{At: 2, Stream: 0}})
	require.Empty(t, refused)
	require.Equal(t, [][2]int{{10, 1}, {11, 1}, {10, 2}, {12, 1}, {12, 2}, {11, 2}, {10, 3}, {10, 4}}, got)

	// Main runs on: the thread its clone makes runs next, then main to
	// its end, then the first thread.
	got, refused = chooseOrder(t, files, []strace.Choice{{At: 2, Stream: 0, RunOn: true}})
	require.Empty(t, refused)
	require.Equal(t, [][2]int{{10, 1}, {11, 1}, {10, 2}, {12, 1}, {12, 2}, {10, 3}, {10, 4}, {11, 2}}, got)

	// The second thread before its clone; the first after its end.
	got, refused = chooseOrder(t, files, []strace.Choice{{At: 1, Stream: 2}, {At: 4, Stream: 1}})
	require.Equal(t, []strace.Choice{{At: 1, Stream: 2}, {At: 4, Stream: 1}}, refused)
	require.Len(t, got, 8)

	// With timestamps: the chosen event swaps with the earliest.
	timed := [][2]string{
		{"u.20", "10:00:00.000001 lseek(3, 0, SEEK_CUR) = 0\n10:00:00.000003 lseek(3, 0, SEEK_CUR) = 0\n"},
		{"u.21", "10:00:00.000002 lseek(3, 0, SEEK_CUR) = 0\n10:00:00.000004 lseek(3, 0, SEEK_CUR) = 0\n"},
	}
	got, refused = chooseOrder(t, timed, []strace.Choice{{At: 2, Stream: 1}})
	require.Empty(t, refused)
	require.Equal(t, [][2]int{{20, 1}, {21, 1}, {21, 2}, {20, 2}}, got)
	_, refused = chooseOrder(t, timed, []strace.Choice{{At: 0, Stream: 1}})
	require.Equal(t, []strace.Choice{{At: 0, Stream: 1}}, refused, "u.21 has not begun")

	// A read of a pipe that nothing has written waits for the writer.
	piped := [][2]string{
		{"p.30", "pipe2([3, 4], 0) = 0\nclone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 31\nread(3, \"x\", 1) = 1\n"},
		{"p.31", "close(0) = 0\nwrite(4, \"x\", 1) = 1\n"},
	}
	got, refused = chooseOrder(t, piped, nil)
	require.Empty(t, refused)
	require.Equal(t, [][2]int{{30, 1}, {30, 2}, {31, 1}, {31, 2}, {30, 3}}, got)
	_, refused = chooseOrder(t, piped, []strace.Choice{{At: 3, Stream: 0}})
	require.Equal(t, []strace.Choice{{At: 3, Stream: 0}}, refused)
}

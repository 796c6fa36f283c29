package replay

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStdoutIsTheStartingFd1: what Options.Stdout is given (the program's
// announcements, which a crash checker reads) is what the program wrote to
// fd 1 as it had it at its start, or to any fd duplicated from it, in any
// process that inherited it; not what it wrote to an fd 1 that a dup2 of the
// trace made a file, pipe or socket. With and without Verify: the fd numbers
// a call got follow the recording either way.
func TestStdoutIsTheStartingFd1(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"the shell's redirection, fd 10 open before the trace", []string{
			`100 execve("/bin/sh", ["sh"], 0x7ffd /* 1 var */) = 0`,
			`100 openat(AT_FDCWD, "/w/notes.txt", O_WRONLY|O_CREAT|O_APPEND, 0666) = 3`,
			`100 fcntl(1, F_DUPFD, 10) = 11`,
			`100 close(1) = 0`,
			`100 fcntl(11, F_SETFD, FD_CLOEXEC) = 0`,
			`100 dup2(3, 1) = 1`,
			`100 close(3) = 0`,
			`100 write(1, "line 1\n", 7) = 7`,
			`100 dup2(11, 1) = 1`,
			`100 close(11) = 0`,
			`100 write(1, "committed 1\n", 12) = 12`,
		}, "committed 1\n"},
		{"a duplicate of fd 1", []string{
			`100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`,
			`100 fcntl(1, F_DUPFD_CLOEXEC, 10) = 10`,
			`100 write(10, "via the copy\n", 13) = 13`,
			`100 write(1, "direct\n", 7) = 7`,
		}, "via the copy\ndirect\n"},
		{"a socketpair made fd 1", []string{
			`100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`,
			`100 socketpair(AF_UNIX, SOCK_STREAM, 0, [3, 4]) = 0`,
			`100 write(1, "before\n", 7) = 7`,
			`100 dup2(3, 1) = 1`,
			`100 write(1, "protocol", 8) = 8`,
		}, "before\n"},
		{"a pipe made fd 1", []string{
			`100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`,
			`100 pipe2([3, 4], 0) = 0`,
			`100 dup2(4, 1) = 1`,
			`100 write(1, "to the pipe\n", 12) = 12`,
		}, ""},
		{"cat: copy_file_range from a file the trace wrote", []string{
			`100 execve("/bin/cat", ["cat", "b.txt"], 0x7ffd /* 1 var */) = 0`,
			`100 openat(AT_FDCWD, "/w/b.txt", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3`,
			`100 write(3, "6\n", 2) = 2`,
			`100 close(3) = 0`,
			`100 openat(AT_FDCWD, "/w/b.txt", O_RDONLY) = 3`,
			`100 copy_file_range(3, NULL, 1, NULL, 9223372035781033984, 0) = 2`,
			`100 copy_file_range(3, NULL, 1, NULL, 9223372035781033984, 0) = 0`,
			`100 lseek(3, 0, SEEK_SET) = 0`,
			`100 sendfile(1, 3, NULL, 4096) = 2`,
			`100 sendfile(1, 3, [1], 4096) = 1`,
		}, "6\n6\n\n"},
		{"writev", []string{
			`100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`,
			`100 writev(1, [{iov_base="com", iov_len=3}, {iov_base="mitted\n", iov_len=7}], 2) = 10`,
		}, "committed\n"},
		{"a child inherits it", []string{
			`100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`,
			`100 clone(child_stack=NULL, flags=SIGCHLD) = 101`,
			`101 write(1, "child\n", 6) = 6`,
			`100 write(1, "parent\n", 7) = 7`,
		}, "child\nparent\n"},
	}
	for _, tc := range cases {
		for _, verify := range []bool{false, true} {
			t.Run(tc.name, func(t *testing.T) {
				var got []byte
				rep, err := Run([]string{writeTrace(t, "100 mkdir(\"/w\", 0755) = 0\n"+joinLines(tc.lines))},
					Options{Verify: verify, Stdout: func(b []byte) { got = append(got, b...) }})
				require.NoError(t, err)
				require.Equal(t, tc.want, string(got))
				require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
			})
		}
	}
}

// TestStdoutOfARecording: `sh -c 'echo hello > a.txt; cat a.txt | wc -c >
// b.txt; cat b.txt; rm a.txt'` printed "6\n", which cat copied to its
// standard output with copy_file_range.
func TestStdoutOfARecording(t *testing.T) {
	var got []byte
	replayClean(t, Options{Stdout: func(b []byte) { got = append(got, b...) }}, recordings+"pipeline.o.strace")
	require.Equal(t, "6\n", string(got))
}

package replay

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/vfs"
)

// TestCreatRecording: creat.c opens with O_CREAT (neither O_EXCL nor
// O_TRUNC) three files that existed before the trace: the first fstat, the
// first read and lseek(SEEK_END) show it, each is then inferred (its size,
// bytes, mode), settled as state from before the trace, and noted; the file
// the program did create stays the program's, counted in a note.
func TestCreatRecording(t *testing.T) {
	for _, name := range []string{"creat.strace", "creat.tty.strace"} {
		t.Run(name, func(t *testing.T) {
			var settled []string
			rep := replayClean(t, Options{Settle: func(ino *vfs.Inode) { settled = append(settled, ino.Path()) }}, recordings+name)
			facts := factNotesOf(rep)
			require.Len(t, facts, 3, "%q", facts)
			require.Contains(t, facts[0], "/log, opened with O_CREAT at line 30, existed before the trace: the call shows its size, 100")
			require.Contains(t, facts[1], "/data, opened with O_CREAT at line 36, existed before the trace: the call shows 14 byte(s) read")
			require.Contains(t, facts[2], "/big, opened with O_CREAT at line 41, existed before the trace: the call shows its end, at 4096")
			require.Contains(t, rep.Notes, "1 file(s) opened with O_CREAT and neither O_EXCL nor O_TRUNC are taken as created by the trace: no recorded result shows that they existed before it")
			for _, f := range []string{"log", "data", "big"} {
				require.True(t, slices.ContainsFunc(settled, func(p string) bool { return len(p) > len(f) && p[len(p)-len(f)-1:] == "/"+f }), "%s settled: %q", f, settled)
			}
			require.False(t, slices.ContainsFunc(settled, func(p string) bool { return len(p) > 4 && p[len(p)-4:] == "/new" }), "the new file is the program's")
		})
	}
}

// TestCreatEvidence: what makes an O_CREAT open's file one that existed,
// and what does not.
func TestCreatEvidence(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lines    []string
		promoted bool
	}{
		{"mode bits the open did not give", []string{
			`openat(AT_FDCWD, "/w/f", O_RDWR|O_CREAT, 0600) = 3`,
			`fstat(3, {st_mode=S_IFREG|0644, st_size=0, ...}) = 0`,
		}, true},
		{"mode bits the umask took", []string{
			`openat(AT_FDCWD, "/w/f", O_RDWR|O_CREAT, 0666) = 3`,
			`fstat(3, {st_mode=S_IFREG|0644, st_size=0, ...}) = 0`,
		}, false},
		{"a size after the program's own write", []string{
			`openat(AT_FDCWD, "/w/f", O_RDWR|O_CREAT, 0644) = 3`,
			`write(3, "abc", 3) = 3`,
			`fstat(3, {st_mode=S_IFREG|0644, st_size=3, ...}) = 0`,
		}, false},
		{"O_TRUNC", []string{
			`openat(AT_FDCWD, "/w/f", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3`,
			`fstat(3, {st_mode=S_IFREG|0644, st_size=0, ...}) = 0`,
		}, false},
		{"a path stat", []string{
			`openat(AT_FDCWD, "/w/f", O_WRONLY|O_CREAT|O_APPEND, 0644) = 3`,
			`newfstatat(AT_FDCWD, "/w/f", {st_mode=S_IFREG|0644, st_size=7, ...}, 0) = 0`,
			`write(3, "x", 1) = 1`,
			`lseek(3, 0, SEEK_CUR) = 8`,
		}, true},
		{"appends before the size", []string{
			`openat(AT_FDCWD, "/w/f", O_WRONLY|O_CREAT|O_APPEND, 0644) = 3`,
			`write(3, "abc", 3) = 3`,
			`pwritev2(3, [{iov_base="de", iov_len=2}], 1, -1, RWF_APPEND) = 2`,
			`fstat(3, {st_mode=S_IFREG|0644, st_size=8197, ...}) = 0`,
			`openat(AT_FDCWD, "/w/f", O_RDONLY) = 4`,
			`lseek(4, 0, SEEK_DATA) = 8192`, // the appended bytes moved to the end
			`pread64(4, "abcde", 10, 8192) = 5`,
		}, true},
		{"pread", []string{
			`openat(AT_FDCWD, "/w/f", O_RDWR|O_CREAT, 0644) = 3`,
			`pread64(3, "ab", 10, 5) = 2`,
			`fstat(3, {st_mode=S_IFREG|0644, st_size=7, ...}) = 0`,
		}, true},
		{"a size after a write in place", []string{
			`openat(AT_FDCWD, "/w/f", O_RDWR|O_CREAT, 0644) = 3`,
			`pwrite64(3, "abc", 3, 0) = 3`,
			`fstat(3, {st_mode=S_IFREG|0644, st_size=12, ...}) = 0`,
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run([]string{writeTrace(t, "mkdir(\"/w\", 0755) = 0\n"+joinLines(tc.lines))}, Options{Verify: true})
			require.NoError(t, err)
			if tc.name == "a size after a write in place" {
				// where the program's bytes went in a file of 12 is
				// not shown: no promotion, the size diverges
				require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
				require.Empty(t, factNotesOf(rep))
				return
			}
			require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
			if tc.promoted {
				require.Len(t, factNotesOf(rep), 1, "%q", rep.Notes)
				require.Contains(t, factNotesOf(rep)[0], "/w/f, opened with O_CREAT at line 2, existed before the trace")
				require.NotContains(t, rep.Notes, "1 file(s) opened with O_CREAT and neither O_EXCL nor O_TRUNC are taken as created by the trace: no recorded result shows that they existed before it")
				return
			}
			require.Empty(t, factNotesOf(rep))
		})
	}
}

// TestCreatAppendRecording: coreutils truncate's O_CREAT open of a log the
// shell had appended to, then fstat: the log existed, its appended bytes
// at its end.
func TestCreatAppendRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"truncate.strace")
	facts := strings.Join(factNotesOf(rep), "\n")
	require.Contains(t, facts, "truncate.strace:313: newfstatat: /tmp/iosim/log, opened with O_CREAT at line 187, existed before the trace: the call shows its size, 8, past the 4 byte(s) the program appended")
	require.Contains(t, rep.Notes, "1 file(s) opened with O_CREAT and neither O_EXCL nor O_TRUNC are taken as created by the trace: no recorded result shows that they existed before it")
}

// joinLines joins trace lines, each ended by a newline.
func joinLines(lines []string) string {
	out := ""
	for _, l := range lines {
		out += l + "\n"
	}
	return out
}

// TestAttachedRecording: a trace attached with -p to a process holding its
// log open: without -y, the reopen with O_CREAT|O_APPEND and fstat show the
// log existed; with -y, the fd's path is known, and an AT_EMPTY_PATH stat of
// the fd does not make it a directory.
func TestAttachedRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"attach.strace")
	require.Contains(t, strings.Join(factNotesOf(rep), "\n"), "attach.strace:7: newfstatat: /tmp/iosim/log, opened with O_CREAT at line 6, existed before the trace: the call shows its size, 24")
	rep = replayClean(t, Options{}, recordings+"attach.tty.strace")
	require.Contains(t, rep.Notes[0], "1 process(es) began before the trace")
}

package replay

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// factNotesOf returns the notes of rep that say what a recorded result
// showed of the world before the trace.
func factNotesOf(rep *Report) []string {
	var out []string
	for _, n := range rep.Notes {
		if strings.HasPrefix(n, "inferred: ") {
			out = append(out, n)
		}
	}
	return out
}

// TestFailedCallsRecording: failed.c's failed calls (a RENAME_NOREPLACE
// that found its target, an O_DIRECTORY open of a file, a rename to a name
// ending in a slash, a link over an existing name, an O_NOFOLLOW open of a
// symlink, a stat below a file, misaligned O_DIRECT reads) are the only
// evidence of the files they name: both recordings replay clean, each fact
// noted with its line.
func TestFailedCallsRecording(t *testing.T) {
	for _, name := range []string{"failed.strace", "failed.tty.strace"} {
		t.Run(name, func(t *testing.T) {
			rep := replayClean(t, Options{}, recordings+name)
			facts := factNotesOf(rep)
			want := []string{
				"renameat2 = -1 EEXIST: the source of a rename that found its target: ", "/a existed before the trace",
				"renameat2 = -1 EEXIST: RENAME_NOREPLACE found the target: ", "/b existed",
				"openat = -1 ENOTDIR: not a directory on the way: ", "/f existed before the trace, a file (not a directory)",
				"rename = -1 ENOTDIR: a rename to a name ending in a slash: ", "/g existed",
				"link = -1 EEXIST: the source of a link that found its new name taken: ", "/h existed",
				"openat = -1 ELOOP: O_NOFOLLOW refused the last component: ", "/l existed before the trace, a symlink",
				"read = -1 EINVAL: an O_DIRECT read that failed its alignment check at offset 0: ", "/data held data",
				"pread64 = -1 EINVAL: an O_DIRECT read that failed its alignment check at offset 4096: ", "/data held data",
			}
			require.Len(t, facts, len(want)/2, "%q", facts)
			for k := range facts {
				require.Contains(t, facts[k], recordings+name+":")
				require.Contains(t, facts[k], want[2*k])
				require.Contains(t, facts[k], want[2*k+1])
			}
		})
	}
}

// TestFailedCallsEvidence: each kind of failed call, alone, makes what it
// shows exist (the recorded results after it agree), and what it does not
// decide is noted and not guessed.
func TestFailedCallsEvidence(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		note  string // a fact note contains it
	}{
		{"renameat2 noreplace", []string{
			`renameat2(AT_FDCWD, "/w/a", AT_FDCWD, "/w/b", RENAME_NOREPLACE) = -1 EEXIST (File exists)`,
			`rename("/w/a", "/w/c") = 0`,
			`newfstatat(AT_FDCWD, "/w/b", {st_mode=S_IFREG|0644, st_size=0, ...}, 0) = 0`,
		}, "/w/a existed"},
		{"linkat", []string{
			`linkat(AT_FDCWD, "/w/a", AT_FDCWD, "/w/b", 0) = -1 EEXIST (File exists)`,
			`unlink("/w/a") = 0`,
			`unlink("/w/b") = 0`,
		}, "/w/b existed"},
		{"symlink", []string{
			`symlink("x", "/w/s") = -1 EEXIST (File exists)`,
		}, "/w/s existed"},
		{"enotdir under a file", []string{
			`openat(AT_FDCWD, "/w/f/x", O_RDONLY) = -1 ENOTDIR (Not a directory)`,
			`openat(AT_FDCWD, "/w/f", O_RDONLY) = 3`,
		}, "/w/f existed before the trace, a file"},
		{"enotdir trailing slash", []string{
			`newfstatat(AT_FDCWD, "/w/f/", 0x7ffc, 0) = -1 ENOTDIR (Not a directory)`,
		}, "/w/f existed"},
		{"chdir", []string{
			`chdir("/w/f") = -1 ENOTDIR (Not a directory)`,
		}, "/w/f existed"},
		{"enotdir which component", []string{
			`openat(AT_FDCWD, "/w/x/y/z", O_RDONLY) = -1 ENOTDIR (Not a directory)`,
		}, "one of the components of /w/x/y/z from /w/x on is not a directory; which is not shown: nothing inferred"},
		{"contradiction", []string{
			`openat(AT_FDCWD, "/w/f", O_RDONLY|O_DIRECTORY) = 3`,
			`getdents64(3, [{d_ino=2, d_off=1, d_reclen=24, d_type=DT_REG, d_name="e"}], 32768) = 24`,
			`close(3) = 0`,
			`openat(AT_FDCWD, "/w/f/", O_RDONLY|O_NOFOLLOW|O_PATH) = -1 ENOTDIR (Not a directory)`,
		}, "contradiction: the model's /w/f is all directories (inferred earlier), where Linux found one that is not; kept"},
		{"rename onto a directory", []string{
			`rename("/w/f", "/w/d") = -1 EISDIR (Is a directory)`,
			`rmdir("/w/d") = 0`,
			`unlink("/w/f") = 0`,
		}, "/w/d existed before the trace, a directory"},
		{"rename of a directory onto a file", []string{
			`mkdir("/w/d", 0755) = 0`,
			`rename("/w/d", "/w/f") = -1 ENOTDIR (Not a directory)`,
			`unlink("/w/f") = 0`,
		}, "the target of a rename of a directory: /w/f existed before the trace, a file"},
		{"o_nofollow", []string{
			`openat(AT_FDCWD, "/w/l", O_RDONLY|O_NOFOLLOW) = -1 ELOOP (Too many levels of symbolic links)`,
			`newfstatat(AT_FDCWD, "/w/l", {st_mode=S_IFLNK|0777, st_size=1, ...}, AT_SYMLINK_NOFOLLOW) = 0`,
		}, "/w/l existed before the trace, a symlink"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTrace(t, "mkdir(\"/w\", 0755) = -1 EEXIST (File exists)\n"+strings.Join(tc.lines, "\n")+"\n")
			rep, err := Run([]string{p}, Options{Verify: true})
			require.NoError(t, err)
			facts := strings.Join(factNotesOf(rep), "\n")
			if tc.name == "contradiction" || tc.name == "enotdir which component" {
				// Not decided, or decided otherwise before: the model is
				// left as it is, and the call diverges.
				require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
				require.Contains(t, facts, tc.note)
				return
			}
			require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
			require.Contains(t, facts, tc.note)
		})
	}
}

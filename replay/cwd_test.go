package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStartingDirectory: when neither Options.Cwd nor the trace (-y's
// AT_FDCWD</path>, getcwd) shows where the program ran, its relative paths
// resolve in CwdFallback, else where Root puts its tree, else /tmp/iosim;
// a note says so and names the first call that depended on it, and none
// is given when no relative path did.
func TestStartingDirectory(t *testing.T) {
	start := `100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`
	rel := []string{start, `100 openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3`, `100 write(3, "x", 1) = 1`}
	snap := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(snap, "old"), []byte("old"), 0o644))
	const prefix = "the trace does not show the directory the program started in: taken as "
	cases := []struct {
		name  string
		lines []string
		opts  Options
		note  string // "" for no note about the starting directory; LINE is the trace
		at    string // the path f resolved to
	}{
		{"the default", rel, Options{}, "/tmp/iosim, the default (pass --cwd to say where it ran); the first relative path that depends on it: LINE:2", "/tmp/iosim/f"},
		{"the fallback", rel, Options{CwdFallback: "/srv/app", CwdFallbackFrom: "--workload-dir"}, "/srv/app, --workload-dir (pass --cwd to say where it ran); the first relative path that depends on it: LINE:2", "/srv/app/f"},
		{"Root's directory", rel, Options{Root: snap + ":/srv/app"}, "/srv/app, --root's directory", "/srv/app/f"},
		{"Root at its own path", rel, Options{Root: snap}, snap + ", --root's directory", snap + "/f"},
		{"Cwd", rel, Options{Cwd: "/srv/app", CwdFallback: "/elsewhere"}, "", "/srv/app/f"},
		{"getcwd", []string{start, `100 getcwd("/home/u", 4096) = 8`, rel[1], rel[2]}, Options{CwdFallback: "/elsewhere"}, "", "/home/u/f"},
		{"-y", []string{start, `100 openat(AT_FDCWD</home/v>, "f", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3</home/v/f>`}, Options{CwdFallback: "/elsewhere"}, "", "/home/v/f"},
		{"absolute paths only", []string{start, `100 openat(AT_FDCWD, "/data/f", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3`}, Options{}, "", "/data/f"},
		{"a chdir to an absolute path first", []string{start, `100 chdir("/data") = 0`, rel[1]}, Options{}, "", "/data/f"},
		{"a relative chdir", []string{start, `100 mkdir("sub", 0755) = 0`, `100 chdir("sub") = 0`, rel[1]}, Options{}, "/tmp/iosim, the default (pass --cwd to say where it ran); the first relative path that depends on it: LINE:2", "/tmp/iosim/sub/f"},
		{"a relative rename", []string{start, `100 rename("/data/a", "b") = 0`}, Options{}, "the first relative path that depends on it: LINE:2", "/tmp/iosim/b"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTrace(t, joinLines(tc.lines))
			opts := tc.opts
			opts.Verify = true
			rep, err := Run([]string{p}, opts)
			require.NoError(t, err)
			require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
			var got []string
			for _, n := range rep.Notes {
				if strings.HasPrefix(n, prefix) {
					got = append(got, n)
				}
			}
			if tc.note == "" {
				require.Empty(t, got)
			} else {
				require.Len(t, got, 1)
				require.Contains(t, got[0], strings.ReplaceAll(tc.note, "LINE", p))
			}
			// Where f is: once its absolute path is unlinked, it is gone.
			base := tc.at[strings.LastIndex(tc.at, "/")+1:]
			check := append(append([]string{}, tc.lines...), `100 unlink("`+tc.at+`") = 0`, `100 openat(AT_FDCWD, "`+base+`", O_RDONLY) = -1 ENOENT (No such file or directory)`)
			rep, err = Run([]string{writeTrace(t, joinLines(check))}, opts)
			require.NoError(t, err)
			require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
		})
	}
}

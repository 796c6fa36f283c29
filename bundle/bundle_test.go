package bundle

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// A snapshot keeps modes, times, symbolic links, hard links and holes.
func TestSnapshotPreserves(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	require.NoError(t, os.MkdirAll(filepath.Join(src, "sub", "deep"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "exec.sh"), []byte("#!/bin/sh\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(src, "sub", "secret"), []byte("s"), 0o600))
	require.NoError(t, os.Chmod(filepath.Join(src, "sub", "secret"), 0o600|os.ModeSetgid))
	require.NoError(t, os.Symlink("sub/secret", filepath.Join(src, "rel-link")))
	require.NoError(t, os.Symlink("/nowhere/at/all", filepath.Join(src, "dangling")))
	require.NoError(t, os.Link(filepath.Join(src, "exec.sh"), filepath.Join(src, "sub", "hard")))
	// a sparse file: 4 KiB of data at 1 MiB, 2 MiB long
	sparse := filepath.Join(src, "sparse")
	f, err := os.Create(sparse)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte(strings.Repeat("x", 4096)), 1<<20)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(2<<20))
	require.NoError(t, f.Close())
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	require.NoError(t, os.Chtimes(sparse, old, old))
	require.NoError(t, os.Chmod(filepath.Join(src, "sub"), 0o711))
	require.NoError(t, os.Chtimes(filepath.Join(src, "sub"), old, old))

	dst := filepath.Join(t.TempDir(), "snap")
	st, err := Snapshot(src, dst)
	require.NoError(t, err)
	require.Equal(t, SnapshotStats{Dirs: 3, Files: 3, Symlinks: 2, HardLinks: 1, Bytes: st.Bytes}, st)

	mode := func(p string) os.FileMode {
		fi, err := os.Lstat(filepath.Join(dst, p))
		require.NoError(t, err)
		return fi.Mode()
	}
	require.Equal(t, os.FileMode(0o755), mode("exec.sh"))
	require.Equal(t, 0o600|os.ModeSetgid, mode("sub/secret"))
	require.Equal(t, os.ModeDir|0o711, mode("sub"))
	for link, target := range map[string]string{"rel-link": "sub/secret", "dangling": "/nowhere/at/all"} {
		got, err := os.Readlink(filepath.Join(dst, link))
		require.NoError(t, err)
		require.Equal(t, target, got)
	}
	a, err := os.Stat(filepath.Join(dst, "exec.sh"))
	require.NoError(t, err)
	b, err := os.Stat(filepath.Join(dst, "sub", "hard"))
	require.NoError(t, err)
	require.True(t, os.SameFile(a, b), "two names of one file stay one file")

	fi, err := os.Stat(filepath.Join(dst, "sparse"))
	require.NoError(t, err)
	require.EqualValues(t, 2<<20, fi.Size())
	require.True(t, fi.ModTime().Equal(old), "mtime %v", fi.ModTime())
	sub, err := os.Stat(filepath.Join(dst, "sub"))
	require.NoError(t, err)
	require.True(t, sub.ModTime().Equal(old), "a directory's mtime is set after its contents")
	data, err := os.ReadFile(filepath.Join(dst, "sparse"))
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("\x00", 1<<20)+strings.Repeat("x", 4096)+strings.Repeat("\x00", 1<<20-4096), string(data))
	srcFi, err := os.Stat(sparse)
	require.NoError(t, err)
	if blocks := srcFi.Sys().(*syscall.Stat_t).Blocks; blocks*512 < 1<<20 {
		// the host file system keeps holes: the copy keeps them too
		require.Equal(t, blocks, fi.Sys().(*syscall.Stat_t).Blocks)
		require.EqualValues(t, 4096+len("#!/bin/sh\n")+len("s"), st.Bytes, "data bytes only")
	}
}

// A named pipe in the workload directory is refused, by name.
func TestSnapshotRefusesSpecialFiles(t *testing.T) {
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "a"), []byte("a"), 0o644))
	require.NoError(t, unix.Mkfifo(filepath.Join(src, "fifo"), 0o644))
	_, err := Snapshot(src, filepath.Join(t.TempDir(), "snap"))
	require.ErrorContains(t, err, filepath.Join(src, "fifo")+": a named pipe: a snapshot copies regular files, directories and symbolic links only")
}

// writeBundle makes a whole bundle in a temp dir with manifest m.
func writeBundle(t *testing.T, m any) string {
	t.Helper()
	dir := t.TempDir()
	raw, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ManifestFile), raw, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, TraceFile), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, StdoutFile), nil, 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, SnapshotDir), 0o755))
	return dir
}

func goodManifest() Manifest {
	return Manifest{Format: Format, Version: Version, Argv: []string{"prog"}, Cwd: "/w", WorkloadDir: "/w", StringLimit: 64}
}

func TestOpen(t *testing.T) {
	dir := writeBundle(t, goodManifest())
	b, err := Open(dir)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "snapshot")+":/w", b.Root())
	require.Equal(t, filepath.Join(dir, "trace.strace"), b.Trace())

	for _, tc := range []struct {
		name string
		edit func(m *Manifest)
		want string
	}{
		{"format", func(m *Manifest) { m.Format = "other" }, `bundle.json: format "other", want "iosim-bundle"`},
		{"version", func(m *Manifest) { m.Version = 2 }, "bundle.json: version 2: this iosim reads bundles of version 1"},
		{"argv", func(m *Manifest) { m.Argv = nil }, "bundle.json: argv is empty"},
		{"cwd", func(m *Manifest) { m.Cwd = "w" }, `bundle.json: cwd "w" is not an absolute path`},
		{"workload_dir", func(m *Manifest) { m.WorkloadDir = "" }, `bundle.json: workload_dir "" is not an absolute path`},
		{"string_limit", func(m *Manifest) { m.StringLimit = 0 }, "bundle.json: string_limit 0"},
	} {
		m := goodManifest()
		tc.edit(&m)
		_, err := Open(writeBundle(t, m))
		require.ErrorContains(t, err, tc.want, tc.name)
	}

	_, err = Open(writeBundle(t, map[string]any{"format": Format, "version": 1, "colour": "blue"}))
	require.ErrorContains(t, err, `bundle.json: not a bundle manifest: json: unknown field "colour"`)

	for _, part := range []string{TraceFile, StdoutFile, SnapshotDir} {
		dir := writeBundle(t, goodManifest())
		require.NoError(t, os.RemoveAll(filepath.Join(dir, part)))
		_, err := Open(dir)
		require.ErrorContains(t, err, filepath.Join(dir, part)+": the bundle lacks it")
	}
	dir = writeBundle(t, goodManifest())
	require.NoError(t, os.Remove(filepath.Join(dir, SnapshotDir)))
	require.NoError(t, os.WriteFile(filepath.Join(dir, SnapshotDir), nil, 0o644))
	_, err = Open(dir)
	require.ErrorContains(t, err, filepath.Join(dir, SnapshotDir)+": not a directory")

	_, err = Open(t.TempDir())
	require.ErrorContains(t, err, "not a bundle: no bundle.json")
}

// Record keeps the program's stdout, exit status and argv, copies the
// workload directory as it was before the run, and counts the strings that
// -s cut.
func TestRecord(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (apt-get install strace)")
	}
	work := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(work, "before"), []byte("before"), 0o640))
	out := filepath.Join(t.TempDir(), "rec")
	var stdout, stderr strings.Builder
	rec, err := Record(RecordOptions{
		Out: out, WorkloadDir: work, StringLimit: 8, Stdout: &stdout, Stderr: &stderr,
		Argv: []string{"sh", "-c", "echo 0123456789abcdef > after; echo done; exit 5"},
	})
	require.NoError(t, err, stderr.String())
	require.Equal(t, "done\n", stdout.String())
	b, err := Open(out)
	require.NoError(t, err)
	require.Equal(t, rec.Bundle.Manifest, b.Manifest)
	require.Equal(t, 5, b.ExitStatus)
	require.Equal(t, work, b.Cwd)
	require.Equal(t, 8, b.StringLimit)
	require.Equal(t, append(append([]string{}, StraceArgs...), "-s", "8"), b.StraceArgs)
	require.True(t, strings.HasPrefix(b.Strace, "strace -- version "), b.Strace)
	require.NotEmpty(t, b.Kernel)
	// "0123456789abcdef\n" is longer than 8: cut; so are the execve's strings
	require.Positive(t, b.CutStrings)
	require.Len(t, rec.Notes, 1)
	require.Contains(t, rec.Notes[0], "longer than -s 8")
	trace, err := os.ReadFile(b.Trace())
	require.NoError(t, err)
	require.Contains(t, string(trace), `"01234567"...`)
	longest := 0
	for _, l := range strings.Split(string(trace), "\n") {
		longest = max(longest, len(l)+1)
	}
	require.Equal(t, longest, b.LongestLine)
	ents, err := os.ReadDir(b.Snapshot())
	require.NoError(t, err)
	require.Len(t, ents, 1, "the snapshot is the directory before the run")
	require.Equal(t, "before", ents[0].Name())
	got, err := os.ReadFile(b.StdoutPath())
	require.NoError(t, err)
	require.Equal(t, "done\n", string(got))

	// Out must be free: an existing, non-empty directory is refused untouched
	_, err = Record(RecordOptions{Out: out, WorkloadDir: work, Argv: []string{"true"}})
	require.ErrorContains(t, err, "exists and is not empty")
	_, err = Open(out)
	require.NoError(t, err)

	// a program strace cannot start leaves no bundle
	notExec := filepath.Join(work, "not-exec")
	require.NoError(t, os.WriteFile(notExec, []byte("x"), 0o644))
	out2 := filepath.Join(t.TempDir(), "rec")
	_, err = Record(RecordOptions{Out: out2, WorkloadDir: work, Argv: []string{notExec}})
	require.ErrorContains(t, err, "not an executable file")
	require.NoDirExists(t, out2)
}

// A workload directory reached through a symbolic link is recorded by its
// real path, with a note.
func TestRecordSymlinkedWorkloadDir(t *testing.T) {
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed (apt-get install strace)")
	}
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "link")
	require.NoError(t, os.Symlink(real, link))
	rec, err := Record(RecordOptions{Out: filepath.Join(t.TempDir(), "rec"), WorkloadDir: link, Argv: []string{"true"}})
	require.NoError(t, err)
	require.Equal(t, real, rec.Bundle.Cwd)
	require.Equal(t, real, rec.Bundle.WorkloadDir)
	require.Len(t, rec.Notes, 1)
	require.Contains(t, rec.Notes[0], "once symbolic links are resolved")
}

type failWriter struct{ n int }

func (f *failWriter) Write(b []byte) (int, error) {
	f.n++
	return 0, os.ErrClosed
}

// The program's output reaches the bundle's file whole when passing it on
// fails.
func TestTeeKeepsTheFile(t *testing.T) {
	var file strings.Builder
	fail := &failWriter{}
	w := &tee{file: &file, pass: fail}
	for _, s := range []string{"one\n", "two\n"} {
		n, err := w.Write([]byte(s))
		require.NoError(t, err)
		require.Equal(t, len(s), n)
	}
	require.Equal(t, "one\ntwo\n", file.String())
	require.Equal(t, 1, fail.n, "passing on stops at the first failure")
}

package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReplay feeds arbitrary trace text to a verifying replay: whatever the input,
// the replay ends with a report or an error, never a panic or a hang.
func FuzzReplay(f *testing.F) {
	for _, name := range []string{"fdtable.basic", "fdtable.namespace", "sparse.seekdata", "aio.dbwr", "threads.f"} {
		data, err := os.ReadFile(traces + name + ".strace")
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i+8 <= len(lines); i += 8 {
			f.Add(strings.Join(lines[i:i+8], "\n"))
		}
	}
	// the shapes of the recordings: strace's stderr, AIO, O_TMPFILE, shifts
	for _, name := range []string{"pipeline.stderr.strace", "errout.stderr.strace", "aio.strace", "aio-badaddr.strace", "tmpfile.strace", "shift.strace"} {
		data, err := os.ReadFile(recordings + name)
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := len(lines) / 2; i+16 <= len(lines); i += 48 {
			f.Add(strings.Join(lines[i:i+16], "\n"))
		}
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "fuzz.strace")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Run([]string{p}, Options{Verify: true, KeepGoing: true, MaxLineLen: 1 << 16})
		_, _ = Run([]string{p}, Options{Verify: true})
	})
}

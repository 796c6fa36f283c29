// Package bundle reads and writes recording bundles: what `iosim record` keeps
// of one run of a program under strace, so that `iosim replay BUNDLE` and
// `iosim crash BUNDLE` need no other flag.
//
// A bundle is a directory:
//
//	bundle.json    the manifest (Manifest), format "iosim-bundle", version 1
//	trace.strace   strace -f -ttt -T -y -s N -o of the run
//	snapshot/      a copy of the workload directory made just before the run
//	stdout         what the program wrote to its standard output
//
// The program ran in the workload directory, so the manifest's cwd and
// workload_dir are the same absolute path: a replay puts snapshot/ at that
// path (--root snapshot:/that/path), starts the program there (--cwd) and
// gives external crash checkers that directory (--workload-dir).
//
// The manifest is JSON with the fields of Manifest (their json names). Version
// 1 is the only version; a reader refuses a manifest of another format or
// version, one with a field it does not know, or a bundle whose files are
// missing, with an error naming the file.
package bundle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/iosim/iosim/strace"
)

// The names of a bundle's parts, in its directory.
const (
	ManifestFile = "bundle.json"
	TraceFile    = "trace.strace"
	SnapshotDir  = "snapshot"
	StdoutFile   = "stdout"
)

// Format is the manifest's format field; Version its version.
const (
	Format  = "iosim-bundle"
	Version = 1
)

// Manifest is bundle.json.
type Manifest struct {
	Format  string `json:"format"`  // Format
	Version int    `json:"version"` // Version
	// Argv is the program's command line as given to iosim record.
	Argv []string `json:"argv"`
	// Cwd is the absolute directory the program started in (symbolic links
	// resolved, as the kernel's getcwd reports it).
	Cwd string `json:"cwd"`
	// WorkloadDir is the absolute directory snapshot/ is a copy of.
	WorkloadDir string `json:"workload_dir"`
	// ExitStatus is the program's exit status; 128+N when signal N killed it
	// (Signal then names it).
	ExitStatus int    `json:"exit_status"`
	Signal     string `json:"signal,omitempty"`
	// Strace is the first line of `strace -V`; StraceArgs the options it ran
	// with (before the program's argv), StringLimit their -s.
	Strace      string   `json:"strace_version"`
	StraceArgs  []string `json:"strace_args"`
	StringLimit int      `json:"string_limit"`
	// CutStrings counts the strings of the trace strace printed only a
	// prefix of, being longer than StringLimit (0 when nothing was cut).
	CutStrings int `json:"cut_strings"`
	// LongestLine is the length in bytes of the trace's longest line: a
	// reader of the trace must accept lines this long.
	LongestLine int `json:"longest_line"`
	// Stdout says what the program's standard output was: "pipe" (iosim
	// captured it into the stdout file and passed it on).
	Stdout string `json:"stdout"`
	// Kernel is the release of the kernel that ran the program (uname -r).
	Kernel string `json:"kernel"`
	// Iosim is the version of the iosim that recorded the bundle.
	Iosim string `json:"iosim_version"`
	// Recorded is when the run started, RFC 3339 in UTC.
	Recorded string `json:"recorded"`
}

// Bundle is an opened bundle: its directory and manifest.
type Bundle struct {
	Dir string
	Manifest
}

// Trace, Snapshot and StdoutPath return the paths of the bundle's parts.
func (b *Bundle) Trace() string      { return filepath.Join(b.Dir, TraceFile) }
func (b *Bundle) Snapshot() string   { return filepath.Join(b.Dir, SnapshotDir) }
func (b *Bundle) StdoutPath() string { return filepath.Join(b.Dir, StdoutFile) }

// Root is the replay's --root for the bundle: the snapshot at the workload
// directory's path.
func (b *Bundle) Root() string { return b.Snapshot() + ":" + b.WorkloadDir }

// MaxLineLen is the longest trace line a reader must accept: 0 (the
// parser's default) when the trace's longest line is within it.
func (b *Bundle) MaxLineLen() int {
	if b.LongestLine < strace.DefaultMaxLineLen {
		return 0
	}
	return b.LongestLine + 1
}

// Is reports whether path is a directory (a bundle, or meant as one: Open
// says what it lacks).
func Is(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// Open reads the bundle in dir and checks that it is whole: a manifest of
// this format and version, with absolute directories, and the trace, the
// snapshot directory and the stdout file present. Errors name the file.
func Open(dir string) (*Bundle, error) {
	mpath := filepath.Join(dir, ManifestFile)
	raw, err := os.ReadFile(mpath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: not a bundle: no %s (a bundle is a directory written by iosim record)", dir, ManifestFile)
	}
	if err != nil {
		return nil, err
	}
	b := &Bundle{Dir: dir}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&b.Manifest); err != nil {
		return nil, fmt.Errorf("%s: not a bundle manifest: %v", mpath, err)
	}
	m := &b.Manifest
	switch {
	case m.Format != Format:
		return nil, fmt.Errorf("%s: format %q, want %q", mpath, m.Format, Format)
	case m.Version != Version:
		return nil, fmt.Errorf("%s: version %d: this iosim reads bundles of version %d", mpath, m.Version, Version)
	case len(m.Argv) == 0:
		return nil, fmt.Errorf("%s: argv is empty", mpath)
	case !strings.HasPrefix(m.Cwd, "/"):
		return nil, fmt.Errorf("%s: cwd %q is not an absolute path", mpath, m.Cwd)
	case !strings.HasPrefix(m.WorkloadDir, "/"):
		return nil, fmt.Errorf("%s: workload_dir %q is not an absolute path", mpath, m.WorkloadDir)
	case m.StringLimit <= 0:
		return nil, fmt.Errorf("%s: string_limit %d: want the -s the trace was recorded with", mpath, m.StringLimit)
	}
	for _, p := range []struct {
		name string
		dir  bool
	}{{TraceFile, false}, {SnapshotDir, true}, {StdoutFile, false}} {
		full := filepath.Join(dir, p.name)
		st, err := os.Stat(full)
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s: the bundle lacks it: %v", full, err)
		case p.dir && !st.IsDir():
			return nil, fmt.Errorf("%s: not a directory (the bundle's snapshot)", full)
		case !p.dir && !st.Mode().IsRegular():
			return nil, fmt.Errorf("%s: not a regular file", full)
		}
	}
	return b, nil
}

// write writes the manifest into dir.
func (m *Manifest) write(dir string) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), append(b, '\n'), 0o644)
}

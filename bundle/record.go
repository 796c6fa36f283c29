package bundle

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/strace"
)

// DefaultStringLimit is the -s Record gives strace: writes and reads up to
// 16 MiB are recorded whole.
const DefaultStringLimit = 16 << 20

// StraceArgs are the options Record runs strace with, before -s N and -o
// FILE: every task (-f), an epoch timestamp in microseconds (-ttt), each
// call's duration (-T) and the path of every fd (-y), which is what replay,
// its time comparison and crash exploration read.
var StraceArgs = []string{"-f", "-ttt", "-T", "-y"}

// ErrNoStrace is Record's error when strace is not installed.
var ErrNoStrace = errors.New("strace is not installed (not found in PATH): install it, e.g. apt-get install strace (Debian, Ubuntu) or dnf install strace (Fedora)")

// RecordOptions says what to record and where.
type RecordOptions struct {
	// Out is the bundle directory to write: it must not exist, or be an
	// empty directory, and must not be inside WorkloadDir.
	Out string
	// WorkloadDir is the directory the program runs in and the snapshot
	// copies (default: the current directory).
	WorkloadDir string
	// Argv is the program and its arguments; a program name without a slash
	// is looked up in PATH, one with a slash is relative to WorkloadDir.
	Argv []string
	// StringLimit is strace's -s (default DefaultStringLimit).
	StringLimit int
	// Stdin is the program's standard input; its standard output goes to
	// the bundle's stdout file and to Stdout; its standard error, and
	// strace's messages, to Stderr.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Version is the recording iosim's version, for the manifest.
	Version string
}

// Recording is what Record made.
type Recording struct {
	Bundle   *Bundle
	Snapshot SnapshotStats
	Lines    int // lines of the trace
	// Notes say what the bundle holds that a reader should know (strings cut
	// at the -s limit, the workload directory reached through a symbolic link).
	Notes []string
}

// Record runs o.Argv under strace in o.WorkloadDir, after copying that
// directory into the bundle, and writes the bundle o.Out. A program that
// fails still makes a bundle (its exit status is in the manifest); a program
// that cannot be started, a missing strace, a workload directory that cannot
// be copied or an Out that is not free is an error, and leaves no bundle.
func Record(o RecordOptions) (*Recording, error) {
	if len(o.Argv) == 0 {
		return nil, errors.New("no program to record")
	}
	straceBin, err := exec.LookPath("strace")
	if err != nil {
		return nil, ErrNoStrace
	}
	limit := o.StringLimit
	if limit == 0 {
		limit = DefaultStringLimit
	}
	if limit < 0 {
		return nil, fmt.Errorf("-s %d: want a positive string limit", limit)
	}
	rec := &Recording{}
	dir, err := workloadDir(o.WorkloadDir, rec)
	if err != nil {
		return nil, err
	}
	if err := checkProgram(o.Argv[0], dir); err != nil {
		return nil, err
	}
	out, created, err := makeOut(o.Out, dir)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			cleanOut(out, created)
		}
	}()
	version, err := straceVersion(straceBin)
	if err != nil {
		return nil, err
	}
	if rec.Snapshot, err = Snapshot(dir, filepath.Join(out, SnapshotDir)); err != nil {
		return nil, fmt.Errorf("snapshot of %s: %w", dir, err)
	}
	stdout, err := os.OpenFile(filepath.Join(out, StdoutFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	defer stdout.Close()
	sargs := append(append([]string{}, StraceArgs...), "-s", strconv.Itoa(limit))
	args := append(append(append([]string{}, sargs...), "-o", filepath.Join(out, TraceFile), "--"), o.Argv...)
	cmd := exec.Command(straceBin, args...)
	cmd.Dir = dir
	cmd.Stdin = o.Stdin
	cmd.Stdout = stdout
	if o.Stdout != nil {
		cmd.Stdout = &tee{file: stdout, pass: o.Stdout}
	}
	cmd.Stderr = o.Stderr
	m := Manifest{
		Format: Format, Version: Version, Argv: o.Argv, Cwd: dir, WorkloadDir: dir,
		Strace: version, StraceArgs: sargs, StringLimit: limit, Stdout: "pipe",
		Kernel: kernelRelease(), Iosim: o.Version, Recorded: time.Now().UTC().Format(time.RFC3339),
	}
	runErr := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(runErr, &exit):
		ws, _ := exit.Sys().(syscall.WaitStatus)
		if ws.Signaled() {
			m.ExitStatus, m.Signal = 128+int(ws.Signal()), unix.SignalName(ws.Signal())
		} else {
			m.ExitStatus = ws.ExitStatus()
		}
	case runErr != nil:
		return nil, fmt.Errorf("running strace: %w", runErr)
	}
	if err := stdout.Close(); err != nil {
		return nil, err
	}
	scan, err := scanTrace(filepath.Join(out, TraceFile))
	if err != nil {
		return nil, err
	}
	if !scan.execed {
		return nil, fmt.Errorf("strace did not run %s (exit status %d; its messages are above)", o.Argv[0], m.ExitStatus)
	}
	m.CutStrings, m.LongestLine = scan.cut, scan.longest
	rec.Lines = scan.lines
	if scan.cut > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d string(s) in the trace were longer than -s %d and strace kept only their first %d bytes: what they held beyond is unknown to a replay (record again with a larger -s)", scan.cut, limit, limit))
	}
	if err := m.write(out); err != nil {
		return nil, err
	}
	ok = true
	rec.Bundle = &Bundle{Dir: out, Manifest: m}
	return rec, nil
}

// tee writes the program's output to the bundle's file and passes it on;
// when passing it on fails (a reader that went away), the file still gets
// all of it and the program sees no error.
type tee struct {
	file   io.Writer
	pass   io.Writer
	failed bool
}

func (t *tee) Write(b []byte) (int, error) {
	if _, err := t.file.Write(b); err != nil {
		return 0, err
	}
	if !t.failed {
		if _, err := t.pass.Write(b); err != nil {
			t.failed = true
		}
	}
	return len(b), nil
}

// workloadDir returns the absolute, symlink-free form of dir (default: the
// current directory), noting when it differs from the absolute one.
func workloadDir(dir string, rec *Recording) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("workload directory: %w", err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", fmt.Errorf("workload directory %s is not a directory", dir)
	}
	if real != abs {
		rec.Notes = append(rec.Notes, fmt.Sprintf("the workload directory %s is %s once symbolic links are resolved: the program runs there, and the bundle records that path (what getcwd and strace -y show)", abs, real))
	}
	return real, nil
}

// checkProgram reports a program that cannot be found the way strace would
// look for it: in PATH without a slash, relative to dir with one.
func checkProgram(prog, dir string) error {
	if !strings.Contains(prog, "/") {
		if _, err := exec.LookPath(prog); err != nil {
			return fmt.Errorf("program %s: not found in PATH", prog)
		}
		return nil
	}
	p := prog
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	st, err := os.Stat(p)
	switch {
	case err != nil:
		return fmt.Errorf("program %s: %v (a program path with a slash is relative to the workload directory %s, where it runs)", prog, err, dir)
	case st.IsDir() || st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("program %s: not an executable file", p)
	}
	return nil
}

// makeOut makes the bundle directory (absolute), refusing one that holds
// anything or lies inside the workload directory (the program would see the
// bundle being written, and the snapshot would copy itself). created says
// whether it did not exist before.
func makeOut(out, dir string) (string, bool, error) {
	if out == "" {
		return "", false, errors.New("no bundle directory given (-o OUT)")
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return "", false, err
	}
	// resolve the nearest existing ancestor's symbolic links
	real, rest := abs, ""
	for {
		if r, err := filepath.EvalSymlinks(real); err == nil {
			real = filepath.Join(r, rest)
			break
		}
		parent := filepath.Dir(real)
		if parent == real {
			break
		}
		rest = filepath.Join(filepath.Base(real), rest)
		real = parent
	}
	if real == dir || strings.HasPrefix(real, dir+string(filepath.Separator)) {
		return "", false, fmt.Errorf("bundle directory %s is inside the workload directory %s: the program would see it being written and the snapshot would copy it; put it elsewhere (e.g. -o ../%s)", out, dir, filepath.Base(abs))
	}
	ents, err := os.ReadDir(abs)
	switch {
	case err == nil && len(ents) > 0:
		return "", false, fmt.Errorf("bundle directory %s exists and is not empty", out)
	case err == nil:
		return abs, false, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", false, fmt.Errorf("bundle directory: %w", err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", false, err
	}
	return abs, true, nil
}

// cleanOut removes what a failed Record wrote.
func cleanOut(out string, created bool) {
	if created {
		_ = os.RemoveAll(out)
		return
	}
	for _, n := range []string{ManifestFile, TraceFile, SnapshotDir, StdoutFile} {
		_ = os.RemoveAll(filepath.Join(out, n))
	}
}

// straceVersion returns the first line of `strace -V`.
func straceVersion(bin string) (string, error) {
	b, err := exec.Command(bin, "-V").Output()
	if err != nil {
		return "", fmt.Errorf("%s -V: %w", bin, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

// kernelRelease is uname -r.
func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

type traceScan struct {
	lines, longest, cut int
	execed              bool // a successful execve
}

// scanTrace measures the trace's lines and finds the strings strace cut and
// the program's execve.
func scanTrace(path string) (traceScan, error) {
	var s traceScan
	f, err := os.Open(path)
	if err != nil {
		return s, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	cur := 0
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
		cur += len(chunk)
		if !isPrefix {
			s.lines++
			s.longest = max(s.longest, cur+1)
			cur = 0
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return s, err
	}
	p := strace.NewParser(bufio.NewReaderSize(f, 64<<10), path, strace.Options{KeepGoing: true, MaxLineLen: s.longest + 1})
	for {
		ev, err := p.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return s, err
		}
		if ev.Kind != strace.KindSyscall {
			continue
		}
		if ev.Name == "execve" && ev.RetKnown && ev.Ret == 0 {
			s.execed = true
		}
		s.cut += countCut(ev.Args())
	}
	return s, nil
}

// countCut counts the strings strace printed only a prefix of.
func countCut(ns []strace.Node) int {
	n := 0
	for i := range ns {
		if ns[i].Kind == strace.NodeStr && ns[i].Truncated {
			n++
		}
		n += countCut(ns[i].Kids)
	}
	return n
}

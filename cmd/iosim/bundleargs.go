package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/iosim/iosim/bundle"
)

// bundleArgs is what a bundle given to replay or crash sets: the trace to
// read and the values of the flags that the user did not give.
type bundleArgs struct {
	b     *bundle.Bundle
	files []string
	// root, cwd and workDir are the values to use: the user's flag where
	// given, else the bundle's.
	root, cwd, workDir string
	maxLineLen         int
	notes              []string
}

// openBundleArg opens the bundle when the arguments are one directory (a
// directory among several arguments is an error: a bundle stands alone). It
// returns nil when no argument is a directory. fl's flags root, cwd and (if
// defined) workload-dir, when given, override the bundle's, with a note.
func openBundleArg(fl *flag.FlagSet) (*bundleArgs, error) {
	args := fl.Args()
	var dirs []string
	for _, a := range args {
		if bundle.Is(a) {
			dirs = append(dirs, a)
		}
	}
	if len(dirs) == 0 {
		return nil, nil
	}
	if len(args) > 1 {
		return nil, fmt.Errorf("%s is a directory: a recording bundle is given alone, not with other traces", dirs[0])
	}
	b, err := bundle.Open(dirs[0])
	if err != nil {
		return nil, err
	}
	ba := &bundleArgs{b: b, files: []string{b.Trace()}, root: b.Root(), cwd: b.Cwd, workDir: b.WorkloadDir, maxLineLen: b.MaxLineLen()}
	if b.CutStrings > 0 {
		ba.notes = append(ba.notes, fmt.Sprintf("%d string(s) of %s were cut at strace's -s %d: what they held beyond is unknown", b.CutStrings, b.Trace(), b.StringLimit))
	}
	given := map[string]string{}
	fl.Visit(func(f *flag.Flag) { given[f.Name] = f.Value.String() })
	override := func(name string, dst *string, what string) {
		v, ok := given[name]
		if !ok || v == *dst {
			return
		}
		ba.notes = append(ba.notes, fmt.Sprintf("--%s %s replaces the bundle's %s %s", name, v, what, *dst))
		*dst = v
	}
	override("root", &ba.root, "snapshot")
	override("cwd", &ba.cwd, "cwd")
	if fl.Lookup("workload-dir") != nil {
		override("workload-dir", &ba.workDir, "workload directory")
	}
	return ba, nil
}

// checkStdout compares what the trace shows the program writing to its
// standard output with the bundle's stdout file, and returns a note when they
// differ: checkers get what the trace shows.
func (ba *bundleArgs) checkStdout(announced []byte) string {
	rec, err := os.ReadFile(ba.b.StdoutPath())
	if err != nil {
		return fmt.Sprintf("%s: %v", ba.b.StdoutPath(), err)
	}
	if bytes.Equal(rec, announced) {
		return ""
	}
	i := 0
	for i < len(rec) && i < len(announced) && rec[i] == announced[i] {
		i++
	}
	return fmt.Sprintf("the trace's writes to the program's standard output (%d bytes) differ from the recorded %s (%d bytes) from byte %d on: checkers get what the trace shows", len(announced), ba.b.StdoutPath(), len(rec), i)
}

// printNotes writes notes as note: lines.
func printNotes(w io.Writer, notes []string) {
	for _, n := range notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}

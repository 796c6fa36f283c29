package scenarios

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Ext is the extension of scenario files: `iosim run DIR` and `go test
// ./scenarios` run every file ending in it.
const Ext = ".scen"

// FileResult is the outcome of running one scenario file.
type FileResult struct {
	Path string
	// Mismatches are the commands whose output differs from the expected
	// one, each with a unified diff.
	Mismatches []Mismatch
	// Err is the error that stopped the file: a *MalformedError (exit 2),
	// an *AssertionError (exit 1), or an I/O error.
	Err error
	// Rewritten: the file was rewritten with the actual outputs.
	Rewritten bool
	Commands  int
	// Answers are what the commands that ran found (Scenario.Answers).
	Answers []Answer
}

// Mismatch is one command whose output is not the expected one.
type Mismatch struct {
	Pos  string
	Cmd  string
	Diff string
}

// Passed reports whether the file ran to its end with every output as expected.
func (r *FileResult) Passed() bool { return r.Err == nil && len(r.Mismatches) == 0 }

// RunOptions configure RunFile.
type RunOptions struct {
	// Rewrite replaces each expected output with the actual one and writes
	// the file back (as datadriven's -rewrite).
	Rewrite bool
	// Charts, when set, collects the file's runs and comparisons.
	Charts *Charts
}

// RunFile runs one scenario file outside `go test`: it reads it as
// datadriven does, runs every command, compares (or, with Rewrite, replaces)
// each output.
func RunFile(path string, opts RunOptions) *FileResult {
	res := &FileResult{Path: path}
	f, err := os.Open(path)
	if err != nil {
		res.Err = err
		return res
	}
	blocks, tail, err := readFile(path, f)
	f.Close()
	if err != nil {
		res.Err = err
		return res
	}
	s := New(path)
	s.SVG = opts.Charts
	if opts.Charts != nil {
		opts.Charts.file = path
	}
	defer func() { res.Answers = s.Answers() }()
	var out strings.Builder
	for _, b := range blocks {
		td := b.td
		if !b.hasSep && !opts.Rewrite {
			res.Err = &MalformedError{Pos: td.Pos, Msg: td.Cmd + ": no `----` and expected output follow it ('iosim run --rewrite' writes them)"}
			return res
		}
		actual, err := s.Exec(&td)
		res.Commands++
		if err != nil {
			res.Err = err
			return res
		}
		if actual != "" && !strings.HasSuffix(actual, "\n") {
			actual += "\n"
		}
		out.WriteString(b.pre)
		render(&out, actual)
		if !opts.Rewrite && actual != td.Expected {
			res.Mismatches = append(res.Mismatches, Mismatch{Pos: td.Pos, Cmd: td.FullCmd(), Diff: diff(td.Expected, actual)})
		}
	}
	if !opts.Rewrite {
		return res
	}
	out.WriteString(tail)
	data := out.String()
	if strings.HasSuffix(data, "\n\n") {
		data = data[:len(data)-1]
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		res.Err = err
		return res
	}
	res.Rewritten = true
	return res
}

func diff(expected, actual string) string {
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: difflib.SplitLines(expected), B: difflib.SplitLines(actual),
		FromFile: "expected", ToFile: "actual", Context: 3,
	})
	if err != nil {
		return fmt.Sprintf("expected:\n%sactual:\n%s", expected, actual)
	}
	return d
}

// Files expands paths into scenario files: a file is taken as is; a directory
// gives every *.scen file under it, in lexical order.
func Files(paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			out = append(out, p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(q string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && strings.HasSuffix(q, Ext) {
				found = append(found, q)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no %s files", p, Ext)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	return out, nil
}

// ExitCode is the exit status for a set of results: 2 if a file is malformed
// (or unreadable), else 1 if a file failed, else 0.
func ExitCode(results []*FileResult) int {
	code := 0
	for _, r := range results {
		var ae *AssertionError
		switch {
		case r.Err != nil && !errors.As(r.Err, &ae):
			return 2
		case !r.Passed():
			code = 1
		}
	}
	return code
}

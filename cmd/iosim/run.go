package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/iosim/iosim/scenarios"
)

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	fl.SetOutput(stderr)
	rewrite := fl.Bool("rewrite", false, "replace every expected output with the actual one (review the change with git diff)")
	svgDir := fl.String("svg", "", "draw each file's comparisons, runs and crash explorations as SVG charts in `DIR`")
	verbose := fl.Bool("v", false, "under each file, print every answer: each comparison's ratio, crash exploration's vulnerabilities, equiv's differences and expect's measured value")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), `usage: iosim run [flags] PATH...

Runs scenario files (a directory: every *.scen file under it). A scenario is
commands in the datadriven format, each followed by ---- and its expected
output. Prints a pass/fail line per file, a diff for each output that differs,
the answers (a line per file; -v: every ratio, crash finding and claim) and a
summary. Exit status: 0 all passed, 1 an output differs or an expect
fails, 2 a file is malformed.

commands:
`)
		for _, c := range scenarios.Commands() {
			fmt.Fprintf(fl.Output(), "  %s\n", c)
		}
		fmt.Fprint(fl.Output(), "\nflags:\n")
		printFlags(fl)
	}
	if code, done := parseFlags(fl, args, func(n int) bool { return n > 0 }, "no scenario files given", stdout, stderr); done {
		return code
	}
	files, err := scenarios.Files(fl.Args())
	if err != nil {
		fmt.Fprintf(stderr, "iosim run: %v\n", err)
		return 2
	}
	if *svgDir != "" {
		if err := os.MkdirAll(*svgDir, 0o755); err != nil {
			fmt.Fprintf(stderr, "iosim run: %v\n", err)
			return 2
		}
	}
	var results []*scenarios.FileResult
	passed := 0
	for _, f := range files {
		opts := scenarios.RunOptions{Rewrite: *rewrite}
		if *svgDir != "" {
			opts.Charts = &scenarios.Charts{}
		}
		r := scenarios.RunFile(f, opts)
		results = append(results, r)
		switch {
		case r.Err != nil:
			fmt.Fprintf(stdout, "FAIL %s: %v\n", f, r.Err)
		case len(r.Mismatches) > 0:
			fmt.Fprintf(stdout, "FAIL %s: %d of %d outputs differ\n", f, len(r.Mismatches), r.Commands)
			for _, m := range r.Mismatches {
				fmt.Fprintf(stdout, "%s: %s\n%s", m.Pos, m.Cmd, m.Diff)
			}
		case r.Rewritten:
			passed++
			fmt.Fprintf(stdout, "rewrote %s (%d commands)\n", f, r.Commands)
		default:
			passed++
			fmt.Fprintf(stdout, "ok   %s (%d commands)\n", f, r.Commands)
		}
		if *verbose {
			writeAnswers(stdout, r.Answers)
		}
		if opts.Charts != nil && r.Err == nil {
			written, err := opts.Charts.Write(*svgDir)
			if err != nil {
				fmt.Fprintf(stderr, "iosim run: charts of %s: %v\n", f, err)
				return 2
			}
			for _, w := range written {
				fmt.Fprintf(stdout, "     chart %s\n", w)
			}
		}
	}
	if !*verbose {
		writeAnswerSummary(stdout, results)
	}
	fmt.Fprintf(stdout, "%d of %d scenario files passed\n", passed, len(files))
	return scenarios.ExitCode(results)
}

// writeAnswers prints a file's answers under its pass/fail line, each with
// its line in the file.
func writeAnswers(w io.Writer, answers []scenarios.Answer) {
	for _, a := range answers {
		line := a.Pos[strings.LastIndexByte(a.Pos, ':')+1:]
		what := ""
		if a.Claim {
			what = "expect "
		}
		fmt.Fprintf(w, "     %4s  %s%s\n", line, what, a.Text)
		for _, d := range a.Detail {
			fmt.Fprintf(w, "             %s\n", d)
		}
	}
}

// summaryWidth bounds the answers a summary line joins.
const summaryWidth = 100

// writeAnswerSummary prints one line per file that found answers: its
// claims (or, in a file without expect, its other answers) joined until the
// line is summaryWidth long, and how many more -v shows.
func writeAnswerSummary(w io.Writer, results []*scenarios.FileResult) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	header := false
	for _, r := range results {
		var texts []string
		for _, a := range r.Answers {
			if a.Claim {
				texts = append(texts, a.Text)
			}
		}
		if len(texts) == 0 {
			for _, a := range r.Answers {
				texts = append(texts, a.Text)
			}
		}
		if len(texts) == 0 {
			continue
		}
		line := texts[0]
		n := 1
		for ; n < len(texts) && len(line)+2+len(texts[n]) <= summaryWidth; n++ {
			line += "; " + texts[n]
		}
		if n < len(texts) {
			line += fmt.Sprintf(" (+%d more)", len(texts)-n)
		}
		if !header {
			fmt.Fprintln(w, "answers (iosim run -v prints every one):")
			header = true
		}
		fmt.Fprintf(tw, "  %s\t%s\n", filepath.Base(r.Path), line)
	}
	tw.Flush()
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/iosim/iosim/scenarios"
)

func cmdRun(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("run", flag.ContinueOnError)
	fl.SetOutput(stderr)
	rewrite := fl.Bool("rewrite", false, "replace every expected output with the actual one (review the change with git diff)")
	svgDir := fl.String("svg", "", "draw each file's comparisons, runs and crash explorations as SVG charts in `DIR`")
	fl.Usage = func() {
		fmt.Fprint(fl.Output(), `usage: iosim run [flags] PATH...

Runs scenario files (a directory: every *.scen file under it). A scenario is
commands in the datadriven format, each followed by ---- and its expected
output. Prints a pass/fail line per file, a diff for each output that differs,
and a summary. Exit status: 0 all passed, 1 an output differs or an expect
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
	fmt.Fprintf(stdout, "%d of %d scenario files passed\n", passed, len(files))
	return scenarios.ExitCode(results)
}

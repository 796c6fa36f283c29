package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/iosim/iosim/bundle"
)

func cmdRecord(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("record", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("o", "", "write the bundle into directory `OUT` (new, or empty; not inside the workload directory)")
	dir := fl.String("workload-dir", "", "the `DIR` the program runs in and the snapshot copies (default: the current directory)")
	limit := fl.Int("s", bundle.DefaultStringLimit, "strace's -s: the longest string recorded whole, in `BYTES`")
	fl.Usage = helpText(fl, "usage: iosim record -o OUT [--workload-dir DIR] [-s BYTES] -- PROG [ARGS...]",
		fmt.Sprintf(`Copies DIR, then runs PROG in DIR under strace (%s -s BYTES), and
writes the bundle OUT: bundle.json (argv, cwd, exit status, strace and kernel
versions), trace.strace, snapshot/ (DIR before the run) and stdout (PROG's
standard output, which also goes to iosim's). 'iosim replay OUT' and
'iosim crash OUT --checker CMD' take the bundle with no other flag.
The exit status is PROG's (128+N when signal N killed it); 2 when no bundle
could be made.`, strings.Join(bundle.StraceArgs, " ")))
	if code, done := parseFlags(fl, args, func(n int) bool { return n > 0 }, "no program given (iosim record -o OUT -- PROG ARGS...)", stdout, stderr); done {
		return code
	}
	if *out == "" {
		return usageError(stderr, "record", "-o OUT is required: the bundle directory to write")
	}
	if f, ok := stdout.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprintln(stderr, "note: the program's standard output is a pipe, not this terminal (iosim keeps a copy): a program that buffers its output (C stdio, Python) writes it in blocks, not line by line")
	}
	// A signal from the terminal reaches the program and strace; iosim
	// outlives them to write the bundle.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	rec, err := bundle.Record(bundle.RecordOptions{
		Out: *out, WorkloadDir: *dir, Argv: fl.Args(), StringLimit: *limit,
		Stdin: stdin, Stdout: stdout, Stderr: stderr, Version: versionLine(),
	})
	if err != nil {
		fmt.Fprintf(stderr, "iosim record: %v\n", err)
		return 2
	}
	for _, n := range rec.Notes {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	b := rec.Bundle
	status := fmt.Sprintf("exit status %d", b.ExitStatus)
	if b.Signal != "" {
		status = "killed by " + b.Signal
	}
	fmt.Fprintf(stderr, "iosim record: %s: %d trace lines, snapshot of %s (%d files, %d directories, %d symlinks, %d bytes), %s\n",
		b.Dir, rec.Lines, b.WorkloadDir, rec.Snapshot.Files+rec.Snapshot.HardLinks, rec.Snapshot.Dirs, rec.Snapshot.Symlinks, rec.Snapshot.Bytes, status)
	return b.ExitStatus
}

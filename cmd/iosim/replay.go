package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"golang.org/x/term"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/replay"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

// stackFlag collects repeated --stack values.
type stackFlag []string

func (s *stackFlag) String() string     { return strings.Join(*s, " ") }
func (s *stackFlag) Set(v string) error { *s = append(*s, v); return nil }

func cmdReplay(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("replay", flag.ContinueOnError)
	fl.SetOutput(stderr)
	verify := fl.Bool("verify", false, "compare every replayed result with the recorded one; exit 1 on any divergence, or when no call was compared")
	keepGoing := fl.Bool("keep-going", false, "count malformed trace lines and go on instead of stopping at the first")
	asJSON := fl.Bool("json", false, "print the report as JSON")
	root := fl.String("root", "", "seed the model with a copy of a host directory (read only): `DIR` at the same paths in the model, DIR:/MOUNT at /MOUNT")
	cwd := fl.String("cwd", "", "the traced program's initial working directory (default: inferred from the trace)")
	maxDiv := intAtLeast(fl, "max-divergences", 100, 0, "list at most `N` divergences (all are counted)")
	devName := fl.String("device", "", "price every call with the time model of device profile `NAME|FILE` (see 'iosim devices'); the report says where the time went")
	vsDevice := fl.String("vs-device", "", "with --device: replay again on profile `NAME|FILE` and show both side by side with ratios")
	svg := fl.String("svg", "", "with --compare or --vs-device: draw the two runs (virtual time with the ratio, where the time went) into `FILE` (.svg, .png, .pdf)")
	timing := fl.Bool("timing", false, "with --device, on a trace recorded with strace -T: compare the model's time of each call with its recorded duration")
	var stack, compare, mounts stackFlag
	fl.Var(&mounts, "mount", "a mount of the traced system, `TYPE:/PATH` (repeatable): renames, links and copy_file_range between mounts fail with EXDEV; with iosim crash, a tmpfs or ramfs mount is empty after a crash")
	fl.Var(&compare, "compare", "replay again with interposer `NAME[:key=value,...]` added to the stack (repeatable) and show both side by side with ratios")
	fl.Var(&stack, "stack", "interposer `NAME[:key=value,...]`, repeatable; the first is nearest to the program (see 'iosim interposers')")
	fl.Usage = helpText(fl, "usage: iosim replay [flags] TRACE...\n       iosim replay [flags] BUNDLE", "Replays strace files (several files: the per-task files of strace -ff) on the model;\na bundle of iosim record gives its trace, --root and --cwd.\nExit status: 0 clean, 1 a divergence (--verify), 2 bad usage or input.")
	if code, done := parseFlags(fl, args, func(n int) bool { return n > 0 }, "no trace files given", stdout, stderr); done {
		return code
	}
	opts := replay.Options{Verify: *verify, KeepGoing: *keepGoing, Stack: stack, Root: *root, Cwd: *cwd, MaxDivergences: *maxDiv, Mounts: mounts}
	for _, m := range mounts {
		if _, _, err := replay.ParseMount(m); err != nil {
			fmt.Fprintf(stderr, "iosim replay: --%v\n", err)
			return 2
		}
	}
	files := fl.Args()
	ba, err := openBundleArg(fl)
	if err != nil {
		fmt.Fprintf(stderr, "iosim replay: %v\n", err)
		return 2
	}
	if ba != nil {
		files, opts.Root, opts.Cwd, opts.MaxLineLen = ba.files, ba.root, ba.cwd, ba.maxLineLen
		printNotes(stderr, ba.notes)
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		opts.Progress = stderr
	}
	if *timing && *devName == "" {
		fmt.Fprintln(stderr, "iosim replay: --timing needs --device (a profile made by 'iosim calibrate' on the machine that recorded the trace)")
		return 2
	}
	opts.Timing = *timing
	if *svg != "" && *vsDevice == "" && len(compare) == 0 {
		fmt.Fprintln(stderr, "iosim replay: --svg draws a comparison: give --compare or --vs-device")
		return 2
	}
	if *devName != "" || *vsDevice != "" || len(compare) > 0 {
		return timedReplay(files, opts, *devName, *vsDevice, compare, *asJSON, *verify, *svg, stdout, stderr)
	}
	rep, err := replay.Run(files, opts)
	if err != nil {
		fmt.Fprintf(stderr, "iosim replay: %v\n", err)
		if rep == nil {
			return 2
		}
	} else if noCalls(rep, "replay", stderr) {
		return 2
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if e := enc.Encode(rep); e != nil {
			fmt.Fprintf(stderr, "iosim replay: %v\n", e)
			return 2
		}
	} else {
		var syntax *strace.SyntaxError
		writeReport(stdout, rep, *verify, errors.As(err, &syntax))
	}
	switch {
	case err != nil:
		return 2
	case *verify && rep.Divergences > 0:
		return 1
	case *verify && rep.ParseErrors > 0:
		// Lines were skipped: what they held was not compared.
		fmt.Fprintf(stderr, "iosim replay: --verify read the trace in part: %d malformed line(s) skipped (--keep-going)\n", rep.ParseErrors)
		return 1
	case *verify && rep.Verified == 0:
		// Nothing was compared: not a pass. (Text that is not strace output
		// can parse as messages only.)
		fmt.Fprintf(stderr, "iosim replay: --verify compared no call: %d system calls in the input, %d replayed\n", rep.Calls, rep.Replayed)
		return 1
	}
	return 0
}

// noCalls reports whether a replay that read its input to the end found no
// system call in it (an empty file, or text that is not strace output), and
// then says so on stderr: such input is an input error, not a clean run.
func noCalls(rep *replay.Report, cmd string, stderr io.Writer) bool {
	if rep == nil || rep.Calls > 0 || rep.Error != "" {
		return false
	}
	why := "an empty file, or not strace output"
	if rep.ParseErrors > 0 {
		why = fmt.Sprintf("%d malformed line(s) skipped, no other", rep.ParseErrors)
	}
	fmt.Fprintf(stderr, "iosim %s: %s: no system calls (%s)\n", cmd, strings.Join(rep.Files, ", "), why)
	return true
}

// writeReport prints the terminal summary, in the spirit of strace -c.
func writeReport(w io.Writer, rep *replay.Report, verify, malformed bool) {
	fmt.Fprintf(w, "iosim replay: %s\n", strings.Join(rep.Files, " "))
	if rep.Stack != "" {
		fmt.Fprintf(w, "stack: %s\n", rep.Stack)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "calls\terrors\tbytes\tdiverged\tsyscall\t")
	for _, name := range rep.SortedSyscalls() {
		s := rep.Syscalls[name]
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t\n", s.Calls, s.Errors, s.Bytes, s.Divergences, name)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ncalls: %d   replayed: %d   reached the kernel: %d   processes: %d   inferred paths: %d   virtual time: %.3f ms\n",
		rep.Calls, rep.Replayed, rep.KernelCalls, rep.Processes, rep.InferredPaths, float64(rep.VirtualTimeNs)/1e6)
	if len(rep.NotModelled) > 0 {
		var parts []string
		for _, n := range rep.SortedNotModelled() {
			parts = append(parts, fmt.Sprintf("%s %d", n, rep.NotModelled[n]))
		}
		fmt.Fprintf(w, "not modelled: %s\n", strings.Join(parts, ", "))
	}
	if len(rep.Skipped) > 0 {
		var parts []string
		for _, n := range rep.SortedSkipped() {
			parts = append(parts, fmt.Sprintf("%s %d", n, rep.Skipped[n]))
		}
		fmt.Fprintf(w, "not replayed: %s\n", strings.Join(parts, ", "))
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	if rep.Error != "" {
		// A stop: nothing below may read as the verdict of a whole trace.
		fmt.Fprintf(w, "stopped: %s\n", rep.Error)
		fmt.Fprintf(w, "the trace was not read to the end: the counts above are of the lines before the stop")
		if malformed {
			fmt.Fprintf(w, " (--keep-going skips malformed lines)")
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "parse errors: %d", rep.ParseErrors)
	switch {
	case rep.Error != "" && malformed:
		fmt.Fprintf(w, " (the replay stopped at the malformed line)")
	case rep.ParseErrors > 0:
		fmt.Fprintf(w, " (lines skipped, not replayed)")
	}
	fmt.Fprintln(w)
	for _, e := range rep.ParseErrorList {
		if e != rep.Error { // printed as stopped: above
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
	if rep.StackReport != "" {
		fmt.Fprintf(w, "\n%s\n", rep.StackReport)
	}
	if !verify {
		return
	}
	switch {
	case rep.Error != "":
		fmt.Fprintf(w, "not verified: the replay stopped; divergences before the stop: %d\n", rep.Divergences)
	case rep.ParseErrors > 0:
		fmt.Fprintf(w, "not verified: %d line(s) skipped; divergences in the lines read: %d\n", rep.ParseErrors, rep.Divergences)
	default:
		fmt.Fprintf(w, "divergences: %d\n", rep.Divergences)
	}
	for _, d := range rep.DivergenceList {
		fmt.Fprintf(w, "  %s\n", d)
	}
	if int64(len(rep.DivergenceList)) < rep.Divergences {
		fmt.Fprintf(w, "  ... and %d more\n", rep.Divergences-int64(len(rep.DivergenceList)))
	}
}

func cmdSyscalls(args []string, stdout, stderr io.Writer) int {
	if code, ok := noArgs("syscalls", "Lists every x86-64 syscall: its number, whether the model supports it (fully,\nin part, or not), and a note on what it leaves out.", args, stdout, stderr); !ok {
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "nr\tsyscall\tsupport\tnote")
	for _, s := range sim.Syscalls() {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", s.Nr, s.Name, s.Support, s.Note)
	}
	tw.Flush()
	return 0
}

func cmdInterposers(args []string, stdout, stderr io.Writer) int {
	if code, ok := noArgs("interposers", "Lists the interposers --stack takes (NAME[:key=value,...]) and their parameters.", args, stdout, stderr); !ok {
		return code
	}
	fmt.Fprint(stdout, interposer.Usage())
	return 0
}

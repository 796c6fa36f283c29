// Command iosim runs programs' file I/O on iosim's model of Linux: it replays a
// recorded strace, through optional interposers, and checks every result against
// the recording; explores the states a power loss leaves; runs scenario files
// and fio job files.
//
//	iosim replay [flags] TRACE...   replay strace files on the model
//	iosim crash [flags] TRACE...    explore the states a power loss during the run can leave
//	iosim run [flags] PATH...       run scenario files (see package scenarios)
//	iosim fio [flags] JOBFILE       run a fio job file on the model
//	iosim mount MOUNTPOINT          serve the model as a FUSE file system
//	iosim umount MOUNTPOINT         unmount it
//	iosim ctl MOUNTPOINT COMMAND    control a mount (clear-cache, crash, restart ...)
//	iosim record -o OUT -- PROG...  record PROG under strace into a bundle
//	iosim syscalls                  list the syscalls and how far they are modelled
//	iosim interposers               list the interposers and their parameters
//	iosim devices                   list the bundled device profiles
//	iosim calibrate [-o FILE] DIR   measure this machine and write a profile
//	iosim version                   print the version (also iosim --version)
//
// Flags go before or after the arguments; `--` ends them. `iosim help
// COMMAND` (or `iosim COMMAND --help`) prints a command's full help on
// standard output. Exit status: 0 clean, 1 a problem found (a divergence, a
// vulnerability, a failed expectation), 2 bad usage or input.
//
// The go command builds iosim with profile-guided optimization from
// default.pgo, a CPU profile of replay and of the parser (pgo.sh rewrites it;
// BENCHMARKS.md has what it gains).
package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// command is one row of iosim's command table: what run dispatches, what
// the usage lists and the package doc must name.
type command struct {
	name    string
	args    string // what follows the name in the usage list
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = []command{
	{"replay", "TRACE...", "replay strace files on the model (--verify checks every result)", cmdReplay},
	{"run", "PATH...", "run scenario files (--rewrite regenerates their outputs)", cmdRun},
	{"fio", "JOBFILE", "run a fio job file on the model (--output-format=json as fio)", cmdFio},
	{"crash", "TRACE...", "explore the states a power loss during the traced run can leave", cmdCrash},
	{"mount", "MOUNTPOINT", "serve the model as a FUSE file system for unmodified programs", cmdMount},
	{"umount", "MOUNTPOINT", "unmount an 'iosim mount'", cmdUmount},
	{"ctl", "MOUNTPOINT COMMAND", "control an 'iosim mount' (clear-cache, checkpoint, report, crash, restart)", cmdCtl},
	{"record", "-o OUT -- PROG ARGS...", "run PROG under strace and keep a bundle that replay and crash take", func(args []string, stdout, stderr io.Writer) int { return cmdRecord(args, os.Stdin, stdout, stderr) }},
	{"syscalls", "", "list the syscalls and how far the model covers them", cmdSyscalls},
	{"interposers", "", "list the interposers that --stack takes", cmdInterposers},
	{"devices", "", "list the bundled device profiles that --device takes", cmdDevices},
	{"calibrate", "DIR", "measure this machine on DIR and print a profile for --device", cmdCalibrate},
	{"version", "", "print iosim's version (also --version)", cmdVersion},
}

func lookup(name string) (command, bool) {
	for _, c := range commands {
		if c.name == name {
			return c, true
		}
	}
	return command{}, false
}

// run executes one iosim command and returns the process exit status: 0 on
// success, 1 when the command ran and found a problem (a divergence), 2 for bad
// usage or input.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		if len(args) == 1 {
			usage(stdout)
			return 0
		}
		if len(args) > 2 {
			fmt.Fprintf(stderr, "iosim help: want one command, got %q\nRun 'iosim help' for the commands.\n", strings.Join(args[1:], " "))
			return 2
		}
		c, ok := lookup(args[1])
		if !ok {
			fmt.Fprintf(stderr, "iosim help: unknown command %q\nRun 'iosim help' for the commands.\n", args[1])
			return 2
		}
		return c.run([]string{"--help"}, stdout, stderr)
	case "--version", "-version":
		return cmdVersion(args[1:], stdout, stderr)
	}
	c, ok := lookup(args[0])
	if !ok {
		fmt.Fprintf(stderr, "iosim: unknown command %q\nRun 'iosim help' for the commands.\n", args[0])
		return 2
	}
	return c.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, "usage: iosim COMMAND [flags] [args]\n\ncommands:\n")
	tw := tabwriter.NewWriter(w, 0, 0, 3, ' ', 0)
	for _, c := range commands {
		fmt.Fprintf(tw, "  %s %s\t%s\n", c.name, c.args, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\nFlags go before or after the arguments; -- ends them. Run 'iosim help COMMAND'\nfor a command's flags, 'iosim --version' for the version.\n")
}

// Command iosim runs programs' file I/O on iosim's model of Linux: it replays a
// recorded strace, through optional interposers, and checks every result against
// the recording.
//
//	iosim replay [flags] TRACE...   replay strace files on the model
//	iosim run [flags] PATH...       run scenario files (see package scenarios)
//	iosim fio [flags] JOBFILE       run a fio job file on the model
//	iosim record -o OUT -- PROG...  record PROG under strace into a bundle
//	iosim syscalls                  list the syscalls and how far they are modelled
//	iosim interposers               list the interposers and their parameters
//	iosim devices                   list the bundled device profiles
//	iosim calibrate [-o FILE] DIR   measure this machine and write a profile
//
// Run `iosim help COMMAND` for a command's flags.
//
// The go command builds iosim with profile-guided optimization from
// default.pgo, a CPU profile of replay and of the parser (pgo.sh rewrites it;
// BENCHMARKS.md has what it gains).
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
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
	case "replay":
		return cmdReplay(args[1:], stdout, stderr)
	case "run":
		return cmdRun(args[1:], stdout, stderr)
	case "fio":
		return cmdFio(args[1:], stdout, stderr)
	case "crash":
		return cmdCrash(args[1:], stdout, stderr)
	case "record":
		return cmdRecord(args[1:], os.Stdin, stdout, stderr)
	case "syscalls":
		return cmdSyscalls(args[1:], stdout, stderr)
	case "interposers":
		return cmdInterposers(args[1:], stdout, stderr)
	case "devices":
		return cmdDevices(args[1:], stdout, stderr)
	case "calibrate":
		return cmdCalibrate(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			return run([]string{args[1], "-h"}, stdout, stderr)
		}
		usage(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "iosim: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: iosim COMMAND [flags] [args]

commands:
  replay TRACE...   replay strace files on the model (--verify checks every result)
  run PATH...       run scenario files (--rewrite regenerates their outputs)
  fio JOBFILE       run a fio job file on the model (--output-format=json as fio)
  crash TRACE...    explore the states a power loss during the traced run can leave
  record -o OUT -- PROG ARGS...
                    run PROG under strace and keep a bundle that replay and crash take
  syscalls          list the syscalls and how far the model covers them
  interposers       list the interposers that --stack takes
  devices           list the bundled device profiles that --device takes
  calibrate DIR     measure this machine on DIR and print a profile for --device

Run 'iosim help COMMAND' for a command's flags.
`)
}

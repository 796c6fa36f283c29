package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// parseFlags parses a command's flags and checks how many arguments follow
// them. It returns the exit status and true when the command ends here: 0
// after -h, 2 for a bad flag, or for an argument count that argsOK refuses
// (then with missing and the usage on stderr).
func parseFlags(fl *flag.FlagSet, args []string, argsOK func(n int) bool, missing string, stderr io.Writer) (int, bool) {
	if err := fl.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0, true
		}
		return 2, true
	}
	if !argsOK(fl.NArg()) {
		fmt.Fprintln(stderr, missing)
		fl.Usage()
		return 2, true
	}
	return 0, false
}

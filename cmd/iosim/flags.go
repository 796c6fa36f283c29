package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// parseFlags parses a command's arguments: flags may come anywhere among the
// positional arguments (`iosim replay TRACE --verify`), and `--` ends the
// flags (what follows is positional even if it starts with '-'). It returns
// the exit status and true when the command ends here:
//
//   - 0 after -h or --help, with the command's full help (fl.Usage, writing
//     to fl.Output()) on stdout;
//   - 2 for a flag it does not know or a value it cannot take, and for an
//     argument count that argsOK refuses (then with missing): one line on
//     stderr naming the problem and a hint at 'iosim help CMD'.
//
// The positional arguments are then fl.Args().
func parseFlags(fl *flag.FlagSet, args []string, argsOK func(n int) bool, missing string, stdout, stderr io.Writer) (int, bool) {
	fl.SetOutput(io.Discard) // the flag package's own messages: replaced by usageError's line
	pos, err := interleaved(fl, args)
	if errors.Is(err, flag.ErrHelp) {
		fl.SetOutput(stdout)
		fl.Usage()
		return 0, true
	}
	fl.SetOutput(stderr)
	if err != nil {
		return usageError(stderr, fl.Name(), dashes(err.Error())), true
	}
	if !argsOK(len(pos)) {
		return usageError(stderr, fl.Name(), strings.TrimPrefix(missing, "iosim "+fl.Name()+": ")), true
	}
	// Leave the positional arguments where fl.Args() finds them.
	_ = fl.Parse(append([]string{"--"}, pos...))
	return 0, false
}

// interleaved parses flags anywhere in args and returns the positional
// arguments in order. fl.Parse stops at the first non-flag or after `--`;
// the loop takes the non-flag and parses on, until a `--` (one that is not a
// flag's value) or the end.
func interleaved(fl *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		rest := fl.Args()
		used := len(args) - len(rest)
		if endedByDashes(fl, args[:used]) {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			break
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
	return pos, nil
}

// endedByDashes reports whether the flags fl.Parse consumed (used) end with
// the `--` that stops flag parsing, not with a flag's value "--".
func endedByDashes(fl *flag.FlagSet, used []string) bool {
	n := len(used)
	if n == 0 || used[n-1] != "--" {
		return false
	}
	if n == 1 {
		return true
	}
	prev := used[n-2]
	if !strings.HasPrefix(prev, "-") || strings.Contains(prev, "=") || prev == "--" {
		return true
	}
	f := fl.Lookup(strings.TrimLeft(prev, "-"))
	if f == nil {
		return true
	}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
		return true // a bool flag takes no separate value
	}
	return false // "--" was prev's value
}

// usageError prints a usage error as one line and a hint, and returns 2.
func usageError(stderr io.Writer, cmd, msg string) int {
	fmt.Fprintf(stderr, "iosim %s: %s\nRun 'iosim help %s' for usage.\n", cmd, msg, cmd)
	return 2
}

// dashes rewrites the flag package's messages ("flag provided but not
// defined: -x", "invalid value ... for flag -depth: ...") with the
// double-dash names the help and README use.
func dashes(msg string) string {
	for _, p := range []string{"defined: -", "flag -", "for -", "argument: -"} {
		if i := strings.Index(msg, p); i >= 0 {
			j := i + len(p)
			if j+1 < len(msg) && msg[j] != '-' && !isShort(msg[j:]) {
				msg = msg[:j] + "-" + msg[j:]
			}
		}
	}
	return msg
}

// isShort reports whether s starts with a one-letter flag name (-o stays -o).
func isShort(s string) bool {
	return len(s) == 1 || !isNameByte(s[1])
}

func isNameByte(c byte) bool {
	return c == '-' || c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// flagName is how help and errors write a flag: --name, or -n for a
// one-letter name.
func flagName(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// printFlags writes fl's flags to fl.Output() as flag.PrintDefaults does,
// with the names written as flagName does (--verify, not -verify).
func printFlags(fl *flag.FlagSet) {
	w := fl.Output()
	fl.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  " + flagName(f.Name)
		if arg != "" {
			line += " " + arg
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if showDefault(f) {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				line += fmt.Sprintf(" (default %q)", f.DefValue)
			} else {
				line += fmt.Sprintf(" (default %s)", f.DefValue)
			}
		}
		fmt.Fprintln(w, line)
	})
}

// showDefault: the default is worth printing (not a zero value).
func showDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return false
	}
	return true
}

// helpText writes a command's full help to fl.Output(): the usage lines, the
// description, and the flags (printFlags). Commands set fl.Usage to it.
func helpText(fl *flag.FlagSet, usage, description string) func() {
	return func() {
		w := fl.Output()
		fmt.Fprintf(w, "%s\n\n%s\n", strings.Trim(usage, "\n"), strings.Trim(description, "\n"))
		n := 0
		fl.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprint(w, "\nflags:\n")
			printFlags(fl)
		}
	}
}

// atLeast is an integer flag that refuses values below min: the flag
// package reports "invalid value "-1" for flag --depth: want at least 1".
type atLeast struct {
	v   *int
	min int
}

func (a atLeast) String() string {
	if a.v == nil {
		return "0"
	}
	return strconv.Itoa(*a.v)
}

func (a atLeast) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return errors.New("want an integer")
	}
	if n < a.min {
		return fmt.Errorf("want at least %d", a.min)
	}
	*a.v = n
	return nil
}

// intAtLeast defines an integer flag whose values below min are usage errors.
func intAtLeast(fl *flag.FlagSet, name string, value, min int, usage string) *int {
	v := value
	fl.Var(atLeast{&v, min}, name, usage)
	return &v
}

package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
)

// cmdVersion prints the module version iosim was built from and, when the
// build recorded it, the VCS revision.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("version", flag.ContinueOnError)
	fl.Usage = helpText(fl, "usage: iosim version\n       iosim --version", "Prints the module version iosim was built from and, when the build recorded\nthem, the VCS revision and whether the tree was modified.")
	if code, done := parseFlags(fl, args, func(n int) bool { return n == 0 }, "takes no arguments", stdout, stderr); done {
		return code
	}
	fmt.Fprintln(stdout, versionLine())
	return 0
}

// versionLine is "iosim MODULE VERSION [revision REV[ (modified)]] GOVERSION".
func versionLine() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "iosim (no build information)"
	}
	path, v := bi.Main.Path, bi.Main.Version
	if path == "" {
		path = "github.com/iosim/iosim"
	}
	if v == "" {
		v = "(devel)"
	}
	s := "iosim " + path + " " + v
	var rev, modified string
	for _, kv := range bi.Settings {
		switch kv.Key {
		case "vcs.revision":
			rev = kv.Value
		case "vcs.modified":
			if kv.Value == "true" {
				modified = " (modified)"
			}
		}
	}
	if rev != "" {
		s += " revision " + rev + modified
	}
	return s + " " + bi.GoVersion
}

package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/iosim/iosim/device"
)

// cmdDevices lists the bundled device profiles: name, kind, write cache, the
// headline numbers and the description.
func cmdDevices(args []string, stdout, stderr io.Writer) int {
	if code, ok := noArgs("devices", "Lists the bundled device profiles --device takes: kind, write cache, headline\nnumbers, file system and description. --device also takes a TOML file (see\npackage device, or write one with 'iosim calibrate').", args, stdout, stderr); !ok {
		return code
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "name\tkind\twrite cache\tread MB/s\twrite MB/s\tlatency\tfs\tdescription")
	for _, n := range device.Names() {
		p, err := device.Lookup(n)
		if err != nil {
			fmt.Fprintf(stderr, "iosim devices: %v\n", err)
			return 2
		}
		d := p.Device
		lat := fmt.Sprintf("read %gus", d.ReadUs)
		switch d.Kind {
		case device.HDD:
			lat = fmt.Sprintf("%g rpm, seek %gms", d.RPM, d.AverageSeekMs)
		case device.RAM:
			lat = "-"
		}
		wc := "off"
		if d.WriteCache {
			wc = "on"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%g\t%g\t%s\t%s\t%s\n", p.Name, d.Kind, wc, d.ReadMBs, d.WriteMBs, lat, p.FS.Type, p.Description)
	}
	tw.Flush()
	fmt.Fprintln(stdout, "\n--device also takes a TOML file (see package device, or write one with 'iosim calibrate').")
	return 0
}

// noArgs checks that a command that takes no arguments and no flags got
// none: ok is false when it must stop with code (0 after --help, its help on
// stdout; 2 for anything else, see parseFlags).
func noArgs(cmd, description string, args []string, stdout, stderr io.Writer) (code int, ok bool) {
	fl := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fl.Usage = helpText(fl, "usage: iosim "+cmd, description)
	code, done := parseFlags(fl, args, func(n int) bool { return n == 0 }, "takes no arguments", stdout, stderr)
	return code, !done
}

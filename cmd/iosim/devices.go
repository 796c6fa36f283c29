package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/iosim/iosim/device"
)

// cmdDevices lists the bundled device profiles: name, kind, write cache, the
// headline numbers and the description.
func cmdDevices(args []string, stdout, stderr io.Writer) int {
	if code, ok := noArgs("devices", args, stderr); !ok {
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

// noArgs checks that a command that takes no arguments got none: ok is false
// when it must stop with code (0 for -h, else 2), its usage printed.
func noArgs(cmd string, args []string, stderr io.Writer) (code int, ok bool) {
	if len(args) == 0 {
		return 0, true
	}
	fmt.Fprintln(stderr, "usage: iosim "+cmd)
	if args[0] == "-h" || args[0] == "--help" {
		return 0, false
	}
	return 2, false
}

package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/fio"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

func cmdFio(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("fio", flag.ContinueOnError)
	fl.SetOutput(stderr)
	format := fl.String("output-format", "normal", "normal or json (fio's field names: jobs[].read.iops, .bw in KiB/s, .clat_ns.percentile)")
	compare := fl.String("compare", "", "print the model's IOPS, bandwidth and clat percentiles beside those of a measured run: fio's JSON `FILE`")
	devName := fl.String("device", "", "price every call with the time model of device profile `NAME|FILE` (see 'iosim devices'; a file from 'iosim calibrate'); default: a constant cost per call")
	var stack stackFlag
	fl.Var(&stack, "stack", "interposer `NAME[:key=value,...]`, repeatable; the first is nearest the program (see 'iosim interposers')")
	fl.Usage = helpText(fl, "usage: iosim fio [flags] JOBFILE", `
Runs a fio job file on the model: each job (each of numjobs clones) is a
process, its latencies read from the virtual clock. Options: [global] and job
sections with rw, rwmixread, bs, size, filename, directory, numjobs, iodepth,
ioengine (sync, psync, pvsync2, libaio, posixaio, mmap), hipri, direct,
buffered, sync, fsync, fdatasync, end_fsync, fallocate, runtime, time_based,
ramp_time, rate, rate_iops, randseed, norandommap, random_distribution
(random, zipf:THETA), io_size, thinktime, zero_buffers, verify (crc32c),
group_reporting. Any other option is an error.

A job without verify runs payload-free: the model keeps the extents it
writes, not their bytes, so its cost grows with its number of I/Os, not its
size; the results are the same as with the bytes.`)
	// fio's own spelling, --output-format json, is accepted by the flag package.
	if code, done := parseFlags(fl, args, func(n int) bool { return n == 1 }, "want one job file", stdout, stderr); done {
		return code
	}
	if *format != "normal" && *format != "json" {
		fmt.Fprintf(stderr, "iosim fio: --output-format=%s: want normal or json\n", *format)
		return 2
	}
	f, err := os.Open(fl.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "iosim fio: %v\n", err)
		return 2
	}
	jobs, err := fio.Parse(f, fl.Arg(0))
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "iosim fio: %v\n", err)
		return 2
	}
	for _, n := range fio.Notes(jobs) {
		fmt.Fprintf(stderr, "note: %s\n", n)
	}
	kopts := []sim.Option{sim.WithLockWait(false)}
	if *devName != "" {
		p, err := device.Lookup(*devName)
		if err != nil {
			fmt.Fprintf(stderr, "iosim fio: --device: %v\n", err)
			return 2
		}
		kopts = append(kopts, sim.WithDevice(p))
	}
	k := sim.New(vfs.New(), kopts...)
	st, err := parseStack(stack)
	if err != nil {
		fmt.Fprintf(stderr, "iosim fio: %v\n", err)
		return 2
	}
	h, err := st.Build(k)
	if err != nil {
		fmt.Fprintf(stderr, "iosim fio: %v\n", err)
		return 2
	}
	var before sim.Breakdown
	res, err := fio.Run(k, h, jobs, fio.Options{Layout: k, Laid: func() { before = k.Breakdown() }})
	if err != nil {
		fmt.Fprintf(stderr, "iosim fio: %v\n", err)
		return 2
	}
	if *compare != "" {
		f, err := os.Open(*compare)
		if err != nil {
			fmt.Fprintf(stderr, "iosim fio: %v\n", err)
			return 2
		}
		measured, err := fio.ReadJSON(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "iosim fio: %s: %v\n", *compare, err)
			return 2
		}
		if err := fio.WriteComparison(stdout, fio.ToJSON(res), measured); err != nil {
			fmt.Fprintf(stderr, "iosim fio: %v\n", err)
			return 2
		}
	} else if *format == "json" {
		if err := fio.WriteJSON(stdout, res); err != nil {
			fmt.Fprintf(stderr, "iosim fio: %v\n", err)
			return 2
		}
	} else {
		fio.WriteText(stdout, res)
	}
	if *format != "json" && k.Device() != nil {
		// Where the jobs' time went (after the layout), all clones'.
		b := k.Breakdown()
		b.Sub(before)
		writeBreakdown(stdout, &b)
	}
	for _, r := range res {
		if r.Err != nil {
			return 1
		}
	}
	return 0
}

func parseStack(specs []string) (interposer.Stack, error) { return interposer.ParseStack(specs) }

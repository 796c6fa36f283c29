package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/mount"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

func cmdMount(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("mount", flag.ContinueOnError)
	fl.SetOutput(stderr)
	model := fl.String("model", "strict", "persistence `MODEL` a seeded crash draws under: strict, prefix, subset or torn")
	devName := fl.String("device", "", "price every call with the time model of device profile `NAME|FILE` (see 'iosim devices')")
	root := fl.String("root", "", "start from a copy of host directory `SNAP` (the host is only read)")
	fifo := fl.String("fifo", "", "read LazyFS's control strings (lazyfs::clear-cache ...) from named pipe `PATH`")
	record := fl.String("record", "", "write every call the mount serves, with its pid and all its data, as strace lines to `FILE` (replay and crash take it)")
	debug := fl.Bool("debug", false, "log every FUSE request")
	var stack stackFlag
	fl.Var(&stack, "stack", "interposer `NAME[:key=value,...]`, repeatable; the first is nearest the program (see 'iosim interposers')")
	fl.Usage = helpText(fl, "usage: iosim mount [flags] MOUNTPOINT", `
Serves the model as a FUSE file system at MOUNTPOINT, in the foreground
until SIGINT, SIGTERM or 'iosim umount MOUNTPOINT'. Each request is a call of
the model process standing for the calling pid, through the --stack
interposers. 'iosim ctl MOUNTPOINT COMMAND' controls it: clear-cache,
checkpoint, report, crash [--seed N], restart.`)
	if code, done := parseFlags(fl, args, func(n int) bool { return n == 1 }, "want one mount point", stdout, stderr); done {
		return code
	}
	vm, err := vfs.ParseModel(*model)
	if err != nil {
		fmt.Fprintf(stderr, "iosim mount: --model: %v\n", err)
		return 2
	}
	kopts := []sim.Option{sim.WithLockWait(false)}
	if *devName != "" {
		p, err := device.Lookup(*devName)
		if err != nil {
			fmt.Fprintf(stderr, "iosim mount: --device: %v\n", err)
			return 2
		}
		kopts = append(kopts, sim.WithDevice(p))
	}
	st, err := parseStack(stack)
	if err != nil {
		fmt.Fprintf(stderr, "iosim mount: %v\n", err)
		return 2
	}
	var rec *os.File
	if *record != "" {
		if rec, err = os.Create(*record); err != nil {
			fmt.Fprintf(stderr, "iosim mount: --record: %v\n", err)
			return 2
		}
		defer rec.Close()
	}
	s, err := mount.NewServer(vfs.New(), vm, func(fs *vfs.FS) (*sim.Kernel, sim.Handler, error) {
		k := sim.New(fs, kopts...)
		h, err := st.Build(k)
		if err == nil && rec != nil {
			t := interposer.NewTrace(h, rec)
			t.StrSize, t.Pids = math.MaxInt, true
			h = t
		}
		return k, h, err
	})
	if err != nil {
		fmt.Fprintf(stderr, "iosim mount: %v\n", err)
		return 2
	}
	if *root != "" {
		if fi, err := os.Stat(*root); err != nil || !fi.IsDir() {
			fmt.Fprintf(stderr, "iosim mount: --root %s: want a directory\n", *root)
			return 2
		}
		if err := s.Load(*root); err != nil {
			fmt.Fprintf(stderr, "iosim mount: %v\n", err)
			return 2
		}
	}
	dir := fl.Arg(0)
	srv, err := mount.Mount(s, dir, mount.Options{Debug: *debug})
	if err != nil {
		fmt.Fprintf(stderr, "iosim mount: %v\n", err)
		return 2
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, "iosim mount: "+format+"\n", a...) }
	s.Log = logf
	sock, err := mount.SocketPath(dir)
	if err == nil {
		var l interface{ Close() error }
		if l, err = mount.ListenControl(s, sock); err == nil {
			defer l.Close()
			defer os.Remove(sock)
		}
	}
	if err != nil {
		srv.Unmount()
		fmt.Fprintf(stderr, "iosim mount: control socket: %v\n", err)
		return 2
	}
	if *fifo != "" {
		if err := mount.ServeFIFO(s, *fifo, logf); err != nil {
			srv.Unmount()
			fmt.Fprintf(stderr, "iosim mount: %v\n", err)
			return 2
		}
	}
	fmt.Fprintf(stderr, "iosim mount: serving the model at %s; control: iosim ctl %s COMMAND\n", dir, dir)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		<-sig
		if err := srv.Unmount(); err != nil {
			logf("unmount: %v (still busy: retrying lazily)", err)
			unix.Unmount(dir, unix.MNT_DETACH)
		}
	}()
	srv.Wait()
	fmt.Fprintf(stderr, "iosim mount: unmounted %s; %d requests answered ENOSYS, %d panics answered EIO\n", dir, s.ENOSYS.Load(), s.Panics.Load())
	return 0
}

func cmdUmount(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("umount", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = helpText(fl, "usage: iosim umount MOUNTPOINT", `
Unmounts an 'iosim mount', which then exits.`)
	if code, done := parseFlags(fl, args, func(n int) bool { return n == 1 }, "want one mount point", stdout, stderr); done {
		return code
	}
	if err := unix.Unmount(fl.Arg(0), 0); err != nil {
		fmt.Fprintf(stderr, "iosim umount: %s: %v\n", fl.Arg(0), err)
		return 2
	}
	return 0
}

func cmdCtl(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("ctl", flag.ContinueOnError)
	fl.SetOutput(stderr)
	fl.Usage = helpText(fl, "usage: iosim ctl MOUNTPOINT COMMAND...", `
Sends a control command to an 'iosim mount': clear-cache, checkpoint,
report, crash [--seed N], restart (or LazyFS's lazyfs::... strings).`)
	if code, done := parseFlags(fl, args, func(n int) bool { return n >= 2 }, "want a mount point and a command", stdout, stderr); done {
		return code
	}
	out, err := mount.Ctl(fl.Arg(0), strings.Join(fl.Args()[1:], " "))
	if err != nil {
		fmt.Fprintf(stderr, "iosim ctl: %v\n", err)
		return 2
	}
	fmt.Fprint(stdout, out)
	return 0
}

package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"github.com/iosim/iosim/device"
)

// cmdCalibrate measures the machine on a real directory and writes a device
// profile that --device loads: the device's latencies and bandwidths (O_DIRECT
// when the file system supports it), the cost of a cache flush (fdatasync of an
// overwrite, which commits nothing), the cost of freeing a file's blocks at
// unlink, the device's internal parallelism (random reads at queue depth 16
// against queue depth 1), the CPU's syscall, path-lookup and copy costs, the kernel's
// page-cache and writeback settings from /proc and /sys, and whether the ext4
// file system has a journal. The device is priced as flash (a per-command latency, then the
// transfer at the sequential rate) whatever it is: a disk's seeks and rotation
// are in its measured mean latency. What calibrate does not measure keeps the
// documented defaults of package device. It is a measurement: its numbers vary
// from run to run.
func cmdCalibrate(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fl.SetOutput(stderr)
	out := fl.String("o", "", "write the profile to `FILE` (default: standard output)")
	budget := fl.Duration("duration", time.Minute, "how long to measure at most")
	name := fl.String("name", "calibrated", "the profile's name")
	fl.Usage = helpText(fl, "usage: iosim calibrate [-o FILE] [--duration D] DIR", "Measures this machine on a scratch file in DIR and prints a device profile for --device.")
	if code, done := parseFlags(fl, args, func(n int) bool { return n == 1 }, "want one directory to measure in", stdout, stderr); done {
		return code
	}
	if *budget <= 0 {
		return usageError(stderr, "calibrate", fmt.Sprintf("--duration %v: want a positive duration", *budget))
	}
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(len(calibrationSteps), progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("calibrating"))
	}
	p, err := calibrate(fl.Arg(0), *name, *budget, bar)
	if bar != nil {
		_ = bar.Finish()
		fmt.Fprintln(stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "iosim calibrate: %v\n", err)
		return 2
	}
	text, err := device.Encode(p)
	if err != nil {
		fmt.Fprintf(stderr, "iosim calibrate: %v\n", err)
		return 2
	}
	text = append([]byte("# Measured by iosim calibrate on "+fl.Arg(0)+"; numbers it does not measure are package device's defaults.\n"), text...)
	if _, err := device.Parse("calibrated profile", text); err != nil {
		fmt.Fprintf(stderr, "iosim calibrate: the measured profile does not load: %v\n", err)
		return 2
	}
	if *out == "" {
		_, _ = stdout.Write(text)
		return 0
	}
	if err := os.WriteFile(*out, text, 0o644); err != nil {
		fmt.Fprintf(stderr, "iosim calibrate: %v\n", err)
		return 2
	}
	return 0
}

// calibrationSteps name the measurements, in order (the progress bar counts them).
var calibrationSteps = []string{"syscall", "open", "copy", "append", "file", "sequential", "random", "sync", "unlink"}

// calibration is one measurement run: a scratch file and a time budget shared
// by the steps.
type calibration struct {
	dir      string
	path     string
	fd       int
	direct   bool // the file system takes O_DIRECT
	deadline time.Time
	step     time.Duration
	cpu      bool   // the step only computes: time it in thread CPU time
	buf      []byte // page-aligned, 1 MiB
}

const calFileBytes = 64 << 20

func calibrate(dir, name string, budget time.Duration, bar *progressbar.ProgressBar) (*device.Profile, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	c := &calibration{dir: dir, deadline: time.Now().Add(budget), step: budget / time.Duration(len(calibrationSteps)+1)}
	c.buf = alignedBuffer(1 << 20)
	p := device.Defaults()
	// What is not measured (page-cache lookup and allocation, pinning,
	// journalling, block allocation) comes from the bundled profile of a
	// current machine.
	modern, err := device.Lookup("nvme")
	if err != nil {
		return nil, err
	}
	p.CPU = modern.CPU
	p.Name = name
	p.Description = "measured by iosim calibrate on " + dir
	p.Device.Kind = device.SSD
	p.Device.QueueDepth = 32
	p.Device.Parallelism = 1 // measured by random when O_DIRECT works
	p.Device.CapacityBytes = 1 << 40
	p.Device.WriteCache = true
	c.hostSettings(&p)
	defer c.cleanup()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	steps := []func(*device.Profile) error{c.syscallCost, c.openCost, c.copyCost, c.appendCost, c.makeFile, c.sequential, c.random, c.syncCosts, c.freeBlocksCost}
	for i, s := range steps {
		c.cpu = i < 4 // syscall, open, copy and buffered appends do no I/O
		if err := s(&p); err != nil {
			return nil, err
		}
		if bar != nil {
			_ = bar.Add(1)
		}
	}
	if !c.direct {
		p.Description += noDirectNote
	}
	for _, f := range []*float64{&p.Device.ReadMBs, &p.Device.WriteMBs, &p.Device.ReadUs, &p.Device.ProgramUs, &p.Device.FlushUs,
		&p.CPU.SyscallNs, &p.CPU.PathLookupNs, &p.CPU.CopyMBs, &p.CPU.L1CopyMBs, &p.CPU.MemCopyMBs, &p.CPU.BlockAllocNs, &p.FS.FreeBlocksUs} {
		*f = math.Round(*f*10) / 10 // a measurement's precision, not float noise
	}
	return &p, p.Validate()
}

func (c *calibration) cleanup() {
	if c.fd > 0 {
		_ = unix.Close(c.fd)
	}
	if c.path != "" {
		_ = os.Remove(c.path)
	}
}

// threadCPU returns the calling thread's CPU time (the caller is locked to
// its thread).
func threadCPU() time.Duration {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_THREAD, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// alignedBuffer returns n bytes aligned to the page size, for O_DIRECT.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+4096)
	off := int(uintptr(unsafe.Pointer(&b[0])) & 4095)
	if off != 0 {
		off = 4096 - off
	}
	return b[off : off+n]
}

// timeIt runs f until n runs or the step's share of the budget, whichever
// first, and returns the duration of one run: the mean of the thread's CPU
// time for a step that only computes (c.cpu), which a busy machine does not
// inflate, else the median wall time.
func (c *calibration) timeIt(n int, f func(i int) error) (time.Duration, error) {
	ds, err := c.runs(n, f)
	if err != nil || c.cpu {
		// Thread CPU time is accounted at ticks: a run's own is too coarse,
		// the mean over the runs is not.
		return mean(ds), err
	}
	slices.Sort(ds)
	return ds[len(ds)/2], nil
}

// meanTime is timeIt's mean wall time of one run: for what the model prices
// as a fixed service time, which a program doing one after another pays on
// average (its rate is one over the mean, however skewed the latencies).
func (c *calibration) meanTime(n int, f func(i int) error) (time.Duration, error) {
	ds, err := c.runs(n, f)
	return mean(ds), err
}

// runs times f as timeIt says (thread CPU time when c.cpu) and returns each
// run's duration.
func (c *calibration) runs(n int, f func(i int) error) ([]time.Duration, error) {
	end := c.stepEnd()
	clock := func() time.Duration { return time.Duration(time.Now().UnixNano()) }
	if c.cpu {
		clock = threadCPU
	}
	var ds []time.Duration
	for i := 0; i < n && (i < 3 || time.Now().Before(end)); i++ {
		t0 := clock()
		if err := f(i); err != nil {
			return nil, err
		}
		ds = append(ds, clock()-t0)
	}
	return ds, nil
}

func mean(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// stepEnd is when the current step must stop measuring.
func (c *calibration) stepEnd() time.Time {
	end := time.Now().Add(c.step)
	if end.After(c.deadline) {
		end = c.deadline
	}
	return end
}

// batch is timeIt for a cheap operation: each run makes it k times.
func (c *calibration) batch(k int, f func() error) (float64, error) {
	d, err := c.timeIt(200, func(int) error {
		for range k {
			if err := f(); err != nil {
				return err
			}
		}
		return nil
	})
	return float64(d.Nanoseconds()) / float64(k), err
}

func (c *calibration) syscallCost(p *device.Profile) error {
	ns, err := c.batch(1000, func() error { unix.Getppid(); return nil })
	p.CPU.SyscallNs = ns
	return err
}

func (c *calibration) openCost(p *device.Profile) error {
	f := filepath.Join(c.dir, ".iosim-calibrate-open")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		return err
	}
	defer os.Remove(f)
	ns, err := c.batch(200, func() error {
		fd, err := unix.Open(f, unix.O_RDONLY, 0)
		if err != nil {
			return err
		}
		return unix.Close(fd)
	})
	p.CPU.PathLookupNs = max(ns-2*p.CPU.SyscallNs, 0)
	return err
}

// copyCost times pread from the page cache of an L1-sized, a cache-sized
// (1 MiB) and a large buffer against a 1-byte pread: the difference is the
// copy of each tier.
func (c *calibration) copyCost(p *device.Profile) error {
	f := filepath.Join(c.dir, ".iosim-calibrate-copy")
	if err := os.WriteFile(f, make([]byte, 16<<20), 0o644); err != nil {
		return err
	}
	defer os.Remove(f)
	fd, err := unix.Open(f, unix.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	big := make([]byte, 16<<20)
	if _, err := unix.Pread(fd, big, 0); err != nil { // into the page cache
		return err
	}
	read := func(n int) (float64, error) {
		return c.batch(max(1, (64<<10)/n), func() error { _, err := unix.Pread(fd, big[:n], 0); return err })
	}
	one, err := read(1)
	if err != nil {
		return err
	}
	small, err := read(16 << 10)
	if err != nil {
		return err
	}
	// A 1 MiB copy fits the last-level cache (cache_bytes) but not L1: the
	// middle tier the model prices at copy_mb_s.
	mid, err := read(1 << 20)
	if err != nil {
		return err
	}
	large, err := read(16 << 20)
	if err != nil {
		return err
	}
	mbs := func(ns float64, n int) float64 {
		if ns <= one {
			return 100000
		}
		return float64(n) / (ns - one) * 1e3
	}
	p.CPU.L1CopyMBs, p.CPU.L1Bytes = mbs(small, 16<<10), 32<<10
	p.CPU.CopyMBs = mbs(mid, 1<<20)
	p.CPU.MemCopyMBs, p.CPU.CacheBytes = mbs(large, 16<<20), 8<<20
	return nil
}

// appendCost times buffered 1 MiB writes that extend a new file: beyond the
// copy, page allocation and the two journal operations the model charges a
// page that allocates, the rest of the time per page is block allocation.
func (c *calibration) appendCost(p *device.Profile) error {
	f := filepath.Join(c.dir, ".iosim-calibrate-append")
	defer os.Remove(f)
	fd, err := unix.Open(f, unix.O_CREAT|unix.O_TRUNC|unix.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	buf := make([]byte, 1<<20)
	d, err := c.timeIt(16, func(int) error { _, err := unix.Write(fd, buf); return err })
	if err != nil {
		return err
	}
	perPage := float64(d.Nanoseconds()) / float64(len(buf)/4096)
	copyNs := 4096 / p.CPU.CopyMBs * 1e3
	p.CPU.BlockAllocNs = max(perPage-copyNs-p.CPU.PageAllocNs-2*p.CPU.JournalNs-p.CPU.PageLookupNs, 0)
	return nil
}

// makeFile writes the scratch file and syncs it.
func (c *calibration) makeFile(*device.Profile) error {
	c.path = filepath.Join(c.dir, ".iosim-calibrate-data")
	fd, err := unix.Open(c.path, unix.O_CREAT|unix.O_TRUNC|unix.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	c.fd = fd
	for off := 0; off < calFileBytes; off += len(c.buf) {
		if _, err := unix.Pwrite(fd, c.buf, int64(off)); err != nil {
			return err
		}
	}
	if err := unix.Fsync(fd); err != nil {
		return err
	}
	// The measurements read through O_DIRECT when the file system takes it.
	if dfd, err := unix.Open(c.path, unix.O_RDWR|unix.O_DIRECT, 0); err == nil {
		if _, err := unix.Pread(dfd, c.buf[:4096], 0); err == nil {
			_ = unix.Close(c.fd)
			c.fd, c.direct = dfd, true
		} else {
			_ = unix.Close(dfd)
		}
	}
	if !c.direct {
		_ = unix.Fadvise(c.fd, 0, 0, unix.FADV_DONTNEED)
	}
	return nil
}

// note is added to the description when the measurements could not bypass the
// page cache.
const noDirectNote = " (no O_DIRECT on this file system: buffered timings)"

func (c *calibration) sequential(p *device.Profile) error {
	off := 0
	d, err := c.timeIt(calFileBytes>>20, func(int) error {
		_, err := unix.Pread(c.fd, c.buf, int64(off%calFileBytes))
		off += len(c.buf)
		return err
	})
	if err != nil {
		return err
	}
	p.Device.ReadMBs = float64(len(c.buf)) / float64(d.Nanoseconds()) * 1e3
	off = 0
	d, err = c.timeIt(calFileBytes>>20, func(int) error {
		_, err := unix.Pwrite(c.fd, c.buf, int64(off%calFileBytes))
		off += len(c.buf)
		return err
	})
	p.Device.WriteMBs = float64(len(c.buf)) / float64(d.Nanoseconds()) * 1e3
	return err
}

// random times 4 KiB reads and writes at spread offsets (a multiplicative
// sequence, not a random generator: the same offsets every run).
func (c *calibration) random(p *device.Profile) error {
	if !c.direct {
		_ = unix.Fadvise(c.fd, 0, 0, unix.FADV_DONTNEED)
	}
	pages := int64(calFileBytes / 4096)
	at := func(i int) int64 { return (int64(i)*2654435761 + 12345) % pages * 4096 }
	// The flash model serves every read in the same time (command_us +
	// read_us + the transfer at the sequential rate): a reader at queue
	// depth 1 gets one over it per second. A real device's latencies are
	// skewed (the median below the mean), and its rate at queue depth 1 is
	// one over the mean: read_us and program_us are the mean latencies, less
	// the transfer the model adds.
	d, err := c.meanTime(2000, func(i int) error { _, err := unix.Pread(c.fd, c.buf[:4096], at(i)); return err })
	if err != nil {
		return err
	}
	p.Device.ReadUs = max(float64(d.Nanoseconds())/1e3-4096/p.Device.ReadMBs, 0)
	if c.direct {
		n, err := c.parallelism(d, at)
		if err != nil {
			return err
		}
		p.Device.Parallelism = n
	}
	d, err = c.meanTime(2000, func(i int) error { _, err := unix.Pwrite(c.fd, c.buf[:4096], at(i)); return err })
	p.Device.ProgramUs = max(float64(d.Nanoseconds())/1e3-4096/p.Device.WriteMBs, 0)
	return err
}

// calQueueDepth is the queue depth at which calibrate measures the device's
// internal parallelism (fio's canonical iodepth=16).
const calQueueDepth = 16

// aioCB is the kernel's struct iocb (include/uapi/linux/aio_abi.h, little
// endian) and aioEvent its struct io_event.
type aioCB struct {
	data, key0 uint64 // aio_data; aio_key and aio_rw_flags
	opcode     uint16 // IOCB_CMD_PREAD is 0
	reqprio    int16
	fd         uint32
	buf, n     uint64
	off        int64
	_          uint64
	flags      uint32
	resfd      uint32
}

type aioEvent struct {
	data, obj uint64
	res, res2 int64
}

// parallelism measures how many 4 KiB O_DIRECT reads the device serves at
// once: Linux AIO (io_submit/io_getevents, fio's libaio engine) keeps
// calQueueDepth random reads in flight for the step's budget, and the rate
// reached over the rate of one read at a time (one per qd1, the mean latency
// at queue depth 1) is the number of reads in service together. The flash
// model serves a command on one of parallelism units, so at queue depth 16 it
// reaches that many times its queue-depth-1 rate; the result is capped at
// calQueueDepth, the most that was measured.
func (c *calibration) parallelism(qd1 time.Duration, at func(int) int64) (int, error) {
	var ctx uintptr
	if _, _, e := unix.Syscall(unix.SYS_IO_SETUP, calQueueDepth, uintptr(unsafe.Pointer(&ctx)), 0); e != 0 {
		return 1, nil // no AIO in this kernel: the device counts as one unit
	}
	bufs := alignedBuffer(calQueueDepth * 4096)
	cbs := make([]aioCB, calQueueDepth)
	defer func() {
		// io_destroy waits for the reads still in flight (an early error
		// return), which hold pointers into cbs and bufs until then.
		unix.Syscall(unix.SYS_IO_DESTROY, ctx, 0, 0)
		runtime.KeepAlive(cbs)
		runtime.KeepAlive(bufs)
	}()
	next := 0
	submit := func(k int) error {
		cbs[k] = aioCB{data: uint64(k), fd: uint32(c.fd), buf: uint64(uintptr(unsafe.Pointer(&bufs[k*4096]))), n: 4096, off: at(next)}
		next++
		p := &cbs[k]
		if _, _, e := unix.Syscall(unix.SYS_IO_SUBMIT, ctx, 1, uintptr(unsafe.Pointer(&p))); e != 0 {
			return fmt.Errorf("io_submit: %w", e)
		}
		return nil
	}
	end := c.stepEnd()
	t0 := time.Now()
	for k := range calQueueDepth {
		if err := submit(k); err != nil {
			return 0, err
		}
	}
	events := make([]aioEvent, calQueueDepth)
	done, inflight := 0, calQueueDepth
	for inflight > 0 {
		n, _, e := unix.Syscall6(unix.SYS_IO_GETEVENTS, ctx, 1, calQueueDepth, uintptr(unsafe.Pointer(&events[0])), 0, 0)
		if e == unix.EINTR {
			continue
		}
		if e != 0 {
			return 0, fmt.Errorf("io_getevents: %w", e)
		}
		for _, ev := range events[:n] {
			if ev.res < 0 {
				return 0, fmt.Errorf("AIO read: %w", unix.Errno(-ev.res))
			}
			if ev.res != 4096 {
				return 0, fmt.Errorf("AIO read: %d bytes of 4096", ev.res)
			}
			done++
			inflight--
			if done < 1000 || (done < 64000 && time.Now().Before(end)) {
				if err := submit(int(ev.data)); err != nil {
					return 0, err
				}
				inflight++
			}
		}
	}
	rate := float64(done) / time.Since(t0).Seconds() // reads per second at queue depth 16
	n := int(math.Round(rate * qd1.Seconds()))
	return min(max(n, 1), calQueueDepth), nil
}

// syncCosts: fdatasync after an overwrite commits nothing (the blocks are
// allocated, the size unchanged), so beyond the write (O_DIRECT when the file
// system takes it, else buffered and then written back) it costs the flush.
func (c *calibration) syncCosts(p *device.Profile) error {
	w, err := c.timeIt(200, func(i int) error { _, err := unix.Pwrite(c.fd, c.buf[:4096], int64(i%16)*4096); return err })
	if err != nil {
		return err
	}
	d, err := c.timeIt(200, func(i int) error {
		if _, err := unix.Pwrite(c.fd, c.buf[:4096], int64(i%16)*4096); err != nil {
			return err
		}
		return unix.Fdatasync(c.fd)
	})
	if err != nil {
		return err
	}
	if p.Device.WriteCache {
		flush := float64((d - w).Nanoseconds()) / 1e3
		if !c.direct {
			// The writes were buffered: fdatasync also wrote the page back
			// (a 4 KiB write, as random timed it).
			flush -= p.Device.ProgramUs + 4096/p.Device.WriteMBs
		}
		p.Device.FlushUs = max(flush, 0)
	}
	return nil
}

// hostSettings reads the page-cache and writeback settings of the running
// kernel and what /sys says of the device holding the directory.
func (c *calibration) hostSettings(p *device.Profile) {
	readInt := func(path string) (int, bool) {
		b, err := os.ReadFile(path)
		if err != nil {
			return 0, false
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		return n, err == nil
	}
	for _, s := range []struct {
		path string
		dst  *int
	}{
		{"/proc/sys/vm/dirty_ratio", &p.Memory.DirtyRatio},
		{"/proc/sys/vm/dirty_background_ratio", &p.Memory.DirtyBackgroundRatio},
		{"/proc/sys/vm/dirty_expire_centisecs", &p.Memory.DirtyExpireCentisecs},
		{"/proc/sys/vm/dirty_writeback_centisecs", &p.Memory.DirtyWritebackCentisec},
	} {
		if n, ok := readInt(s.path); ok {
			*s.dst = n
		}
	}
	p.Memory.PageCacheBytes = 1 << 30
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, ln := range strings.Split(string(b), "\n") {
			if f := strings.Fields(ln); len(f) >= 2 && f[0] == "MemAvailable:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil && kb > 0 {
					p.Memory.PageCacheBytes = kb << 10
				}
			}
		}
	}
	var st unix.Stat_t
	if unix.Stat(c.dir, &st) != nil {
		return
	}
	q := fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
	for _, dir := range []string{q + "/queue", q + "/../queue"} {
		if n, ok := readInt(dir + "/read_ahead_kb"); ok {
			p.Memory.ReadAheadKB = n
		}
		if b, err := os.ReadFile(dir + "/write_cache"); err == nil {
			p.Device.WriteCache = bytes.HasPrefix(b, []byte("write back"))
		}
		if n, ok := readInt(dir + "/logical_block_size"); ok && n > 0 {
			p.Device.LogicalSector = n
		}
		if n, ok := readInt(dir + "/physical_block_size"); ok && n > 0 {
			p.Device.PhysicalSector = n
		}
	}
	p.FS.NoJournal = noJournal(q)
	var sfs unix.Statfs_t
	if unix.Statfs(c.dir, &sfs) == nil && sfs.Type != unix.EXT4_SUPER_MAGIC {
		p.Description += fmt.Sprintf(" (file system type %#x, priced as ext4)", sfs.Type)
	}
}

// freeBlocksCost times unlink of a file whose 4.5 KiB were written to the
// device (fdatasync) against unlink of an empty file: the difference is
// freeing its blocks, which ext4 without a journal mounted with discard
// discards in the call (fs/ext4/mballoc.c, ext4_mb_clear_bb).
func (c *calibration) freeBlocksCost(p *device.Profile) error {
	f := filepath.Join(c.dir, ".iosim-calibrate-unlink")
	end := c.stepEnd()
	var full, empty []time.Duration
	for i := 0; i < 200 && (i < 5 || time.Now().Before(end)); i++ {
		for _, n := range []int{4608, 0} {
			fd, err := unix.Open(f, unix.O_CREAT|unix.O_TRUNC|unix.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			if _, err := unix.Write(fd, c.buf[:n]); err != nil {
				_ = unix.Close(fd)
				return err
			}
			err = unix.Fdatasync(fd)
			_ = unix.Close(fd)
			if err != nil {
				return err
			}
			t0 := time.Now()
			if err := unix.Unlink(f); err != nil {
				return err
			}
			if n > 0 {
				full = append(full, time.Since(t0))
			} else {
				empty = append(empty, time.Since(t0))
			}
		}
	}
	median := func(ds []time.Duration) time.Duration { slices.Sort(ds); return ds[len(ds)/2] }
	p.FS.FreeBlocksUs = max(float64((median(full)-median(empty)).Nanoseconds())/1e3, 0)
	return nil
}

// noJournal reports whether the ext4 file system on the block device whose
// /sys/dev/block directory is q has no journal: ext4 lists it under
// /proc/fs/ext4/DEV, and jbd2 lists a journal under /proc/fs/jbd2/DEV-INO.
func noJournal(q string) bool {
	b, err := os.ReadFile(q + "/uevent")
	if err != nil {
		return false
	}
	for _, ln := range strings.Split(string(b), "\n") {
		name, ok := strings.CutPrefix(ln, "DEVNAME=")
		if !ok {
			continue
		}
		if _, err := os.Stat("/proc/fs/ext4/" + name); err != nil {
			return false
		}
		j, _ := filepath.Glob("/proc/fs/jbd2/" + name + "-*")
		return len(j) == 0
	}
	return false
}

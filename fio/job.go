// Package fio reads fio job files and runs them on iosim's model of Linux.
//
// # Job files
//
// Parse accepts the subset of fio's job-file syntax that storage engineers
// write for one machine: a [global] section (its options apply to the job
// sections after it; a later [global] changes the defaults of the jobs that
// follow it, as in fio) and job sections, `option=value` or a bare `option`
// (a boolean set to 1), comments from ';' or '#' to the end of the line. The
// options, with fio's meaning (fio(1), "JOB PARAMETERS"):
//
//	rw          read write randread randwrite rw|readwrite randrw   (default read)
//	rwmixread   percentage of reads in rw/randrw (default 50)
//	bs          block size (default 4k)
//	size        bytes of I/O per job, and the file size (required)
//	filename    the file (default jobname.jobnum.0, in directory)
//	directory   where files are (default /)
//	numjobs     clones of the job, each a process of its own (default 1)
//	iodepth     I/Os in flight for libaio (default 1)
//	ioengine    sync | psync | pvsync2 | libaio | posixaio | mmap (default psync)
//	hipri       pvsync2: RWF_HIPRI on every preadv2/pwritev2 (fio's engine option)
//	direct      O_DIRECT (default 0); buffered=0 is direct=1
//	sync        O_SYNC (sync=1 or sync=sync; sync=dsync opens with O_DSYNC)
//	fsync       fsync every N writes (0: never)
//	fdatasync   fdatasync every N writes (0: never)
//	end_fsync   fsync when the job's writes are done
//	fallocate   none | native | posix | keep | truncate | 0 | 1 (default native)
//	runtime     stop after this long (virtual time; fio's time units, seconds by default)
//	time_based  run for runtime even when size is done (wrapping around)
//	randseed    seed of the random offsets (default 0x89, as fio's randrepeat)
//	io_size     bytes of I/O per job when other than size (io_limit): more wraps around the file
//	thinktime   user-level work between a job's I/Os (virtual time; microseconds by default), sync engines
//	group_reporting  one report per group (all jobs here: no stonewall), clones summed
//	ramp_time   run this long before counting (virtual time; seconds by default); runtime follows it
//	rate        bytes/s per direction, "R" or "R,W" (an empty part: no limit); the job waits in virtual time
//	rate_iops   I/Os per second per direction, as rate
//	norandommap random offsets drawn with repetition, not each block once
//	random_distribution  random | zipf:THETA (fio's lib/zipf.c; THETA > 0, not 1)
//	verify      crc32c (crc32c-intel) | 0 | none: a write job reads back every block it wrote and checks it
//	zero_buffers  write zeros (default: fio fills its buffers with random data, the model with a non-zero pattern)
//	name, description   accepted, no effect on the run
//
// Sizes take fio's suffixes with its default kb_base=1024: k, m, g, t, p (and
// kb, mb...) are powers of 1024; ki, mi, gi, ti, pi (and kib...) are powers of
// 1000 (fio keeps the prefixes opposite to IEC for old scripts); case does not
// matter. Any other option, and any malformed value, is an error naming the
// file, the line and the option: nothing is silently ignored.
package fio

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Job is one job section with the [global] options it inherits.
type Job struct {
	Name      string
	File      string // job file name, for messages
	Line      int    // line of the section header
	RW        string // read, write, randread, randwrite, rw, randrw
	MixRead   int    // percentage of reads for rw and randrw
	BS        int64
	Size      int64
	Filename  string
	Directory string
	NumJobs   int
	IODepth   int
	IOEngine  string // sync, psync, libaio
	Direct    bool
	Sync      string // "", "sync" (O_SYNC) or "dsync" (O_DSYNC)
	Fsync     int64  // fsync every Fsync writes
	Fdatasync int64  // fdatasync every Fdatasync writes
	EndFsync  bool
	Fallocate string // none, native, posix, keep, truncate
	Runtime   time.Duration
	TimeBased bool
	RandSeed  uint64
	IOSize    int64         // bytes of I/O per job (0: Size)
	ThinkTime time.Duration // work after each I/O before the next
	// ZeroBuffers: the writes write zeros (fio's zero_buffers), which the
	// model stores without buffers even when the run keeps its payload.
	ZeroBuffers bool

	GroupReporting bool
	RampTime       time.Duration
	Rate           [2]int64 // bytes/s, read and write (0: no limit)
	RateIOPS       [2]int64 // I/Os per second, read and write (0: no limit)
	NoRandomMap    bool
	ZipfTheta      float64 // random_distribution=zipf:THETA (0: uniform)
	Verify         string  // "" or "crc32c"
	Hipri          bool    // pvsync2's RWF_HIPRI
}

// IOBytes is how many bytes the job issues: io_size, or size.
func (j *Job) IOBytes() int64 {
	if j.IOSize > 0 {
		return j.IOSize
	}
	return j.Size
}

// Random reports whether offsets are random.
func (j *Job) Random() bool { return strings.HasPrefix(j.RW, "rand") }

// Reads and Writes report which directions the job does.
func (j *Job) Reads() bool  { return j.RW != "write" && j.RW != "randwrite" }
func (j *Job) Writes() bool { return j.RW != "read" && j.RW != "randread" }

func defaults() Job {
	return Job{RW: "read", MixRead: 50, BS: 4096, Directory: "/", NumJobs: 1, IODepth: 1,
		IOEngine: "psync", Fallocate: "native", RandSeed: 0x89}
}

// Error is a job file that cannot be run: it names file, line and option.
type Error struct {
	File   string
	Line   int
	Option string
	Msg    string
}

func (e *Error) Error() string {
	if e.Option == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Option, e.Msg)
}

// Parse reads a job file. name is used in errors.
func Parse(r io.Reader, name string) ([]*Job, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), 1<<20)
	global := defaults()
	var jobs []*Job
	var cur *Job // nil: in [global] (or before any section)
	inSection := false
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if col, c, bin := binary(text); bin {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("not a fio job file: binary data (byte %#02x at column %d)", c, col)}
		}
		if i := strings.IndexAny(text, ";#"); i >= 0 {
			text = text[:i]
		}
		text = strings.TrimSpace(text)
		if text == "" {
			continue
		}
		if strings.HasPrefix(text, "[") {
			if !strings.HasSuffix(text, "]") || len(text) < 3 {
				return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("malformed section header %s: want [name]", short(text))}
			}
			sec := strings.TrimSpace(text[1 : len(text)-1])
			if sec == "" || strings.ContainsAny(sec, "[]/ ") {
				return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("malformed section name %s", short(sec))}
			}
			inSection = true
			if sec == "global" {
				cur = nil
				continue
			}
			j := global
			j.Name, j.File, j.Line = sec, name, line
			jobs = append(jobs, &j)
			cur = &j
			continue
		}
		if !inSection {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("not a fio job file: %s before any section (a job file starts with [global] or [jobname])", short(text))}
		}
		key, val, hasVal := strings.Cut(text, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if key == "" || strings.ContainsAny(key, " \t\"'") {
			return nil, &Error{File: name, Line: line, Msg: fmt.Sprintf("not a fio job file: %s is no option or option=value", short(text))}
		}
		if !hasVal {
			val = "1"
		}
		dst := cur
		if dst == nil {
			dst = &global
		}
		if err := set(dst, key, val); err != nil {
			return nil, &Error{File: name, Line: line, Option: key, Msg: err.Error()}
		}
	}
	if err := sc.Err(); err != nil {
		msg := err.Error()
		if errors.Is(err, bufio.ErrTooLong) {
			msg = "not a fio job file: a line longer than 1 MiB"
		}
		return nil, &Error{File: name, Line: line + 1, Msg: msg}
	}
	if len(jobs) == 0 {
		return nil, &Error{File: name, Line: line, Msg: "no job section (a [name] other than [global])"}
	}
	for _, j := range jobs {
		if j.Size <= 0 {
			return nil, &Error{File: name, Line: j.Line, Option: "size", Msg: fmt.Sprintf("job %s has no size (fio needs size= for a file it creates)", j.Name)}
		}
		if j.BS > j.Size {
			return nil, &Error{File: name, Line: j.Line, Option: "bs", Msg: fmt.Sprintf("job %s: bs=%d is larger than size=%d", j.Name, j.BS, j.Size)}
		}
		if j.ThinkTime > 0 && j.IOEngine == "libaio" {
			return nil, &Error{File: name, Line: j.Line, Option: "thinktime", Msg: fmt.Sprintf("job %s: thinktime is supported with the sync and psync engines only", j.Name)}
		}
		if j.Hipri && j.IOEngine != "pvsync2" {
			return nil, &Error{File: name, Line: j.Line, Option: "hipri", Msg: fmt.Sprintf("job %s: hipri is an option of ioengine=pvsync2 (fio refuses it with %s)", j.Name, j.IOEngine)}
		}
		if j.Verify != "" && j.Reads() {
			return nil, &Error{File: name, Line: j.Line, Option: "verify", Msg: fmt.Sprintf("job %s: verify is supported for rw=write and rw=randwrite only (the model checks what a write job wrote)", j.Name)}
		}
		if j.Verify != "" && j.TimeBased {
			return nil, &Error{File: name, Line: j.Line, Option: "verify", Msg: fmt.Sprintf("job %s: verify with time_based is not supported (fio verifies a size-based write)", j.Name)}
		}
		if j.IODepth > 1 && j.IOEngine == "posixaio" {
			return nil, &Error{File: name, Line: j.Line, Option: "iodepth", Msg: fmt.Sprintf("job %s: iodepth=%d with posixaio is not supported: the model runs posixaio's thread one request at a time (iodepth=1)", j.Name, j.IODepth)}
		}
		if j.IODepth > 1 && j.IOEngine != "libaio" && j.IOEngine != "posixaio" {
			return nil, &Error{File: name, Line: j.Line, Option: "iodepth", Msg: fmt.Sprintf("job %s: iodepth=%d needs an async engine (ioengine=libaio); %s does one I/O at a time", j.Name, j.IODepth, j.IOEngine)}
		}
	}
	return jobs, nil
}

// Notes are what the model assumes about jobs that their file does not say,
// one line each (the command prints them as note: lines).
func Notes(jobs []*Job) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, j := range jobs {
		switch j.IOEngine {
		case "mmap":
			add(fmt.Sprintf("job %s: ioengine=mmap: the memcpy to or from the mapping costs no virtual time; the page faults it would take are not modelled (mmap, msync and munmap are)", j.Name))
		case "posixaio":
			add(fmt.Sprintf("job %s: ioengine=posixaio: glibc's aio thread is modelled as one thread that takes each request at once (no thread start-up or wake-up time)", j.Name))
		}
		if j.Hipri {
			add(fmt.Sprintf("job %s: hipri: RWF_HIPRI is passed on; the model polls no completion queue, so it costs the same as without", j.Name))
		}
		if j.ZipfTheta > 0 || j.NoRandomMap {
			add(fmt.Sprintf("job %s: the random offsets follow fio's distribution but not fio's generator: the blocks drawn differ from a real fio run with the same randseed", j.Name))
		}
	}
	return out
}

// binary reports whether a line holds what no job file does: a byte that is
// not UTF-8 or a control character other than tab and carriage return, with
// its column (from 1) and value.
func binary(text string) (col int, c byte, bin bool) {
	for i, r := range text {
		if r == utf8.RuneError || r < 0x20 && r != '\t' && r != '\r' || r == 0x7f {
			return i + 1, text[i], true
		}
	}
	return 0, 0, false
}

// short quotes s for a message, cut to 40 bytes.
func short(s string) string {
	if len(s) > 40 {
		return strconv.Quote(s[:40]) + "..."
	}
	return strconv.Quote(s)
}

// set applies one option to j.
func set(j *Job, key, val string) error {
	var err error
	switch key {
	case "name", "description":
		if key == "name" && val != "" {
			j.Name = val
		}
	case "rw", "readwrite":
		switch val {
		case "read", "write", "randread", "randwrite", "randrw":
			j.RW = val
		case "rw", "readwrite":
			j.RW = "rw"
		default:
			return fmt.Errorf("unsupported value %q (want read, write, randread, randwrite, rw or randrw)", val)
		}
	case "rwmixread", "rwmixwrite":
		n, e := strconv.Atoi(val)
		if e != nil || n < 0 || n > 100 {
			return fmt.Errorf("want a percentage 0-100, got %q", val)
		}
		if key == "rwmixwrite" {
			n = 100 - n
		}
		j.MixRead = n
	case "bs", "blocksize":
		if j.BS, err = ParseSize(val); err == nil && j.BS <= 0 {
			err = fmt.Errorf("must be positive")
		}
	case "size":
		j.Size, err = ParseSize(val)
	case "filename":
		if val == "" || strings.Contains(val, ":") {
			return fmt.Errorf("want one file name (several files joined by ':' are not supported), got %q", val)
		}
		j.Filename = val
	case "directory":
		if val == "" || strings.Contains(val, ":") {
			return fmt.Errorf("want one directory, got %q", val)
		}
		j.Directory = val
	case "numjobs", "iodepth":
		n, e := strconv.Atoi(val)
		if e != nil || n < 1 || n > 4096 {
			return fmt.Errorf("want an integer from 1 to 4096, got %q", val)
		}
		if key == "numjobs" {
			j.NumJobs = n
		} else {
			j.IODepth = n
		}
	case "ioengine":
		switch val {
		case "sync", "psync", "pvsync2", "libaio", "posixaio", "mmap":
			j.IOEngine = val
		default:
			return fmt.Errorf("unsupported engine %q (want sync, psync, pvsync2, libaio, posixaio or mmap)", val)
		}
	case "direct", "buffered":
		b, e := boolOpt(val)
		if e != nil {
			return e
		}
		j.Direct = b == (key == "direct")
	case "sync":
		switch val {
		case "0", "none":
			j.Sync = ""
		case "1", "sync":
			j.Sync = "sync"
		case "dsync":
			j.Sync = "dsync"
		default:
			return fmt.Errorf("want 0, 1, none, sync or dsync, got %q", val)
		}
	case "fsync", "fdatasync":
		n, e := strconv.ParseInt(val, 10, 64)
		if e != nil || n < 0 {
			return fmt.Errorf("want a count of writes (0: never), got %q", val)
		}
		if key == "fsync" {
			j.Fsync = n
		} else {
			j.Fdatasync = n
		}
	case "end_fsync", "time_based", "zero_buffers", "group_reporting", "norandommap", "hipri":
		b, e := boolOpt(val)
		if e != nil {
			return e
		}
		switch key {
		case "end_fsync":
			j.EndFsync = b
		case "time_based":
			j.TimeBased = b
		case "group_reporting":
			j.GroupReporting = b
		case "norandommap":
			j.NoRandomMap = b
		case "hipri":
			j.Hipri = b
		default:
			j.ZeroBuffers = b
		}
	case "fallocate":
		switch val {
		case "none", "0":
			j.Fallocate = "none"
		case "native", "posix", "keep", "truncate":
			j.Fallocate = val
		case "1":
			j.Fallocate = "posix"
		default:
			return fmt.Errorf("want none, native, posix, keep, truncate, 0 or 1, got %q", val)
		}
	case "runtime", "timeout":
		j.Runtime, err = ParseTime(val)
	case "ramp_time":
		j.RampTime, err = ParseTime(val)
	case "rate", "rate_iops":
		var v [2]int64
		if v, err = parseRate(val, key == "rate_iops"); err != nil {
			return err
		}
		if key == "rate" {
			j.Rate = v
		} else {
			j.RateIOPS = v
		}
	case "random_distribution":
		switch {
		case val == "random":
			j.ZipfTheta = 0
		case strings.HasPrefix(val, "zipf:"):
			th, e := strconv.ParseFloat(strings.TrimPrefix(val, "zipf:"), 64)
			if e != nil || !(th > 0) || th == 1 || math.IsInf(th, 0) {
				return fmt.Errorf("want zipf:THETA with THETA > 0 and not 1 (fio's zipf), got %q", val)
			}
			j.ZipfTheta = th
		default:
			return fmt.Errorf("unsupported distribution %q (want random or zipf:THETA)", val)
		}
	case "verify":
		switch val {
		case "0", "none":
			j.Verify = ""
		case "crc32c", "crc32c-intel":
			j.Verify = "crc32c"
		default:
			return fmt.Errorf("unsupported verify %q (want crc32c, crc32c-intel, 0 or none)", val)
		}
	case "thinktime":
		j.ThinkTime, err = parseTime(val, time.Microsecond)
	case "io_size", "io_limit":
		if j.IOSize, err = ParseSize(val); err == nil && j.IOSize <= 0 {
			err = fmt.Errorf("must be positive")
		}
	case "randseed":
		j.RandSeed, err = strconv.ParseUint(val, 0, 64)
		if err != nil {
			err = fmt.Errorf("want an unsigned integer, got %q", val)
		}
	default:
		return fmt.Errorf("option not supported by iosim's fio (see 'iosim help fio')")
	}
	if err != nil {
		return err
	}
	return nil
}

// parseRate reads fio's rate= or rate_iops= value: one number for both
// directions, or READ,WRITE where an empty part leaves that direction unlimited.
func parseRate(val string, iops bool) ([2]int64, error) {
	var out [2]int64
	parts := strings.Split(val, ",")
	if len(parts) > 2 {
		return out, fmt.Errorf("want RATE or READRATE,WRITERATE, got %q", val)
	}
	for i, s := range parts {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		var n int64
		var err error
		if iops {
			n, err = strconv.ParseInt(s, 10, 64)
		} else {
			n, err = ParseSize(s)
		}
		if err != nil || n < 0 {
			return out, fmt.Errorf("want a rate such as 10m or 1000 (or READ,WRITE), got %q", val)
		}
		out[i] = n
	}
	if len(parts) == 1 {
		out[1] = out[0]
	}
	return out, nil
}

func boolOpt(v string) (bool, error) {
	switch v {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, fmt.Errorf("want 0 or 1, got %q", v)
}

// ParseSize reads a byte count with fio's integer suffixes under kb_base=1024
// (see the package comment): "4k" is 4096, "1m" 1048576, "1mi" 1000000; an
// optional trailing b/B; 0x for hexadecimal.
func ParseSize(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "" {
		return 0, fmt.Errorf("empty size")
	}
	num := t
	mult := int64(1)
	t = strings.TrimSuffix(t, "b")
	for _, u := range []struct {
		suf  string
		mult int64
	}{
		{"ki", 1e3}, {"mi", 1e6}, {"gi", 1e9}, {"ti", 1e12}, {"pi", 1e15},
		{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"p", 1 << 50},
	} {
		if strings.HasSuffix(t, u.suf) && t != u.suf {
			num, mult = strings.TrimSuffix(t, u.suf), u.mult
			break
		}
		num = t
	}
	n, err := strconv.ParseInt(num, 0, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("want a size such as 4096, 4k, 1m or 2g, got %q", s)
	}
	if n > 0 && mult > (1<<62)/n {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// ParseTime reads a duration with fio's time suffixes: d, h, m, s, ms/msec,
// us/usec; no suffix means seconds.
func ParseTime(s string) (time.Duration, error) { return parseTime(s, time.Second) }

// parseTime is ParseTime with unit the meaning of a number without a suffix
// (fio's thinktime counts microseconds).
func parseTime(s string, unit time.Duration) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range []struct {
		suf  string
		unit time.Duration
	}{
		{"msec", time.Millisecond}, {"usec", time.Microsecond}, {"ms", time.Millisecond},
		{"us", time.Microsecond}, {"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}, {"s", time.Second},
	} {
		if strings.HasSuffix(t, u.suf) {
			t, unit = strings.TrimSuffix(t, u.suf), u.unit
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > int64(1<<62)/int64(unit) {
		return 0, fmt.Errorf("want a time such as 30, 10s, 500ms or 2m, got %q", s)
	}
	return time.Duration(n) * unit, nil
}

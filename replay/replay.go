// Package replay runs a recorded strace on iosim's model of Linux: each traced
// process becomes a simulated process, each file-I/O call a sim.Call sent through an
// interposer stack to the kernel model, and (with Verify) every result is compared
// with the recorded one.
//
// # The world before the trace
//
// A traced program reads files that existed before it started. Replay infers them
// from the recorded results: a path that a successful call used and the model does
// not have is created (a directory or a file, as the call shows), with the size that
// fstat/lseek/short reads reveal and the bytes that reads show. Such inferred files
// are external state: their content comes from the recording, so reads of them are
// checked for their counts, not their bytes. Paths that the trace itself removed are
// never re-created. fds used before any open (inherited ones, or a trace attached
// with -p) are installed from their -y decoration or as placeholders that answer
// what the recording says; so are 0, 1 and 2 of a process the trace starts
// with (a terminal, a pipe or a file: the launcher's).
//
// Failed calls are evidence as well (evidence.go): an error shows what Linux
// found before it failed (both names of a link or a RENAME_NOREPLACE rename
// that failed with EEXIST, a file where ENOTDIR came from, a symlink under
// O_NOFOLLOW, data where a direct read failed its alignment check, a
// misaligned buffer where a direct write did, entries for ENOTEMPTY:
// notempty.go, two file systems for EXDEV: mounts.go). A file an O_CREAT open may have found rather than made is
// taken as found once a later result shows it (creat.go). Every fact taken
// from a result is a note naming the line; a fact that contradicts an
// earlier inference is noted as a contradiction and the model left as it was.
//
// # What is compared
//
// Return values and errnos of every modelled call, returned fd numbers, the bytes of
// reads wherever the trace shows them and the model knows them (bytes that a write
// shown with -s truncation did not show are unknown, not zeros), stat sizes and
// types, getcwd and readlink strings (a link whose target the trace does not
// show, at a path the model has no link at, is not compared). Where Linux
// leaves a result open (directory order, how many AIO completions io_getevents
// returns, the pid a fork gets, the fd numbers of fds inherited before
// tracing), replay checks that the recorded result is one the model allows and
// follows it.
//
// # Tasks the trace does not show
//
// A trace attached to a running program (`strace -f -p PID`) shows no task being
// created: the tasks without a creator are taken as the threads of the first one,
// sharing its fd table, when that one's first call is not an execve. Tasks the
// trace does not show at all (threads of a program traced without -f, the other
// files of an -ff set, threads that existed before an attach) may take and free
// fds of the table they share with traced ones: in such a table an fd number
// above the lowest free one is accepted (the fds below are then held by them),
// and so is one they held that the traced tasks get back. A thread that the
// trace shows being created but never shows running (traced without -f) may
// also have opened an fd that a traced task uses.
//
// # Traces of some calls
//
// A trace recorded with -e trace= shows some calls only (see shows: a program
// starts in it without the calls every program makes at start-up, or several
// tasks appear without the calls that make tasks). Calls it leaves out may have
// made the fds that shown calls use (socket, pipe, dup), freed fds (close),
// made processes (fork: a task whose end a SIGCHLD reports is taken as the
// receiver's child), run programs (execve: an fd with FD_CLOEXEC that the
// trace finds closed is closed by one, which the model then runs), written
// data (write: sizes are then not compared) and set permission bits (which
// are not compared). fd numbers are then taken as recorded, as in a blind fd
// table. What such calls did to an fd the trace goes on using (dup2,
// fcntl F_DUPFD) the model cannot follow: divergences on it are the limits
// of the trace.
package replay

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	pathpkg "path"
	"slices"
	"sort"
	"strings"
	"sync/atomic"

	iodevice "github.com/iosim/iosim/device"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// Options configures a replay.
type Options struct {
	// Verify compares every replayed result with the recorded one.
	Verify bool
	// KeepGoing counts malformed lines and goes on; without it the first one is an
	// error naming file and line.
	KeepGoing bool
	// Stack lists interposer specs (NAME[:key=value,...]), the first nearest to
	// the program.
	Stack []string
	// Root seeds the model with a copy of a host directory tree (read only;
	// replay never writes to the host): "DIR" puts it at the same paths in the
	// model, "DIR:/MOUNT" at /MOUNT.
	Root string
	// Mounts are mounts of the traced system, TYPE:/PATH each (ParseMount):
	// a rename, link or copy_file_range between two of them fails with
	// EXDEV. Root's DIR:/MOUNT is one too.
	Mounts []string
	// Cwd is the traced program's initial working directory; empty infers it
	// from the trace, else takes CwdFallback, else Root's directory, else
	// /tmp/iosim, each of the last three with a note.
	Cwd string
	// CwdFallback is where the program ran when the trace does not show it
	// and Cwd is empty (iosim crash: its --workload-dir); CwdFallbackFrom
	// names it in the note ("--workload-dir").
	CwdFallback, CwdFallbackFrom string
	// MaxDivergences bounds the divergences kept in the report (all are counted);
	// zero means 100.
	MaxDivergences int
	// Progress, when set, receives a progress line now and then.
	Progress io.Writer
	// MaxLineLen bounds a trace line (0: the parser's default).
	MaxLineLen int
	// FS configures the model's file system (vfs.New's options).
	FS []vfs.Option
	// Device, when set, prices the calls with its time model (sim.WithDevice)
	// and the report carries Timing.
	Device *iodevice.Profile
	// Timing, with Device, compares the model's time of each call with the
	// duration recorded by strace -T (Report.Timing.Classes, DeviceBound).
	Timing bool

	// Observe, when set, puts a layer at the top of the stack, nearest the
	// program (crash exploration watches the calls there): it is given the file
	// system and the layer below, and returns the new top.
	Observe func(fs *vfs.FS, next sim.Handler) sim.Handler
	// OnEvent, when set, is told the file and line of each event before it is
	// replayed.
	OnEvent func(file string, line int)
	// Settle, when set, is called for every inode replay creates or fills in to
	// stand for state from before the trace (inference, Root), after the change.
	Settle func(ino *vfs.Inode)
	// Stdout, when set, receives what each successful write(2) to fd 1 wrote
	// when fd 1 is not a file of the model (a terminal, a pipe): what the
	// program announced.
	Stdout func(b []byte)
	// Unknown, when set, is told of every range of a regular file that the
	// model comes to hold with bytes the trace does not show: a write whose
	// data strace's -s cut (any shape of write: write, pwrite64, writev,
	// pwritev, pwritev2, an io_submit write iocb), a shared writable
	// mapping, a copy of such bytes. A non-nil error stops the replay with
	// it, after the call.
	Unknown func(u Unknown) error
}

// Divergence is one call whose simulated result differs from the recorded one.
type Divergence struct {
	File      string `json:"file"`
	Line      int    `json:"line"`
	Call      string `json:"call"`
	What      string `json:"what"`
	Recorded  string `json:"recorded"`
	Simulated string `json:"simulated"`
}

func (d Divergence) String() string {
	return fmt.Sprintf("%s:%d: %s: %s: recorded %s, simulated %s", d.File, d.Line, d.Call, d.What, d.Recorded, d.Simulated)
}

// SyscallStats are the per-syscall counts of the summary.
type SyscallStats struct {
	Calls       int64 `json:"calls"`
	Errors      int64 `json:"errors"`
	Bytes       int64 `json:"bytes"`
	Divergences int64 `json:"divergences"`
}

// Report is what a replay did and found.
type Report struct {
	Files       []string         `json:"files"`
	Stack       string           `json:"stack"`
	Calls       int64            `json:"calls"`
	Replayed    int64            `json:"replayed"`
	Verified    int64            `json:"verified"`
	NotModelled map[string]int64 `json:"not_modelled"`
	// Skipped counts calls of modelled syscalls that replay could not rebuild
	// from the trace (an anonymous or fixed-address mmap, an argument strace did
	// not print), keyed "name (reason)".
	Skipped map[string]int64 `json:"skipped"`
	// Complete says that the whole input was read and every line of it
	// parsed: false after a stop (Error) and when KeepGoing skipped lines
	// (ParseErrors).
	Complete bool `json:"complete"`
	// Error is why the replay stopped before the end of the input
	// ("FILE:LINE:COL: ..."), empty when it did not.
	Error string `json:"error,omitempty"`
	// ParseErrors counts the malformed lines: those KeepGoing skipped, or
	// the one the replay stopped at.
	ParseErrors    int64                    `json:"parse_errors"`
	ParseErrorList []string                 `json:"parse_error_list,omitempty"`
	Divergences    int64                    `json:"divergences"`
	DivergenceList []Divergence             `json:"divergence_list,omitempty"`
	KernelCalls    int64                    `json:"kernel_calls"`
	Syscalls       map[string]*SyscallStats `json:"syscalls"`
	Processes      int                      `json:"processes"`
	InferredPaths  int                      `json:"inferred_paths"`
	VirtualTimeNs  int64                    `json:"virtual_time_ns"`
	StackReport    string                   `json:"stack_report,omitempty"`
	Timing         *Timing                  `json:"timing,omitempty"` // with Options.Device
	// Notes says what the trace does not show and replay therefore took as
	// recorded (a trace of some calls, tasks it does not show, -ff files
	// without timestamps).
	Notes          []string `json:"notes,omitempty"`
	maxDivergences int
}

// counter is the bottom of the stack: it counts the calls that reach the kernel.
type counter struct {
	next sim.Handler
	n    atomic.Int64
}

func (c *counter) Syscall(call *sim.Call) sim.Result {
	c.n.Add(1)
	return c.next.Syscall(call)
}

// Run replays the trace files (several files are -ff per-task files, replayed
// together, interleaved by timestamp, else by what their calls say of each
// other; when that order gives results that disagree with the recorded
// ones, an order of the files that agrees is searched for first: order.go)
// and returns the report. An error means the
// replay could not run to the end: a file that cannot be read, a malformed line
// without KeepGoing, a bad stack spec.
func Run(files []string, opts Options) (*Report, error) {
	if len(files) == 0 {
		return nil, errors.New("replay: no trace files")
	}
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		f.Close()
	}
	if len(files) > 1 {
		return runOrdered(files, opts)
	}
	return replayOnce(files, opts, nil)
}

// replayOnce replays files once; tr, when set, gives the order of -ff files at
// the positions it chooses and receives the order the replay took.
func replayOnce(files []string, opts Options, tr *trial) (*Report, error) {
	popts := strace.Options{KeepGoing: opts.KeepGoing, MaxLineLen: opts.MaxLineLen}
	pl := startScan(files, popts)
	defer pl.stopScan()
	r, err := newReplayer(opts, pl)
	if err != nil {
		return nil, err
	}
	r.report.Files = files

	var parsers []*strace.Parser
	for _, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		parsers = append(parsers, strace.NewParser(f, name, popts))
	}
	next := parsers[0].Next
	var merger *strace.Merger
	if len(parsers) > 1 {
		merger = strace.Merge(parsers...)
		if tr != nil {
			merger.Choose(tr.choices)
		}
		next = merger.Next
	}
	for {
		ev, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			rep := r.finish(parsers)
			rep.Error = err.Error()
			if se := (*strace.SyntaxError)(nil); errors.As(err, &se) {
				// The malformed line the replay stopped at is a parse error too.
				rep.ParseErrors++
				rep.ParseErrorList = append(rep.ParseErrorList, rep.Error)
			}
			return rep, err
		}
		if opts.OnEvent != nil {
			opts.OnEvent(ev.File, ev.Line)
		}
		divs := r.report.Divergences
		r.event(ev)
		if tr != nil && merger != nil && !tr.took(merger, ev, r.report.Divergences > divs) {
			break
		}
		if r.stop != nil {
			rep := r.finish(parsers)
			rep.Error = r.stop.Error()
			return rep, r.stop
		}
		if opts.Progress != nil && r.report.Calls%200000 == 0 && r.report.Calls > 0 {
			fmt.Fprintf(opts.Progress, "\riosim replay: %d calls", r.report.Calls)
		}
	}
	if opts.Progress != nil && r.report.Calls >= 200000 {
		fmt.Fprintln(opts.Progress)
	}
	r.notes(len(files))
	rep := r.finish(parsers)
	rep.Complete = rep.ParseErrors == 0
	return rep, nil
}

// notes fills Report.Notes at the end of a replay.
func (r *replayer) notes(nfiles int) {
	rep := r.report
	if r.cwdFirst != "" {
		rep.Notes = append(rep.Notes, r.cwdNote+"; the first relative path that depends on it: "+r.cwdFirst)
	}
	r.untracedThreads()
	if r.report.Calls > 0 && r.shows() != allCalls {
		rep.Notes = append(rep.Notes, "the trace shows some calls only (strace -e trace=): fd numbers, sizes and permission bits that the calls it leaves out explain are taken as recorded")
	}
	var began, untraced int
	for _, b := range r.blind {
		switch b {
		case beganBefore:
			began++
		case untracedThread:
			untraced++
		}
	}
	if began > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d process(es) began before the trace (strace -p, one file of an -ff set): fds that tasks it does not show explain are taken as recorded", began))
	}
	if r.untracedChildren > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d child process(es) the trace does not follow (traced without -f): what they did to files is not in the trace, and a file they made or changed is taken as it is first seen (record with strace -f, or iosim record)", r.untracedChildren))
	}
	if untraced > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d process(es) made threads the trace does not follow (traced without -f): fds they explain are taken as recorded", untraced))
	}
	if r.dentsAsRecorded > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d directory listing(s) taken as recorded: tasks or calls the trace does not show may have changed the directories", r.dentsAsRecorded))
	}
	if r.unknownReadBytes > 0 {
		rep.Notes = append(rep.Notes, fmt.Sprintf("%d byte(s) read were written with data the trace does not show (strace -s cut it): not compared", r.unknownReadBytes))
	}
	if r.plan.untimedFiles() && nfiles > 1 {
		rep.Notes = append(rep.Notes, "the -ff files have no timestamps: they are ordered by their waits, clones, pipes and SIGCHLDs, and the fd numbers of threads in different files are taken as recorded")
	}
	rep.Notes = append(rep.Notes, r.world.factNotes()...)
	if n := r.world.creatNote(); n != "" {
		rep.Notes = append(rep.Notes, n)
	}
}

func (r *replayer) finish(parsers []*strace.Parser) *Report {
	rep := r.report
	for _, p := range parsers {
		rep.ParseErrors += int64(p.Skipped())
		for _, e := range p.Errors() {
			if len(rep.ParseErrorList) < 100 {
				rep.ParseErrorList = append(rep.ParseErrorList, e.Error())
			}
		}
	}
	rep.KernelCalls = r.kcount.n.Load()
	rep.InferredPaths = r.world.inferred
	rep.VirtualTimeNs = r.k.Now()
	if r.timer != nil {
		rep.Timing = r.timer.report(r.opts.Device.Name)
	}
	if c, ok := interposer.Find[*interposer.Count](r.top); ok {
		rep.StackReport = c.String()
	}
	return rep
}

// replayer is the state of one replay.
type replayer struct {
	// stdouts are the standard outputs the traced processes started with:
	// a write to any fd that holds one (fd 1, a dup of it) is an
	// announcement; a write to an fd 1 that a dup2 made a pipe is not.
	stdouts map[*sim.Placeholder]bool
	// announced counts the bytes the program printed on them (announce).
	announced int64
	// children are the processes forked so far; untracedChildren counts
	// those the trace never shows (traced without -f).
	children         []int
	untracedChildren int
	cwdNote          string   // where the program was taken to have started, when the trace does not show it
	call             sim.Call // the Call of the event being replayed, lent down the stack
	timer            *timer   // the top layer with Options.Device
	opts             Options
	plan             *plan
	fs               *vfs.FS
	k                *sim.Kernel
	kcount           *counter
	top              sim.Handler
	report           *Report
	world            *world
	// stop, once set, ends the replay after the current event (Options.Unknown).
	stop error
	// unknownReadBytes counts the bytes recorded reads showed where the model
	// held unknown bytes (not compared).
	unknownReadBytes int64

	tasks map[int]*sim.Task // traced tid → simulated task
	// attached is the first task with no creator in the trace; the other
	// tasks without one are its threads (see task).
	attached *sim.Task
	// blind holds the fd tables that tasks the trace does not show may use
	// too, so that the lowest free fd is not the only one Linux could have
	// returned (see task and fdAllowed), and why.
	blind map[*sim.ThreadGroup]blindness
	// subset is what the trace shows of the program's calls (see shows),
	// once known.
	subset    traceSubset
	umaskSeen bool // a umask call has shown the inherited mask
	names     map[string]*nameInfo
	pos       map[*sim.File]int64    // offsets as the recorded program had them (recPos)
	cur       *sim.File              // the description of the current fd call, if any
	curPos    int64                  // its recorded offset before the call
	curIno    uint64                 // the inode number of the current fd call's file (0: none); also for an fd a layer serves
	aioCtx    map[uint64]uint64      // recorded io context id → model's
	aioPend   map[uint64]*aioPending // completions not yet matched, by model context
	buf       []byte                 // scratch for read buffers
	// closedEarly marks closes printed as <unfinished ...> whose fd another
	// task's call took before the close's result: following that call's
	// recorded fd closed it already, so the close itself is only checked.
	closedEarly map[closeKey]bool
	// standIns holds the descriptions replay installed for fds from before
	// the trace (see inherited).
	standIns map[*sim.File]bool
	// shownKind holds the type a recorded stat showed of a stand-in
	// (standInShown).
	shownKind map[*sim.Placeholder]uint32
	making    map[int]bool // the tids task is making (a cycle of creators ends there)
	threads   []madeThread // threads made whose presence in the input is not yet asked
	filled    int          // stand-ins fill installed (at most maxFill)
	// dentsAsRecorded counts the listings not compared (see treeHidden).
	dentsAsRecorded int

	// cwdAssumed is the directory of cwdNote ("" when Options or the trace
	// gave it), and cwdFirst the first call whose relative path resolved
	// against it (relativeUse): the note is for a replay that depended on
	// it.
	cwdAssumed, cwdFirst string
}

// madeThread is a thread a traced clone made, in fd table group.
type madeThread struct {
	tid   int
	group *sim.ThreadGroup
}

// blindness says why tasks the trace does not show may share an fd table.
type blindness uint8

const (
	// beganBefore: the table's first task began before the trace (attached
	// with -p, one file of an -ff set) and may have had other threads.
	beganBefore blindness = 1 + iota
	// untracedThread: a task of the table created a thread that has no line
	// in the trace (traced without -f). Such a thread may also open an fd
	// that a traced task then uses (see ensureFd).
	untracedThread
)

// traceSubset says how much of a program's calls a trace shows.
type traceSubset uint8

const (
	subsetUnknown traceSubset = iota // not yet asked
	allCalls                         // a plain trace
	// someCalls: strace -e trace= chose the calls: a program starts in the
	// trace and none of startCalls is in it, several tasks are in it and
	// none of the calls that make tasks, or an fd number is returned twice
	// and neither a close nor any of startCalls is in it. Calls it does not show
	// (socket, pipe, dup) may have made the fds that shown calls use, and
	// freed others.
	someCalls
	// someCallsNoClose: someCalls without close, so that fds are freed
	// where the trace does not show it.
	someCallsNoClose
)

// startCalls are calls that every program makes after execve (the dynamic
// loader, libc's and Go's start-up), none of which takes an fd or a path, so
// that no -e trace=%file or %desc shows them.
var startCalls = []string{"brk", "arch_prctl", "set_tid_address", "set_robust_list", "rseq",
	"rt_sigaction", "rt_sigprocmask", "munmap", "mprotect", "prlimit64", "getrandom"}

// shows returns what the trace shows of the program's calls. It waits for
// the read-ahead pass to read the whole input.
func (r *replayer) shows() traceSubset {
	if r.subset == subsetUnknown {
		switch {
		case r.plan.hasCall("execve", "execveat") && !r.plan.hasCall(startCalls...),
			r.plan.tasks() > 1 && !r.plan.hasCall("clone", "clone3", "fork", "vfork"),
			r.plan.reusesFds() && !r.plan.hasCall("close", "close_range") && !r.plan.hasCall(startCalls...):
			// a program started but its start-up is not shown, or tasks
			// are shown but not the calls that made them
			r.subset = someCalls
			if !r.plan.hasCall("close", "close_range") {
				r.subset = someCallsNoClose
			}
		default:
			r.subset = allCalls
		}
	}
	return r.subset
}

// closeKey names a call by its task and start line.
type closeKey struct{ pid, line int }

func newReplayer(opts Options, pl *plan) (*replayer, error) {
	fs := vfs.New(opts.FS...)
	// One goroutine replays every task: a lock or pipe wait would never end.
	kopts := []sim.Option{sim.WithLockWait(false)}
	if opts.Device != nil {
		kopts = append(kopts, sim.WithDevice(opts.Device))
	}
	k := sim.New(fs, kopts...)
	r := &replayer{opts: opts, plan: pl, fs: fs, k: k, tasks: map[int]*sim.Task{}, blind: map[*sim.ThreadGroup]blindness{}, aioCtx: map[uint64]uint64{}, aioPend: map[uint64]*aioPending{}, names: map[string]*nameInfo{}, pos: map[*sim.File]int64{}, closedEarly: map[closeKey]bool{}, standIns: map[*sim.File]bool{}, making: map[int]bool{}}
	r.kcount = &counter{next: k}
	r.top = r.kcount
	if len(opts.Stack) > 0 {
		st, err := interposer.ParseStack(opts.Stack)
		if err != nil {
			return nil, err
		}
		r.top, err = st.Build(r.kcount)
		if err != nil {
			return nil, err
		}
	}
	if opts.Device != nil {
		r.timer = newTimer(r.top, k, opts.Timing)
		r.top = r.timer
	}
	if opts.Observe != nil {
		r.top = opts.Observe(fs, r.top)
	}
	max := opts.MaxDivergences
	if max <= 0 {
		max = 100
	}
	r.report = &Report{NotModelled: map[string]int64{}, Skipped: map[string]int64{}, Syscalls: map[string]*SyscallStats{}, maxDivergences: max}
	for _, s := range opts.Stack {
		if r.report.Stack != "" {
			r.report.Stack += " "
		}
		r.report.Stack += s
	}
	r.world = newWorld(r)
	if opts.Root != "" {
		if err := r.world.seedFromHost(opts.Root); err != nil {
			return nil, err
		}
	}
	if err := r.world.mountsGiven(opts); err != nil {
		return nil, err
	}
	cwd := opts.Cwd
	if cwd == "" {
		cwd = pl.initialCwd()
	}
	if cwd == "" {
		var from string
		rootAt := rootMount(opts.Root)
		switch {
		case opts.CwdFallback != "":
			cwd, from = opts.CwdFallback, cmp.Or(opts.CwdFallbackFrom, "the caller's fallback")
		case rootAt != "":
			cwd, from = rootAt, "--root's directory"
		default:
			cwd, from = "/tmp/iosim", "the default"
		}
		r.cwdAssumed = pathpkg.Clean(cwd)
		r.cwdNote = fmt.Sprintf("the trace does not show the directory the program started in: taken as %s, %s (pass --cwd to say where it ran)", cwd, from)
	}
	// The working directory and those above it existed before the trace
	// (external state): the program may find entries there that the trace
	// does not show, so listings of it are taken as recorded, and the names
	// later calls reveal are inferred. A working directory --root provides is
	// known.
	if cwd != "/" {
		r.world.ensure(pathpkg.Dir(pathpkg.Clean(cwd)), vfs.S_IFDIR, "")
	}
	_, known := fs.Root().Resolve(cwd, true)
	if err := fs.MkdirAll(cwd, 0o755); err != nil {
		return nil, fmt.Errorf("replay: working directory %s: %w", cwd, err)
	}
	if ino, err := fs.Root().Resolve(cwd, true); err == nil && known != nil && cwd != "/" {
		r.world.ext[ino.Ino()] = ino
	}
	if opts.Settle != nil {
		for p := pathpkg.Clean(cwd); ; p = pathpkg.Dir(p) {
			defer func(p string) {
				if ino, err := fs.Root().Resolve(p, true); err == nil {
					opts.Settle(ino)
				}
			}(p)
			if p == "/" {
				break
			}
		}
	}
	r.world.cwd = cwd
	return r, nil
}

// diverge records a divergence of the call in ev.
func (r *replayer) diverge(ev *strace.Event, what, recorded, simulated string) {
	rep := r.report
	rep.Divergences++
	if s := rep.Syscalls[ev.Name]; s != nil {
		s.Divergences++
	}
	if len(rep.DivergenceList) < rep.maxDivergences {
		call := string(ev.Text)
		if len(call) > 160 {
			call = call[:160] + "..."
		}
		rep.DivergenceList = append(rep.DivergenceList, Divergence{File: ev.File, Line: ev.Line, Call: call, What: what, Recorded: recorded, Simulated: simulated})
	}
}

// SortedSyscalls returns the syscall names of the report by decreasing calls.
func (rep *Report) SortedSyscalls() []string {
	names := make([]string, 0, len(rep.Syscalls))
	for n := range rep.Syscalls {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := rep.Syscalls[names[i]], rep.Syscalls[names[j]]
		if a.Calls != b.Calls {
			return a.Calls > b.Calls
		}
		return names[i] < names[j]
	})
	return names
}

// SortedNotModelled returns the not-modelled names by decreasing count.
func (rep *Report) SortedNotModelled() []string { return byCount(rep.NotModelled) }

// SortedSkipped returns the skipped keys by decreasing count.
func (rep *Report) SortedSkipped() []string { return byCount(rep.Skipped) }

// byCount returns the keys of m by decreasing count, then by name.
func byCount(m map[string]int64) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.SortFunc(names, func(a, b string) int {
		if m[a] != m[b] {
			return int(m[b] - m[a])
		}
		return strings.Compare(a, b)
	})
	return names
}

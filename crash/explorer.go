package crash

import (
	"hash/maphash"
	"io"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// Options configures an exploration.
type Options struct {
	// Models are the persistence models explored (nil: DefaultModels).
	Models []*Model
	// Depth bounds the deviations from "everything in flight survived" a state
	// may have: in-flight calls lost (or, for a journal, the journal cut at
	// them), data torn, a rename split. 0 means 1; a negative depth explores
	// only the two extremes (all kept, only the durable state).
	Depth int
	// Sample draws this many more states per crash point at random (any subset
	// allowed by the model, torn blocks), from Seed.
	Sample int
	Seed   uint64
	// EveryCall makes every call a crash point, not only the calls that change
	// what could become durable or what the program announced.
	EveryCall bool
	// Skip records the first Skip calls that make crash points without
	// exploring them (a long prefix already known to be safe).
	Skip int
	// Checkers check each distinct state (nil: durability, atomic-replace, fsck).
	Checkers []Checker
	// Shard and Shards split the states deterministically: this run checks the
	// states whose number is Shard modulo Shards (Shards 0 or 1: all).
	Shard, Shards int
	// Jobs bounds the checkers run at once (external checkers; 0: GOMAXPROCS).
	Jobs int
	// Workers is the number of goroutines building and checking the states of
	// a crash point with the built-in checks (0: GOMAXPROCS). The report is
	// the same whatever the number.
	Workers int
	// Progress, when set, is called after each crash point with the states so far.
	Progress func(points, states int)
	// SkipUnknown makes replay.Explore go on past bytes the trace does not
	// show instead of refusing the trace: it tells Explorer.Unknown of them,
	// and the states that may hold them are counted (Report.Unchecked), not
	// checked.
	SkipUnknown bool
	// AssumeUnknown makes replay.Explore go on past bytes the trace does not
	// show and check every state with the model's bytes in their place: for
	// bytes the program does not rely on after a crash (SQLite's wal-index,
	// which recovery rebuilds from the WAL). Report.Assumed says so.
	AssumeUnknown bool
	// Only, when set, explores only the crash point of this state, checks
	// nothing, and gives the state to Visit (not called when the run has no
	// such state). The other options must be those of the run that named it.
	Only  *StateID
	Visit func(s *State)
	// Failed, when set, is called with every failing state of the run (of
	// this shard), by ID, once each; from several goroutines at once when
	// checkers run in parallel. The state is valid during the call only.
	Failed func(s *State)
}

// Checker checks a crash state. Check returns the problems it finds (none: the
// state is consistent). A Checker is called from one goroutine at a time unless
// it is also a ParallelChecker.
type Checker interface {
	Name() string
	Check(s *State) []Finding
}

// ParallelChecker marks a checker that runs on Options.Jobs goroutines (an
// external command): its Check must be safe for concurrent use.
type ParallelChecker interface {
	Checker
	Parallel()
}

// Finding is one problem a checker found in a state.
type Finding struct {
	Kind    string // the checker's name, or a finer kind
	Path    string // the file concerned, if any
	Message string
}

// State is a crash state given to a checker: read it with ReadFile, or FS for
// the whole file system. It is valid during the Check call only.
type State struct {
	// Stdout is what the program had written to its standard output before the
	// crash point.
	Stdout []byte
	// Point is the last call before the crash.
	Point Op
	// Name is a stable name of the state (crash point, model's choice).
	Name string
	// ID identifies the state in reports (StateID's text form).
	ID string

	e  *Explorer
	x  *point
	w  *walker
	fs *vfs.FS // built by FS
}

// Explorer observes a program's calls, and at each crash point builds the crash
// states the models allow, checks each distinct one and groups what fails into
// findings. It implements sim.Handler over the kernel (or the top of an
// interposer stack); Go workloads and replay feed it calls. Calls are explored
// one at a time (the explorer serialises them).
type Explorer struct {
	mu   sync.Mutex
	fs   *vfs.FS
	next sim.Handler
	opts Options

	// ops are the recorded calls from number opBase on: the calls before
	// made no change still in flight (pinned keeps those the promises name).
	ops    []Op
	opBase int
	pinned map[int]Op
	file   string
	line   int
	ncalls int
	stdout []byte

	// what the program was promised
	horizon     uint64 // journal models: metadata with Seq <= horizon is committed
	promises    map[uint64][]dataPromise
	aioSync     map[[2]uint64]aioSync // (context, iocb number) → an fsync iocb submitted
	aioCount    map[uint64]uint64     // context → iocbs submitted
	names       map[string]namePromise
	replaces    []replaceRec
	truncCloses []truncClose
	// logged: logNewName models: the inodes an fsync of a regular file logs
	// (the file and its ancestors), with the fsync's seq
	logged    []loggedIno
	truncated map[uint64]bool
	expect    uint64 // version of the expectations above and of stdout

	hseed      maphash.Seed
	dmu        sync.Mutex        // guards dataHash while states are explored
	dataHash   map[uint64]uint64 // hash of the durable data of files with nothing in flight
	buf        []byte
	verdicts   map[verdictKey]*verdict // of the expectations' version verdictsOf
	verdictsOf uint64
	// reference, when set (tests), sees each point's states and their outcomes
	reference func(x *point, states []*seenState, out []outcome)
	// closeHook, when set (tests), sees each state before and after closing
	closeHook func(x *point, m *Model, forced []bool, devs, closed []dev)
	key       []byte              // admit's scratch
	callers   map[string]fileLine // goCaller's cache: call stack → the workload's frame
	pcs       [32]uintptr         // goCaller's scratch (calls are serialised)
	stateNo   int
	found     map[string]*FoundCause // failing states by deviation
	rep       Report
	start     time.Time
	work      chan func()
	walkers   sync.Pool // of *walker: the checker goroutines' (checkWalker)
	wg        sync.WaitGroup
	vmu       sync.Mutex // guards found and rep's failure counts from checker goroutines
	// taint holds, per inode, the lowest offset of the bytes the workload
	// did not show that it may hold (Unknown); replaced, never changed, so a
	// point keeps the version it was made with.
	taint map[uint64]int64
	// stdoutTaint: the workload announced bytes it did not show
	// (UnknownStdout); every later state's stdout holds them.
	stdoutTaint bool
}

// dataPromise is what a sync acknowledged of a file: its whole content (size
// and hash), or the bytes an O_SYNC/O_DSYNC write wrote at off.
type dataPromise struct {
	whole bool
	size  int64
	sum   uint64
	off   int64
	data  []byte
	seq   uint64
	op    int
}

// wholeFile is the promise that ino reads back as it reads now.
func (e *Explorer) wholeFile(ino *vfs.Inode, seq uint64, op int) dataPromise {
	sum, _ := e.hashData(ino)
	return dataPromise{whole: true, size: ino.Size(), sum: sum, seq: seq, op: op}
}

type namePromise struct {
	ino uint64
	seq uint64
	op  int
}

type replaceRec struct {
	op       int
	ino      uint64
	src, dst string
	seq      uint64
	allowed  [][]byte // the old contents and the new
	newIndex int
}

// aioSync is an fsync or fdsync iocb, done at submission (as the model runs
// it) and acknowledged by its completion event.
type aioSync struct {
	ino uint64
	p   dataPromise
}

// aioDone follows io_submit (the model numbers a context's iocbs from 1 in
// submission order, as IoEvent.Obj says) and io_getevents: a completion of an
// fsync iocb with result 0 promises the file's content as the fsync found it.
func (e *Explorer) aioDone(c *sim.Call, ci callInfo, ret int64) (acked bool) {
	ctx := uint64(c.Args[0])
	if ci.events {
		evs, _ := c.Obj.([]sim.IoEvent)
		for _, ev := range evs[:min(int(ret), len(evs))] {
			k := [2]uint64{ctx, ev.Obj}
			if a, ok := e.aioSync[k]; ok {
				delete(e.aioSync, k)
				if ev.Res == 0 {
					// op: the crash point this call makes (after appends it)
					a.p.op = e.nops()
					e.promises[a.ino] = []dataPromise{a.p}
					e.expect++
					acked = true
				}
			}
		}
		return acked
	}
	for k, ino := range ci.aio[:min(int(ret), len(ci.aio))] {
		n := e.aioCount[ctx] + uint64(k) + 1
		if ino != nil && ino.IsRegular() {
			e.aioSync[[2]uint64{ctx, n}] = aioSync{ino: ino.Ino(), p: e.wholeFile(ino, e.fs.Seq(), 0)}
		}
	}
	e.aioCount[ctx] += uint64(max(ret, 0))
	return false
}

type loggedIno struct {
	ino uint64
	seq uint64
	op  int
}

type truncClose struct {
	ino uint64
	op  int // the close
}

// NewExplorer returns an explorer of the calls made to next on fs.
func NewExplorer(fs *vfs.FS, next sim.Handler, opts Options) *Explorer {
	if opts.Models == nil {
		opts.Models = DefaultModels()
	}
	if opts.Depth == 0 {
		opts.Depth = 1
	}
	if opts.Checkers == nil {
		opts.Checkers = []Checker{Durability{}, AtomicReplace{}, Fsck{}}
	}
	if opts.Jobs <= 0 {
		opts.Jobs = runtime.GOMAXPROCS(0)
	}
	e := &Explorer{fs: fs, next: next, opts: opts, promises: map[uint64][]dataPromise{}, names: map[string]namePromise{},
		truncated: map[uint64]bool{}, aioSync: map[[2]uint64]aioSync{}, aioCount: map[uint64]uint64{}, hseed: maphash.MakeSeed(), dataHash: map[uint64]uint64{}, callers: map[string]fileLine{}, verdicts: map[verdictKey]*verdict{}, found: map[string]*FoundCause{}, start: time.Now()}
	for _, m := range opts.Models {
		e.rep.Models = append(e.rep.Models, m.Name)
		if m.Hypothetical {
			e.rep.Hypothetical = append(e.rep.Hypothetical, m.Name)
		}
	}
	work := make(chan func())
	e.work = work
	for range opts.Jobs {
		go func() {
			for f := range work {
				f()
				e.wg.Done()
			}
		}()
	}
	return e
}

// SetPosition tells the explorer the trace line of the calls that follow.
func (e *Explorer) SetPosition(file string, line int) {
	e.mu.Lock()
	e.file, e.line = file, line
	e.mu.Unlock()
}

// Syscall implements sim.Handler: it passes c on, then makes the crash point c
// ends, if any.
func (e *Explorer) Syscall(c *sim.Call) sim.Result {
	e.mu.Lock()
	defer e.mu.Unlock()
	ci := inspect(c)
	if ci.sync == syncFile && ci.ino != nil {
		ci.inFlight = ci.ino.InFlight()
	}
	seq0 := e.fs.Seq()
	res := e.next.Syscall(c)
	seq1 := e.fs.Seq()
	if ci.file != nil && res.Errno == 0 {
		// an O_SYNC/O_DSYNC write acknowledges the bytes it wrote
		ci.n = res.Ret
		if c.Nr.Is(sim.Positional) && c.Args[sim.PosSlot] >= 0 { // -1: pwritev2 at the file offset
			ci.off = c.Args[sim.PosSlot]
		} else {
			ci.off = ci.file.Offset() - res.Ret
		}
	}
	if res.Errno == 0 && (ci.aio != nil || ci.events) {
		ci.acked = e.aioDone(c, ci, res.Ret)
	}
	if ci.stdout && res.Errno == 0 {
		e.announce(stdoutBytes(c, res.Ret))
	}
	if ci.rename != nil && res.Errno != 0 {
		ci.rename = nil
	}
	e.after(ci, res.Errno == 0, seq0, seq1)
	return res
}

// announce records bytes the program wrote to its standard output.
func (e *Explorer) announce(b []byte) {
	e.stdout = append(e.stdout, b...)
	e.expect++
}

// after records what a call did, and explores the crash point it ends.
func (e *Explorer) after(ci callInfo, ok bool, seq0, seq1 uint64) {
	e.ncalls++
	line := e.line
	if e.file == "" {
		line = e.ncalls
	}
	if ok && ci.truncTo {
		ino := ci.ino
		if ino == nil && ci.path != "" {
			ino, _ = e.fs.Root().Resolve(ci.path, true)
		}
		if ino != nil && ino.IsRegular() {
			e.truncated[ino.Ino()] = true
		}
	}
	// the close of a file truncated to zero starts its writeback (auto_da_alloc)
	daClose := ok && ci.closing && ci.ino != nil && e.truncated[ci.ino.Ino()]
	changed := seq1 != seq0 || ci.stdout || (ok && ci.sync != syncNone) || daClose || ci.acked
	if !changed && !e.opts.EveryCall {
		return
	}
	if daClose {
		delete(e.truncated, ci.ino.Ino())
		e.truncCloses = append(e.truncCloses, truncClose{ino: ci.ino.Ino(), op: e.nops()})
	}
	file := e.file
	if file == "" {
		file, line = e.goCaller(line)
	}
	op := Op{Index: e.nops(), File: file, Line: line, Call: ci.name, Path: ci.path, seq0: seq0, seq1: seq1, write: ci.write && ci.sync == syncNone}
	e.ops = append(e.ops, op)
	if ok {
		e.promise(ci, op)
	}
	if op.Index < e.opts.Skip {
		return
	}
	e.point()
}

// promise records what a successful call acknowledged as durable, and the
// journal commits it forces.
//
// A sync of a file on a file system kept in memory (vfs.FS.SetRAM: a tmpfs)
// promises nothing: a crash empties that file system whatever was synced.
func (e *Explorer) promise(ci callInfo, op Op) {
	switch ci.sync {
	case syncFile:
		if ci.ino == nil || e.inRAM(ci.ino.Path()) {
			break
		}
		if ci.inFlight || ci.ino.IsDir() {
			e.horizon = op.seq0
		}
		delete(e.dataHash, ci.ino.Ino())
		if ci.ino.IsDir() {
			e.promiseNames(ci.ino, op)
		} else if ci.ino.IsRegular() && ci.file != nil {
			b := make([]byte, ci.n)
			n, _ := ci.ino.ReadAt(b, ci.off)
			e.promises[ci.ino.Ino()] = append(e.promises[ci.ino.Ino()], dataPromise{off: ci.off, data: b[:n], seq: op.seq1, op: op.Index})
		} else if ci.ino.IsRegular() {
			e.promises[ci.ino.Ino()] = []dataPromise{e.wholeFile(ci.ino, op.seq1, op.Index)}
		}
		if ci.ino.IsRegular() {
			// btrfs's fsync logs the file and its ancestors created in the
			// running transaction (logNewName)
			e.logged = append(e.logged, loggedIno{ino: ci.ino.Ino(), seq: op.seq0, op: op.Index})
			for p := path.Dir(ci.ino.Path()); p != "/" && p != "."; p = path.Dir(p) {
				if d, err := e.fs.Root().Resolve(p, false); err == nil {
					e.logged = append(e.logged, loggedIno{ino: d.Ino(), seq: op.seq0, op: op.Index})
				}
			}
		}
		e.expect++
	case syncAll:
		clear(e.dataHash)
		e.horizon = op.seq0
		// everything is durable: the promises are what the namespace holds
		// now (a file removed before can never come back)
		clear(e.promises)
		clear(e.names)
		e.promiseAll(e.fs.Root(), op)
		e.expect++
	case syncCommit:
		clear(e.dataHash)
		e.horizon = op.seq0
	}
	if r := ci.rename; r != nil && r.replacing && !e.inRAM(r.dst) {
		if ino, err := e.fs.Root().Resolve(r.dst, false); err == nil && ino.IsRegular() {
			rec := replaceRec{op: op.Index, ino: ino.Ino(), src: r.src, dst: r.dst, seq: op.seq1, allowed: append(slices.Clone(r.oldContent), readAll(ino))}
			rec.newIndex = len(rec.allowed) - 1
			e.vmu.Lock()
			e.replaces = append(e.replaces, rec)
			e.vmu.Unlock()
			e.expect++
		}
	}
}

func (e *Explorer) promiseNames(dir *vfs.Inode, op Op) {
	ents, err := dir.Dirents()
	if err != nil {
		return
	}
	base := dir.Path()
	for _, d := range ents {
		if d.Name == "." || d.Name == ".." || e.inRAM(joinPath(base, d.Name)) {
			continue
		}
		e.names[joinPath(base, d.Name)] = namePromise{ino: d.Ino, seq: op.seq1, op: op.Index}
	}
}

// inRAM reports whether p is below a directory that is the root of a file
// system kept in memory (vfs.FS.SetRAM).
func (e *Explorer) inRAM(p string) bool {
	for _, r := range e.fs.RAM() {
		if p != r && strings.HasPrefix(p, r) && (r == "/" || p[len(r)] == '/') {
			return true
		}
	}
	return false
}

func (e *Explorer) promiseAll(dir *vfs.Inode, op Op) {
	e.promiseNames(dir, op)
	ents, _ := dir.Dirents()
	for _, d := range ents {
		if d.Name == "." || d.Name == ".." {
			continue
		}
		c, err := dir.Resolve(d.Name, false)
		if err != nil {
			continue
		}
		switch {
		case c.IsDir():
			e.promiseAll(c, op)
		case c.IsRegular() && !e.inRAM(c.Path()):
			e.promises[c.Ino()] = []dataPromise{e.wholeFile(c, op.seq1, op.Index)}
		}
	}
}

func joinPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// opOf returns the index of the op that made the change with sequence seq (-1:
// before the first recorded call).
func (e *Explorer) opOf(seq uint64) int {
	k := sort.Search(len(e.ops), func(i int) bool { return e.ops[i].seq1 >= seq })
	if k < len(e.ops) && e.ops[k].seq0 < seq {
		return e.opBase + k
	}
	return -1
}

// Finish waits for the checkers still running and returns the report.
func (e *Explorer) Finish() *Report {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.wg.Wait()
	close(e.work)
	e.work = nil
	for _, c := range e.opts.Checkers {
		if r, ok := c.(interface{ release() }); ok {
			r.release()
		}
	}
	return e.report()
}

var _ io.Writer = stdoutWriter{}

// stdoutWriter is a Go workload's standard output.
type stdoutWriter struct{ e *Explorer }

func (w stdoutWriter) Write(p []byte) (int, error) {
	w.e.Announce(p)
	return len(p), nil
}

// Announce records bytes the program wrote to its standard output outside the
// calls the explorer sees (a Go workload's Env.Stdout, a replayed write to a
// terminal or pipe): a crash point.
func (e *Explorer) Announce(p []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.announce(p)
	seq := e.fs.Seq()
	e.after(callInfo{name: "write", path: "(stdout)", stdout: true}, true, seq, seq)
}

// History returns the recorded calls up to the crash point, from the oldest
// whose changes were still in flight (the explorer forgets the calls before).
func (s *State) History() []Op { return s.e.ops[:s.Point.Index-s.e.opBase+1] }

// op returns recorded call i: one in the window, or one a promise names.
func (e *Explorer) op(i int) Op {
	if i >= e.opBase {
		return e.ops[i-e.opBase]
	}
	return e.pinned[i]
}

// nops is the number of calls recorded.
func (e *Explorer) nops() int { return e.opBase + len(e.ops) }

// forget drops, after crash point x, what no later state can need: the calls
// older than every change in flight (but those a promise names, for its
// messages), the durable renames whose check a later sync or change superseded, the
// truncations whose data is durable, and caches past a bound.
func (e *Explorer) forget(x *point) {
	from := e.nops() - 1
	for _, p := range x.pend {
		if k := e.opOf(p.Seq); k >= 0 {
			from = min(from, k)
			break
		}
	}
	e.truncCloses = slices.DeleteFunc(e.truncCloses, func(tc truncClose) bool { return tc.op < from })
	e.logged = slices.DeleteFunc(e.logged, func(l loggedIno) bool { return l.op < from })
	var live []replaceRec
	for _, r := range e.replaces {
		// a rename still in flight is a unit of the next states (replaceOf)
		if r.op < from {
			if ps := e.promises[r.ino]; len(ps) > 0 && ps[0].seq > r.seq {
				continue
			}
			if cur, err := e.fs.Root().Resolve(r.dst, false); err != nil || cur.Ino() != r.ino {
				continue
			}
		}
		live = append(live, r)
	}
	e.vmu.Lock() // explain reads replaces on the checker goroutines
	e.replaces = live
	e.vmu.Unlock()
	if len(e.dataHash) > maxDataHashes {
		clear(e.dataHash)
	}
	if from-e.opBase < max(64, len(e.ops)/2) {
		return // forget in batches: the copy below is in proportion to the window
	}
	pinned := map[int]Op{}
	pin := func(i int) {
		if i >= 0 && i < from {
			pinned[i] = e.op(i)
		}
	}
	for _, ps := range e.promises {
		for _, p := range ps {
			pin(p.op)
		}
	}
	for _, n := range e.names {
		pin(n.op)
	}
	for _, r := range e.replaces {
		pin(r.op)
	}
	e.pinned = pinned
	e.ops = slices.Clone(e.ops[from-e.opBase:])
	e.opBase = from
}

// maxDataHashes bounds the cache of durable files' data hashes.
const maxDataHashes = 1 << 16

// Unwrap returns the layer below the explorer.
func (e *Explorer) Unwrap() sim.Handler { return e.next }

// goCaller returns the file and line of the Go workload's code that made the
// current call: the first frame outside iosim's own packages and the libraries
// its faces wrap. Without one it returns "" and n (the call's number).
func (e *Explorer) goCaller(n int) (string, int) {
	// The workload's frame is near the top: a few frames are unwound first,
	// the whole stack only when they are all iosim's own. The same stack (a
	// call in a loop) resolves to the same frame: cached, as resolving
	// frames costs more than the call.
	for _, depth := range [...]int{12, len(e.pcs)} {
		pcs := e.pcs[:depth]
		stack := pcs[:runtime.Callers(3, pcs)]
		key := unsafe.String((*byte)(unsafe.Pointer(&pcs[0])), len(stack)*int(unsafe.Sizeof(pcs[0])))
		c, ok := e.callers[key]
		if !ok {
			c = goCallerOf(stack)
			if len(e.callers) >= maxCallers {
				clear(e.callers)
			}
			e.callers[strings.Clone(key)] = c
		}
		if c.file != "" {
			return c.file, c.line
		}
		if len(stack) < depth {
			break // the whole stack was seen
		}
	}
	return "", n
}

type fileLine struct {
	file string
	line int
}

// maxCallers bounds the cache of resolved call stacks.
const maxCallers = 1 << 12

// goCallerOf returns the first frame of stack outside iosim's own packages
// and the libraries its faces wrap (a test file counts as the workload's);
// zero when there is none.
func goCallerOf(stack []uintptr) fileLine {
	frames := runtime.CallersFrames(stack)
	for {
		f, more := frames.Next()
		fn := f.Function
		own := strings.HasPrefix(fn, "github.com/iosim/iosim/crash.") || strings.HasPrefix(fn, "github.com/iosim/iosim/sim.") || strings.HasPrefix(fn, "github.com/iosim/iosim/vfs.") ||
			strings.HasPrefix(fn, "github.com/spf13/afero") || strings.HasPrefix(fn, "runtime.")
		if !own || strings.HasSuffix(f.File, "_test.go") {
			return fileLine{f.File, f.Line}
		}
		if !more {
			return fileLine{}
		}
	}
}

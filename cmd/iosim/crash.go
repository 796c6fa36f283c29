package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/replay"
	"github.com/iosim/iosim/scenarios"
)

// builtinCheckers are the checks --checker names.
var builtinCheckers = map[string]crash.Checker{
	"durability":     crash.Durability{},
	"atomic-replace": crash.AtomicReplace{},
	"fsck":           crash.Fsck{},
}

func cmdCrash(args []string, stdout, stderr io.Writer) int {
	fl := flag.NewFlagSet("crash", flag.ContinueOnError)
	fl.SetOutput(stderr)
	var modelsF, checkers, stack stackFlag
	fl.Var(&modelsF, "model", "persistence `MODEL` ("+strings.Join(crash.ModelNames(), ", ")+", or all; comma-separated or repeated; default: every model but the hypothetical alice)")
	fl.Var(&checkers, "checker", "`NAME` of a built-in check (durability, atomic-replace, fsck) or a command line run through the shell with CRASHED_DIR STDOUT_FILE appended (exit 0: consistent); repeatable; default: the three built-in checks")
	fl.Var(&stack, "stack", "interposer `NAME[:key=value,...]` between the program and the model, repeatable")
	depth := intAtLeast(fl, "depth", 1, 1, "at most `K` calls lost, torn or reordered per state")
	sample := intAtLeast(fl, "sample", 0, 0, "draw `N` more states per crash point at random, beyond the depth")
	seed := fl.Uint64("seed", 1, "seed of --sample")
	every := fl.Bool("every-call", false, "a crash point after every call, not only after calls that change what could become durable")
	workDir := fl.String("workload-dir", "", "the traced `DIR` the program owns: what an external checker gets, materialised")
	jobs := intAtLeast(fl, "jobs", runtime.NumCPU(), 1, "run at most `N` external checkers at once (default: the cores)")
	var mounts stackFlag
	fl.Var(&mounts, "mount", "a mount of the traced system, `TYPE:/PATH` (repeatable): renames, links and copy_file_range between mounts fail with EXDEV; a tmpfs or ramfs mount is empty after a crash, and a sync there promises nothing")
	var servers stackFlag
	fl.Var(&servers, "checker-server", "`CMD` started once (up to --jobs copies) and given one \"DIR STDOUT\" line per distinct state on stdin, answering \"ok\", \"fail\" or \"fail: REASON\" (the protocol: go doc github.com/iosim/iosim/crash.Server); repeatable")
	root := fl.String("root", "", "initial state: `SNAPSHOT:/traced/path`, a host copy of the program's directory made before the run (default: inferred from the trace)")
	cwd := fl.String("cwd", "", "the traced program's initial working directory (default: inferred)")
	keepGoing := fl.Bool("keep-going", false, "count malformed trace lines and go on")
	asJSON := fl.Bool("json", false, "print the report as JSON")
	shard := fl.String("shard", "", "check only shard `I/N` of the states (0 <= I < N); merge the reports with --merge (default: from JOB_COMPLETION_INDEX or IOSIM_SHARD_INDEX with IOSIM_SHARDS, or CI_NODE_INDEX/CI_NODE_TOTAL, when set; else all)")
	merge := fl.Bool("merge", false, "the arguments are JSON reports of shards: print them merged")
	listModels := fl.Bool("models", false, "print the persistence models' rules and their sources")
	unknownBytes := fl.String("unknown-bytes", "refuse", "what to do when a crash state would hold bytes the trace does not show (a write strace's -s cut): `refuse` the trace (exit 2); skip: check only the states without them and count the others as unchecked; assume: check every state with the model's bytes (zeros, or the bytes before) in their place, for bytes the program does not rely on after a crash, with a note")
	stateF := fl.String("state", "", "write the state `ID` (a finding's example: POINT.K) into --out instead of checking; the other flags must be the run's")
	outF := fl.String("out", "", "with --state: the `DIR` to create, holding crashed/ (the --workload-dir, or /, of the state) and stdout")
	keepFailed := fl.String("keep-failed", "", "write every failing state into `DIR`/ID (crashed/ and stdout, as --out)")
	svg := fl.String("svg", "", "also draw the states and findings per crash point along the trace into `FILE` (.svg; .png, .pdf by the extension)")
	fl.Usage = helpText(fl, "usage: iosim crash [flags] TRACE...\n       iosim crash [flags] BUNDLE\n       iosim crash --merge REPORT.json...",
		"Explores the states a power loss at any point of the traced run can leave, under\npersistence models, and reports the findings, one per cause. Exit status: 0 none\nfound, 1 findings, 2 bad usage or input. A bundle of iosim record gives its trace,\n--root, --cwd and --workload-dir.")
	if code, done := parseFlags(fl, args, func(n int) bool { return n > 0 || *listModels }, "no trace files given", stdout, stderr); done {
		return code
	}
	if *listModels {
		for _, m := range crash.Models() {
			fmt.Fprintln(stdout, m.Describe())
		}
		return 0
	}
	if *merge {
		if *stateF != "" || *keepFailed != "" {
			fmt.Fprintln(stderr, "iosim crash: --merge reads reports: --state and --keep-failed need the traces")
			return 2
		}
		return crashMerge(fl.Args(), *asJSON, *svg, stdout, stderr)
	}
	if (*stateF == "") != (*outF == "") {
		fmt.Fprintln(stderr, "iosim crash: --state ID and --out DIR go together")
		return 2
	}
	if *stateF != "" && *keepFailed != "" {
		fmt.Fprintln(stderr, "iosim crash: --state writes one state without checking any: --keep-failed keeps the failing states of a run")
		return 2
	}
	files := fl.Args()
	ba, err := openBundleArg(fl)
	if err != nil {
		fmt.Fprintf(stderr, "iosim crash: %v\n", err)
		return 2
	}
	if ba != nil {
		files, *workDir = ba.files, ba.workDir
		printNotes(stderr, ba.notes)
	}
	ms, err := crash.ParseModels(strings.Join(modelsF, ","))
	if err != nil {
		fmt.Fprintf(stderr, "iosim crash: --model: %v\n", err)
		return 2
	}
	copts := crash.Options{Models: ms, Depth: *depth, Sample: *sample, Seed: *seed, EveryCall: *every, Jobs: *jobs}
	switch *unknownBytes {
	case "refuse":
	case "skip":
		copts.SkipUnknown = true
	case "assume":
		copts.AssumeUnknown = true
	default:
		fmt.Fprintf(stderr, "iosim crash: --unknown-bytes %q: want refuse, skip or assume\n", *unknownBytes)
		return 2
	}
	for _, c := range checkers {
		if b, ok := builtinCheckers[c]; ok {
			copts.Checkers = append(copts.Checkers, b)
			continue
		}
		if !strings.ContainsAny(c, " \t/") {
			if _, err := exec.LookPath(c); err != nil {
				fmt.Fprintf(stderr, "iosim crash: --checker %q: neither a built-in check (durability, atomic-replace, fsck) nor a command found in PATH\n", c)
				return 2
			}
		}
		if *workDir == "" {
			fmt.Fprintf(stderr, "iosim crash: --checker %q is a command: it needs --workload-dir (the traced directory it checks)\n", c)
			return 2
		}
		copts.Checkers = append(copts.Checkers, crash.NewExternal(c, *workDir))
	}
	for _, c := range servers {
		if *workDir == "" {
			fmt.Fprintf(stderr, "iosim crash: --checker-server %q needs --workload-dir (the traced directory it checks)\n", c)
			return 2
		}
		sv := crash.NewServer(c, *workDir, *jobs)
		defer sv.Close()
		copts.Checkers = append(copts.Checkers, sv)
	}
	if *shard != "" {
		i, n, ok := crash.ParseShard(*shard)
		if !ok {
			fmt.Fprintf(stderr, "iosim crash: --shard %q: want I/N with 0 <= I < N\n", *shard)
			return 2
		}
		copts.Shard, copts.Shards = i, n
	} else if i, n, from, ok, err := shardFromEnv(os.Getenv); err != nil {
		fmt.Fprintf(stderr, "iosim crash: shard from the environment: %v\n", err)
		return 2
	} else if ok {
		fmt.Fprintf(stderr, "note: checking shard %d/%d, from %s (--shard overrides)\n", i, n, from)
		copts.Shard, copts.Shards = i, n
	}
	stateDir := *workDir
	if stateDir == "" && (*stateF != "" || *keepFailed != "") {
		stateDir = "/"
		fmt.Fprintln(stderr, "note: no --workload-dir: a state is written whole, from /")
	}
	var visited bool
	var visitErr error
	if *stateF != "" {
		id, err := crash.ParseStateID(*stateF)
		if err != nil {
			fmt.Fprintf(stderr, "iosim crash: --state: %v\n", err)
			return 2
		}
		if _, err := os.Stat(*outF); err == nil {
			fmt.Fprintf(stderr, "iosim crash: --out %s: exists (a state is written into a new directory)\n", *outF)
			return 2
		}
		copts.Only = &id
		copts.Visit = func(s *crash.State) {
			visited = true
			visitErr = crash.WriteState(s, stateDir, *outF)
		}
	}
	if *keepFailed != "" {
		if err := os.MkdirAll(*keepFailed, 0o755); err != nil {
			fmt.Fprintf(stderr, "iosim crash: --keep-failed: %v\n", err)
			return 2
		}
		var mu sync.Mutex
		copts.Failed = func(s *crash.State) {
			if err := crash.WriteState(s, stateDir, filepath.Join(*keepFailed, s.ID)); err != nil {
				mu.Lock()
				visitErr = cmp.Or(visitErr, err)
				mu.Unlock()
			}
		}
	}
	ropts := replay.Options{KeepGoing: *keepGoing, Stack: stack, Cwd: *cwd, CwdFallback: *workDir, CwdFallbackFrom: "--workload-dir", Mounts: mounts}
	for _, m := range mounts {
		if _, _, err := replay.ParseMount(m); err != nil {
			fmt.Fprintf(stderr, "iosim crash: --%v\n", err)
			return 2
		}
	}
	if *root != "" {
		snap, at, ok := strings.Cut(*root, ":")
		if !ok || snap == "" || !strings.HasPrefix(at, "/") {
			fmt.Fprintf(stderr, "iosim crash: --root %q: want SNAPSHOT:/traced/path\n", *root)
			return 2
		}
		if st, err := os.Stat(snap); err != nil || !st.IsDir() {
			fmt.Fprintf(stderr, "iosim crash: --root: %s is not a directory\n", snap)
			return 2
		}
		ropts.Root = snap + ":" + at
	}
	var announced []byte
	if ba != nil {
		ropts.Root, ropts.Cwd, ropts.MaxLineLen = ba.root, ba.cwd, ba.maxLineLen
		ropts.Stdout = func(b []byte) { announced = append(announced, b...) }
	}
	var notes []string
	if ropts.Root == "" {
		if len(checkers) > 0 || len(servers) > 0 {
			for _, c := range append(slices.Clone(checkers), servers...) {
				if _, ok := builtinCheckers[c]; !ok {
					fmt.Fprintln(stderr, "iosim crash: an external checker judges the program's directory, so it needs the state before the run: --root SNAPSHOT:/traced/dir (a copy made before the run), or a bundle of iosim record")
					return 2
				}
			}
		}
		notes = append(notes, "no --root: what existed before the trace is inferred from the results it records (a file it only writes is taken as new or empty); give a copy of the directory made before the run with --root, or record with iosim record")
	}
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		bar := progressbar.NewOptions64(-1, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription("crash states"),
			progressbar.OptionClearOnFinish())
		copts.Progress = func(points, states int) { _ = bar.Set(states) }
		defer bar.Finish()
	}
	rep, rrep, err := replay.Explore(files, ropts, copts)
	if err != nil {
		fmt.Fprintf(stderr, "iosim crash: %v\n", err)
		if errors.Is(err, replay.ErrUnknownBytes) {
			fmt.Fprintln(stderr, "iosim crash: or pass --unknown-bytes=skip to check only the states without such bytes, or --unknown-bytes=assume to check them with the model's bytes in their place (for bytes the program does not rely on after a crash)")
		}
		return 2
	}
	if noCalls(rrep, "crash", stderr) {
		return 2
	}
	if _, at, ok := strings.Cut(ropts.Root, ":"); ok && !changesUnder(rep, at) {
		notes = append(notes, fmt.Sprintf("no call of the trace that changes files is under --root's directory %s: is it the directory the program ran in?", at))
	}
	rep.Notes = append(notes, rrep.Notes...)
	if ba != nil {
		if n := ba.checkStdout(announced); n != "" {
			printNotes(stderr, []string{n})
		}
	}
	if visitErr != nil {
		fmt.Fprintf(stderr, "iosim crash: writing a state: %v\n", visitErr)
		return 2
	}
	if *stateF != "" {
		if !visited {
			fmt.Fprintf(stderr, "iosim crash: --state %s: no such state in this run (its crash points: %d; the flags must be the run's)\n", *stateF, rep.CrashPoints)
			return 2
		}
		fmt.Fprintf(stdout, "state %s written to %s (crashed/, stdout)\n", *stateF, *outF)
		return 0
	}
	return printCrash(rep, *asJSON, *svg, chartTitle(fl.Args()), stdout, stderr)
}

// changesUnder reports whether a crash point's call (a call that changed
// what could become durable) names a path at or below dir.
func changesUnder(rep *crash.Report, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	for _, p := range rep.Points {
		for _, path := range strings.Split(p.Point.Path, " -> ") {
			if path == dir || strings.HasPrefix(path, dir+"/") || dir == "" {
				return true
			}
		}
	}
	return false
}

// chartTitle names a crash chart after the traces explored.
func chartTitle(files []string) string {
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return "crash " + strings.Join(names, " ")
}

func printCrash(rep *crash.Report, asJSON bool, svg, title string, stdout, stderr io.Writer) int {
	if svg != "" {
		if err := scenarios.WriteCrashChart(svg, title, rep); err != nil {
			fmt.Fprintf(stderr, "iosim crash: --svg: %v\n", err)
			return 2
		}
	}
	if asJSON {
		if err := rep.WriteJSON(stdout); err != nil {
			fmt.Fprintf(stderr, "iosim crash: %v\n", err)
			return 2
		}
	} else {
		rep.WriteText(stdout)
	}
	if len(rep.Findings) > 0 {
		return 1
	}
	return 0
}

func crashMerge(files []string, asJSON bool, svg string, stdout, stderr io.Writer) int {
	var rs []*crash.Report
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "iosim crash --merge: %v\n", err)
			return 2
		}
		var r crash.Report
		if err := json.Unmarshal(b, &r); err != nil {
			fmt.Fprintf(stderr, "iosim crash --merge: %s: not a crash report: %v\n", name, err)
			return 2
		}
		rs = append(rs, &r)
	}
	if err := crash.CheckShards(files, rs); err != nil {
		fmt.Fprintf(stderr, "iosim crash --merge: %v\n", err)
		return 2
	}
	return printCrash(crash.Merge(rs), asJSON, svg, chartTitle(files), stdout, stderr)
}

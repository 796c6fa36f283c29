package scenarios

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/cockroachdb/datadriven"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/faultrule"
	"github.com/iosim/iosim/fio"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// setup is what an arm runs on: the device, the persistence model, the files
// it finds, the interposer stack and the faults.
type setup struct {
	model      string
	device     string   // as the scenario names it
	devicePath string   // what device.Lookup takes (a file relative to the scenario)
	overrides  []string // TABLE.KEY=VALUE
	files      []fileSpec
	stack      interposer.Stack
	faults     []faultrule.Rule
	faultSeed  int64
	// fsOpts configure the kernel's file system. observe, when set, puts
	// the layer it returns between the kernel and the faults, once the files
	// are made and durable (the crash explorer); position is told the input
	// line of each call of the workload before it is made.
	observe  func(fs *vfs.FS, next sim.Handler) sim.Handler
	fsOpts   []vfs.Option
	position func(line int)
}

type fileSpec struct {
	path    string
	size    int64
	layout  string // written, sparse, prealloc
	content string // zero, random, text
	cold    bool   // not in the page cache when the workload starts
	text    []byte
}

// maxWritten bounds the size of a file whose bytes setup writes: the model
// holds written data in memory (sparse and preallocated files cost nothing).
const maxWritten = 1 << 30

func defaultSetup() setup {
	return setup{model: "default", device: "default", devicePath: "default", faultSeed: 1}
}

func (s setup) clone() setup {
	s.files = slices.Clone(s.files)
	s.stack = slices.Clone(s.stack)
	s.faults = slices.Clone(s.faults)
	s.overrides = slices.Clone(s.overrides)
	return s
}

func (s setup) describe() string {
	dev := "device " + s.device
	if len(s.overrides) > 0 {
		dev += " (" + strings.Join(s.overrides, " ") + ")"
	}
	parts := []string{dev}
	if len(s.stack) > 0 {
		var specs []string
		for _, sp := range s.stack {
			specs = append(specs, sp.String())
		}
		parts = append(parts, "stack "+strings.Join(specs, " | "))
	} else {
		parts = append(parts, "no stack")
	}
	if len(s.faults) > 0 {
		parts = append(parts, fmt.Sprintf("%d fault rule(s)", len(s.faults)))
	}
	if len(s.files) > 0 {
		parts = append(parts, fmt.Sprintf("%d file(s)", len(s.files)))
	}
	return strings.Join(parts, ", ")
}

func (s *Scenario) cmdFS(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 0, 0, "model")
	if err != nil {
		return "", err
	}
	m := a.str("model", s.cur.model)
	ms, err := crash.ParseModels(m)
	if err != nil {
		return "", malformed(td, "argument model=%s: %v", m, err)
	}
	s.cur.model = m
	var names []string
	for _, x := range ms {
		names = append(names, x.Name)
	}
	return "persistence models (what crash explores by default): " + crash.ModelLabels(names), nil
}

// profile returns the setup's device profile: a bundled name or a TOML file
// (device.Lookup), with the setup's overrides applied; nil for the default
// device (the kernel's constant cost per call).
func (s setup) profile() (*device.Profile, error) {
	if s.device == "default" {
		return nil, nil
	}
	p, err := device.Lookup(s.devicePath)
	if err != nil {
		return nil, err
	}
	if err := override(p, s.overrides); err != nil {
		return nil, err
	}
	return p, nil
}

// deviceOptions returns the kernel options that make the setup's device
// price every call: sim.WithDevice with its profile (none for the default).
func (s setup) deviceOptions() ([]sim.Option, error) {
	p, err := s.profile()
	if err != nil || p == nil {
		return nil, err
	}
	return []sim.Option{sim.WithDevice(p)}, nil
}

// override sets profile values given as TABLE.KEY=VALUE (the keys of the
// profile's TOML file: device.write_cache=false, fs.type=ufs,
// memory.page_cache_bytes=64m). A value is a TOML boolean or number, a size
// with fio's suffixes (64m), or else a string. The profile is validated
// again after.
func override(p *device.Profile, kvs []string) error {
	if len(kvs) == 0 {
		return nil
	}
	var doc strings.Builder
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		table, key, ok := strings.Cut(k, ".")
		if !ok || table == "" || key == "" || strings.ContainsAny(k, " []\"\n") {
			return fmt.Errorf("%s: want TABLE.KEY=VALUE (a key of the profile's TOML file, e.g. device.write_cache=false)", kv)
		}
		fmt.Fprintf(&doc, "%s.%s = %s\n", table, key, tomlValue(v))
	}
	md, err := toml.Decode(doc.String(), p)
	if err != nil {
		return fmt.Errorf("profile override: %v", err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		return fmt.Errorf("profile override: unknown key %s (the keys of a profile's TOML file: see iosim devices and package device)", und[0])
	}
	p.Description += " (" + strings.Join(kvs, " ") + ")"
	return p.Validate()
}

func tomlValue(v string) string {
	if v == "true" || v == "false" {
		return v
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return v
	}
	if n, err := fio.ParseSize(v); err == nil {
		return strconv.FormatInt(n, 10)
	}
	return strconv.Quote(v)
}

func (s *Scenario) cmdDevice(td *datadriven.TestData) (string, error) {
	if len(td.CmdArgs) == 0 || len(td.CmdArgs[0].Vals) > 0 {
		return "", malformed(td, "want a profile: device NAME|FILE [TABLE.KEY=VALUE ...] (bundled: default, %s)", strings.Join(device.Names(), ", "))
	}
	st := s.cur.clone()
	st.device, st.devicePath, st.overrides = td.CmdArgs[0].Key, td.CmdArgs[0].Key, nil
	if st.device != "default" && (strings.ContainsRune(st.device, '/') || strings.HasSuffix(st.device, ".toml")) {
		st.devicePath = s.resolve(st.device)
	}
	for _, ca := range td.CmdArgs[1:] {
		if len(ca.Vals) != 1 {
			return "", malformed(td, "unexpected %q: want TABLE.KEY=VALUE overrides after the profile", ca.Key)
		}
		st.overrides = append(st.overrides, ca.Key+"="+ca.Vals[0])
	}
	if st.device == "default" && len(st.overrides) > 0 {
		return "", malformed(td, "the default device has no profile to override")
	}
	p, err := st.profile()
	if err != nil {
		return "", malformed(td, "%v", err)
	}
	s.cur = st
	if p == nil {
		return "device default: the kernel's constant cost per call", nil
	}
	return fmt.Sprintf("device %s: %s", p.Name, p.Description), nil
}

func (s *Scenario) cmdFile(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 2, "size", "content")
	if err != nil {
		return "", err
	}
	f := fileSpec{path: a.words[0], layout: "written"}
	if !path.IsAbs(f.path) {
		return "", malformed(td, "path %q: want an absolute path", f.path)
	}
	f.cold = a.flagWord("cold")
	switch {
	case a.flagWord("sparse"):
		f.layout = "sparse"
	case a.flagWord("prealloc"):
		f.layout = "prealloc"
	}
	if len(a.words) > 1 {
		return "", malformed(td, "unexpected word %q (want sparse, prealloc or cold)", a.words[1])
	}
	if f.size, err = a.size("size", -1); err != nil {
		return "", err
	}
	if f.layout == "written" && f.size > maxWritten {
		return "", malformed(td, "size=%d: a written file is held in memory; above %d bytes make it sparse or prealloc", f.size, int64(maxWritten))
	}
	if td.Input != "" {
		if a.has("content") {
			return "", malformed(td, "give the content as input or as content=, not both")
		}
		f.content, f.text = "text", []byte(td.Input+"\n")
		if f.size < 0 {
			f.size = int64(len(f.text))
		}
	} else {
		if f.size < 0 {
			return "", malformed(td, "missing size= (or the file's text as input)")
		}
		if f.content, err = a.oneOf("content", "zero", "zero", "random"); err != nil {
			return "", err
		}
	}
	if f.layout != "written" && f.content != "zero" {
		return "", malformed(td, "a %s file holds no data: content does not apply", f.layout)
	}
	s.cur.files = slices.DeleteFunc(s.cur.files, func(x fileSpec) bool { return x.path == f.path })
	s.cur.files = append(s.cur.files, f)
	cached := ""
	if f.cold {
		cached = ", cold"
	}
	return fmt.Sprintf("file %s: %d bytes, %s, %s%s", f.path, f.size, f.layout, f.content, cached), nil
}

func (s *Scenario) cmdStack(td *datadriven.TestData) (string, error) {
	if _, err := parseArgs(td, 0, 0); err != nil {
		return "", err
	}
	var specs []string
	for _, l := range strings.Split(td.Input, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			specs = append(specs, l)
		}
	}
	st, err := interposer.ParseStack(specs)
	if err != nil {
		return "", malformed(td, "%v", err)
	}
	for _, sp := range st {
		// Build once so that bad values are reported here, at their line
		// (not trace: it would create its out= file).
		if sp.Name == "trace" {
			continue
		}
		if _, err := sp.Build(sim.New(vfs.New())); err != nil {
			return "", malformed(td, "%v", err)
		}
	}
	s.cur.stack = st
	if len(st) == 0 {
		return "no stack", nil
	}
	var out []string
	for i, sp := range st {
		out = append(out, fmt.Sprintf("%d %s", i+1, sp))
	}
	return strings.Join(out, "\n"), nil
}

func (s *Scenario) cmdFaults(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 0, 0, "seed")
	if err != nil {
		return "", err
	}
	if s.cur.faultSeed, err = a.int("seed", 1); err != nil {
		return "", err
	}
	var rules []faultrule.Rule
	var out []string
	for _, l := range strings.Split(td.Input, "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		r, err := interposer.ParseRule(l)
		if err != nil {
			return "", malformed(td, "rule %q: %v", l, err)
		}
		rules = append(rules, r)
		out = append(out, r.String())
	}
	s.cur.faults = rules
	if len(rules) == 0 {
		return "no faults", nil
	}
	return strings.Join(out, "\n"), nil
}

// world is a kernel built from a setup, with the layers an arm's program calls.
type world struct {
	k      *sim.Kernel
	top    sim.Handler       // what the program calls: count over the stack
	count  *interposer.Count // per-syscall counts and time, as the program sees them
	bottom *countingHandler  // counts the calls that reach the kernel
	below  sim.Handler       // the layers below the stack: faults over the kernel
	procs  []*sim.Process    // the workload's threads (see start)
	t0     int64             // virtual time when the workload starts
	b0     sim.Breakdown     // where time had gone by then (setup's warming)
	// position, when set, is told the input line of each call before it
	position func(line int)
}

// at tells the world's observer that the workload's next call is the one
// written at line (of the arm's input).
func (w *world) at(line int) {
	if w.position != nil {
		w.position(line)
	}
}

// countingHandler counts the calls that pass it.
type countingHandler struct {
	next sim.Handler
	n    int64
}

func (c *countingHandler) Syscall(call *sim.Call) sim.Result {
	c.n++
	return c.next.Syscall(call)
}

// Unwrap returns the next layer.
func (c *countingHandler) Unwrap() sim.Handler { return c.next }

// build makes a fresh kernel for the setup, with its files, and the layers:
// count (nearest the program), the stack (when withStack), the faults, the
// kernel-call counter, the kernel. Files are made by a process of their own
// through the kernel alone, synced, before any layer sees a call, so no layer
// holds a stale picture of them and a crash starts from them.
func (s setup) build(withStack bool) (*world, error) {
	opts, err := s.deviceOptions()
	if err != nil {
		return nil, err
	}
	// The files are made on a kernel of their own (no time model: making
	// them is not the workload), then the workload's kernel is built over
	// the same file system. Its page cache holds what Linux's would after
	// setup wrote and synced them: the written files' pages (up to its
	// capacity), except those of files marked cold (as after a restart).
	fs := vfs.New(s.fsOpts...)
	if err := s.makeFiles(sim.New(fs, sim.WithLockWait(false))); err != nil {
		return nil, err
	}
	k := sim.New(fs, append(opts, sim.WithLockWait(false))...)
	if len(opts) > 0 {
		if err := s.warm(k); err != nil {
			return nil, err
		}
	}
	var kern sim.Handler = k
	if s.observe != nil {
		if err := fs.Sync(); err != nil {
			return nil, err
		}
		kern = s.observe(fs, k)
	}
	w := &world{k: k, bottom: &countingHandler{next: kern}, position: s.position}
	w.below = w.bottom
	if len(s.faults) > 0 {
		w.below = interposer.NewFault(w.below, uint64(s.faultSeed), s.faults...)
	}
	h := w.below
	if withStack {
		if h, err = s.stack.Build(h); err != nil {
			return nil, err
		}
	}
	w.count = interposer.NewCount(h)
	w.top = w.count
	w.start()
	return w, nil
}

// process returns the workload's program: pid 1000 (sim's first, whatever
// setup ran before it), its calls going through h, started with stdin,
// stdout and stderr open on /dev/null (the stack is told of them).
func (w *world) process(h sim.Handler) (*sim.Process, error) {
	t, err := w.k.SpawnPid(1000)
	if err != nil {
		return nil, err
	}
	for fd := 0; fd < 3; fd++ {
		if err := t.InstallSpecial(fd, sim.DevNull{}, unix.O_RDWR); err != nil {
			return nil, err
		}
		interposer.NotifyInstalled(h, t, fd)
	}
	p := sim.NewProcess(h, t)
	w.start(p)
	return p, nil
}

func (s setup) makeFiles(k *sim.Kernel) error {
	if len(s.files) == 0 {
		return nil
	}
	p := k.Spawn()
	defer p.Exit()
	dirs := map[string]bool{}
	for _, f := range s.files {
		if err := fio.MkdirAll(p, path.Dir(f.path)); err != nil {
			return fmt.Errorf("file %s: %w", f.path, err)
		}
		dirs[path.Dir(f.path)] = true
		if err := makeFile(p, f); err != nil {
			return fmt.Errorf("file %s: %w", f.path, err)
		}
	}
	for _, d := range sortedKeys(dirs) {
		for ; ; d = path.Dir(d) {
			fd, err := p.Open(d, unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				return err
			}
			err = p.Fsync(fd)
			p.Close(fd)
			if err != nil || d == "/" {
				break
			}
		}
	}
	return nil
}

// warm reads the written files that are not cold into k's page cache, by a
// process of their own, before the workload's clock starts.
func (s setup) warm(k *sim.Kernel) error {
	p := k.Spawn()
	defer p.Exit()
	buf := make([]byte, 1<<20)
	for _, f := range s.files {
		if f.cold || f.layout != "written" {
			continue
		}
		fd, err := p.Open(f.path, unix.O_RDONLY, 0)
		if err != nil {
			return fmt.Errorf("file %s: %w", f.path, err)
		}
		for {
			n, err := p.Read(fd, buf)
			if err != nil {
				p.Close(fd)
				return fmt.Errorf("file %s: %w", f.path, err)
			}
			if n == 0 {
				break
			}
		}
		p.Close(fd)
	}
	return nil
}

func makeFile(p *sim.Process, f fileSpec) error {
	fd, err := p.Open(f.path, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer p.Close(fd)
	switch f.layout {
	case "sparse":
		err = p.Ftruncate(fd, f.size)
	case "prealloc":
		err = p.Fallocate(fd, 0, 0, f.size)
	default:
		err = writeContent(p, fd, f)
	}
	if err != nil {
		return err
	}
	return p.Fsync(fd)
}

// writeContent writes the file's bytes: its text repeated to size, zeros, or
// bytes from a generator seeded by the path (the same file, the same bytes).
func writeContent(p *sim.Process, fd int, f fileSpec) error {
	chunk := make([]byte, min(f.size, 1<<20))
	var rng *rand.Rand
	if f.content == "random" {
		h := fnv.New64a()
		h.Write([]byte(f.path))
		rng = rand.New(rand.NewPCG(h.Sum64(), 1))
	}
	for off := int64(0); off < f.size; off += int64(len(chunk)) {
		b := chunk[:min(int64(len(chunk)), f.size-off)]
		switch f.content {
		case "text":
			for i := range b {
				b[i] = f.text[(off+int64(i))%int64(len(f.text))]
			}
		case "random":
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
		}
		if _, err := p.Pwrite(fd, b, off); err != nil {
			return err
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

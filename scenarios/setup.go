package scenarios

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"path"
	"slices"
	"strings"

	"github.com/cockroachdb/datadriven"
	"golang.org/x/sys/unix"

	"iosim/crash"
	"iosim/faultrule"
	"iosim/fio"
	"iosim/interposer"
	"iosim/sim"
	"iosim/vfs"
)

// setup is what an arm runs on: the device, the persistence model, the files
// it finds, the interposer stack and the faults.
type setup struct {
	model     string
	device    string
	files     []fileSpec
	stack     interposer.Stack
	faults    []faultrule.Rule
	faultSeed int64
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
	text    []byte
}

// maxWritten bounds the size of a file whose bytes setup writes: the model
// holds written data in memory (sparse and preallocated files cost nothing).
const maxWritten = 1 << 30

func defaultSetup() setup { return setup{model: "all", device: "default", faultSeed: 1} }

func (s setup) clone() setup {
	s.files = slices.Clone(s.files)
	s.stack = slices.Clone(s.stack)
	s.faults = slices.Clone(s.faults)
	return s
}

func (s setup) describe() string {
	parts := []string{"device " + s.device}
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
	return "persistence models (what crash explores by default): " + strings.Join(names, ", "), nil
}

// deviceOptions is the hook of the time model: it returns the kernel options
// that make the named device price every call. Only "default" (the kernel's
// constant cost per call) exists until device profiles do; then this becomes
// device.Lookup(name) and sim.WithDevice(profile).
func deviceOptions(name string) ([]sim.Option, error) {
	if name == "default" {
		return nil, nil
	}
	return nil, fmt.Errorf("unknown device %q (known: default)", name)
}

func (s *Scenario) cmdDevice(td *datadriven.TestData) (string, error) {
	a, err := parseArgs(td, 1, 1)
	if err != nil {
		return "", err
	}
	if _, err := deviceOptions(a.words[0]); err != nil {
		return "", malformed(td, "%v", err)
	}
	s.cur.device = a.words[0]
	return "device " + a.words[0], nil
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
	switch {
	case a.flagWord("sparse"):
		f.layout = "sparse"
	case a.flagWord("prealloc"):
		f.layout = "prealloc"
	}
	if len(a.words) > 1 {
		return "", malformed(td, "unexpected word %q (want sparse or prealloc)", a.words[1])
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
	return fmt.Sprintf("file %s: %d bytes, %s, %s", f.path, f.size, f.layout, f.content), nil
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
	t0     int64             // virtual time when the workload starts
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
	opts, err := deviceOptions(s.device)
	if err != nil {
		return nil, err
	}
	opts = append(opts, sim.WithLockWait(false))
	fs := vfs.New(s.fsOpts...)
	k := sim.New(fs, opts...)
	if err := s.makeFiles(k); err != nil {
		return nil, err
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
	w.t0 = k.Now()
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
	return sim.NewProcess(h, t), nil
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

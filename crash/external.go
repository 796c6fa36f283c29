package crash

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// External runs a command line in ALICE's convention: with the crashed state
// of Dir materialised in a directory and a file of what the program had
// written to its standard output appended as arguments; exit status 0 means
// consistent. A command of plain words (letters, digits and -_./=+,:@%)
// runs as those words, any other through the shell, /bin/sh -c, with the
// two arguments as "$0" "$1"; either way it runs in the working directory of
// the caller, so relative paths in it mean what they mean to the user, with
// TMPDIR set to a directory of its own, emptied after each state.
//
// An External made by NewExternal runs the command once per distinct content
// of (the materialised directory, stdout), compared exactly by a SHA-256 of
// every name, kind, mode and byte: states that materialise the same content
// share the first run's verdict. Each run gets a fresh directory written from
// the model, shared with nothing, so the checker may do anything to it (open
// the database read-write, recover a journal, checkpoint a WAL, delete files);
// what it does there is discarded and never reaches another state. The
// directories are written in TMPDIR when it is set, else in /dev/shm when it
// is a memory file system (see workspaces).
type External struct {
	Command string
	Dir     string // the traced directory the program owns

	ws *workspaces // nil: run once per state, in a directory made for it
}

// NewExternal returns an External that runs command once per distinct content.
func NewExternal(command, dir string) External {
	return External{Command: command, Dir: dir, ws: newWorkspaces(true)}
}

func (x External) Name() string { return "checker" }
func (External) Parallel()      {}

// release removes the directories the states were written in.
func (x External) release() { x.ws.release() }

func (x External) Check(s *State) []Finding {
	return checkOnce(x.ws, x.Dir, s, func(dir, out string) []Finding {
		cmd := checkerCommand(x.Command, dir, out)
		cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(filepath.Dir(dir), "tmp"))
		b, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		return []Finding{{Kind: "checker", Message: fmt.Sprintf("%s: %v: %s", x.Command, err, firstLines(b))}}
	})
}

// checkerCommand is command run on dir and out: as its words when it has
// only plain ones (what the shell would run, without starting one), else
// through the shell.
func checkerCommand(command, dir, out string) *exec.Cmd {
	if w := strings.Fields(command); len(w) > 0 && plainWords(command) {
		return exec.CommandContext(context.Background(), w[0], append(w[1:], dir, out)...)
	}
	return exec.CommandContext(context.Background(), "/bin/sh", "-c", command+` "$0" "$1"`, dir, out)
}

// plainWords reports whether the shell would take s as words as they are:
// no quoting, expansion, redirection, operator or assignment.
func plainWords(s string) bool {
	for _, w := range strings.Fields(s) {
		if strings.Contains(w, "=") && !strings.HasPrefix(w, "-") {
			return false // a first word NAME=VALUE assigns; keep the shell's reading
		}
		if w == "~" || strings.HasPrefix(w, "~") {
			return false
		}
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == ' ', r == '\t':
		case strings.ContainsRune("-_./=+,:@%", r):
		default:
			return false
		}
	}
	return true
}

// firstLines is the start of a checker's output, on one line.
func firstLines(b []byte) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 6)
	if len(lines) > 5 {
		lines = lines[:5]
	}
	return strings.Join(lines, " | ")
}

// checkOnce materialises s's Dir and stdout in a workspace of ws and calls
// run on them, unless a state of the same content was (or is being) checked
// through ws: then it returns that verdict. ws nil: run on every state, in a
// workspace of its own.
func checkOnce(ws *workspaces, dir string, s *State, run func(dir, stdout string) []Finding) []Finding {
	if ws == nil {
		ws = newWorkspaces(false)
		defer ws.release()
	}
	bp := treeBufs.Get().(*[]byte)
	t, err := s.tree(dir, (*bp)[:0])
	defer func() {
		*bp = t.buf[:0]
		treeBufs.Put(bp)
	}()
	if err != nil {
		return []Finding{{Kind: "checker", Message: fmt.Sprintf("materialising %s: %v", dir, err)}}
	}
	do := func() []Finding {
		w, err := ws.get()
		if err != nil {
			return []Finding{{Kind: "checker", Message: err.Error()}}
		}
		d, out := filepath.Join(w.dir, "crashed"), filepath.Join(w.dir, "stdout")
		err = writeState(t, d, out, s.Stdout)
		if errors.Is(err, syscall.ENOSPC) && w.mem {
			// the memory file system is full: this state goes to the
			// system's temporary directory
			ws.put(w, false)
			if w, err = ws.disk(); err == nil {
				d, out = filepath.Join(w.dir, "crashed"), filepath.Join(w.dir, "stdout")
				err = writeState(t, d, out, s.Stdout)
			}
		}
		if err != nil {
			ws.put(w, false)
			return []Finding{{Kind: "checker", Message: fmt.Sprintf("materialising %s: %v", dir, err)}}
		}
		fs := run(d, out)
		ws.put(w, true)
		return fs
	}
	if ws.seen == nil {
		return do()
	}
	return ws.seen.get(t.key(s.Stdout), do)
}

// writeState writes a state's tree into d and its stdout into out.
var writeState = func(t *tree, d, out string, stdout []byte) error {
	if err := t.write(d); err != nil {
		return err
	}
	return os.WriteFile(out, stdout, 0o644)
}

// treeBufs hold the bytes of the trees checkOnce reads.
var treeBufs = sync.Pool{New: func() any { return new([]byte) }}

// workspaces are the directories the states of a checker are written in,
// reused from one state to the next: a workspace holds tmp/ (the checker's
// TMPDIR) and, while a state is checked, crashed/ and stdout, removed after
// (with whatever the checker left in tmp/). They are made in TMPDIR when it
// is set; else in /dev/shm when it is a memory file system that iosim may
// write, for a state written there costs a fraction of one written to a
// disk's file system (BENCHMARKS.md); else in the system's temporary
// directory. A state that does not fit in /dev/shm goes to the system's
// temporary directory.
type workspaces struct {
	seen *verdictCache // nil: run once per state

	mu   sync.Mutex
	base string       // where new workspaces go ("" until the first)
	mem  bool         // base is /dev/shm
	idle []*workspace // ready for a state
	all  []string     // every workspace made, for release
}

type workspace struct {
	dir string
	mem bool
}

func newWorkspaces(dedupe bool) *workspaces {
	ws := &workspaces{}
	if dedupe {
		ws.seen = newVerdictCache()
	}
	return ws
}

// memDir returns where workspaces go when TMPDIR is not set: /dev/shm
// when it is a memory file system iosim may write ("": the system's
// temporary directory).
var memDir = func() string {
	if isMemFS("/dev/shm") && unix.Access("/dev/shm", unix.W_OK) == nil {
		return "/dev/shm"
	}
	return ""
}

// get returns an idle workspace, or a new one.
func (ws *workspaces) get() (*workspace, error) {
	ws.mu.Lock()
	if n := len(ws.idle); n > 0 {
		w := ws.idle[n-1]
		ws.idle = ws.idle[:n-1]
		ws.mu.Unlock()
		return w, nil
	}
	if ws.base == "" {
		ws.base = os.TempDir()
		if m := memDir(); os.Getenv("TMPDIR") == "" && m != "" {
			ws.base, ws.mem = m, true
		}
	}
	base, mem := ws.base, ws.mem
	ws.mu.Unlock()
	return ws.make(base, mem)
}

// disk returns a new workspace in the system's temporary directory.
func (ws *workspaces) disk() (*workspace, error) { return ws.make(os.TempDir(), false) }

func (ws *workspaces) make(base string, mem bool) (*workspace, error) {
	d, err := os.MkdirTemp(base, "iosim-crash-")
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(filepath.Join(d, "tmp"), 0o755); err != nil {
		_ = os.RemoveAll(d)
		return nil, err
	}
	ws.mu.Lock()
	ws.all = append(ws.all, d)
	ws.mu.Unlock()
	return &workspace{dir: d, mem: mem}, nil
}

// put empties w after a state and makes it idle again; keep false (or a
// failure to empty it) removes it instead.
func (ws *workspaces) put(w *workspace, keep bool) {
	err := os.RemoveAll(filepath.Join(w.dir, "crashed"))
	if err == nil {
		err = os.Remove(filepath.Join(w.dir, "stdout"))
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
	}
	if err == nil {
		err = emptyDir(filepath.Join(w.dir, "tmp"))
	}
	if err != nil || !keep || w.mem != ws.mem {
		_ = os.RemoveAll(w.dir)
		return
	}
	ws.mu.Lock()
	ws.idle = append(ws.idle, w)
	ws.mu.Unlock()
}

// emptyDir leaves dir an empty directory (remade if a checker removed or
// replaced it).
func emptyDir(dir string) error {
	f, err := os.Open(dir)
	if err == nil {
		names, _ := f.Readdirnames(1)
		st, serr := f.Stat()
		_ = f.Close()
		if len(names) == 0 && serr == nil && st.IsDir() {
			return nil
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Mkdir(dir, 0o755)
}

// release removes every workspace.
func (ws *workspaces) release() {
	if ws == nil {
		return
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, d := range ws.all {
		_ = os.RemoveAll(d)
	}
	ws.all, ws.idle = nil, nil
}

// isMemFS reports whether dir is on a tmpfs.
func isMemFS(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Type == unix.TMPFS_MAGIC
}

// verdictCache remembers a checker's findings by content key; a key being
// checked makes the others asking for it wait for that verdict.
type verdictCache struct {
	mu sync.Mutex
	m  map[[32]byte]*cached
}

type cached struct {
	done     chan struct{}
	findings []Finding
}

func newVerdictCache() *verdictCache { return &verdictCache{m: map[[32]byte]*cached{}} }

// maxCached bounds the verdicts a cache holds; past it, it starts afresh (a
// content met again is checked again).
const maxCached = 1 << 20

func (c *verdictCache) get(k [32]byte, run func() []Finding) []Finding {
	c.mu.Lock()
	if v := c.m[k]; v != nil {
		c.mu.Unlock()
		<-v.done
		return v.findings
	}
	if len(c.m) >= maxCached {
		clear(c.m)
	}
	v := &cached{done: make(chan struct{})}
	c.m[k] = v
	c.mu.Unlock()
	v.findings = run()
	close(v.done)
	return v.findings
}

// tree is a directory of a crash state as a checker gets it: entries in
// walk order (depth first, by name), with their bytes.
type tree struct {
	missing bool // the directory itself did not survive
	ents    []treeEnt
	buf     []byte // the files' bytes
}

type treeEnt struct {
	rel    string // slash-separated, relative to the directory
	kind   byte   // 'd', 'f', 'l'
	mode   os.FileMode
	lo, hi int    // a file's bytes (holes as zeros): buf[lo:hi]
	target string // a symlink's
}

func (t *tree) data(e *treeEnt) []byte { return t.buf[e.lo:e.hi] }

// tree reads the subtree at dir of s, appending the files' bytes to buf.
func (s *State) tree(dir string, buf []byte) (*tree, error) {
	if w := s.w; s.fs == nil && w != nil && w.cs != nil {
		if t, ok := w.tree(dir, buf); ok {
			return t, nil
		}
	}
	return dirTree(s.FS(), dir, buf)
}

// dirTree reads the subtree at dir of fs.
func dirTree(fs *vfs.FS, dir string, buf []byte) (*tree, error) {
	t := &tree{buf: buf}
	root, err := fs.Root().Resolve(dir, true)
	if err != nil {
		t.missing = true
		return t, nil
	}
	base := root.Path()
	err = walk(root, base, func(p string, ino *vfs.Inode) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, base), "/")
		switch {
		case ino.IsDir():
			t.ents = append(t.ents, treeEnt{rel: rel, kind: 'd', mode: 0o755})
		case ino.IsSymlink():
			t.ents = append(t.ents, treeEnt{rel: rel, kind: 'l', target: ino.Target()})
		case ino.IsRegular():
			lo := len(t.buf)
			t.buf = slices.Grow(t.buf, int(ino.Size()))[:lo+int(ino.Size())]
			n, _ := ino.ReadAt(t.buf[lo:], 0)
			t.buf = t.buf[:lo+n]
			t.ents = append(t.ents, treeEnt{rel: rel, kind: 'f', mode: os.FileMode(ino.Mode()&0o777 | 0o600), lo: lo, hi: lo + n})
		}
		return nil
	})
	return t, err
}

// tree reads the subtree at dir of the walker's crash state, as dirTree
// reads it of the state's file system (State.FS): the same entries, in the
// same order, with the same bytes. ok is false when dir is not a directory
// named by a plain path there (a symbolic link on the way, a name a split
// rename removed, or gone): the caller reads the file system instead.
func (w *walker) tree(dir string, buf []byte) (*tree, bool) {
	if !path.IsAbs(dir) || path.Clean(dir) != dir {
		return nil, false
	}
	id, err := w.cs.LookupIno(dir)
	if err != nil || w.masked[dir] > 0 {
		return nil, false
	}
	if st, err := w.cs.StatIno(id); err != nil || st.Mode&vfs.S_IFMT != vfs.S_IFDIR {
		return nil, false
	}
	t := &tree{buf: buf}
	var rec func(p, rel string) bool
	rec = func(p, rel string) bool {
		ds, err := w.cs.ReadDir(p)
		if err != nil {
			return false
		}
		for _, d := range ds {
			cp, crel := joinPath(p, d.Name), d.Name
			if rel != "" {
				crel = rel + "/" + d.Name
			}
			if w.masked[cp] > 0 {
				continue
			}
			st, err := w.cs.StatIno(d.Ino)
			if err != nil {
				return false
			}
			switch st.Mode & vfs.S_IFMT {
			case vfs.S_IFDIR:
				t.ents = append(t.ents, treeEnt{rel: crel, kind: 'd', mode: 0o755})
				if !rec(cp, crel) {
					return false
				}
			case vfs.S_IFLNK:
				target, err := w.cs.Readlink(cp)
				if err != nil {
					return false
				}
				t.ents = append(t.ents, treeEnt{rel: crel, kind: 'l', target: target})
			case vfs.S_IFREG:
				lo := len(t.buf)
				if t.buf, err = w.cs.AppendIno(t.buf, d.Ino); err != nil {
					return false
				}
				t.ents = append(t.ents, treeEnt{rel: crel, kind: 'f', mode: os.FileMode(st.Mode&0o777 | 0o600), lo: lo, hi: len(t.buf)})
			}
		}
		return true
	}
	if !rec(dir, "") {
		return nil, false
	}
	return t, true
}

// key is the SHA-256 of everything write materialises and of stdout, each
// field length-prefixed so that no two contents share an encoding.
func (t *tree) key(stdout []byte) [32]byte {
	h := sha256.New()
	var n [8]byte
	field := func(b []byte) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	if t.missing {
		field([]byte("missing"))
	}
	for k := range t.ents {
		e := &t.ents[k]
		field([]byte{e.kind})
		field([]byte(e.rel))
		binary.LittleEndian.PutUint64(n[:], uint64(e.mode))
		h.Write(n[:])
		field(t.data(e))
		field([]byte(e.target))
	}
	field([]byte("stdout"))
	field(stdout)
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// write creates the tree at the host path to (which must not exist).
func (t *tree) write(to string) error {
	if err := os.MkdirAll(to, 0o755); err != nil {
		return err
	}
	for k := range t.ents {
		e := &t.ents[k]
		dst := filepath.Join(to, filepath.FromSlash(e.rel))
		var err error
		switch e.kind {
		case 'd':
			err = os.MkdirAll(dst, e.mode)
		case 'l':
			err = os.Symlink(e.target, dst)
		case 'f':
			err = os.WriteFile(dst, t.data(e), e.mode)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Materialize writes the subtree at dir of fs into the host directory to (which
// must not exist): directories, regular files (holes as zeros) and symlinks.
// A directory that did not survive becomes an empty one.
func Materialize(fs *vfs.FS, dir, to string) error {
	t, err := dirTree(fs, dir, nil)
	if err != nil {
		return err
	}
	return t.write(to)
}

// Server is a long-lived checker: Command is started through the shell (at
// most Jobs copies, as the states need them) and kept running. For each
// distinct content it reads one line on its standard input,
//
//	DIR SP STDOUT LF
//
// (DIR the materialised crashed directory, STDOUT the file of the program's
// standard output, both paths iosim made, with no space or newline in them) and
// answers one line on its standard output:
//
//	ok            the state is consistent
//	fail          it is not
//	fail: REASON  it is not, and why
//
// before iosim removes DIR. DIR belongs to the server until it answers, as in
// External. Any other answer, or the server exiting or closing its output, is
// a finding of kind "checker-error" that names the state and the server's
// last words on stderr; the next state starts a fresh server.
type Server struct {
	Command string
	Dir     string // the traced directory the program owns

	ws   *workspaces
	pool chan *serverProc // idle servers; a nil one stands for one not started
	mu   sync.Mutex
	all  []*serverProc
}

// NewServer returns a Server that runs at most jobs copies of command.
func NewServer(command, dir string, jobs int) *Server {
	s := &Server{Command: command, Dir: dir, ws: newWorkspaces(true), pool: make(chan *serverProc, max(1, jobs))}
	for range max(1, jobs) {
		s.pool <- nil
	}
	return s
}

func (*Server) Name() string { return "checker" }
func (*Server) Parallel()    {}

type serverProc struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Reader
	stderr *tailBuffer
}

func (v *Server) start() (*serverProc, error) {
	cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", v.Command)
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p := &serverProc{cmd: cmd, in: in, out: bufio.NewReader(out), stderr: &tailBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	v.mu.Lock()
	v.all = append(v.all, p)
	v.mu.Unlock()
	return p, nil
}

// stop ends p (closing its input, then waiting for it) and returns how it
// ended.
func (p *serverProc) stop() string {
	_ = p.in.Close()
	err := p.cmd.Wait()
	what := "exited"
	if err != nil {
		what = err.Error()
	}
	if t := p.stderr.String(); t != "" {
		what += ": " + t
	}
	return what
}

func (v *Server) Check(s *State) []Finding {
	return checkOnce(v.ws, v.Dir, s, func(dir, out string) []Finding {
		if strings.ContainsAny(dir+out, " \n") {
			return []Finding{{Kind: "checker-error", Message: fmt.Sprintf("state %s: temporary path %q has a space or newline: set TMPDIR to one without", s.Name, dir)}}
		}
		p := <-v.pool
		if p == nil {
			var err error
			if p, err = v.start(); err != nil {
				v.pool <- nil
				return []Finding{{Kind: "checker-error", Message: fmt.Sprintf("state %s: starting checker server %s: %v", s.Name, v.Command, err)}}
			}
		}
		fail := func(what string) []Finding {
			how := p.stop()
			v.pool <- nil
			return []Finding{{Kind: "checker-error", Message: fmt.Sprintf("state %s: checker server %s %s (%s)", s.Name, v.Command, what, how)}}
		}
		if _, err := fmt.Fprintf(p.in, "%s %s\n", dir, out); err != nil {
			return fail("did not take the state: " + err.Error())
		}
		line, err := p.out.ReadString('\n')
		if err != nil {
			return fail("gave no answer")
		}
		v.pool <- p
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "ok":
			return nil
		case line == "fail":
			return []Finding{{Kind: "checker", Message: v.Command + ": fail"}}
		case strings.HasPrefix(line, "fail: "):
			return []Finding{{Kind: "checker", Message: v.Command + ": " + strings.TrimPrefix(line, "fail: ")}}
		}
		return []Finding{{Kind: "checker-error", Message: fmt.Sprintf("state %s: checker server %s answered %q: want ok, fail or fail: REASON", s.Name, v.Command, line)}}
	})
}

// Close ends the servers started (closing their input), waits for them,
// and removes the directories the states were written in.
func (v *Server) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, p := range v.all {
		_ = p.in.Close()
		_ = p.cmd.Wait()
	}
	v.all = nil
	v.ws.release()
	return nil
}

func (v *Server) release() { v.ws.release() }

// tailBuffer keeps the last lines written to it.
type tailBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return firstLines(bytes.TrimSpace(t.b))
}

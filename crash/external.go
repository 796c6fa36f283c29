package crash

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/iosim/iosim/vfs"
)

// External runs a command line in ALICE's convention: through the shell, with
// the crashed state of Dir materialised in a temporary directory and a file of
// what the program had written to its standard output appended as arguments;
// exit status 0 means consistent. The command runs in the working directory of
// the caller, so relative paths in it mean what they mean to the user; each
// run has a temporary directory of its own, in TMPDIR, removed when it ends.
//
// An External made by NewExternal runs the command once per distinct content
// of (the materialised directory, stdout), compared exactly by a SHA-256 of
// every name, kind, mode and byte: states that materialise the same content
// share the first run's verdict. Each run gets a fresh directory written from
// the model, shared with nothing, so the checker may do anything to it (open
// the database read-write, recover a journal, checkpoint a WAL, delete files);
// what it does there is discarded and never reaches another state.
type External struct {
	Command string
	Dir     string // the traced directory the program owns

	seen *verdictCache // nil: run once per state
}

// NewExternal returns an External that runs command once per distinct content.
func NewExternal(command, dir string) External {
	return External{Command: command, Dir: dir, seen: newVerdictCache()}
}

func (x External) Name() string { return "checker" }
func (External) Parallel()      {}

func (x External) Check(s *State) []Finding {
	return checkOnce(x.seen, x.Dir, s, func(dir, out string) []Finding {
		cmd := exec.CommandContext(context.Background(), "/bin/sh", "-c", x.Command+` "$0" "$1"`, dir, out)
		cmd.Env = append(os.Environ(), "TMPDIR="+filepath.Join(filepath.Dir(dir), "tmp"))
		b, err := cmd.CombinedOutput()
		if err == nil {
			return nil
		}
		return []Finding{{Kind: "checker", Message: fmt.Sprintf("%s: %v: %s", x.Command, err, firstLines(b))}}
	})
}

// firstLines is the start of a checker's output, on one line.
func firstLines(b []byte) string {
	lines := strings.SplitN(strings.TrimSpace(string(b)), "\n", 6)
	if len(lines) > 5 {
		lines = lines[:5]
	}
	return strings.Join(lines, " | ")
}

// checkOnce materialises s's Dir and stdout and calls run on them, unless a
// state of the same content was (or is being) checked through seen: then it
// returns that verdict.
func checkOnce(seen *verdictCache, dir string, s *State, run func(dir, stdout string) []Finding) []Finding {
	t, err := dirTree(s.FS(), dir)
	if err != nil {
		return []Finding{{Kind: "checker", Message: fmt.Sprintf("materialising %s: %v", dir, err)}}
	}
	do := func() []Finding {
		tmp, err := os.MkdirTemp("", "iosim-crash-")
		if err != nil {
			return []Finding{{Kind: "checker", Message: err.Error()}}
		}
		defer os.RemoveAll(tmp)
		d := filepath.Join(tmp, "crashed")
		if err := t.write(d); err != nil {
			return []Finding{{Kind: "checker", Message: fmt.Sprintf("materialising %s: %v", dir, err)}}
		}
		out := filepath.Join(tmp, "stdout")
		if err := os.WriteFile(out, s.Stdout, 0o644); err != nil {
			return []Finding{{Kind: "checker", Message: err.Error()}}
		}
		if err := os.Mkdir(filepath.Join(tmp, "tmp"), 0o755); err != nil {
			return []Finding{{Kind: "checker", Message: err.Error()}}
		}
		return run(d, out)
	}
	if seen == nil {
		return do()
	}
	return seen.get(t.key(s.Stdout), do)
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
}

type treeEnt struct {
	rel    string // slash-separated, relative to the directory
	kind   byte   // 'd', 'f', 'l'
	mode   os.FileMode
	data   []byte // a file's bytes (holes as zeros)
	target string // a symlink's
}

// dirTree reads the subtree at dir of fs.
func dirTree(fs *vfs.FS, dir string) (*tree, error) {
	root, err := fs.Root().Resolve(dir, true)
	if err != nil {
		return &tree{missing: true}, nil
	}
	t := &tree{}
	base := root.Path()
	err = walk(root, base, func(p string, ino *vfs.Inode) error {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, base), "/")
		switch {
		case ino.IsDir():
			t.ents = append(t.ents, treeEnt{rel: rel, kind: 'd', mode: 0o755})
		case ino.IsSymlink():
			t.ents = append(t.ents, treeEnt{rel: rel, kind: 'l', target: ino.Target()})
		case ino.IsRegular():
			t.ents = append(t.ents, treeEnt{rel: rel, kind: 'f', mode: os.FileMode(ino.Mode()&0o777 | 0o600), data: readAll(ino)})
		}
		return nil
	})
	return t, err
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
	for _, e := range t.ents {
		field([]byte{e.kind})
		field([]byte(e.rel))
		binary.LittleEndian.PutUint64(n[:], uint64(e.mode))
		h.Write(n[:])
		field(e.data)
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
	for _, e := range t.ents {
		dst := filepath.Join(to, filepath.FromSlash(e.rel))
		var err error
		switch e.kind {
		case 'd':
			err = os.MkdirAll(dst, e.mode)
		case 'l':
			err = os.Symlink(e.target, dst)
		case 'f':
			err = os.WriteFile(dst, e.data, e.mode)
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
	t, err := dirTree(fs, dir)
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

	seen *verdictCache
	pool chan *serverProc // idle servers; a nil one stands for one not started
	mu   sync.Mutex
	all  []*serverProc
}

// NewServer returns a Server that runs at most jobs copies of command.
func NewServer(command, dir string, jobs int) *Server {
	s := &Server{Command: command, Dir: dir, seen: newVerdictCache(), pool: make(chan *serverProc, max(1, jobs))}
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
	return checkOnce(v.seen, v.Dir, s, func(dir, out string) []Finding {
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

// Close ends the servers started (closing their input) and waits for them.
func (v *Server) Close() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, p := range v.all {
		_ = p.in.Close()
		_ = p.cmd.Wait()
	}
	v.all = nil
	return nil
}

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

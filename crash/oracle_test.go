package crash

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// The property tests of the models: random small workloads, and for every
// state the explorer produces under a model, an oracle written from that
// model's rule table (not from how the explorer builds states) decides
// whether the model allows it. The oracle sees the file system only as a
// program does, at call boundaries: after each call of the workload, the
// tree (names, types, inode numbers, bytes) the running file system holds.

// node is a name in a tree.
type node struct {
	dir  bool
	ino  uint64
	data string
}

// nameTree is a file system's names, from the root.
type nameTree map[string]node

func treeOf(fs *vfs.FS) nameTree {
	t := nameTree{}
	var walk func(dir *vfs.Inode, p string)
	walk = func(dir *vfs.Inode, p string) {
		ds, _ := dir.Dirents()
		for _, d := range ds {
			if d.Name == "." || d.Name == ".." {
				continue
			}
			c, err := dir.Resolve(d.Name, false)
			if err != nil {
				continue
			}
			cp := p + "/" + d.Name
			switch {
			case c.IsDir():
				t[cp] = node{dir: true, ino: c.Ino()}
				walk(c, cp)
			case c.IsRegular():
				t[cp] = node{ino: c.Ino(), data: string(readAll(c))}
			}
		}
	}
	walk(fs.Root(), "")
	return t
}

func (t nameTree) String() string {
	var ks []string
	for k := range t {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	var b strings.Builder
	for _, k := range ks {
		n := t[k]
		if n.dir {
			fmt.Fprintf(&b, "%s/ ", k)
			continue
		}
		fmt.Fprintf(&b, "%s#%d=%q ", k, n.ino, squeeze(n.data))
	}
	return b.String()
}

// squeeze shortens runs of a byte: "a×4096".
func squeeze(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] == s[i] {
			j++
		}
		if j-i > 3 {
			fmt.Fprintf(&b, "%c×%d", s[i], j-i)
		} else {
			b.WriteString(s[i:j])
		}
		i = j
	}
	return b.String()
}

// names lists the names in directory dir of t.
func names(t nameTree, dir string) string {
	var ks []string
	for k, n := range t {
		if path.Dir(k) == dir {
			ks = append(ks, fmt.Sprintf("%s#%d", k, n.ino))
		}
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// names is a tree's namespace: names and types, no data.
func (t nameTree) names() string {
	var ks []string
	for k, n := range t {
		if n.dir {
			k += "/"
		}
		ks = append(ks, fmt.Sprintf("%s#%d", k, n.ino))
	}
	sort.Strings(ks)
	return strings.Join(ks, " ")
}

// wop is one step of a random workload.
type wop struct {
	kind   string
	path   string
	to     string
	off, n int64
	c      byte
}

func (o wop) String() string {
	switch o.kind {
	case "pwrite":
		return fmt.Sprintf("pwrite %s [%d,+%d) %c", o.path, o.off, o.n, o.c)
	case "append":
		return fmt.Sprintf("append %s +%d %c", o.path, o.n, o.c)
	case "truncate":
		return fmt.Sprintf("truncate %s %d", o.path, o.off)
	case "rename":
		return fmt.Sprintf("rename %s %s", o.path, o.to)
	}
	return o.kind + " " + o.path
}

var oraclePaths = []string{"/a", "/b", "/d/c", "/d/e"}

func drawWorkload(t *rapid.T) []wop {
	path := rapid.SampledFrom(oraclePaths)
	bs := int64(4096)
	n := rapid.IntRange(1, 7).Draw(t, "calls")
	var ops []wop
	for k := range n {
		kind := rapid.SampledFrom([]string{"pwrite", "pwrite", "append", "truncate", "fsync", "fdatasync", "fsyncdir", "rename", "create", "unlink", "mkdir"}).Draw(t, fmt.Sprintf("kind%d", k))
		o := wop{kind: kind, path: path.Draw(t, fmt.Sprintf("path%d", k)), c: byte('A' + k)}
		switch kind {
		case "pwrite":
			o.off = rapid.SampledFrom([]int64{0, 100, bs - 10, bs, 2 * bs}).Draw(t, fmt.Sprintf("off%d", k))
			o.n = rapid.SampledFrom([]int64{1, 20, bs, 2*bs + 50}).Draw(t, fmt.Sprintf("n%d", k))
		case "append":
			o.n = rapid.SampledFrom([]int64{1, 20, bs, 2*bs + 50}).Draw(t, fmt.Sprintf("n%d", k))
		case "truncate":
			o.off = rapid.SampledFrom([]int64{0, 50, bs, 3 * bs}).Draw(t, fmt.Sprintf("size%d", k))
		case "rename":
			// to names no other step makes: where namespace operations
			// persist in any order (posix, alice, btrfs), a rename back
			// kept without the rename that made its source names the file
			// with an empty record (vfs.CrashState applies a rename whose
			// source is absent), a state no rule describes
			o.to = rapid.SampledFrom([]string{"/r", "/d/r"}).Draw(t, fmt.Sprintf("to%d", k))
		case "mkdir", "fsyncdir":
			o.path = "/d"
		}
		ops = append(ops, o)
	}
	return ops
}

// run runs the workload's steps, each a few calls; after each call it
// records the tree (trees[k]: after call k of the explorer's numbering,
// which counts every call the workload makes) and whether the call was a
// successful fsync or fdatasync.
type boundaries struct {
	trees []nameTree
	sync  []bool
	ops   []string
	nops  []int // the calls the explorer had recorded
	e     *Explorer
}

func runWorkload(env *Env, ops []wop, b *boundaries) error {
	// synced is the tree at the last sync that committed: fsync commits
	// the running transaction only for a file with changes in flight
	// (ext4_sync_file waits for the inode's last transaction, xfs forces
	// the log to its last change): here, one whose bytes, or a directory
	// whose names, changed since
	synced := b.trees[0]
	dirty := func(p string, now nameTree) bool {
		if now[p].dir {
			return names(now, p) != names(synced, p)
		}
		return now[p] != synced[p]
	}
	after := func(what string, err error, sync bool) {
		b.nops = append(b.nops, b.e.nops())
		now := treeOf(env.FS)
		b.trees = append(b.trees, now)
		p := strings.Fields(what + " x")[1]
		commits := sync && err == nil && dirty(p, now)
		if commits {
			synced = now
		}
		b.sync = append(b.sync, commits)
		b.ops = append(b.ops, what)
	}
	open := func(p string, flags int) (int, bool) {
		fd, err := env.Proc.Open(p, flags, 0o644)
		after("open "+p, err, false)
		return fd, err == nil
	}
	closeFd := func(fd int) { after("close", env.Proc.Close(fd), false) }
	for _, o := range ops {
		switch o.kind {
		case "pwrite", "append", "truncate":
			flags := unix.O_WRONLY
			if o.kind == "append" {
				flags |= unix.O_APPEND
			}
			fd, ok := open(o.path, flags)
			if !ok {
				continue
			}
			var err error
			switch o.kind {
			case "pwrite":
				_, err = env.Proc.Pwrite(fd, fill(o.c, int(o.n)), o.off)
			case "append":
				_, err = env.Proc.Write(fd, fill(o.c, int(o.n)))
			default:
				err = env.Proc.Ftruncate(fd, o.off)
			}
			after(o.String(), err, false)
			closeFd(fd)
		case "fsync", "fdatasync", "fsyncdir":
			fd, ok := open(o.path, unix.O_RDONLY)
			if !ok {
				continue
			}
			var err error
			if o.kind == "fdatasync" {
				err = env.Proc.Fdatasync(fd)
			} else {
				err = env.Proc.Fsync(fd)
			}
			after(o.String(), err, true)
			closeFd(fd)
		case "create":
			fd, ok := open(o.path, unix.O_WRONLY|unix.O_CREAT)
			if ok {
				closeFd(fd)
			}
		case "rename":
			after(o.String(), env.Proc.Rename(o.path, o.to), false)
		case "unlink":
			after(o.String(), env.Proc.Unlink(o.path), false)
		case "mkdir":
			after(o.String(), env.Proc.Mkdir(o.path, 0o755), false)
		}
	}
	return nil
}

// seen is a state the explorer produced: its crash point (the number of
// calls made) and its tree.
type seen struct {
	calls int
	name  string
	t     nameTree
}

// exploreStates runs ops under m and returns every state checked, with the
// trees at the call boundaries (bounds.trees[0]: before the first call).
func exploreStates(t interface{ Fatalf(string, ...any) }, m *Model, ops []wop) ([]seen, *boundaries) {
	setup := func(fs *vfs.FS) error {
		if err := fs.Mkdir("/d", 0o755); err != nil {
			return err
		}
		return writeFile(fs, "/a", fill('a', 5000))
	}
	var mu sync.Mutex
	var states []seen
	check := CheckFunc{ID: "oracle", F: func(s *State) []Finding {
		st := seen{calls: s.Point.Index + 1, name: s.Name, t: treeOf(s.FS())}
		mu.Lock()
		states = append(states, st)
		mu.Unlock()
		return nil
	}}
	e, env, err := newFuncExplorer(Options{Models: []*Model{m}, Depth: 2, Checkers: []Checker{check}}, setup)
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	b := &boundaries{e: e, trees: []nameTree{treeOf(env.FS)}, sync: []bool{false}, ops: []string{"start"}, nops: []int{e.nops()}}
	if err := runWorkload(env, ops, b); err != nil {
		t.Fatalf("workload: %v", err)
	}
	e.Finish()
	slices.SortFunc(states, func(a, b seen) int { return strings.Compare(a.name, b.name) })
	for k := range states {
		// the last boundary with as many calls recorded as the crash point's
		j := slices.Index(b.nops, states[k].calls)
		if j < 0 {
			t.Fatalf("state %s after %d recorded calls: no boundary had as many (%v)", states[k].name, states[k].calls, b.nops)
		}
		for j+1 < len(b.nops) && b.nops[j+1] == states[k].calls {
			j++
		}
		states[k].calls = j
	}
	return states, b
}

// lastSync is the last boundary at or before calls made by a successful
// fsync or fdatasync (0: none).
func (b *boundaries) lastSync(calls int) int {
	for k := calls; k > 0; k-- {
		if b.sync[k] {
			return k
		}
	}
	return 0
}

func (b *boundaries) history(calls int) string {
	return strings.Join(b.ops[1:calls+1], "; ")
}

// inOrder is ext4-journal's rule table: every change, data included,
// commits in call order, a whole call at a time but for a write of several
// pages, which may commit a prefix of its pages (the size it moves with the
// rest); an fsync commits every change made before it. A state is the tree
// at a call boundary between the last sync and the crash point, or that
// tree with one file's pages up to some page taken from the next boundary.
func inOrder(s seen, b *boundaries) error {
	for j := b.lastSync(s.calls); j <= s.calls; j++ {
		if s.t.String() == b.trees[j].String() || j < s.calls && pagePrefix(s.t, b.trees[j], b.trees[j+1]) {
			return nil
		}
	}
	return fmt.Errorf("no call boundary in [%d, %d] holds it, nor one with a page prefix of the next call's write", b.lastSync(s.calls), s.calls)
}

// pagePrefix reports whether t is before with one file's first pages as in
// after, at before's size.
func pagePrefix(t, before, after nameTree) bool {
	if t.names() != before.names() {
		return false
	}
	odd := 0
	for p, n := range t {
		o := before[p]
		if n == o {
			continue
		}
		if odd++; odd > 1 || n.dir || len(n.data) != len(o.data) {
			return false
		}
		a := after[p].data
		cut := false
		for off := 0; off < len(n.data); off += 4096 {
			end := min(off+4096, len(n.data))
			fromAfter := end <= len(a) && n.data[off:end] == a[off:end]
			if !cut && !fromAfter {
				cut = true
			}
			if cut && n.data[off:end] != o.data[off:end] {
				return false
			}
		}
	}
	return true
}

// metaInOrder is the journal models' first rule: namespace changes commit
// in call order: a state's names are those of a call boundary not before the
// last fsync.
func metaInOrder(s seen, b *boundaries) error {
	for j := b.lastSync(s.calls); j <= s.calls; j++ {
		if s.t.names() == b.trees[j].names() {
			return nil
		}
	}
	return fmt.Errorf("names %s are those of no call boundary in [%d, %d]", s.t.names(), b.lastSync(s.calls), s.calls)
}

// dataVersions checks every regular file of the state: its size is one its
// inode had at a call boundary up to the crash point, and each unit of its
// bytes (a sector, or a block where blocks are never torn) is what that
// inode held there at some call boundary up to the crash point, or zeros
// where zeros allows it (data not ordered before the size that exposes it).
func dataVersions(unit int, zeros bool) func(s seen, b *boundaries) error {
	return func(s seen, b *boundaries) error {
		for p, n := range s.t {
			if n.dir {
				continue
			}
			var sizes []int
			var vers []string
			last := -1 // the last boundary at which the inode had the state's size
			for j := 0; j <= s.calls; j++ {
				for _, m := range b.trees[j] {
					if !m.dir && m.ino == n.ino {
						sizes = append(sizes, len(m.data))
						if len(m.data) == len(n.data) {
							last = j
						}
					}
				}
			}
			// a version reads zeros past its end to the end of its last
			// block (the page past the end of file is zeroed), and past
			// that if the file grew again (a hole): zeros past the block
			// only from the versions up to the last boundary with the
			// state's size
			var tails []int
			for j := 0; j <= s.calls; j++ {
				for _, m := range b.trees[j] {
					if !m.dir && m.ino == n.ino {
						vers = append(vers, m.data)
						tail := (len(m.data) + 4095) / 4096 * 4096
						if zeros || j <= last {
							tail = len(n.data)
						}
						tails = append(tails, tail)
					}
				}
			}
			if !slices.Contains(sizes, len(n.data)) {
				return fmt.Errorf("%s is %d bytes: its inode had sizes %v at call boundaries", p, len(n.data), sizes)
			}
			for off := 0; off < len(n.data); off += unit {
				got := n.data[off:min(off+unit, len(n.data))]
				ok := false
				for vi, v := range vers {
					// a version's bytes, zeros past its end (see tails),
					// and any zero where zeros allows it
					ok = true
					for k := range len(got) {
						if c := got[k]; !(off+k < len(v) && v[off+k] == c || c == 0 && (zeros || off+k >= len(v) && off+k < tails[vi])) {
							ok = false
							break
						}
					}
					if ok {
						break
					}
				}
				if !ok {
					return fmt.Errorf("%s bytes [%d,+%d) %q were never its content at a call boundary", p, off, len(got), squeeze(got))
				}
			}
		}
		return nil
	}
}

func allOf(rules ...func(seen, *boundaries) error) func(seen, *boundaries) error {
	return func(s seen, b *boundaries) error {
		for _, r := range rules {
			if err := r(s, b); err != nil {
				return err
			}
		}
		return nil
	}
}

// oracles are the models' rules as the oracle checks them.
var oracles = map[string]func(seen, *boundaries) error{
	"posix":          dataVersions(vfs.SectorSize, true),
	"alice":          dataVersions(vfs.SectorSize, true),
	"ext4-ordered":   allOf(metaInOrder, dataVersions(vfs.SectorSize, false)),
	"ext4-writeback": allOf(metaInOrder, dataVersions(vfs.SectorSize, true)),
	"ext4-journal":   inOrder,
	"xfs":            allOf(metaInOrder, dataVersions(vfs.SectorSize, false)),
	"btrfs":          dataVersions(4096, false),
}

func TestModelOracles(t *testing.T) {
	for _, m := range Models() {
		oracle := oracles[m.Name]
		require.NotNil(t, oracle, "no oracle for %s", m.Name)
		t.Run(m.Name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				ops := drawWorkload(t)
				states, b := exploreStates(t, m, ops)
				for _, s := range states {
					if m.splitRename && strings.Contains(s.name, "-s") {
						// a split rename is the walker's (a name it hides),
						// not in State.FS, which the oracle reads
						continue
					}
					if err := oracle(s, b); err != nil {
						t.Fatalf("%s: state %s after %s\n  %v\n  state: %s\n  before the crash: %s", m.Name, s.name, b.history(s.calls), err, s.t, b.trees[s.calls])
					}
				}
			})
		})
	}
}

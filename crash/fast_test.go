package crash

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// survivals turns unit choices into vfs's survival list.
func (e *Explorer) survivals(x *point, cur []choice) []vfs.Survival {
	s := make([]vfs.Survival, len(x.pend))
	nsec := e.fs.BlockSize() / vfs.SectorSize
	half := uint64(1)<<(nsec/2) - 1
	for k, u := range x.units {
		for j, it := range u.items {
			s[it] = survival(cur[k], j, len(u.items), half)
		}
	}
	return s
}

// dense is the choice vector of the deviations devs.
func (x *point) dense(devs []dev) []choice {
	cur := make([]choice, len(x.units))
	for _, d := range devs {
		cur[d.k] = d.c
	}
	return cur
}

// closeDense is the closure over a whole choice vector, the reference the
// closer must agree with: it makes cur a choice the model allows, changing
// what the deviations imply (a journal cut drops every later journalled unit;
// data that did not reach disk keeps the metadata that would expose it from
// committing), visiting every unit for every rule.
func (e *Explorer) closeDense(x *point, m *Model, cur []choice, forced []bool) {
	us := x.units
	for k := range cur {
		if forced[k] {
			cur[k] = keep
		}
	}
	whole := func(k int) bool { return cur[k] == keep }
	// dataKept: the data of ino written by calls up to op survives whole
	dataKept := func(ino uint64, op int) bool {
		for _, k := range x.unitsOf[ino] {
			if us[k].data && us[k].op <= op && !whole(k) {
				return false
			}
		}
		return true
	}
	var ow []bool
	if m.orderedOverwrite {
		ow = overwrites(us)
	}
	for range len(us) + 2 {
		changed := false
		set := func(k int, c choice) {
			if cur[k] != c && !forced[k] {
				cur[k] = c
				changed = true
			}
		}
		if m.journal {
			cut := -2 // the first call whose journalled change is lost
			for k := range us {
				if us[k].journalled(m) && cur[k] != keep && (cut == -2 || us[k].op < cut) {
					cut = us[k].op
				}
			}
			if cut != -2 {
				for k := range us {
					if (m.dataJournal || !us[k].data) && (us[k].op >= cut && cur[k] == keep || m.dataJournal && us[k].op > cut && cur[k] != drop) {
						set(k, drop)
					}
				}
			}
		}
		if ow != nil {
			cut := -2 // the first call whose overwrite is not whole
			for k := range us {
				if ow[k] && cur[k] != keep && (cut == -2 || us[k].op < cut) {
					cut = us[k].op
				}
			}
			if cut != -2 {
				for k := range us {
					if us[k].op > cut && cur[k] == keep {
						set(k, drop)
					}
				}
			}
		}
		meta := func(k int) bool {
			return us[k].kind == vfs.PendingAlloc || us[k].kind == vfs.PendingSize && !us[k].lazy
		}
		if m.orderedData {
			// a call's allocation change commits only with the data it wrote
			for k := range us {
				if !us[k].data || cur[k] == keep {
					continue
				}
				for j := range us {
					if us[j].kind == vfs.PendingAlloc && us[j].op == us[k].op && us[j].ino == us[k].ino && cur[j] == keep {
						set(j, drop)
					}
				}
			}
		}
		if m.cowData {
			// a file's allocation and size changes persist in call order
			for k := range us {
				if !meta(k) || cur[k] == keep {
					continue
				}
				for j := range us {
					if j != k && meta(j) && us[j].ino == us[k].ino && us[j].op >= us[k].op && cur[j] == keep {
						set(j, drop)
					}
				}
			}
		}
		if m.journal || m.cowData {
			// data in a block freed by a lost allocation change is lost
			for a := range us {
				if us[a].kind != vfs.PendingAlloc || cur[a] == keep {
					continue
				}
				for d := range us {
					if !us[d].data || us[d].ino != us[a].ino || us[d].op <= us[a].op || cur[d] == drop {
						continue
					}
					in := false
					for _, i := range us[a].items {
						for _, j := range us[d].items {
							r, b := x.pend[i], x.pend[j]
							in = in || b.Off < r.Off+r.Len && r.Off < b.Off+b.Len
						}
					}
					if in {
						set(d, drop)
					}
				}
			}
		}
		if m.orderedData {
			for k := range us {
				if us[k].lazy && cur[k] == keep && !dataKept(us[k].ino, us[k].op) {
					set(k, drop)
				}
			}
		}
		if m.autoDaAlloc {
			for k, r := range x.replaceOf {
				if cur[k] != keep {
					continue
				}
				if m.orderedData && !dataKept(r.ino, r.op) {
					set(k, drop)
					continue
				}
				for j := range us {
					if us[j].lazy && us[j].ino == r.ino && us[j].op <= r.op {
						set(j, keep)
					}
				}
			}
			for _, tc := range e.truncCloses {
				later := false
				for k := range us {
					if us[k].journalled(m) && us[k].op > tc.op && cur[k] == keep {
						later = true
					}
				}
				if !later {
					continue
				}
				if m.orderedData && !dataKept(tc.ino, tc.op) {
					for k := range us {
						if us[k].journalled(m) && us[k].op > tc.op {
							set(k, drop)
						}
					}
					continue
				}
				for j := range us {
					if us[j].lazy && us[j].ino == tc.ino && us[j].op <= tc.op {
						set(j, keep)
					}
				}
			}
		}
		if !changed {
			return
		}
	}
}

// denseCheck compares the closer's deviations with closeDense's closure of
// each state enumerated (on the models' goroutines): it counts the states
// and keeps the first difference.
type denseCheck struct {
	mu     sync.Mutex
	states int
	diff   string
}

func (c *denseCheck) hook(e *Explorer) func(x *point, m *Model, forced []bool, devs, closed []dev) {
	return func(x *point, m *Model, forced []bool, devs, closed []dev) {
		cur := x.dense(devs)
		e.closeDense(x, m, cur, forced)
		want := make([]dev, 0)
		for k, ch := range cur {
			if ch != keep {
				want = append(want, dev{int32(k), ch})
			}
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		c.states++
		if c.diff == "" && !slices.Equal(want, append(make([]dev, 0), closed...)) {
			c.diff = fmt.Sprintf("model %s, state %v: closed to %v, want %v", m.Name, devs, closed, want)
		}
	}
}

// referenceCheck builds every state of a point as a whole file system with
// vfs.FS.CrashFrom (a split rename by unlinking its destination), walks it in
// one pass with no cache and evaluates every promise, and requires the
// outcome the stepping walkers found.
func referenceCheck(t require.TestingT, e *Explorer, states *int) func(x *point, todo []*seenState, out []outcome) {
	return func(x *point, todo []*seenState, out []outcome) {
		for i, st := range todo {
			cur := x.dense(st.devs)
			fs, err := e.fs.CrashFrom(x.pend, x.seq, e.survivals(x, cur))
			require.NoError(t, err)
			for _, d := range st.devs {
				if d.c == splitRn {
					_ = fs.Root().Unlink(x.replaceOf[int(d.k)].dst)
				}
			}
			w := newWalker(e, x, nil)
			w.v, w.cur = fsView{fs}, cur
			w.init()
			want := append(w.durability(), w.atomicReplace()...)
			require.Equal(t, w.h, out[i].h, "state %s: content key", st.name)
			require.Equal(t, want, out[i].findings, "state %s", st.name)
			*states++
		}
	}
}

// randomWorkload draws a small program: files and a directory made, written,
// synced or not, renamed over each other, unlinked, with announcements; the
// directory renamed and removed.
func randomWorkload(t *rapid.T) func(env *Env) error {
	paths := []string{"/a", "/b", "/d/x", "/d/y", "/e/z", "/g/w"}
	type step struct {
		kind      int
		p, q      string
		off, size int
		b         byte
	}
	n := rapid.IntRange(1, 14).Draw(t, "steps")
	var steps []step
	for range n {
		steps = append(steps, step{
			kind: rapid.IntRange(0, 12).Draw(t, "kind"),
			p:    rapid.SampledFrom(paths).Draw(t, "p"),
			q:    rapid.SampledFrom(paths).Draw(t, "q"),
			off:  rapid.IntRange(0, 3).Draw(t, "off") * 2048,
			size: rapid.SampledFrom([]int{1, 512, 4096, 6000}).Draw(t, "size"),
			b:    rapid.Byte().Draw(t, "b"),
		})
	}
	return func(env *Env) error {
		p := env.Proc
		for _, s := range steps {
			switch s.kind {
			case 0, 1, 2:
				flags := unix.O_WRONLY | unix.O_CREAT
				if s.kind == 2 {
					flags |= unix.O_TRUNC
				}
				fd, err := p.Open(s.p, flags, 0o644)
				if err != nil {
					continue
				}
				_, _ = p.Pwrite(fd, bytes.Repeat([]byte{s.b | 1}, s.size), int64(s.off))
				if s.b%3 == 0 {
					_ = p.Fsync(fd)
				} else if s.b%3 == 1 {
					_ = p.Fdatasync(fd)
				}
				_ = p.Close(fd)
			case 3:
				_ = p.Rename(s.p, s.q)
			case 4:
				_ = p.Unlink(s.p)
			case 5:
				_ = p.Mkdir("/e", 0o755)
			case 6:
				if fd, err := p.Open(s.p[:strings.LastIndex(s.p, "/")+1], unix.O_RDONLY|unix.O_DIRECTORY, 0); err == nil {
					_ = p.Fsync(fd)
					_ = p.Close(fd)
				}
			case 7:
				_, _ = fmt.Fprintf(env.Stdout, "done %s\n", s.p)
			case 8:
				_ = p.Link(s.p, s.q)
			case 9:
				if fd, err := p.Open(s.p, unix.O_WRONLY|unix.O_DSYNC, 0); err == nil {
					_, _ = p.Pwrite(fd, []byte{s.b, s.b}, int64(s.off))
					_ = p.Close(fd)
				}
			case 10:
				p.Sync()
			case 11: // a directory renamed: what survived in it comes with it
				if s.b%2 == 0 {
					_ = p.Rename("/e", "/g")
				} else {
					_ = p.Rename("/g", "/e")
				}
			case 12:
				_ = p.Rmdir(s.p[:strings.LastIndex(s.p, "/")])
			}
		}
		return nil
	}
}

func setupRandom(fs *vfs.FS) error {
	if err := fs.Mkdir("/d", 0o755); err != nil {
		return err
	}
	return writeFile(fs, "/a", bytes.Repeat([]byte{'o'}, 5000))
}

func exploreWith(t require.TestingT, opts Options, workload func(env *Env) error, ref func(e *Explorer) func(x *point, todo []*seenState, out []outcome)) *Report {
	e, env, err := newFuncExplorer(opts, setupRandom)
	require.NoError(t, err)
	var dc denseCheck
	if ref != nil {
		e.reference = ref(e)
		e.closeHook = dc.hook(e)
	}
	require.NoError(t, workload(env))
	rep := e.Finish()
	if ref != nil {
		require.Empty(t, dc.diff, "the closer closes as closeDense")
		require.Equal(t, rep.States, dc.states, "every state enumerated was compared")
	}
	rep.Seconds, rep.StatesPerSecond = 0, 0
	return rep
}

// The states the stepping explorer builds, their content keys and what the
// built-in checks find in them are those of each state built whole from the
// file system (vfs.FS.CrashFrom) and walked in one pass, under every model and
// on random small programs; and the report is the same whatever the number of
// goroutines.
func TestFastPathMatchesWholeStates(t *testing.T) {
	total := 0
	defer func(n int) { minPerWorker = n }(minPerWorker)
	minPerWorker = 1
	rapid.Check(t, func(t *rapid.T) {
		workload := randomWorkload(t)
		depth := rapid.IntRange(1, 2).Draw(t, "depth")
		one := exploreWith(t, Options{Depth: depth, Workers: 1}, workload, func(e *Explorer) func(*point, []*seenState, []outcome) {
			return referenceCheck(t, e, &total)
		})
		many := exploreWith(t, Options{Depth: depth, Workers: 3}, workload, nil)
		var a, b bytes.Buffer
		require.NoError(t, one.WriteJSON(&a))
		require.NoError(t, many.WriteJSON(&b))
		require.Equal(t, a.String(), b.String())
	})
	enough := 1000 // rapid's default 100 programs
	if testing.Short() {
		enough = 100 // -short: rapid runs 20 of them
	}
	require.Greater(t, total, enough, "states compared")
}

// A file renamed away, its old name made again, then linked from its new
// name: in a state where the rename is lost the link makes the inode anew,
// empty, and its content is not what its choices alone would say.
func TestFastPathLinkAfterLostRename(t *testing.T) {
	n := 0
	rep := exploreWith(t, Options{}, func(env *Env) error {
		p := env.Proc
		if err := p.Rename("/a", "/b"); err != nil {
			return err
		}
		fd, err := p.Open("/a", unix.O_WRONLY|unix.O_CREAT, 0o644)
		if err != nil {
			return err
		}
		if _, err := p.Write(fd, []byte("x")); err != nil {
			return err
		}
		if err := p.Fsync(fd); err != nil {
			return err
		}
		if err := p.Close(fd); err != nil {
			return err
		}
		return p.Link("/b", "/d/x")
	}, func(e *Explorer) func(*point, []*seenState, []outcome) { return referenceCheck(t, e, &n) })
	require.Positive(t, rep.DistinctStates)
	require.Greater(t, n, 10)
}

// Two renames over one destination, both in flight: at depth 2 a state
// splits one of them and keeps the other, and the walker stepping from the
// state that split the other must still see the destination removed.
func TestFastPathTwoSplitRenames(t *testing.T) {
	n := 0
	rep := exploreWith(t, Options{Depth: 2, Workers: 1}, func(env *Env) error {
		p := env.Proc
		put := func(path string) error {
			fd, err := p.Open(path, unix.O_WRONLY|unix.O_CREAT, 0o644)
			if err != nil {
				return err
			}
			if _, err := p.Write(fd, []byte{1}); err != nil {
				return err
			}
			if err := p.Fsync(fd); err != nil {
				return err
			}
			return p.Close(fd)
		}
		if err := put("/d/x"); err != nil {
			return err
		}
		if err := p.Rename("/a", "/d/x"); err != nil {
			return err
		}
		if err := put("/a"); err != nil {
			return err
		}
		return p.Rename("/a", "/d/x")
	}, func(e *Explorer) func(*point, []*seenState, []outcome) { return referenceCheck(t, e, &n) })
	require.Positive(t, rep.DistinctStates)
	require.Greater(t, n, 10)
}

// A directory made, then renamed: stepping from the state that keeps the
// rename to one that loses it names the directory by its first name again
// (its new name removed before its old one is added), as a whole walk does.
func TestFastPathDirectoryRenamedBack(t *testing.T) {
	n := 0
	rep := exploreWith(t, Options{Depth: 1, Workers: 1}, func(env *Env) error {
		p := env.Proc
		if err := p.Mkdir("/e", 0o755); err != nil {
			return err
		}
		return p.Rename("/e", "/g")
	}, func(e *Explorer) func(*point, []*seenState, []outcome) { return referenceCheck(t, e, &n) })
	require.Positive(t, rep.DistinctStates)
	require.Greater(t, n, 5)
}

package vfs_test

import (
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// fullTree is every name under the root of fs with its type, mode, owner,
// times, size, link count and content, as found before any of it was read
// (reading moves atime: a file with two names is described once).
func fullTree(t require.TestingT, fs *vfs.FS) map[string]string {
	out := map[string]string{}
	seen := map[uint64]string{}
	walkTree(t, fs, func(cp string, c *vfs.Inode) {
		if d, ok := seen[c.Ino()]; ok {
			out[cp] = d
			return
		}
		var st vfs.Stat
		c.Stat(&st)
		content := ""
		switch {
		case c.IsSymlink():
			content = c.Target()
		case c.IsRegular():
			b := make([]byte, st.Size)
			_, err := c.ReadAt(b, 0)
			require.NoError(t, err)
			content = string(b)
		}
		out[cp] = describe(st, c.Nlink(), content)
		seen[c.Ino()] = out[cp]
	})
	return out
}

func describe(st vfs.Stat, nlink uint32, content string) string {
	return fmt.Sprintf("ino=%d mode=%o uid=%d gid=%d a=%d m=%d c=%d size=%d nlink=%d %q",
		st.Ino, st.Mode, st.Uid, st.Gid, st.Atime, st.Mtime, st.Ctime, st.Size, nlink, content)
}

// stateTree is fullTree read through a CrashState's lookups (link counts are
// not among them). It reports false when a directory has two names in the
// state, which FS resolves by keeping the first (see CrashState.FS).
func stateTree(t require.TestingT, st *vfs.CrashState) (map[string]string, bool) {
	out := map[string]string{}
	dirs := map[uint64]bool{}
	single := true
	var walk func(p string)
	walk = func(p string) {
		ents, err := st.ReadDir(p)
		require.NoError(t, err)
		for _, e := range ents {
			cp := path.Join(p, e.Name)
			s, err := st.Stat(cp)
			require.NoError(t, err)
			require.Equal(t, e.Ino, s.Ino)
			content := ""
			switch s.Mode & vfs.S_IFMT {
			case vfs.S_IFLNK:
				content, err = st.Readlink(cp)
				require.NoError(t, err)
			case vfs.S_IFREG:
				b, err := st.ReadFile(cp)
				require.NoError(t, err)
				content = string(b)
			}
			out[cp] = describe(s, 0, content)
			if s.Mode&vfs.S_IFMT == vfs.S_IFDIR {
				if dirs[s.Ino] {
					single = false
					continue
				}
				dirs[s.Ino] = true
				walk(cp)
			}
		}
	}
	walk("/")
	return out, single
}

// withoutNlink drops the link counts of fullTree's descriptions.
func withoutNlink(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		a, b, _ := strings.Cut(v, " nlink=")
		_, rest, _ := strings.Cut(b, " ")
		out[k] = a + " nlink=0 " + rest
	}
	return out
}

// exported is the exported fields of ps.
func exported(ps []vfs.Pending) []string {
	out := make([]string, len(ps))
	for k, p := range ps {
		out[k] = fmt.Sprint(p.Seq, p.Kind, p.Ino, p.Path, p.Off, p.Len, p.Size, p.Op, p.To)
	}
	return out
}

// randomProgram runs a random sequence of namespace, data and sync calls on
// fs; failing calls are part of the program.
func randomProgram(t *rapid.T, fs *vfs.FS, label string) {
	for _, op := range drawProgram(t, label) {
		op(fs)
	}
}

// drawProgram draws the program randomProgram runs, to run it on several
// file systems.
func drawProgram(t *rapid.T, label string) []func(fs *vfs.FS) {
	paths := rapid.SampledFrom([]string{"a", "b", "d", "d/a", "e", "e/a"})
	file := func(fs *vfs.FS, p string) *vfs.Inode {
		ino, err := fs.Root().Resolve(p, false)
		if err != nil || !ino.IsRegular() {
			return nil
		}
		return ino
	}
	var prog []func(fs *vfs.FS)
	n := rapid.IntRange(1, 40).Draw(t, label+"len")
	for range n {
		p, q := paths.Draw(t, "path"), paths.Draw(t, "path2")
		var op func(fs *vfs.FS)
		switch rapid.IntRange(0, 16).Draw(t, label+"op") {
		case 0, 1:
			op = func(fs *vfs.FS) { _, _, _ = fs.Root().Open(p, unix.O_CREAT|unix.O_RDWR, 0o644) }
		case 2, 3:
			off := rapid.Int64Range(0, 3*4096).Draw(t, "off")
			b := []byte(strings.Repeat(rapid.StringMatching(`[a-z]`).Draw(t, "byte"), rapid.IntRange(1, 6000).Draw(t, "n")))
			op = func(fs *vfs.FS) {
				if f := file(fs, p); f != nil {
					_, _ = f.WriteAt(b, off)
				}
			}
		case 4:
			op = func(fs *vfs.FS) { _ = fs.Root().Mkdir(p, 0o755) }
		case 5:
			op = func(fs *vfs.FS) { _ = fs.Root().Unlink(p) }
		case 6:
			op = func(fs *vfs.FS) { _ = fs.Root().Rmdir(p) }
		case 7:
			flags := rapid.SampledFrom([]int{0, 0, vfs.RenameExchange}).Draw(t, "flags")
			op = func(fs *vfs.FS) { _ = fs.Root().Rename(p, fs.Root(), q, flags) }
		case 8:
			op = func(fs *vfs.FS) { _ = fs.Root().Link(p, fs.Root(), q, false) }
		case 9:
			op = func(fs *vfs.FS) { _ = fs.Root().Symlink("target", p) }
		case 10, 11:
			data := rapid.Bool().Draw(t, "datasync")
			op = func(fs *vfs.FS) {
				if ino, err := fs.Root().Resolve(p, false); err == nil {
					if data {
						_ = ino.Fdatasync(nil)
					} else {
						_ = ino.Fsync(nil)
					}
				}
			}
		case 12:
			size := rapid.Int64Range(0, 3*4096).Draw(t, "size")
			op = func(fs *vfs.FS) {
				if f := file(fs, p); f != nil {
					_ = f.Truncate(size)
				}
			}
		case 13:
			mode := uint32(rapid.IntRange(0, 0o777).Draw(t, "mode"))
			op = func(fs *vfs.FS) {
				if f := file(fs, p); f != nil {
					_ = f.Chmod(mode)
				}
			}
		case 14:
			block := rapid.Int64Range(0, 2).Draw(t, "block")
			op = func(fs *vfs.FS) {
				if f := file(fs, p); f != nil {
					_, _, _ = f.Write(make([]byte, 4096), 4096*block, vfs.WriteDirect, nil)
				}
			}
		case 15:
			off, n := rapid.Int64Range(0, 8000).Draw(t, "off"), rapid.Int64Range(1, 6000).Draw(t, "n")
			op = func(fs *vfs.FS) {
				if f := file(fs, p); f != nil {
					_ = f.Fallocate(vfs.FallocPunchHole|vfs.FallocKeepSize, off, n)
				}
			}
		case 16:
			op = func(fs *vfs.FS) { _ = fs.Sync() }
		}
		prog = append(prog, op)
	}
	return prog
}

// TestCrashStateRapid: a CrashState reached by setting survival choices one
// at a time, in any order and with changes of mind, is the state CrashWith
// builds for the same choices, whole tree and bytes; its lookups read the
// same tree; its hash depends on the content only. The snapshot stays valid
// while the file system goes on.
func TestCrashStateRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		fs := vfs.New(vfs.WithWriteCache(rapid.Bool().Draw(t, "writeCache")))
		randomProgram(t, fs, "")
		snap := fs.Snapshot()
		ps := snap.Pending()
		require.Equal(t, exported(ps), exported(fs.Pending()), "Pending lists the same changes")
		keep := make([]vfs.Survival, len(ps))
		for k, p := range ps {
			keep[k].Keep = rapid.Bool().Draw(t, "keep")
			if keep[k].Keep && p.Tearable() && rapid.Bool().Draw(t, "tear") {
				keep[k].Sectors = rapid.Uint64Range(1, 255).Draw(t, "sectors")
			}
		}
		want, err := fs.CrashWith(keep)
		require.NoError(t, err)
		wantTree := fullTree(t, want)
		strict := fullTree(t, fs.Crash())

		// The file system goes on; the snapshot does not see it.
		randomProgram(t, fs, "after")
		crossSnapshot(t, snap, fs.Snapshot())

		st := snap.State()
		require.Equal(t, strict, fullTree(t, st.FS()))
		h0 := st.Hash()
		require.Empty(t, st.Changed())
		// Set the choices in a random order, with detours.
		order := rapid.Permutation(slices.Collect(func(yield func(int) bool) {
			for k := range ps {
				if !yield(k) {
					return
				}
			}
		})).Draw(t, "order")
		for _, k := range order {
			if rapid.Bool().Draw(t, "detour") {
				st.Set(k, vfs.Survival{Keep: !keep[k].Keep})
			}
			st.Set(k, keep[k])
		}
		got := st.FS()
		require.Equal(t, wantTree, fullTree(t, got))
		// Every durable record, named or not, is the one-pass replay's.
		require.Equal(t, vfs.DurableTable(vfs.Replay(snap, keep)), vfs.DurableTable(st))
		if tree, single := stateTree(t, st); single {
			require.Equal(t, withoutNlink(wantTree), tree)
		}

		// Another route to the same choices: same hash. A clone moves on alone.
		st2 := snap.State()
		for k := len(ps) - 1; k >= 0; k-- {
			st2.Set(k, keep[k])
		}
		require.Equal(t, st.Hash(), st2.Hash())
		// All at once, from a state with other choices: the same state.
		st3 := other(t, snap, "many")
		vs := make([]vfs.Survival, len(order))
		for i, k := range order {
			vs[i] = keep[k]
		}
		st3.SetMany(order, vs)
		require.Equal(t, vfs.DurableTable(st), vfs.DurableTable(st3))
		require.Equal(t, st.Hash(), st3.Hash())
		c := st2.Clone()
		for k := range ps {
			c.Set(k, vfs.Survival{})
		}
		require.Equal(t, h0, c.Hash())
		require.Equal(t, st.Hash(), st2.Hash())
		require.Equal(t, wantTree, fullTree(t, st2.FS()))
		if !maps.Equal(wantTree, strict) {
			require.NotEqual(t, h0, st.Hash(), "a state whose content differs from the strict one")
		}
		// Equal hashes if and only if equal durable states: a state of
		// other choices, and the strict one.
		other := snap.State()
		for k := range ps {
			if rapid.Bool().Draw(t, "other") {
				other.Set(k, vfs.Survival{Keep: true})
			}
		}
		for _, s := range []*vfs.CrashState{other, snap.State()} {
			require.Equal(t, maps.Equal(vfs.DurableTable(st), vfs.DurableTable(s)), s.Hash() == st.Hash())
			require.Equal(t, vfs.HashFromScratch(s), s.Hash(), "the hash kept up to date is the one from scratch")
		}
		require.Equal(t, vfs.HashFromScratch(st), st.Hash())
	})
}

// other is a state of snap with random choices.
func other(t *rapid.T, snap *vfs.CrashSnapshot, label string) *vfs.CrashState {
	st := snap.State()
	for k := range snap.Pending() {
		st.Set(k, vfs.Survival{Keep: rapid.Bool().Draw(t, label)})
	}
	return st
}

// crossSnapshot checks that the hashes of states of two snapshots of one
// durable table compare: the strict states, and states keeping the same
// namespace operations, hash alike; equal hashes if and only if equal
// durable states.
func crossSnapshot(t *rapid.T, a, b *vfs.CrashSnapshot) {
	if vfs.Version(a) != vfs.Version(b) {
		return
	}
	sa, sb := a.State(), b.State()
	require.Equal(t, sa.Hash(), sb.Hash(), "strict states of one durable table")
	inB := map[uint64]int{}
	for k, p := range b.Pending() {
		if p.Kind == vfs.PendingMeta {
			inB[p.Seq] = k
		}
	}
	for k, p := range a.Pending() {
		if j, ok := inB[p.Seq]; ok && rapid.Bool().Draw(t, "cross") {
			sa.Set(k, vfs.Survival{Keep: true})
			sb.Set(j, vfs.Survival{Keep: true})
		}
	}
	ta, tb := vfs.DurableTable(sa), vfs.DurableTable(sb)
	require.Equal(t, ta, tb, "the same operations kept on the same durable table")
	require.Equal(t, sa.Hash(), sb.Hash())
	// Other choices on b: equal hashes if and only if equal states.
	for k := range b.Pending() {
		sb.Set(k, vfs.Survival{Keep: rapid.Bool().Draw(t, "b")})
	}
	require.Equal(t, maps.Equal(ta, vfs.DurableTable(sb)), sa.Hash() == sb.Hash())
	require.Equal(t, vfs.HashFromScratch(sb), sb.Hash())
}

// TestCrashStateConcurrent: states of one snapshot are explored by several
// goroutines while the file system goes on (run with -race).
func TestCrashStateConcurrent(t *testing.T) {
	fs := crashWorkload(t)
	snap := fs.Snapshot()
	ps := snap.Pending()
	var wg sync.WaitGroup
	hashes := make([][]uint64, 4)
	for g := range hashes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := snap.State()
			for k := range ps {
				st.Apply(ps[k])
				hashes[g] = append(hashes[g], st.Hash())
				if _, err := st.ReadFile(ps[k].Path); err != nil && ps[k].Kind == vfs.PendingWrite {
					t.Error(err)
				}
			}
			_ = st.Clone().FS()
			for k := 0; k < 400; k += 2 {
				b, err := st.ReadFile(fmt.Sprintf("/f%04d", k))
				if err != nil || b[0] != byte(k) || b[1] != 0 {
					t.Errorf("f%04d: %v %q", k, err, b[:2])
				}
			}
		}()
	}
	// The file system goes on: new files, and synced overwrites of the
	// durable data the states read.
	for k := range 200 {
		f := create(t, fs.Root(), fmt.Sprintf("more%d", k))
		write(t, f, "x", 0)
		require.NoError(t, f.Fsync(nil))
		g := mustResolve(t, fs.Root(), fmt.Sprintf("f%04d", 2*k))
		write(t, g, "OVERWRITTEN", 0)
		require.NoError(t, g.Fsync(nil))
	}
	wg.Wait()
	for g := range hashes {
		require.Equal(t, hashes[0], hashes[g])
	}
	all := snap.State()
	for _, p := range ps {
		all.Apply(p)
	}
	got, err := all.ReadFile("/f0999")
	require.NoError(t, err)
	require.Equal(t, byte(999%256), got[0])
	require.Len(t, got, 4096)
	require.Contains(t, all.String(), "create /f0999")
	// Changed: the root (times, entries), the 500 files named since its
	// fsync, the 250 before it whose data was not synced.
	ch := all.Changed()
	require.Equal(t, fs.Root().Ino(), ch[0])
	require.True(t, slices.IsSorted(ch))
	require.Len(t, ch, 751)
	none := snap.State()
	require.Equal(t, "kept: ", none.String())
	_, err = none.ReadFile("/f0999")
	require.Equal(t, unix.ENOENT, err, "its name was not synced")
	require.Panics(t, func() { none.Apply(fs.Pending()[0]) }, "a Pending of another snapshot")
}

// TestCrashStateLostDirectory: entries that survive without the mkdir of
// their directory. No lookup sees them (the directory is not there); a
// surviving rename of the directory brings it back with them. For every
// subset of the changes, the state stepped to it holds what the one-pass
// replay holds, entries of the missing directory included, and its hash is
// the one from scratch.
func TestCrashStateLostDirectory(t *testing.T) {
	for _, renamed := range []bool{false, true} {
		fs := vfs.New()
		r := fs.Root()
		require.NoError(t, r.Mkdir("d", 0o755))
		a := create(t, r, "d/a")
		write(t, a, "aaaa", 0)
		create(t, r, "d/b")
		require.NoError(t, r.Unlink("d/b"))
		dir := "/d"
		if renamed {
			require.NoError(t, r.Rename("d", r, "e", 0))
			dir = "/e"
		}
		snap := fs.Snapshot()
		ps := snap.Pending()
		find := func(op, path string) int {
			k := slices.IndexFunc(ps, func(p vfs.Pending) bool { return p.Kind == vfs.PendingMeta && p.Op == op && p.Path == path })
			require.NotEqual(t, -1, k, "%s %s pending: %v", op, path, ps)
			return k
		}
		mkdir, createA, rename := find("create", "/d"), find("create", dir+"/a"), -1
		if renamed {
			rename = find("rename", "/d")
		}
		st := snap.State()
		for mask := range 1 << len(ps) {
			keep := make([]vfs.Survival, len(ps))
			for k := range ps {
				keep[k].Keep = mask&(1<<k) != 0
				st.Set(k, keep[k])
			}
			require.Equal(t, vfs.DurableTable(vfs.Replay(snap, keep)), vfs.DurableTable(st), "keep %b", mask)
			require.Equal(t, vfs.HashFromScratch(st), st.Hash(), "keep %b", mask)
			_, errD := st.LookupIno("/d")
			_, errE := st.LookupIno("/e")
			_, errA := st.ReadFile("/e/a")
			_, errDA := st.ReadFile("/d/a")
			switch {
			case rename >= 0 && keep[rename].Keep:
				require.NoError(t, errE, "keep %b: the rename makes the directory", mask)
				require.Equal(t, keep[createA].Keep, errA == nil, "keep %b: it holds what survived in it", mask)
				require.Equal(t, unix.ENOENT, errD, "keep %b", mask)
			case keep[mkdir].Keep:
				require.NoError(t, errD, "keep %b", mask)
				require.Equal(t, keep[createA].Keep, errDA == nil, "keep %b", mask)
				require.Equal(t, unix.ENOENT, errE, "keep %b", mask)
			default:
				require.Equal(t, unix.ENOENT, errD, "keep %b: no directory", mask)
				require.Equal(t, unix.ENOENT, errE, "keep %b: no directory", mask)
			}
		}
	}
}

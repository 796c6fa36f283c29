package vfs_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

func create(t testing.TB, dir *vfs.Inode, p string) *vfs.Inode {
	t.Helper()
	ino, _, err := dir.Open(p, unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	return ino
}

func write(t testing.TB, ino *vfs.Inode, s string, off int64) {
	t.Helper()
	n, err := ino.WriteAt([]byte(s), off)
	require.NoError(t, err)
	require.Equal(t, len(s), n)
}

func keepAll(n int) []vfs.Survival {
	k := make([]vfs.Survival, n)
	for i := range k {
		k[i].Keep = true
	}
	return k
}

func TestCrashStrict(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, "synced", 0)
	require.NoError(t, f.Fsync(nil))
	require.Empty(t, snapshot(t, fs.Crash()), "the name is not durable before the directory is synced")
	require.NoError(t, r.Fsync(nil))
	require.Equal(t, map[string]string{"/f": "file:synced"}, snapshot(t, fs.Crash()))

	write(t, f, "SYNCED and more", 0)
	require.NoError(t, r.Mkdir("d", 0o755))
	g := create(t, r, "d/g")
	write(t, g, "g", 0)
	require.NoError(t, g.Fdatasync(nil))
	require.Equal(t, map[string]string{"/f": "file:synced"}, snapshot(t, fs.Crash()))
	// Journal order: syncing d commits the mkdir of d (made before d/g) too.
	require.NoError(t, mustResolve(t, r, "d").Fsync(nil))
	require.Equal(t, map[string]string{"/f": "file:synced", "/d": "dir", "/d/g": "file:g"}, snapshot(t, fs.Crash()))

	// The running file system is left alone, and a crash state is usable.
	require.Equal(t, "file:SYNCED and more", snapshot(t, fs)["/f"])
	c := fs.Crash()
	cf := mustResolve(t, c.Root(), "f")
	write(t, cf, "after the crash", 0)
	require.NoError(t, c.Sync())
	require.Equal(t, "file:after the crash", snapshot(t, c.Crash())["/f"])
	require.Equal(t, "file:synced", snapshot(t, fs.Crash())["/f"])

	require.NoError(t, fs.Sync())
	require.Equal(t, snapshot(t, fs), snapshot(t, fs.Crash()))
}

func mustResolve(t testing.TB, dir *vfs.Inode, p string) *vfs.Inode {
	t.Helper()
	ino, err := dir.Resolve(p, true)
	require.NoError(t, err)
	return ino
}

func TestCrashUnlinkedAndRenamed(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, "v1", 0)
	require.NoError(t, fs.Sync())
	// Unlink of an open file: it stays readable; the removal is not durable yet,
	// so data synced through the open inode survives under the old name.
	require.NoError(t, r.Unlink("f"))
	write(t, f, "v2", 0)
	require.NoError(t, f.Fsync(nil))
	require.Equal(t, "v2", string(readAll(t, f)))
	require.Equal(t, map[string]string{"/f": "file:v2"}, snapshot(t, fs.Crash()))
	require.NoError(t, r.Fsync(nil))
	require.Empty(t, snapshot(t, fs.Crash()))

	// The classic atomic replace: write tmp, fsync tmp, rename over, fsync dir.
	g := create(t, r, "g")
	write(t, g, "old", 0)
	require.NoError(t, fs.Sync())
	tmp := create(t, r, "g.tmp")
	write(t, tmp, "new", 0)
	require.NoError(t, r.Rename("g.tmp", r, "g", 0))
	require.Equal(t, map[string]string{"/g": "file:old"}, snapshot(t, fs.Crash()))
	require.NoError(t, r.Fsync(nil))
	require.Equal(t, map[string]string{"/g": "file:"}, snapshot(t, fs.Crash()), "renamed before its data was synced")
	require.NoError(t, tmp.Fsync(nil))
	require.Equal(t, map[string]string{"/g": "file:new"}, snapshot(t, fs.Crash()))
}

func TestCrashRenameDirectory(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	require.NoError(t, r.Mkdir("a", 0o755))
	require.NoError(t, r.Mkdir("b", 0o755))
	write(t, create(t, r, "a/f"), "x", 0)
	require.NoError(t, fs.Sync())
	require.NoError(t, r.Rename("a", r, "b/moved", 0))
	require.Equal(t, map[string]string{"/a": "dir", "/a/f": "file:x", "/b": "dir"}, snapshot(t, fs.Crash()))
	// Syncing either directory of a rename makes all of it durable.
	require.NoError(t, mustResolve(t, r, "b").Fsync(nil))
	require.Equal(t, map[string]string{"/b": "dir", "/b/moved": "dir", "/b/moved/f": "file:x"}, snapshot(t, fs.Crash()))
}

func TestPending(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, strings.Repeat("a", 5000), 0)
	require.NoError(t, f.Chmod(0o600))
	var kinds []string
	for _, p := range fs.Pending() {
		kinds = append(kinds, p.Kind.String())
	}
	slices.Sort(kinds)
	require.Equal(t, []string{"attr", "attr", "meta", "size", "write", "write"}, kinds)
	ps := fs.Pending()
	require.True(t, slices.IsSortedFunc(ps, func(a, b vfs.Pending) int { return int(a.Seq) - int(b.Seq) }))
	m := slices.IndexFunc(ps, func(p vfs.Pending) bool { return p.Kind == vfs.PendingMeta })
	require.Equal(t, "create", ps[m].Op)
	require.Equal(t, "/f", ps[m].Path)
	require.Equal(t, f.Ino(), ps[m].Ino)
	for _, p := range ps {
		require.NotEmpty(t, p.String())
		if p.Kind == vfs.PendingWrite {
			require.True(t, p.Tearable())
			require.Equal(t, int64(4096), p.Len)
			require.Equal(t, "/f", p.Path)
		}
	}
	require.NoError(t, f.Fdatasync(nil))
	kinds = nil
	for _, p := range fs.Pending() {
		kinds = append(kinds, p.Kind.String())
	}
	slices.Sort(kinds)
	require.Equal(t, []string{"attr", "attr", "meta"}, kinds, "fdatasync leaves mode and times")
	require.NoError(t, fs.Sync())
	require.Empty(t, fs.Pending())

	// fsync alone (no sync(2)) leaves nothing pending.
	for k := range 100 {
		g := create(t, r, fmt.Sprintf("many%d", k))
		write(t, g, "x", 0)
		require.NoError(t, g.Fsync(nil))
	}
	require.NoError(t, r.Fsync(nil))
	require.Empty(t, fs.Pending())
	require.Len(t, snapshot(t, fs.Crash()), 101)

	require.NoError(t, r.Rename("f", r, "g", 0))
	ps = fs.Pending()
	i := slices.IndexFunc(ps, func(p vfs.Pending) bool { return p.Kind == vfs.PendingMeta })
	require.Equal(t, "rename", ps[i].Op)
	require.Equal(t, "/f", ps[i].Path)
	require.Equal(t, "/g", ps[i].To)
}

// TestCrashWith: choices give every state between the strict one and "all of it
// survived"; a block can be torn at sectors.
func TestCrashWith(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, strings.Repeat("o", 8192), 0)
	require.NoError(t, fs.Sync())
	write(t, f, strings.Repeat("N", 8192), 0)
	ps := fs.Pending()
	blocks := pendingWrites(ps)
	require.Len(t, blocks, 2)

	_, err := fs.CrashWith(nil)
	require.Error(t, err)

	none, err := fs.CrashWith(make([]vfs.Survival, len(ps)))
	require.NoError(t, err)
	require.Equal(t, snapshot(t, fs.Crash()), snapshot(t, none))

	all, err := fs.CrashWith(keepAll(len(ps)))
	require.NoError(t, err)
	require.Equal(t, snapshot(t, fs), snapshot(t, all))

	// Reads (snapshot) change atime, a new pending change: list again.
	ps = fs.Pending()
	blocks = blocks[:0]
	for k, p := range ps {
		if p.Kind == vfs.PendingWrite {
			blocks = append(blocks, k)
		}
	}
	keep := make([]vfs.Survival, len(ps))
	keep[blocks[1]].Keep = true
	one, err := fs.CrashWith(keep)
	require.NoError(t, err)
	require.Equal(t, "file:"+strings.Repeat("o", 4096)+strings.Repeat("N", 4096), snapshot(t, one)["/f"])

	keep[blocks[1]] = vfs.Survival{Keep: true, Sectors: 0b10000001} // sectors 0 and 7 of block 1
	require.Len(t, fs.Pending(), len(keep))
	torn, err := fs.CrashWith(keep)
	require.NoError(t, err)
	want := []byte(strings.Repeat("o", 8192))
	copy(want[4096:4096+512], strings.Repeat("N", 512))
	copy(want[8192-512:], strings.Repeat("N", 512))
	require.Equal(t, "file:"+string(want), snapshot(t, torn)["/f"])

	// A pending size change and a pending name: kept independently.
	g := create(t, r, "g")
	write(t, g, "abc", 0)
	ps = fs.Pending()
	keep = make([]vfs.Survival, len(ps))
	for k, p := range ps {
		keep[k].Keep = p.Kind == vfs.PendingMeta
	}
	nameOnly, err := fs.CrashWith(keep)
	require.NoError(t, err)
	require.Equal(t, "file:", snapshot(t, nameOnly)["/g"])
	ps = fs.Pending()
	keep = make([]vfs.Survival, len(ps))
	for k, p := range ps {
		keep[k].Keep = p.Kind == vfs.PendingMeta || p.Kind == vfs.PendingSize
	}
	sized, err := fs.CrashWith(keep)
	require.NoError(t, err)
	require.Equal(t, "file:\x00\x00\x00", snapshot(t, sized)["/g"], "size survived, data did not")
}

// TestRandomCrash: same seed, same state; the models differ as documented.
func TestRandomCrash(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	for _, n := range []string{"a", "b", "c"} {
		create(t, r, n)
	}
	strict := snapshot(t, fs.Crash())
	seen := map[vfs.Model]map[string]bool{}
	for _, m := range []vfs.Model{vfs.Strict, vfs.Prefix, vfs.Subset, vfs.Torn} {
		seen[m] = map[string]bool{}
		for seed := range uint64(64) {
			s := snapshot(t, fs.RandomCrash(m, seed))
			require.Equal(t, s, snapshot(t, fs.RandomCrash(m, seed)), "%v seed %d", m, seed)
			names := slices.Sorted(func(yield func(string) bool) {
				for k := range s {
					if !yield(k) {
						return
					}
				}
			})
			seen[m][strings.Join(names, ",")] = true
		}
		str, err := vfs.ParseModel(m.String())
		require.NoError(t, err)
		require.Equal(t, m, str)
	}
	_, err := vfs.ParseModel("nope")
	require.Error(t, err)
	require.Equal(t, map[string]bool{"": true}, seen[vfs.Strict])
	require.Empty(t, strict)
	// The creates are made in order: a prefix keeps a, then b, then c.
	require.Equal(t, map[string]bool{"": true, "/a": true, "/a,/b": true, "/a,/b,/c": true}, seen[vfs.Prefix])
	require.Greater(t, len(seen[vfs.Subset]), 4, "subsets other than prefixes")
}

// TestWriteCacheDirect: an O_DIRECT write reaches the device; with a write cache
// it is lost at power loss until a flush, without one it is durable.
func TestWriteCacheDirect(t *testing.T) {
	for _, wc := range []bool{true, false} {
		t.Run(fmt.Sprint("writeCache=", wc), func(t *testing.T) {
			fs := vfs.New(vfs.WithWriteCache(wc))
			require.Equal(t, wc, fs.WriteCache())
			r := fs.Root()
			f := create(t, r, "f")
			write(t, f, strings.Repeat("o", 8192), 0)
			require.NoError(t, fs.Sync())
			_, _, err := f.Write(bytes.Repeat([]byte("D"), 4096), 4096, vfs.WriteDirect, nil)
			require.NoError(t, err)
			got := snapshot(t, fs.Crash())["/f"]
			if wc {
				require.Equal(t, "file:"+strings.Repeat("o", 8192), got)
				var dev int
				for _, p := range fs.Pending() {
					if p.Kind == vfs.PendingDevice {
						dev++
					}
				}
				require.Equal(t, 1, dev)
				// A flush of any file empties the device cache.
				g := create(t, r, "g")
				require.NoError(t, g.Fsync(nil))
			}
			require.Equal(t, "file:"+strings.Repeat("o", 4096)+strings.Repeat("D", 4096), snapshot(t, fs.Crash())["/f"])

			// sync_file_range: written back, not flushed.
			write(t, f, "S", 0)
			require.NoError(t, f.SyncFileRange(0, 0))
			want := "o"
			if !wc {
				want = "S"
			}
			require.Equal(t, want, snapshot(t, fs.Crash())["/f"][5:6])
		})
	}
}

// TestWritebackErrorErrseq: a writeback error is reported once per open file
// description that existed, a retried fsync succeeds, and the data is gone at the
// next crash while reads still see it (the PostgreSQL fsync problem).
func TestWritebackErrorErrseq(t *testing.T) {
	rules, err := vfs.ParseRules(1, "writeback@/f#nth=1=EIO")
	require.NoError(t, err)
	fs := vfs.New(vfs.WithFaults(rules))
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, "old", 0)
	require.NoError(t, r.Fsync(nil))
	// Two descriptions open before the error.
	e1, e2 := f.SampleErrSeq(), f.SampleErrSeq()
	write(t, f, "new", 0)
	require.Equal(t, unix.EIO, f.Fsync(&e1), "writeback fails")
	require.Equal(t, "new", string(readAll(t, f)), "the page cache keeps the bytes")
	require.NoError(t, f.Fsync(&e1), "reported once")
	require.Equal(t, unix.EIO, f.Fdatasync(&e2), "and once to the other description")
	require.NoError(t, f.Fdatasync(&e2))
	e3 := f.SampleErrSeq()
	require.NoError(t, f.Fsync(&e3), "a description opened after the error was seen does not see it")
	require.Equal(t, "file:\x00\x00\x00", snapshot(t, fs.Crash())["/f"], "the data is gone")
	write(t, f, "again", 0)
	require.NoError(t, f.Fsync(&e1))
	require.Equal(t, "file:again", snapshot(t, fs.Crash())["/f"])

	// A description opened after an error that nobody has seen yet sees it.
	rules2, _ := vfs.ParseRules(1, "writeback#nth=1=EIO")
	fs2 := vfs.New(vfs.WithFaults(rules2))
	g := create(t, fs2.Root(), "g")
	write(t, g, "x", 0)
	require.NoError(t, fs2.Sync(), "sync(2) reports nothing")
	late := g.SampleErrSeq()
	require.Equal(t, unix.EIO, g.Fsync(&late))
	require.NoError(t, g.Fsync(&late))

	// O_SYNC writes report through the same cursor.
	rules3, _ := vfs.ParseRules(1, "writeback#nth=1=EIO")
	fs3 := vfs.New(vfs.WithFaults(rules3))
	h := create(t, fs3.Root(), "h")
	es := h.SampleErrSeq()
	n, _, err := h.Write([]byte("abc"), 0, vfs.WriteSync, &es)
	require.Equal(t, unix.EIO, err)
	require.Equal(t, 3, n)
	_, _, err = h.Write([]byte("abc"), 0, vfs.WriteDSync, &es)
	require.NoError(t, err)
}

// TestCrashMetadata: fdatasync leaves mode and times, fsync persists them; link
// counts after a crash are those of the durable names.
func TestCrashMetadata(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, "x", 0)
	require.NoError(t, r.Link("f", r, "g", false))
	require.NoError(t, fs.Sync())
	require.NoError(t, f.Chmod(0o600))
	require.NoError(t, f.Utimens(1e9, 2e9))
	require.NoError(t, f.Fdatasync(nil))
	var st vfs.Stat
	mustResolve(t, fs.Crash().Root(), "f").Stat(&st)
	require.Equal(t, uint32(vfs.S_IFREG|0o644), st.Mode, "fdatasync does not persist the mode")
	require.NotEqual(t, int64(2e9), st.Mtime)
	require.Equal(t, uint32(2), st.Nlink)
	require.NoError(t, f.Fsync(nil))
	mustResolve(t, fs.Crash().Root(), "g").Stat(&st)
	require.Equal(t, uint32(vfs.S_IFREG|0o600), st.Mode)
	require.Equal(t, int64(1e9), st.Atime)
	require.Equal(t, int64(2e9), st.Mtime)
	require.NoError(t, r.Unlink("g"))
	require.NoError(t, r.Fsync(nil))
	mustResolve(t, fs.Crash().Root(), "f").Stat(&st)
	require.Equal(t, uint32(1), st.Nlink)

	// A symlink and a directory survive with their type and target.
	require.NoError(t, r.Symlink("f", "l"))
	require.NoError(t, r.Mkdir("d", 0o700))
	require.NoError(t, r.Fsync(nil))
	c := fs.Crash()
	require.Equal(t, "link:f", snapshot(t, c)["/l"])
	d := mustResolve(t, c.Root(), "d")
	d.Stat(&st)
	require.Equal(t, uint32(vfs.S_IFDIR|0o700), st.Mode)
	require.Equal(t, uint32(2), st.Nlink)
	require.Equal(t, uint32(3), c.Root().Nlink())
}

// TestCrashCapacity: a crash state accounts for the blocks its files hold.
func TestCrashCapacity(t *testing.T) {
	fs := vfs.New(vfs.WithCapacity(16 * kib))
	f := create(t, fs.Root(), "f")
	_, err := f.WriteAt(make([]byte, 12*kib), 0)
	require.NoError(t, err)
	require.NoError(t, fs.Sync())
	c := fs.Crash()
	g := create(t, c.Root(), "g")
	_, err = g.WriteAt(make([]byte, 8*kib), 0)
	require.Equal(t, unix.ENOSPC, err, "the crashed file system is as full as the original")
}

// pendingWrites returns the indexes of the data writes in ps.
func pendingWrites(ps []vfs.Pending) []int {
	var blocks []int
	for k, p := range ps {
		if p.Kind == vfs.PendingWrite {
			blocks = append(blocks, k)
		}
	}
	return blocks
}

// TestCrashWithZeroWrite: zeros written over durable data (a block the page
// cache then holds without a buffer) overwrite it in every crash state that
// keeps the write, whole or torn at sectors, in the one-pass replay and in
// the stepped state alike; a lost write leaves the old data.
func TestCrashWithZeroWrite(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, strings.Repeat("o", 8192), 0)
	require.NoError(t, fs.Sync())
	write(t, f, strings.Repeat("\x00", 4096), 0) // whole block of zeros
	write(t, f, strings.Repeat("\x00", 100), 4096+600)
	snap := fs.Snapshot()
	ps := snap.Pending()
	blocks := pendingWrites(ps)
	require.Len(t, blocks, 2)
	zeroed := func(b []byte, from, n int) { copy(b[from:from+n], make([]byte, n)) }
	for _, tc := range []struct {
		name string
		keep [2]vfs.Survival
		want func([]byte)
	}{
		{"both lost", [2]vfs.Survival{}, func([]byte) {}},
		{"both kept", [2]vfs.Survival{{Keep: true}, {Keep: true}}, func(b []byte) { zeroed(b, 0, 4096); zeroed(b, 4096+600, 100) }},
		{"whole block torn", [2]vfs.Survival{{Keep: true, Sectors: 0b10000010}, {}}, func(b []byte) { zeroed(b, 512, 512); zeroed(b, 7*512, 512) }},
		{"partial block torn", [2]vfs.Survival{{}, {Keep: true, Sectors: 0b10}}, func(b []byte) { zeroed(b, 4096+600, 100) }},
	} {
		keep := make([]vfs.Survival, len(ps))
		keep[blocks[0]], keep[blocks[1]] = tc.keep[0], tc.keep[1]
		for k, p := range ps {
			if p.Kind != vfs.PendingWrite {
				keep[k].Keep = true
			}
		}
		want := []byte(strings.Repeat("o", 8192))
		tc.want(want)
		one, err := fs.CrashWith(keep)
		require.NoError(t, err, tc.name)
		require.Equal(t, "file:"+string(want), snapshot(t, one)["/f"], tc.name)
		st := snap.State()
		for k := range ps {
			st.Set(k, keep[k])
		}
		got, err := st.ReadFile("/f")
		require.NoError(t, err, tc.name)
		require.Equal(t, want, got, tc.name)
	}
}

// TestCrashWithZeroWriteOverHole: zeros written into a hole are data once
// durable: a crash state that keeps the write (the one-pass replay and the
// stepped state alike) maps the block as data, counts it in st_blocks and
// reads it as zeros; one that loses it keeps the hole.
func TestCrashWithZeroWriteOverHole(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, "x", 3*4096)
	require.NoError(t, fs.Sync())
	write(t, f, strings.Repeat("\x00", 4096), 4096)
	snap := fs.Snapshot()
	ps := snap.Pending()
	blocks := pendingWrites(ps)
	require.Len(t, blocks, 1)
	for _, kept := range []bool{false, true} {
		keep := keepAll(len(ps))
		keep[blocks[0]].Keep = kept
		crashed, err := fs.CrashWith(keep)
		require.NoError(t, err)
		g, err := crashed.Root().Resolve("f", true)
		require.NoError(t, err)
		data, err := g.SeekData(0)
		require.NoError(t, err)
		var st vfs.Stat
		g.Stat(&st)
		if kept {
			require.Equal(t, int64(4096), data, "the written zeros are data")
			require.Equal(t, int64(16), st.Blocks, "two blocks")
		} else {
			require.Equal(t, int64(3*4096), data, "a hole before the last block")
			require.Equal(t, int64(8), st.Blocks, "one block")
		}
		b := make([]byte, 3*4096+1)
		_, err = g.ReadAt(b, 0)
		require.NoError(t, err)
		require.Equal(t, append(make([]byte, 3*4096), 'x'), b)
		cs := snap.State()
		for k := range ps {
			cs.Set(k, keep[k])
		}
		require.Equal(t, snapshot(t, crashed)["/f"], "file:"+string(b))
		got, err := cs.ReadFile("/f")
		require.NoError(t, err)
		require.Equal(t, b, got)
	}
}

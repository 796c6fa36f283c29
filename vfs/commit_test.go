package vfs_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// churn creates, writes and removes a file n times through the afero face,
// never syncing (the program of the memory report: a Go test using afero),
// fsyncing the file each time when fsync is set.
func churn(t testing.TB, fs *vfs.FS, n int, fsync bool) {
	for k := range n {
		name := fmt.Sprintf("/d/tmp%d", k%7)
		f, err := fs.Create(name)
		require.NoError(t, err)
		_, err = f.Write(make([]byte, 6000))
		require.NoError(t, err)
		if fsync {
			require.NoError(t, f.Sync())
		}
		require.NoError(t, f.Close())
		require.NoError(t, fs.Remove(name))
	}
}

// TestChurnBounded: a file created and removed before any sync leaves nothing
// behind: what is pending and retained after 2,000 iterations is what it was
// after 20.
func TestChurnBounded(t *testing.T) {
	for _, fsync := range []bool{false, true} {
		t.Run(fmt.Sprint("fsync=", fsync), func(t *testing.T) {
			fs := vfs.New(vfs.WithPeriodicCommit(0, 0))
			require.NoError(t, fs.Mkdir("/d", 0o755))
			require.NoError(t, fs.Sync())
			pend := churnBounded(t, fs, fsync)
			require.LessOrEqual(t, pend, 2, "the directory's times")

			// Without the cancelling, every iteration leaves its changes.
			fs2 := vfs.New(vfs.WithPeriodicCommit(0, 0))
			vfs.SetCancel(fs2, false)
			require.NoError(t, fs2.Mkdir("/d", 0o755))
			require.NoError(t, fs2.Sync())
			churn(t, fs2, 20, fsync)
			require.Greater(t, len(fs2.Pending()), 40)
		})
	}
}

// TestCancelOnlyWhatCancels: a remove is kept when dropping it with its
// create would change a crash state.
func TestCancelOnlyWhatCancels(t *testing.T) {
	fs := vfs.New(vfs.WithPeriodicCommit(0, 0))
	r := fs.Root()
	write(t, create(t, r, "durable"), "old", 0)
	require.NoError(t, fs.Sync())
	// The name was durable: its remove must stay (a crash may lose it).
	require.NoError(t, r.Unlink("durable"))
	write(t, create(t, r, "durable"), "new", 0)
	require.NoError(t, r.Unlink("durable"))
	ops := func() []string {
		var out []string
		for _, p := range fs.Pending() {
			if p.Kind == vfs.PendingMeta {
				out = append(out, p.Op+" "+p.Path)
			}
		}
		return out
	}
	// The first remove stays; the second create and remove cancel out
	// (the first remove is before them).
	require.Equal(t, []string{"remove /durable", "create /durable", "remove /durable"}, ops(),
		"a create at a name whose earlier remove is pending does not cancel: a crash keeping it without that remove replaces the old file")

	// A second name, a rename: not a create and remove of the same name.
	require.NoError(t, fs.Sync())
	f := create(t, r, "a")
	require.NoError(t, r.Link("a", r, "b", false))
	require.NoError(t, r.Unlink("a"))
	require.NoError(t, r.Rename("b", r, "c", 0))
	require.NoError(t, r.Unlink("c"))
	require.Len(t, ops(), 5)
	_ = f

	// A name another pending operation used before: a crash that keeps the
	// create (which replaces what the first create put there) and the
	// remove, but not the rename, loses y; without them, y stays.
	require.NoError(t, fs.Sync())
	create(t, r, "y")
	require.NoError(t, r.Rename("y", r, "z", 0))
	create(t, r, "y")
	require.NoError(t, r.Unlink("y"))
	require.Equal(t, []string{"create /y", "rename /y", "create /y", "remove /y"}, ops())
	keep := make([]vfs.Survival, len(fs.Pending()))
	for k, p := range fs.Pending() {
		keep[k].Keep = p.Kind == vfs.PendingMeta && p.Op != "rename"
	}
	c, err := fs.CrashWith(keep)
	require.NoError(t, err)
	require.Empty(t, snapshot(t, c))

	// A create and remove alone: nothing.
	require.NoError(t, fs.Sync())
	g := create(t, r, "g")
	write(t, g, "data", 0)
	require.NoError(t, g.Fsync(nil))
	require.NoError(t, r.Unlink("g"))
	require.Empty(t, ops())
	require.Equal(t, map[string]string{"/z": "file:"}, snapshot(t, fs.Crash()))
}

// manualClock is a virtual clock moved by hand.
type manualClock struct{ now vfs.Timespec }

func (c *manualClock) read() vfs.Timespec      { return c.now }
func (c *manualClock) advance(d time.Duration) { c.now += vfs.Timespec(d) }

// TestPeriodicCommit: ext4's journal commits what is pending 5 s after the
// transaction's first change, but an append waiting for delayed allocation
// keeps its durable size (i_disksize) until the flusher writes it back, 30 s
// after it was dirtied: the zero-length file after a crash.
func TestPeriodicCommit(t *testing.T) {
	clock := &manualClock{now: 1e18}
	fs := vfs.New(vfs.WithClock(clock.read))
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, "appended", 0)
	clock.advance(4 * time.Second)
	require.Empty(t, snapshot(t, fs.Crash()), "no commit yet")
	clock.advance(time.Second)
	require.Equal(t, map[string]string{"/f": "file:"}, snapshot(t, fs.Crash()), "the name and an empty file")
	var st vfs.Stat
	mustResolve(t, fs.Crash().Root(), "f").Stat(&st)
	require.Equal(t, uint32(vfs.S_IFREG|0o644), st.Mode)

	// A chmod commits 5 s later; the data still waits.
	require.NoError(t, f.Chmod(0o600))
	clock.advance(5 * time.Second)
	mustResolve(t, fs.Crash().Root(), "f").Stat(&st)
	require.Equal(t, uint32(vfs.S_IFREG|0o600), st.Mode)
	require.Equal(t, "file:", snapshot(t, fs.Crash())["/f"])

	// 30 s after the write: written back, size and all.
	clock.advance(19 * time.Second)
	require.Equal(t, "file:", snapshot(t, fs.Crash())["/f"], "29 s")
	clock.advance(time.Second)
	require.Equal(t, "file:appended", snapshot(t, fs.Crash())["/f"], "30 s")
	require.Empty(t, fs.Pending())

	// An overwrite in place: the size does not wait for allocation.
	write(t, f, "APP", 0)
	clock.advance(5 * time.Second)
	require.Equal(t, "file:appended", snapshot(t, fs.Crash())["/f"], "the data waits for writeback")
	require.NoError(t, f.Truncate(3))
	clock.advance(5 * time.Second)
	require.Equal(t, "file:app", snapshot(t, fs.Crash())["/f"], "the truncate committed, the overwrite not yet")

	// Off: nothing but sync calls makes anything durable.
	off := vfs.New(vfs.WithClock(clock.read), vfs.WithPeriodicCommit(0, 0))
	write(t, create(t, off.Root(), "g"), "x", 0)
	clock.advance(time.Hour)
	require.Empty(t, snapshot(t, off.Crash()))
	require.NotEmpty(t, off.Pending())
}

// TestPeriodicCommitBounds: a program that never syncs and leaves changes
// that do not cancel (a file replaced by rename) keeps a bounded amount
// pending once virtual time passes, as Linux does.
func TestPeriodicCommitBounds(t *testing.T) {
	clock := &manualClock{now: 1e18}
	fs := vfs.New(vfs.WithClock(clock.read))
	replace := func(n int) {
		for k := range n {
			f, _, err := fs.Root().Open("tmp", unix.O_CREAT|unix.O_RDWR|unix.O_TRUNC, 0o644)
			require.NoError(t, err)
			write(t, f, fmt.Sprint("version ", k), 0)
			require.NoError(t, fs.Root().Rename("tmp", fs.Root(), "current", 0))
			clock.advance(10 * time.Millisecond)
		}
	}
	replace(4000) // 40 s
	after := len(fs.Pending())
	_, ops, records := vfs.Retained(fs)
	replace(4000)
	require.Len(t, fs.Pending(), after)
	_, ops2, records2 := vfs.Retained(fs)
	require.Equal(t, records, records2)
	require.LessOrEqual(t, ops2, 2*ops+8)
	require.Less(t, after, 3*3000+100, "at most 30 s of changes")
	require.Equal(t, "file:version 3999", snapshot(t, fs.Crash())["/current"][:len("file:version 3999")])
}

// TestCancelInNewDirectory: a create and remove cancel out in a directory
// whose mkdir is still pending, and every crash state is still the one the
// same choices give without the cancelling (the pair kept or lost together),
// also when the directory's mkdir is lost and its later rename survives.
func TestCancelInNewDirectory(t *testing.T) {
	program := func(fs *vfs.FS) {
		r := fs.Root()
		require.NoError(t, r.Mkdir("d", 0o750))
		for range 3 {
			write(t, create(t, r, "d/f"), "data", 0)
			require.NoError(t, r.Unlink("d/f"))
		}
		require.NoError(t, r.Rename("d", r, "e", 0))
	}
	a := vfs.New(vfs.WithPeriodicCommit(0, 0))
	b := vfs.New(vfs.WithPeriodicCommit(0, 0))
	vfs.SetCancel(b, false)
	program(a)
	program(b)
	kinds := func(fs *vfs.FS) []string {
		var out []string
		for _, p := range fs.Pending() {
			if p.Kind == vfs.PendingMeta {
				out = append(out, p.Op+" "+p.Path)
			}
		}
		return out
	}
	require.Equal(t, []string{"create /d", "rename /d"}, kinds(a), "the three creates and removes cancel out")
	require.Len(t, kinds(b), 8)
	pa, pb := a.Pending(), b.Pending()
	for mask := range 1 << len(pa) {
		for _, pair := range []bool{false, true} {
			keepA := make([]vfs.Survival, len(pa))
			for k := range keepA {
				keepA[k].Keep = mask&(1<<k) != 0
			}
			keepB := make([]vfs.Survival, len(pb))
			for k, p := range pb {
				keepB[k].Keep = pair
				for j, q := range pa {
					if p.Seq == q.Seq && p.Kind == q.Kind {
						keepB[k] = keepA[j]
					}
				}
			}
			ca, err := a.CrashWith(keepA)
			require.NoError(t, err)
			cb, err := b.CrashWith(keepB)
			require.NoError(t, err)
			require.Equal(t, fullTree(t, cb), fullTree(t, ca), "mask %b, pair kept %v", mask, pair)
		}
	}
}

// TestCancelledOperationReusedOnlyUnseen: the memory of a cancelled create
// serves the next operation on its directory only when no snapshot has seen
// it: a snapshot taken before the cancelling still shows the create it saw.
func TestCancelledOperationReusedOnlyUnseen(t *testing.T) {
	fs := vfs.New(vfs.WithPeriodicCommit(0, 0))
	r := fs.Root()
	require.NoError(t, fs.Sync())
	write(t, create(t, r, "f"), "f's", 0)
	snap := fs.Snapshot()
	require.NoError(t, r.Unlink("f")) // cancels out with the create
	write(t, create(t, r, "g"), "g's", 0)
	st := snap.State()
	var ops []string
	for _, p := range snap.Pending() {
		if p.Kind == vfs.PendingMeta {
			ops = append(ops, p.Op+" "+p.Path)
		}
		st.Apply(p)
	}
	require.Equal(t, []string{"create /f"}, ops)
	got, err := st.ReadFile("/f")
	require.NoError(t, err)
	require.Equal(t, "f's", string(got))
	_, err = st.ReadFile("/g")
	require.Error(t, err)
}

// TestChurnBoundedInNewDirectory: TestChurnBounded in a directory whose mkdir
// is itself still pending.
func TestChurnBoundedInNewDirectory(t *testing.T) {
	fs := vfs.New(vfs.WithPeriodicCommit(0, 0))
	require.NoError(t, fs.Mkdir("/d", 0o755))
	churnBounded(t, fs, false)
}

// churnBounded checks that what is pending and retained after 2,000
// iterations of churn is what it was after 20, and returns how many changes
// were pending.
func churnBounded(t *testing.T, fs *vfs.FS, fsync bool) int {
	churn(t, fs, 20, fsync)
	pend := len(fs.Pending())
	inodes, ops, records := vfs.Retained(fs)
	churn(t, fs, 2000, fsync)
	require.Len(t, fs.Pending(), pend)
	i2, o2, r2 := vfs.Retained(fs)
	require.Equal(t, []int{inodes, records}, []int{i2, r2})
	require.LessOrEqual(t, o2, max(ops, 64), "cancelled operations are compacted")
	return pend
}

// TestCancelKeepsCrashStates: with the cancelling, every crash state that
// can still be chosen is the one that the same choices (both operations of
// each cancelled pair, and what their file had pending, kept or dropped
// together, each pair on its own) give without it, whether the states are
// built in one pass (CrashWith) or change by change from a frozen snapshot
// (State, Set), where a directory's entries may live in the state's shared
// table.
func TestCancelKeepsCrashStates(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := vfs.New(vfs.WithPeriodicCommit(0, 0))
		b := vfs.New(vfs.WithPeriodicCommit(0, 0))
		vfs.SetCancel(b, false)
		for _, op := range drawProgram(t, "") {
			op(a)
			op(b)
		}
		sa, sb := a.Snapshot(), b.Snapshot()
		pa, pb := sa.Pending(), sb.Pending()
		key := func(p vfs.Pending) string { return fmt.Sprint(p.Seq, p.Kind, p.Ino, p.Off) }
		inA := map[string]int{}
		for k, p := range pa {
			inA[key(p)] = k
		}
		keepA := make([]vfs.Survival, len(pa))
		for k := range keepA {
			keepA[k].Keep = rapid.Bool().Draw(t, "keep")
		}
		pairKept := map[uint64]bool{} // by the cancelled file's inode
		keepB := make([]vfs.Survival, len(pb))
		for k, p := range pb {
			if j, ok := inA[key(p)]; ok {
				keepB[k] = keepA[j]
				continue
			}
			kept, ok := pairKept[p.Ino]
			if !ok {
				kept = rapid.Bool().Draw(t, fmt.Sprintf("keep what cancelled out on inode %d", p.Ino))
				pairKept[p.Ino] = kept
			}
			keepB[k].Keep = kept
		}
		ca, err := a.CrashWith(keepA)
		require.NoError(t, err)
		cb, err := b.CrashWith(keepB)
		require.NoError(t, err)
		want := fullTree(t, cb)
		require.Equal(t, want, fullTree(t, ca), "in one pass")
		ia, ib := sa.State(), sb.State()
		for _, k := range rapid.Permutation(seq(len(pa))).Draw(t, "order a") {
			ia.Set(k, keepA[k])
		}
		for _, k := range rapid.Permutation(seq(len(pb))).Draw(t, "order b") {
			ib.Set(k, keepB[k])
		}
		require.Equal(t, want, fullTree(t, ib.FS()), "without the cancelling, change by change")
		require.Equal(t, want, fullTree(t, ia.FS()), "with it, change by change")
	})
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

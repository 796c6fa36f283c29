package sim_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

func profile(t testing.TB, name string) *device.Profile {
	p, err := device.Lookup(name)
	require.NoError(t, err)
	return p
}

func logBreakdown(t *testing.T, arm string, k *sim.Kernel, total int64) {
	b := k.Breakdown()
	t.Logf("%-10s %8.3f s  cpu %.3f copy %.3f user %.3f queue %.3f device %.3f lock %.3f (%d waits) journal %.3f (%d commits) throttle %.3f; reads %d writes %d flushes %d; hits %d misses %d ra %d",
		arm, sec(total), sec(b.CPU), sec(b.Copy), sec(b.User), sec(b.QueueWait), sec(b.Device), sec(b.LockWait), b.LockWaits,
		sec(b.Journal), b.Commits, sec(b.Throttle), b.DeviceReads, b.DeviceWrites, b.Flushes, b.CacheHits, b.CacheMisses, b.ReadaheadPages)
}

func sec(ns int64) float64 { return float64(ns) / 1e9 }

// Seed 001: 20 writes of 5 MiB to a new file, with and without O_SYNC, on a
// disk of the article's era: 2.886 s against 0.361 s there.
func TestSeed001OSyncCost(t *testing.T) {
	run := func(flags int) (int64, *sim.Kernel) {
		k := sim.New(vfs.New(), sim.WithDevice(profile(t, "hdd-7200")))
		p := k.Spawn()
		fd, err := p.Open("/data", unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC|flags, 0o644)
		require.NoError(t, err)
		buf := make([]byte, 5<<20)
		start := p.Task().Now()
		for range 20 {
			n, err := p.Write(fd, buf)
			require.NoError(t, err)
			require.Equal(t, len(buf), n)
		}
		require.NoError(t, p.Close(fd))
		return p.Task().Now() - start, k
	}
	osync, ks := run(unix.O_SYNC)
	plain, kp := run(0)
	logBreakdown(t, "O_SYNC", ks, osync)
	logBreakdown(t, "buffered", kp, plain)
	ratio := float64(osync) / float64(plain)
	t.Logf("ratio %.2fx (article: 2.886 s / 0.361 s = 8.0x)", ratio)
	require.InDelta(t, 8.5, ratio, 3.5, "ratio between 5x and 12x")
	require.True(t, sec(osync) >= 2.886/2 && sec(osync) <= 2.886*2, "O_SYNC arm within 2x of 2.886 s")
	require.True(t, sec(plain) >= 0.361/2 && sec(plain) <= 0.361*2, "buffered arm within 2x of 0.361 s")
}

// Seed 004: db4o-style commits on ext3/ext4 data=ordered, disk write cache off.
// A commit writes the changed slots (an insert appends new ones at the end of
// the file, an update or delete rewrites slots and index pages in place), syncs,
// then rewrites the header's transaction pointer and syncs again: fdatasync
// skips the journal commit that only the modification time needs.
func TestSeed004FdatasyncCost(t *testing.T) {
	const (
		fileBytes = 64 << 20
		commits   = 100
		pagesPer  = 24 // slot and index pages a commit rewrites
	)
	run := func(mix string, datasync bool) (int64, *sim.Kernel) {
		prof := profile(t, "hdd-7200")
		prof.Device.WriteCache = false // the article's setup
		k := sim.New(vfs.New(), sim.WithDevice(prof))
		p := k.Spawn()
		fd, err := p.Open("/db.yap", unix.O_CREAT|unix.O_RDWR, 0o644)
		require.NoError(t, err)
		page := make([]byte, 4096)
		for off := int64(0); off < fileBytes; off += 1 << 20 {
			_, err := p.Pwrite(fd, make([]byte, 1<<20), off)
			require.NoError(t, err)
		}
		require.NoError(t, p.Fsync(fd))
		sync := p.Fsync
		if datasync {
			sync = p.Fdatasync
		}
		rng := uint64(4) // the same slots for both arms
		next := func() int64 {
			rng = rng*6364136223846793005 + 1442695040888963407
			return int64(rng>>33) % (fileBytes / 4096)
		}
		end := int64(fileBytes)
		start := p.Task().Now()
		for range commits {
			for i := range pagesPer {
				off := next() * 4096
				if mix == "delete" && i >= pagesPer*2/3 {
					break // a delete rewrites slots and index pages, fewer than an update
				}
				if mix == "insert" && i < 4 {
					off, end = end, end+4096
				}
				_, err := p.Pwrite(fd, page, off)
				require.NoError(t, err)
			}
			require.NoError(t, sync(fd))
			_, err := p.Pwrite(fd, page[:512], 0) // the header's transaction pointer
			require.NoError(t, err)
			require.NoError(t, sync(fd))
		}
		return p.Task().Now() - start, k
	}
	var fs, fds int64
	for _, mix := range []string{"insert", "update", "delete"} {
		a, ka := run(mix, false)
		b, kb := run(mix, true)
		logBreakdown(t, mix+" fsync", ka, a)
		logBreakdown(t, mix+" fdatasync", kb, b)
		t.Logf("%s: fdatasync %.1f%% faster", mix, 100*(1-float64(b)/float64(a)))
		require.LessOrEqual(t, b, a, "fdatasync is never slower")
		fs += a
		fds += b
	}
	gain := 100 * (1 - float64(fds)/float64(fs))
	t.Logf("all mixes: fdatasync %.1f%% faster (article: 10-20%%)", gain)
	require.True(t, gain >= 10 && gain <= 20, "fdatasync 10-20%% faster, got %.1f%%", gain)
}

// seed000Loop runs the message-file loop of seed 000 n times on p, with work ns
// of other user-level work per iteration, and returns the virtual time it took.
func seed000Loop(t *testing.T, p *sim.Process, n int, work int64) int64 {
	buf := make([]byte, 512)
	start := p.Task().Now()
	for range n {
		fd, err := p.Open("/oraus.msb", unix.O_RDONLY, 0)
		require.NoError(t, err)
		_, err = p.FcntlInt(uintptr(fd), unix.F_SETFD, unix.FD_CLOEXEC)
		require.NoError(t, err)
		for _, s := range [4]struct {
			off int64
			n   int
		}{{0, 256}, {512, 512}, {1024, 512}, {39936, 512}} {
			_, err := p.Seek(fd, s.off, 0)
			require.NoError(t, err)
			m, err := p.Read(fd, buf[:s.n])
			require.NoError(t, err)
			require.Equal(t, s.n, m)
		}
		require.NoError(t, p.Close(fd))
		p.Task().Spend(work)
	}
	return p.Task().Now() - start
}

// Seed 000: the message-file loop with and without the file cache interposer:
// about 10x on the loop alone (50,000 iterations), 2-15% in a client whose
// other work per iteration dominates.
func TestSeed000FileCacheCost(t *testing.T) {
	const iters = 50_000
	run := func(cached bool, work int64) (int64, *sim.Kernel) {
		k := sim.New(vfs.New(), sim.WithDevice(profile(t, "hdd-7200")))
		p := k.Spawn()
		fd, err := p.Open("/oraus.msb", unix.O_CREAT|unix.O_WRONLY, 0o644)
		require.NoError(t, err)
		_, err = p.Write(fd, make([]byte, 64<<10))
		require.NoError(t, err)
		require.NoError(t, p.Close(fd))
		if cached {
			p = p.Through(interposer.NewFileCache(k, "/oraus.msb"))
		}
		seed000Loop(t, p, 1, work) // warm: the first open reads the file
		before := k.Breakdown()
		d := seed000Loop(t, p, iters, work)
		after := k.Breakdown()
		t.Logf("cached=%v work=%dns: %.3f s, %.0f ns/iteration; cpu %.3f copy %.3f user %.3f", cached, work, sec(d), float64(d)/iters,
			sec(after.CPU-before.CPU), sec(after.Copy-before.Copy), sec(after.User-before.User))
		return d, k
	}
	plain, _ := run(false, 0)
	cached, _ := run(true, 0)
	ratio := float64(plain) / float64(cached)
	t.Logf("loop alone: %.1fx faster with the cache (article: about 10x)", ratio)
	require.True(t, ratio >= 6 && ratio <= 15, "about 10x, got %.1fx", ratio)

	const work = 20_000 // a client's own work per message: 20 us of CPU
	plainW, _ := run(false, work)
	cachedW, _ := run(true, work)
	gain := 100 * (float64(plainW)/float64(cachedW) - 1)
	t.Logf("client with %d ns of work per iteration: %.1f%% faster (article: 2-15%%)", work, gain)
	require.True(t, gain >= 2 && gain <= 15, "2-15%%, got %.1f%%", gain)
}

// Seed 002: parallel writers to large temporary files on UFS mounted
// forcedirectio, opened O_DSYNC. Sparse files cannot take the direct path: each
// write goes through the page cache under the file's writer lock, allocates and
// syncs the inode; preallocated files are written direct under the lock held as
// reader, in parallel.
func TestSeed002SparseTempFilesCost(t *testing.T) {
	const (
		files    = 2
		perFile  = 4        // writers per file (parallel query slaves)
		chunk    = 64 << 10 // a sort run's write
		writes   = 50       // per writer
		fileSize = perFile * writes * chunk
	)
	run := func(prealloc bool) (int64, *sim.Kernel) {
		prof := profile(t, "hdd-7200")
		prof.FS.Type, prof.FS.ForceDirectIO = "ufs", true
		k := sim.New(vfs.New(), sim.WithDevice(prof))
		setup := k.Spawn()
		for f := range files {
			fd, err := setup.Open(fmt.Sprintf("/temp%d.dbf", f), unix.O_CREAT|unix.O_WRONLY, 0o644)
			require.NoError(t, err)
			if prealloc {
				for off := int64(0); off < fileSize; off += 1 << 20 {
					_, err := setup.Pwrite(fd, make([]byte, 1<<20), off)
					require.NoError(t, err)
				}
				require.NoError(t, setup.Fsync(fd))
			} else {
				require.NoError(t, setup.Ftruncate(fd, fileSize)) // sparse: all holes
			}
			require.NoError(t, setup.Close(fd))
		}
		var procs []*sim.Process
		var fds []int
		for i := range files * perFile {
			p := k.Spawn()
			fd, err := p.Open(fmt.Sprintf("/temp%d.dbf", i%files), unix.O_WRONLY|unix.O_DSYNC, 0)
			require.NoError(t, err)
			procs, fds = append(procs, p), append(fds, fd)
		}
		start := k.Now()
		before := k.Breakdown()
		done := make([]int, len(procs))
		buf := make([]byte, chunk)
		sim.RunByClock(procs, func(i int) bool {
			off := int64((i/files)*writes+done[i]) * chunk
			_, err := procs[i].Pwrite(fds[i], buf, off)
			require.NoError(t, err)
			done[i]++
			return done[i] < writes
		})
		after := k.Breakdown()
		after.LockWait -= before.LockWait
		after.LockWaits -= before.LockWaits
		t.Logf("prealloc=%v: %.3f s; lock waits %d (%.3f s), device %.3f s, queue %.3f s",
			prealloc, sec(k.Now()-start), after.LockWaits, sec(after.LockWait), sec(after.Device-before.Device), sec(after.QueueWait-before.QueueWait))
		return k.Now() - start, k
	}
	sparse, ks := run(false)
	pre, _ := run(true)
	logBreakdown(t, "sparse", ks, sparse)
	frac := float64(pre) / float64(sparse)
	t.Logf("preallocated run takes %.0f%% of the sparse run (article: 45%%)", 100*frac)
	require.LessOrEqual(t, frac, 0.55)
	require.Greater(t, ks.Breakdown().LockWaits, int64(0), "the sparse run waits on the writer lock")
}

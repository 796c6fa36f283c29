package sim

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/vfs"
)

func timedKernel(t *testing.T, name string, adjust func(*device.Profile)) (*Kernel, *Process) {
	p, err := device.Lookup(name)
	require.NoError(t, err)
	if adjust != nil {
		adjust(p)
	}
	k := New(vfs.New(), WithDevice(p))
	return k, k.Spawn()
}

func writeFile(t *testing.T, p *Process, path string, n int, sync bool) {
	fd, err := p.Open(path, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, make([]byte, n))
	require.NoError(t, err)
	if sync {
		require.NoError(t, p.Fsync(fd))
	}
	require.NoError(t, p.Close(fd))
}

// openWritten creates path, writes n bytes at 0 through the page cache and
// returns the fd, open for reading and writing.
func openWritten(t *testing.T, p *Process, path string, n int) int {
	fd, err := p.Open(path, unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	_, err = p.Pwrite(fd, make([]byte, n), 0)
	require.NoError(t, err)
	return fd
}

// The window sizes of mm/readahead.c: get_init_ra_size and get_next_ra_size
// with read_ahead_kb 128 (32 pages).
func TestReadaheadSizes(t *testing.T) {
	require.Equal(t, int64(4), initSize(1, 32))
	require.Equal(t, int64(8), initSize(4, 32))
	require.Equal(t, int64(32), initSize(16, 32))
	require.Equal(t, int64(4), nextSize(1, 32))
	require.Equal(t, int64(8), nextSize(4, 32))
	require.Equal(t, int64(32), nextSize(16, 32))
	require.Equal(t, int64(32), nextSize(32, 32))
}

// A cold sequential read is served by read-ahead windows that grow to
// read_ahead_kb; random reads read what they ask for.
func TestReadaheadSequentialAndRandom(t *testing.T) {
	k, p := timedKernel(t, "hdd-7200", nil)
	writeFile(t, p, "/f", 4<<20, true)
	k2 := New(k.FS(), WithDevice(k.Device())) // a cold page cache
	q := k2.Spawn()
	fd, err := q.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
	buf := make([]byte, 4096)
	for range 1024 {
		_, err := q.Read(fd, buf)
		require.NoError(t, err)
	}
	b := k2.Breakdown()
	require.Equal(t, int64(1024), b.ReadaheadPages, "every page came by read-ahead")
	require.Less(t, b.DeviceReads, int64(40), "in windows of up to 32 pages, not page by page")
	require.Greater(t, b.CacheHits, int64(900), "the reader finds most pages already read ahead")

	k3 := New(k.FS(), WithDevice(k.Device()))
	r := k3.Spawn()
	fd, err = r.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
	for i := range 64 {
		_, err := r.Pread(fd, buf, int64((i*37)%1024)*4096)
		require.NoError(t, err)
	}
	require.Equal(t, int64(4), k3.Breakdown().ReadaheadPages, "only the read at offset 0 starts a window (the initial one)")
	require.Equal(t, int64(64), k3.Breakdown().DeviceReads)
}

// ext4: fdatasync commits the journal only when the size or the allocation
// changed; fsync also for the modification time (fs/ext4/fsync.c).
func TestFsyncFdatasyncCommits(t *testing.T) {
	k, p := timedKernel(t, "hdd-7200", nil)
	fd := openWritten(t, p, "/db", 1<<20)
	commits := func() int64 { return k.Breakdown().Commits }
	require.NoError(t, p.Fdatasync(fd))
	require.Equal(t, int64(1), commits(), "an extending write: fdatasync commits")
	p.Task().Spend(10_000_000) // the next write is in another jiffy
	_, err := p.Pwrite(fd, make([]byte, 4096), 8192)
	require.NoError(t, err)
	require.NoError(t, p.Fdatasync(fd))
	require.Equal(t, int64(1), commits(), "an overwrite: fdatasync does not commit")
	p.Task().Spend(10_000_000)
	_, err = p.Pwrite(fd, make([]byte, 4096), 8192)
	require.NoError(t, err)
	require.NoError(t, p.Fsync(fd))
	require.Equal(t, int64(2), commits(), "fsync commits the mtime change")
	require.NoError(t, p.Fsync(fd))
	require.Equal(t, int64(2), commits(), "nothing left to commit")
}

// O_DIRECT writes back and drops the cached pages of its range first.
func TestDirectIOFlushesAndInvalidates(t *testing.T) {
	k, p := timedKernel(t, "hdd-7200", nil)
	fd := openWritten(t, p, "/f", 64<<10)
	require.Zero(t, k.Breakdown().DeviceWrites)
	dfd, err := p.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
	require.NoError(t, err)
	_, err = p.Pread(dfd, make([]byte, 4096), 0)
	require.NoError(t, err)
	b := k.Breakdown()
	require.Equal(t, int64(1), b.DeviceWrites, "the dirty page of the range was written back")
	require.Equal(t, int64(1), b.DeviceReads)
	hits := b.CacheHits
	_, err = p.Pread(fd, make([]byte, 4096), 0)
	require.NoError(t, err)
	require.Equal(t, hits, k.Breakdown().CacheHits, "the page was dropped: a buffered read misses")
	_, err = p.Pread(fd, make([]byte, 4096), 4096)
	require.NoError(t, err)
	require.Equal(t, hits+1, k.Breakdown().CacheHits, "pages outside the range stay cached")
}

// i_rwsem: buffered writes are exclusive; direct overwrites of allocated
// blocks share it; direct writes that extend the file are exclusive.
func TestInodeLockRules(t *testing.T) {
	run := func(flags int, extend bool) Breakdown {
		k, p := timedKernel(t, "nvme", nil)
		writeFile(t, p, "/f", 1<<20, true)
		var ps []*Process
		var fds []int
		for range 2 {
			q := k.Spawn()
			fd, err := q.Open("/f", unix.O_WRONLY|flags, 0)
			require.NoError(t, err)
			ps, fds = append(ps, q), append(fds, fd)
		}
		n := make([]int, 2)
		buf := make([]byte, 64<<10)
		RunByClock(ps, func(i int) bool {
			off := int64(i*8+n[i]) * int64(len(buf))
			if extend {
				off += 1 << 20
			}
			_, err := ps[i].Pwrite(fds[i], buf, off)
			require.NoError(t, err)
			n[i]++
			return n[i] < 8
		})
		return k.Breakdown()
	}
	require.Positive(t, run(0, false).LockWaits, "buffered writers wait for each other")
	require.Zero(t, run(unix.O_DIRECT, false).LockWaits, "direct overwrites share the lock")
	require.Positive(t, run(unix.O_DIRECT, true).LockWaits, "direct extending writes are exclusive")
}

// A working set larger than the page cache goes to the device on every pass;
// a smaller one is read once.
func TestPageCacheCapacity(t *testing.T) {
	passes := func(size int) int64 {
		k, p := timedKernel(t, "nvme", func(p *device.Profile) { p.Memory.PageCacheBytes = 1 << 20 })
		writeFile(t, p, "/f", size, true)
		k2 := New(k.FS(), WithDevice(k.Device()))
		q := k2.Spawn()
		fd, err := q.Open("/f", unix.O_RDONLY, 0)
		require.NoError(t, err)
		buf := make([]byte, 64<<10)
		for range 3 {
			for off := 0; off < size; off += len(buf) {
				_, err := q.Pread(fd, buf, int64(off))
				require.NoError(t, err)
			}
		}
		return k2.Breakdown().BytesRead
	}
	require.Equal(t, int64(512<<10), passes(512<<10), "fits: read once")
	require.GreaterOrEqual(t, passes(2<<20), int64(3*(2<<20)), "too big: read every pass")
}

// Writers are throttled above dirty_ratio; the flusher writes expired pages
// back; the journal commits by itself after commit= seconds.
func TestWritebackAndPeriodicCommit(t *testing.T) {
	k, p := timedKernel(t, "hdd-7200", func(p *device.Profile) { p.Memory.PageCacheBytes = 8 << 20 })
	writeFile(t, p, "/big", 16<<20, false)
	require.Positive(t, k.Breakdown().Throttle, "16 MiB dirty in an 8 MiB cache")

	k, p = timedKernel(t, "hdd-7200", nil)
	fd, err := p.Open("/f", unix.O_CREAT|unix.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, make([]byte, 4096))
	require.NoError(t, err)
	require.NoError(t, p.Fsync(fd))
	p.Task().Spend(10e6)
	_, err = p.Pwrite(fd, make([]byte, 4096), 0) // a new mtime: the running transaction
	require.NoError(t, err)
	p.Task().Spend(6e9) // past commit=5
	before := k.Breakdown()
	require.NoError(t, p.Fsync(fd))
	b := k.Breakdown()
	require.Equal(t, before.Commits+1, b.Commits, "the periodic commit")
	require.Equal(t, before.Journal, b.Journal, "fsync found the mtime committed: no journal wait")
	require.Equal(t, before.Flushes+2, b.Flushes, "the commit's flush, and fsync's own")

	p.Task().Spend(10e6)
	_, err = p.Pwrite(fd, make([]byte, 4096), 0)
	require.NoError(t, err)
	p.Task().Spend(31e9) // past dirty_expire_centisecs
	before = k.Breakdown()
	require.NoError(t, p.Fsync(fd))
	b = k.Breakdown()
	require.Equal(t, before.DeviceWrites+3, b.DeviceWrites, "the flusher wrote the expired page back; the periodic commit its two blocks")
	require.Equal(t, before.Journal, b.Journal, "and fsync had nothing to commit")
}

// Same calls, same virtual times and breakdowns.
func TestTimeModelDeterministic(t *testing.T) {
	run := func() (int64, Breakdown) {
		k, p := timedKernel(t, "sata-ssd", nil)
		for i := range 20 {
			writeFile(t, p, "/f", 1<<16*(i+1), i%3 == 0)
		}
		return k.Now(), k.Breakdown()
	}
	n1, b1 := run()
	n2, b2 := run()
	require.Equal(t, n1, n2)
	require.Equal(t, b1, b2)
	require.Positive(t, n1)
}

// Task clocks: a thread's clock is its calls' cost; a new process starts at
// the kernel's time; the constant cost model charges the thread too.
func TestTaskClocks(t *testing.T) {
	k := New(vfs.New())
	p := k.Spawn()
	p.Getpid()
	p.Getpid()
	require.Equal(t, 2*int64(DefaultCost), p.Task().Now())
	q := k.Spawn()
	require.Equal(t, k.Now(), q.Task().Now(), "a new process starts at the kernel's time")
	q.Task().Spend(500)
	require.Equal(t, 2*int64(DefaultCost)+500, q.Task().Now())
	require.Equal(t, 2*int64(DefaultCost)+500, k.Now())

	k2, a := timedKernel(t, "nvme", nil)
	b := k2.Spawn()
	a.Task().Spend(1000)
	require.Equal(t, int64(1000), a.Task().Now())
	require.Zero(t, b.Task().Now())
	require.Equal(t, int64(1000), k2.Now(), "the kernel's clock is the latest thread's")
	c := a.Fork()
	require.Equal(t, int64(1000), c.Task().Now(), "a child starts at its parent's time at the fork")
	require.Greater(t, a.Task().Now(), int64(1000), "the fork cost the parent its entry")
}

// O_DIRECT AIO completes when the device does: io_submit of reads returns at once and
// io_getevents waits; buffered AIO is done in io_submit.
func TestAIOTiming(t *testing.T) {
	run := func(flags int) (submit, getevents int64) {
		_, p := timedKernel(t, "hdd-7200", nil)
		writeFile(t, p, "/f", 1<<20, true)
		fd, err := p.Open("/f", unix.O_RDWR|flags, 0)
		require.NoError(t, err)
		ctx, err := p.IoSetup(8)
		require.NoError(t, err)
		var cbs []*Iocb
		for i := range 4 {
			cbs = append(cbs, &Iocb{Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 8192), Offset: int64(i) * 200 << 10})
		}
		t0 := p.Task().Now()
		n, err := p.IoSubmit(ctx, cbs)
		require.NoError(t, err)
		require.Equal(t, 4, n)
		t1 := p.Task().Now()
		ev := make([]IoEvent, 4)
		n, err = p.IoGetevents(ctx, 4, 4, ev, nil)
		require.NoError(t, err)
		require.Equal(t, 4, n)
		return t1 - t0, p.Task().Now() - t1
	}
	s, g := run(unix.O_DIRECT)
	require.Less(t, s, int64(100_000), "direct: io_submit only queues")
	require.Greater(t, g, int64(1_000_000), "direct: io_getevents waits for the disk")
	s, g = run(0)
	require.Less(t, g, int64(1_000), "buffered: complete at submission")
	require.Greater(t, s, g)
}

// The time model is safe for threads calling from several goroutines (run with
// -race): each thread's clock only grows, and the kernel's ends at the latest.
func TestTimeModelConcurrentThreads(t *testing.T) {
	k, p := timedKernel(t, "sata-ssd", nil)
	writeFile(t, p, "/shared", 1<<20, true)
	done := make(chan int64)
	for i := range 4 {
		th := p.NewThread()
		go func() {
			fd, err := th.Open("/shared", unix.O_RDWR, 0)
			if err != nil {
				done <- -1
				return
			}
			buf := make([]byte, 8192)
			last := th.Task().Now()
			for j := range 50 {
				th.Pread(fd, buf, int64((i*50+j)%128)*8192)
				th.Pwrite(fd, buf, int64((i*50+j)%128)*8192)
				if j%10 == 0 {
					th.Fdatasync(fd)
				}
				if th.Task().Now() < last {
					done <- -1
					return
				}
				last = th.Task().Now()
			}
			th.Close(fd)
			done <- th.Task().Now()
		}()
	}
	var latest int64
	for range 4 {
		n := <-done
		require.Positive(t, n)
		latest = max(latest, n)
	}
	require.Equal(t, latest, k.Now())
}

// fsync of a directory commits the namespace changes in the running
// transaction, once.
func TestDirectoryFsyncCommits(t *testing.T) {
	k, p := timedKernel(t, "nvme", nil)
	require.NoError(t, p.Mkdir("/d", 0o755))
	dfd, err := p.Open("/d", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	require.NoError(t, p.Fsync(dfd))
	require.Equal(t, int64(1), k.Breakdown().Commits)
	require.NoError(t, p.Fsync(dfd))
	require.Equal(t, int64(1), k.Breakdown().Commits, "nothing new to commit")
}

// The last of WithDevice and WithCostModel applies.
func TestTimeModelOptionOrder(t *testing.T) {
	prof, err := device.Lookup("ram")
	require.NoError(t, err)
	k := New(vfs.New(), WithDevice(prof), WithCostModel(ConstantCost(7)))
	p := k.Spawn()
	p.Getpid()
	require.Equal(t, int64(7), p.Task().Now())
	require.Nil(t, k.Device())
	k = New(vfs.New(), WithCostModel(ConstantCost(7)), WithDevice(prof))
	require.Equal(t, "ram", k.Device().Name)
}

// A read of /dev/zero clears the caller's buffer (drivers/char/mem.c,
// read_iter_zero): the model charges it as a copy of that size, and nothing
// for /dev/null, which copies nothing.
func TestDevZeroReadCostsACopy(t *testing.T) {
	k, p := timedKernel(t, "nvme", nil)
	task := p.Task()
	require.NoError(t, task.InstallSpecial(5, DevZero{}, unix.O_RDONLY))
	require.NoError(t, task.InstallSpecial(6, DevNull{}, unix.O_RDONLY))
	buf := make([]byte, 1<<20)
	before := task.Now()
	_, err := p.Read(6, buf)
	require.NoError(t, err)
	null := task.Now() - before
	before = task.Now()
	copy0 := k.Breakdown().Copy
	n, err := p.Read(5, buf)
	require.NoError(t, err)
	require.Equal(t, 1<<20, n)
	want := k.tm.copyCost(1 << 20)
	require.Positive(t, want)
	require.Equal(t, want, k.Breakdown().Copy-copy0, "the clear is page-cache copy time")
	require.Equal(t, null+want, task.Now()-before)
}

// ext4 without a journal (fs/ext4/fsync.c, ext4_fsync_nojournal): fsync of an
// appended file writes the data and the inode's block, then flushes; nothing
// commits. fdatasync of an overwrite (size and allocation unchanged) writes
// the data and flushes only.
func TestNoJournalFsync(t *testing.T) {
	k, p := timedKernel(t, "nvme", func(pr *device.Profile) { pr.FS.NoJournal = true })
	fd, err := p.Open("/log", unix.O_CREAT|unix.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = p.Write(fd, make([]byte, 4096))
	require.NoError(t, err)
	b0 := k.Breakdown()
	require.NoError(t, p.Fsync(fd))
	b1 := k.Breakdown()
	require.Equal(t, b0.Commits, b1.Commits, "no journal: no commit")
	require.Equal(t, int64(2), b1.DeviceWrites-b0.DeviceWrites, "the data page and the inode block")
	require.Equal(t, int64(1), b1.Flushes-b0.Flushes)
	_, err = p.Pwrite(fd, make([]byte, 4096), 0)
	require.NoError(t, err)
	require.NoError(t, p.Fdatasync(fd))
	b2 := k.Breakdown()
	require.Equal(t, int64(1), b2.DeviceWrites-b1.DeviceWrites, "an overwrite: the data page only")
	require.Equal(t, int64(1), b2.Flushes-b1.Flushes)

	// The same fsync with the journal commits.
	kj, pj := timedKernel(t, "nvme", nil)
	fd, err = pj.Open("/log", unix.O_CREAT|unix.O_WRONLY, 0o644)
	require.NoError(t, err)
	_, err = pj.Write(fd, make([]byte, 4096))
	require.NoError(t, err)
	c0 := kj.Breakdown().Commits
	require.NoError(t, pj.Fsync(fd))
	require.Equal(t, c0+1, kj.Breakdown().Commits)
}

// fs.free_blocks_us prices the unlink that drops the last link of a file with
// blocks on the device; a file whose data is all still delayed in the page
// cache has none to free, and an empty file neither.
func TestUnlinkFreesBlocks(t *testing.T) {
	const us = 700
	_, p := timedKernel(t, "nvme", func(pr *device.Profile) { pr.FS.FreeBlocksUs = us })
	task := p.Task()
	unlinkCost := func(path string) int64 {
		before := task.Now()
		require.NoError(t, p.Unlink(path))
		return task.Now() - before
	}
	writeFile(t, p, "/empty", 0, false)
	base := unlinkCost("/empty")
	writeFile(t, p, "/dirty", 4608, false)
	require.Equal(t, base, unlinkCost("/dirty"), "delayed allocation: no blocks yet")
	writeFile(t, p, "/synced", 4608, true)
	require.Equal(t, base+us*1000, unlinkCost("/synced"))
	writeFile(t, p, "/a", 4608, true)
	require.NoError(t, p.Link("/a", "/b"))
	require.Equal(t, base, unlinkCost("/a"), "another link keeps the blocks")
	require.Equal(t, base+us*1000, unlinkCost("/b"))
}

// aioDevice is a flash device with a round, constant read latency and
// parallelism 5, for the AIO timing tests.
func aioDevice(p *device.Profile) {
	p.Device.ReadUs, p.Device.CommandUs, p.Device.Parallelism, p.Device.ReadMBs = 40, 0, 5, 4000
	p.Device.ReadP99Us = 0
}

// aioReads keeps depth 4 KiB O_DIRECT reads in flight until total have
// completed, reaping with io_getevents(min_nr, depth): it returns the time
// taken after the first submission and how many events each call returned.
func aioReads(t *testing.T, p *Process, depth, minNr, total int) (elapsed int64, got []int) {
	writeFile(t, p, "/f", 64<<20, true)
	fd, err := p.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
	require.NoError(t, err)
	ctx, err := p.IoSetup(depth)
	require.NoError(t, err)
	cbs := make([]*Iocb, depth)
	for i := range cbs {
		cbs[i] = &Iocb{Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 4096)}
	}
	next := 0
	submit := func(n int) {
		for _, cb := range cbs[:n] {
			cb.Data, cb.Offset = uint64(next), int64(next*7919%16384)*4096
			next++
		}
		m, err := p.IoSubmit(ctx, cbs[:n])
		require.NoError(t, err)
		require.Equal(t, n, m)
	}
	t0 := p.Task().Now()
	submit(depth)
	evs := make([]IoEvent, depth)
	done := 0
	for done < total {
		n, err := p.IoGetevents(ctx, minNr, depth, evs, nil)
		require.NoError(t, err)
		require.GreaterOrEqual(t, n, minNr)
		for _, e := range evs[:n] {
			require.EqualValues(t, 4096, e.Res)
		}
		got = append(got, n)
		done += n
		if next < total {
			submit(min(n, total-next))
		}
	}
	return p.Task().Now() - t0, got
}

// At queue depth 16 with io_getevents(1, 16) (fio's iodepth_batch_complete_min=1)
// events come back as the device completes them, so the queue stays full and
// the reads run at the device's parallelism: 5 units of ~41 µs give ~122k
// IOPS. Waiting for all 16 (min_nr = nr) runs in batches of four rounds of
// the 5 units, the last with one busy: ~98k IOPS.
func TestAIOTrickle(t *testing.T) {
	const total = 1600
	_, p := timedKernel(t, "nvme", aioDevice)
	trickle, got := aioReads(t, p, 16, 1, total)
	require.Less(t, got[0], 16, "the first call returns what completed first, not all 16")
	require.Less(t, slices.Max(got), 16)
	perRead := float64(trickle) / total
	svc := 40e3 + 4096/4000e6*1e9 // one read's service time
	require.InDelta(t, svc/5, perRead, svc/5*0.1, "one read every service/parallelism ns")

	_, p = timedKernel(t, "nvme", aioDevice)
	batch, got := aioReads(t, p, 16, 16, total)
	for _, n := range got {
		require.Equal(t, 16, n, "min_nr = nr: whole batches")
	}
	require.InDelta(t, 4*svc/16, float64(batch)/total, 4*svc/16*0.1, "16 reads take four rounds of the 5 units")
	require.Greater(t, float64(batch)/float64(trickle), 1.15)
}

// io_getevents under a time model returns events in completion order, whatever
// the submission order (a buffered read is complete at io_submit, an O_DIRECT
// one when the device is done); a timeout before the min_nr-th completion
// returns what completed by then, after the timeout.
func TestAIOCompletionOrderAndTimeout(t *testing.T) {
	k, p := timedKernel(t, "nvme", aioDevice)
	writeFile(t, p, "/f", 1<<20, true)
	dfd, err := p.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
	require.NoError(t, err)
	bfd, err := p.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
	_, err = p.Pread(bfd, make([]byte, 4096), 0) // in the page cache
	require.NoError(t, err)
	ctx, err := p.IoSetup(4)
	require.NoError(t, err)
	cbs := []*Iocb{
		{Data: 1, Opcode: IOCB_CMD_PREAD, Fd: uint32(dfd), Buf: make([]byte, 4096), Offset: 8192},
		{Data: 2, Opcode: IOCB_CMD_PREAD, Fd: uint32(bfd), Buf: make([]byte, 4096)},
		{Data: 3, Opcode: IOCB_CMD_PREAD, Fd: uint32(dfd), Buf: make([]byte, 4096), Offset: 16384},
	}
	_, err = p.IoSubmit(ctx, cbs)
	require.NoError(t, err)
	evs := make([]IoEvent, 4)
	t0 := p.Task().Now()
	n, err := p.IoGetevents(ctx, 2, 4, evs, &unix.Timespec{Nsec: 1000})
	require.NoError(t, err)
	require.Equal(t, 1, n, "within 1 µs only the buffered read is complete")
	require.EqualValues(t, 2, evs[0].Data)
	require.Equal(t, t0+1000+p.k.tm.cpu.syscall, p.Task().Now(), "fewer than min_nr: the call waits out its timeout")
	n, err = p.IoGetevents(ctx, 0, 4, evs, nil)
	require.NoError(t, err)
	require.Zero(t, n, "min_nr 0 does not wait")
	t1 := p.Task().Now()
	n, err = p.IoGetevents(ctx, 2, 4, evs, nil)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.EqualValues(t, []uint64{1, 3}, []uint64{evs[0].Data, evs[1].Data})
	require.Greater(t, p.Task().Now()-t1, int64(30_000), "waited for the device")
	before := k.Breakdown()
	n, err = p.IoGetevents(ctx, 1, 4, evs, &unix.Timespec{Nsec: 5000})
	require.NoError(t, err)
	require.Zero(t, n, "nothing pending: the timeout")
	after := k.Breakdown()
	require.Equal(t, before.Device, after.Device, "nothing in flight: no device wait")
	require.EqualValues(t, 5000, after.Sleep-before.Sleep, "the timeout is slept out")
}

// Threads sharing an AIO context under a time model (run with -race): every
// submitted read is reaped once, by one thread or the other.
func TestAIOSharedContextThreads(t *testing.T) {
	_, p := timedKernel(t, "nvme", aioDevice)
	writeFile(t, p, "/f", 1<<20, true)
	fd, err := p.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
	require.NoError(t, err)
	ctx, err := p.IoSetup(64)
	require.NoError(t, err)
	const threads, each = 4, 50
	reaped := make(chan []uint64)
	for i := range threads {
		th := p.NewThread()
		go func() {
			var got []uint64
			evs := make([]IoEvent, 8)
			for j := range each {
				cb := &Iocb{Data: uint64(i*each + j), Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 4096), Offset: int64(j) * 4096}
				if n, err := th.IoSubmit(ctx, []*Iocb{cb}); err != nil || n != 1 {
					break
				}
				n, _ := th.IoGetevents(ctx, 1, len(evs), evs, nil)
				for _, e := range evs[:n] {
					got = append(got, e.Data)
				}
			}
			reaped <- got
		}()
	}
	var all []uint64
	for range threads {
		all = append(all, <-reaped...)
	}
	evs := make([]IoEvent, 64)
	for len(all) < threads*each {
		n, err := p.IoGetevents(ctx, 1, len(evs), evs, nil)
		require.NoError(t, err)
		require.Positive(t, n)
		for _, e := range evs[:n] {
			all = append(all, e.Data)
		}
	}
	slices.Sort(all)
	for i, d := range all {
		require.EqualValues(t, i, d)
	}
}

// io_destroy under a time model returns when the requests in flight complete,
// as io_getevents waiting for all of them would (io_destroy(2): it blocks on
// the operations that could not be cancelled); with nothing in flight it
// costs the call alone.
func TestAIODestroyWaitsForInFlight(t *testing.T) {
	var syscall int64
	run := func(reap bool) (destroy, total int64) {
		k, p := timedKernel(t, "nvme", aioDevice)
		syscall = k.tm.cpu.syscall
		writeFile(t, p, "/f", 1<<20, true)
		fd, err := p.Open("/f", unix.O_RDONLY|unix.O_DIRECT, 0)
		require.NoError(t, err)
		ctx, err := p.IoSetup(4)
		require.NoError(t, err)
		cbs := []*Iocb{
			{Data: 1, Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 4096), Offset: 0},
			{Data: 2, Opcode: IOCB_CMD_PREAD, Fd: uint32(fd), Buf: make([]byte, 1<<16), Offset: 1 << 19},
		}
		t0 := p.Task().Now()
		_, err = p.IoSubmit(ctx, cbs)
		require.NoError(t, err)
		if reap {
			n, err := p.IoGetevents(ctx, 2, 2, make([]IoEvent, 2), nil)
			require.NoError(t, err)
			require.Equal(t, 2, n)
		}
		t1 := p.Task().Now()
		require.NoError(t, p.IoDestroy(ctx))
		return p.Task().Now() - t1, p.Task().Now() - t0
	}
	waited, total := run(false)
	_, reapTotal := run(true)
	require.Greater(t, waited, int64(30_000), "io_destroy waits for the device")
	require.Equal(t, reapTotal, total+syscall, "destroying waits as long as reaping every event would (plus the reaping call's own cost)")
}

package fio

import (
	bin "encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"path"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// Now is the virtual clock a job's latencies are read from: the calling
// task's own (sim.Task.Now).
func Now(t *sim.Task) int64 { return t.Now() }

// Dir holds what one direction (read, write) or the syncs of a job did.
type Dir struct {
	IOBytes  int64
	TotalIOs int64
	// Clat holds the completion latencies in ns: from the call (or the
	// io_submit) to its result (or the io_getevents that reaped it).
	Clat *hdrhistogram.Histogram
}

func newDir() Dir { return Dir{Clat: hdrhistogram.New(1, int64(time.Hour), 3)} }

// JobResult is one job (one of numjobs clones) after its run.
type JobResult struct {
	Job     *Job
	JobNum  int   // 0..numjobs-1
	Jobs    int   // clones this result sums: 1, or more after Grouped
	Start   int64 // virtual time at which the job's I/O began (after its open)
	Runtime int64 // virtual ns from Start to the job's last result
	Read    Dir
	Write   Dir
	Sync    Dir // every fsync and fdatasync of fsync= and fdatasync=, with its latency
	// Fsyncs counts the fsync calls of fsync= alone: fio's total_io_u of
	// DDIR_SYNC, which its JSON reports as sync.total_ios (fdatasync= issues
	// DDIR_DATASYNC, counted apart and not reported; stat.c).
	Fsyncs int64
	Err    error // an I/O that failed ends the job (fio's default continue_on_error=none)
}

// Options says how jobs run.
type Options struct {
	// Layout is the handler the files are laid out through before the timed
	// part (the kernel itself, under any interposer and fault); nil means h.
	Layout sim.Handler
	// Laid, when set, is called once the files are laid out, before the
	// jobs start (what follows is the jobs' time).
	Laid func()
	// Payload keeps the bytes every job and the layout write. Without it the
	// run is payload-free wherever nothing looks at those bytes: the layout
	// and every job without verify= write extents, not bytes
	// (sim.ThreadGroup.SetPayloadFree), so a job's cost grows with its number
	// of I/Os, not its size, and its file costs no memory for its data. The
	// results are the same either way: the model's time and accounting do not
	// depend on the bytes (what a job reads back without verify= is not
	// looked at; payload-free, it reads zeros).
	Payload bool
}

// Run runs the jobs on kernel k, their calls going through h (the kernel or
// an interposer stack over it). Each job clone is a process of its own; the
// clones run in one goroutine in virtual-time order (sim.RunByClock): the
// clone whose clock is earliest makes its next step (one I/O, or one
// io_submit or io_getevents), so the same jobs give the same results and
// clones that share a lock, the journal or the device wait for each other. Errors are those of the setup (a file that cannot be created); an
// I/O error ends its job and is kept in its JobResult.
func Run(k *sim.Kernel, h sim.Handler, jobs []*Job, opts Options) ([]*JobResult, error) {
	if opts.Layout == nil {
		opts.Layout = h
	}
	// As fio: the files are laid out first, then the jobs start.
	for _, j := range jobs {
		for n := 0; n < j.NumJobs; n++ {
			lp := k.Spawn().Through(opts.Layout)
			lp.Task().Group().SetPayloadFree(!opts.Payload)
			err := lay(lp, j, j.FileName(n))
			lp.Exit()
			if err != nil {
				return nil, fmt.Errorf("fio: job %s: laying out %s: %w", j.Name, j.FileName(n), err)
			}
		}
	}
	if opts.Laid != nil {
		opts.Laid()
	}
	var runs []*runner
	for _, j := range jobs {
		for n := 0; n < j.NumJobs; n++ {
			r, err := start(k, h, j, n, !opts.Payload && j.Verify == "")
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
	}
	procs := make([]*sim.Process, len(runs))
	for i, r := range runs {
		procs[i] = r.p
	}
	sim.RunByClock(procs, func(i int) bool {
		runs[i].step()
		return !runs[i].done
	})
	out := make([]*JobResult, len(runs))
	for i, r := range runs {
		start := max(r.t0, r.rampEnd) // ramp_time is not part of the runtime
		r.res.Start, r.res.Runtime = start, max(r.end-start, 0)
		out[i] = &r.res
	}
	return out, nil
}

// FileName returns the file a job clone uses: filename, or fio's default
// jobname.jobnum.0, in directory.
func (j *Job) FileName(jobnum int) string {
	name := j.Filename
	if name == "" {
		name = fmt.Sprintf("%s.%d.0", j.Name, jobnum)
	}
	if path.IsAbs(name) {
		return name
	}
	return path.Join(j.Directory, name)
}

type runner struct {
	j    *Job
	p    *sim.Process
	fd   int
	res  JobResult
	rng  *rand.Rand
	buf  []byte
	done bool

	t0, end   int64
	deadline  int64    // virtual time at which the job stops (0: none)
	next      [2]int64 // next sequential offset, per direction (read, write), as fio
	pos       int64    // the file offset (sync engine)
	nblocks   int64
	perm      *permutation
	syncDue   bool  // fsync=/fdatasync= asks for a sync before the next I/O
	issued    int64 // bytes issued
	writes    int64 // writes since the start, for fsync=/fdatasync=
	ctx       sim.AioContext
	inflight  int
	submitted map[uint64]aioReq
	seq       uint64
	events    []sim.IoEvent
	iocbs     []*sim.Iocb // the one-iocb array io_submit takes
	free      []*sim.Iocb // iocbs (with their buffers) of no request in flight: iodepth in all

	name     string
	flags    int          // open flags of the job's file
	zipf     *zipf        // random_distribution=zipf
	mapping  []byte       // ioengine=mmap: the file's mapping
	worker   *sim.Process // ioengine=posixaio: the thread that does the I/O
	rampEnd  int64        // virtual time before which nothing is counted (ramp_time)
	paced    [2]int64     // bytes issued per direction, for rate=
	pacedIOs [2]int64     // I/Os issued per direction, for rate_iops=
	// verify=crc32c: the crc32c of each written block by offset, the
	// offsets in the order first written, and the verify phase's place.
	crcs      map[int64]uint32
	written   []int64
	verifying bool
	verified  int
}

type aioReq struct {
	write bool
	t0    int64
	cb    *sim.Iocb // back to the free list when reaped
}

func start(k *sim.Kernel, h sim.Handler, j *Job, n int, payloadFree bool) (*runner, error) {
	name := j.FileName(n)
	p := k.Spawn().Through(h)
	p.Task().Group().SetPayloadFree(payloadFree)
	r := &runner{j: j, p: p, name: name, res: JobResult{Job: j, JobNum: n, Jobs: 1, Read: newDir(), Write: newDir(), Sync: newDir()}}
	r.rng = rand.New(rand.NewPCG(j.RandSeed, uint64(n)))
	r.pos = 0 // a file opens at offset 0
	flags := unix.O_RDONLY
	if j.Writes() {
		flags = unix.O_RDWR | unix.O_CREAT
	}
	if j.Direct {
		flags |= unix.O_DIRECT
	}
	switch j.Sync {
	case "sync":
		flags |= unix.O_SYNC
	case "dsync":
		flags |= unix.O_DSYNC
	}
	r.flags = flags
	if err := r.open(j.Writes()); err != nil {
		return nil, err
	}
	fd := r.fd
	r.nblocks = j.Size / j.BS
	r.perm = newPermutation(r.nblocks, j.RandSeed+uint64(n))
	if j.ZipfTheta > 0 {
		r.zipf = newZipf(uint64(r.nblocks), j.ZipfTheta, rand.New(rand.NewPCG(j.RandSeed^0x7a697066, uint64(n))))
	}
	if j.Verify != "" {
		r.crcs = map[int64]uint32{}
	}
	if j.IOEngine == "posixaio" {
		wt, err := p.Task().Clone(0)
		if err != nil {
			return nil, fmt.Errorf("fio: job %s: posixaio thread: %w", j.Name, err)
		}
		r.worker = sim.NewProcess(h, wt)
	}
	r.buf = make([]byte, j.BS)
	if !j.ZeroBuffers {
		for i := range r.buf {
			r.buf[i] = byte(i*7 + n)
		}
	}
	if j.IOEngine == "libaio" {
		var err error
		if r.ctx, err = p.IoSetup(j.IODepth); err != nil {
			return nil, fmt.Errorf("fio: job %s: io_setup: %w", j.Name, err)
		}
		r.submitted = map[uint64]aioReq{}
		r.events = make([]sim.IoEvent, j.IODepth)
		for range j.IODepth {
			r.free = append(r.free, &sim.Iocb{Fd: uint32(fd), Buf: make([]byte, j.BS)})
		}
	}
	r.t0 = Now(p.Task())
	r.end = r.t0
	r.rampEnd = r.t0 + int64(j.RampTime)
	if j.Runtime > 0 {
		// fio's runtime follows ramp_time.
		r.deadline = r.rampEnd + int64(j.Runtime)
	}
	return r, nil
}

// open opens the job's file for its I/O as fio does: the open, fadvise
// DONTNEED (invalidate=1) and the access hint (fadvise_hint=1), and for
// ioengine=mmap a shared mapping of the whole file (PROT_WRITE for a job that
// writes, with write the job's direction).
func (r *runner) open(write bool) error {
	j, p := r.j, r.p
	fd, err := p.Open(r.name, r.flags, 0o600)
	if err != nil {
		return fmt.Errorf("fio: job %s: open %s: %w", j.Name, r.name, err)
	}
	r.fd, r.pos = fd, 0
	hint := unix.FADV_SEQUENTIAL
	if j.Random() {
		hint = unix.FADV_RANDOM
	}
	for _, adv := range []int{unix.FADV_DONTNEED, hint} {
		if err := p.Fadvise(fd, 0, j.Size, adv); err != nil {
			return fmt.Errorf("fio: job %s: fadvise %s: %w", j.Name, r.name, err)
		}
	}
	if j.IOEngine == "mmap" {
		prot := 0
		if write {
			prot |= unix.PROT_WRITE
		}
		if j.Reads() || !write {
			prot |= unix.PROT_READ
		}
		if r.mapping, err = p.Mmap(fd, 0, int(j.Size), prot, unix.MAP_SHARED); err != nil {
			return fmt.Errorf("fio: job %s: mmap %s: %w", j.Name, r.name, err)
		}
	}
	return nil
}

// lay creates the job's file as fio does before a job (as strace shows fio
// 3.33 doing it on Linux): open O_WRONLY|O_CREAT (and O_TRUNC for a job that
// reads), allocate it as fallocate= says, and for a job that reads write it
// whole and fsync it ("Laying out IO file"); then drop its cached pages
// (fadvise DONTNEED) and close it. A file already as large as size is used as
// it is. Every call is made but the writes: fio writes the file in bs-sized
// writes, and the model puts the data they leave in place at once
// (sim.Process.Populate: written extents that read zeros, at a cost in
// proportion to the file's extents, not its bytes), then makes fio's fsync.
// What the layout leaves is the same either way (the file's size and written,
// settled extents, durable, none of it cached), and nothing of fio's results
// depends on the bytes it wrote (fio's random data, or zeros with
// zero_buffers): verify= checks only the blocks the job itself wrote.
func lay(p *sim.Process, j *Job, name string) error {
	if dir := path.Dir(name); dir != "/" {
		if err := MkdirAll(p, dir); err != nil {
			return err
		}
	}
	var st unix.Stat_t
	if err := p.Stat(name, &st); err == nil && st.Size >= j.Size {
		return nil
	}
	flags := unix.O_WRONLY | unix.O_CREAT
	if j.Reads() {
		flags |= unix.O_TRUNC
	}
	fd, err := p.Open(name, flags, 0o644)
	if err != nil {
		return err
	}
	defer p.Close(fd)
	switch j.Fallocate {
	case "native", "posix":
		err = p.Fallocate(fd, 0, 0, j.Size)
	case "keep":
		err = p.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, j.Size)
	case "truncate":
		err = p.Ftruncate(fd, j.Size)
	}
	if err != nil {
		return err
	}
	if j.Reads() {
		if j.Fallocate != "truncate" {
			if err := p.Ftruncate(fd, j.Size); err != nil {
				return err
			}
		}
		if err := p.Populate(fd, 0, j.Size); err != nil {
			return err
		}
		if err := p.Fsync(fd); err != nil {
			return err
		}
	}
	return p.Fadvise(fd, 0, j.Size, unix.FADV_DONTNEED)
}

// MkdirAll makes dir and the directories above it that do not exist, by
// mkdir calls of process p (mkdir -p): how fio makes directory= and how a
// scenario makes the directories of its files.
func MkdirAll(p *sim.Process, dir string) error {
	if dir == "/" || dir == "." {
		return nil
	}
	if err := MkdirAll(p, path.Dir(dir)); err != nil {
		return err
	}
	if err := p.Mkdir(dir, 0o755); err != nil && err != unix.EEXIST {
		return err
	}
	return nil
}

// finished reports whether the job has issued all it should.
func (r *runner) finished() bool {
	now := Now(r.p.Task())
	if r.deadline > 0 && now >= r.deadline {
		return true
	}
	if r.j.TimeBased && r.deadline > 0 {
		return false
	}
	return r.issued >= r.j.IOBytes()
}

// offset returns the next I/O's offset: random ones from one random map for
// both directions (each block once per pass), sequential ones from an offset
// of each direction's own (rw=rw reads 0, 4k, 8k... and writes 0, 4k...).
func (r *runner) offset(w bool) int64 {
	j := r.j
	if j.Random() {
		switch {
		case r.zipf != nil:
			return int64(r.zipf.next()) * j.BS
		case j.NoRandomMap:
			return r.rng.Int64N(r.nblocks) * j.BS
		}
		return r.perm.next() * j.BS
	}
	d := 0
	if w {
		d = 1
	}
	if r.next[d]+j.BS > j.Size {
		r.next[d] = 0
	}
	off := r.next[d]
	r.next[d] += j.BS
	return off
}

// isWrite draws the direction of the next I/O.
func (r *runner) isWrite() bool {
	switch {
	case !r.j.Writes():
		return false
	case !r.j.Reads():
		return true
	}
	return r.rng.IntN(100) >= r.j.MixRead
}

func (r *runner) step() {
	if r.syncDue && !r.finished() {
		// fio issues the sync that fsync=N or fdatasync=N asks for before
		// the next I/O: none follows the job's last write.
		r.syncDue = false
		if !r.sync() {
			return
		}
		return
	}
	if r.j.IOEngine == "libaio" {
		r.stepAio()
		return
	}
	if r.verifying {
		r.verifyStep()
		return
	}
	if r.finished() {
		r.done1()
		return
	}
	if r.issued > 0 {
		// thinktime: the work after an I/O, before the next one.
		r.p.Task().Spend(int64(r.j.ThinkTime))
	}
	w := r.isWrite()
	if r.pace(w) && r.finished() {
		return // the wait for rate= reached the runtime: the next step ends the job
	}
	off := r.offset(w)
	t := r.p.Task()
	t0 := Now(t)
	r.stamp(w, off, r.buf)
	n, err := r.io(w, off, r.buf)
	r.issued += r.j.BS
	if err != nil {
		r.fail(fmt.Errorf("%s at offset %d: %w", dirName(w), off, err))
		return
	}
	r.account(w, t0, int64(n))
	r.end = Now(t)
}

// io makes one I/O of the job's engine (sync, psync, pvsync2, posixaio or
// mmap) at off and returns its result.
func (r *runner) io(w bool, off int64, buf []byte) (n int, err error) {
	switch r.j.IOEngine {
	case "sync":
		// read/write at the file offset, with an lseek only when the
		// offset is not already there (as fio's sync engine).
		if r.pos != off {
			_, err = r.p.Seek(r.fd, off, unix.SEEK_SET)
		}
		if err == nil {
			if w {
				n, err = r.p.Write(r.fd, buf)
			} else {
				n, err = r.p.Read(r.fd, buf)
			}
		}
		r.pos = off + int64(n)
		return n, err
	case "pvsync2":
		// fio's pvsync2: one iovec at an explicit offset, RWF_HIPRI with hipri.
		flags := 0
		if r.j.Hipri {
			flags = unix.RWF_HIPRI
		}
		if w {
			return r.p.Pwritev2(r.fd, [][]byte{buf}, off, flags)
		}
		return r.p.Preadv2(r.fd, [][]byte{buf}, off, flags)
	case "posixaio":
		// glibc's aio_read/aio_write: a thread of the process makes the
		// pread/pwrite once it takes the request; aio_suspend waits for it.
		wt := r.worker.Task()
		wt.SleepUntil(Now(r.p.Task()))
		if w {
			n, err = r.worker.Pwrite(r.fd, buf, off)
		} else {
			n, err = r.worker.Pread(r.fd, buf, off)
		}
		r.p.Task().SleepUntil(Now(wt))
		return n, err
	case "mmap":
		// fio's mmap engine: a memcpy to or from the mapping; with direct=1
		// an msync(MS_SYNC) of the range ("not really direct").
		m := r.mapping[off : off+int64(len(buf))]
		if w {
			n = copy(m, buf)
		} else {
			n = copy(buf, m)
		}
		if r.j.Direct {
			if err := r.p.Msync(m, unix.MS_SYNC); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
	if w {
		return r.p.Pwrite(r.fd, buf, off)
	}
	return r.p.Pread(r.fd, buf, off)
}

// pace waits, in virtual time, as long as rate= and rate_iops= ask before the
// next I/O of direction w: the bytes and I/Os issued in that direction so far
// may not be ahead of rate times the time since the job began. It counts the
// I/O and reports whether it waited.
func (r *runner) pace(w bool) bool {
	d := 0
	if w {
		d = 1
	}
	at := int64(0)
	if rate := r.j.Rate[d]; rate > 0 {
		at = max(at, r.t0+int64(float64(r.paced[d])*1e9/float64(rate)))
	}
	if iops := r.j.RateIOPS[d]; iops > 0 {
		at = max(at, r.t0+int64(float64(r.pacedIOs[d])*1e9/float64(iops)))
	}
	r.paced[d] += r.j.BS
	r.pacedIOs[d]++
	t := r.p.Task()
	if at <= Now(t) {
		return false
	}
	t.SleepUntil(at)
	return true
}

// stamp prepares a write of buf at off for verify=: the block's offset in its
// first bytes (as fio's verify header holds it, so a block read back from
// elsewhere fails), and its crc32c kept for the verify phase.
func (r *runner) stamp(w bool, off int64, buf []byte) {
	if !w || r.crcs == nil {
		return
	}
	if len(buf) >= 8 {
		bin.LittleEndian.PutUint64(buf, uint64(off))
	}
	if _, ok := r.crcs[off]; !ok {
		r.written = append(r.written, off)
	}
	r.crcs[off] = crc32.Checksum(buf, castagnoli)
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// done1 ends the job's I/O: with verify=, the file is closed and opened
// again and the verify phase reads back every block written; otherwise the
// job finishes.
func (r *runner) done1() {
	if r.crcs == nil || r.verifying || r.res.Err != nil {
		r.finish()
		return
	}
	r.finish()
	r.done = false
	r.verifying = true
	if r.ctx != 0 {
		var err error
		if r.ctx, err = r.p.IoSetup(r.j.IODepth); err != nil {
			r.fail(fmt.Errorf("verify: io_setup: %w", err))
			return
		}
	}
	if err := r.open(false); err != nil {
		r.fail(err)
	}
}

// verifyStep reads back the next written block (in the order first
// written, as fio) with the job's engine and checks its crc32c; a block that
// differs ends the job with EILSEQ, the error fio reports for a failed verify.
func (r *runner) verifyStep() {
	if r.verified == len(r.written) {
		r.verifying = false
		r.finish()
		return
	}
	off := r.written[r.verified]
	r.verified++
	t := r.p.Task()
	t0 := Now(t)
	var n int
	var err error
	if r.ctx != 0 {
		n, err = r.aioRead(off, r.buf)
	} else {
		n, err = r.io(false, off, r.buf)
	}
	if err != nil {
		r.fail(fmt.Errorf("verify: read at offset %d: %w", off, err))
		return
	}
	r.account(false, t0, int64(n))
	r.end = Now(t)
	if got, want := crc32.Checksum(r.buf[:n], castagnoli), r.crcs[off]; n != len(r.buf) || got != want {
		r.fail(fmt.Errorf("crc32c: verify failed at file %s offset %d, length %d (want crc32c %08x, read %d bytes with crc32c %08x): %w",
			r.name, off, len(r.buf), want, n, got, unix.EILSEQ))
	}
}

// aioRead reads one block through libaio: an io_submit of one iocb and the
// io_getevents that reaps it.
func (r *runner) aioRead(off int64, buf []byte) (int, error) {
	cb := &sim.Iocb{Fd: uint32(r.fd), Buf: buf, Offset: off, Opcode: sim.IOCB_CMD_PREAD, Data: r.seq}
	r.seq++
	if n, err := r.p.IoSubmit(r.ctx, []*sim.Iocb{cb}); err != nil || n != 1 {
		return 0, fmt.Errorf("io_submit: %d of 1: %v", n, err)
	}
	n, err := r.p.IoGetevents(r.ctx, 1, 1, r.events[:1], nil)
	if err != nil || n != 1 {
		return 0, fmt.Errorf("io_getevents: %d of 1: %v", n, err)
	}
	if res := r.events[0].Res; res < 0 {
		return 0, unix.Errno(-res)
	}
	return int(r.events[0].Res), nil
}

func dirName(w bool) string {
	if w {
		return "write"
	}
	return "read"
}

func (r *runner) account(w bool, t0, n int64) {
	d := &r.res.Read
	if w {
		d = &r.res.Write
		r.writes++
		if (r.j.Fsync > 0 && r.writes%r.j.Fsync == 0) || (r.j.Fdatasync > 0 && r.writes%r.j.Fdatasync == 0) {
			r.syncDue = true
		}
	}
	if t0 < r.rampEnd {
		return // ramp_time: done, not counted
	}
	d.IOBytes += n
	d.TotalIOs++
	_ = d.Clat.RecordValue(max(Now(r.p.Task())-t0, 0))
}

// sync issues the due sync: fdatasync when fdatasync= asked for it, else
// fsync. It reports false when the sync failed (the job is then over).
func (r *runner) sync() bool {
	t0 := Now(r.p.Task())
	var err error
	data := r.j.Fdatasync > 0 && r.writes%r.j.Fdatasync == 0
	switch {
	case r.mapping != nil:
		// fio's mmap engine syncs the mapping: msync(MS_SYNC).
		err = r.p.Msync(r.mapping, unix.MS_SYNC)
	case data:
		err = r.p.Fdatasync(r.fd)
	default:
		err = r.p.Fsync(r.fd)
	}
	if !data && t0 >= r.rampEnd {
		r.res.Fsyncs++
	}
	if err != nil {
		r.fail(fmt.Errorf("sync: %w", err))
		return false
	}
	if t0 < r.rampEnd {
		r.end = Now(r.p.Task())
		return true
	}
	r.res.Sync.TotalIOs++
	_ = r.res.Sync.Clat.RecordValue(max(Now(r.p.Task())-t0, 0))
	r.end = Now(r.p.Task())
	return true
}

func (r *runner) finish() {
	if r.done {
		return
	}
	if r.j.EndFsync && r.res.Err == nil && !r.verifying {
		if err := r.p.Fsync(r.fd); err != nil {
			r.res.Err = fmt.Errorf("end_fsync: %w", err)
		}
		r.end = Now(r.p.Task())
	}
	// The runtime ends with the last I/O (or end_fsync), as fio's does;
	// tearing down is not part of it.
	if r.ctx != 0 {
		r.p.IoDestroy(r.ctx)
	}
	if r.mapping != nil {
		// Stores reach the file by munmap at the latest.
		if err := r.p.Munmap(r.mapping); err != nil && r.res.Err == nil {
			r.res.Err = fmt.Errorf("munmap: %w", err)
		}
		r.mapping = nil
	}
	r.p.Close(r.fd)
	r.done = true
}

func (r *runner) fail(err error) {
	if r.res.Err == nil {
		r.res.Err = err
	}
	r.end = Now(r.p.Task())
	r.finish()
}

// stepAio makes one call of fio's libaio loop with its default batching
// (iodepth_batch_submit=1, iodepth_batch_complete_min=1): while the queue
// has room and the job has I/O left, an io_submit of one iocb; when the
// queue is full or nothing is left to issue, an io_getevents(min_nr=1,
// nr=iodepth) that reaps what completed. A request's completion latency runs
// from its io_submit to the io_getevents that reaped it.
func (r *runner) stepAio() {
	t := r.p.Task()
	if r.verifying {
		r.verifyStep()
		return
	}
	if r.inflight < r.j.IODepth && !r.finished() {
		w := r.isWrite()
		if r.pace(w) && r.finished() {
			return
		}
		cb := r.free[len(r.free)-1]
		r.free = r.free[:len(r.free)-1]
		cb.Data, cb.Offset, cb.Opcode = r.seq, r.offset(w), sim.IOCB_CMD_PREAD
		if w {
			cb.Opcode = sim.IOCB_CMD_PWRITE
			copy(cb.Buf, r.buf)
			r.stamp(w, cb.Offset, cb.Buf)
		}
		r.issued += r.j.BS
		r.seq++
		r.iocbs = append(r.iocbs[:0], cb)
		t0 := Now(t)
		if n, err := r.p.IoSubmit(r.ctx, r.iocbs); err != nil || n != 1 {
			r.fail(fmt.Errorf("io_submit: %d of 1: %v", n, err))
			return
		}
		r.submitted[cb.Data] = aioReq{write: w, t0: t0, cb: cb}
		r.inflight++
		r.end = Now(t)
		return
	}
	if r.inflight == 0 {
		r.done1()
		return
	}
	n, err := r.p.IoGetevents(r.ctx, 1, len(r.events), r.events, nil)
	if err != nil {
		r.fail(fmt.Errorf("io_getevents: %w", err))
		return
	}
	if n == 0 {
		r.fail(fmt.Errorf("io_getevents: no completion with %d I/Os in flight", r.inflight))
		return
	}
	for _, ev := range r.events[:n] {
		req := r.submitted[ev.Data]
		delete(r.submitted, ev.Data)
		r.free = append(r.free, req.cb)
		r.inflight--
		if ev.Res < 0 {
			r.fail(fmt.Errorf("%s: %v", dirName(req.write), unix.Errno(-ev.Res)))
			return
		}
		r.account(req.write, req.t0, ev.Res)
	}
	r.end = Now(t)
}

// permutation walks 0..n-1 in a pseudo-random order, each value once per
// pass (fio's random map: a size-based random job touches every block once),
// with O(1) state: a full-period linear congruential generator modulo the
// next power of two (a = 5, c odd: Hull-Dobell), values >= n skipped.
type permutation struct {
	n, mask, x, c uint64
}

func newPermutation(n int64, seed uint64) *permutation {
	m := uint64(1)
	for m < uint64(n) {
		m <<= 1
	}
	return &permutation{n: uint64(n), mask: m - 1, x: seed & (m - 1), c: (seed*2+1)&(m-1) | 1}
}

func (p *permutation) next() int64 {
	for {
		p.x = (p.x*5 + p.c) & p.mask
		if p.x < p.n {
			return int64(p.x)
		}
	}
}

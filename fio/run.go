package fio

import (
	"fmt"
	"math/rand/v2"
	"path"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"golang.org/x/sys/unix"

	"iosim/sim"
)

// Now is the virtual clock a job's latencies are read from: the time the
// calling task sees. It is the kernel's clock today; with per-task clocks it is
// the task's own.
func Now(t *sim.Task) int64 { return t.Kernel().Now() }

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
	Runtime int64 // virtual ns from the job's first I/O to its last result
	Read    Dir
	Write   Dir
	Sync    Dir
	Err     error // an I/O that failed ends the job (fio's default continue_on_error=none)
}

// Options says how jobs run.
type Options struct {
	// Layout is the handler the files are laid out through before the timed
	// part (the kernel itself, under any interposer and fault); nil means h.
	Layout sim.Handler
}

// Run runs the jobs on kernel k, their calls going through h (the kernel or
// an interposer stack over it). Each job clone is a process of its own; the
// clones run round robin in one goroutine, one step (one I/O, or one
// io_submit/io_getevents round) each in turn, so the same jobs give the same
// results. Errors are those of the setup (a file that cannot be created); an
// I/O error ends its job and is kept in its JobResult.
func Run(k *sim.Kernel, h sim.Handler, jobs []*Job, opts Options) ([]*JobResult, error) {
	if opts.Layout == nil {
		opts.Layout = h
	}
	var runs []*runner
	for _, j := range jobs {
		for n := 0; n < j.NumJobs; n++ {
			r, err := start(k, h, opts.Layout, j, n)
			if err != nil {
				return nil, err
			}
			runs = append(runs, r)
		}
	}
	for live := len(runs); live > 0; {
		live = 0
		for _, r := range runs {
			if !r.done {
				r.step()
				live++
			}
		}
	}
	out := make([]*JobResult, len(runs))
	for i, r := range runs {
		r.res.Runtime = r.end - r.t0
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
	deadline  int64 // virtual time at which the job stops (0: none)
	next      int64 // next sequential offset
	issued    int64 // bytes issued
	writes    int64 // writes since the start, for fsync=/fdatasync=
	ctx       sim.AioContext
	inflight  int
	submitted map[uint64]aioReq
	seq       uint64
	events    []sim.IoEvent
	iocbs     []*sim.Iocb
}

type aioReq struct {
	write bool
	t0    int64
	n     int64
}

func start(k *sim.Kernel, h, layout sim.Handler, j *Job, n int) (*runner, error) {
	name := j.FileName(n)
	base := k.Spawn()
	lp := base.Through(layout)
	if err := lay(lp, j, name); err != nil {
		return nil, fmt.Errorf("fio: job %s: laying out %s: %w", j.Name, name, err)
	}
	p := base.Through(h)
	r := &runner{j: j, p: p, res: JobResult{Job: j, JobNum: n, Read: newDir(), Write: newDir(), Sync: newDir()}}
	r.rng = rand.New(rand.NewPCG(j.RandSeed, uint64(n)))
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
	fd, err := p.Open(name, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("fio: job %s: open %s: %w", j.Name, name, err)
	}
	r.fd = fd
	r.buf = make([]byte, j.BS)
	for i := range r.buf {
		r.buf[i] = byte(i*7 + n)
	}
	if j.IOEngine == "libaio" {
		if r.ctx, err = p.IoSetup(j.IODepth); err != nil {
			return nil, fmt.Errorf("fio: job %s: io_setup: %w", j.Name, err)
		}
		r.submitted = map[uint64]aioReq{}
		r.events = make([]sim.IoEvent, j.IODepth)
	}
	r.t0 = Now(p.Task())
	r.end = r.t0
	if j.Runtime > 0 {
		r.deadline = r.t0 + int64(j.Runtime)
	}
	return r, nil
}

// lay creates the job's file as fio does before a job: a job that reads finds
// size bytes written (fio's "Laying out IO file"); a write-only job finds the
// file created and, as fallocate= says, allocated. The layout is synced and
// the file's cached pages dropped (fio's invalidate=1), so the job starts on
// a cold cache.
func lay(p *sim.Process, j *Job, name string) error {
	if dir := path.Dir(name); dir != "/" {
		if err := MkdirAll(p, dir); err != nil {
			return err
		}
	}
	fd, err := p.Open(name, unix.O_WRONLY|unix.O_CREAT, 0o644)
	if err != nil {
		return err
	}
	defer p.Close(fd)
	var st unix.Stat_t
	if err := p.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Size >= j.Size {
		return nil
	}
	switch {
	case j.Reads():
		chunk := make([]byte, min(j.Size, 1<<20))
		for i := range chunk {
			chunk[i] = byte(i)
		}
		for off := int64(0); off < j.Size; off += int64(len(chunk)) {
			b := chunk[:min(int64(len(chunk)), j.Size-off)]
			if _, err := p.Pwrite(fd, b, off); err != nil {
				return err
			}
		}
	case j.Fallocate == "native" || j.Fallocate == "posix":
		if err := p.Fallocate(fd, 0, 0, j.Size); err != nil {
			return err
		}
	case j.Fallocate == "keep":
		if err := p.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, j.Size); err != nil {
			return err
		}
	case j.Fallocate == "truncate":
		if err := p.Ftruncate(fd, j.Size); err != nil {
			return err
		}
	}
	if err := p.Fsync(fd); err != nil {
		return err
	}
	return p.Fadvise(fd, 0, 0, unix.FADV_DONTNEED)
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
	return r.issued >= r.j.Size
}

// offset returns the next I/O's offset.
func (r *runner) offset() int64 {
	j := r.j
	if j.Random() {
		return r.rng.Int64N(j.Size/j.BS) * j.BS
	}
	if r.next+j.BS > j.Size {
		r.next = 0
	}
	off := r.next
	r.next += j.BS
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
	if r.j.IOEngine == "libaio" {
		r.stepAio()
		return
	}
	if r.finished() {
		r.finish()
		return
	}
	w := r.isWrite()
	off := r.offset()
	t := r.p.Task()
	t0 := Now(t)
	var n int
	var err error
	switch {
	case r.j.IOEngine == "sync":
		if _, err = r.p.Seek(r.fd, off, unix.SEEK_SET); err == nil {
			if w {
				n, err = r.p.Write(r.fd, r.buf)
			} else {
				n, err = r.p.Read(r.fd, r.buf)
			}
		}
	case w:
		n, err = r.p.Pwrite(r.fd, r.buf, off)
	default:
		n, err = r.p.Pread(r.fd, r.buf, off)
	}
	r.issued += r.j.BS
	if err != nil {
		r.fail(fmt.Errorf("%s at offset %d: %w", dirName(w), off, err))
		return
	}
	r.account(w, t0, int64(n))
	if w {
		r.afterWrite()
	}
	r.end = Now(t)
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
	}
	d.IOBytes += n
	d.TotalIOs++
	_ = d.Clat.RecordValue(max(Now(r.p.Task())-t0, 0))
}

// afterWrite issues the fsync=/fdatasync= syncs.
func (r *runner) afterWrite() {
	r.writes++
	if r.j.Fsync > 0 && r.writes%r.j.Fsync == 0 {
		r.sync(unix.SYS_FSYNC)
	}
	if r.j.Fdatasync > 0 && r.writes%r.j.Fdatasync == 0 {
		r.sync(unix.SYS_FDATASYNC)
	}
}

func (r *runner) sync(nr int) {
	t0 := Now(r.p.Task())
	var err error
	if nr == unix.SYS_FSYNC {
		err = r.p.Fsync(r.fd)
	} else {
		err = r.p.Fdatasync(r.fd)
	}
	if err != nil {
		r.fail(fmt.Errorf("sync: %w", err))
		return
	}
	r.res.Sync.TotalIOs++
	_ = r.res.Sync.Clat.RecordValue(max(Now(r.p.Task())-t0, 0))
}

func (r *runner) finish() {
	if r.done {
		return
	}
	if r.j.EndFsync && r.res.Err == nil {
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

// stepAio fills the queue to iodepth with one io_submit, then reaps with one
// io_getevents(min_nr=1): fio's libaio loop with iodepth_batch=1 and
// iodepth_batch_complete=1 folded into one round per step.
func (r *runner) stepAio() {
	t := r.p.Task()
	r.iocbs = r.iocbs[:0]
	var reqs []aioReq
	for r.inflight+len(r.iocbs) < r.j.IODepth && !r.finished() {
		w := r.isWrite()
		cb := &sim.Iocb{Data: r.seq, Fd: uint32(r.fd), Offset: r.offset(), Buf: make([]byte, r.j.BS)}
		cb.Opcode = sim.IOCB_CMD_PREAD
		if w {
			cb.Opcode = sim.IOCB_CMD_PWRITE
			copy(cb.Buf, r.buf)
		}
		r.issued += r.j.BS
		r.seq++
		r.iocbs = append(r.iocbs, cb)
		reqs = append(reqs, aioReq{write: w, n: r.j.BS})
	}
	if len(r.iocbs) == 0 && r.inflight == 0 {
		r.finish()
		return
	}
	if len(r.iocbs) > 0 {
		t0 := Now(t)
		n, err := r.p.IoSubmit(r.ctx, r.iocbs)
		if err != nil || n != len(r.iocbs) {
			r.fail(fmt.Errorf("io_submit: %d of %d: %v", n, len(r.iocbs), err))
			return
		}
		for i, cb := range r.iocbs {
			reqs[i].t0 = t0
			r.submitted[cb.Data] = reqs[i]
		}
		r.inflight += n
	}
	n, err := r.p.IoGetevents(r.ctx, 1, len(r.events), r.events, nil)
	if err != nil {
		r.fail(fmt.Errorf("io_getevents: %w", err))
		return
	}
	if n == 0 && len(r.iocbs) == 0 {
		r.fail(fmt.Errorf("io_getevents: no completion with %d I/Os in flight", r.inflight))
		return
	}
	for _, ev := range r.events[:n] {
		req := r.submitted[ev.Data]
		delete(r.submitted, ev.Data)
		r.inflight--
		if ev.Res < 0 {
			r.fail(fmt.Errorf("%s: %v", dirName(req.write), unix.Errno(-ev.Res)))
			return
		}
		r.account(req.write, req.t0, ev.Res)
		if req.write {
			r.afterWrite()
		}
	}
	r.end = Now(t)
}

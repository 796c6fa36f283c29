package sim

import "github.com/iosim/iosim/device"

// Linux AIO in the time model (fs/aio.c, fs/iomap/direct-io.c): an O_DIRECT
// read or write is queued to the device at io_submit and completes when the
// device does, so io_getevents waits for the device; a buffered one is done in
// io_submit itself, through the page cache, as pread/pwrite would (it is
// complete when io_submit returns); fsync and fdatasync iocbs run as the calls.
// Each submitted iocb's completion time goes to its event (aioTable.complete),
// and io_getevents returns the events complete when it returns (reapTimed):
// it waits for the min_nr-th earliest, so a program that asks for one at a
// time keeps its queue full.

// beforeSubmit records in p.aio the state of the files of an io_submit's
// write iocbs (what pre holds for a write).
func (tm *timeModel) beforeSubmit(c *Call, p *pre) {
	cbs, _ := c.Obj.([]*Iocb)
	// The thread's buffer from its last io_submit: a thread makes one call
	// at a time, and p lives only for this one.
	p.aio = c.Task.aioPre[:0]
	defer func() { c.Task.aioPre = p.aio }()
	for i, cb := range cbs {
		if int64(i) >= c.Args[1] {
			break
		}
		var q pre
		if cb != nil && (cb.Opcode == IOCB_CMD_PWRITE || cb.Opcode == IOCB_CMD_PWRITEV) {
			if f := c.Task.files.get(int(int32(cb.Fd))); f != nil && f.ino != nil && f.ino.IsRegular() {
				n := int64(len(cb.Buf))
				for _, b := range cb.Iov {
					n += int64(len(b))
				}
				q = pre{f: f, off: cb.Offset, size: f.ino.Size()}
				q.holes = q.off+n > q.size || f.ino.HoleIn(q.off, n)
				q.anyHoles = tm.ufs && tm.direct(f) && f.ino.HoleIn(0, q.size)
			}
		}
		p.aio = append(p.aio, q)
	}
}

// submitAIO prices an io_submit that submitted n iocbs, starting at now.
func (tm *timeModel) submitAIO(t *Task, c *Call, pa *pre, n, now int64, d *Breakdown) int64 {
	cbs, _ := c.Obj.([]*Iocb)
	ctx := uint64(c.Args[0])
	for i := range min(n, int64(len(cbs))) {
		cb := cbs[i]
		done := now
		if f := t.files.get(int(int32(cb.Fd))); f != nil && f.ino != nil && f.ino.IsRegular() {
			done, now = tm.submitIocb(t, f, cb, pa.iocb(i), now, d)
		}
		tm.k.aio.complete(ctx, cb, done)
	}
	return now
}

// submitIocb prices iocb cb on regular file f (p: its state before the call),
// submitted at now: it returns when the iocb completes and when io_submit
// goes on to the next.
func (tm *timeModel) submitIocb(t *Task, f *File, cb *Iocb, p pre, now int64, d *Breakdown) (done, next int64) {
	it := tm.fileInode(f)
	size := int64(len(cb.Buf))
	for _, b := range cb.Iov {
		size += int64(len(b))
	}
	write := cb.Opcode == IOCB_CMD_PWRITE || cb.Opcode == IOCB_CMD_PWRITEV
	switch {
	case cb.Opcode == IOCB_CMD_FSYNC || cb.Opcode == IOCB_CMD_FDSYNC:
		now = tm.fsync(it, cb.Opcode == IOCB_CMD_FDSYNC, now, d)
	case size == 0:
	case tm.direct(f):
		pin := (size + pageBytes - 1) >> pageShift * tm.cpu.pin
		now += pin
		d.CPU += pin
		now = tm.invalidate(it, cb.Offset, size, now, d)
		op := device.Read
		if write {
			op = device.Write
			if p.holes {
				tm.metaChange(it, true, now)
			}
			tm.touch(it, now)
		}
		_, done := tm.submit(op, it.base+cb.Offset, size, now)
		return done, now
	case write:
		if p.f != nil {
			now = tm.write(t, &p, it, f.flags.Load(), size, now, d)
		}
	default:
		now = tm.read(t, f, it, cb.Offset, size, now, d)
	}
	return now, now
}

// iocb returns the state recorded for the i-th iocb of an io_submit.
func (p *pre) iocb(i int64) pre {
	if i < int64(len(p.aio)) {
		return p.aio[i]
	}
	return pre{}
}

// getEvents prices an io_getevents or io_destroy made by t: the call returns
// at t.aioUntil (reapTimed, sysIoDestroy), waiting for the device until
// t.aioDevice and sleeping out its timeout after that.
func (tm *timeModel) getEvents(t *Task, now int64, d *Breakdown) int64 {
	if w := t.aioDevice; w > now {
		d.Device += w - now
		now = w
	}
	if w := t.aioUntil; w > now {
		d.Sleep += w - now
		now = w
	}
	return now
}

package replay

import (
	"fmt"
	"unsafe"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
	"github.com/iosim/iosim/vfs"
)

// Linux AIO in a trace. io_submit shows each iocb's fields; for
// IOCB_CMD_PREADV/PWRITEV aio_buf is the iovec array (and aio_nbytes, which
// strace leaves out then, its length). A buffer is placed at the offset
// within a page that its recorded address has, so that O_DIRECT's alignment
// rules see what Linux saw (a misaligned buffer completes with -EINVAL). Which
// iocb completes first is the device's: io_getevents events are compared
// with the completion of their own iocb (by aio_data, then by the order of
// the iocbs that share it), whichever call of the model returned it.

// iocbs rebuilds the iocbs of io_submit's array arr. strace shows an
// address where it could not read the memory: an array or an iocb shown so
// (or NULL) is one the kernel cannot read either (EFAULT), given to the
// model as missing.
func iocbs(arr *strace.Node) ([]*sim.Iocb, string) {
	if arr != nil && (arr.Kind == strace.NodeInt || arr.Kind == strace.NodeIdent && string(arr.Text) == "NULL") {
		return nil, ""
	}
	if arr == nil || arr.Kind != strace.NodeArray {
		return nil, "iocb array not shown"
	}
	var cbs []*sim.Iocb
	for k := range arr.Kids {
		el := &arr.Kids[k]
		if el.Kind == strace.NodeInt {
			cbs = append(cbs, nil)
			continue
		}
		cb, why := iocb(el)
		if why != "" {
			return nil, why
		}
		cbs = append(cbs, cb)
	}
	return cbs, ""
}

// iocb rebuilds the iocb that element el of io_submit's array shows.
func iocb(el *strace.Node) (*sim.Iocb, string) {
	if el.Kind != strace.NodeStruct {
		return nil, "iocb not shown"
	}
	get := func(name string) int64 {
		if f := el.Field(name); f != nil {
			v, _ := f.Value()
			return v
		}
		return 0
	}
	cb := &sim.Iocb{Data: uint64(get("aio_data")), Opcode: uint16(get("aio_lio_opcode")), Fd: uint32(get("aio_fildes")),
		Offset: get("aio_offset"), RwFlags: int32(get("aio_rw_flags")), ReqPrio: int16(get("aio_reqprio"))}
	buf := el.Field("aio_buf")
	if cb.Opcode == sim.IOCB_CMD_PREADV || cb.Opcode == sim.IOCB_CMD_PWRITEV {
		if buf == nil || buf.Kind != strace.NodeArray {
			return nil, "iovec array not shown"
		}
		var total int64
		for k := range buf.Kids {
			iov := &buf.Kids[k]
			n := int64(-1)
			if f := iov.Field("iov_len"); f != nil {
				n, _ = f.Value()
			}
			if total += n; n < 0 || total > maxBuf {
				return nil, "bad iov_len"
			}
			cb.Iov = append(cb.Iov, bufFor(iov.Field("iov_base"), n))
		}
		return cb, ""
	}
	n := get("aio_nbytes")
	if n < 0 || n > maxBuf {
		return nil, "bad aio_nbytes"
	}
	cb.Buf = bufFor(buf, n)
	if buf != nil && buf.Kind != strace.NodeStr {
		if v, ok := buf.Value(); ok {
			// a bad address fails as on Linux; NULL is unmapped, as is
			// any address below mmap_min_addr (Addr 0 means Buf's own)
			cb.Addr = max(uint64(v), 1)
		}
	}
	return cb, ""
}

// bufFor returns n bytes for a buffer argument shown as b: the bytes a string
// shows, or zeros at the page offset of the address shown.
func bufFor(b *strace.Node, n int64) []byte {
	var addr uint64
	if b != nil {
		if v, ok := b.Value(); ok && b.Kind != strace.NodeStr {
			addr = uint64(v)
		}
	}
	out := bufAt(n, addr)
	if b != nil && b.Kind == strace.NodeStr {
		copy(out, b.Text)
	}
	return out
}

// bufAt returns n zero bytes whose address has addr's offset within a page.
func bufAt(n int64, addr uint64) []byte {
	if n == 0 {
		return []byte{}
	}
	b := make([]byte, n+sim.PageSize)
	at := int(uintptr(unsafe.Pointer(&b[0])) % sim.PageSize)
	off := (int(addr%sim.PageSize) - at + sim.PageSize) % sim.PageSize
	return b[off : off+int(n) : off+int(n)]
}

// aioEvent is a completion one side returned and the other has not yet.
type aioEvent struct {
	data uint64
	res  int64
	line int // the recorded event's line
}

// aioPending holds, per model context, the completions that the model and
// the recording returned in different io_getevents calls, and the reads
// submitted on files from before the trace, whose completions show their size.
type aioPending struct {
	model, rec []aioEvent
	reads      []aioRead
}

// aioRead is a read iocb on an inferred file.
type aioRead struct {
	data   uint64
	ino    *vfs.Inode
	off, n int64
}

// pending returns model context ctx's pending state.
func (r *replayer) pending(ctx uint64) *aioPending {
	pd := r.aioPend[ctx]
	if pd == nil {
		pd = &aioPending{}
		r.aioPend[ctx] = pd
	}
	return pd
}

// noteAioReads remembers the read iocbs of an io_submit on files inferred from
// before the trace: what the model reads there is what inference knows at
// submission, and the recorded completion, which comes later, shows the size
// (as a short pread does).
func (r *replayer) noteAioReads(t *sim.Task, ctx uint64, cbs []*sim.Iocb) {
	for _, cb := range cbs {
		if cb == nil || cb.Opcode != sim.IOCB_CMD_PREAD && cb.Opcode != sim.IOCB_CMD_PREADV {
			continue
		}
		ino := r.world.fileOf(t, int64(int32(cb.Fd)))
		if !r.world.isExt(ino) || !ino.IsRegular() {
			continue
		}
		n := int64(len(cb.Buf))
		if cb.Opcode == sim.IOCB_CMD_PREADV {
			n = 0
			for _, b := range cb.Iov {
				n += int64(len(b))
			}
		}
		pd := r.pending(ctx)
		pd.reads = append(pd.reads, aioRead{data: cb.Data, ino: ino, off: cb.Offset, n: n})
	}
}

// inferAioRead applies what the recorded completion res of a read with
// aio_data data shows of its inferred file, and reports whether there was
// such a read: its count then depends on what the model knew at submission,
// not on the model's semantics.
func (r *replayer) inferAioRead(pd *aioPending, data uint64, res int64) bool {
	for i, rd := range pd.reads {
		if rd.data != data {
			continue
		}
		pd.reads = append(pd.reads[:i], pd.reads[i+1:]...)
		if res < 0 || rd.off < 0 {
			return false
		}
		if end := rd.off + res; res < rd.n || rd.ino.Size() < end {
			r.world.resize(rd.ino, end)
		}
		return true
	}
	return false
}

// verifyAioEvents compares the events io_getevents returned with the
// recorded ones, each with the completion of the same iocb.
func (r *replayer) verifyAioEvents(ev *strace.Event, c *sim.Call, res sim.Result) {
	arr := ev.Arg(3)
	evs, _ := c.Obj.([]sim.IoEvent)
	if arr == nil || arr.Kind != strace.NodeArray || res.Errno != 0 {
		return
	}
	ctx := uint64(c.Args[0])
	pd := r.pending(ctx)
	for _, e := range evs[:min(int(res.Ret), len(evs))] {
		pd.model = append(pd.model, aioEvent{data: e.Data, res: e.Res})
	}
	for k := range arr.Kids {
		d, okd := fieldValue(&arr.Kids[k], "data")
		v, okr := fieldValue(&arr.Kids[k], "res")
		if okd && okr {
			pd.rec = append(pd.rec, aioEvent{data: uint64(d), res: v, line: ev.Line})
		}
	}
	// match each recorded completion with the model's of the same aio_data,
	// the first of them (iocbs sharing aio_data complete in order)
	rec := pd.rec[:0]
	for _, want := range pd.rec {
		i := 0
		for i < len(pd.model) && pd.model[i].data != want.data {
			i++
		}
		if i == len(pd.model) {
			rec = append(rec, want)
			continue
		}
		inferred := r.inferAioRead(pd, want.data, want.res)
		if got := pd.model[i].res; got != want.res && !inferred {
			what := fmt.Sprintf("event data=%#x res", want.data)
			if want.line != ev.Line {
				what += fmt.Sprintf(" (returned at line %d)", want.line)
			}
			r.diverge(ev, what, itoa(want.res), itoa(got))
		}
		pd.model = append(pd.model[:i], pd.model[i+1:]...)
	}
	pd.rec = rec
}

// verifyAioLeft reports, at io_destroy of model context ctx, the recorded
// completions that no completion of the model's matched: iocbs that Linux
// completed and the model did not (or with another aio_data).
func (r *replayer) verifyAioLeft(ev *strace.Event, ctx uint64) {
	pd := r.aioPend[ctx]
	if pd == nil {
		return
	}
	for k, want := range pd.rec {
		got := "no completion"
		if k < len(pd.model) {
			got = fmt.Sprintf("data=%#x res=%d", pd.model[k].data, pd.model[k].res)
		}
		r.diverge(ev, fmt.Sprintf("event data=%#x (returned at line %d)", want.data, want.line), fmt.Sprintf("res=%d", want.res), got)
	}
	delete(r.aioPend, ctx)
}

// fieldValue returns the number in field name of struct n.
func fieldValue(n *strace.Node, name string) (int64, bool) {
	if f := n.Field(name); f != nil {
		return f.Value()
	}
	return 0, false
}

// aioTimeout returns io_getevents' timeout argument for sim (nanoseconds,
// sim.AioWaitForever for NULL).
func aioTimeout(n *strace.Node) int64 {
	if n == nil || n.Kind != strace.NodeStruct {
		return sim.AioWaitForever
	}
	s, _ := fieldValue(n, "tv_sec")
	ns, _ := fieldValue(n, "tv_nsec")
	if s < 0 || s > 1<<32 || ns < 0 || ns >= 1e9 {
		return sim.AioWaitForever
	}
	return s*1e9 + ns
}

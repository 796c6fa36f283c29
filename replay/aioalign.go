package replay

import (
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

// O_DIRECT writes whose buffer address the trace does not show: strace shows
// a write's bytes, not where they were. A recorded EINVAL (write, pwrite64)
// or completion with res -EINVAL (an AIO write) is the evidence that the
// buffer was misaligned: the model's buffer is placed misaligned too, and
// that is noted. An AIO write's completion comes after its io_submit: the
// read-ahead pass collects which completions were -EINVAL (addAioEvents).

// aioKey names the iocbs of one recorded AIO context with one aio_data.
type aioKey struct{ ctx, data uint64 }

// aioSeq is what the pass saw of the completions of one aioKey: how many,
// and the ordinals of those with res -EINVAL.
type aioSeq struct {
	n      int
	einval []int
}

// maxAioKeys bounds the aioKeys the pass keeps.
const maxAioKeys = 1 << 16

// addAioEvents records the completions an io_getevents event returned.
// Called with pl.mu held.
func (pl *plan) addAioEvents(ev *strace.Event) {
	ctx, ok := ev.Int(0)
	arr := ev.Arg(3)
	if !ok || arr == nil || arr.Kind != strace.NodeArray {
		return
	}
	for k := range arr.Kids {
		d, okd := fieldValue(&arr.Kids[k], "data")
		v, okr := fieldValue(&arr.Kids[k], "res")
		if !okd || !okr {
			continue
		}
		key := aioKey{uint64(ctx), uint64(d)}
		if pl.aio == nil {
			pl.aio = map[aioKey]*aioSeq{}
		}
		s := pl.aio[key]
		if s == nil {
			if len(pl.aio) >= maxAioKeys {
				continue
			}
			s = &aioSeq{}
			pl.aio[key] = s
		}
		if v == -int64(unix.EINVAL) && len(s.einval) < maxAioKeys {
			s.einval = append(s.einval, s.n)
		}
		s.n++
	}
}

// aioEinval reports whether the k-th completion (from 0) of key's iocbs was
// -EINVAL (iocbs sharing aio_data complete in order). It waits for the
// whole pass.
func (pl *plan) aioEinval(key aioKey, k int) bool {
	s := pl.whole().aio[key]
	if s == nil {
		return false
	}
	for _, e := range s.einval {
		if e == k {
			return true
		}
	}
	return false
}

// misalignAio places the buffer of each O_DIRECT write iocb that io_submit
// (event ev, call c) queued misaligned, when the trace shows its bytes, not
// its address, and its recorded completion was -EINVAL.
func (w *world) misalignAio(t *sim.Task, ev *strace.Event, c *sim.Call) {
	cbs, _ := c.Obj.([]*sim.Iocb)
	arr := ev.Arg(2)
	ctx, ok := ev.Int(0)
	if !ok || arr == nil || arr.Kind != strace.NodeArray {
		return
	}
	for k := range min(int64(len(cbs)), int64(len(arr.Kids)), max(ev.Ret, 0)) {
		cb := cbs[k]
		if cb == nil || cb.Opcode != sim.IOCB_CMD_PWRITE && cb.Opcode != sim.IOCB_CMD_PWRITEV {
			continue
		}
		key := aioKey{uint64(ctx), cb.Data}
		if w.aioOrd == nil {
			w.aioOrd = map[aioKey]int{}
		}
		ord := w.aioOrd[key]
		w.aioOrd[key]++
		buf := arr.Kids[k].Field("aio_buf")
		if cb.Opcode == sim.IOCB_CMD_PWRITEV {
			if buf == nil || buf.Kind != strace.NodeArray || len(buf.Kids) == 0 || len(cb.Iov) == 0 {
				continue
			}
			buf = buf.Kids[0].Field("iov_base")
		}
		f := t.File(int(int32(cb.Fd)))
		if buf == nil || buf.Kind != strace.NodeStr || f == nil || f.Flags()&unix.O_DIRECT == 0 || !w.r.plan.aioEinval(key, ord) {
			continue
		}
		if cb.Opcode == sim.IOCB_CMD_PWRITE {
			cb.Buf = misaligned(cb.Buf)
		} else {
			cb.Iov[0] = misaligned(cb.Iov[0])
		}
		w.fact(ev, "iocb data=%#x: its buffer was misaligned (the trace shows its bytes, not its address; its completion, -EINVAL, shows it)", cb.Data)
	}
}

// misaligned returns a copy of b at an address one byte past a page
// boundary, which fails O_DIRECT's alignment check for any length but 0.
func misaligned(b []byte) []byte {
	out := bufAt(int64(len(b)), 1)
	copy(out, b)
	return out
}

// misalignWrite: a write or pwrite64 to an O_DIRECT file that failed with
// EINVAL at an offset and length that pass the alignment check had a
// misaligned buffer, whose address the trace does not show.
func (w *world) misalignWrite(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	off := c.Args[3]
	if nr == sim.SYS_WRITE {
		off = w.r.curPos
	}
	f := t.File(int(c.Args[0]))
	if f == nil || f.Flags()&unix.O_DIRECT == 0 || len(c.Buf) == 0 || (off|int64(len(c.Buf)))&(sim.LogicalBlockSize-1) != 0 {
		return
	}
	if a := ev.Arg(1); a == nil || a.Kind != strace.NodeStr {
		return // an address shown: outBuf placed the buffer
	}
	c.Buf = misaligned(c.Buf)
	w.fact(ev, "its buffer was misaligned (the trace shows its bytes, not its address)")
}

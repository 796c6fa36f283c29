package vfs

import (
	"fmt"
	"slices"
	"strings"
)

// DurableTable describes every durable record of st, named or not: what a
// crash state holds beyond what its names reach.
func DurableTable(st *CrashState) map[uint64]string {
	ids := map[uint64]bool{}
	for id := range st.snap.base {
		ids[id] = true
	}
	for id := range st.recs {
		ids[id] = true
	}
	for id := range st.ents {
		ids[id] = true
	}
	out := map[uint64]string{}
	for id := range ids {
		d := st.rec(id)
		if d == nil {
			var ents []string
			phantom(st, id, func(name string, c uint64) { ents = append(ents, fmt.Sprint(name, "=", c)) })
			if ents != nil {
				slices.Sort(ents)
				out[id] = "no directory; entries=" + strings.Join(ents, ",")
			}
			continue
		}
		var ents []string
		if d.entries != nil {
			st.eachEntry(id, d, func(name string, c uint64) { ents = append(ents, fmt.Sprint(name, "=", c)) })
			slices.Sort(ents)
		}
		var data []byte
		if d.data != nil {
			data = make([]byte, d.size)
			d.data.ReadAt(data, 0)
		}
		out[id] = fmt.Sprintf("mode=%o uid=%d gid=%d a=%d m=%d c=%d size=%d links=%d target=%q entries=%s data=%q",
			d.mode, d.uid, d.gid, d.atime, d.mtime, d.ctime, d.size, d.links, d.target, strings.Join(ents, ","), data)
	}
	return out
}

// HashFromScratch is CrashState.Hash computed from its definition: the
// snapshot's identity plus the sum of the parts of every record of the state
// less those of the snapshot's.
func HashFromScratch(st *CrashState) uint64 {
	buf := make([]byte, st.snap.cfg.blockSize)
	part := func(id uint64, d *durInode, entries func(fn func(string, uint64))) uint64 {
		if d == nil {
			return 0
		}
		h := metaHash(id, d) + dataHash(d, buf)
		if d.entries != nil {
			entries(func(name string, c uint64) { h += entHash(id, name, c) })
		}
		return h
	}
	h := mix64(st.snap.version ^ 0x76657273)
	for id := range DurableTable(st) {
		d := st.rec(id)
		h += part(id, d, func(fn func(string, uint64)) { st.eachEntry(id, d, fn) })
		if d == nil {
			phantom(st, id, func(name string, c uint64) { h += entHash(id, name, c) })
		}
	}
	for id, b := range st.snap.base {
		h -= part(id, b, func(fn func(string, uint64)) {
			for name, c := range b.entries {
				fn(name, c)
			}
		})
	}
	return h
}

// phantom calls fn for the entries st holds for directory id where the
// directory does not exist (see ovRec.phantom): in a stable directory's
// changed entries, or in a phantom record.
func phantom(st *CrashState, id uint64, fn func(string, uint64)) {
	if st.stable(id) {
		for name, c := range st.ents[id] {
			if c != 0 {
				fn(name, c)
			}
		}
		return
	}
	if o := st.recs[id]; o != nil && o.phantom {
		for name, c := range o.d.entries {
			fn(name, c)
		}
	}
}

// Version returns the version of the durable table snap shares.
func Version(snap *CrashSnapshot) uint64 { return snap.version }

// Replay is the crash state of snap with keep applied in one pass, as
// CrashWith builds it.
func Replay(snap *CrashSnapshot, keep []Survival) *CrashState { return snap.replay(keep) }

// SetCancel turns off (or back on) the cancelling of a create by the remove
// of its name (cancelCreate), so that tests compare with and without.
func SetCancel(fs *FS, on bool) { fs.cfg.noCancel = !on }

// Retained counts what fs keeps for pending changes: inodes on its pending
// lists, namespace operations (cancelled ones included), durable records.
func Retained(fs *FS) (inodes, ops, records int) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return len(fs.pending) + len(fs.devInodes), len(fs.metaLog), len(fs.dur)
}

package vfs

import (
	"bytes"
	"testing"

	"pgregory.net/rapid"
)

// shift mirrors fileData.shiftBlocks: blocks from index from on move by
// delta (which stays inside the oracle's blocks), the blocks they leave
// become holes.
func (o *oracle) shift(from, delta int64) {
	n := int64(len(o.state))
	data := make([]byte, len(o.data))
	state := make([]blockState, n)
	tree := make([]blockState, n)
	for i := range n {
		j := i
		if i >= from {
			j += delta
		}
		if j < 0 || j >= n {
			continue
		}
		copy(data[j*o.bs:(j+1)*o.bs], o.data[i*o.bs:(i+1)*o.bs])
		state[j], tree[j] = o.state[i], o.tree[i]
	}
	o.data, o.state, o.tree = data, state, tree
}

// TestShiftBlocksRapid: shifting the blocks of a file made by random
// writes, allocations, punches, writebacks and cached reads moves bytes,
// block states, the extent tree and SEEK_DATA/SEEK_HOLE answers as the
// oracle says, keeps the representation's invariants, and leaves a clone
// taken before untouched.
func TestShiftBlocksRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bs := rapid.SampledFrom([]int64{512, 4096}).Draw(t, "bs")
		nblocks := rapid.Int64Range(2, 3*chunkBlocks).Draw(t, "nblocks")
		d, o := newFileData(bs), newOracle(bs, nblocks)
		o.size = nblocks * bs
		blocks := func(label string) (int64, int64) {
			a := rapid.Int64Range(0, nblocks-1).Draw(t, label+"At")
			return a, rapid.Int64Range(1, nblocks-a).Draw(t, label+"N")
		}
		for range rapid.IntRange(0, 12).Draw(t, "steps") {
			a, n := blocks("step")
			off, ln := a*bs, n*bs
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0:
				// c 0: written zeros, data without a buffer
				p := bytes.Repeat([]byte{byte(rapid.IntRange(0, 255).Draw(t, "c"))}, int(ln))
				d.WriteAt(p, off)
				o.write(p, off)
			case 1:
				d.Allocate(off, ln)
				o.allocate(off, ln)
			case 2:
				d.PunchHole(off, ln)
				o.punch(off, ln)
			case 3:
				d.Writeback(off, ln)
				o.writeback(off, ln)
			case 4:
				d.CacheUnwritten(off, ln)
				o.cache(off, ln)
			}
		}
		check(t, "before", d, o)
		before, ob := d.Clone(), o.clone()
		from := rapid.Int64Range(1, nblocks-1).Draw(t, "from")
		if rapid.Bool().Draw(t, "collapse") {
			k := rapid.Int64Range(1, from).Draw(t, "k")
			d.PunchHole((from-k)*bs, k*bs)
			o.punch((from-k)*bs, k*bs)
			d.shiftBlocks(from, -k)
			o.shift(from, -k)
		} else {
			// an insert moves nothing past the last block
			last := nblocks
			for last > from && o.state[last-1] == stHole {
				last--
			}
			if last == nblocks {
				return
			}
			k := rapid.Int64Range(1, nblocks-last).Draw(t, "k")
			d.shiftBlocks(from, k)
			o.shift(from, k)
		}
		check(t, "after", d, o)
		check(t, "the clone", before, ob)
		// and it goes on as a file: a write over the moved blocks
		p := bytes.Repeat([]byte{7}, int(bs))
		d.WriteAt(p, from*bs)
		o.write(p, from*bs)
		check(t, "written after", d, o)
		check(t, "the clone after", before, ob)
	})
}

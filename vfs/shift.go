package vfs

import "math/bits"

// fallocate(2) modes that move a file's data (ext4_collapse_range,
// ext4_insert_range; each only alone).
const (
	// FallocCollapseRange removes [off, off+n) and moves what follows down
	// by n: the file shrinks by n.
	FallocCollapseRange = 0x08
	// FallocInsertRange moves [off, EOF) up by n and leaves a hole of n at
	// off: the file grows by n.
	FallocInsertRange = 0x20
)

// shiftRange implements FallocCollapseRange and FallocInsertRange for
// Fallocate, after its checks of the arguments and the file type, as ext4
// does with 4 KiB blocks (fs/ext4/extents.c): off and n must be multiples of
// the block size (EINVAL); a collapse must end before EOF (EINVAL: that
// would be a truncate), an insert must start before EOF (EINVAL) and may
// not take the size past MaxFileSize (EFBIG). Then the page cache is
// written back from where data moves on (collapse: [off+n, EOF); insert:
// [off, EOF)) and dropped from off (truncate_pagecache: unwritten blocks'
// cached pages go), the collapsed blocks are freed, and the extents after
// them are shifted (ext4_ext_shift_extents), so SEEK_DATA/SEEK_HOLE and
// st_blocks follow the moved blocks; i_size and i_disksize change by n.
//
// Durability: the writeback reaches the device as any writeback does; the
// shift itself, like any change of the extent tree, and the new size are
// pending until an fsync (one pending change over the moved range: a crash
// keeps the old layout or the new one). Called with fs.mu held.
func (fs *FS) shiftRange(i *Inode, mode uint32, off, n int64) error {
	bs := fs.cfg.blockSize
	if off%bs != 0 || n%bs != 0 {
		return EINVAL
	}
	size := i.size
	newSize := size - n
	if mode == FallocInsertRange {
		if n > fs.cfg.maxFileSize-size {
			return EFBIG
		}
		if off >= size {
			return EINVAL
		}
		newSize = size + n
	} else if off+n >= size {
		return EINVAL
	}
	if f := fs.fault(OpFallocate, i, ""); f.Errno != 0 {
		return f.Errno
	}
	from := off
	if mode == FallocCollapseRange {
		from = off + n
	}
	fs.writebackRange(i, from, size-from)
	err := fs.mutateData(i, off, max(size, newSize)-off, func(d *fileData) {
		d.dropCached(off >> d.shift)
		if mode == FallocCollapseRange {
			d.PunchHole(off, n)
			d.shiftBlocks(from>>d.shift, -n>>d.shift)
		} else {
			d.shiftBlocks(from>>d.shift, n>>d.shift)
		}
	})
	if err != nil {
		return err
	}
	fs.markRange(i, off, max(size, newSize)-off)
	i.size, i.diskSize = newSize, newSize
	fs.markSize(i)
	t := fs.now()
	i.mtime, i.ctime = t, t
	fs.markAttr(i)
	return nil
}

// dropCached forgets the cached pages of unwritten blocks from block first
// on (truncate_pagecache): SEEK_DATA sees them as holes again.
func (d *fileData) dropCached(first int64) {
	for k := range d.chunks {
		c := d.chunks[k]
		if c.base+chunkBlocks <= first || c.cached == 0 {
			continue
		}
		mask := ^uint32(0)
		if first > c.base {
			mask <<= uint(first - c.base)
		}
		if c.cached&mask != 0 {
			d.own(k).cached &^= mask
		}
	}
}

// shiftBlocks moves every allocated block at index from or above by delta
// blocks, with its state and buffer (a buffer moves, it is not copied: one
// only this fileData owned stays owned). With delta < 0 the blocks
// [from+delta, from) must hold nothing. The extent tree is settled again
// (Blocks), as after any change of extents.
func (d *fileData) shiftBlocks(from, delta int64) {
	old := d.chunks
	d.chunks = make([]*chunk, 0, len(old)+1)
	var cur *chunk
	for _, c := range old {
		mine := c.owner == d
		for m := c.written | c.unwr; m != 0; m &= m - 1 {
			j := bits.TrailingZeros32(m)
			bit := uint32(1) << j
			nb := c.base + int64(j)
			if nb >= from {
				nb += delta
			}
			if cb := nb &^ chunkMask; cur == nil || cur.base != cb {
				cur = &chunk{base: cb, owner: d}
				d.chunks = append(d.chunks, cur)
			}
			k := uint(nb & chunkMask)
			move := func(src uint32, dst *uint32) {
				if src&bit != 0 {
					*dst |= 1 << k
				}
			}
			move(c.written, &cur.written)
			move(c.unwr, &cur.unwr)
			move(c.cached, &cur.cached)
			move(c.delayed, &cur.delayed)
			move(c.unconv, &cur.unconv)
			if mine {
				move(c.owned, &cur.owned)
			}
			cur.setBuf(int(k), c.buf(j))
		}
	}
	d.lastAlloc = -2 // the slab's next block is no longer the one after the last
	d.inserted = true
}

package vfs

import (
	"bytes"
	"fmt"
	"math/bits"
	"sort"
)

// This file holds fileData, the sparse content of one regular file at one
// durability level, and the ext4 rules it models (checked against the real
// kernel by data_linux_test.go on ext4 with 4 KiB blocks).
//
// Representation. A file is a sorted slice of *chunk; a chunk covers chunkBlocks
// (32) consecutive, aligned blocks and holds, per block, a state in three bit
// masks and an optional buffer (in a table of 32 the chunk allocates when its
// first block gets a buffer: a chunk of holes, unwritten blocks or written
// zeros is a ~50-byte header):
//
//	hole       neither written nor unwritten bit; buffer nil; reads zeros
//	unwritten  allocated but not written (fallocate); buffer nil; reads zeros
//	written    data; buffer of blockSize bytes, or nil when the block is all zeros
//
// Two more masks say how ext4's extent tree still maps a written block that
// has not been written back: delayed (a hole: delayed allocation) or
// unconverted (unwritten); Writeback clears them (see Blocks).
//
// Why this shape: a sorted slice of chunks is proportional to what was written
// (a 100 GiB file with 1 MiB written at random 4 KiB offsets holds 256 blocks
// and at most 256 chunks of ~0.8 KiB with their buffer tables), appends hit the
// last chunk without a search (checked first), random access is one binary
// search over len/32 pointers, and an insertion moves pointers only. A two-level radix table would cost memory
// proportional to the offset range (100 GiB / 4 KiB / 512 = 51200 pointers for a
// top level alone); a map of blocks costs an allocation per block and random
// iteration order for SEEK_DATA.
//
// Copy-on-write. Clone copies the chunk pointer slice and marks every chunk
// shared (owner nil). A shared chunk is copied (its header and buffer table,
// not its buffers) by whichever fileData mutates it first; the copy owns none
// of its buffers (owned mask 0). A block buffer is written in place only if its chunk is
// owned by the writer and its owned bit is set; otherwise a fresh buffer replaces
// it. So a Clone never shares a buffer that someone later mutates in place.
//
// Invariants (checked by checkInvariants in tests):
//   - chunks are sorted by base, bases are distinct multiples of chunkBlocks,
//     and no chunk is empty (written|unwr != 0);
//   - written & unwr == 0; cached ⊆ unwr; owned ⊆ {j : bufs[j] != nil};
//     bufs[j] != nil only for written blocks;
//   - delayed ⊆ written, unconv ⊆ written, delayed & unconv == 0;
//   - mem == blockSize × (number of non-nil bufs).
//
// Not safe for concurrent use: the owning inode's lock guards it. Even ReadAt
// must not race with Clone or CopyRange (those rewrite ownership marks).
//
// Kernel facts modelled (Linux 6.18, ext4, 4 KiB blocks; data_linux_test.go
// checks each against the kernel):
//   - SEEK_DATA/SEEK_HOLE work on whole blocks; ENXIO at or past EOF; the
//     implicit hole at EOF; unwritten blocks are holes unless their page is
//     cached (CacheUnwritten); a write into an unwritten block makes it data.
//   - fallocate: mode 0/KEEP_SIZE allocate every block the range touches;
//     PUNCH_HOLE frees whole blocks, zeroes partial written ones and leaves
//     partial unwritten ones allocated, and is clamped to EOF (PunchHoleAtSize);
//     ZERO_RANGE turns whole blocks and partial holes unwritten and zeroes
//     partial written blocks in place.
//   - ftruncate to a size <= the current one frees every block from the block
//     after the new EOF on, KEEP_SIZE preallocation included; growing frees nothing.
//   - st_blocks: 8 per allocated block plus extent-tree blocks, which change
//     when ext4 changes its extent tree (writeback, fallocate, punch,
//     truncate), not when the page cache does (see Blocks).
//
// NB, not modelled:
//   - Physical placement. Extent counts assume logically contiguous blocks of
//     one kind are one extent; ext4 often places blocks allocated by different
//     writebacks apart (about a third of random kernel sequences diverge), so
//     st_blocks can be 8 lower than ext4's once a file has passed 4 extents.
//   - Readahead: CacheUnwritten marks exactly the pages it is given; ext4's
//     readahead may cache more (the kernel test disables it with FADV_RANDOM).
//   - Pages cached over holes that later become unwritten (fallocate after a
//     read of the hole) would be data to SEEK_DATA on ext4; the model only
//     marks unwritten blocks.
//   - Delayed allocation is modelled for the extent tree only (delayed and
//     unconverted blocks, Writeback): reads, SEEK_DATA and the allocated-block
//     count see a written block at once, as they do on ext4.
//   - Extent trees deeper than one level are approximated (treeBlocksFor).

const (
	chunkShift  = 5
	chunkBlocks = 1 << chunkShift
	chunkMask   = chunkBlocks - 1

	// DefaultBlockSize is ext4's usual block size, the unit of allocation,
	// SEEK_DATA/SEEK_HOLE answers and st_blocks accounting.
	DefaultBlockSize = 4096

	// ext4 extent-tree geometry with 4 KiB blocks: the inode's i_block holds a
	// header and 4 extents; a tree block holds (4096-12)/12 = 340 entries. An
	// extent covers at most 32768 written or 32767 unwritten blocks.
	ext4InodeExtents    = 4
	ext4BlockEntries    = 340
	ext4MaxWrittenLen   = 32768
	ext4MaxUnwrittenLen = 32767
)

type chunk struct {
	base    int64                // index of the first block covered; a multiple of chunkBlocks
	owner   *fileData            // the only fileData that may mutate this chunk in place; nil = shared
	written uint32               // blocks holding data
	unwr    uint32               // allocated, unwritten blocks (read zeros)
	cached  uint32               // unwritten blocks whose pages are in the page cache (SEEK_DATA sees data)
	delayed uint32               // written blocks the extent tree still maps as holes (delayed allocation)
	unconv  uint32               // written blocks the extent tree still maps as unwritten (until writeback)
	owned   uint32               // blocks whose buffer only this chunk references (valid if owner != nil)
	bufs    *[chunkBlocks][]byte // nil while no block has a buffer (holes, unwritten, written zeros)
}

// buf returns the buffer of block j, nil if it has none.
func (c *chunk) buf(j int) []byte {
	if c.bufs == nil {
		return nil
	}
	return c.bufs[j]
}

// setBuf sets the buffer of block j of a chunk its fileData owns.
func (c *chunk) setBuf(j int, b []byte) {
	if c.bufs == nil {
		if b == nil {
			return
		}
		c.bufs = new([chunkBlocks][]byte)
	}
	c.bufs[j] = b
}

// fileData is the sparse content of one regular file at one durability level
// (page cache, device cache or durable media). It knows nothing of the file size:
// callers clamp reads to the size they keep. Not safe for concurrent use: the owning
// inode's lock guards it. Blocks are blockSize bytes (4096 by default); memory is
// proportional to blocks written, never to offsets or file size.
//
// Bytes at or beyond the caller's file size always read as zeros provided the
// caller follows ext4: a write past EOF extends the size, and Truncate is called
// whenever the size shrinks (see Truncate).
type fileData struct {
	bs     int64 // block size, a power of two
	shift  uint  // log2(bs)
	chunks []*chunk
	mem    int64 // bs × non-nil buffers

	// Extent-tree blocks currently charged to st_blocks, and whether the
	// extent tree has had an extent inserted or converted since settleTree
	// last ran (see Blocks).
	tree     int64
	inserted bool

	// Buffers of blocks written in increasing order (appends) are carved out of
	// a slab that doubles up to maxSlabBlocks, so a growing file costs one
	// allocation per slab rather than one per block; random writes allocate
	// block by block. A slab wastes at most its unused tail (< maxSlabBlocks
	// blocks, and never more than the file has written).
	slab       []byte
	slabBlocks int64
	lastAlloc  int64 // index of the block that took the last slab buffer; -1 none
}

// maxSlabBlocks bounds a slab (64 blocks: 256 KiB at 4 KiB).
const maxSlabBlocks = 64

// blockFrom returns a new buffer for block bi holding a copy of src (len(src) ==
// bs): from the slab when bi follows the last slab block, else a fresh copy.
func (d *fileData) blockFrom(bi int64, src []byte) []byte {
	if bi != d.lastAlloc+1 {
		d.lastAlloc = -2
		return newBlock(d.bs, src)
	}
	if len(d.slab) == 0 {
		d.slabBlocks = min(max(d.slabBlocks*2, 1), maxSlabBlocks)
		if d.slabBlocks == 1 { // the first slab is the block alone
			d.lastAlloc = bi
			return newBlock(d.bs, src)
		}
		d.slab = make([]byte, d.slabBlocks*d.bs)
	}
	b := d.slab[:d.bs:d.bs]
	d.slab = d.slab[d.bs:]
	d.lastAlloc = bi
	copy(b, src)
	return b
}

// newFileData returns an empty file (all holes). blockSize must be a power of two;
// 0 means DefaultBlockSize.
func newFileData(blockSize int64) *fileData {
	d := new(fileData)
	d.init(blockSize)
	return d
}

// init makes d an empty file, as newFileData, in place.
func (d *fileData) init(blockSize int64) {
	if blockSize == 0 {
		blockSize = DefaultBlockSize
	}
	if blockSize < 512 || blockSize&(blockSize-1) != 0 {
		panic(fmt.Sprintf("vfs: block size %d is not a power of two >= 512", blockSize))
	}
	*d = fileData{bs: blockSize, shift: uint(bits.TrailingZeros64(uint64(blockSize))), lastAlloc: -1}
}

// BlockSize returns the block size given to newFileData.
func (d *fileData) BlockSize() int64 { return d.bs }

// search returns the position of the first chunk with base >= cbase and whether
// that chunk has base == cbase. The last chunk is checked first (appends).
func (d *fileData) search(cbase int64) (int, bool) {
	// Appends, and every access to a file of at most 32 blocks, hit the last
	// chunk: checked first, before any binary search.
	if n := len(d.chunks); n > 0 && d.chunks[n-1].base == cbase {
		return n - 1, true
	}
	return d.searchSlow(cbase)
}

// searchSlow is search when the last chunk's base is not cbase.
func (d *fileData) searchSlow(cbase int64) (int, bool) {
	n := len(d.chunks)
	if n == 0 || d.chunks[n-1].base < cbase {
		return n, false
	}
	// A file without holes up to cbase (laid out, or written from its
	// start) holds chunk k at position k: one probe instead of a search.
	if k := cbase >> chunkShift; k < int64(n) && d.chunks[k].base == cbase {
		return int(k), true
	}
	i := sort.Search(n, func(i int) bool { return d.chunks[i].base >= cbase })
	return i, i < n && d.chunks[i].base == cbase
}

// wchunk returns the chunk with base cbase, owned by d, creating it (empty) if
// absent or copying it if shared. i is its position.
func (d *fileData) wchunk(cbase int64) (c *chunk, i int) {
	i, ok := d.search(cbase)
	if !ok {
		c = newChunk(cbase, d)
		d.chunks = append(d.chunks, nil)
		copy(d.chunks[i+1:], d.chunks[i:])
		d.chunks[i] = c
		return c, i
	}
	return d.own(i), i
}

// own makes d.chunks[i] owned by d (copying its header if shared) and returns it.
func (d *fileData) own(i int) *chunk {
	c := d.chunks[i]
	if c.owner != d {
		cp := *c
		cp.owner = d
		cp.owned = 0
		if c.bufs != nil {
			bufs := *c.bufs // the buffer table is the chunk's own, copied too
			cp.bufs = &bufs
		}
		c = &cp
		d.chunks[i] = c
	}
	return c
}

// removeEmpty drops chunk i if it holds no allocated block. It reports whether
// it did.
func (d *fileData) removeEmpty(i int) bool {
	if c := d.chunks[i]; c.written|c.unwr != 0 {
		return false
	}
	copy(d.chunks[i:], d.chunks[i+1:])
	d.chunks[len(d.chunks)-1] = nil
	d.chunks = d.chunks[:len(d.chunks)-1]
	return true
}

// wbuf returns a buffer of block j of owned chunk c that d may write in place.
// If keep, the block's current content is preserved (copied out of a shared
// buffer, or zeros for a block without one); otherwise the content of a newly
// allocated buffer is zero and the caller overwrites all of it.
func (d *fileData) wbuf(c *chunk, j int, keep bool) []byte {
	bit := uint32(1) << j
	old := c.buf(j)
	if c.owned&bit != 0 {
		return old
	}
	nb := make([]byte, d.bs)
	if old == nil {
		d.mem += d.bs
	} else if keep {
		copy(nb, old)
	}
	c.setBuf(j, nb)
	c.owned |= bit
	return nb
}

// freeBufs drops the buffers of the blocks in mask of owned chunk c.
func (d *fileData) freeBufs(c *chunk, mask uint32) {
	for m := mask; m != 0; m &= m - 1 {
		j := bits.TrailingZeros32(m)
		if c.buf(j) != nil {
			c.bufs[j] = nil
			d.mem -= d.bs
		}
	}
	c.owned &^= mask
}

// ReadAt fills p with the content at off. Holes and unwritten blocks read as
// zeros; it never allocates. Whole aligned blocks are one copy each. It does not
// clamp to a file size (the caller does) and does not mark pages cached (see
// CacheUnwritten).
func (d *fileData) ReadAt(p []byte, off int64) {
	d.readAt(p, off)
}

// readAt is ReadAt that also reports whether the range holds an unwritten block
// not marked cached (see CacheUnwritten), found on the way at no extra cost.
func (d *fileData) readAt(p []byte, off int64) (uncached bool) {
	// The common read, within one written block: one lookup and one copy.
	if b := d.block(off, int64(len(p))); b != nil {
		copy(p, b[off&(d.bs-1):])
		return false
	}
	for len(p) > 0 {
		bi := off >> d.shift
		i, ok := d.search(bi &^ chunkMask)
		if !ok {
			// A hole up to the next chunk (or to the end of p).
			n := int64(len(p))
			if i < len(d.chunks) {
				n = min(n, d.chunks[i].base<<d.shift-off)
			}
			clear(p[:n])
			p, off = p[n:], off+n
			continue
		}
		c := d.chunks[i]
		for j := int(bi & chunkMask); j < chunkBlocks && len(p) > 0; j++ {
			in := off & (d.bs - 1)
			n := min(int64(len(p)), d.bs-in)
			if b := c.buf(j); b != nil {
				copy(p[:n], b[in:in+n])
			} else {
				clear(p[:n])
				if (c.unwr&^c.cached)&(1<<j) != 0 {
					uncached = true
				}
			}
			p, off = p[n:], off+n
		}
	}
	return uncached
}

// block returns the buffer of the written block that holds all of [off, off+n)
// (n > 0), or nil when the range crosses a block boundary or its block is a hole
// or unwritten.
func (d *fileData) block(off, n int64) []byte {
	if b, ok := d.lastChunkBlock(off, n); ok {
		return b
	}
	return d.blockSlow(off, n)
}

// lastChunkBlock is block when the block lies in the last chunk, which block
// checks first (as search does); ok is false otherwise. It is small enough to
// inline into the read fast path.
func (d *fileData) lastChunkBlock(off, n int64) (b []byte, ok bool) {
	c := d.chunks
	if len(c) == 0 || off&(d.bs-1)+n > d.bs {
		return nil, false
	}
	last, bi := c[len(c)-1], off>>d.shift
	if last.base != bi&^chunkMask {
		return nil, false
	}
	return last.buf(int(bi & chunkMask)), true
}

// blockSlow is block outside the last chunk.
func (d *fileData) blockSlow(off, n int64) []byte {
	if off&(d.bs-1)+n > d.bs {
		return nil
	}
	bi := off >> d.shift
	i, ok := d.searchSlow(bi &^ chunkMask)
	if !ok {
		return nil
	}
	return d.chunks[i].buf(int(bi & chunkMask))
}

// WriteAt stores p at off. Holes and unwritten blocks it touches become written
// for reads and SEEK_DATA (ext4's dirty page), but the extent tree changes only
// at writeback: a hole becomes a delayed block (ext4 allocates it at
// writeback), an unwritten block an unconverted one (ext4 converts it when the
// writeback I/O completes); see Writeback. It allocates one buffer per block
// that had none (or whose buffer is shared with a clone) and one chunk header
// per 32 new blocks; whole aligned blocks are one copy each. A block left all
// zeros (zeros over a whole block, or into a block without a buffer) holds no
// buffer: it is written data like any other to reads, SEEK_DATA/SEEK_HOLE, the
// extent tree and st_blocks (ext4 stores written zeros as data), at no memory
// cost; so a file laid out with zeros costs memory for its chunk headers only.
func (d *fileData) WriteAt(p []byte, off int64) { d.write(p, off, int64(len(p))) }

// WriteZeros is WriteAt of n zero bytes at off, without a buffer to read them
// from: what a write whose bytes are not kept leaves (see WriteNoData).
func (d *fileData) WriteZeros(off, n int64) { d.write(nil, off, n) }

// write is WriteAt of p, or of size zeros when p is nil.
func (d *fileData) write(p []byte, off, size int64) {
	for size > 0 {
		bi := off >> d.shift
		c, _ := d.wchunk(bi &^ chunkMask)
		for j := int(bi & chunkMask); j < chunkBlocks && size > 0; j++ {
			bit := uint32(1) << j
			in := off & (d.bs - 1)
			n := min(size, d.bs-in)
			if c.written&bit == 0 {
				if c.unwr&bit != 0 {
					c.unconv |= bit
				} else {
					c.delayed |= bit
				}
				c.written |= bit
				c.unwr &^= bit
				c.cached &^= bit
			}
			if p == nil && c.buf(j) != nil && n != d.bs {
				// Zeros over part of a block with a buffer.
				b := d.wbuf(c, j, true)
				clear(b[in : in+n])
			} else if zero := c.buf(j) == nil || n == d.bs; zero && (p == nil || allZero(p[:n])) {
				// Zeros into a block that reads zeros, or over a whole block:
				// the block is written data without a buffer.
				d.freeBufs(c, bit)
			} else if n == d.bs && c.owned&bit == 0 {
				// A whole block into a fresh buffer: allocate it as a copy of p,
				// so its bytes are written once (make would zero them first).
				if c.buf(j) == nil {
					d.mem += d.bs
				}
				c.setBuf(j, d.blockFrom(bi&^chunkMask+int64(j), p[:n]))
				c.owned |= bit
			} else {
				b := d.wbuf(c, j, n != d.bs)
				copy(b[in:in+n], p[:n])
			}
			if p != nil {
				p = p[n:]
			}
			off, size = off+n, size-n
		}
	}
}

// Fill makes every block touched by [off, off+n) written data as after
// writeback (neither delayed nor unconverted): the bytes of the range read
// zeros, those of partial blocks outside it are kept. Its cost is one step
// per 32 whole blocks, not per block.
func (d *fileData) Fill(off, n int64) {
	if n <= 0 {
		return
	}
	head, first, last, tail := d.blockRange(off, n)
	for _, pt := range []partial{head, tail} {
		if pt.bi >= 0 {
			d.write(nil, pt.bi<<d.shift+pt.from, pt.to-pt.from)
		}
	}
	d.setRange(first, last, true, func(c *chunk, mask uint32) {
		if mask&^c.written != 0 {
			d.inserted = true
		}
		d.freeBufs(c, mask)
		c.written |= mask
		c.unwr &^= mask
		c.cached &^= mask
	})
	d.Writeback(off, n)
}

// zeroBlock is what allZero compares with.
var zeroBlock [4096]byte

// allZero reports whether every byte of p is zero.
func allZero(p []byte) bool {
	for len(p) > 0 {
		n := min(len(p), len(zeroBlock))
		if !bytes.Equal(p[:n], zeroBlock[:n]) {
			return false
		}
		p = p[n:]
	}
	return true
}

// blockRange splits [off, off+n) into a partial head block, whole blocks
// [first, last) and a partial tail block. A partial block is reported as
// (index, from, to) with 0 <= from < to <= bs, or index -1 if there is none.
type partial struct {
	bi       int64
	from, to int64
}

func (d *fileData) blockRange(off, n int64) (head partial, first, last int64, tail partial) {
	end := off + n
	head.bi, tail.bi = -1, -1
	first = (off + d.bs - 1) >> d.shift
	last = end >> d.shift
	if first > last { // off and end inside one block, neither aligned
		head = partial{off >> d.shift, off & (d.bs - 1), end & (d.bs - 1)}
		return head, first, first, tail
	}
	if off&(d.bs-1) != 0 {
		head = partial{off >> d.shift, off & (d.bs - 1), d.bs}
	}
	if end&(d.bs-1) != 0 {
		tail = partial{last, 0, end & (d.bs - 1)}
	}
	return head, first, last, tail
}

// zeroPartial zeroes bytes [from, to) of block bi if it is written; holes and
// unwritten blocks already read zeros and stay as they are. If alloc
// (ZeroRange), a block the extent tree maps as a hole gets an unwritten extent:
// a hole becomes unwritten, a delayed block unconverted (ext4_zero_range
// allocates the range, partial blocks included, before it zeroes them).
func (d *fileData) zeroPartial(pt partial, alloc bool) {
	if pt.bi < 0 {
		return
	}
	bit := uint32(1) << (pt.bi & chunkMask)
	i, ok := d.search(pt.bi &^ chunkMask)
	if !ok || (d.chunks[i].written|d.chunks[i].unwr)&bit == 0 {
		if alloc {
			c, _ := d.wchunk(pt.bi &^ chunkMask)
			c.unwr |= bit
			d.inserted = true
		}
		return
	}
	if alloc && d.chunks[i].delayed&bit != 0 {
		c := d.own(i)
		c.delayed &^= bit
		c.unconv |= bit
		d.inserted = true
	}
	if d.chunks[i].written&bit == 0 || d.chunks[i].buf(int(pt.bi&chunkMask)) == nil {
		return // unwritten, or written zeros
	}
	c := d.own(i)
	b := d.wbuf(c, int(pt.bi&chunkMask), true)
	clear(b[pt.from:pt.to])
}

// setRange applies fn to every chunk that holds blocks of [first, last), with
// mask selecting those blocks, after making the chunk owned by d. If create,
// chunks are created for the whole range; otherwise absent chunks are skipped.
// Chunks left empty are dropped.
func (d *fileData) setRange(first, last int64, create bool, fn func(c *chunk, mask uint32)) {
	for bi := first; bi < last; {
		cbase := bi &^ chunkMask
		next := min(cbase+chunkBlocks, last)
		var i int
		if create {
			_, i = d.wchunk(cbase)
		} else {
			var ok bool
			i, ok = d.search(cbase)
			if !ok {
				if i == len(d.chunks) {
					return
				}
				bi = d.chunks[i].base
				continue
			}
		}
		lo, hi := uint(bi-cbase), uint(next-cbase)
		mask := uint32((uint64(1)<<hi - 1) &^ (uint64(1)<<lo - 1))
		fn(d.own(i), mask)
		d.removeEmpty(i)
		bi = next
	}
}

// Truncate implements the data side of ftruncate(2) to a size no larger than
// the current one (ext4_setattr's shrink path, taken also for an unchanged
// size): every block wholly at or after size is freed (including blocks
// fallocated with KEEP_SIZE beyond EOF), and the tail of a partial last block
// is zeroed if written. Callers must not call it when the size grows: ext4
// keeps KEEP_SIZE blocks beyond EOF across a size increase.
func (d *fileData) Truncate(size int64) {
	if size < 0 {
		size = 0
	}
	d.settleTree()
	first := (size + d.bs - 1) >> d.shift
	if size&(d.bs-1) != 0 {
		d.zeroPartial(partial{size >> d.shift, size & (d.bs - 1), d.bs}, false)
	}
	// Drop the partial chunk's tail blocks, then whole chunks.
	cbase := first &^ chunkMask
	if first != cbase {
		d.setRange(first, cbase+chunkBlocks, false, d.makeHole)
		cbase += chunkBlocks
	}
	i, _ := d.search(cbase)
	for _, c := range d.chunks[i:] {
		for j := range chunkBlocks {
			if c.buf(j) != nil {
				d.mem -= d.bs
			}
		}
	}
	clear(d.chunks[i:])
	d.chunks = d.chunks[:i]
	d.shrinkTree()
}

// kind returns what the extent tree maps block bi as: 1 written, 2 unwritten,
// 0 a hole (or bi < 0). A delayed block is a hole, an unconverted one unwritten.
func (d *fileData) kind(bi int64) int {
	if bi < 0 {
		return 0
	}
	i, ok := d.search(bi &^ chunkMask)
	if !ok {
		return 0
	}
	bit := uint32(1) << (bi & chunkMask)
	switch c := d.chunks[i]; {
	case (c.written&^(c.delayed|c.unconv))&bit != 0:
		return 1
	case (c.unwr|c.unconv)&bit != 0:
		return 2
	}
	return 0
}

// hasDelayed reports whether a block is delayed: ext4's
// i_reserved_data_blocks is not zero.
func (d *fileData) hasDelayed() bool {
	if d == nil { // no data yet
		return false
	}
	for _, c := range d.chunks {
		if c.delayed != 0 {
			return true
		}
	}
	return false
}

// pendingMap reports whether block bi is written but not yet mapped written by
// the extent tree (delayed or unconverted): what writeback has to map.
func (d *fileData) pendingMap(bi int64) bool {
	if bi < 0 {
		return false
	}
	i, ok := d.search(bi &^ chunkMask)
	if !ok {
		return false
	}
	c := d.chunks[i]
	return (c.delayed|c.unconv)&(uint32(1)<<(bi&chunkMask)) != 0
}

// mapRun is Writeback of blocks [first, end) that also returns the last of
// them that was pending mapping (pendingMap) before, -1 if none: one step per
// chunk.
func (d *fileData) mapRun(first, end int64) int64 {
	last := int64(-1)
	i, _ := d.search(first &^ chunkMask)
	for ; i < len(d.chunks) && d.chunks[i].base < end; i++ {
		c := d.chunks[i]
		lo := max(first-c.base, 0)
		hi := min(end-c.base, chunkBlocks)
		mask := uint32((uint64(1)<<hi - 1) &^ (uint64(1)<<lo - 1))
		if pend := (c.delayed | c.unconv) & mask; pend != 0 {
			last = c.base + int64(31-bits.LeadingZeros32(pend))
			c = d.own(i)
			c.delayed &^= mask
			c.unconv &^= mask
			d.inserted = true
		}
	}
	return last
}

// growTree charges the extent-tree blocks needed for peak extents (ext4 never
// frees tree blocks when extents go away, see Blocks).
func (d *fileData) growTree(peak int64) {
	d.tree = max(d.tree, treeBlocksFor(peak))
}

// shrinkTree resets the tree when the extent tree has no extent left (ext4
// sets the depth back to 0 when removal empties the root; delayed blocks are
// not in the tree).
func (d *fileData) shrinkTree() {
	for _, c := range d.chunks {
		if c.written&^c.delayed|c.unwr != 0 {
			return
		}
	}
	d.tree = 0
}

// settleTree applies the extent insertions and conversions made since it last
// ran (inserted) to the tree-block count, as Blocks states: a tree needing more
// blocks than charged grows; a one-leaf tree whose extents fit in the inode
// again is pulled back into it (ext4_ext_try_to_merge_up). Removals call it
// first, so the count it sees is the one after the last insertion.
func (d *fileData) settleTree() {
	if !d.inserted {
		return
	}
	d.inserted = false
	n := d.Extents()
	switch need := treeBlocksFor(n); {
	case n == 0:
		d.tree = 0
	case need > d.tree:
		d.tree = need
	case d.tree == 1 && n <= ext4InodeExtents:
		d.tree = 0
	}
}

// makeHole frees the blocks in mask of owned chunk c.
func (d *fileData) makeHole(c *chunk, mask uint32) {
	d.freeBufs(c, mask&c.written)
	c.written &^= mask
	c.unwr &^= mask
	c.cached &^= mask
	c.delayed &^= mask
	c.unconv &^= mask
}

// Allocate implements fallocate(2) mode 0 and FALLOC_FL_KEEP_SIZE: every hole
// in the blocks touched by [off, off+n) becomes unwritten (allocated, reads
// zeros, SEEK_DATA reports a hole); written and unwritten blocks are untouched,
// except that a delayed block becomes unconverted (ext4_alloc_file_blocks maps
// the extent tree, where a block written but not yet written back is a hole,
// and gives it an unwritten extent under the dirty page). The caller updates
// the size for mode 0.
func (d *fileData) Allocate(off, n int64) {
	if n <= 0 {
		return
	}
	first, last := off>>d.shift, (off+n+d.bs-1)>>d.shift
	d.setRange(first, last, true, func(c *chunk, mask uint32) {
		if add := mask &^ (c.written | c.unwr); add != 0 {
			c.unwr |= add
			d.inserted = true
		}
		if conv := mask & c.delayed; conv != 0 {
			c.delayed &^= conv
			c.unconv |= conv
			d.inserted = true
		}
	})
}

// AllocateWritten gives every hole among the blocks touched by [off, off+n) a
// written extent of zeros (no buffer), mapped at once (ext4_map_blocks with
// EXT4_GET_BLOCKS_CREATE, as ext4_iomap_alloc does for blocks at or past
// EOF); allocated blocks are untouched.
func (d *fileData) AllocateWritten(off, n int64) {
	if n <= 0 {
		return
	}
	first, last := off>>d.shift, (off+n+d.bs-1)>>d.shift
	d.setRange(first, last, true, func(c *chunk, mask uint32) {
		if add := mask &^ (c.written | c.unwr); add != 0 {
			c.written |= add
			d.inserted = true
		}
	})
}

// Writeback records that ext4 has written back the blocks touched by
// [off, off+n) (fsync, fdatasync, sync_file_range, the flush before O_DIRECT
// I/O, auto_da_alloc's flush, POSIX_FADV_DONTNEED; see vfs.FS.allocDirty
// and its callers):
// delayed blocks get their written extent (ext4 inserts them unwritten,
// EXT4_GET_BLOCKS_IO_CREATE_EXT, and converts them at I/O completion) and
// unconverted blocks are converted (ext4_convert_unwritten_extents_endio).
// Both end in ext4_ext_try_to_merge, so the extent tree is settled as for
// any insertion (see Blocks). Blocks already written back are unaffected.
func (d *fileData) Writeback(off, n int64) {
	if n <= 0 {
		return
	}
	first, last := off>>d.shift, (off+n+d.bs-1)>>d.shift
	for bi := first; bi < last; {
		cbase := bi &^ chunkMask
		i, ok := d.search(cbase)
		if !ok {
			if i == len(d.chunks) {
				return
			}
			bi = d.chunks[i].base
			continue
		}
		next := min(cbase+chunkBlocks, last)
		lo, hi := uint(bi-cbase), uint(next-cbase)
		mask := uint32((uint64(1)<<hi - 1) &^ (uint64(1)<<lo - 1))
		if (d.chunks[i].delayed|d.chunks[i].unconv)&mask != 0 {
			c := d.own(i)
			c.delayed &^= mask
			c.unconv &^= mask
			d.inserted = true
		}
		bi = next
	}
}

// PunchHoleAtSize is PunchHole as ext4_punch_hole applies it to a file of the
// given size, which is what the fallocate(2) path should call: nothing happens
// if off >= size (not even to blocks fallocated beyond EOF), and a range that
// reaches past size is extended to the end of the block holding size, so a
// partial last block is freed rather than zeroed. Verified on Linux 6.18: with
// size 2 and block 0 written, punching [0, 184) frees block 0.
func (d *fileData) PunchHoleAtSize(off, n, size int64) {
	if n <= 0 || off >= size {
		return
	}
	if off+n > size {
		n = (size+d.bs-1)&^(d.bs-1) - off
	}
	d.PunchHole(off, n)
}

// PunchHole implements FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE on exactly
// [off, off+n), without ext4's clamping to the file size (see PunchHoleAtSize): whole blocks
// in [off, off+n) are freed (become holes, written or unwritten alike); the
// bytes of partial blocks are zeroed in place if written, and partial blocks
// keep their state (a partial unwritten block stays allocated, as ext4 does).
func (d *fileData) PunchHole(off, n int64) {
	if n <= 0 {
		return
	}
	d.settleTree()
	head, first, last, tail := d.blockRange(off, n)
	d.zeroPartial(head, false)
	d.zeroPartial(tail, false)
	if first < last {
		// ext4_ext_remove_space first splits the extent holding the last
		// punched block if it goes on past it: one more extent, for a moment.
		peak := d.Extents()
		if k := d.kind(last - 1); k != 0 && k == d.kind(last) {
			peak++
		}
		d.growTree(peak)
		d.setRange(first, last, false, d.makeHole)
		d.shrinkTree()
	}
}

// ZeroRange implements FALLOC_FL_ZERO_RANGE (with or without KEEP_SIZE; the
// caller updates the size): afterwards [off, off+n) reads zeros. As on ext4,
// every whole block becomes unwritten (written blocks are converted, holes
// allocated, their cached pages dropped); a partial block that is written is
// zeroed in place and stays written, a partial hole becomes unwritten, a partial
// unwritten block stays unwritten.
func (d *fileData) ZeroRange(off, n int64) {
	if n <= 0 {
		return
	}
	d.settleTree()
	head, first, last, tail := d.blockRange(off, n)
	d.zeroPartial(head, true)
	d.zeroPartial(tail, true)
	if first < last {
		// ext4_zero_range allocates the holes of the range first (the edges
		// above), then converts written extents to unwritten by splitting them
		// (EXT4_GET_BLOCKS_PRE_IO: no merge) before merging the pieces: a
		// written extent straddling either end of the range adds one extent
		// for a moment, and each written run inside it counts apart.
		d.Allocate(first<<d.shift, (last-first)<<d.shift)
		peak := d.Extents()
		if k := d.kind(first); k == 1 && d.kind(first-1) == 1 {
			peak++
		}
		if k := d.kind(last - 1); k == 1 && d.kind(last) == 1 {
			peak++
		}
		d.growTree(peak)
		d.setRange(first, last, true, func(c *chunk, mask uint32) {
			if mask&^(c.unwr|c.unconv) != 0 {
				d.inserted = true
			}
			d.freeBufs(c, mask&c.written)
			c.written &^= mask
			c.cached &^= mask
			c.delayed &^= mask
			c.unconv &^= mask
			c.unwr |= mask
		})
	}
}

// CacheUnwritten records that the pages of the unwritten blocks touched by
// [off, off+n) are now in the page cache, as a buffered read of them leaves
// them: ext4's SEEK_DATA/SEEK_HOLE then report those blocks as data
// (mapping_seek_hole_data finds uptodate folios over unwritten extents). Holes
// and written blocks are unaffected. Only meaningful on the page-cache level.
//
// Observed on Linux 6.18, ext4: a 100-byte pread inside a 16-block unwritten
// extent made exactly that one block data for SEEK_DATA; fsync did not change
// that; POSIX_FADV_DONTNEED (or eviction) made it a hole again (DropCache).
func (d *fileData) CacheUnwritten(off, n int64) {
	if n <= 0 {
		return
	}
	first, last := off>>d.shift, (off+n+d.bs-1)>>d.shift
	d.setRange(first, last, false, func(c *chunk, mask uint32) {
		c.cached |= mask & c.unwr
	})
}

// DropCache forgets every page-cache mark set by CacheUnwritten (the pages were
// evicted: POSIX_FADV_DONTNEED, drop_caches, memory pressure).
func (d *fileData) DropCache() {
	for i, c := range d.chunks {
		if c.cached != 0 {
			d.own(i).cached = 0
		}
	}
}

// SeekData returns the lseek(2) SEEK_DATA answer for a file of the given size:
// the smallest offset >= off inside a written block (or an unwritten block
// whose page is cached), or -1 for ENXIO when off < 0, off >= size or no data
// lies in [off, size). Granularity is the block, as on ext4.
func (d *fileData) SeekData(off, size int64) int64 {
	return d.seekBlock(off, size, true)
}

// SeekWritten is SeekData by the extent tree alone: the smallest offset >= off
// inside a written block, ignoring the page cache (an unwritten block stays
// unwritten to iomap, cached or not), or -1.
func (d *fileData) SeekWritten(off, size int64) int64 {
	return d.seekBlock(off, size, false)
}

// seekBlock is SeekData (withCache) or SeekWritten.
func (d *fileData) seekBlock(off, size int64, withCache bool) int64 {
	if off < 0 || off >= size {
		return -1
	}
	bi := off >> d.shift
	i, _ := d.search(bi &^ chunkMask)
	for ; i < len(d.chunks); i++ {
		c := d.chunks[i]
		m := c.written
		if withCache {
			m |= c.cached
		}
		if c.base <= bi {
			m &^= uint32(1)<<(bi-c.base) - 1
		}
		if m == 0 {
			continue
		}
		pos := (c.base + int64(bits.TrailingZeros32(m))) << d.shift
		if pos >= size {
			return -1
		}
		return max(pos, off)
	}
	return -1
}

// SeekHole returns the lseek(2) SEEK_HOLE answer for a file of the given size:
// the smallest offset >= off in a hole or unwritten (uncached) block, or size
// (the implicit hole at EOF) if there is none before it; -1 for ENXIO when
// off < 0 or off >= size.
func (d *fileData) SeekHole(off, size int64) int64 {
	return d.seekHole(off, size, size)
}

// HoleIn reports whether [off, off+n) holds a hole (or an unwritten uncached
// block) below size: SeekHole(off, size) < min(off+n, size), at a cost
// proportional to n rather than to the data after off.
func (d *fileData) HoleIn(off, n, size int64) bool {
	end := min(off+n, size)
	return n > 0 && off >= 0 && off < end && d.seekHole(off, size, end) < end
}

// seekHole is SeekHole that stops looking at limit (<= size): past it, the
// answer is some offset >= limit.
func (d *fileData) seekHole(off, size, limit int64) int64 {
	if off < 0 || off >= size {
		return -1
	}
	bi := off >> d.shift
	i, _ := d.search(bi &^ chunkMask)
	for ; i < len(d.chunks) && bi<<d.shift < limit; i++ {
		c := d.chunks[i]
		if c.base > bi&^chunkMask {
			break // bi is in a hole before chunk i
		}
		holes := ^(c.written | c.cached) &^ (uint32(1)<<(bi-c.base) - 1)
		if holes != 0 {
			bi = c.base + int64(bits.TrailingZeros32(holes))
			break
		}
		bi = c.base + chunkBlocks
	}
	return min(max(bi<<d.shift, off), size)
}

// Extents returns the number of extents the model assigns to ext4's extent
// tree: maximal runs of consecutive blocks of one kind as the tree maps them
// (written, or unwritten; delayed blocks are holes and unconverted blocks
// unwritten until Writeback), each split into pieces of at most 32768
// (written) or 32767 (unwritten) blocks. NB: it assumes that logically contiguous blocks are
// physically contiguous. ext4's allocator does this for blocks allocated in
// increasing order (appends, one big write, fallocate) but not, in general, for a
// block filled in later between two allocated ones (it gets a block elsewhere
// and the file keeps three extents).
func (d *fileData) Extents() int64 {
	var n, run int64
	kind := 0 // 0 hole, 1 written, 2 unwritten
	next := int64(-1)
	flush := func() {
		if run > 0 {
			maxLen := int64(ext4MaxWrittenLen)
			if kind == 2 {
				maxLen = ext4MaxUnwrittenLen
			}
			n += (run + maxLen - 1) / maxLen
		}
		run, kind = 0, 0
	}
	for _, c := range d.chunks {
		if c.base != next {
			flush()
		}
		for j := 0; j < chunkBlocks; j++ {
			bit := uint32(1) << j
			k := 0
			switch {
			case (c.written&^(c.delayed|c.unconv))&bit != 0:
				k = 1
			case (c.unwr|c.unconv)&bit != 0:
				k = 2
			}
			if k != kind {
				flush()
				kind = k
			}
			if k != 0 {
				run++
			}
		}
		next = c.base + chunkBlocks
	}
	flush()
	return n
}

// AllocatedBlocks returns the number of written and of unwritten blocks.
func (d *fileData) AllocatedBlocks() (written, unwritten int64) {
	for _, c := range d.chunks {
		written += int64(bits.OnesCount32(c.written))
		unwritten += int64(bits.OnesCount32(c.unwr))
	}
	return written, unwritten
}

// treeBlocksFor is the number of extent-tree blocks ext4 needs for n extents
// when leaves are filled in order: none while they fit in the inode, then one
// leaf per 340 extents, plus index blocks once there are more than 4 leaves.
func treeBlocksFor(n int64) int64 {
	if n <= ext4InodeExtents {
		return 0
	}
	leaves := (n + ext4BlockEntries - 1) / ext4BlockEntries
	if leaves <= ext4InodeExtents {
		return leaves
	}
	idx := (leaves + ext4BlockEntries - 1) / ext4BlockEntries
	return leaves + idx
}

// Blocks returns st_blocks in 512-byte units as ext4 reports it: 8 per
// allocated block (written or unwritten; delayed blocks too, as ext4 counts
// delayed-allocation reservations) plus 8 per extent-tree block. It is the
// same whenever it is asked: asking changes nothing ext4 would see.
//
// Extent-tree blocks, as observed on Linux 6.18 (TestExtentTreeBlocks in
// package sim checks each rule against the kernel). The tree maps what
// Extents counts: blocks written back and allocated, not the page cache.
//   - With at most 4 extents the tree lives in the inode (no block); a 5th
//     extent moves them to a leaf block (+8), one leaf per 340 extents after.
//   - The tree changes when ext4 changes it: a buffered write only reserves
//     its blocks (WriteAt makes them delayed, or unconverted over unwritten
//     extents); they get their extents at writeback (Writeback: fsync,
//     fdatasync, sync_file_range, O_DIRECT, and the writeback that
//     auto_da_alloc and POSIX_FADV_DONTNEED start, see Kernel.Release and
//     Kernel.StartWriteback). Five one-block writes
//     are 40 before fsync and 48 after; punched to four before fsync they
//     never take a leaf (32).
//   - Every insertion or conversion of an extent ends in
//     ext4_ext_try_to_merge, whose ext4_ext_try_to_merge_up pulls a one-leaf
//     tree holding at most 4 extents back into the inode (-8): a writeback
//     allocating delayed blocks or converting unwritten ones, fallocate
//     allocating any block (a new extent or one merged into its neighbour,
//     at the top of ext4_ext_insert_extent), ZERO_RANGE allocating or
//     converting, a failing extending O_DIRECT write allocating the hole it
//     starts in past EOF (freed again at once: Kernel.TruncateFailedWrite).
//     Observed, from a leaf kept with 3 extents: fallocate of a
//     4th extent, a 4th written at fsync, a written extent zeroed all free
//     the leaf; from 4 extents: fsync of a write into a whole unwritten
//     extent, or into one that splits it and merges with the written
//     neighbour, frees it.
//   - Nothing else merges up: removals (punch, truncate: ext4_ext_rm_leaf)
//     keep the leaf even with one extent left, unless the file loses every
//     extent (depth 0 again); an overwrite of written blocks and a fallocate
//     of allocated blocks insert nothing. So five one-block extents written
//     back by fdatasync then truncated to one block are 16, not 8 (the
//     divergence TestKernelDiff found with seed 16450334979847100287).
//   - Transient extents count: punching blocks out of the middle or head of
//     an extent splits it first (EXT4_GET_BLOCKS_PRE_IO: no merge, so no
//     merge-up), and ZERO_RANGE splits written extents before converting
//     them; PunchHole and ZeroRange charge that peak.
//
// The model keeps the tree-block count in tree and applies insertions lazily:
// they set inserted, and settleTree (run by Blocks and first thing by every
// removal) grows the tree to what Extents needs, or pulls a one-leaf tree with
// at most 4 extents back in. That equals ext4's step-by-step result because
// between two removals the extent count only moves by insertions, and the
// last insertion's merge-up sees the final count. NB: the count assumes
// physical contiguity (see Extents): when ext4 places logically adjacent
// extents apart it may take a leaf the model does not, and keep it after the
// fragments are gone; trees deeper than one level are approximated
// (treeBlocksFor); and the merge-up is upstream ext4's: some hosts' ext4
// keeps the leaf (internal/ext4host probes which kind a test runs on).
func (d *fileData) Blocks() int64 {
	d.settleTree()
	w, u := d.AllocatedBlocks()
	return (w + u + d.tree) * (d.bs / 512)
}

// Clone returns an independent copy that shares block buffers copy-on-write.
// Its cost is one pointer per chunk (at most one per allocated block), never
// per byte. Afterwards neither side's mutations are visible to the other.
func (d *fileData) Clone() *fileData {
	for _, c := range d.chunks {
		c.owner = nil
	}
	cp := *d
	cp.chunks = append([]*chunk(nil), d.chunks...)
	cp.slab, cp.lastAlloc = nil, -1 // the slab's free tail stays d's alone
	return &cp
}

// CopyRange makes [off, off+n) of d equal to the same range of src: the bytes
// and, per block, the state (hole, unwritten, written, page-cache mark). Whole
// blocks share src's buffer copy-on-write; partial blocks are copied bytewise:
// a written source block makes the destination block written, an unwritten or
// hole source zeroes the range of a written destination block and otherwise
// gives the destination block its state. Destination blocks it writes are as
// after writeback, neither delayed nor unconverted: CopyRange builds the
// durable levels, whose blocks are on disk. Its cost is proportional to the
// number of blocks in the range (plus a binary search per 32 blocks), not to
// the file. d and src must have the same block size and must differ.
func (d *fileData) CopyRange(src *fileData, off, n int64) {
	if n <= 0 {
		return
	}
	if src.bs != d.bs {
		panic("vfs: CopyRange between different block sizes")
	}
	head, first, last, tail := d.blockRange(off, n)
	d.copyPartial(src, head)
	d.copyPartial(src, tail)
	for bi := first; bi < last; {
		cbase := bi &^ chunkMask
		next := min(cbase+chunkBlocks, last)
		lo, hi := uint(bi-cbase), uint(next-cbase)
		mask := uint32((uint64(1)<<hi - 1) &^ (uint64(1)<<lo - 1))
		si, sok := src.search(cbase)
		var sc *chunk
		if sok {
			sc = src.chunks[si]
		}
		if _, dok := d.search(cbase); !dok && (sc == nil || (sc.written|sc.unwr)&mask == 0) {
			bi = next
			continue // hole on both sides
		}
		c, i := d.wchunk(cbase)
		var stay uint32 // blocks of mask src has allocated
		if sc != nil {
			stay = sc.written | sc.unwr
		}
		if (c.written|c.unwr)&mask&^stay != 0 {
			// A removal: the insertions before it settle first, as for
			// PunchHole (see Blocks). Only then, so that a writeback copying
			// block after block does not recount the extents each time.
			d.settleTree()
		}
		if sc == nil {
			d.makeHole(c, mask)
		} else {
			if sc.written&mask&^c.written != 0 || sc.unwr&mask&^c.unwr != 0 ||
				(c.delayed|c.unconv)&mask != 0 {
				d.inserted = true
			}
			if sc.owner == src {
				sc.owned &^= mask // its buffers in mask become shared with d
			}
			d.freeBufs(c, mask)
			for m := mask & sc.written; m != 0; m &= m - 1 {
				j := bits.TrailingZeros32(m)
				if b := sc.buf(j); b != nil {
					c.setBuf(j, b)
					d.mem += d.bs
				}
			}
			c.written = c.written&^mask | sc.written&mask
			c.unwr = c.unwr&^mask | sc.unwr&mask
			c.cached = c.cached&^mask | sc.cached&mask
			c.delayed &^= mask
			c.unconv &^= mask
		}
		d.removeEmpty(i)
		bi = next
	}
	d.shrinkTree()
}

// copyPartial copies bytes [pt.from, pt.to) of block pt.bi from src to d.
func (d *fileData) copyPartial(src *fileData, pt partial) {
	if pt.bi < 0 {
		return
	}
	j := int(pt.bi & chunkMask)
	bit := uint32(1) << j
	var sc *chunk
	if i, ok := src.search(pt.bi &^ chunkMask); ok {
		sc = src.chunks[i]
	}
	if sc != nil && sc.written&bit != 0 {
		c, _ := d.wchunk(pt.bi &^ chunkMask)
		if c.written&bit == 0 || (c.delayed|c.unconv)&bit != 0 {
			d.inserted = true
			c.written |= bit
			c.unwr &^= bit
			c.cached &^= bit
			c.delayed &^= bit
			c.unconv &^= bit
		}
		if sb := sc.buf(j); sb != nil {
			b := d.wbuf(c, j, true)
			copy(b[pt.from:pt.to], sb[pt.from:pt.to])
		} else if c.buf(j) != nil {
			b := d.wbuf(c, j, true)
			clear(b[pt.from:pt.to])
		}
		return
	}
	// The source reads zeros here.
	i, ok := d.search(pt.bi &^ chunkMask)
	if ok && d.chunks[i].written&bit != 0 {
		d.zeroPartial(pt, false)
		return
	}
	var su, sca uint32
	if sc != nil {
		su, sca = sc.unwr&bit, sc.cached&bit
	}
	if !ok && su == 0 {
		return
	}
	c, ci := d.wchunk(pt.bi &^ chunkMask)
	if su != 0 && c.unwr&bit == 0 {
		d.inserted = true
	}
	c.unwr = c.unwr&^bit | su
	c.cached = c.cached&^bit | sca
	d.removeEmpty(ci)
}

// MemBytes returns the bytes of block buffers d references (a buffer shared
// with a clone counts in both).
func (d *fileData) MemBytes() int64 { return d.mem }

package vfs

import "sync"

// The memory of a file that nothing can read any more is reused by the next
// files: a program that creates, writes and removes small files (a Go test
// through the afero face) then costs no new block buffers or chunks.
//
// A file qualifies when all of these hold at the cancelling of its create
// and remove (cancelCreate), which leaves nothing pending that reads its
// data:
//   - the afero face created it and no other open reached it (Inode.creator:
//     every open of an existing file, and Resolve, clear it), and the File
//     that created it is closed (a closed File's Inode is nil, its Stat reads
//     attributes only);
//   - no snapshot or other file system shares its data (dataShared, and
//     chunks without an owner: shareData), and no capacity is accounted.
//
// Only the chunks owned by the file and the buffers it owns alone (the owned
// bits of data.go's copy-on-write) are taken, and the file's data is left
// empty: a read of the closed File racing with the recycling reads zeros, and
// File.Read and ReadAt then report os.ErrClosed instead. A buffer taken from
// the pool is always overwritten whole before use (blockFrom), a chunk
// cleared.

var (
	blockPool sync.Pool // *[DefaultBlockSize]byte
	chunkPool sync.Pool // *chunk, cleared
)

// newBlock returns a buffer of bs bytes holding a copy of src.
func newBlock(bs int64, src []byte) []byte {
	if bs == DefaultBlockSize {
		if p, _ := blockPool.Get().(*[DefaultBlockSize]byte); p != nil {
			copy(p[:], src)
			return p[:]
		}
	}
	return append([]byte(nil), src...) // no zeroing: the copy fills it
}

// newChunk returns an empty chunk at base, owned by d.
func newChunk(base int64, d *fileData) *chunk {
	if c, _ := chunkPool.Get().(*chunk); c != nil {
		c.base, c.owner = base, d
		return c
	}
	return &chunk{base: base, owner: d}
}

// recycle gives d's own chunks and buffers to the pools and leaves d empty.
// Nothing may read d afterwards.
func (d *fileData) recycle() {
	for _, c := range d.chunks {
		if c.owner != d {
			continue
		}
		for j := 0; c.bufs != nil && j < chunkBlocks; j++ {
			if b := c.bufs[j]; c.owned&(1<<j) != 0 && len(b) == DefaultBlockSize && cap(b) == DefaultBlockSize {
				blockPool.Put((*[DefaultBlockSize]byte)(b))
			}
		}
		*c = chunk{}
		chunkPool.Put(c)
	}
	d.init(d.bs)
}

// recycleData recycles the data of node, removed and cancelled out by
// cancelCreate, when it qualifies (see above). Called with fs.mu held.
func (fs *FS) recycleData(node *Inode) {
	f := node.creator
	if f == nil || !f.closed.Load() || node.dataShared || fs.cfg.capacity > 0 {
		return
	}
	node.creator = nil
	if !node.blocksOK { // what the closed File's Stat reports
		node.blocks, node.blocksOK = node.data.Blocks(), true
	}
	node.data.recycle()
}

package vfs

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// PendingKind says what a pending change is.
type PendingKind uint8

const (
	// PendingWrite is a block of the page cache written but not written back.
	PendingWrite PendingKind = iota + 1
	// PendingDevice is a block written back into the device's volatile cache.
	PendingDevice
	// PendingAlloc is an allocation change over a byte range (punch, zero range,
	// allocate, truncate).
	PendingAlloc
	// PendingSize is a change of the file size.
	PendingSize
	// PendingAttr is a change of mode, owner or timestamps.
	PendingAttr
	// PendingMeta is a namespace operation (create, link, unlink, rename, ...).
	PendingMeta
)

func (k PendingKind) String() string {
	switch k {
	case PendingWrite:
		return "write"
	case PendingDevice:
		return "device-write"
	case PendingAlloc:
		return "alloc"
	case PendingSize:
		return "size"
	case PendingAttr:
		return "attr"
	case PendingMeta:
		return "meta"
	}
	return "?"
}

// Pending is one change that a power loss may or may not keep.
type Pending struct {
	Seq  uint64 // order in which the changes were made (latest change of the item)
	Kind PendingKind
	Ino  uint64
	Path string // the inode's path (for PendingMeta: the entry's)
	Off  int64  // PendingWrite/PendingDevice/PendingAlloc: byte range
	Len  int64
	Size int64  // PendingSize: the new size
	Op   string // PendingMeta: "create", "remove", "rename", "exchange"
	To   string // PendingMeta rename/exchange: the other path

	// what to apply
	ino   *Inode
	block int64
	meta  *metaOp
}

// Torn reports whether a survival choice may tear this change (data blocks only).
func (p Pending) Tearable() bool { return p.Kind == PendingWrite || p.Kind == PendingDevice }

func (p Pending) String() string {
	switch p.Kind {
	case PendingWrite, PendingDevice, PendingAlloc:
		return fmt.Sprintf("#%d %s %s [%d,+%d)", p.Seq, p.Kind, p.Path, p.Off, p.Len)
	case PendingSize:
		return fmt.Sprintf("#%d size %s = %d", p.Seq, p.Path, p.Size)
	case PendingMeta:
		if p.To != "" {
			return fmt.Sprintf("#%d %s %s -> %s", p.Seq, p.Op, p.Path, p.To)
		}
		return fmt.Sprintf("#%d %s %s", p.Seq, p.Op, p.Path)
	}
	return fmt.Sprintf("#%d %s %s", p.Seq, p.Kind, p.Path)
}

// Survival says whether a pending change survives a crash. For a data block,
// Sectors (bit k = the k-th 512-byte sector of the block) tears it: only those
// sectors survive; zero means the whole block.
type Survival struct {
	Keep    bool
	Sectors uint64
}

// Pending lists, in the order they were made, the changes not yet durable.
func (fs *FS) Pending() []Pending {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.pendingLocked()
}

func (fs *FS) pendingLocked() []Pending {
	var out []Pending
	bs := fs.cfg.blockSize
	// Drop the inodes that have nothing pending any more (fsync does not take
	// them off the list, only sync(2) did), so that the list, and this walk,
	// stay in proportion to what is pending rather than to every inode ever
	// changed since the last sync(2).
	live := fs.pending[:0]
	for _, i := range fs.pending {
		p := &i.pend
		if len(p.dirty) == 0 && len(p.ranges) == 0 && p.sizeSeq == 0 && p.attrSeq == 0 {
			p.listed = false
			continue
		}
		live = append(live, i)
	}
	clear(fs.pending[len(live):])
	fs.pending = live
	for _, i := range fs.pending {
		p := &i.pend
		path := i.pathLocked()
		for _, b := range sortedBlocks(p.dirty) {
			out = append(out, Pending{Seq: p.dirty[b], Kind: PendingWrite, Ino: i.ino, Path: path, Off: b * bs, Len: bs, ino: i, block: b})
		}
		for _, r := range p.ranges {
			out = append(out, Pending{Seq: r.seq, Kind: PendingAlloc, Ino: i.ino, Path: path, Off: r.off, Len: r.n, ino: i})
		}
		if p.sizeSeq != 0 {
			out = append(out, Pending{Seq: p.sizeSeq, Kind: PendingSize, Ino: i.ino, Path: path, Size: i.size, ino: i})
		}
		if p.attrSeq != 0 {
			out = append(out, Pending{Seq: p.attrSeq, Kind: PendingAttr, Ino: i.ino, Path: path, ino: i})
		}
	}
	for _, i := range fs.devInodes {
		path := i.pathLocked()
		for _, b := range sortedBlocks(i.pend.dev) {
			out = append(out, Pending{Seq: i.pend.dev[b], Kind: PendingDevice, Ino: i.ino, Path: path, Off: b * bs, Len: bs, ino: i, block: b})
		}
	}
	for _, op := range fs.metaLog {
		p := Pending{Seq: op.seq, Kind: PendingMeta, Ino: op.node.ino, Path: joinPath(op.dir, op.name), meta: op}
		switch op.kind {
		case metaCreate:
			p.Op = "create"
		case metaRemove:
			p.Op = "remove"
		case metaRename:
			p.Op, p.To = "rename", joinPath(op.dir2, op.name2)
		case metaExchange:
			p.Op, p.To = "exchange", joinPath(op.dir2, op.name2)
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(a, b Pending) int {
		switch {
		case a.Seq < b.Seq:
			return -1
		case a.Seq > b.Seq:
			return 1
		}
		return 0
	})
	return out
}

// Crash returns the file system as found after a power loss now, under the strict
// persistence model: only durable state survives. fs is left as it was.
func (fs *FS) Crash() *FS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.materialize(fs.dur)
}

// CrashWith returns the file system as found after a power loss now in which,
// besides the durable state, the pending changes that keep marks survive; keep is
// aligned with what Pending returns at the same moment (an error if its length
// differs). Data blocks survive with their current content (the page cache's, or
// the device cache's for PendingDevice), whole or torn to the chosen sectors.
func (fs *FS) CrashWith(keep []Survival) (*FS, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	pend := fs.pendingLocked()
	if len(keep) != len(pend) {
		return nil, fmt.Errorf("vfs: CrashWith: %d survival choices for %d pending changes", len(keep), len(pend))
	}
	return fs.crashWith(pend, keep), nil
}

func (fs *FS) crashWith(pend []Pending, keep []Survival) *FS {
	// Copy the durable table: records are copied when changed.
	dur := make(map[uint64]*durInode, len(fs.dur))
	for id, d := range fs.dur {
		c := *d
		if c.entries != nil {
			c.entries = make(map[string]uint64, len(d.entries))
			for k, v := range d.entries {
				c.entries[k] = v
			}
		}
		if c.data != nil {
			c.dataShared = true
			d.dataShared = true
		}
		dur[id] = &c
	}
	bs := fs.cfg.blockSize
	for k, p := range pend {
		if !keep[k].Keep {
			continue
		}
		if p.Kind == PendingMeta {
			applyMeta(fs, dur, p.meta)
			continue
		}
		i := p.ino
		d := dur[i.ino]
		if d == nil {
			d = newDurInode(fs, i.mode, i.target)
			dur[i.ino] = d
		}
		switch p.Kind {
		case PendingWrite, PendingDevice:
			src := i.data
			if p.Kind == PendingDevice {
				src = i.pend.devData
			}
			data := d.ownData()
			if s := keep[k].Sectors; s != 0 {
				for sec := int64(0); sec < bs/SectorSize; sec++ {
					if s&(1<<sec) != 0 {
						data.CopyRange(src, p.block*bs+sec*SectorSize, SectorSize)
					}
				}
			} else {
				data.CopyRange(src, p.block*bs, bs)
			}
		case PendingAlloc:
			d.ownData().CopyRange(i.data, p.Off, p.Len)
		case PendingSize:
			d.size = p.Size
		case PendingAttr:
			copyAttrs(d, i)
		}
	}
	return fs.materialize(dur)
}

// Model is a persistence model: which pending changes a power loss may keep.
type Model uint8

const (
	// Strict keeps only durable state.
	Strict Model = iota
	// Prefix keeps an ordered prefix of the pending changes.
	Prefix
	// Subset keeps any subset of them.
	Subset
	// Torn keeps any subset, with data blocks possibly torn at sector granularity.
	Torn
)

func (m Model) String() string {
	return [...]string{"strict", "prefix", "subset", "torn"}[m]
}

// ParseModel parses a model name.
func ParseModel(s string) (Model, error) {
	for m := Strict; m <= Torn; m++ {
		if m.String() == s {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown persistence model %q (want strict, prefix, subset or torn)", s)
}

// RandomCrash returns a crash state chosen under model by a generator seeded with
// seed: the same seed and history give the same state.
func (fs *FS) RandomCrash(model Model, seed uint64) *FS {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	pend := fs.pendingLocked()
	keep := make([]Survival, len(pend))
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	switch model {
	case Prefix:
		n := rng.IntN(len(pend) + 1)
		for k := range n {
			keep[k].Keep = true
		}
	case Subset, Torn:
		for k := range keep {
			keep[k].Keep = rng.IntN(2) == 1
			if model == Torn && keep[k].Keep && pend[k].Tearable() && rng.IntN(2) == 1 {
				sectors := fs.cfg.blockSize / SectorSize
				keep[k].Sectors = rng.Uint64() & (1<<sectors - 1)
				if keep[k].Sectors == 0 {
					keep[k].Keep = false
				}
			}
		}
	}
	return fs.crashWith(pend, keep)
}

// materialize builds a new FS whose state, volatile and durable, is dur as
// reachable from the root. File data is shared copy-on-write.
func (fs *FS) materialize(dur map[uint64]*durInode) *FS {
	nfs := &FS{cfg: fs.cfg, nextIno: fs.nextIno, tick: fs.tick, dur: map[uint64]*durInode{}, durRoot: fs.durRoot}
	nfs.cfg.injector = nil
	made := map[uint64]*Inode{}
	build := func(id uint64, d *durInode) *Inode {
		if i := made[id]; i != nil {
			return i
		}
		i := &Inode{fs: nfs, ino: id, mode: d.mode, uid: d.uid, gid: d.gid, atime: d.atime, mtime: d.mtime, ctime: d.ctime, size: d.size, diskSize: d.size, target: d.target}
		made[id] = i
		nd := &durInode{mode: d.mode, uid: d.uid, gid: d.gid, atime: d.atime, mtime: d.mtime, ctime: d.ctime, size: d.size, target: d.target}
		nfs.dur[id] = nd
		switch d.mode & S_IFMT {
		case S_IFREG:
			// The new FS gets its own fileData object (sharing chunks and buffers
			// copy-on-write), never fs's: crash states are used concurrently with
			// fs and with each other, under different locks, and even Blocks
			// (stat) writes to the object. Found by TestRaceCrashStates.
			data := shareData(d.data)
			if data.SeekData(d.size, 1<<62) >= 0 {
				// Blocks past the durable size (a size change that did not survive):
				// invisible, and never to reappear if the file grows again.
				data.Truncate(d.size)
			}
			i.data, i.dataShared = data, true
			nd.data, nd.dataShared = data, true
			if nfs.cfg.capacity > 0 {
				// The blocks count against WithCapacity as in the original
				// (used started at zero: TestCrashCapacity).
				nfs.used += data.Blocks() * 512
			}
		case S_IFDIR:
			i.entries = map[string]*Inode{}
			nd.entries = map[string]uint64{}
			i.nlink = 1 // "."; its name and its subdirectories' ".." add the rest
		}
		return i
	}
	rootD := dur[fs.durRoot]
	root := build(fs.durRoot, rootD)
	root.parent = root
	root.nlink = 2
	nfs.dur[fs.durRoot].links = 1
	var walk func(dirD *durInode, dir *Inode)
	walk = func(dirD *durInode, dir *Inode) {
		names := make([]string, 0, len(dirD.entries))
		for n := range dirD.entries {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, name := range names {
			id := dirD.entries[name]
			cd := dur[id]
			if cd == nil {
				continue
			}
			if cd.mode&S_IFMT == S_IFDIR && made[id] != nil {
				continue // a directory has one name
			}
			c := build(id, cd)
			dir.entries[name] = c
			nfs.dur[dir.ino].entries[name] = id
			nfs.dur[id].links++
			c.nlink++
			c.name, c.dirOf = name, dir
			if c.IsDir() {
				c.parent = dir
				dir.nlink++
				walk(cd, c)
			}
		}
	}
	walk(rootD, root)
	nfs.root = root
	return nfs
}

// shareData is fileData.Clone made safe for data shared between file systems
// that run under different locks (crash states and their origin): Clone marks
// every chunk shared by writing its owner field, and a chunk already shared
// (owner nil) may at that moment be read by another file system. A chunk with an
// owner is referenced by that owner alone, so marking it is safe; a shared one is
// left untouched. Call it with the lock of the file system that owns d held.
func shareData(d *fileData) *fileData {
	for _, c := range d.chunks {
		if c.owner != nil {
			c.owner = nil
		}
	}
	cp := *d
	cp.chunks = append([]*chunk(nil), d.chunks...)
	return &cp
}

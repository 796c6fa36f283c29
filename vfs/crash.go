package vfs

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
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

	// index is the position in the list of the snapshot it came from (from),
	// for CrashState.Apply and Drop.
	index int32
	from  *CrashSnapshot
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
	fs.lock()
	defer fs.mu.Unlock()
	return fs.snapshotLocked(false).pend
}

// Crash returns the file system as found after a power loss now, under the strict
// persistence model: only durable state survives. fs is left as it was.
func (fs *FS) Crash() *FS {
	fs.lock()
	defer fs.mu.Unlock()
	return materialize(fs.cfg, fs.nextIno, fs.tick, fs.durRoot, durMap{fs}, fs.ramDirsLocked(), fs.ram)
}

// CrashWith returns the file system as found after a power loss now in which,
// besides the durable state, the pending changes that keep marks survive; keep is
// aligned with what Pending returns at the same moment (an error if its length
// differs). Data blocks survive with their current content (the page cache's, or
// the device cache's for PendingDevice), whole or torn to the chosen sectors.
// It is CrashSnapshot.State with keep applied, then CrashState.FS.
func (fs *FS) CrashWith(keep []Survival) (*FS, error) {
	fs.lock()
	defer fs.mu.Unlock()
	snap := fs.snapshotLocked(false)
	if len(keep) != len(snap.pend) {
		return nil, fmt.Errorf("vfs: CrashWith: %d survival choices for %d pending changes", len(keep), len(snap.pend))
	}
	return snap.replay(keep).FS(), nil
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
	fs.lock()
	defer fs.mu.Unlock()
	snap := fs.snapshotLocked(false)
	pend := snap.pend
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
	return snap.replay(keep).FS()
}

// materialize builds a new FS whose state, volatile and durable, is the
// durable table dur as reachable from the root (inode rootID), the
// directories ramDirs empty (SetRAM); cfg, nextIno, tick and the SetRAM
// paths ram are the original's. File data is shared copy-on-write.
func materialize(cfg config, nextIno uint64, tick Timespec, rootID uint64, dur durTable, ramDirs map[uint64]bool, ram []string) *FS {
	// Its records are of generation 0, durGen 1: its first change of each
	// copies it (durMut) and lists it for the next Snapshot to freeze.
	nfs := &FS{cfg: cfg, nextIno: nextIno, tick: tick, dur: map[uint64]*durInode{}, durRoot: rootID, durGen: 1, ram: slices.Clone(ram)}
	nfs.cfg.injector = nil
	made := map[uint64]*Inode{}
	build := func(id uint64, d *durInode) *Inode {
		if i := made[id]; i != nil {
			return i
		}
		i := &Inode{fs: nfs, ino: id, mode: d.mode, uid: d.uid, gid: d.gid, atime: d.atime, mtime: d.mtime, ctime: d.ctime, size: d.size, diskSize: d.size, target: d.target, rdev: d.rdev}
		made[id] = i
		nd := &durInode{mode: d.mode, uid: d.uid, gid: d.gid, atime: d.atime, mtime: d.mtime, ctime: d.ctime, size: d.size, target: d.target, rdev: d.rdev}
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
	rootD := dur.rec(rootID)
	root := build(rootID, rootD)
	root.parent = root
	root.nlink = 2
	nfs.dur[rootID].links = 1
	type ent struct {
		name string
		id   uint64
	}
	var ents []ent
	var walk func(dirD *durInode, dir *Inode)
	walk = func(dirD *durInode, dir *Inode) {
		if ramDirs[dir.ino] {
			return // a file system in memory: empty after the power loss
		}
		start := len(ents)
		dur.eachEntry(dir.ino, dirD, func(name string, id uint64) { ents = append(ents, ent{name, id}) })
		slices.SortFunc(ents[start:], func(a, b ent) int { return strings.Compare(a.name, b.name) })
		for k := start; k < len(ents); k++ {
			name, id := ents[k].name, ents[k].id
			cd := dur.rec(id)
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
		ents = ents[:start]
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

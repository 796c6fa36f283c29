package vfs

import (
	"sync"
	"sync/atomic"
)

// Linux x86-64 limits that the model enforces.
const (
	// MaxNameLen is NAME_MAX: the longest path component, in bytes.
	MaxNameLen = 255
	// MaxPathLen is PATH_MAX: a path argument must be shorter than this (it counts the NUL).
	MaxPathLen = 4096
	// MaxSymlinks is how many symlinks one resolution may follow before ELOOP.
	MaxSymlinks = 40
	// SectorSize is the unit in which the model tears data writes at power loss.
	SectorSize = 512
)

// File type bits of Stat.Mode, as in <sys/stat.h>.
const (
	S_IFMT   = 0o170000
	S_IFREG  = 0o100000
	S_IFDIR  = 0o040000
	S_IFLNK  = 0o120000
	S_IFIFO  = 0o010000
	S_IFCHR  = 0o020000
	S_IFBLK  = 0o060000
	S_IFSOCK = 0o140000
)

// Directory entry types of Dirent.Type, as in <dirent.h>.
const (
	DT_UNKNOWN = 0
	DT_FIFO    = 1
	DT_CHR     = 2
	DT_DIR     = 4
	DT_BLK     = 6
	DT_REG     = 8
	DT_LNK     = 10
	DT_SOCK    = 12
)

type config struct {
	blockSize   int64
	capacity    int64 // bytes of blocks; 0 means unlimited
	writeCache  bool
	directIO    bool
	maxFileSize int64
	injector    Injector
	now         func() Timespec
	dev         uint64
	commit      Timespec // periodic commit interval (0: none), see WithPeriodicCommit
	expire      Timespec // dirty data written back after this long
	noCancel    bool     // a create and its remove never cancel out, see WithCancel
	history     bool     // pending blocks and sizes keep their earlier values, see WithHistory
}

// Option configures New.
type Option func(*config)

// WithBlockSize sets the block size (default 4096): the unit of allocation, of
// st_blocks accounting and of SEEK_DATA/SEEK_HOLE answers. It must be a power of two
// and a multiple of SectorSize.
func WithBlockSize(n int64) Option { return func(c *config) { c.blockSize = n } }

// WithCapacity limits the bytes of allocated blocks; an operation that would need
// more fails with ENOSPC. Zero (the default) is unlimited.
func WithCapacity(bytes int64) Option { return func(c *config) { c.capacity = bytes } }

// WithWriteCache says whether the device has a volatile write cache (default on).
// With it off, writeback is durable without a flush; with it on, data written back
// (sync_file_range, O_DIRECT) is lost at power loss until a flush (fsync, sync).
func WithWriteCache(on bool) Option { return func(c *config) { c.writeCache = on } }

// WithDirectIO says whether the file system supports O_DIRECT (default yes, as ext4;
// tmpfs does not, and its open fails with EINVAL). Package sim consults it.
func WithDirectIO(supported bool) Option { return func(c *config) { c.directIO = supported } }

// WithMaxFileSize sets s_maxbytes (default ext4's with 4 KiB blocks: 16 TiB - 4 KiB).
func WithMaxFileSize(n int64) Option { return func(c *config) { c.maxFileSize = n } }

// WithFaults installs a fault injector consulted on every operation.
func WithFaults(inj Injector) Option { return func(c *config) { c.injector = inj } }

// WithClock sets the clock that timestamps read (the simulator's virtual clock).
// The default is a deterministic counter that advances 1 µs per reading.
func WithClock(now func() Timespec) Option { return func(c *config) { c.now = now } }

// FS is the file system model. Create one with New. It is safe for concurrent use.
type FS struct {
	mu  sync.Mutex
	cfg config

	root    *Inode
	nextIno uint64
	// nsGen counts the changes to the namespace (entries added or removed,
	// linkLocked and unlinkLocked); lastWalk is valid while it stays the same.
	nsGen    uint64
	lastWalk walkMemo
	tick     Timespec // the default clock
	seq      uint64   // orders pending changes
	used     int64    // bytes of allocated blocks, when capacity is limited

	// Durable state: the inodes as found on media, keyed by inode number. The
	// durable namespace is reachable from durRoot through durable entries.
	dur     map[uint64]*durInode
	durRoot uint64
	// durShared says dur is the base of a snapshot (copy it before a
	// change); durGen is the generation of the records made or copied since
	// the last snapshot, listed in durTouched (see durMut).
	durShared  bool
	durGen     uint64
	durTouched []uint64
	// durVersion counts the changes of dur: snapshots of one version have
	// the same durable state (CrashState.Hash compares across them).
	durVersion uint64
	// metaLog holds the namespace operations not yet durable, oldest first.
	metaLog []*metaOp
	// pending lists the inodes that have data or attributes not yet durable
	// (each at most once: Inode.listed).
	pending []*Inode
	// devInodes lists the inodes with blocks in the device's write cache.
	devInodes []*Inode
	// pruneAt is the length of pending plus devInodes at which they are
	// pruned of inodes with nothing pending (prunePending).
	pruneAt int
	// metaEnts counts the operations of metaLog per entry (dir, name) they
	// read or write; metaDead counts the cancelled ones still in metaLog
	// (cancelCreate, compactMeta).
	metaEnts     map[entKey]int32
	metaDead     int
	metaDeadKept int
	// statGen counts the locked sections that changed something stat(2)
	// reports of some inode (or read the clock, which decides what the next
	// operation commits), once an afero open has taken a snapshot since the
	// last count (statSnapped): a File's Stat answers from the snapshot its
	// open took while statGen has not moved (afero.go).
	statGen     atomic.Uint64
	statSnapped bool
	// freeDirty is an empty dirty-block map of a file whose create and
	// remove cancelled out (cancelCreate), for the next file's first write.
	freeDirty map[int64]uint64
	// txnExpires is when the running transaction commits (0: none is
	// running); nextExpire when the earliest dirty data expires (0: none).
	txnExpires Timespec
	nextExpire Timespec
	// ram lists the directories that are roots of file systems kept in
	// memory (SetRAM, ram.go).
	ram []string
}

// New returns an empty file system: a root directory (mode 0755) that is durable.
func New(opts ...Option) *FS {
	fs := &FS{cfg: config{
		blockSize:   4096,
		writeCache:  true,
		directIO:    true,
		maxFileSize: (1<<32-1)*4096 - 0,
		dev:         0x803,
		commit:      Timespec(DefaultCommitInterval),
		expire:      Timespec(DefaultDirtyExpire),
	}}
	for _, o := range opts {
		o(&fs.cfg)
	}
	if fs.cfg.blockSize < SectorSize || fs.cfg.blockSize&(fs.cfg.blockSize-1) != 0 {
		fs.cfg.blockSize = 4096
	}
	fs.nextIno = 2
	fs.root = fs.newInode(S_IFDIR | 0o755)
	fs.root.parent = fs.root
	fs.root.nlink = 2
	fs.dur = map[uint64]*durInode{}
	fs.durGen = 1
	fs.durRoot = fs.root.ino
	d := fs.durOf(fs.root)
	d.links = 1
	return fs
}

// Root returns the root directory.
func (fs *FS) Root() *Inode { return fs.root }

// BlockSize returns the block size.
func (fs *FS) BlockSize() int64 { return fs.cfg.blockSize }

// MaxFileSize returns s_maxbytes: writes and truncates beyond it fail with EFBIG.
func (fs *FS) MaxFileSize() int64 { return fs.cfg.maxFileSize }

// SupportsDirectIO reports whether O_DIRECT opens are allowed.
func (fs *FS) SupportsDirectIO() bool { return fs.cfg.directIO }

// WriteCache reports whether the device has a volatile write cache.
func (fs *FS) WriteCache() bool { return fs.cfg.writeCache }

// SetClock replaces the clock (see WithClock). Call it before concurrent use.
func (fs *FS) SetClock(now func() Timespec) {
	fs.mu.Lock()
	fs.cfg.now = now
	fs.changed()
	fs.mu.Unlock()
}

// SetInjector replaces the fault injector (nil for none).
func (fs *FS) SetInjector(inj Injector) {
	fs.mu.Lock()
	fs.cfg.injector = inj
	fs.mu.Unlock()
}

// now reads the clock. Called with fs.mu held.
func (fs *FS) now() Timespec {
	fs.changed()
	if fs.cfg.now != nil {
		return fs.cfg.now()
	}
	fs.tick += 1000
	return 1_700_000_000_000_000_000 + fs.tick
}

// changed notes a change of what stat(2) reports, or a reading of the clock
// (see statGen). Called with fs.mu held.
func (fs *FS) changed() {
	if fs.statSnapped {
		fs.statSnapped = false
		fs.statGen.Add(1)
	}
}

// nextSeq returns the next pending-change sequence number. Called with fs.mu held.
func (fs *FS) nextSeq() uint64 {
	fs.seq++
	return fs.seq
}

func (fs *FS) newInode(mode uint32) *Inode {
	t := fs.now()
	ino := &Inode{fs: fs, ino: fs.nextIno, mode: mode, atime: t, mtime: t, ctime: t}
	fs.nextIno++
	switch mode & S_IFMT {
	case S_IFREG:
		ino.data = &ino.data0
		ino.data0.init(fs.cfg.blockSize)
	case S_IFDIR:
		ino.entries = map[string]*Inode{}
	}
	return ino
}

// newChild is newInode for an inode about to be linked into parent, with the
// owner rules of Linux's inode_init_owner (fs/inode.c): in a set-group-ID
// directory the new inode takes the directory's group, and a new directory is
// set-group-ID itself. Called with fs.mu held.
func (fs *FS) newChild(parent *Inode, mode uint32) *Inode {
	if parent.mode&0o2000 != 0 && mode&S_IFMT == S_IFDIR {
		mode |= 0o2000
	}
	ino := fs.newInode(mode)
	if parent.mode&0o2000 != 0 {
		ino.gid = parent.gid
	}
	return ino
}

// fault consults the injector. Called with fs.mu held.
func (fs *FS) fault(op Op, ino *Inode, path string) Fault {
	if fs.cfg.injector == nil {
		return Fault{} // small enough to inline: free when there are no rules
	}
	return fs.inject(op, ino, path)
}

// faultAt consults the injector on the entry name of dir (a path is built only
// when there is an injector). Called with fs.mu held.
func (fs *FS) faultAt(op Op, dir *Inode, name string) Fault {
	if fs.cfg.injector == nil {
		return Fault{}
	}
	return fs.inject(op, nil, joinPath(dir, name))
}

func (fs *FS) inject(op Op, ino *Inode, path string) Fault {
	if path == "" && ino != nil {
		path = ino.pathLocked()
	}
	return fs.cfg.injector.Inject(op, path)
}

// unlimitedSize is the size Statfs reports for a file system without
// WithCapacity.
const unlimitedSize = 1 << 40

// Statfs returns the figures statfs(2) reports in blocks of BlockSize: the
// size and free blocks (WithCapacity's, else 1 TiB with nothing counted used),
// and the inode count (one per 16 KiB, ext4's default ratio) and how many of
// them are free (those numbered past the last one made are).
func (fs *FS) Statfs() (blocks, free, files, ffree uint64) {
	fs.lock()
	defer fs.mu.Unlock()
	size, used := int64(unlimitedSize), int64(0)
	if fs.cfg.capacity > 0 {
		size, used = fs.cfg.capacity, fs.used
	}
	bs := fs.cfg.blockSize
	blocks = uint64(size / bs)
	free = uint64(max(size-used, 0) / bs)
	files = uint64(size / 16384)
	ffree = files - min(files, fs.nextIno-1)
	return blocks, free, files, ffree
}

// Dev returns st_dev of the file system's inodes.
func (fs *FS) Dev() uint64 { return fs.cfg.dev }

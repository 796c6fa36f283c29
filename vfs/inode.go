package vfs

import (
	"slices"
	"strings"
	"sync/atomic"
)

// Timespec is a timestamp in nanoseconds since the Unix epoch of the virtual clock.
type Timespec = int64

// Special Timespec values for Utimens, as utimensat(2)'s UTIME_NOW and UTIME_OMIT.
const (
	UtimeNow  Timespec = -(1 << 62)
	UtimeOmit Timespec = -(1 << 62) + 1
)

// Stat is what stat(2) reports of an inode.
type Stat struct {
	Dev     uint64
	Ino     uint64
	Mode    uint32 // S_IFMT bits | permission bits
	Nlink   uint32
	Uid     uint32
	Gid     uint32
	Rdev    uint64
	Size    int64
	Blksize int64
	Blocks  int64 // 512-byte units, as ext4 reports
	Atime   Timespec
	Mtime   Timespec
	Ctime   Timespec
}

// Dirent is one directory entry as getdents64 returns it.
type Dirent struct {
	Name string
	Ino  uint64
	Type uint8 // DT_REG, DT_DIR, DT_LNK
}

// Inode is a file, directory or symlink of an FS. Its pointer is stable for its
// whole life; an unlinked inode stays usable through the references that hold it
// (open file descriptions), as on Linux. All methods are safe for concurrent use.
//
// Its methods are the file-system contract, each as the syscall it names:
//
//   - identity and attributes: Ino, FS, Mode, IsDir, IsRegular, IsSymlink, Size,
//     Nlink, Stat, Path, Parent, Target, Chmod, Chown, Utimens;
//   - a regular file's data: ReadAt, WriteAt, Write (O_APPEND, O_SYNC, O_DSYNC),
//     Truncate, Fallocate, SeekData, SeekHole, HoleIn;
//   - durability: Fsync, Fdatasync, SyncFileRange, SampleErrSeq (the
//     writeback-error cursor the first two take), InFlight;
//   - a directory's names, each path relative to the directory as an "at"
//     call's dirfd: Open, Resolve, Mkdir, Rmdir, Unlink, Rename, Link, LinkFrom,
//     Symlink, Readlink, Tmpfile, Mknod, Dirents; Rdev of a device node;
//   - a change from outside every program, no syscall: Populate (a file's
//     data as a workload finds it in place).
//
// Kernel returns the hooks that only a model of the syscall layer needs (ext4's
// O_DIRECT flushes, a failed write's truncation, the release of delayed blocks,
// ...; see type Kernel).
type Inode struct {
	fs  *FS
	ino uint64

	// Attributes, guarded by fs.mu.
	mode                uint32
	uid, gid            uint32
	nlink               uint32
	atime, mtime, ctime Timespec
	size                int64
	// diskSize (regular files) is ext4's i_disksize, the size the on-disk
	// inode has: it lags size while an extending buffered write waits for
	// writeback (delayed allocation, or a write into an unwritten block).
	// Kept for one decision only: whether an O_DIRECT write is extending
	// (see Kernel.FlushForDirectWrite).
	diskSize int64

	data       *fileData         // regular files: the page-cache level
	data0      fileData          // what data points to first: one allocation with the inode
	blocks     int64             // data.Blocks() as last computed, valid while blocksOK
	blocksOK   bool              // no data change since (mutateData clears it)
	dataShared bool              // data is shared with another FS: clone before mutating
	target     string            // symlinks
	rdev       uint64            // device nodes: st_rdev, fixed at mknod
	entries    map[string]*Inode // directories
	parent     *Inode            // directories: the directory holding it (root: itself)
	rmdired    bool              // directories: removed by rmdir, which set i_size to 0
	linkable   bool              // an O_TMPFILE file without O_EXCL, not yet linked (I_LINKABLE, tmpfile.go)
	// daAllocClose (regular files) is ext4's EXT4_STATE_DA_ALLOC_CLOSE
	// (auto_da_alloc): set by a truncate to size 0, it makes the next release
	// of an open file description allocate the delayed blocks (see Kernel.Release).
	// Atomic so that Release costs no lock in the common case.
	daAllocClose atomic.Bool
	// name and dirOf remember the last name the inode was linked under, for fault
	// matching and messages; for directories they are exact.
	name  string
	dirOf *Inode
	// lastLookup (directories) is the entry the last lookup found, a one-entry
	// cache in front of entries for a program that opens one file again and
	// again (seed 000). It is used only while it is still entries[its name]: it
	// is set only when its name and dirOf are this directory's entry, used only
	// while they still are (a link elsewhere changes them), and every change of
	// entries (linkLocked, unlinkLocked) clears it.
	lastLookup *Inode
	// sorted (directories) is entries sorted by name, built by the first listing
	// after a change and cleared by every change of entries (linkLocked,
	// unlinkLocked): a directory listed again and again is sorted once.
	sorted []dirChild

	pend inodePending // what is not yet durable (durable.go)
	// metaRefs counts the operations of fs.metaLog that name the inode (as
	// directory or node); created is the pending create that named it last.
	// Both serve cancelCreate.
	metaRefs int32
	created  *metaOp

	// creator is the afero File that created the file, while no other open
	// has reached it: its data may be recycled once it is closed and the
	// create cancelled out (recycle.go).
	creator *File
	// fiCache is the FileInfo the afero face's last open took of the
	// inode, valid while the file system's statGen is fiGen-1 (afero.go).
	fiCache *fileInfo
	fiGen   uint64

	// errseq is Linux's errseq_t for writeback errors: a counter in the upper bits
	// and, in bit 0, whether some description has seen the latest error.
	errseq uint64
	wbErr  error
}

// Ino returns the inode number.
func (i *Inode) Ino() uint64 { return i.ino }

// FS returns the file system the inode belongs to.
func (i *Inode) FS() *FS { return i.fs }

// Mode returns the file type and permission bits.
func (i *Inode) Mode() uint32 {
	i.fs.lock()
	defer i.fs.mu.Unlock()
	return i.mode
}

// IsDir reports whether the inode is a directory. The type never changes.
func (i *Inode) IsDir() bool { return i.mode&S_IFMT == S_IFDIR }

// IsRegular reports whether the inode is a regular file.
func (i *Inode) IsRegular() bool { return i.mode&S_IFMT == S_IFREG }

// IsSymlink reports whether the inode is a symbolic link.
func (i *Inode) IsSymlink() bool { return i.mode&S_IFMT == S_IFLNK }

// Size returns the file size (st_size).
func (i *Inode) Size() int64 {
	i.fs.lock()
	defer i.fs.mu.Unlock()
	return i.size
}

// Nlink returns the link count.
func (i *Inode) Nlink() uint32 {
	i.fs.lock()
	defer i.fs.mu.Unlock()
	return i.nlink
}

// Stat fills st as stat(2) would.
func (i *Inode) Stat(st *Stat) {
	i.fs.lock()
	i.statLocked(st)
	i.fs.mu.Unlock()
}

func (i *Inode) statLocked(st *Stat) {
	*st = Stat{
		Dev: i.fs.cfg.dev, Ino: i.ino, Mode: i.mode, Nlink: i.nlink, Uid: i.uid, Gid: i.gid,
		Rdev: i.rdev, Size: i.size, Blksize: i.fs.cfg.blockSize,
		Atime: i.atime, Mtime: i.mtime, Ctime: i.ctime,
	}
	switch i.mode & S_IFMT {
	case S_IFREG:
		// Blocks walks every chunk (Extents), which made stat cost in
		// proportion to the file; without a data change in between it returns
		// the same answer, so it is cached (BenchmarkOpenStatClose).
		if !i.blocksOK {
			i.blocks, i.blocksOK = i.data.Blocks(), true
		}
		st.Blocks = i.blocks
	case S_IFDIR:
		// ext4 directories hold their entries in blocks: one block while small;
		// ext4_rmdir sets the size of the removed directory to 0, but a directory
		// that a rename replaced keeps its size (ext4_rename only clears its
		// nlink).
		if i.nlink > 0 || !i.rmdired {
			st.Size = i.fs.cfg.blockSize
		}
		st.Blocks = i.fs.cfg.blockSize / 512
	}
}

// Path returns a path of the inode from the root: exact for directories, the last
// name it was linked under for other files, "" for an unlinked file.
func (i *Inode) Path() string {
	i.fs.lock()
	defer i.fs.mu.Unlock()
	return i.pathLocked()
}

func (i *Inode) pathLocked() string {
	if i == i.fs.root {
		return "/"
	}
	var parts []string
	cur := i
	for n := 0; cur != cur.fs.root; n++ {
		if n > 4096 || cur.dirOf == nil || (!cur.IsDir() && cur.nlink == 0) {
			return ""
		}
		parts = append(parts, cur.name)
		if cur.IsDir() {
			cur = cur.parent
		} else {
			cur = cur.dirOf
		}
	}
	slices.Reverse(parts)
	return "/" + strings.Join(parts, "/")
}

// Dirents lists the directory's entries in a deterministic order ("." and ".."
// first, then by name). The order of a real directory is the file system's (ext4:
// hash order); callers that replay a recording follow the recorded order.
func (i *Inode) Dirents() ([]Dirent, error) {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if !i.IsDir() {
		return nil, ENOTDIR
	}
	if i.nlink == 0 {
		return nil, ENOENT
	}
	out := make([]Dirent, 0, len(i.entries)+2)
	out = append(out, Dirent{Name: ".", Ino: i.ino, Type: DT_DIR}, Dirent{Name: "..", Ino: i.parent.ino, Type: DT_DIR})
	for _, c := range i.sortedLocked() {
		out = append(out, Dirent{Name: c.name, Ino: c.ino.ino, Type: dtype(c.ino.mode)})
	}
	i.touchAtime()
	return out, nil
}

// dirChild is one entry of a directory.
type dirChild struct {
	name string
	ino  *Inode
}

// sortedLocked returns the directory's entries sorted by name (shared: do not
// modify). Called with fs.mu held.
func (i *Inode) sortedLocked() []dirChild {
	if i.sorted == nil || len(i.sorted) != len(i.entries) {
		s := make([]dirChild, 0, len(i.entries))
		for name, c := range i.entries {
			s = append(s, dirChild{name, c})
		}
		slices.SortFunc(s, func(a, b dirChild) int { return strings.Compare(a.name, b.name) })
		i.sorted = s
	}
	return i.sorted
}

func dtype(mode uint32) uint8 {
	switch mode & S_IFMT {
	case S_IFDIR:
		return DT_DIR
	case S_IFLNK:
		return DT_LNK
	case S_IFREG:
		return DT_REG
	case S_IFIFO:
		return DT_FIFO
	case S_IFCHR:
		return DT_CHR
	case S_IFBLK:
		return DT_BLK
	case S_IFSOCK:
		return DT_SOCK
	}
	return DT_UNKNOWN
}

// touchAtime applies relatime: atime moves when it is older than mtime or ctime,
// or more than a day old.
func (i *Inode) touchAtime() {
	if i.atime <= i.mtime || i.atime <= i.ctime {
		i.atime = i.fs.now()
		i.fs.markAttr(i)
		return
	}
	if t := i.fs.now(); t-i.atime > 24*3600*1_000_000_000 {
		i.atime = t
		i.fs.markAttr(i)
	}
}

// lookup returns the entry name of directory d, or nil. Called with fs.mu held.
func (d *Inode) lookup(name string) *Inode {
	// h's name and dirOf are checked again: linking h elsewhere since (which
	// does not clear d's cache) changes them.
	if h := d.lastLookup; h != nil && h.name == name && h.dirOf == d {
		return h
	}
	ino := d.entries[name]
	if ino != nil && ino.name == name && ino.dirOf == d {
		d.lastLookup = ino
	}
	return ino
}

package crash

import (
	"fmt"
	"strings"
)

// Rule is one rule of a persistence model, with where it comes from.
type Rule struct {
	Text   string
	Source string
}

// Model is a persistence model: which of the changes in flight at a crash (vfs's
// Pending list) a power loss may keep, and in which combinations. Every model
// keeps what vfs made durable; a model may keep more (forced: what the file
// system commits although vfs's portable rules do not promise it) and constrains
// which subsets of the rest are possible.
type Model struct {
	Name  string
	Doc   string
	Rules []Rule
	// Version says which kernel (or standard) the rules describe.
	Version string
	// Hypothetical marks a model of no real file system (ALICE's abstract
	// one): explored only when named, and labelled so in every report.
	Hypothetical bool

	// journal: namespace and metadata changes commit in order, a whole call at a
	// time (one running transaction, committed at any call boundary), and a
	// commit forced by fsync takes every change made before it.
	journal bool
	// orderedData: a size change made by a buffered write (delayed allocation:
	// the on-disk size moves when the blocks are written back) commits only
	// with the data it exposes.
	orderedData bool
	// autoDaAlloc: replacing a file by rename, and closing a file truncated to
	// zero and rewritten, start writeback of its data, committed with the next
	// transaction (with orderedData: before it).
	autoDaAlloc bool
	// splitRename: a rename over an existing file may persist as the removal of
	// the destination alone.
	splitRename bool
	// dataJournal: data goes through the journal with the metadata, in call
	// order, and is never torn (no delayed allocation either).
	dataJournal bool
	// cowData: a block write goes to a new block that replaces the old one
	// whole (copy on write): data may be lost but never torn within a block.
	cowData bool
	// orderedOverwrite: an overwrite (a write that changes no size) persists
	// before every later call: if it is lost or partly written, so is every
	// change of every later call.
	orderedOverwrite bool
	// logNewName: an fsync of a regular file makes durable the names made
	// in flight of it and of its ancestor directories (btrfs's tree log).
	logNewName bool
}

// Sources cited by the rules.
const (
	srcFsync      = "fsync(2): \"Calling fsync() does not necessarily ensure that the entry in the directory containing the file has also reached disk. For that an explicit fsync() on a file descriptor for the directory is also needed.\""
	srcPOSIX      = "POSIX.1-2017 fsync(): the data is transferred to the storage device; nothing is said of what a power loss keeps of unsynced writes"
	srcSector     = "ALICE (Pillai et al., OSDI'14) §2.2 and CrashMonkey (Mohan et al., OSDI'18): a disk writes a sector atomically, a block write may tear at sector boundaries"
	srcExt4Doc    = "Documentation/filesystems/ext4.rst, data=ordered: \"All data are forced directly out to the main file system prior to its metadata being committed to the journal.\""
	srcExt4WB     = "Documentation/filesystems/ext4.rst, data=writeback: \"Data ordering is not preserved, data may be written into the main file system after its metadata has been committed to the journal.\""
	srcJBD2       = "Documentation/filesystems/journalling.rst and fs/ext4/fsync.c (ext4_sync_file -> jbd2_complete_transaction): one running transaction; fsync commits it with every change of every file made before"
	srcCommit     = "Documentation/filesystems/ext4.rst, commit=nrsec: \"sync all data and metadata every nrsec seconds\" (default 5): a commit may happen between any two calls"
	srcDelalloc   = "Documentation/filesystems/ext4.rst, delalloc: blocks are allocated, and i_disksize moved, when the data is written back (fs/ext4/inode.c mpage_map_and_submit_extent)"
	srcAutoDa     = "Documentation/filesystems/ext4.rst, auto_da_alloc: \"replace-via-rename and replace-via-truncate ... the allocation of any delayed allocation blocks are forced such that the new file's blocks ... are allocated ... before the rename() operation is committed\" (fs/ext4/namei.c ext4_rename, fs/ext4/file.c ext4_release_file)"
	srcExt4DJPage = "fs/ext4/inode.c: ext4_write_begin starts a jbd2 handle for each page a write() copies and ext4_journalled_write_end stops it (and moves i_disksize), so a commit can fall between two pages of one write()"
	srcExt4DJ     = "Documentation/filesystems/ext4.rst, data=journal: \"All data are committed into the journal prior to being written into the main file system.\" and: \"delalloc ... is not supported with data=journal\" (fs/ext4/super.c)"
	srcALICEAPM   = "ALICE (Pillai et al., OSDI'14) §4.1 and alicedefaultfs.py: operations between two sync barriers persist in any order; appends may persist as a size change over garbage or zeros; writes split in parts"
	srcALICESplt  = "alicedefaultfs.py (rename = delete destination entry, delete source entry, create destination entry; each may persist alone)"
	srcBOB        = "ALICE (Pillai et al., OSDI'14) Table 1, BOB's measured persistence properties"
	srcXFSLog     = "Documentation/filesystems/xfs/xfs-delayed-logging-design.rst: transactions are aggregated into CIL checkpoints written to the log in sequence order; a log force up to a sequence commits every checkpoint before it"
	srcXFSFsync   = "fs/xfs/xfs_file.c xfs_file_fsync -> xfs_fsync_flush_log -> xfs_log_force_seq: fsync forces the log up to the inode's last commit sequence, which commits every earlier metadata change of any file"
	srcXFSSize    = "fs/xfs/xfs_aops.c xfs_end_ioend -> xfs_setfilesize: delayed allocation; the on-disk inode size moves only when the data I/O completes, so a file never shows a size over blocks not written"
	srcXFSClose   = "fs/xfs/xfs_file.c xfs_file_release -> xfs_release: after a truncate (XFS_ITRUNCATED) the last close only starts writeback (filemap_flush), not ordered with later log commits; rename does not flush (Documentation/admin-guide/xfs.rst lists no auto_da_alloc-like option)"
	srcBtrfsCOW   = "Documentation/filesystems/btrfs.rst: \"Btrfs is a copy on write filesystem\"; a written block goes to a new location that replaces the old one when its extent is committed (fs/btrfs/inode.c btrfs_finish_ordered_io)"
	srcBtrfsSize  = "fs/btrfs/ordered-data.c btrfs_inode_safe_disk_i_size_write: the on-disk i_size moves only when the ordered extent (the written data) completes"
	srcBtrfsLog   = "Documentation/filesystems/btrfs mount options, notreelog: \"the tree logging used for fsync and O_SYNC writes\"; fs/btrfs/tree-log.c btrfs_log_inode: fsync writes the file's own log tree, replayed at mount, without committing the running transaction"
	srcBtrfsFlush = "fs/btrfs/inode.c btrfs_rename (filemap_flush of the source when it replaces a non-empty file) and btrfs_setsize / fs/btrfs/file.c btrfs_release_file (BTRFS_INODE_FLUSH_ON_CLOSE after a truncate to zero): writeback is started, not waited for"
	srcReuse      = "fs/jbd2/transaction.c jbd2_journal_forget and fs/ext4/mballoc.c ext4_free_blocks (a block freed in a running transaction is not reused before it commits); fs/xfs/xfs_extent_busy.c (busy extents); fs/btrfs/extent-tree.c (freed extents stay pinned until the transaction commits)"
	srcZeroTrunc  = "fs/ext4/inode.c ext4_block_truncate_page -> ext4_block_zero_page_range: in data=ordered the zeroed block is added to the transaction's ordered data (ext4_jbd2_inode_add_write) and reaches disk before the truncate commits"
	srcBtrfsTrunc = "fs/btrfs/inode.c btrfs_setsize / btrfs_truncate: the extents dropped and the new i_size are written in one transaction handle (btrfs_truncate_inode_items, btrfs_update_inode); transactions commit whole and in order (fs/btrfs/transaction.c)"
	srcBtrfsNew   = "fs/btrfs/tree-log.c btrfs_log_inode_parent -> log_new_ancestors / log_all_new_ancestors (Linux 5.12 on, Filipe Manana's 2021 tree-log work, e.g. \"btrfs: avoid logging new ancestor inodes when logging new inode\"): \"When we fsync a new file, created in the current transaction, we check all its ancestor inodes and always log them if they were created in the current transaction\"; the file's new name is logged with it"
	srcBtrfsDir   = "ALICE (Pillai et al., OSDI'14) §2.2.2 and Table 1: \"Linux ext2 and btrfs freely reorder directory operations (especially operations on different directories)\""
)

var models = []*Model{
	{
		Name:    "posix",
		Version: "POSIX.1-2017 and the fsync(2) man page: no particular kernel",
		Doc:     "only what a sync made durable is guaranteed; anything in flight may survive or not, in any order, data torn at 512-byte sectors",
		Rules: []Rule{
			{"fsync/fdatasync make the file's data (and for fsync its metadata) durable; sync/syncfs everything", srcPOSIX},
			{"a new or renamed name is durable only after fsync of its directory", srcFsync},
			{"any subset of the changes in flight survives, in any order", srcPOSIX},
			{"a data block in flight may survive torn at 512-byte sector boundaries; one sector is atomic", srcSector},
			{"one namespace operation (create, link, unlink, rename) survives whole or not at all", "rename(2): the replacement is atomic; every Linux file system journals a namespace operation as one unit"},
		},
	},
	{
		Name:    "ext4-ordered",
		Version: "Linux ext4, 2.6.30 (auto_da_alloc) to 6.x",
		Doc:     "ext4's default (data=ordered, delalloc, auto_da_alloc, commit=5)",
		Rules: []Rule{
			{"namespace and metadata changes commit in call order, a whole call at a time", srcJBD2},
			{"a commit may happen between any two calls", srcCommit},
			{"fsync/fdatasync of a file with changes in flight commits the running transaction: every metadata change and directory entry made before it, of any file", srcJBD2},
			{"a size change made by a buffered write reaches the journal only when its blocks are written back (delayed allocation)", srcDelalloc},
			{"data blocks reach disk before the metadata that exposes them", srcExt4Doc},
			{"a file renamed over another, or truncated to zero, rewritten and closed, has its data flushed before the rename or the next commit (auto_da_alloc)", srcAutoDa},
			{"a truncate that cuts a block commits only with that block's zeroed tail written", srcZeroTrunc},
			{"data written into blocks a truncate or punch in flight had freed went to new blocks: it persists only with that truncate or punch", srcReuse},
			{"overwrites of allocated blocks are not ordered; a block in flight may tear at sectors", srcSector},
		},
		journal: true, orderedData: true, autoDaAlloc: true,
	},
	{
		Name:    "ext4-writeback",
		Version: "Linux ext4, 2.6.30 to 6.x",
		Doc:     "ext4 with data=writeback: metadata journalled in order, data not ordered with it",
		Rules: []Rule{
			{"namespace and metadata changes commit in call order, a whole call at a time; a commit may happen between any two calls", srcJBD2},
			{"fsync of a file with changes in flight commits every metadata change made before it", srcJBD2},
			{"metadata may commit before the data it exposes: a file can show its new size over zeroed blocks", srcExt4WB},
			{"auto_da_alloc still allocates the blocks (the size commits with the rename) but does not wait for the data", srcAutoDa},
			{"data written into blocks a truncate or punch in flight had freed went to new blocks: it persists only with that truncate or punch", srcReuse},
		},
		journal: true, autoDaAlloc: true,
	},
	{
		Name:    "ext4-journal",
		Version: "Linux ext4, 3.x to 6.x (a jbd2 handle per page since write_begin/write_end)",
		Doc:     "ext4 with data=journal: data and metadata journalled together, in order",
		Rules: []Rule{
			{"every change, data included, commits in call order, a whole call at a time; a commit may happen between any two calls", srcExt4DJ},
			{"fsync of a file with changes in flight commits every change made before it", srcJBD2},
			{"a journalled block is written whole: no torn data", srcExt4DJ},
			{"a write() of several pages may commit a prefix of its pages (here: the first half), the rest with the next commit; the size it moves goes with its last page", srcExt4DJPage},
			{"data written into blocks a truncate or punch in flight had freed went to new blocks: it persists only with that truncate or punch", srcReuse},
		},
		journal: true, dataJournal: true,
	},
	{
		Name:    "alice",
		Version: "ALICE's abstract model (OSDI'14): no file system",
		Doc:     "ALICE's default abstract persistence model: any order between syncs, appends over garbage, non-atomic rename",
		Rules: []Rule{
			{"changes between two sync barriers persist in any order and any subset; a sync is a barrier for its file (for a directory: its entries)", srcALICEAPM},
			{"an append may persist as the size change alone (the model shows zeros where ALICE writes garbage)", srcALICEAPM},
			{"a rename over an existing file may persist as the destination's removal alone", srcALICESplt},
			{"writes may persist in parts (here: at 512-byte sectors; ALICE also splits in thirds)", srcALICEAPM},
		},
		splitRename: true, Hypothetical: true,
	},
	{
		Name:    "xfs",
		Version: "Linux XFS with delayed logging (the default since 2.6.39) to 6.x",
		Doc:     "XFS's defaults: metadata logged in order (delayed logging), delayed allocation, size updated at I/O completion",
		Rules: []Rule{
			{"namespace and metadata changes commit in call order, a whole call at a time; a checkpoint may happen between any two calls", srcXFSLog},
			{"fsync/fdatasync of a file with changes in flight forces the log up to its last change: every metadata change and directory entry made before it, of any file", srcXFSFsync},
			{"a size change made by a buffered write commits only when its data is written (the file never shows a size over blocks not written)", srcXFSSize},
			{"data is not ordered with metadata: an overwrite or an append in flight may be lost while later calls persist; a block in flight may tear at sectors", srcBOB + " (xfs: overwrite and append before any op fail)"},
			{"neither a rename over a file nor a truncate and close orders the file's data before later commits", srcXFSClose},
			{"a truncate that cuts a block commits only with that block's zeroed tail written", "fs/xfs/xfs_iops.c xfs_setattr_size: \"File data changes must be complete before we start the transaction to modify the inode ... zeroing out the rest of the block on a downward truncate\""},
			{"data written into blocks a truncate or punch in flight had freed went to new blocks: it persists only with that truncate or punch", srcReuse},
		},
		journal: true, orderedData: true,
	},
	{
		Name:    "btrfs",
		Version: "Linux btrfs 5.12 to 6.x for fsync (tree log of new names); ALICE's measurements (Linux 3.x) for directory operations",
		Doc:     "btrfs's defaults: copy on write, transactions, fsync through the per-file log tree, directory operations not ordered",
		Rules: []Rule{
			{"fsync/fdatasync make the file's data (and for fsync its metadata) durable and nothing of other files; sync/syncfs everything", srcBtrfsLog},
			{"an fsync or fdatasync of a file created in flight makes its name durable, and those of its ancestor directories created in flight (Linux 5.12 and later)", srcBtrfsNew},
			{"any other new or renamed name is durable only after fsync of its directory (or sync); otherwise namespace operations persist in any order and any subset", srcBtrfsDir},
			{"one namespace operation survives whole or not at all", srcBtrfsCOW + "; " + srcBOB + " (directory op atomic)"},
			{"a block write is never torn (a write of several blocks may persist as a prefix of its blocks)", srcBtrfsCOW + "; " + srcBOB + " (single-block overwrite atomic, multi-block writes not)"},
			{"a size change made by a buffered write commits only with the data it exposes", srcBtrfsSize},
			{"an overwrite persists before every later call; an append may persist after later calls", srcBOB + " (btrfs: overwrite before any op holds, append before any op fails)"},
			{"a rename over a file, or a truncate to zero and close, only starts writeback of the file's data: nothing orders it before the rename or later commits", srcBtrfsFlush},
			{"a file's extent and size changes (truncate, fallocate) persist whole, in call order; a truncate that cuts a block persists only with that block's zeroed tail", srcBtrfsTrunc},
			{"data written into blocks a truncate or punch in flight had freed went to new blocks: it persists only with that truncate or punch", srcReuse},
		},
		orderedData: true, cowData: true, orderedOverwrite: true, logNewName: true,
	},
}

// Models returns the persistence models, in a fixed order.
func Models() []*Model { return models }

// DefaultModels returns the models explored when none is named: those of
// real file systems and posix, in Models' order; a hypothetical model is
// explored only when named.
func DefaultModels() []*Model {
	var out []*Model
	for _, m := range models {
		if !m.Hypothetical {
			out = append(out, m)
		}
	}
	return out
}

// ModelLabels joins model names for people, with " (hypothetical)" after
// each hypothetical model's.
func ModelLabels(names []string) string {
	ls := make([]string, len(names))
	for k, n := range names {
		ls[k] = n
		if m := ModelByName(n); m != nil && m.Hypothetical {
			ls[k] += " (hypothetical)"
		}
	}
	return strings.Join(ls, ", ")
}

// ModelNames returns the names of the models.
func ModelNames() []string {
	var n []string
	for _, m := range models {
		n = append(n, m.Name)
	}
	return n
}

// ParseModels parses a comma-separated list of model names: "" (or
// "default") is DefaultModels, "all" every model, hypothetical ones included.
func ParseModels(s string) ([]*Model, error) {
	switch s {
	case "", "default":
		return DefaultModels(), nil
	case "all":
		return models, nil
	}
	var out []*Model
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		m := ModelByName(name)
		if m == nil {
			return nil, fmt.Errorf("unknown persistence model %q (want %s, default or all)", name, strings.Join(ModelNames(), ", "))
		}
		out = append(out, m)
	}
	return out, nil
}

// ModelByName returns the model of that name, or nil.
func ModelByName(name string) *Model {
	for _, m := range models {
		if m.Name == name {
			return m
		}
	}
	return nil
}

// Describe prints the model's rules with their sources.
func (m *Model) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s\n  describes: %s\n", ModelLabels([]string{m.Name}), m.Doc, m.Version)
	for k, r := range m.Rules {
		fmt.Fprintf(&b, "  %d. %s\n     source: %s\n", k+1, r.Text, r.Source)
	}
	return b.String()
}

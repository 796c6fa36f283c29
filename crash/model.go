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
}

// Sources cited by the rules.
const (
	srcFsync     = "fsync(2): \"Calling fsync() does not necessarily ensure that the entry in the directory containing the file has also reached disk. For that an explicit fsync() on a file descriptor for the directory is also needed.\""
	srcPOSIX     = "POSIX.1-2017 fsync(): the data is transferred to the storage device; nothing is said of what a power loss keeps of unsynced writes"
	srcSector    = "ALICE (Pillai et al., OSDI'14) §2.2 and CrashMonkey (Mohan et al., OSDI'18): a disk writes a sector atomically, a block write may tear at sector boundaries"
	srcExt4Doc   = "Documentation/filesystems/ext4.rst, data=ordered: \"All data are forced directly out to the main file system prior to its metadata being committed to the journal.\""
	srcExt4WB    = "Documentation/filesystems/ext4.rst, data=writeback: \"Data ordering is not preserved, data may be written into the main file system after its metadata has been committed to the journal.\""
	srcJBD2      = "Documentation/filesystems/journalling.rst and fs/ext4/fsync.c (ext4_sync_file -> jbd2_complete_transaction): one running transaction; fsync commits it with every change of every file made before"
	srcCommit    = "Documentation/filesystems/ext4.rst, commit=nrsec: \"sync all data and metadata every nrsec seconds\" (default 5): a commit may happen between any two calls"
	srcDelalloc  = "Documentation/filesystems/ext4.rst, delalloc: blocks are allocated, and i_disksize moved, when the data is written back (fs/ext4/inode.c mpage_map_and_submit_extent)"
	srcAutoDa    = "Documentation/filesystems/ext4.rst, auto_da_alloc: \"replace-via-rename and replace-via-truncate ... the allocation of any delayed allocation blocks are forced such that the new file's blocks ... are allocated ... before the rename() operation is committed\" (fs/ext4/namei.c ext4_rename, fs/ext4/file.c ext4_release_file)"
	srcExt4DJ    = "Documentation/filesystems/ext4.rst, data=journal: \"All data are committed into the journal prior to being written into the main file system.\" and: \"delalloc ... is not supported with data=journal\" (fs/ext4/super.c)"
	srcALICEAPM  = "ALICE (Pillai et al., OSDI'14) §4.1 and alicedefaultfs.py: operations between two sync barriers persist in any order; appends may persist as a size change over garbage or zeros; writes split in parts"
	srcALICESplt = "alicedefaultfs.py (rename = delete destination entry, delete source entry, create destination entry; each may persist alone)"
)

var models = []*Model{
	{
		Name: "posix",
		Doc:  "only what a sync made durable is guaranteed; anything in flight may survive or not, in any order, data torn at 512-byte sectors",
		Rules: []Rule{
			{"fsync/fdatasync make the file's data (and for fsync its metadata) durable; sync/syncfs everything", srcPOSIX},
			{"a new or renamed name is durable only after fsync of its directory", srcFsync},
			{"any subset of the changes in flight survives, in any order", srcPOSIX},
			{"a data block in flight may survive torn at 512-byte sector boundaries; one sector is atomic", srcSector},
			{"one namespace operation (create, link, unlink, rename) survives whole or not at all", "rename(2): the replacement is atomic; every Linux file system journals a namespace operation as one unit"},
		},
	},
	{
		Name: "ext4-ordered",
		Doc:  "ext4's default (data=ordered, delalloc, auto_da_alloc, commit=5)",
		Rules: []Rule{
			{"namespace and metadata changes commit in call order, a whole call at a time", srcJBD2},
			{"a commit may happen between any two calls", srcCommit},
			{"fsync/fdatasync of a file with changes in flight commits the running transaction: every metadata change and directory entry made before it, of any file", srcJBD2},
			{"a size change made by a buffered write reaches the journal only when its blocks are written back (delayed allocation)", srcDelalloc},
			{"data blocks reach disk before the metadata that exposes them", srcExt4Doc},
			{"a file renamed over another, or truncated to zero, rewritten and closed, has its data flushed before the rename or the next commit (auto_da_alloc)", srcAutoDa},
			{"overwrites of allocated blocks are not ordered; a block in flight may tear at sectors", srcSector},
		},
		journal: true, orderedData: true, autoDaAlloc: true,
	},
	{
		Name: "ext4-writeback",
		Doc:  "ext4 with data=writeback: metadata journalled in order, data not ordered with it",
		Rules: []Rule{
			{"namespace and metadata changes commit in call order, a whole call at a time; a commit may happen between any two calls", srcJBD2},
			{"fsync of a file with changes in flight commits every metadata change made before it", srcJBD2},
			{"metadata may commit before the data it exposes: a file can show its new size over zeroed blocks", srcExt4WB},
			{"auto_da_alloc still allocates the blocks (the size commits with the rename) but does not wait for the data", srcAutoDa},
		},
		journal: true, autoDaAlloc: true,
	},
	{
		Name: "ext4-journal",
		Doc:  "ext4 with data=journal: data and metadata journalled together, in order",
		Rules: []Rule{
			{"every change, data included, commits in call order, a whole call at a time; a commit may happen between any two calls", srcExt4DJ},
			{"fsync of a file with changes in flight commits every change made before it", srcJBD2},
			{"a journalled block is written whole: no torn data", srcExt4DJ},
		},
		journal: true, dataJournal: true,
	},
	{
		Name: "alice",
		Doc:  "ALICE's default abstract persistence model: any order between syncs, appends over garbage, non-atomic rename",
		Rules: []Rule{
			{"changes between two sync barriers persist in any order and any subset; a sync is a barrier for its file (for a directory: its entries)", srcALICEAPM},
			{"an append may persist as the size change alone (the model shows zeros where ALICE writes garbage)", srcALICEAPM},
			{"a rename over an existing file may persist as the destination's removal alone", srcALICESplt},
			{"writes may persist in parts (here: at 512-byte sectors; ALICE also splits in thirds)", srcALICEAPM},
		},
		splitRename: true,
	},
}

// Models returns the persistence models, in a fixed order.
func Models() []*Model { return models }

// ModelNames returns the names of the models.
func ModelNames() []string {
	var n []string
	for _, m := range models {
		n = append(n, m.Name)
	}
	return n
}

// ParseModels parses a comma-separated list of model names ("all": every model).
func ParseModels(s string) ([]*Model, error) {
	if s == "" || s == "all" {
		return models, nil
	}
	var out []*Model
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		m := ModelByName(name)
		if m == nil {
			return nil, fmt.Errorf("unknown persistence model %q (want %s or all)", name, strings.Join(ModelNames(), ", "))
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
	fmt.Fprintf(&b, "%s: %s\n", m.Name, m.Doc)
	for k, r := range m.Rules {
		fmt.Fprintf(&b, "  %d. %s\n     source: %s\n", k+1, r.Text, r.Source)
	}
	return b.String()
}

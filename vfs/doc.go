// Package vfs is an in-memory model of a Linux file system (ext4-like) whose every
// state change is classified as durable or not, so that power loss can be simulated
// exactly. It knows nothing of file descriptors or processes: package sim builds the
// syscall layer on top of it. *FS also implements afero.Fs for Go code under test.
//
// # Objects
//
// An *Inode is a file, directory or symlink. Directory operations take the directory
// an "at" call would take (openat's dirfd): dir.Open(path, ...) resolves path relative
// to dir, or from the root when path is absolute (path_resolution(7)). Data operations
// are methods on the inode (ino.ReadAt, ino.WriteAt, ...). Every error returned by
// the inode-level API is a bare syscall.Errno (EBADF, not a Go error string), so that
// results compare exactly with the kernel's; only the afero face wraps them in
// *fs.PathError.
//
// # The inode's contract and the kernel model's hooks
//
// The methods of *Inode are the file-system contract: attributes, a regular file's
// data (read, write, truncate, fallocate, SEEK_DATA/SEEK_HOLE), durability (fsync,
// fdatasync, sync_file_range and the writeback-error cursor) and a directory's
// names. They are what a Go program, an interposer or a crash explorer needs.
//
// Where ext4 or the kernel's VFS does more to the file system at a point of a
// syscall than that contract states, the model of the syscall layer (package sim)
// calls a hook of Inode.Kernel (type Kernel): the page-cache flush an O_DIRECT read
// or write makes first, the truncation that ends a failed extending O_DIRECT
// write, the writeback fadvise(POSIX_FADV_DONTNEED) starts and msync(MS_SYNC)
// waits for, the allocation of delayed blocks at the last close of a file
// truncated to 0 (auto_da_alloc), the mode change of a POSIX access ACL, the error
// order of a call with two paths, and the fast paths of open(2) and read(2). Each
// hook states the behaviour it reproduces and, for ext4's, the kernel function and
// what was observed on Linux; the kernel-differential tests of package sim pin
// them. They live in vfs because they change state that only vfs holds, and sim
// imports vfs, never the reverse.
//
// # Durability rules
//
// Every file has its content at three levels: the page cache (what reads see), the
// device's volatile write cache, and durable media. Namespace and metadata changes
// have two: applied (what lookups see) and durable.
//
//   - A buffered write lands in the page cache and marks its blocks dirty.
//   - Writeback (fsync, fdatasync, sync, sync_file_range, O_SYNC/O_DSYNC writes) moves
//     dirty blocks to the device cache. With the write cache off that is durable; with
//     it on, only a flush makes it durable. An O_DIRECT write skips the page cache and
//     goes straight to the device cache.
//   - fsync(file) = writeback of the file's dirty blocks + its metadata (size,
//     allocation, mode, owner, times) + flush. fdatasync skips metadata that is not
//     needed to read the data back: an mtime/atime/mode-only change is not persisted,
//     a size change is.
//   - fsync(dir) makes durable the directory's pending entry changes (create, link,
//     unlink, rename, mkdir, rmdir, symlink). A new or renamed name is durable only
//     once its parent directory is synced; an inode that is named by no durable entry
//     is gone after a crash even if its data was synced. A rename is one atomic
//     journal operation: syncing either of its directories makes all of it durable.
//   - sync(2) makes everything durable.
//   - Metadata operations become durable in the order they were made (ext4's journal
//     commits in order): syncing a directory also commits every metadata operation
//     made before the last one it needs.
//   - The file system commits on its own (WithPeriodicCommit, on by default with
//     Linux's intervals, in the clock's virtual time): the journal commits every
//     pending namespace operation and the inodes' attributes 5 s after the first
//     change of a transaction, with the sizes that do not wait for delayed
//     allocation (and the blocks those sizes expose, data=ordered); data dirty for
//     30 s is written back with its size.
//   - A file created and removed with no commit able to take one without the other
//     leaves nothing pending: its create and remove cancel out, so a program that
//     never syncs does not accumulate them.
//
// # Power loss
//
// Crash returns the file system as found after power loss under the strict model:
// only durable state survives. Pending lists what was in flight (dirty blocks in the
// page cache or the device cache, size changes, metadata operations) and CrashWith
// builds the state in which a chosen subset of it, some data blocks possibly torn at
// 512-byte sectors, also survived; RandomCrash makes a seeded choice under a
// persistence model (strict, ordered prefix, any subset, torn). The running file
// system is never changed by a crash, so one run yields many crash states; building
// one costs in proportion to the namespace and to what was pending, never to the
// bytes of file data (blocks are shared copy-on-write).
//
// To explore many states, Snapshot freezes the durable state and the pending list
// once (in proportion to what is pending: the durable records are shared
// copy-on-write with the running file system), and CrashSnapshot.State gives a
// CrashState: an overlay on the snapshot that holds only what surviving changes
// altered, stepped from one state to the next by applying or dropping one change
// (Set, Apply, Drop) at a cost in proportion to the changes that interact with it,
// read through lookups (Stat, ReadFile, ReadDir), deduplicated by Hash, and turned
// into a whole FS only when needed. It equals CrashWith for the same choices.
//
// # Writeback errors
//
// A fault injected on writeback (OpWriteback) follows Linux: the dirty data is not
// made durable, the blocks are no longer dirty (the page cache keeps the new bytes,
// so reads still see them until a crash), and the error is recorded on the inode as
// an errseq_t: every open file description that sampled the inode's ErrSeq before the
// error sees it once from fsync/fdatasync (a description opened after an error that
// nobody has seen yet sees it too). A retried fsync then succeeds, and the data is
// gone at the next crash — the behaviour that bit PostgreSQL.
//
// # Concurrency
//
// An *FS and its inodes are safe for concurrent use: one mutex per file system
// serialises state changes, so every operation is atomic with respect to the others.
// A CrashSnapshot is immutable and needs no lock: goroutines explore it at once,
// each with its own CrashStates, while the file system goes on.
package vfs

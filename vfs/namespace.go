package vfs

import "syscall"

// Open flags that the namespace part of open(2) looks at (Linux values).
const (
	oAccMode   = syscall.O_ACCMODE
	oCreat     = syscall.O_CREAT
	oExcl      = syscall.O_EXCL
	oTrunc     = syscall.O_TRUNC
	oDirectory = syscall.O_DIRECTORY
	oNofollow  = syscall.O_NOFOLLOW
	oPath      = 0x200000 // O_PATH: with O_NOFOLLOW, a final symlink itself is opened
)

// Open resolves path relative to dir and returns the inode open(2) would open,
// creating or truncating it as flags say: O_CREAT, O_EXCL, O_TRUNC (which truncates
// even with O_RDONLY, as Linux does), O_DIRECTORY, O_NOFOLLOW, O_PATH (with
// O_NOFOLLOW a final symlink is itself the answer, else ELOOP), and the access mode
// for the EISDIR check. perm is the creation mode with the umask already applied.
// created tells whether a new file was made. The open file description and its
// checks (O_DIRECT support, access to the data) are the caller's.
func (dir *Inode) Open(path string, flags int, perm uint32) (ino *Inode, created bool, err error) {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	return dir.openLocked(path, flags, perm)
}

// openLocked is Open with fs.mu held (the afero face also samples the errseq
// under the same lock, one lock round trip per open).
func (dir *Inode) openLocked(path string, flags int, perm uint32) (ino *Inode, created bool, err error) {
	fs := dir.fs
	links := 0
	// O_CREAT|O_DIRECTORY is EINVAL since Linux 6.4 (checked on this machine's
	// kernel by namespace_linux_test.go).
	if flags&(oCreat|oDirectory) == oCreat|oDirectory {
		return nil, false, EINVAL
	}
	if flags&oCreat != 0 {
		parent, name, trailing, err := fs.walkParent(dir, path, &links)
		if err != nil {
			return nil, false, err
		}
		for {
			if name == "" && flags&oExcl != 0 {
				return nil, false, EEXIST // open("/", O_CREAT|O_EXCL)
			}
			if trailing {
				return nil, false, EISDIR
			}
			if name == "" || name == "." || name == ".." {
				if flags&oExcl != 0 {
					return nil, false, EEXIST
				}
				return nil, false, EISDIR
			}
			if err := lastTooLong(name); err != nil {
				return nil, false, err
			}
			child := parent.entries[name]
			if child == nil {
				if f := fs.faultAt(OpCreate, parent, name); f.Errno != 0 {
					return nil, false, f.Errno
				}
				if parent.nlink == 0 {
					return nil, false, ENOENT
				}
				ino = fs.newChild(parent, S_IFREG|perm&0o7777)
				fs.linkLocked(parent, name, ino)
				fs.logMeta(metaCreate, parent, name, ino, nil, "")
				return ino, true, nil
			}
			if flags&oExcl != 0 {
				return nil, false, EEXIST
			}
			if !child.IsSymlink() {
				ino = child
				break
			}
			if flags&oNofollow != 0 {
				return nil, false, ELOOP
			}
			links++
			if links > MaxSymlinks {
				return nil, false, ELOOP
			}
			if child.target == "" {
				return nil, false, ENOENT
			}
			parent, name, trailing, err = fs.walkParent(parent, child.target, &links)
			if err != nil {
				return nil, false, err
			}
		}
	} else {
		ino, err = fs.walk(dir, path, flags&oNofollow == 0, &links)
		if err != nil {
			return nil, false, err
		}
		if ino.IsSymlink() {
			// O_NOFOLLOW on a final symlink: do_open checks O_DIRECTORY (ENOTDIR)
			// before may_open refuses the link (ELOOP); an O_PATH open skips
			// may_open and refers to the link itself.
			if flags&oDirectory != 0 {
				return nil, false, ENOTDIR
			}
			if flags&oPath != 0 {
				return ino, false, nil
			}
			return nil, false, ELOOP
		}
	}
	if flags&oDirectory != 0 && !ino.IsDir() {
		return nil, false, ENOTDIR
	}
	if ino.IsDir() && (flags&oAccMode != syscall.O_RDONLY || flags&(oTrunc|oCreat) != 0) {
		return nil, false, EISDIR
	}
	if f := fs.fault(OpOpen, ino, ""); f.Errno != 0 {
		return nil, false, f.Errno
	}
	if flags&oTrunc != 0 && ino.IsRegular() {
		if err := fs.truncateLocked(ino, 0); err != nil {
			return nil, false, err
		}
	}
	ino.creator = nil // opened again (recycle.go)
	return ino, false, nil
}

func joinPath(dir *Inode, name string) string { return joinDirPath(dir.pathLocked(), name) }

// joinDirPath is joinPath from the directory's path.
func joinDirPath(dir, name string) string {
	if dir == "/" {
		return "/" + name
	}
	return dir + "/" + name
}

// linkLocked adds the entry name → ino to dir and updates link counts and times.
func (fs *FS) linkLocked(dir *Inode, name string, ino *Inode) {
	dir.entries[name] = ino
	dir.lastLookup, dir.sorted = nil, nil
	fs.nsGen++
	ino.nlink++
	ino.name, ino.dirOf = name, dir
	if ino.IsDir() {
		ino.nlink++ // its own "."
		ino.parent = dir
		dir.nlink++ // its ".."
	}
	t := fs.now()
	dir.mtime, dir.ctime = t, t
	fs.markAttr(dir)
	if ino.nlink > 1 && !ino.IsDir() {
		ino.ctime = t
		fs.markAttr(ino)
	}
}

// unlinkLocked removes the entry name from dir.
func (fs *FS) unlinkLocked(dir *Inode, name string) {
	ino := dir.entries[name]
	delete(dir.entries, name)
	dir.lastLookup, dir.sorted = nil, nil
	fs.nsGen++
	ino.nlink--
	if ino.IsDir() {
		ino.nlink-- // "."
		dir.nlink--
	}
	t := fs.now()
	dir.mtime, dir.ctime = t, t
	ino.ctime = t
	fs.markAttr(dir)
	fs.markAttr(ino)
}

// Mkdir creates a directory, as mkdir(2)/mkdirat(2). perm has the umask applied.
func (dir *Inode) Mkdir(path string, perm uint32) error {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	parent, name, _, err := fs.walkParent(dir, path, &links)
	if err != nil {
		return err
	}
	if err := filenameCreate(parent, name); err != nil {
		return err
	}
	if f := fs.faultAt(OpMkdir, parent, name); f.Errno != 0 {
		return f.Errno
	}
	ino := fs.newChild(parent, S_IFDIR|perm&0o7777)
	fs.linkLocked(parent, name, ino)
	fs.logMeta(metaCreate, parent, name, ino, nil, "")
	return nil
}

// Rmdir removes an empty directory, as rmdir(2).
func (dir *Inode) Rmdir(path string) error {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	parent, name, _, err := fs.walkParent(dir, path, &links)
	if err != nil {
		return err
	}
	switch name {
	case "":
		return EBUSY
	case ".":
		return EINVAL
	case "..":
		return ENOTEMPTY
	}
	if err := lastTooLong(name); err != nil {
		return err
	}
	ino := parent.entries[name]
	if ino == nil {
		return ENOENT
	}
	if !ino.IsDir() {
		return ENOTDIR
	}
	if len(ino.entries) > 0 {
		return ENOTEMPTY
	}
	if f := fs.fault(OpRemove, ino, ""); f.Errno != 0 {
		return f.Errno
	}
	fs.unlinkLocked(parent, name)
	ino.rmdired = true
	if !fs.cancelCreate(parent, name, ino) {
		fs.logMeta(metaRemove, parent, name, ino, nil, "")
	}
	return nil
}

// Unlink removes a name of a non-directory, as unlink(2). The inode lives on while
// something holds it.
func (dir *Inode) Unlink(path string) error {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	parent, name, trailing, err := fs.walkParent(dir, path, &links)
	if err != nil {
		return err
	}
	if name == "" || name == "." || name == ".." {
		return EISDIR
	}
	if err := lastTooLong(name); err != nil {
		return err
	}
	ino := parent.entries[name]
	if ino == nil {
		return ENOENT
	}
	if ino.IsDir() {
		return EISDIR
	}
	if trailing {
		return ENOTDIR
	}
	if f := fs.fault(OpRemove, ino, ""); f.Errno != 0 {
		return f.Errno
	}
	fs.unlinkLocked(parent, name)
	if !fs.cancelCreate(parent, name, ino) {
		fs.logMeta(metaRemove, parent, name, ino, nil, "")
	}
	return nil
}

// Rename flags, as renameat2(2).
const (
	RenameNoreplace = 1 << 0
	RenameExchange  = 1 << 1
)

// Rename moves oldpath (relative to dir) to newpath (relative to newdir), as
// renameat2(2) with flags 0, RenameNoreplace or RenameExchange. Renaming a
// directory moves everything under it.
func (dir *Inode) Rename(oldpath string, newdir *Inode, newpath string, flags int) error {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	if flags&^(RenameNoreplace|RenameExchange) != 0 || flags == RenameNoreplace|RenameExchange {
		return EINVAL
	}
	links := 0
	op, oname, otrail, err := fs.walkParent(dir, oldpath, &links)
	if err != nil {
		return err
	}
	links = 0
	np, nname, ntrail, err := fs.walkParent(newdir, newpath, &links)
	if err != nil {
		return err
	}
	// The rest follows do_renameat2's order: the kinds of the last names (a
	// target that is not a normal name is EEXIST under RENAME_NOREPLACE), the
	// lookups, RENAME_NOREPLACE and RENAME_EXCHANGE's target, then the trailing
	// slashes, which only a directory may have (and an exchange's target).
	if oname == "" || oname == "." || oname == ".." {
		return EBUSY
	}
	if nname == "" || nname == "." || nname == ".." {
		if flags&RenameNoreplace != 0 {
			return EEXIST
		}
		return EBUSY
	}
	// lookup_one_qstr_excl on each side: a removed directory has no entries and
	// gets no new ones (IS_DEADDIR: ENOENT before the file system's lookup, so
	// before ENAMETOOLONG), whatever the flags.
	if op.nlink == 0 {
		return ENOENT
	}
	if err := lastTooLong(oname); err != nil {
		return err
	}
	src := op.entries[oname]
	if src == nil {
		return ENOENT
	}
	if np.nlink == 0 {
		return ENOENT
	}
	if err := lastTooLong(nname); err != nil {
		return err
	}
	dst := np.entries[nname]
	if flags&RenameNoreplace != 0 && dst != nil {
		return EEXIST
	}
	if flags&RenameExchange != 0 {
		if dst == nil {
			return ENOENT
		}
		if ntrail && !dst.IsDir() {
			return ENOTDIR
		}
	}
	if !src.IsDir() && (otrail || ntrail && flags&RenameExchange == 0) {
		return ENOTDIR
	}
	// lock_rename's trap: when one parent is an ancestor of the other, the child
	// of the upper one on the way down. The source may not be it (a directory
	// moved below itself: EINVAL); nor may the target (the target is an ancestor
	// of the source: ENOTEMPTY, or EINVAL for an exchange).
	if trap := renameTrap(fs, op, np); trap != nil {
		if src == trap {
			return EINVAL
		}
		if dst == trap {
			if flags&RenameExchange != 0 {
				return EINVAL
			}
			return ENOTEMPTY
		}
	}
	if dst == src {
		return nil
	}
	if dst != nil && flags&RenameExchange == 0 {
		if src.IsDir() && !dst.IsDir() {
			return ENOTDIR
		}
		if !src.IsDir() && dst.IsDir() {
			return EISDIR
		}
		if dst.IsDir() && len(dst.entries) > 0 {
			return ENOTEMPTY
		}
	}
	if f := fs.fault(OpRename, src, ""); f.Errno != 0 {
		return f.Errno
	}
	if flags&RenameExchange != 0 {
		fs.unlinkLocked(op, oname)
		fs.unlinkLocked(np, nname)
		fs.linkLocked(np, nname, src)
		fs.linkLocked(op, oname, dst)
		fs.logMeta(metaExchange, op, oname, src, np, nname)
		return nil
	}
	if dst != nil {
		// ext4_rename over an existing file (auto_da_alloc's
		// replace-via-rename): ext4_alloc_da_blocks(source) starts writeback
		// of the source's dirty pages; the model allocates their delayed
		// blocks (see Kernel.Release). Observed on Linux 6.18: five delayed one-block
		// extents get their extents and a leaf block at the rename.
		fs.allocDaBlocks(src)
		fs.unlinkLocked(np, nname)
	}
	fs.unlinkLocked(op, oname)
	fs.linkLocked(np, nname, src)
	fs.logMeta(metaRename, op, oname, src, np, nname)
	return nil
}

// renameTrap returns, when one of the directories a and b is a proper ancestor of
// the other, the child of the ancestor that leads to the other; else nil.
func renameTrap(fs *FS, a, b *Inode) *Inode {
	if a == b {
		return nil
	}
	below := func(upper, lower *Inode) *Inode {
		for d := lower; d != fs.root; d = d.parent {
			if d.parent == upper {
				return d
			}
		}
		return nil
	}
	if t := below(a, b); t != nil {
		return t
	}
	return below(b, a)
}

// Link makes newpath (relative to newdir) a new name of oldpath (relative to dir),
// as linkat(2); follow is AT_SYMLINK_FOLLOW.
func (dir *Inode) Link(oldpath string, newdir *Inode, newpath string, follow bool) error {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	src, err := fs.walk(dir, oldpath, follow, &links)
	if err != nil {
		return err
	}
	return fs.linkToLocked(src, newdir, newpath)
}

// LinkFrom makes newpath (relative to newdir) a new name of src, as linkat(2)
// with AT_EMPTY_PATH names the file an fd refers to. A nil src is a file of
// another file system (a pipe, a device): EXDEV once the new name is checked.
func (newdir *Inode) LinkFrom(src *Inode, newpath string) error {
	fs := newdir.fs
	fs.lock()
	defer fs.mu.Unlock()
	return fs.linkToLocked(src, newdir, newpath)
}

// filenameCreate is what filename_create refuses for a new name in parent
// (walkParent's answer), in its order: a name that is not normal ("", ".",
// ".."): EEXIST; then lookup_one_qstr_excl: a removed parent (IS_DEADDIR)
// ENOENT, before the file system's lookup and its ENAMETOOLONG; an existing
// entry EEXIST. Called with fs.mu held.
func filenameCreate(parent *Inode, name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return EEXIST
	case parent.nlink == 0:
		return ENOENT
	}
	if err := lastTooLong(name); err != nil {
		return err
	}
	if parent.entries[name] != nil {
		return EEXIST
	}
	return nil
}

// linkToLocked is the part of linkat(2) after the old path's lookup, in
// do_linkat's order: filename_create (the parent, a name that is not normal:
// EEXIST, the lookup: an existing name is EEXIST, a missing one with a trailing
// slash ENOENT), then the mounts (EXDEV for a nil src), then vfs_link (a
// directory is EPERM, an unlinked file ENOENT unless an O_TMPFILE one that
// may be linked: Tmpfile).
func (fs *FS) linkToLocked(src, newdir *Inode, newpath string) error {
	links := 0
	np, nname, ntrail, err := fs.walkParent(newdir, newpath, &links)
	if err != nil {
		return err
	}
	if err := filenameCreate(np, nname); err != nil {
		return err
	}
	if ntrail {
		return ENOENT
	}
	if src == nil || src.fs != fs {
		return EXDEV
	}
	if src.IsDir() {
		return EPERM
	}
	if src.nlink == 0 && !src.linkable {
		return ENOENT
	}
	if f := fs.fault(OpLink, src, ""); f.Errno != 0 {
		return f.Errno
	}
	src.linkable = false
	fs.linkLocked(np, nname, src)
	fs.logMeta(metaCreate, np, nname, src, nil, "")
	return nil
}

// Symlink creates path (relative to dir) as a symbolic link to target, as
// symlinkat(2).
func (dir *Inode) Symlink(target, path string) error {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	if target == "" {
		return ENOENT
	}
	if len(target) >= MaxPathLen {
		return ENAMETOOLONG
	}
	links := 0
	parent, name, trailing, err := fs.walkParent(dir, path, &links)
	if err != nil {
		return err
	}
	if err := filenameCreate(parent, name); err != nil {
		return err
	}
	if trailing {
		// A new name with a trailing slash must be a directory: filename_create
		// refuses it (checked against the kernel by namespace_linux_test.go).
		return ENOENT
	}
	if f := fs.faultAt(OpSymlink, parent, name); f.Errno != 0 {
		return f.Errno
	}
	ino := fs.newChild(parent, S_IFLNK|0o777)
	ino.target = target
	ino.size = int64(len(target))
	fs.linkLocked(parent, name, ino)
	fs.logMeta(metaCreate, parent, name, ino, nil, "")
	return nil
}

// Mknod creates path (relative to dir) as a special file, as mknodat(2): mode's
// file type is S_IFIFO, S_IFCHR, S_IFBLK, S_IFSOCK, or S_IFREG (or 0) for an
// empty regular file; rdev is the device number of a device node (ignored for
// the other types). perm has had the umask applied. A FIFO, device node or
// socket has no data and size 0. Errors: EPERM for S_IFDIR and EINVAL for
// another type (may_mknod), then those of creating a name (EEXIST, ENOENT,
// ENOTDIR...).
func (dir *Inode) Mknod(path string, mode uint32, perm uint32, rdev uint64) error {
	typ := mode & S_IFMT
	switch typ {
	case 0:
		typ = S_IFREG
	case S_IFREG, S_IFIFO, S_IFCHR, S_IFBLK, S_IFSOCK:
	case S_IFDIR:
		return EPERM
	default:
		return EINVAL
	}
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	parent, name, trailing, err := fs.walkParent(dir, path, &links)
	if err != nil {
		return err
	}
	if err := filenameCreate(parent, name); err != nil {
		return err
	}
	if trailing {
		return ENOENT
	}
	if f := fs.faultAt(OpCreate, parent, name); f.Errno != 0 {
		return f.Errno
	}
	ino := fs.newChild(parent, typ|perm&0o7777)
	if typ == S_IFCHR || typ == S_IFBLK {
		ino.rdev = rdev
	}
	fs.linkLocked(parent, name, ino)
	fs.logMeta(metaCreate, parent, name, ino, nil, "")
	return nil
}

// Rdev returns the device number of a device node (0 for other inodes).
func (i *Inode) Rdev() uint64 { return i.rdev }

// Readlink returns the target of the symlink path names, as readlinkat(2)
// (EINVAL when it is not a symlink).
func (dir *Inode) Readlink(path string) (string, error) {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	ino, err := fs.walk(dir, path, false, &links)
	if err != nil {
		return "", err
	}
	if !ino.IsSymlink() {
		return "", EINVAL
	}
	return ino.target, nil
}

// Target returns a symlink's target ("" for other inodes).
func (i *Inode) Target() string {
	i.fs.lock()
	defer i.fs.mu.Unlock()
	return i.target
}

// Parent returns the directory holding a directory (the root's parent is the root).
func (i *Inode) Parent() *Inode {
	i.fs.lock()
	defer i.fs.mu.Unlock()
	return i.parent
}

// Chmod sets the permission bits, as chmod(2)/fchmod(2).
func (i *Inode) Chmod(mode uint32) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	i.mode = i.mode&S_IFMT | mode&0o7777
	i.ctime = fs.now()
	fs.markAttr(i)
	return nil
}

// Chown sets the owner, as fchownat(2); -1 leaves a field unchanged.
func (i *Inode) Chown(uid, gid int) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	if uid != -1 {
		i.uid = uint32(uid)
	}
	if gid != -1 {
		i.gid = uint32(gid)
	}
	i.ctime = fs.now()
	fs.markAttr(i)
	return nil
}

// Utimens sets access and modification times, as utimensat(2); UtimeNow and
// UtimeOmit are honoured.
func (i *Inode) Utimens(atime, mtime Timespec) error {
	fs := i.fs
	fs.lock()
	defer fs.mu.Unlock()
	t := fs.now()
	if atime == UtimeNow {
		atime = t
	}
	if mtime == UtimeNow {
		mtime = t
	}
	if atime != UtimeOmit {
		i.atime = atime
	}
	if mtime != UtimeOmit {
		i.mtime = mtime
	}
	i.ctime = t
	fs.markAttr(i)
	return nil
}

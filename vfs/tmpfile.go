package vfs

// Tmpfile makes an unnamed regular file in directory dir with permission bits
// perm, as open(2) with O_TMPFILE does (vfs_tmpfile, ext4_tmpfile): the inode
// has no link (st_nlink 0) and lives while something refers to it. Unless
// excl (O_EXCL), it may be given a name once, by LinkFrom (linkat(2) with
// AT_EMPTY_PATH, or of /proc/self/fd/N with AT_SYMLINK_FOLLOW): Linux's
// I_LINKABLE, which the first link clears. An O_EXCL one, or one linked and
// unlinked again, cannot be linked: ENOENT.
//
// Durability: the inode has no name, so no crash state has it (whatever was
// synced of its data) until a name that a synced directory holds refers to
// it, as for any new name; then it has what fsync made durable, before or
// after the link.
//
// Errors, in Linux's order: a dir that is not a directory ENOTDIR, a removed
// one EPERM (ext4's answer, where creating a name there is ENOENT), then an
// OpCreate fault (matched on the directory's path).
func (dir *Inode) Tmpfile(perm uint32, excl bool) (*Inode, error) {
	fs := dir.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	switch {
	case !dir.IsDir():
		return nil, ENOTDIR
	case dir.nlink == 0:
		return nil, EPERM // ext4's __ext4_new_inode: a directory without links
	}
	if f := fs.fault(OpCreate, dir, ""); f.Errno != 0 {
		return nil, f.Errno
	}
	ino := fs.newChild(dir, S_IFREG|perm&0o7777)
	if !excl {
		// What fsync makes durable of it before it has a name is on disk
		// (ext4 keeps the inode on its orphan list): its durable record
		// exists from the start, out of reach until a durable entry names
		// it (crash states are built from the root).
		ino.linkable = true
		fs.durPut(ino.ino, newDurInode(fs.cfg.blockSize, ino.mode, ""))
	}
	return ino, nil
}

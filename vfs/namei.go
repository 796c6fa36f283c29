package vfs

import "strings"

// Path resolution, as path_resolution(7) describes it. All functions here run with
// fs.mu held and allocate nothing for paths without symlinks.

// walk resolves path starting at dir (or at the root when path is absolute). The
// last component is followed when it is a symlink and followLast is set, or when
// the path ends in a slash. links counts the symlinks followed so far.
//
// The last successful walk that followed no symlink is remembered (fs.lastWalk)
// with the namespace generation it saw: the same walk again, with no entry
// added or removed anywhere since (fs.nsGen), has the same answer, which walk
// then gives without resolving the path again.
func (fs *FS) walk(dir *Inode, path string, followLast bool, links *int) (*Inode, error) {
	if m := &fs.lastWalk; m.gen == fs.nsGen && m.ino != nil && m.dir == dir && m.follow == followLast && m.path == path {
		return m.ino, nil
	}
	before := *links
	ino, err := fs.resolve(dir, path, followLast, links)
	if err == nil && *links == before {
		fs.lastWalk = walkMemo{gen: fs.nsGen, dir: dir, path: path, follow: followLast, ino: ino}
	}
	return ino, err
}

// walkMemo is a walk and its answer, valid while fs.nsGen is gen.
type walkMemo struct {
	gen    uint64
	dir    *Inode
	path   string
	follow bool
	ino    *Inode
}

// resolve is walk without its memo.
func (fs *FS) resolve(dir *Inode, path string, followLast bool, links *int) (*Inode, error) {
	if len(path) == 0 {
		return nil, ENOENT
	}
	if len(path) >= MaxPathLen {
		return nil, ENAMETOOLONG
	}
	cur := dir
	if path[0] == '/' {
		cur = fs.root
	}
	i := 0
	for {
		for i < len(path) && path[i] == '/' {
			i++
		}
		if i == len(path) {
			return cur, nil
		}
		j := len(path)
		if k := strings.IndexByte(path[i:], '/'); k >= 0 {
			j = i + k
		}
		name := path[i:j]
		k := j
		for k < len(path) && path[k] == '/' {
			k++
		}
		isLast := k == len(path)
		trailing := isLast && j < len(path)
		if !cur.IsDir() {
			return nil, ENOTDIR
		}
		if len(name) > MaxNameLen {
			return nil, ENAMETOOLONG
		}
		var next *Inode
		switch name {
		case ".":
			next = cur
		case "..":
			next = cur.parent
		default:
			next = cur.lookup(name)
			if next == nil {
				return nil, ENOENT
			}
		}
		if next.IsSymlink() && (!isLast || followLast || trailing) {
			*links++
			if *links > MaxSymlinks {
				return nil, ELOOP
			}
			t, err := fs.walk(cur, next.target, true, links)
			if err != nil {
				return nil, err
			}
			next = t
		}
		if isLast {
			if trailing && !next.IsDir() {
				return nil, ENOTDIR
			}
			return next, nil
		}
		cur = next
		i = j
	}
}

// walkParent resolves all but the last component of path and returns the directory
// that holds (or would hold) the last one, its name, and whether the path ended in
// a slash. The path "/" gives the root and an empty name; "." and ".." are returned
// as names for the caller to refuse as each syscall does, and a name over NAME_MAX
// for the caller to refuse (lastTooLong) where it looks the name up.
func (fs *FS) walkParent(dir *Inode, path string, links *int) (parent *Inode, name string, trailing bool, err error) {
	if len(path) == 0 {
		return nil, "", false, ENOENT
	}
	if len(path) >= MaxPathLen {
		return nil, "", false, ENAMETOOLONG
	}
	end := len(path)
	for end > 0 && path[end-1] == '/' {
		end--
	}
	trailing = end < len(path)
	if end == 0 { // "/" or "///"
		return fs.root, "", trailing, nil
	}
	start := end
	for start > 0 && path[start-1] != '/' {
		start--
	}
	name = path[start:end]
	// The name's length is not checked here: as path_parentat (link_path_walk)
	// does not look at the last component, a long last name is ENAMETOOLONG only
	// when the caller looks it up (ext4_lookup), after the parent's errors and the
	// caller's checks of "." and "..": see lastTooLong.
	parent = dir
	if start > 0 {
		parent, err = fs.walk(dir, path[:start], true, links)
		if err != nil {
			return nil, "", false, err
		}
	}
	if !parent.IsDir() {
		return nil, "", false, ENOTDIR
	}
	return parent, name, trailing, nil
}

// lastTooLong is the final lookup's refusal of a name walkParent returned:
// ENAMETOOLONG over NAME_MAX (ext4_lookup), else nil.
func lastTooLong(name string) error {
	if len(name) > MaxNameLen {
		return ENAMETOOLONG
	}
	return nil
}

// Resolve returns the inode that path names, relative to dir (the cwd or an "at"
// call's dirfd). followLast says whether a final symlink is followed (stat versus
// lstat, AT_SYMLINK_NOFOLLOW).
func (dir *Inode) Resolve(path string, followLast bool) (*Inode, error) {
	fs := dir.fs
	fs.lock()
	defer fs.mu.Unlock()
	links := 0
	ino, err := fs.walk(dir, path, followLast, &links)
	if ino != nil {
		ino.creator = nil // reached by another than its creator (recycle.go)
	}
	return ino, err
}

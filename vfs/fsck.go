package vfs

import (
	"cmp"
	"fmt"
	"slices"
)

// Fsck checks the structure of the file system as e2fsck's passes 2 to 4 do,
// and returns one line per inconsistency found (nil when there is none), in a
// deterministic order: every entry names a live inode (link count above zero);
// a directory's ".." is the directory holding it, and no directory has a second
// name; a directory's link count is 2 plus its subdirectories; a file's link
// count is the number of names it has in the tree. Inodes no name reaches (open
// unlinked files) are not checked.
func (fs *FS) Fsck() []string {
	fs.lock()
	defer fs.mu.Unlock()
	var out []string
	names := map[*Inode]int{}
	var order []*Inode
	seenDir := map[*Inode]string{fs.root: "/"}
	var walk func(dir *Inode, path string)
	walk = func(dir *Inode, path string) {
		subdirs := uint32(0)
		for _, c := range dir.sortedLocked() {
			p := path + c.name
			if path != "/" {
				p = path + "/" + c.name
			}
			ino := c.ino
			if ino.nlink == 0 {
				out = append(out, fmt.Sprintf("%s: entry names inode %d, which has no links", p, ino.ino))
			}
			if !ino.IsDir() {
				if names[ino] == 0 {
					order = append(order, ino)
				}
				names[ino]++
				continue
			}
			subdirs++
			if first, ok := seenDir[ino]; ok {
				out = append(out, fmt.Sprintf("%s: directory inode %d already named %s", p, ino.ino, first))
				continue
			}
			seenDir[ino] = p
			if ino.parent != dir {
				out = append(out, fmt.Sprintf("%s: \"..\" is inode %d, not the directory holding it (%d)", p, ino.parent.ino, dir.ino))
			}
			walk(ino, p)
		}
		if want := 2 + subdirs; dir.nlink != want {
			out = append(out, fmt.Sprintf("%s: directory has link count %d, want %d (2 + %d subdirectories)", path, dir.nlink, want, subdirs))
		}
	}
	walk(fs.root, "/")
	slices.SortFunc(order, func(a, b *Inode) int { return cmp.Compare(a.ino, b.ino) })
	for _, ino := range order {
		if uint32(names[ino]) != ino.nlink {
			out = append(out, fmt.Sprintf("inode %d (%s): link count %d, but %d names in the tree", ino.ino, ino.name, ino.nlink, names[ino]))
		}
	}
	return out
}

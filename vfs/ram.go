package vfs

import (
	pathpkg "path"
	"slices"
)

// File systems kept in memory.
//
// A tmpfs (or ramfs) mount holds its files in the page cache alone: fsync
// there returns 0 and writes nothing, and a power loss empties it; after the
// reboot it is mounted afresh, its root an empty directory. The model has
// one namespace, so such a mount is a directory of it that SetRAM names:
// the running state below it behaves as any (tmpfs's calls answer as
// ext4's do for what the model covers), and every state a crash leaves
// finds the directory empty.

// SetRAM says that the directory at path (absolute) is the root of a file
// system kept in memory (tmpfs, ramfs): every state a crash leaves (Crash,
// CrashWith, CrashFrom, RandomCrash, CrashSnapshot's states and their FS)
// finds it empty, whatever a sync made durable below it; the directory
// itself is as the durable state has it (the mount point, on the file
// system that holds it). The path is looked up at each crash: one that
// names no directory then is ignored. The running state is unchanged.
func (fs *FS) SetRAM(path string) {
	path = pathpkg.Clean("/" + path)
	fs.lock()
	defer fs.mu.Unlock()
	if !slices.Contains(fs.ram, path) {
		fs.ram = append(fs.ram, path)
	}
}

// RAM returns the paths SetRAM named, in the order named.
func (fs *FS) RAM() []string {
	fs.lock()
	defer fs.mu.Unlock()
	return slices.Clone(fs.ram)
}

// ramDirsLocked returns the inode numbers of the directories SetRAM named
// that exist now (nil when there are none).
func (fs *FS) ramDirsLocked() map[uint64]bool {
	if len(fs.ram) == 0 {
		return nil
	}
	out := map[uint64]bool{}
	for _, p := range fs.ram {
		links := 0
		if i, err := fs.resolve(fs.root, p, false, &links); err == nil && i.IsDir() {
			out[i.ino] = true
		}
	}
	return out
}

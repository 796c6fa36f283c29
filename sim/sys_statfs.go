package sim

import (
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// Magic numbers statfs(2) reports in f_type.
const (
	ext4SuperMagic = 0xEF53
	pipefsMagic    = 0x50495045
	sockfsMagic    = 0x534F434B
	tmpfsMagic     = 0x01021994
	procSuperMagic = 0x9FA0
)

// sysStatfs implements statfs(2) (Path; Obj: *unix.Statfs_t) and, with byFd,
// fstatfs(2) (Args[0]). The file system reports ext4's f_type, its block size,
// vfs.FS.Statfs's figures, f_namelen 255 and f_flags ST_VALID|ST_RELATIME; a pipe
// pipefs's f_type, a socket sockfs's, /dev/null and /dev/zero devtmpfs's
// (tmpfs), with block size 4096 and no figures. EFAULT without Obj.
func (k *Kernel) sysStatfs(c *Call, byFd bool) Result {
	st, _ := c.Obj.(*unix.Statfs_t)
	if st == nil {
		return Fail(syscall.EFAULT)
	}
	if byFd {
		return c.Task.withFileRaw(int(c.Args[0]), func(f *File) Result {
			k.statfs(f.ino, f.special, st)
			return Result{}
		})
	}
	ino, f, e := k.resolveAt(c.Task, atFdcwd, c.Path, true, false)
	if e != 0 {
		return Fail(e)
	}
	var s Special
	if f != nil {
		s = f.special
	}
	k.statfs(ino, s, st)
	return Result{}
}

// statfs fills st for an inode of the file system, or for the special object s.
func (k *Kernel) statfs(ino *vfs.Inode, s Special, st *unix.Statfs_t) {
	*st = unix.Statfs_t{Bsize: 4096, Frsize: 4096, Namelen: 255, Flags: 0x1020}
	if ino != nil {
		bs := k.fs.BlockSize()
		blocks, free, files, ffree := k.fs.Statfs()
		dev := k.fs.Dev()
		*st = unix.Statfs_t{Type: ext4SuperMagic, Bsize: bs, Frsize: bs, Blocks: blocks, Bfree: free, Bavail: free,
			Files: files, Ffree: ffree, Namelen: 255, Flags: 0x1020,
			Fsid: unix.Fsid{Val: [2]int32{int32(dev), int32(dev >> 32)}}}
		return
	}
	switch m := s.Mode() & vfs.S_IFMT; {
	case m == vfs.S_IFSOCK:
		st.Type = sockfsMagic
	case m == vfs.S_IFIFO:
		st.Type = pipefsMagic
	default:
		st.Type = tmpfsMagic
	}
}

package sim

import (
	"syscall"

	"github.com/iosim/iosim/vfs"
)

// openTmpfile is open(2) with O_TMPFILE (checked by openArgsErr: with
// O_DIRECTORY, write access and no O_CREAT): do_tmpfile looks path up as a
// directory (following a final symlink: ENOTDIR when it is no directory),
// then the file system makes an unnamed regular file in it with mode &^
// umask (vfs.Tmpfile; O_EXCL: it can never be linked). The description
// keeps O_TMPFILE among its flags, as Linux's f_flags does.
//
// Such a file is named by linkat(fd, "", dirfd, name, AT_EMPTY_PATH) or
// linkat(AT_FDCWD, "/proc/self/fd/N", dirfd, name, AT_SYMLINK_FOLLOW) (see
// sysLinkat).
func (k *Kernel) openTmpfile(t *Task, dir *vfs.Inode, path string, flags int, mode uint32) (*File, syscall.Errno) {
	d, err := dir.Resolve(path, true)
	if err != nil {
		return nil, errnoOf(err)
	}
	ino, err := d.Tmpfile(mode&0o7777&^t.g.umask.Load(), flags&syscall.O_EXCL != 0)
	if err != nil {
		return nil, errnoOf(err)
	}
	if flags&oDirect != 0 && !k.fs.SupportsDirectIO() {
		return nil, syscall.EINVAL
	}
	f := newFileFor(t, ino, flags)
	f.errseq = ino.SampleErrSeq()
	return f, 0
}

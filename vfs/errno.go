package vfs

import "syscall"

// The errnos the model returns. They are bare syscall.Errno values, identical to
// golang.org/x/sys/unix's, so results compare exactly with the kernel's.
const (
	EPERM        = syscall.EPERM
	ENOENT       = syscall.ENOENT
	EIO          = syscall.EIO
	ENXIO        = syscall.ENXIO
	EBADF        = syscall.EBADF
	EACCES       = syscall.EACCES
	EBUSY        = syscall.EBUSY
	EEXIST       = syscall.EEXIST
	EXDEV        = syscall.EXDEV
	ENOTDIR      = syscall.ENOTDIR
	EISDIR       = syscall.EISDIR
	EINVAL       = syscall.EINVAL
	EFBIG        = syscall.EFBIG
	ENOSPC       = syscall.ENOSPC
	EROFS        = syscall.EROFS
	EMLINK       = syscall.EMLINK
	ENAMETOOLONG = syscall.ENAMETOOLONG
	ENOTEMPTY    = syscall.ENOTEMPTY
	ELOOP        = syscall.ELOOP
	EDQUOT       = syscall.EDQUOT
	EOPNOTSUPP   = syscall.EOPNOTSUPP
	ENODEV       = syscall.ENODEV
)

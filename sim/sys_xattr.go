package sim

import (
	"encoding/binary"
	"syscall"

	"github.com/iosim/iosim/vfs"
)

// The xattr calls, for the one kind of extended attribute that changes what
// the rest of the model sees: POSIX ACLs, which cp -a, rsync -A and tar
// --acls set. Setting an access ACL sets the file's permission bits (ext4
// keeps no ACL that the bits express: posix_acl_update_mode); a default ACL
// is validated but not kept, so files created in its directory get their
// mode from the umask, not from it. Other names answer EOPNOTSUPP, as a file
// system mounted without user xattrs does (system.* ones do on ext4 too).

const (
	xattrCreate  = 0x1 // XATTR_CREATE
	xattrReplace = 0x2 // XATTR_REPLACE
	xattrNameMax = 255
	xattrSizeMax = 65536

	aclAccess  = "system.posix_acl_access"
	aclDefault = "system.posix_acl_default"

	aclUserObj  = 0x01
	aclUser     = 0x02
	aclGroupObj = 0x04
	aclGroup    = 0x08
	aclMask     = 0x10
	aclOther    = 0x20
)

// sysSetxattr implements setxattr(2) (follow), lsetxattr(2) and, with
// byFd, fsetxattr(2): Path (or Args[0], the fd), the name in Path2, the
// value in Buf, flags in Args[4].
func (k *Kernel) sysSetxattr(c *Call, follow, byFd bool) Result {
	name, value, flags := c.Path2, c.Buf, c.Args[4]
	if flags&^(xattrCreate|xattrReplace) != 0 {
		return Fail(syscall.EINVAL)
	}
	if len(name) == 0 || len(name) > xattrNameMax {
		return Fail(syscall.ERANGE)
	}
	if len(value) > xattrSizeMax {
		return Fail(syscall.E2BIG)
	}
	ino, done, e := k.xattrTarget(c, follow, byFd)
	if e == 0 && !done {
		e = setACL(ino, name, value, true)
	}
	return errResult(e)
}

// sysRemovexattr implements removexattr(2), lremovexattr(2) and
// fremovexattr(2), the name in Path2.
func (k *Kernel) sysRemovexattr(c *Call, follow, byFd bool) Result {
	name := c.Path2
	if len(name) == 0 || len(name) > xattrNameMax {
		return Fail(syscall.ERANGE)
	}
	ino, done, e := k.xattrTarget(c, follow, byFd)
	if e == 0 && !done {
		e = setACL(ino, name, nil, false)
	}
	return errResult(e)
}

// errResult is 0 for no errno, else the failure.
func errResult(e syscall.Errno) Result {
	if e != 0 {
		return Fail(e)
	}
	return Result{}
}

// xattrTarget returns the inode an xattr call names; done is set for an fd
// that replay filled in (answered with success, as other calls on it are).
func (k *Kernel) xattrTarget(c *Call, follow, byFd bool) (ino *vfs.Inode, done bool, e syscall.Errno) {
	if byFd {
		r := c.Task.withFile(int(c.Args[0]), func(f *File) Result {
			if f.special != nil {
				done = true
			} else {
				ino = f.ino
			}
			return Result{}
		})
		return ino, done, r.Errno
	}
	ino, f, e := k.resolveAt(c.Task, atFdcwd, c.Path, follow, false)
	if e != 0 {
		return nil, false, e
	}
	return ino, f != nil && f.special != nil, 0
}

// setACL sets (set) or removes the attribute name of ino with value, for
// the POSIX ACL names, and returns the errno (0 for success).
func setACL(ino *vfs.Inode, name string, value []byte, set bool) syscall.Errno {
	if name != aclAccess && name != aclDefault {
		return syscall.EOPNOTSUPP
	}
	var perm uint32
	empty := true
	if set {
		var e syscall.Errno
		if perm, empty, e = parseACL(value); e != 0 {
			return e
		}
	}
	if ino.IsSymlink() {
		return syscall.EOPNOTSUPP
	}
	if name == aclDefault {
		if !ino.IsDir() && !empty {
			return syscall.EACCES
		}
		return 0
	}
	if !empty {
		ino.Kernel().ChmodRWX(perm)
	}
	return 0
}

// parseACL checks an ACL in its xattr form (posix_acl_from_xattr and
// posix_acl_valid) and returns the permission bits it sets
// (posix_acl_equiv_mode: the mask's bits stand for the group's when it has
// one). empty is set for an ACL of no entries, which removes one.
func parseACL(v []byte) (perm uint32, empty bool, e syscall.Errno) {
	if len(v) == 0 {
		return 0, true, 0
	}
	if len(v) < 4 {
		return 0, false, syscall.EINVAL
	}
	if binary.LittleEndian.Uint32(v) != 2 {
		return 0, false, syscall.EOPNOTSUPP
	}
	if (len(v)-4)%8 != 0 {
		return 0, false, syscall.EINVAL
	}
	if len(v) == 4 {
		return 0, true, 0
	}
	const (
		wantUserObj = iota
		inUsers
		inGroups
		wantOther
		ended
	)
	state, needMask := wantUserObj, false
	for off := 4; off < len(v); off += 8 {
		tag, p := binary.LittleEndian.Uint16(v[off:]), uint32(binary.LittleEndian.Uint16(v[off+2:]))
		if p&^7 != 0 {
			return 0, false, syscall.EINVAL
		}
		switch tag {
		case aclUserObj:
			if state != wantUserObj {
				return 0, false, syscall.EINVAL
			}
			state = inUsers
			perm |= p << 6
		case aclUser:
			if state != inUsers {
				return 0, false, syscall.EINVAL
			}
			needMask = true
		case aclGroupObj:
			if state != inUsers {
				return 0, false, syscall.EINVAL
			}
			state = inGroups
			perm |= p << 3
		case aclGroup:
			if state != inGroups {
				return 0, false, syscall.EINVAL
			}
			needMask = true
		case aclMask:
			if state != inGroups {
				return 0, false, syscall.EINVAL
			}
			state = wantOther
			perm = perm&^0o070 | p<<3
		case aclOther:
			if state != wantOther && (state != inGroups || needMask) {
				return 0, false, syscall.EINVAL
			}
			state = ended
			perm |= p
		default:
			return 0, false, syscall.EINVAL
		}
	}
	if state != ended {
		return 0, false, syscall.EINVAL
	}
	return perm, false, 0
}

// sysGetxattr implements getxattr(2) (follow), lgetxattr(2) and, with byFd,
// fgetxattr(2): Path (or Args[0], the fd), the name in Path2, the buffer in Buf
// (its size Args[3]). The model keeps no attribute: an ACL name is ENODATA
// (an access ACL that the permission bits express is not kept on ext4 either;
// a default or extended one is not modelled), EOPNOTSUPP on a symlink; other
// names EOPNOTSUPP (see the top of the file). ERANGE for an empty name or one
// over 255 bytes, E2BIG for a size over 65536 is not checked: no value is copied.
func (k *Kernel) sysGetxattr(c *Call, follow, byFd bool) Result {
	name := c.Path2
	if len(name) == 0 || len(name) > xattrNameMax {
		return Fail(syscall.ERANGE)
	}
	ino, done, e := k.xattrTarget(c, follow, byFd)
	switch {
	case e != 0:
		return Fail(e)
	case done:
		return Result{}
	case name != aclAccess && name != aclDefault, ino.IsSymlink():
		return Fail(syscall.EOPNOTSUPP)
	}
	return Fail(syscall.ENODATA)
}

// sysListxattr implements listxattr(2), llistxattr(2) and flistxattr(2) (Path
// or Args[0]; the buffer in Buf, its size Args[2]): the model keeps no
// attribute, so the list is empty (0), after the path or fd is resolved.
func (k *Kernel) sysListxattr(c *Call, follow, byFd bool) Result {
	_, _, e := k.xattrTarget(c, follow, byFd)
	return errResult(e)
}

package sim

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// sysUtime implements utime(2) (Path; Obj: *unix.Utimbuf, nil for NULL: now):
// utimensat(AT_FDCWD, path, times, 0) with whole seconds.
func (k *Kernel) sysUtime(c *Call) Result {
	var ts *[2]unix.Timespec
	if b, _ := c.Obj.(*unix.Utimbuf); b != nil {
		ts = &[2]unix.Timespec{{Sec: b.Actime}, {Sec: b.Modtime}}
	}
	return k.utimesAt(c, atFdcwd, ts)
}

// sysFutimesat implements utimes(2) (dirfd AT_FDCWD) and futimesat(2) (Args:
// dirfd, path; Obj: *[2]unix.Timeval, nil for NULL: now): a tv_usec outside
// [0, 1e6) is EINVAL before the path is looked at (sys_utimes); then
// utimensat(dirfd, path, times, 0), a NULL path being the fd itself.
func (k *Kernel) sysFutimesat(c *Call, dirfd int) Result {
	var ts *[2]unix.Timespec
	if tv, _ := c.Obj.(*[2]unix.Timeval); tv != nil {
		ts = &[2]unix.Timespec{}
		for i, t := range tv {
			if t.Usec < 0 || t.Usec >= 1e6 {
				return Fail(syscall.EINVAL)
			}
			ts[i] = unix.Timespec{Sec: t.Sec, Nsec: t.Usec * 1000}
		}
	}
	return k.utimesAt(c, dirfd, ts)
}

// utimesAt runs utimensat(dirfd, c.Path, ts, 0) for c.
func (k *Kernel) utimesAt(c *Call, dirfd int, ts *[2]unix.Timespec) Result {
	u := Call{Nr: SYS_UTIMENSAT, Task: c.Task, Path: c.Path}
	u.Args[0] = int64(dirfd)
	if c.Path == "" && c.Args[1] == PathNull && c.Nr == SYS_FUTIMESAT {
		u.Args[1] = PathNull
	}
	if ts != nil {
		u.Obj = ts
	}
	return k.sysUtimensat(&u)
}

package interposer

import (
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

// Helpers that read a Call's arguments by syscall. Args follow the C prototype with
// path and buffer slots left zero (see sim.Call).

// openFlagsIndex returns which Args slot holds the open flags of an open-family call.
func openFlagsIndex(nr sim.Sysno) (int, bool) {
	for i, a := range sim.Info(nr).Args {
		if a.Flags == sim.OpenFlags {
			return i, true // open(path, flags, mode), openat(dirfd, path, flags, mode)
		}
	}
	return 0, false
}

// openFlags returns the open flags of an open-family call (creat is O_CREAT|O_WRONLY|O_TRUNC,
// openat2's are in its open_how).
func openFlags(c *sim.Call) int {
	switch c.Nr {
	case sim.SYS_OPEN:
		return int(c.Args[1])
	case sim.SYS_OPENAT:
		return int(c.Args[2])
	case sim.SYS_CREAT:
		return unix.O_CREAT | unix.O_WRONLY | unix.O_TRUNC
	case sim.SYS_OPENAT2:
		if how, _ := c.Obj.(*unix.OpenHow); how != nil {
			return int(how.Flags)
		}
	}
	return 0
}

// openDirfd returns the directory fd an open resolves a relative path against.
func openDirfd(c *sim.Call) int {
	if c.Nr == sim.SYS_OPENAT || c.Nr == sim.SYS_OPENAT2 {
		return int(int32(c.Args[0]))
	}
	return unix.AT_FDCWD
}

// fdArg reports the fd a call operates on: its first ArgFd slot in the syscall
// table (mmap's fd for a file mapping).
func fdArg(c *sim.Call) (int, bool) {
	i := sim.Info(c.Nr).Slot(sim.ArgFd, 0)
	if i < 0 || anonMap(c) {
		return 0, false
	}
	return int(int32(c.Args[i])), true
}

// anonMap reports an anonymous mmap, whose fd argument is ignored.
func anonMap(c *sim.Call) bool {
	return c.Nr == sim.SYS_MMAP && c.Args[3]&unix.MAP_ANONYMOUS != 0
}

// dirfdPath returns the path that the dirfd in slot i of c's row resolves: the
// path of the next slot.
func dirfdPath(c *sim.Call, in *sim.SyscallInfo, i int) string {
	if i+1 < len(in.Args) && in.Args[i+1].Kind == sim.ArgPath2 {
		return c.Path2
	}
	return c.Path
}

// ioBytes returns how many bytes a successful data call moved.
func ioBytes(c *sim.Call, r sim.Result) int64 {
	if r.Errno != 0 || r.Ret <= 0 || sim.Info(c.Nr).Props&sim.Data == 0 {
		return 0
	}
	return r.Ret
}

// callFstat asks h to fstat fd.
func callFstat(h sim.Handler, t *sim.Task, fd int) (unix.Stat_t, sim.Result) {
	var st unix.Stat_t
	r := sim.Send(h, sim.Call{Nr: sim.SYS_FSTAT, Task: t, Args: [6]int64{int64(fd)}, Obj: &st})
	return st, r
}

// callStat asks h to stat path (following symlinks) relative to the cwd.
func callStat(h sim.Handler, t *sim.Task, path string) (unix.Stat_t, sim.Result) {
	var st unix.Stat_t
	r := sim.Send(h, sim.Call{Nr: sim.SYS_NEWFSTATAT, Task: t, Args: [6]int64{unix.AT_FDCWD}, Path: path, Obj: &st})
	return st, r
}

// oLargefile is O_LARGEFILE as the kernel sees it on x86-64 (x/sys/unix defines it
// as 0 on amd64, where the C library adds nothing; the kernel reports 0x8000 in
// F_GETFL and strace prints it).
const oLargefile = 0x8000

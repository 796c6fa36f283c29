//go:build linux

package sim_test

import (
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"iosim/sim"
)

// sysNS is the namespace part of the syscall surface that TestErrorPathsNS drives
// beyond sys: the *at calls, with the names and signatures of golang.org/x/sys/unix
// (Futimens excepted: x/sys/unix has none on linux; it is the model's futimens(3),
// utimensat(fd, NULL, ts, 0)).
type sysNS interface {
	Linkat(olddirfd int, oldpath string, newdirfd int, newpath string, flags int) error
	Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error
	Unlinkat(dirfd int, path string, flags int) error
	Mkdirat(dirfd int, path string, mode uint32) error
	Symlinkat(oldpath string, newdirfd int, newpath string) error
	Readlinkat(dirfd int, path string, buf []byte) (int, error)
	Fstatat(dirfd int, path string, stat *unix.Stat_t, flags int) error
	Statx(dirfd int, path string, flags int, mask int, stat *unix.Statx_t) error
	Faccessat(dirfd int, path string, mode uint32, flags int) error
	Faccessat2(dirfd int, path string, mode uint32, flags int) error
	Fchmodat(dirfd int, path string, mode uint32, flags int) error
	Fchmod(fd int, mode uint32) error
	UtimesNanoAt(dirfd int, path string, ts []unix.Timespec, flags int) error
	Futimens(fd int, ts []unix.Timespec) error
}

var (
	_ sysNS = (*sim.Process)(nil)
	_ sysNS = (*osKernel)(nil)

	// The interface's signatures are x/sys/unix's (and so, by the assertion
	// above, the facade's).
	_ = [...]any{
		(func(int, string, int, string, int) error)(unix.Linkat),
		(func(int, string, int, string, uint) error)(unix.Renameat2),
		(func(int, string, int) error)(unix.Unlinkat),
		(func(int, string, uint32) error)(unix.Mkdirat),
		(func(string, int, string) error)(unix.Symlinkat),
		(func(int, string, []byte) (int, error))(unix.Readlinkat),
		(func(int, string, *unix.Stat_t, int) error)(unix.Fstatat),
		(func(int, string, int, int, *unix.Statx_t) error)(unix.Statx),
		(func(int, string, uint32, int) error)(unix.Faccessat),
		(func(int, string, uint32, int) error)(unix.Faccessat2),
		(func(int, string, uint32, int) error)(unix.Fchmodat),
		(func(int, uint32) error)(unix.Fchmod),
		(func(int, string, []unix.Timespec, int) error)(unix.UtimesNanoAt),
	}
)

// The *at calls on the real kernel; (dirfd, path) pairs are mapped by k.at (see
// the top of oskernel_linux_test.go).

func (k *osKernel) Linkat(olddirfd int, oldpath string, newdirfd int, newpath string, flags int) error {
	d1, p1 := k.at(olddirfd, oldpath)
	d2, p2 := k.at(newdirfd, newpath)
	return unix.Linkat(d1, p1, d2, p2, flags)
}

func (k *osKernel) Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error {
	d1, p1 := k.at(olddirfd, oldpath)
	d2, p2 := k.at(newdirfd, newpath)
	return unix.Renameat2(d1, p1, d2, p2, flags)
}

func (k *osKernel) Unlinkat(dirfd int, path string, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Unlinkat(d, p, flags)
}

func (k *osKernel) Mkdirat(dirfd int, path string, mode uint32) error {
	d, p := k.at(dirfd, path)
	return unix.Mkdirat(d, p, mode)
}

// Symlinkat passes the target (oldpath) unchanged: the tests use relative targets.
func (k *osKernel) Symlinkat(oldpath string, newdirfd int, newpath string) error {
	d, p := k.at(newdirfd, newpath)
	return unix.Symlinkat(oldpath, d, p)
}

func (k *osKernel) Readlinkat(dirfd int, path string, buf []byte) (int, error) {
	d, p := k.at(dirfd, path)
	return unix.Readlinkat(d, p, buf)
}

func (k *osKernel) Fstatat(dirfd int, path string, st *unix.Stat_t, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Fstatat(d, p, st, flags)
}

func (k *osKernel) Statx(dirfd int, path string, flags int, mask int, st *unix.Statx_t) error {
	d, p := k.at(dirfd, path)
	return unix.Statx(d, p, flags, mask, st)
}

func (k *osKernel) Faccessat(dirfd int, path string, mode uint32, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Faccessat(d, p, mode, flags)
}

func (k *osKernel) Faccessat2(dirfd int, path string, mode uint32, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Faccessat2(d, p, mode, flags)
}

func (k *osKernel) Fchmodat(dirfd int, path string, mode uint32, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.Fchmodat(d, p, mode, flags)
}

func (k *osKernel) Fchmod(fd int, mode uint32) error { return unix.Fchmod(k.fd(fd), mode) }

func (k *osKernel) UtimesNanoAt(dirfd int, path string, ts []unix.Timespec, flags int) error {
	d, p := k.at(dirfd, path)
	return unix.UtimesNanoAt(d, p, ts, flags)
}

// Futimens is utimensat(fd, NULL, ts, 0), as the model's.
func (k *osKernel) Futimens(fd int, ts []unix.Timespec) error {
	var tp unsafe.Pointer
	if ts != nil {
		if len(ts) != 2 {
			return unix.EINVAL
		}
		tp = unsafe.Pointer(&ts[0])
	}
	_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(k.fd(fd)), 0, uintptr(tp), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

// ns is the namespace surface of the side a row runs on.
func (e errEnv) ns() sysNS { return e.s.(sysNS) }

// TestErrorPathsNS is TestErrorPaths for the namespace *at calls: each row runs on
// the real kernel and on the model from setupErrpaths, and both must give the
// row's answer. Paths are chosen so that they translate (see the top of
// oskernel_linux_test.go): relative symlink targets, no ".." above "/", and length
// limits tested with relative paths or with margins wider than the leading slash
// the kernel side drops.
func TestErrorPathsNS(t *testing.T) {
	h := newHost(t)
	long := strings.Repeat("a", 256)             // one component over NAME_MAX
	longPath := "/" + strings.Repeat("a/", 2500) // over PATH_MAX
	longTarget := strings.Repeat("t/", 2048)     // 4096 bytes: over PATH_MAX
	cl, neg := fdClosed, -1                      // a never-opened fd (offset) and a negative one
	const fdcwd, nofollow = unix.AT_FDCWD, unix.AT_SYMLINK_NOFOLLOW
	const empty, follow = unix.AT_EMPTY_PATH, unix.AT_SYMLINK_FOLLOW
	const noreplace, exchange, whiteout = unix.RENAME_NOREPLACE, unix.RENAME_EXCHANGE, unix.RENAME_WHITEOUT
	const removedir = unix.AT_REMOVEDIR
	e0 := func(err error) (int64, error) { return 0, err }
	// fd maps a row's dirfd: AT_FDCWD and neg stay, the fd* offsets become fds.
	fd := func(e errEnv, i int) int {
		if i < 0 {
			return i
		}
		return e.fd(i)
	}
	unlinkat := func(dirfd int, path string, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Unlinkat(fd(e, dirfd), path, flags)) }
	}
	rename := func(od int, op string, nd int, np string, flags uint) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Renameat2(fd(e, od), op, fd(e, nd), np, flags)) }
	}
	link := func(od int, op string, nd int, np string, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Linkat(fd(e, od), op, fd(e, nd), np, flags)) }
	}
	symlink := func(target string, dirfd int, path string) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Symlinkat(target, fd(e, dirfd), path)) }
	}
	mkdir := func(dirfd int, path string) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Mkdirat(fd(e, dirfd), path, 0o755)) }
	}
	readlink := func(dirfd int, path string, n int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) {
			r, err := e.ns().Readlinkat(fd(e, dirfd), path, make([]byte, n))
			return int64(r), err
		}
	}
	// stat returns the st_size of fstatat; statMode the st_mode, statNlink st_nlink.
	stat := func(dirfd int, path string, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) {
			var st unix.Stat_t
			err := e.ns().Fstatat(fd(e, dirfd), path, &st, flags)
			return st.Size, err
		}
	}
	statMode := func(e errEnv, path string, flags int) (int64, error) {
		var st unix.Stat_t
		err := e.ns().Fstatat(fdcwd, path, &st, flags)
		return int64(st.Mode), err
	}
	statNlink := func(e errEnv, path string) (int64, error) {
		var st unix.Stat_t
		err := e.ns().Fstatat(fdcwd, path, &st, nofollow)
		return int64(st.Nlink), err
	}
	// statx packs what the rows compare: mode<<32 | nlink<<24 | size.
	statx := func(dirfd int, path string, flags, mask int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) {
			var sx unix.Statx_t
			err := e.ns().Statx(fd(e, dirfd), path, flags, mask, &sx)
			return int64(sx.Mode)<<32 | int64(sx.Nlink)<<24 | int64(sx.Size), err
		}
	}
	access := func(dirfd int, path string, mode uint32, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Faccessat(fd(e, dirfd), path, mode, flags)) }
	}
	chmodat := func(dirfd int, path string, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Fchmodat(fd(e, dirfd), path, 0o600, flags)) }
	}
	now := []unix.Timespec{{Sec: 1, Nsec: 0}, {Sec: 2, Nsec: 0}}
	badNsec := []unix.Timespec{{Sec: 1, Nsec: 1e9}, {Sec: 2, Nsec: 0}}
	omit := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
	utimes := func(dirfd int, path string, ts []unix.Timespec, flags int) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().UtimesNanoAt(fd(e, dirfd), path, ts, flags)) }
	}
	futimens := func(f int, ts []unix.Timespec) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) { return e0(e.ns().Futimens(fd(e, f), ts)) }
	}
	// then runs do and, when it succeeds, returns what check answers.
	then := func(do func(errEnv) (int64, error), check func(errEnv) (int64, error)) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) {
			if r, err := do(e); err != nil {
				return r, err
			}
			return check(e)
		}
	}
	const sIFLNK, sIFREG = unix.S_IFLNK, unix.S_IFREG
	// eAfterDo opens /e, runs op and answers check of the fd; eAfter's check
	// answers st_nlink*1e4 + st_size.
	eAfterDo := func(op func(errEnv) (int64, error), check func(e errEnv, fd int) (int64, error)) func(errEnv) (int64, error) {
		return func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/e", unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				return 0, err
			}
			if r, err := op(e); err != nil {
				return r, err
			}
			return check(e, fd)
		}
	}
	eAfter := func(op func(errEnv) (int64, error)) func(errEnv) (int64, error) {
		return eAfterDo(op, func(e errEnv, fd int) (int64, error) {
			var st unix.Stat_t
			err := e.s.Fstat(fd, &st)
			return int64(st.Nlink)*1e4 + st.Size, err
		})
	}
	seekData := func(e errEnv, fd int) (int64, error) { return e.s.Seek(fd, 0, unix.SEEK_DATA) }
	// rmD empties and removes /d (fdDir stays open on it).
	rmD := then(unlinkat(fdcwd, "/d/sub/x", 0), then(unlinkat(fdcwd, "/d/sub", removedir), unlinkat(fdcwd, "/d", removedir)))

	rows := []errRow{
		// unlinkat: do_rmdir / do_unlinkat
		{name: "unlinkat/bad flags", want: unix.EINVAL, do: unlinkat(fdcwd, "/f", 0x1)},
		{name: "unlinkat/bad flags before dirfd", want: unix.EINVAL, do: unlinkat(cl, "x", 0x1)},
		{name: "unlinkat/closed dirfd", want: unix.EBADF, do: unlinkat(cl, "x", 0)},
		{name: "unlinkat/negative dirfd", want: unix.EBADF, do: unlinkat(neg, "x", 0)},
		{name: "unlinkat/closed dirfd absolute path", ret: 0, do: unlinkat(cl, "/f", 0)},
		{name: "unlinkat/file dirfd", want: unix.ENOTDIR, do: unlinkat(fdRW, "x", 0)},
		{name: "unlinkat/empty path before dirfd", want: unix.ENOENT, do: unlinkat(cl, "", 0)},
		{name: "unlinkat/relative to dirfd", ret: 0, do: unlinkat(fdDir, "sub/x", 0)},
		{name: "unlinkat/dir without AT_REMOVEDIR", want: unix.EISDIR, do: unlinkat(fdcwd, "/e", 0)},
		{name: "unlinkat/dot", want: unix.EISDIR, do: unlinkat(fdDir, ".", 0)},
		{name: "unlinkat/AT_REMOVEDIR file", want: unix.ENOTDIR, do: unlinkat(fdcwd, "/f", removedir)},
		{name: "unlinkat/AT_REMOVEDIR not empty", want: unix.ENOTEMPTY, do: unlinkat(fdcwd, "/d", removedir)},
		{name: "unlinkat/AT_REMOVEDIR dot", want: unix.EINVAL, do: unlinkat(fdDir, ".", removedir)},
		{name: "unlinkat/AT_REMOVEDIR dotdot", want: unix.ENOTEMPTY, do: unlinkat(fdDir, "sub/..", removedir)},
		{name: "unlinkat/AT_REMOVEDIR trailing slash", ret: 0, do: unlinkat(fdcwd, "/e/", removedir)},
		{name: "unlinkat/trailing slash file", want: unix.ENOTDIR, do: unlinkat(fdcwd, "/f/", 0)},
		{name: "unlinkat/file as component", want: unix.ENOTDIR, do: unlinkat(fdcwd, "/f/x", 0)},
		{name: "unlinkat/symlink loop component", want: unix.ELOOP, do: unlinkat(fdcwd, "/loop1/x", 0)},
		{name: "unlinkat/name too long", want: unix.ENAMETOOLONG, do: unlinkat(fdcwd, "/"+long, 0)},
		// The parent is looked up before the last component's length matters.
		{name: "unlinkat/name too long missing parent", want: unix.ENOENT, do: unlinkat(fdcwd, "/nx/"+long, 0)},
		{name: "unlinkat/path too long", want: unix.ENAMETOOLONG, do: unlinkat(fdcwd, longPath, 0)},

		// renameat2: do_renameat2
		{name: "renameat2/unknown flag", want: unix.EINVAL, do: rename(fdcwd, "/f", fdcwd, "/g", 1<<3)},
		{name: "renameat2/NOREPLACE|EXCHANGE", want: unix.EINVAL, do: rename(fdcwd, "/f", fdcwd, "/lf", noreplace|exchange)},
		{name: "renameat2/NOREPLACE|EXCHANGE before dirfd", want: unix.EINVAL, do: rename(cl, "f", cl, "g", noreplace|exchange)},
		// ext4 makes the whiteout (a 0/0 character device; root has CAP_MKNOD).
		{name: "renameat2/WHITEOUT", ret: 0, do: rename(fdcwd, "/f", fdcwd, "/g", whiteout),
			modelBug: "RENAME_WHITEOUT is not modelled (sysno.go: Partial)", modelGot: unix.EINVAL},
		{name: "renameat2/WHITEOUT|EXCHANGE", want: unix.EINVAL, do: rename(fdcwd, "/f", fdcwd, "/lf", whiteout|exchange)},
		{name: "renameat2/EXCHANGE missing target", want: unix.ENOENT, do: rename(fdcwd, "/f", fdcwd, "/nx", exchange)},
		{name: "renameat2/NOREPLACE existing", want: unix.EEXIST, do: rename(fdcwd, "/f", fdcwd, "/lf", noreplace)},
		{name: "renameat2/closed old dirfd", want: unix.EBADF, do: rename(cl, "f", fdcwd, "/g", 0)},
		{name: "renameat2/negative new dirfd", want: unix.EBADF, do: rename(fdcwd, "/f", neg, "g", 0)},
		{name: "renameat2/closed dirfds absolute paths", ret: 0, do: rename(cl, "/f", cl, "/g", 0)},
		{name: "renameat2/file dirfd", want: unix.ENOTDIR, do: rename(fdRW, "x", fdcwd, "/g", 0)},
		{name: "renameat2/dir into itself", want: unix.EINVAL, do: rename(fdcwd, "/d", fdDir, "sub/y", 0)},
		{name: "renameat2/dir onto its ancestor", want: unix.ENOTEMPTY, do: rename(fdDir, "sub", fdcwd, "/d", 0)},
		{name: "renameat2/EXCHANGE with ancestor", want: unix.EINVAL, do: rename(fdDir, "sub", fdcwd, "/d", exchange)},
		{name: "renameat2/dot", want: unix.EBUSY, do: rename(fdDir, ".", fdcwd, "/g", 0)},
		{name: "renameat2/onto dot", want: unix.EBUSY, do: rename(fdcwd, "/f", fdDir, ".", 0)},
		// A target that is not a normal name is EEXIST with RENAME_NOREPLACE.
		{name: "renameat2/NOREPLACE onto dot", want: unix.EEXIST, do: rename(fdcwd, "/f", fdDir, ".", noreplace)},
		{name: "renameat2/trailing slash file", want: unix.ENOTDIR, do: rename(fdcwd, "/f/", fdcwd, "/g", 0)},
		{name: "renameat2/trailing slash target", want: unix.ENOTDIR, do: rename(fdcwd, "/f", fdcwd, "/g/", 0)},
		{name: "renameat2/trailing slash dir", ret: 0, do: rename(fdcwd, "/e/", fdcwd, "/g/", 0)},
		// NOREPLACE and EXCHANGE's missing target are decided before the trailing
		// slashes; an exchange's target may have one when it is a directory.
		{name: "renameat2/NOREPLACE trailing slash file", want: unix.EEXIST, do: rename(fdcwd, "/f/", fdcwd, "/lf", noreplace)},
		{name: "renameat2/EXCHANGE trailing slash missing", want: unix.ENOENT, do: rename(fdcwd, "/f/", fdcwd, "/nx", exchange)},
		{name: "renameat2/EXCHANGE file with dir/", ret: 0, do: rename(fdcwd, "/f", fdcwd, "/e/", exchange)},
		{name: "renameat2/EXCHANGE dir with file/", want: unix.ENOTDIR, do: rename(fdcwd, "/e", fdcwd, "/f/", exchange)},
		{name: "renameat2/dir over file", want: unix.ENOTDIR, do: rename(fdcwd, "/e", fdcwd, "/f", 0)},
		{name: "renameat2/dir over non-empty dir", want: unix.ENOTEMPTY, do: rename(fdcwd, "/e", fdcwd, "/d", 0)},
		{name: "renameat2/onto itself", ret: 0, do: rename(fdcwd, "/f", fdRO, "/f", 0)},
		// Both parents are looked up before the source.
		{name: "renameat2/missing source target parent a file", want: unix.ENOTDIR, do: rename(fdcwd, "/nx", fdcwd, "/f/g", 0)},
		// getname's ENOENT for the empty new path waits for the old path's lookup.
		{name: "renameat2/bad old path empty new path", want: unix.ENOTDIR, do: rename(fdcwd, "/f/x", fdcwd, "", 0)},
		{name: "renameat2/bad old path closed new dirfd", want: unix.ENOTDIR, do: rename(fdcwd, "/f/x", cl, "g", 0)},
		{name: "renameat2/long name onto dot", want: unix.EBUSY, do: rename(fdcwd, "/"+long, fdDir, ".", 0)},
		{name: "renameat2/name too long", want: unix.ENAMETOOLONG, do: rename(fdcwd, "/"+long, fdcwd, "/g", 0)},

		// linkat: do_linkat, filename_create, vfs_link
		{name: "linkat/AT_SYMLINK_NOFOLLOW", want: unix.EINVAL, do: link(fdcwd, "/f", fdcwd, "/g", nofollow)},
		{name: "linkat/bad flags before dirfd", want: unix.EINVAL, do: link(cl, "f", cl, "g", 0x1)},
		{name: "linkat/closed old dirfd", want: unix.EBADF, do: link(cl, "f", fdcwd, "/g", 0)},
		{name: "linkat/file new dirfd", want: unix.ENOTDIR, do: link(fdcwd, "/f", fdRW, "g", 0)},
		{name: "linkat/dir", want: unix.EPERM, do: link(fdcwd, "/d", fdcwd, "/g", 0)},
		{name: "linkat/existing", want: unix.EEXIST, do: link(fdcwd, "/f", fdcwd, "/lf", 0)},
		{name: "linkat/dir onto existing", want: unix.EEXIST, do: link(fdcwd, "/d", fdcwd, "/f", 0)},
		{name: "linkat/onto dot", want: unix.EEXIST, do: link(fdcwd, "/f", fdDir, ".", 0)},
		{name: "linkat/trailing slash new", want: unix.ENOENT, do: link(fdcwd, "/f", fdcwd, "/g/", 0)},
		// filename_create refuses the new name before vfs_link refuses a directory.
		{name: "linkat/dir trailing slash new", want: unix.ENOENT, do: link(fdcwd, "/d", fdcwd, "/g/", 0)},
		{name: "linkat/symlink itself", ret: 2, do: then(link(fdcwd, "/dang", fdcwd, "/g", 0),
			func(e errEnv) (int64, error) { return statNlink(e, "/dang") })},
		{name: "linkat/AT_SYMLINK_FOLLOW loop", want: unix.ELOOP, do: link(fdcwd, "/loop1", fdcwd, "/g", follow)},
		{name: "linkat/AT_SYMLINK_FOLLOW nlink", ret: 2, do: then(link(fdcwd, "/lf", fdDir, "g", follow),
			func(e errEnv) (int64, error) { return statNlink(e, "/f") })},
		{name: "linkat/empty path", want: unix.ENOENT, do: link(fdRW, "", fdcwd, "/g", 0)},
		// The tests run as root: CAP_DAC_READ_SEARCH lets AT_EMPTY_PATH link any fd.
		{name: "linkat/AT_EMPTY_PATH fd", ret: 2, do: then(link(fdRO, "", fdcwd, "/g", empty),
			func(e errEnv) (int64, error) { return statNlink(e, "/f") })},
		{name: "linkat/AT_EMPTY_PATH O_PATH fd", ret: 2, do: then(link(fdPath, "", fdcwd, "/g", empty),
			func(e errEnv) (int64, error) { return statNlink(e, "/g") })},
		{name: "linkat/AT_EMPTY_PATH dir fd", want: unix.EPERM, do: link(fdDir, "", fdcwd, "/g", empty)},
		{name: "linkat/AT_EMPTY_PATH closed fd", want: unix.EBADF, do: link(cl, "", fdcwd, "/g", empty)},
		{name: "linkat/AT_EMPTY_PATH unlinked file", want: unix.ENOENT, do: then(unlinkat(fdcwd, "/empty", 0),
			link(fdEmpty, "", fdcwd, "/g", empty))},
		{name: "linkat/bad old path empty new path", want: unix.ENOTDIR, do: link(fdcwd, "/f/x", fdcwd, "", 0)},

		// symlinkat: do_symlinkat
		{name: "symlinkat/empty target before dirfd", want: unix.ENOENT, do: symlink("", cl, "g")},
		{name: "symlinkat/target too long before dirfd", want: unix.ENAMETOOLONG, do: symlink(longTarget, cl, "g")},
		{name: "symlinkat/closed dirfd", want: unix.EBADF, do: symlink("f", cl, "g")},
		{name: "symlinkat/file dirfd", want: unix.ENOTDIR, do: symlink("f", fdRW, "g")},
		{name: "symlinkat/existing dangling symlink", want: unix.EEXIST, do: symlink("f", fdcwd, "/dang")},
		{name: "symlinkat/trailing slash", want: unix.ENOENT, do: symlink("f", fdcwd, "/g/")},
		{name: "symlinkat/trailing slash existing", want: unix.EEXIST, do: symlink("f", fdcwd, "/f/")},
		{name: "symlinkat/missing parent", want: unix.ENOENT, do: symlink("f", fdcwd, "/nx/g")},
		{name: "symlinkat/name too long", want: unix.ENAMETOOLONG, do: symlink("f", fdcwd, "/"+long)},
		{name: "symlinkat/name too long missing parent", want: unix.ENOENT, do: symlink("f", fdcwd, "/nx/"+long)},
		{name: "symlinkat/relative to dirfd", ret: 4, do: then(symlink("../f", fdDir, "g"), readlink(fdcwd, "/d/g", 10))},

		// readlinkat: do_readlinkat
		{name: "readlinkat/not a symlink", want: unix.EINVAL, do: readlink(fdcwd, "/f", 10)},
		{name: "readlinkat/bufsiz 0", want: unix.EINVAL, do: readlink(fdcwd, "/lf", 0)},
		{name: "readlinkat/bufsiz 0 before path", want: unix.EINVAL, do: readlink(cl, "nx", 0)},
		{name: "readlinkat/truncated", ret: 2, do: readlink(fdcwd, "/loop1", 2)},
		{name: "readlinkat/relative to dirfd", ret: 2, do: readlink(fdDir, "../dang", 10)},
		{name: "readlinkat/trailing slash", want: unix.ENOTDIR, do: readlink(fdcwd, "/lf/", 10)},
		{name: "readlinkat/trailing slash loop", want: unix.ELOOP, do: readlink(fdcwd, "/self/", 10)},
		{name: "readlinkat/file dirfd", want: unix.ENOTDIR, do: readlink(fdRW, "lf", 10)},
		// readlinkat takes an empty path (LOOKUP_EMPTY): the dirfd itself.
		{name: "readlinkat/empty path file fd", want: unix.ENOENT, do: readlink(fdRW, "", 10)},
		{name: "readlinkat/empty path closed fd", want: unix.EBADF, do: readlink(cl, "", 10)},
		{name: "readlinkat/empty path cwd", want: unix.ENOENT, do: readlink(fdcwd, "", 10)},
		// open(O_PATH|O_NOFOLLOW) of a symlink refers to the link itself.
		{name: "readlinkat/empty path O_PATH|O_NOFOLLOW symlink fd", ret: 1, do: func(e errEnv) (int64, error) {
			lfd, err := e.s.Open("/lf", unix.O_PATH|unix.O_NOFOLLOW, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.ns().Readlinkat(lfd, "", make([]byte, 10))
			return int64(r), err
		}},
		{name: "open/O_PATH|O_NOFOLLOW symlink is S_IFLNK", ret: unix.S_IFLNK | 0o777, do: func(e errEnv) (int64, error) {
			lfd, err := e.s.Open("/loop1", unix.O_PATH|unix.O_NOFOLLOW, 0)
			if err != nil {
				return 0, err
			}
			var st unix.Stat_t
			err = e.s.Fstat(lfd, &st)
			return int64(st.Mode), err
		}},
		{name: "open/O_PATH|O_NOFOLLOW|O_DIRECTORY symlink", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			r, err := e.s.Open("/lf", unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY, 0)
			return int64(r), err
		}},
		{name: "open/O_NOFOLLOW symlink without O_PATH", want: unix.ELOOP, do: func(e errEnv) (int64, error) {
			r, err := e.s.Open("/lf", unix.O_RDONLY|unix.O_NOFOLLOW, 0)
			return int64(r), err
		}},
		{name: "openat/O_PATH|O_NOFOLLOW symlink fd as dirfd", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			lfd, err := e.s.Open("/self", unix.O_PATH|unix.O_NOFOLLOW, 0)
			if err != nil {
				return 0, err
			}
			r, err := e.s.Openat(lfd, "x", unix.O_RDONLY, 0)
			return int64(r), err
		}},
		{name: "linkat/AT_EMPTY_PATH of an O_PATH|O_NOFOLLOW symlink fd", ret: 0, do: func(e errEnv) (int64, error) {
			lfd, err := e.s.Open("/lf", unix.O_PATH|unix.O_NOFOLLOW, 0)
			if err != nil {
				return 0, err
			}
			if err := e.ns().Linkat(lfd, "", fdcwd, "/lf2", empty); err != nil {
				return 0, err
			}
			r, err := e.ns().Readlinkat(fdcwd, "/lf2", make([]byte, 10))
			return int64(r) - 1, err
		}},

		// mkdirat: do_mkdirat
		{name: "mkdirat/existing dangling symlink", want: unix.EEXIST, do: mkdir(fdcwd, "/dang")},
		{name: "mkdirat/trailing slash", ret: 0, do: mkdir(fdcwd, "/g/")},
		{name: "mkdirat/dot", want: unix.EEXIST, do: mkdir(fdDir, ".")},
		{name: "mkdirat/closed dirfd", want: unix.EBADF, do: mkdir(cl, "g")},
		{name: "mkdirat/negative dirfd absolute path", ret: 0, do: mkdir(neg, "/g")},
		{name: "mkdirat/O_PATH file dirfd", want: unix.ENOTDIR, do: mkdir(fdPath, "g")},
		{name: "mkdirat/file as component", want: unix.ENOTDIR, do: mkdir(fdcwd, "/f/g")},
		{name: "mkdirat/name too long missing parent", want: unix.ENOENT, do: mkdir(fdcwd, "/nx/"+long)},
		{name: "mkdirat/name too long", want: unix.ENAMETOOLONG, do: mkdir(fdDir, long)},
		// A removed directory, still open as fdDir, gets no new names:
		// lookup_one_qstr_excl refuses (IS_DEADDIR) with ENOENT before the file
		// system's lookup (found by TestKernelDiff).
		{name: "linkat/into a removed directory", want: unix.ENOENT, do: then(rmD, link(fdcwd, "/f", fdDir, "g", 0))},
		{name: "linkat/into a removed directory, long name", want: unix.ENOENT, do: then(rmD, link(fdcwd, "/f", fdDir, long, 0))},
		{name: "symlinkat/in a removed directory", want: unix.ENOENT, do: then(rmD, symlink("f", fdDir, "g"))},
		{name: "renameat2/into a removed directory", want: unix.ENOENT, do: then(rmD, rename(fdcwd, "/f", fdDir, "g", 0))},
		{name: "renameat2/RENAME_NOREPLACE into a removed directory", want: unix.ENOENT, do: then(rmD, rename(fdcwd, "/f", fdDir, "g", noreplace))},
		{name: "renameat2/into a removed directory, long name", want: unix.ENOENT, do: then(rmD, rename(fdcwd, "/f", fdDir, long, 0))},
		{name: "mkdirat/in a removed directory", want: unix.ENOENT, do: then(rmD, mkdir(fdDir, "g"))},
		{name: "mkdirat/in a removed directory, long name", want: unix.ENOENT, do: then(rmD, mkdir(fdDir, long))},
		// A directory replaced by a rename keeps its size (ext4_rename only
		// clears its nlink); one removed by rmdir has size 0 (ext4_rmdir). The
		// rows answer st_nlink*1e4 + st_size of an fd opened on /e before (found
		// by TestKernelDiff).
		{name: "renameat2/replaced directory keeps its size", ret: 4096, do: eAfter(rename(fdcwd, "/d", fdcwd, "/e", 0))},
		{name: "renameat2/directory moved by an exchange", ret: 2e4 + 4096, do: eAfter(rename(fdcwd, "/d", fdcwd, "/e", exchange))},
		{name: "unlinkat/AT_REMOVEDIR removed directory size", ret: 0, do: eAfter(unlinkat(fdcwd, "/e", removedir))},
		// So the replaced directory is still an htree directory for
		// ext4_dir_llseek (is_dx_dir looks at i_size), the removed one an empty
		// file for ext4_llseek.
		{name: "renameat2/replaced directory SEEK_DATA", ret: 0, do: eAfterDo(rename(fdcwd, "/d", fdcwd, "/e", 0), seekData)},
		{name: "unlinkat/AT_REMOVEDIR removed directory SEEK_DATA", want: unix.ENXIO, do: eAfterDo(unlinkat(fdcwd, "/e", removedir), seekData)},
		// vfs_mkdir keeps only S_IRWXUGO|S_ISVTX of the mode; inode_init_owner
		// makes a directory created in a set-group-ID directory set-group-ID (both
		// found by TestKernelDiff).
		{name: "mkdirat/set-ID bits dropped", ret: unix.S_IFDIR | 0o1755, do: then(
			func(e errEnv) (int64, error) { return e0(e.ns().Mkdirat(fdcwd, "/g", 0o7777)) },
			func(e errEnv) (int64, error) { return statMode(e, "/g", 0) })},
		{name: "mkdirat/in a set-group-ID directory", ret: unix.S_IFDIR | 0o2755, do: then(
			then(func(e errEnv) (int64, error) { return e0(e.ns().Fchmodat(fdcwd, "/e", 0o2755, 0)) }, mkdir(fdcwd, "/e/g")),
			func(e errEnv) (int64, error) { return statMode(e, "/e/g", 0) })},
		{name: "mkdirat/set-group-ID parent, file not set-group-ID", ret: unix.S_IFREG | 0o644, do: then(
			func(e errEnv) (int64, error) { return e0(e.ns().Fchmodat(fdcwd, "/e", 0o2755, 0)) },
			func(e errEnv) (int64, error) {
				fd, err := e.s.Creat("/e/x", 0o644)
				if err != nil {
					return 0, err
				}
				e.s.Close(fd)
				return statMode(e, "/e/x", 0)
			})},

		// newfstatat: vfs_fstatat / vfs_statx
		{name: "fstatat/bad flags", want: unix.EINVAL, do: stat(fdcwd, "/f", 0x1)},
		{name: "fstatat/AT_STATX_FORCE_SYNC", ret: 5000, do: stat(fdcwd, "/f", unix.AT_STATX_FORCE_SYNC)},
		{name: "fstatat/AT_EMPTY_PATH fd", ret: 5000, do: stat(fdWO, "", empty)},
		{name: "fstatat/AT_EMPTY_PATH O_PATH fd", ret: 5000, do: stat(fdPath, "", empty)},
		{name: "fstatat/AT_EMPTY_PATH closed fd", want: unix.EBADF, do: stat(cl, "", empty)},
		{name: "fstatat/AT_EMPTY_PATH negative fd", want: unix.EBADF, do: stat(neg, "", empty)},
		// vfs_fstatat: an empty path with AT_EMPTY_PATH and a dirfd >= 0 is fstat,
		// before (and without) the flags check of vfs_statx.
		{name: "fstatat/AT_EMPTY_PATH bad flags fd", ret: 5000, do: stat(fdRW, "", empty|0x1)},
		{name: "fstatat/AT_EMPTY_PATH bad flags closed fd", want: unix.EBADF, do: stat(cl, "", empty|0x1)},
		{name: "fstatat/AT_EMPTY_PATH bad flags negative fd", want: unix.EINVAL, do: stat(neg, "", empty|0x1)},
		{name: "fstatat/both sync types", ret: 5000, do: stat(fdcwd, "/f", unix.AT_STATX_FORCE_SYNC|unix.AT_STATX_DONT_SYNC)},
		{name: "fstatat/empty path", want: unix.ENOENT, do: stat(fdRW, "", 0)},
		{name: "fstatat/empty path closed fd", want: unix.ENOENT, do: stat(cl, "", 0)},
		{name: "fstatat/file dirfd", want: unix.ENOTDIR, do: stat(fdRW, "x", 0)},
		{name: "fstatat/trailing slash file", want: unix.ENOTDIR, do: stat(fdcwd, "/lf/", nofollow)},
		{name: "fstatat/loop", want: unix.ELOOP, do: stat(fdcwd, "/loop1", 0)},
		{name: "fstatat/AT_SYMLINK_NOFOLLOW loop", ret: sIFLNK | 0o777, do: func(e errEnv) (int64, error) { return statMode(e, "/loop1", nofollow) }},

		// statx
		{name: "statx/both sync types", want: unix.EINVAL, do: statx(fdcwd, "/f", unix.AT_STATX_FORCE_SYNC|unix.AT_STATX_DONT_SYNC, unix.STATX_BASIC_STATS)},
		{name: "statx/reserved mask", want: unix.EINVAL, do: statx(fdcwd, "/f", 0, unix.STATX__RESERVED)},
		{name: "statx/reserved mask before path", want: unix.EINVAL, do: statx(cl, "nx", 0, unix.STATX__RESERVED)},
		{name: "statx/bad flags", want: unix.EINVAL, do: statx(fdcwd, "/f", 0x1, unix.STATX_BASIC_STATS)},
		{name: "statx/AT_EMPTY_PATH fd", ret: (sIFREG|0o644)<<32 | 1<<24 | 5000, do: statx(fdRO, "", empty, unix.STATX_BASIC_STATS)},
		{name: "statx/AT_EMPTY_PATH bad flags fd", ret: (sIFREG|0o644)<<32 | 1<<24 | 5000, do: statx(fdRO, "", empty|0x1, unix.STATX_BASIC_STATS)},
		{name: "statx/AT_EMPTY_PATH reserved mask closed fd", want: unix.EINVAL, do: statx(cl, "", empty, unix.STATX__RESERVED)},
		{name: "statx/AT_EMPTY_PATH closed fd", want: unix.EBADF, do: statx(cl, "", empty, unix.STATX_BASIC_STATS)},
		{name: "statx/AT_SYMLINK_NOFOLLOW", ret: (sIFLNK|0o777)<<32 | 1<<24 | 1, do: statx(fdcwd, "/lf", nofollow, unix.STATX_BASIC_STATS)},
		{name: "statx/dir nlink", ret: (unix.S_IFDIR|0o755)<<32 | 3<<24 | 4096, do: statx(fdcwd, "/d", 0, unix.STATX_BASIC_STATS)},

		// faccessat, faccessat2: do_faccessat
		{name: "faccessat/bad mode", want: unix.EINVAL, do: access(fdcwd, "/f", 8, 0)},
		{name: "faccessat/bad mode before dirfd", want: unix.EINVAL, do: access(cl, "f", 8, 0)},
		{name: "faccessat2/bad flags", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			return e0(e.ns().Faccessat2(fdcwd, "/f", unix.R_OK, 0x1))
		}},
		{name: "faccessat/X_OK file without x", want: unix.EACCES, do: access(fdcwd, "/f", unix.X_OK, 0)},
		{name: "faccessat/X_OK dir", ret: 0, do: access(fdDir, "sub", unix.X_OK, 0)},
		{name: "faccessat/AT_SYMLINK_NOFOLLOW dangling", ret: 0, do: access(fdcwd, "/dang", unix.W_OK, nofollow)},
		{name: "faccessat/AT_EMPTY_PATH O_PATH fd", ret: 0, do: access(fdPath, "", unix.R_OK|unix.W_OK, empty)},
		{name: "faccessat/empty path", want: unix.ENOENT, do: access(fdRW, "", unix.F_OK, 0)},

		// fchmodat, fchmodat2, fchmod
		{name: "fchmodat2/bad flags", want: unix.EINVAL, do: chmodat(fdcwd, "/f", 0x1)},
		{name: "fchmodat2/AT_SYMLINK_NOFOLLOW symlink", want: unix.EOPNOTSUPP, do: chmodat(fdcwd, "/lf", nofollow)},
		{name: "fchmodat2/AT_SYMLINK_NOFOLLOW file", ret: sIFREG | 0o600, do: then(chmodat(fdcwd, "/f", nofollow),
			func(e errEnv) (int64, error) { return statMode(e, "/f", 0) })},
		{name: "fchmodat2/AT_EMPTY_PATH O_PATH fd", ret: sIFREG | 0o600, do: then(chmodat(fdPath, "", empty),
			func(e errEnv) (int64, error) { return statMode(e, "/f", 0) })},
		{name: "fchmodat/closed dirfd", want: unix.EBADF, do: chmodat(cl, "f", 0)},
		{name: "fchmod/O_PATH", want: unix.EBADF, do: func(e errEnv) (int64, error) { return e0(e.ns().Fchmod(e.fd(fdPath), 0o600)) }},
		{name: "fchmod/O_RDONLY", ret: sIFREG | 0o4755, do: then(func(e errEnv) (int64, error) { return e0(e.ns().Fchmod(e.fd(fdRO), 0o104755)) },
			func(e errEnv) (int64, error) { return statMode(e, "/f", 0) })},

		// utimensat: do_utimes; the times are checked in vfs_utimes, after the lookup.
		{name: "utimensat/bad flags", want: unix.EINVAL, do: utimes(fdcwd, "/f", now, 0x1)},
		{name: "utimensat/bad nsec", want: unix.EINVAL, do: utimes(fdcwd, "/f", badNsec, 0)},
		{name: "utimensat/bad nsec missing path", want: unix.ENOENT, do: utimes(fdcwd, "/nx", badNsec, 0)},
		{name: "utimensat/both UTIME_OMIT bad flags", ret: 0, do: utimes(cl, "nx", omit, 0x1)},
		{name: "utimensat/AT_SYMLINK_NOFOLLOW dangling", ret: 0, do: utimes(fdcwd, "/dang", now, nofollow)},
		{name: "utimensat/AT_EMPTY_PATH O_PATH fd", ret: 0, do: utimes(fdPath, "", now, empty)},
		{name: "utimensat/empty path", want: unix.ENOENT, do: utimes(fdRW, "", now, 0)},
		{name: "futimens/O_PATH", want: unix.EBADF, do: futimens(fdPath, now)},
		{name: "futimens/closed", want: unix.EBADF, do: futimens(cl, now)},
		{name: "futimens/bad nsec closed", want: unix.EBADF, do: futimens(cl, badNsec)},
		{name: "futimens/O_RDONLY", ret: 0, do: futimens(fdRO, nil)},
	}
	runErrRows(t, h, rows)
}

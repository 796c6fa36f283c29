//go:build linux

package sim_test

import (
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// procLinkat is linkat(AT_FDCWD, "/proc/self/fd/FD", AT_FDCWD, newpath,
// flags) on either side: the kernel's /proc path is not one of the test
// directory's.
func procLinkat(e errEnv, fd int, newpath string, flags int) error {
	old := "/proc/self/fd/" + strconv.Itoa(fd)
	if k, ok := e.s.(*osKernel); ok {
		d, p := k.at(unix.AT_FDCWD, newpath)
		return unix.Linkat(unix.AT_FDCWD, old, d, p, flags)
	}
	return e.ns().Linkat(unix.AT_FDCWD, old, unix.AT_FDCWD, newpath, flags)
}

// TestErrorPathsTmpfile: open(2) with O_TMPFILE and the ways to give the file
// a name, on the real kernel and on the model from setupErrpaths (/d a
// directory, /f a file of 5000 bytes, /lf a link to it). A row's result
// packs what it checks into one number.
func TestErrorPathsTmpfile(t *testing.T) {
	h := newHost(t)
	e0 := func(err error) (int64, error) { return 0, err }
	tmp := func(e errEnv, flags int) (int, error) { return e.s.Open("/d", unix.O_TMPFILE|flags, 0o640) }
	// st packs st_nlink, st_size and the permission bits of path (fd < 0)
	// or fd.
	st := func(e errEnv, fd int, path string) (int64, error) {
		var s unix.Stat_t
		var err error
		if fd >= 0 {
			err = e.s.Fstat(fd, &s)
		} else {
			err = e.s.Stat(path, &s)
		}
		return int64(s.Nlink)<<40 | s.Size<<12 | int64(s.Mode&0o7777), err
	}
	// named makes a tmpfile holding "data" and links it as /d/n with link.
	named := func(e errEnv, flags int, link func(fd int) error) (int64, error) {
		fd, err := tmp(e, flags)
		if err != nil {
			return 0, err
		}
		if _, err := e.s.Write(fd, []byte("data")); err != nil {
			return 0, err
		}
		if err := link(fd); err != nil {
			return 0, err
		}
		return st(e, -1, "/d/n")
	}
	emptyPath := func(e errEnv) func(int) error {
		return func(fd int) error { return e.ns().Linkat(fd, "", unix.AT_FDCWD, "/d/n", unix.AT_EMPTY_PATH) }
	}
	rows := []errRow{
		{name: "open/O_TMPFILE|O_RDWR", ret: 0o640 &^ 0o022, do: func(e errEnv) (int64, error) {
			fd, err := tmp(e, unix.O_RDWR)
			if err != nil {
				return 0, err
			}
			return st(e, fd, "")
		}},
		{name: "open/O_TMPFILE fd", ret: -1, do: func(e errEnv) (int64, error) {
			fd, err := tmp(e, unix.O_WRONLY)
			return int64(fd), err
		}},
		{name: "open/O_TMPFILE umask", ret: 0o640 &^ 0o022, do: func(e errEnv) (int64, error) {
			fd, err := tmp(e, unix.O_RDWR|unix.O_EXCL)
			if err != nil {
				return 0, err
			}
			r, err := st(e, fd, "")
			return r & 0o7777, err
		}},
		{name: "open/O_TMPFILE F_GETFL", ret: -1, do: func(e errEnv) (int64, error) {
			fd, err := tmp(e, unix.O_RDWR)
			if err != nil {
				return 0, err
			}
			fl, err := e.s.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
			return int64(fl), err
		}},
		{name: "open/O_TMPFILE|O_RDONLY", want: unix.EINVAL, do: func(e errEnv) (int64, error) { fd, err := tmp(e, unix.O_RDONLY); return int64(fd), err }},
		{name: "open/O_TMPFILE|O_CREAT", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			fd, err := tmp(e, unix.O_RDWR|unix.O_CREAT)
			return int64(fd), err
		}},
		{name: "open/__O_TMPFILE without O_DIRECTORY", want: unix.EINVAL, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/d", unix.O_TMPFILE&^unix.O_DIRECTORY|unix.O_RDWR, 0o600)
			return int64(fd), err
		}},
		{name: "open/O_TMPFILE of a file", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/f", unix.O_TMPFILE|unix.O_RDWR, 0o600)
			return int64(fd), err
		}},
		{name: "open/O_TMPFILE of a link to a file", want: unix.ENOTDIR, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/lf", unix.O_TMPFILE|unix.O_RDWR, 0o600)
			return int64(fd), err
		}},
		{name: "open/O_TMPFILE of a missing directory", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			fd, err := e.s.Open("/nx", unix.O_TMPFILE|unix.O_RDWR, 0o600)
			return int64(fd), err
		}},
		{name: "open/O_TMPFILE in a removed directory", want: unix.EPERM, do: func(e errEnv) (int64, error) {
			dfd, err := e.s.Open("/e", unix.O_RDONLY|unix.O_DIRECTORY, 0)
			if err != nil {
				return 0, err
			}
			if err := e.s.Rmdir("/e"); err != nil {
				return 0, err
			}
			fd, err := e.s.Openat(dfd, ".", unix.O_TMPFILE|unix.O_RDWR, 0o600)
			return int64(fd), err
		}},
		{name: "linkat/AT_EMPTY_PATH of a tmpfile", ret: 1<<40 | 4<<12 | 0o640&^0o022, do: func(e errEnv) (int64, error) {
			return named(e, unix.O_RDWR, emptyPath(e))
		}},
		{name: "linkat/AT_EMPTY_PATH of an O_EXCL tmpfile", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			return named(e, unix.O_RDWR|unix.O_EXCL, emptyPath(e))
		}},
		{name: "linkat//proc/self/fd/N AT_SYMLINK_FOLLOW", ret: 1<<40 | 4<<12 | 0o640&^0o022, do: func(e errEnv) (int64, error) {
			return named(e, unix.O_WRONLY, func(fd int) error { return procLinkat(e, fd, "/d/n", unix.AT_SYMLINK_FOLLOW) })
		}},
		{name: "linkat//proc/self/fd/N of an O_EXCL tmpfile", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			return named(e, unix.O_WRONLY|unix.O_EXCL, func(fd int) error { return procLinkat(e, fd, "/d/n", unix.AT_SYMLINK_FOLLOW) })
		}},
		{name: "linkat//proc/self/fd/N not followed", want: unix.EXDEV, do: func(e errEnv) (int64, error) {
			return named(e, unix.O_WRONLY, func(fd int) error { return procLinkat(e, fd, "/d/n", 0) })
		}},
		{name: "linkat//proc/self/fd/N of a file", ret: 2<<40 | 5000<<12 | 0o644, do: func(e errEnv) (int64, error) {
			if err := procLinkat(e, e.fd(fdRW), "/d/n", unix.AT_SYMLINK_FOLLOW); err != nil {
				return 0, err
			}
			return st(e, -1, "/d/n")
		}},
		{name: "linkat/a tmpfile twice", ret: 2<<40 | 4<<12 | 0o640&^0o022, do: func(e errEnv) (int64, error) {
			return named(e, unix.O_RDWR, func(fd int) error {
				if err := e.ns().Linkat(fd, "", unix.AT_FDCWD, "/d/m", unix.AT_EMPTY_PATH); err != nil {
					return err
				}
				return e.ns().Linkat(fd, "", unix.AT_FDCWD, "/d/n", unix.AT_EMPTY_PATH)
			})
		}},
		{name: "linkat/a tmpfile linked and unlinked", want: unix.ENOENT, do: func(e errEnv) (int64, error) {
			return named(e, unix.O_RDWR, func(fd int) error {
				if err := e.ns().Linkat(fd, "", unix.AT_FDCWD, "/d/m", unix.AT_EMPTY_PATH); err != nil {
					return err
				}
				if err := e.s.Unlink("/d/m"); err != nil {
					return err
				}
				return e.ns().Linkat(fd, "", unix.AT_FDCWD, "/d/n", unix.AT_EMPTY_PATH)
			})
		}},
		{name: "linkat/a tmpfile onto an existing name", want: unix.EEXIST, do: func(e errEnv) (int64, error) {
			fd, err := tmp(e, unix.O_RDWR)
			if err != nil {
				return 0, err
			}
			return e0(e.ns().Linkat(fd, "", unix.AT_FDCWD, "/f", unix.AT_EMPTY_PATH))
		}},
		{name: "write/read a tmpfile", ret: 4<<12 | 4, do: func(e errEnv) (int64, error) {
			fd, err := tmp(e, unix.O_RDWR)
			if err != nil {
				return 0, err
			}
			if _, err := e.s.Write(fd, []byte("data")); err != nil {
				return 0, err
			}
			b := make([]byte, 8)
			n, err := e.s.Pread(fd, b, 0)
			if err != nil {
				return 0, err
			}
			if string(b[:n]) != "data" {
				return 0, unix.EIO
			}
			r, err := st(e, fd, "")
			return r&^0o7777 | int64(n), err
		}},
	}
	runErrRows(t, h, rows)
}

package bundle

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"
)

// SnapshotStats counts what Snapshot copied.
type SnapshotStats struct {
	Dirs, Files, Symlinks, HardLinks int
	Bytes                            int64 // data bytes copied (holes excluded)
}

// Snapshot copies the directory tree src into dst, which must not exist:
// directories, regular files and symbolic links (their targets as they are),
// with their permission bits (setuid, setgid and sticky too), modification
// times and, when the process may, owners. A regular file's holes stay holes
// where the file system reports them (SEEK_DATA, SEEK_HOLE); names of one
// inode stay hard links of one file. A named pipe, socket or device file is an
// error naming it: a snapshot holds what a replay can seed its model with.
// A file system mounted below src is copied as the directories it shows.
func Snapshot(src, dst string) (SnapshotStats, error) {
	var st SnapshotStats
	if err := os.Mkdir(dst, 0o700); err != nil {
		return st, err
	}
	type dirTimes struct {
		path string
		info fs.FileInfo
	}
	var dirs []dirTimes             // fixed after their contents
	links := map[[2]uint64]string{} // (dev, ino) of a file with several names → its copy
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		out := filepath.Join(dst, rel)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		mode := info.Mode()
		switch {
		case mode.IsDir():
			if rel != "." {
				if err := os.Mkdir(out, 0o700); err != nil {
					return err
				}
			}
			dirs = append(dirs, dirTimes{out, info})
			st.Dirs++
			return nil
		case mode&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			if err := os.Symlink(target, out); err != nil {
				return err
			}
			owner(out, info, true)
			tv := []unix.Timeval{unix.NsecToTimeval(info.ModTime().UnixNano()), unix.NsecToTimeval(info.ModTime().UnixNano())}
			_ = unix.Lutimes(out, tv)
			st.Symlinks++
			return nil
		case mode.IsRegular():
			if sys, ok := info.Sys().(*syscall.Stat_t); ok && sys.Nlink > 1 {
				key := [2]uint64{uint64(sys.Dev), sys.Ino}
				if first, seen := links[key]; seen {
					st.HardLinks++
					return os.Link(first, out)
				}
				links[key] = out
			}
			n, err := copyFile(p, out, info)
			st.Bytes += n
			st.Files++
			return err
		}
		return fmt.Errorf("%s: %s: a snapshot copies regular files, directories and symbolic links only; move it out of the workload directory", p, kindOf(mode))
	})
	if err != nil {
		return st, err
	}
	for i := len(dirs) - 1; i >= 0; i-- { // children before parents
		d := dirs[i]
		owner(d.path, d.info, false)
		if err := os.Chmod(d.path, permOf(d.info.Mode())); err != nil {
			return st, err
		}
		_ = os.Chtimes(d.path, d.info.ModTime(), d.info.ModTime())
	}
	return st, nil
}

// kindOf names a special file's type.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	}
	return "a special file (" + m.String() + ")"
}

// permOf is the mode's permission bits with setuid, setgid and sticky.
func permOf(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// owner gives path the owner of info when the process may (as root).
func owner(path string, info fs.FileInfo, link bool) {
	sys, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return
	}
	if link {
		_ = os.Lchown(path, int(sys.Uid), int(sys.Gid))
		return
	}
	_ = os.Chown(path, int(sys.Uid), int(sys.Gid))
}

// copyFile copies the regular file src to dst, data extent by data extent so
// that holes stay holes, and gives dst src's size, mode, owner and times. It
// returns the data bytes copied.
func copyFile(src, dst string, info fs.FileInfo) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return 0, err
	}
	n, err := copyData(in, out, info.Size())
	if err == nil {
		err = out.Truncate(info.Size())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, fmt.Errorf("copying %s: %w", src, err)
	}
	owner(dst, info, false)
	if err := os.Chmod(dst, permOf(info.Mode())); err != nil {
		return n, err
	}
	return n, os.Chtimes(dst, info.ModTime(), info.ModTime())
}

// copyData copies in's data extents to the same offsets of out; a file system
// without SEEK_DATA gets the whole file copied.
func copyData(in, out *os.File, size int64) (int64, error) {
	var total int64
	off := int64(0)
	for off < size {
		data, err := unix.Seek(int(in.Fd()), off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			return total, nil // only a hole from off to the end
		}
		if err != nil {
			if total == 0 && off == 0 && errors.Is(err, unix.EINVAL) {
				return io.Copy(out, in)
			}
			return total, err
		}
		hole, err := unix.Seek(int(in.Fd()), data, unix.SEEK_HOLE)
		if err != nil {
			return total, err
		}
		n, err := io.Copy(io.NewOffsetWriter(out, data), io.NewSectionReader(in, data, hole-data))
		total += n
		if err != nil {
			return total, err
		}
		off = hole
	}
	return total, nil
}

package sim

import (
	"math"
	"syscall"

	"github.com/iosim/iosim/vfs"
)

// lseek whence values.
const (
	seekSet  = 0
	seekCur  = 1
	seekEnd  = 2
	seekData = 3
	seekHole = 4
)

// sysLseek implements lseek(2) as generic_file_llseek_size does for ext4:
//
//   - SEEK_SET, SEEK_CUR, SEEK_END: a negative result or one beyond s_maxbytes is
//     EINVAL and the offset is unchanged; SEEK_CUR 0 returns the offset.
//   - SEEK_DATA, SEEK_HOLE (regular files): ENXIO at or past the end of file or for a
//     negative offset; the end of file counts as a hole.
//   - directories are ext4 htree directories: their "size" is LLONG_MAX, so
//     SEEK_END 0 gives LLONG_MAX and SEEK_HOLE gives LLONG_MAX; a removed directory
//     is an empty file (SEEK_END 0 gives 0, SEEK_DATA/SEEK_HOLE ENXIO).
//   - an invalid whence is EINVAL; pipes and sockets are ESPIPE; /dev/null and
//     /dev/zero always return 0.
//
// SEEK_SET and SEEK_CUR take only the description's lock, not the file system's.
func (k *Kernel) sysLseek(c *Call) Result {
	return k.lseekFd(c.Task, int(c.Args[0]), c.Args[1], c.Args[2])
}

// lseekFd is lseek(2) of fd by t.
func (k *Kernel) lseekFd(t *Task, fd int, off, whence int64) Result {
	// The commonest case first, in one step: SEEK_SET of a regular file whose
	// description is held once, in a table with one user (no reference or
	// offset lock to take; lseek below does the same after them).
	if tbl := t.files; whence == seekSet && tbl.users.Load() == 1 {
		if f := tbl.get(fd); f != nil && f.special == nil && f.refs.Load() == 1 && f.flags.Load()&oPath == 0 &&
			!f.ino.IsDir() && off >= 0 && off <= k.fs.MaxFileSize() {
			f.off = off
			return Result{Ret: off}
		}
	}
	f, ref := t.fget(fd)
	if f == nil {
		return Fail(syscall.EBADF)
	}
	r := k.lseek(f, off, whence)
	if ref {
		f.decRef()
	}
	return r
}

func (k *Kernel) lseek(f *File, off, whence int64) Result {
	if f.special != nil {
		if !f.special.Seekable() {
			return Fail(syscall.ESPIPE)
		}
		if whence < seekSet || whence > seekHole {
			return Fail(syscall.EINVAL)
		}
		return Result{}
	}
	ino := f.ino
	maxSize := k.fs.MaxFileSize()
	var eof int64
	isDir := ino.IsDir()
	if isDir {
		var st vfs.Stat
		if ino.Nlink() == 0 {
			ino.Stat(&st)
		}
		if ino.Nlink() == 0 && st.Size == 0 {
			// A directory removed by rmdir has size 0 and is no longer an htree
			// directory (is_dx_dir looks at i_size): ext4_dir_llseek hands it to
			// ext4_llseek, which treats it as an empty file. One that a rename
			// replaced keeps its block and stays an htree directory.
			switch whence {
			case seekData, seekHole:
				return Fail(syscall.ENXIO)
			}
			isDir = false
		} else {
			maxSize, eof = math.MaxInt64, math.MaxInt64
		}
	}
	switch whence {
	case seekSet:
	case seekCur:
		locked := f.lockPos()
		if off == 0 {
			off = f.off
			f.unlockPos(locked)
			return Result{Ret: off}
		}
		off += f.off
		if off < 0 || off > maxSize {
			f.unlockPos(locked)
			return Fail(syscall.EINVAL)
		}
		f.off = off
		f.dirents = nil
		f.unlockPos(locked)
		return Result{Ret: off}
	case seekEnd:
		if !isDir && !ino.IsDir() {
			eof = ino.Size()
		}
		off += eof
	case seekData, seekHole:
		if isDir {
			if off < 0 || off >= eof {
				return Fail(syscall.ENXIO)
			}
			if whence == seekHole {
				off = eof
			}
			break
		}
		var err error
		if whence == seekData {
			off, err = ino.SeekData(off)
		} else {
			off, err = ino.SeekHole(off)
		}
		if err != nil {
			return Fail(errnoOf(err))
		}
	default:
		return Fail(syscall.EINVAL)
	}
	if off < 0 || off > maxSize {
		return Fail(syscall.EINVAL)
	}
	locked := f.lockPos()
	if f.off != off {
		f.off = off
		f.dirents = nil
	}
	f.unlockPos(locked)
	return Result{Ret: off}
}

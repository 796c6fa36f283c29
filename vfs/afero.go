package vfs

import (
	"errors"
	"io"
	iofs "io/fs"
	"os"
	pathpkg "path"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/spf13/afero"
)

// The afero face. *FS implements afero.Fs so that Go code written against afero
// runs on the model. Paths are resolved from the root (afero has no working
// directory); no umask is applied to creation modes (as afero's MemMapFs). Errors
// are *fs.PathError wrapping the bare errno, so errors.Is(err, fs.ErrNotExist) works.

var (
	_ afero.Fs        = (*FS)(nil)
	_ afero.File      = (*File)(nil)
	_ afero.Lstater   = (*FS)(nil)
	_ afero.Symlinker = (*FS)(nil)
)

func pathErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return &iofs.PathError{Op: op, Path: name, Err: err}
}

// Name returns the name of this afero.Fs.
func (fs *FS) Name() string { return "iosim" }

// Create creates or truncates name for reading and writing, as os.Create.
func (fs *FS) Create(name string) (afero.File, error) {
	return fs.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Open opens name for reading.
func (fs *FS) Open(name string) (afero.File, error) {
	return fs.OpenFile(name, os.O_RDONLY, 0)
}

// OpenFile opens name with the os.O_* flags and creation mode perm. O_SYNC and
// O_DSYNC make each write durable; O_APPEND applies to every write.
func (fs *FS) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	fs.lock()
	ino, created, err := fs.root.openLocked(name, flag, unixPerm(perm))
	if err != nil {
		fs.mu.Unlock()
		return nil, pathErr("open", name, err)
	}
	f := &File{ino: ino, name: name, flag: int32(flag), errseq: ino.sampleErrSeqLocked()}
	if created {
		ino.creator = f
	}
	// A regular file opened for reading gets the FileInfo of this moment (shared
	// with the other opens of the inode since the last change), which
	// serves Stat while nothing changes. Not with a clock of the caller's
	// (WithClock), which moves by itself towards the next periodic commit
	// that Stat would run first (fs.lock), nor after a truncation or a
	// creation, which read the clock since fs.lock ran what was due.
	if flag&(syscall.O_ACCMODE|syscall.O_TRUNC) == syscall.O_RDONLY && !created && ino.IsRegular() && fs.cfg.now == nil {
		gen := fs.statGen.Load() + 1
		base := pathpkg.Base(name)
		fi := ino.fiCache
		if fi == nil || ino.fiGen != gen || fi.name != base {
			fi = &fileInfo{name: base}
			ino.statLocked(&fi.st)
			ino.fiCache, ino.fiGen = fi, gen
		}
		fs.statSnapped = true
		f.fi, f.gen = fi, gen
	}
	fs.mu.Unlock()
	return f, nil
}

func unixPerm(m os.FileMode) uint32 {
	p := uint32(m.Perm())
	if m&os.ModeSetuid != 0 {
		p |= 0o4000
	}
	if m&os.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&os.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// Mkdir creates a directory.
func (fs *FS) Mkdir(name string, perm os.FileMode) error {
	return pathErr("mkdir", name, fs.root.Mkdir(name, unixPerm(perm)))
}

// MkdirAll creates a directory and any missing parents, as os.MkdirAll.
func (fs *FS) MkdirAll(p string, perm os.FileMode) error {
	if st, err := fs.root.Resolve(p, true); err == nil {
		if st.IsDir() {
			return nil
		}
		return pathErr("mkdir", p, ENOTDIR)
	}
	if parent := pathpkg.Dir(p); parent != p && parent != "." && parent != "/" {
		if err := fs.MkdirAll(parent, perm); err != nil {
			return err
		}
	}
	err := fs.root.Mkdir(p, unixPerm(perm))
	if err == EEXIST {
		if st, e := fs.root.Resolve(p, true); e == nil && st.IsDir() {
			return nil
		}
	}
	return pathErr("mkdir", p, err)
}

// Remove removes a file or an empty directory, as os.Remove.
func (fs *FS) Remove(name string) error {
	err := fs.root.Unlink(name)
	if err == EISDIR {
		err = fs.root.Rmdir(name)
	}
	return pathErr("remove", name, err)
}

// RemoveAll removes name and everything below it, as os.RemoveAll.
func (fs *FS) RemoveAll(p string) error {
	ino, err := fs.root.Resolve(p, false)
	if err == ENOENT {
		return nil
	}
	if err != nil {
		return pathErr("removeall", p, err)
	}
	if ino.IsDir() {
		ents, err := ino.Dirents()
		if err != nil {
			return pathErr("removeall", p, err)
		}
		for _, e := range ents {
			if e.Name == "." || e.Name == ".." {
				continue
			}
			if err := fs.RemoveAll(pathpkg.Join(p, e.Name)); err != nil {
				return err
			}
		}
	}
	return fs.Remove(p)
}

// Rename renames oldname to newname exactly as os.Rename does on Linux: where
// newname (not following a final symlink) is a directory it refuses with
// EEXIST without renaming (an oldname that does not resolve reports that
// error instead; a directory renamed onto itself by another name is allowed),
// where rename(2) would replace an empty directory; otherwise it is
// rename(2). Errors are *os.LinkError holding a bare syscall.Errno.
func (fs *FS) Rename(oldname, newname string) error {
	if ni, err := fs.root.Resolve(newname, false); err == nil && ni.IsDir() {
		oi, err := fs.root.Resolve(oldname, false)
		if err != nil {
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
		}
		if newname == oldname || oi != ni {
			return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: syscall.EEXIST}
		}
	}
	err := fs.root.Rename(oldname, fs.root, newname, 0)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// Stat returns a FileInfo for name, following symlinks.
func (fs *FS) Stat(name string) (os.FileInfo, error) {
	ino, err := fs.root.Resolve(name, true)
	if err != nil {
		return nil, pathErr("stat", name, err)
	}
	return newFileInfo(name, ino), nil
}

// LstatIfPossible returns a FileInfo for name without following a final symlink.
func (fs *FS) LstatIfPossible(name string) (os.FileInfo, bool, error) {
	ino, err := fs.root.Resolve(name, false)
	if err != nil {
		return nil, true, pathErr("lstat", name, err)
	}
	return newFileInfo(name, ino), true, nil
}

// SymlinkIfPossible creates newname as a symlink to oldname.
func (fs *FS) SymlinkIfPossible(oldname, newname string) error {
	if err := fs.root.Symlink(oldname, newname); err != nil {
		return &os.LinkError{Op: "symlink", Old: oldname, New: newname, Err: err}
	}
	return nil
}

// ReadlinkIfPossible returns the target of the symlink name.
func (fs *FS) ReadlinkIfPossible(name string) (string, error) {
	t, err := fs.root.Readlink(name)
	return t, pathErr("readlink", name, err)
}

// Chmod changes the mode of name.
func (fs *FS) Chmod(name string, mode os.FileMode) error {
	ino, err := fs.root.Resolve(name, true)
	if err != nil {
		return pathErr("chmod", name, err)
	}
	return pathErr("chmod", name, ino.Chmod(unixPerm(mode)))
}

// Chown changes the owner of name.
func (fs *FS) Chown(name string, uid, gid int) error {
	ino, err := fs.root.Resolve(name, true)
	if err != nil {
		return pathErr("chown", name, err)
	}
	return pathErr("chown", name, ino.Chown(uid, gid))
}

// Chtimes changes the access and modification times of name.
func (fs *FS) Chtimes(name string, atime, mtime time.Time) error {
	ino, err := fs.root.Resolve(name, true)
	if err != nil {
		return pathErr("chtimes", name, err)
	}
	a, m := UtimeOmit, UtimeOmit
	if !atime.IsZero() {
		a = atime.UnixNano()
	}
	if !mtime.IsZero() {
		m = mtime.UnixNano()
	}
	return pathErr("chtimes", name, ino.Utimens(a, m))
}

// File is an open file of the afero face: an open file description with its own
// offset. ReadAt and WriteAt never touch the offset; Read, Write and Seek are
// serialised on it. Safe for concurrent use.
type File struct {
	ino    *Inode
	name   string
	errseq uint64
	flag   int32
	closed atomic.Bool

	// fi is the FileInfo of the file when it was opened, never changed:
	// Stat returns it, with no lock, while the file system's statGen is
	// still gen-1 (gen 0: never).
	fi  *fileInfo
	gen uint64

	mu  sync.Mutex // guards the fields below
	off int64
	dir *dirCursor // a directory's listing, read by Readdir
}

// dirCursor is where Readdir stands in a directory's listing.
type dirCursor struct {
	ents []Dirent // the listing without "." and ".."
	pos  int
}

// Inode returns the file's inode; nil once the file is closed (the memory of
// a closed file that was removed may serve other files).
func (f *File) Inode() *Inode {
	fs := f.ino.fs
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if f.closed.Load() {
		return nil
	}
	f.ino.creator = nil // reached by another than its creator (recycle.go)
	return f.ino
}

// Name returns the name the file was opened with.
func (f *File) Name() string { return f.name }

func (f *File) check(op string, write bool) error {
	if f.closed.Load() {
		return pathErr(op, f.name, os.ErrClosed)
	}
	acc := f.flag & syscall.O_ACCMODE
	if write && acc == syscall.O_RDONLY || !write && acc == syscall.O_WRONLY {
		return pathErr(op, f.name, EBADF)
	}
	return nil
}

// Close closes the file; a second Close fails with os.ErrClosed.
func (f *File) Close() error {
	if !f.closed.CompareAndSwap(false, true) {
		return pathErr("close", f.name, os.ErrClosed)
	}
	f.ino.Kernel().Release()
	return nil
}

// Read reads from the offset and advances it; io.EOF at end of file.
func (f *File) Read(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	n, err := f.ino.ReadAt(p, f.off)
	if f.closed.Load() {
		// Closed while reading: the data read may have been recycled (recycle.go).
		return 0, pathErr("read", f.name, os.ErrClosed)
	}
	f.off += int64(n)
	if err != nil {
		return n, pathErr("read", f.name, err)
	}
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// ReadAt reads at off without touching the offset; io.EOF when short.
func (f *File) ReadAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	err := f.check("read", false)
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("readat", f.name, EINVAL)
	}
	n, err := f.ino.ReadAt(p, off)
	if f.closed.Load() {
		// Closed while reading: the data read may have been recycled (recycle.go).
		return 0, pathErr("read", f.name, os.ErrClosed)
	}
	if err != nil {
		return n, pathErr("read", f.name, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *File) writeMode() WriteMode {
	var m WriteMode
	if f.flag&syscall.O_APPEND != 0 {
		m |= WriteAppend
	}
	if f.flag&syscall.O_SYNC == syscall.O_SYNC {
		m |= WriteSync
	} else if f.flag&syscall.O_DSYNC != 0 {
		m |= WriteDSync
	}
	return m
}

// Write writes at the offset (at the end of file with O_APPEND) and advances it.
func (f *File) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	n, end, err := f.ino.Write(p, f.off, f.writeMode(), &f.errseq)
	f.off = end
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, pathErr("write", f.name, err)
}

// WriteAt writes at off without touching the offset. As os.File, it refuses a file
// opened with O_APPEND.
func (f *File) WriteAt(p []byte, off int64) (int, error) {
	f.mu.Lock()
	err := f.check("write", true)
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	if f.flag&syscall.O_APPEND != 0 {
		return 0, errors.New("invalid use of WriteAt on file opened with O_APPEND")
	}
	if off < 0 {
		return 0, pathErr("writeat", f.name, EINVAL)
	}
	n, _, err := f.ino.Write(p, off, f.writeMode(), &f.errseq)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	return n, pathErr("write", f.name, err)
}

// WriteString writes s.
func (f *File) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

// Seek sets the offset, as lseek(2) with io.SeekStart/Current/End; a negative
// result is EINVAL and leaves the offset unchanged.
func (f *File) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() {
		return 0, pathErr("seek", f.name, os.ErrClosed)
	}
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.off
	case io.SeekEnd:
		base = f.ino.Size()
	default:
		return 0, pathErr("seek", f.name, EINVAL)
	}
	n := base + offset
	if n < 0 {
		return 0, pathErr("seek", f.name, EINVAL)
	}
	f.off = n
	f.dir = nil
	return n, nil
}

// Stat returns the file's FileInfo, a snapshot never changed afterwards: Stats
// with no change in between may return the same one.
func (f *File) Stat() (os.FileInfo, error) {
	fs := f.ino.fs
	if f.gen != 0 && fs.statGen.Load() == f.gen-1 {
		return f.fi, nil // nothing changed since the open
	}
	fi := &fileInfo{name: pathpkg.Base(f.name)}
	fs.lock()
	f.ino.statLocked(&fi.st)
	fs.mu.Unlock()
	return fi, nil
}

// Sync is fsync(2): the file's data and metadata (a directory: its entries) are
// durable on return, and a writeback error since open is reported once.
func (f *File) Sync() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() {
		return pathErr("sync", f.name, os.ErrClosed)
	}
	return pathErr("sync", f.name, f.ino.Fsync(&f.errseq))
}

// Truncate changes the file size.
func (f *File) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	return pathErr("truncate", f.name, f.ino.Truncate(size))
}

// Readdir returns up to n entries (all if n <= 0) after those already returned,
// without "." and "..", as os.File.Readdir.
func (f *File) Readdir(n int) ([]os.FileInfo, error) {
	ents, err := f.nextDirents(n)
	out := make([]os.FileInfo, 0, len(ents))
	fis := make([]fileInfo, len(ents)) // one allocation for all
	fs := f.ino.fs
	fs.mu.Lock()
	for k, e := range ents {
		// The entry as listed; one removed since the listing is left out.
		if c := f.ino.entries[e.Name]; c != nil {
			fis[k].name = e.Name
			c.statLocked(&fis[k].st)
			out = append(out, &fis[k])
		}
	}
	fs.mu.Unlock()
	return out, err
}

// Readdirnames is Readdir returning names only.
func (f *File) Readdirnames(n int) ([]string, error) {
	ents, err := f.nextDirents(n)
	out := make([]string, len(ents))
	for k, e := range ents {
		out[k] = e.Name
	}
	return out, err
}

func (f *File) nextDirents(n int) ([]Dirent, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed.Load() {
		return nil, pathErr("readdir", f.name, os.ErrClosed)
	}
	if !f.ino.IsDir() {
		return nil, pathErr("readdir", f.name, ENOTDIR)
	}
	if f.dir == nil {
		all, err := f.ino.Dirents()
		if err != nil {
			return nil, pathErr("readdir", f.name, err)
		}
		f.dir = &dirCursor{ents: all[2:]} // without "." and ".."
	}
	d := f.dir
	rest := d.ents[d.pos:]
	if n <= 0 {
		d.pos = len(d.ents)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.pos += len(rest)
	return rest, nil
}

// fileInfo is the os.FileInfo of an inode, taken at one moment.
type fileInfo struct {
	name string
	st   Stat
}

func newFileInfo(name string, ino *Inode) *fileInfo {
	fi := &fileInfo{name: pathpkg.Base(name)}
	ino.Stat(&fi.st)
	return fi
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(0, fi.st.Mtime).UTC() }
func (fi *fileInfo) IsDir() bool        { return fi.st.Mode&S_IFMT == S_IFDIR }

// Sys returns a *Stat of its own: the FileInfo itself may be shared (File.Stat
// hands the opens of an inode one snapshot while nothing changes), so a caller
// that changes what Sys returned changes no one else's.
func (fi *fileInfo) Sys() any {
	st := fi.st
	return &st
}

// Mode converts the Linux mode to an fs.FileMode.
func (fi *fileInfo) Mode() os.FileMode {
	m := os.FileMode(fi.st.Mode & 0o777)
	switch fi.st.Mode & S_IFMT {
	case S_IFDIR:
		m |= os.ModeDir
	case S_IFLNK:
		m |= os.ModeSymlink
	}
	if fi.st.Mode&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	if fi.st.Mode&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if fi.st.Mode&0o1000 != 0 {
		m |= os.ModeSticky
	}
	return m
}

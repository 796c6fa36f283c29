package crash

import (
	"io"
	"os"
	"time"

	"github.com/spf13/afero"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// Env is what a Go workload runs with: a process whose calls the explorer sees
// (the sim facade: unix's names and signatures), the same file system through
// afero (every call through it is seen too), and a standard output whose
// writes are what the program announces.
type Env struct {
	Proc   *sim.Process
	Afero  afero.Fs
	Stdout io.Writer
	FS     *vfs.FS // the file system itself: calls made on it directly are not seen
}

// Setup prepares the state before the workload; it is made durable.
type Setup func(fs *vfs.FS) error

// ExploreFunc runs setup on a new file system, makes the result durable, then
// runs workload with every call explored under opts, and returns the report.
func ExploreFunc(opts Options, setup Setup, workload func(env *Env) error) (*Report, error) {
	e, env, err := newFuncExplorer(opts, setup)
	if err != nil {
		return nil, err
	}
	werr := workload(env)
	rep := e.Finish()
	return rep, werr
}

func newFuncExplorer(opts Options, setup Setup) (*Explorer, *Env, error) {
	fs := vfs.New(FSOptions()...)
	if setup != nil {
		if err := setup(fs); err != nil {
			return nil, nil, err
		}
	}
	if err := fs.Sync(); err != nil {
		return nil, nil, err
	}
	k := sim.New(fs)
	e := NewExplorer(fs, k, opts)
	p := k.Spawn()
	t := k.Task(p.Getpid())
	if err := t.InstallSpecial(1, &sim.Placeholder{Kind: vfs.S_IFCHR}, os.O_WRONLY); err != nil {
		return nil, nil, err
	}
	env := &Env{Proc: p.Through(e), Afero: &aferoFs{e: e, fs: fs}, Stdout: stdoutWriter{e}, FS: fs}
	return e, env, nil
}

// step runs f, one call of a Go workload made outside the syscall seam, as a
// call of the explored program.
func (e *Explorer) step(ci callInfo, f func() error) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	seq0 := e.fs.Seq()
	err := f()
	e.after(ci, err == nil, seq0, e.fs.Seq())
	return err
}

// aferoFs is the afero face of the explored file system.
type aferoFs struct {
	e  *Explorer
	fs *vfs.FS
}

var _ afero.Fs = (*aferoFs)(nil)

func (a *aferoFs) Name() string { return "iosim-crash" }

func (a *aferoFs) Create(name string) (afero.File, error) {
	return a.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

func (a *aferoFs) Open(name string) (afero.File, error) { return a.OpenFile(name, os.O_RDONLY, 0) }

func (a *aferoFs) OpenFile(name string, flag int, perm os.FileMode) (afero.File, error) {
	var f afero.File
	old, _ := a.fs.Root().Resolve(name, true)
	err := a.e.step(callInfo{name: "OpenFile", path: name, truncTo: flag&os.O_TRUNC != 0 && nonEmpty(old)}, func() (err error) {
		f, err = a.fs.OpenFile(name, flag, perm)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &aferoFile{File: f, e: a.e, sync: flag&(os.O_SYNC) != 0}, nil
}

func (a *aferoFs) Mkdir(name string, perm os.FileMode) error {
	return a.e.step(callInfo{name: "Mkdir", path: name}, func() error { return a.fs.Mkdir(name, perm) })
}

func (a *aferoFs) MkdirAll(p string, perm os.FileMode) error {
	return a.e.step(callInfo{name: "MkdirAll", path: p}, func() error { return a.fs.MkdirAll(p, perm) })
}

func (a *aferoFs) Remove(name string) error {
	return a.e.step(callInfo{name: "Remove", path: name}, func() error { return a.fs.Remove(name) })
}

func (a *aferoFs) RemoveAll(p string) error {
	return a.e.step(callInfo{name: "RemoveAll", path: p}, func() error { return a.fs.RemoveAll(p) })
}

func (a *aferoFs) Rename(oldname, newname string) error {
	r := &renameInfo{src: oldname, dst: newname}
	if old, err := a.fs.Root().Resolve(newname, false); err == nil && old.IsRegular() {
		r.replacing = true
		r.oldContent = [][]byte{readAll(old)}
		if d, err := a.fs.Crash().Root().Resolve(newname, false); err == nil && d.IsRegular() {
			r.oldContent = append(r.oldContent, readAll(d))
		}
	}
	return a.e.step(callInfo{name: "Rename", path: oldname + " -> " + newname, rename: r}, func() error { return a.fs.Rename(oldname, newname) })
}

func (a *aferoFs) Stat(name string) (os.FileInfo, error) { return a.fs.Stat(name) }

func (a *aferoFs) Chmod(name string, mode os.FileMode) error {
	return a.e.step(callInfo{name: "Chmod", path: name}, func() error { return a.fs.Chmod(name, mode) })
}

func (a *aferoFs) Chown(name string, uid, gid int) error {
	return a.e.step(callInfo{name: "Chown", path: name}, func() error { return a.fs.Chown(name, uid, gid) })
}

func (a *aferoFs) Chtimes(name string, atime, mtime time.Time) error {
	return a.e.step(callInfo{name: "Chtimes", path: name}, func() error { return a.fs.Chtimes(name, atime, mtime) })
}

// aferoFile is a file of aferoFs: its writes, truncates, syncs and close are
// explored calls.
type aferoFile struct {
	afero.File
	e    *Explorer
	sync bool
}

func (f *aferoFile) info(name string) callInfo {
	ci := callInfo{name: name, path: f.Name()}
	if vf, ok := f.File.(*vfs.File); ok {
		ci.ino = vf.Inode()
	}
	return ci
}

func (f *aferoFile) writeInfo() callInfo {
	ci := f.info("Write")
	ci.write = true
	if f.sync {
		// an O_SYNC write through afero commits (ext4's journal); the bytes it
		// acknowledged are not recorded as a promise
		ci.sync = syncCommit
	}
	return ci
}

func (f *aferoFile) Write(p []byte) (n int, err error) {
	err = f.e.step(f.writeInfo(), func() error { n, err = f.File.Write(p); return err })
	return n, err
}

func (f *aferoFile) WriteAt(p []byte, off int64) (n int, err error) {
	err = f.e.step(f.writeInfo(), func() error { n, err = f.File.WriteAt(p, off); return err })
	return n, err
}

func (f *aferoFile) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

func (f *aferoFile) Truncate(size int64) error {
	ci := f.info("Truncate")
	ci.truncTo = size == 0 && nonEmpty(ci.ino)
	return f.e.step(ci, func() error { return f.File.Truncate(size) })
}

func (f *aferoFile) Sync() error {
	ci := f.info("Sync")
	ci.sync = syncFile
	ci.inFlight = ci.ino != nil && ci.ino.InFlight()
	return f.e.step(ci, f.File.Sync)
}

func (f *aferoFile) Close() error {
	ci := f.info("Close")
	ci.closing = true
	return f.e.step(ci, f.File.Close)
}

// FSOptions configures a file system under exploration: the models decide
// when the journal commits (any two calls may have a commit between them), so
// the file system makes nothing durable on its own (no periodic commit) and
// keeps every change a crash could lose (a create and its remove do not
// cancel out, and a block or size changed again keeps its earlier value, for
// a state that keeps the first call and loses the second).
func FSOptions() []vfs.Option {
	return []vfs.Option{vfs.WithPeriodicCommit(0, 0), vfs.WithCancel(false), vfs.WithHistory(true)}
}

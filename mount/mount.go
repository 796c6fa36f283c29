// Package mount serves iosim's model as a FUSE file system, so that an
// unmodified program runs on it: each FUSE request becomes calls on a
// sim.Process standing for the calling pid, sent through the interposer stack
// (the handler the Server is given), never a side door into the vfs.
//
// The kernel's caching is kept off where it would hide calls from the model:
// entry and attribute timeouts are zero (every lookup and stat reaches the
// model) and every file is opened with direct I/O (every read and write
// reaches the model with its offset and length). The open flags the kernel
// passes on (O_SYNC, O_DSYNC, O_DIRECT, O_APPEND, O_TRUNC ...) are the flags
// of the model's open; fsync and fdatasync, fsyncdir, fallocate, rename flags
// and xattrs arrive as the calls of the same names.
//
// What FUSE cannot carry: dirty pages of a shared mapping arrive as writes at
// writeback, not as the stores the program made; advisory locks are handled by
// the kernel's FUSE layer and never reach the model.
package mount

import (
	"context"
	"fmt"
	"log"
	"os"
	"path"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// Server is the model side of a mount: a Kernel, the handler calls are sent
// to (the top of an interposer stack whose bottom is the Kernel), and one
// model process per calling pid. Its methods may be called from any goroutine;
// the calls reach the model one at a time.
type Server struct {
	k     *sim.Kernel
	h     sim.Handler
	build Builder

	mu    sync.Mutex
	procs map[uint32]*sim.Process
	dead  bool // after a crash every call answers EIO
	gen   int  // bumped when the model is replaced: older handles answer EIO
	// crashed is the state a crash chose, served by Restart.
	crashed *vfs.FS
	model   vfs.Model

	// ENOSYS counts the requests answered ENOSYS because the model does not
	// support them; Panics counts the handler panics answered EIO.
	ENOSYS, Panics atomic.Int64
	// Log receives one line per panic; nil is log.Printf.
	Log func(format string, args ...any)
}

// Builder makes the kernel of a file system and the handler its calls go
// through (the interposer stack over it): a Server replaces its model with a
// Builder's when a control command (clear-cache, restart) swaps the state.
type Builder func(fs *vfs.FS) (*sim.Kernel, sim.Handler, error)

// NewServer returns a Server whose calls go to the handler build makes over
// fs; model is the persistence model a seeded crash draws under.
func NewServer(fs *vfs.FS, model vfs.Model, build Builder) (*Server, error) {
	k, h, err := build(fs)
	if err != nil {
		return nil, err
	}
	return &Server{k: k, h: h, build: build, model: model, procs: map[uint32]*sim.Process{}}, nil
}

// Kernel returns the model kernel the Server serves.
func (s *Server) Kernel() *sim.Kernel { return s.k }

// proc returns the model process of the caller in ctx; s.mu is held. A
// request without a caller pid (a release, a writeback) is pid 0's: the
// server's own process.
func (s *Server) proc(ctx context.Context) *sim.Process {
	var pid uint32
	if c, ok := fuse.FromContext(ctx); ok {
		pid = c.Pid
	}
	return s.procOf(pid)
}

func (s *Server) procOf(pid uint32) *sim.Process {
	if p, ok := s.procs[pid]; ok {
		return p
	}
	t, err := s.k.SpawnPid(int(pid))
	if err != nil { // pid 0, or a pid the model already gave away
		t, _ = s.k.SpawnPid(0)
	}
	// The kernel applied the caller's umask to the modes FUSE passes: the
	// model process applies none. Set on the kernel, below the stack, so a
	// record holds only the calls the program made.
	sim.NewProcess(s.k, t).Umask(0)
	p := sim.NewProcess(s.h, t)
	s.procs[pid] = p
	return p
}

// do runs f with s.mu held and the caller's process, turning a panic into EIO
// and a logged line, and counting ENOSYS.
func (s *Server) do(ctx context.Context, op string, f func(p *sim.Process) syscall.Errno) (errno syscall.Errno) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return syscall.EIO
	}
	defer func() {
		if r := recover(); r != nil {
			s.Panics.Add(1)
			logf := s.Log
			if logf == nil {
				logf = log.Printf
			}
			logf("iosim mount: %s: panic: %v\n%s", op, r, debug.Stack())
			errno = syscall.EIO
		}
		if errno == syscall.ENOSYS {
			s.ENOSYS.Add(1)
		}
	}()
	return f(s.proc(ctx))
}

func errno(err error) syscall.Errno {
	if err == nil {
		return 0
	}
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EIO
}

// node is one inode of the mount, found by its path in the model.
type node struct {
	fs.Inode
	s *Server
}

// Root returns the root node of a mount of s, for fs.Mount.
func (s *Server) Root() fs.InodeEmbedder { return &node{s: s} }

func (n *node) path() string { return "/" + n.Path(nil) }

func (n *node) child(name string) string { return path.Join(n.path(), name) }

func toAttr(st *unix.Stat_t, out *fuse.Attr) {
	out.Ino = st.Ino
	out.Size = uint64(st.Size)
	out.Blocks = uint64(st.Blocks)
	out.Atime, out.Atimensec = uint64(st.Atim.Sec), uint32(st.Atim.Nsec)
	out.Mtime, out.Mtimensec = uint64(st.Mtim.Sec), uint32(st.Mtim.Nsec)
	out.Ctime, out.Ctimensec = uint64(st.Ctim.Sec), uint32(st.Ctim.Nsec)
	out.Mode = st.Mode
	out.Nlink = uint32(st.Nlink)
	out.Uid, out.Gid = st.Uid, st.Gid
	out.Rdev = uint32(st.Rdev)
	out.Blksize = uint32(st.Blksize)
}

// newChild makes the inode for the model file at p (lstat'ed into st).
func (n *node) newChild(ctx context.Context, st *unix.Stat_t, out *fuse.EntryOut) *fs.Inode {
	toAttr(st, &out.Attr)
	return n.NewInode(ctx, &node{s: n.s}, fs.StableAttr{Mode: st.Mode & unix.S_IFMT, Ino: st.Ino})
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var st unix.Stat_t
	e := n.s.do(ctx, "lookup", func(p *sim.Process) syscall.Errno { return errno(p.Lstat(n.child(name), &st)) })
	if e != 0 {
		return nil, e
	}
	return n.newChild(ctx, &st, out), 0
}

func (n *node) Getattr(ctx context.Context, f fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	var st unix.Stat_t
	e := n.s.do(ctx, "getattr", func(p *sim.Process) syscall.Errno {
		if h, ok := f.(*handle); ok && h.gen == n.s.gen {
			return errno(h.p.Fstat(h.fd, &st))
		}
		return errno(p.Lstat(n.path(), &st))
	})
	if e == 0 {
		toAttr(&st, &out.Attr)
	}
	return e
}

func (n *node) Setattr(ctx context.Context, f fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	h, _ := f.(*handle)
	if h != nil && h.gen != n.s.gen {
		h = nil
	}
	e := n.s.do(ctx, "setattr", func(p *sim.Process) syscall.Errno {
		name := n.path()
		if m, ok := in.GetMode(); ok {
			if err := p.Fchmodat(unix.AT_FDCWD, name, m&07777, 0); err != nil {
				return errno(err)
			}
		}
		uid, uok := in.GetUID()
		gid, gok := in.GetGID()
		if uok || gok {
			u, g := -1, -1
			if uok {
				u = int(uid)
			}
			if gok {
				g = int(gid)
			}
			if err := p.Fchownat(unix.AT_FDCWD, name, u, g, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return errno(err)
			}
		}
		if sz, ok := in.GetSize(); ok {
			var err error
			if h != nil {
				err = h.p.Ftruncate(h.fd, int64(sz))
			} else {
				err = p.Truncate(name, int64(sz))
			}
			if err != nil {
				return errno(err)
			}
		}
		mt, mok := in.GetMTime()
		at, aok := in.GetATime()
		if mok || aok {
			ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
			if aok {
				ts[0] = unix.NsecToTimespec(at.UnixNano())
			}
			if mok {
				ts[1] = unix.NsecToTimespec(mt.UnixNano())
			}
			if err := p.UtimesNanoAt(unix.AT_FDCWD, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return errno(err)
			}
		}
		var st unix.Stat_t
		if err := p.Lstat(name, &st); err != nil {
			return errno(err)
		}
		toAttr(&st, &out.Attr)
		return 0
	})
	return e
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var st unix.Stat_t
	e := n.s.do(ctx, "mkdir", func(p *sim.Process) syscall.Errno {
		if err := p.Mkdir(n.child(name), mode); err != nil {
			return errno(err)
		}
		return errno(p.Lstat(n.child(name), &st))
	})
	if e != 0 {
		return nil, e
	}
	return n.newChild(ctx, &st, out), 0
}

func (n *node) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var st unix.Stat_t
	e := n.s.do(ctx, "mknod", func(p *sim.Process) syscall.Errno {
		if err := p.Mknodat(unix.AT_FDCWD, n.child(name), mode, int(dev)); err != nil {
			return errno(err)
		}
		return errno(p.Lstat(n.child(name), &st))
	})
	if e != 0 {
		return nil, e
	}
	return n.newChild(ctx, &st, out), 0
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var st unix.Stat_t
	e := n.s.do(ctx, "symlink", func(p *sim.Process) syscall.Errno {
		if err := p.Symlink(target, n.child(name)); err != nil {
			return errno(err)
		}
		return errno(p.Lstat(n.child(name), &st))
	})
	if e != 0 {
		return nil, e
	}
	return n.newChild(ctx, &st, out), 0
}

func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	var st unix.Stat_t
	from := "/" + target.EmbeddedInode().Path(nil)
	e := n.s.do(ctx, "link", func(p *sim.Process) syscall.Errno {
		if err := p.Link(from, n.child(name)); err != nil {
			return errno(err)
		}
		return errno(p.Lstat(n.child(name), &st))
	})
	if e != 0 {
		return nil, e
	}
	return n.newChild(ctx, &st, out), 0
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	var out []byte
	e := n.s.do(ctx, "readlink", func(p *sim.Process) syscall.Errno {
		buf := make([]byte, 4096)
		m, err := p.Readlink(n.path(), buf)
		out = buf[:m]
		return errno(err)
	})
	return out, e
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.s.do(ctx, "unlink", func(p *sim.Process) syscall.Errno { return errno(p.Unlink(n.child(name))) })
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.s.do(ctx, "rmdir", func(p *sim.Process) syscall.Errno { return errno(p.Rmdir(n.child(name))) })
}

func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	to := path.Join("/"+newParent.EmbeddedInode().Path(nil), newName)
	return n.s.do(ctx, "rename", func(p *sim.Process) syscall.Errno {
		return errno(p.Renameat2(unix.AT_FDCWD, n.child(name), unix.AT_FDCWD, to, uint(flags)))
	})
}

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	return n.s.do(ctx, "statfs", func(p *sim.Process) syscall.Errno {
		var st unix.Statfs_t
		if err := statfs(p, n.path(), &st); err != nil {
			return errno(err)
		}
		out.Blocks, out.Bfree, out.Bavail = st.Blocks, st.Bfree, st.Bavail
		out.Files, out.Ffree = st.Files, st.Ffree
		out.Bsize, out.Frsize = uint32(st.Bsize), uint32(st.Frsize)
		out.NameLen = uint32(st.Namelen)
		return 0
	})
}

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	var sz int
	e := n.s.do(ctx, "getxattr", func(p *sim.Process) syscall.Errno {
		var err error
		sz, err = lgetxattr(p, n.path(), attr, dest)
		return errno(err)
	})
	return uint32(sz), e
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	var sz int
	e := n.s.do(ctx, "listxattr", func(p *sim.Process) syscall.Errno {
		var err error
		sz, err = llistxattr(p, n.path(), dest)
		return errno(err)
	})
	return uint32(sz), e
}

func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	return n.s.do(ctx, "setxattr", func(p *sim.Process) syscall.Errno {
		return errno(p.Lsetxattr(n.path(), attr, data, int(flags)))
	})
}

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	return n.s.do(ctx, "removexattr", func(p *sim.Process) syscall.Errno { return errno(p.Lremovexattr(n.path(), attr)) })
}

// handle is an open file of the mount: an fd of the model process that opened it.
type handle struct {
	s   *Server
	p   *sim.Process
	fd  int
	gen int
}

func (n *node) open(ctx context.Context, op, name string, flags uint32, mode uint32) (*handle, syscall.Errno) {
	var h *handle
	e := n.s.do(ctx, op, func(p *sim.Process) syscall.Errno {
		fd, err := p.Open(name, int(flags)&^unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
		if err != nil {
			return errno(err)
		}
		h = &handle{s: n.s, p: p, fd: fd, gen: n.s.gen}
		return 0
	})
	return h, e
}

func (n *node) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	h, e := n.open(ctx, "open", n.path(), flags&^(unix.O_CREAT|unix.O_EXCL), 0)
	if e != 0 {
		return nil, 0, e
	}
	return h, fuse.FOPEN_DIRECT_IO, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	h, e := n.open(ctx, "create", n.child(name), flags|unix.O_CREAT, mode)
	if e != 0 {
		return nil, nil, 0, e
	}
	var st unix.Stat_t
	if e := h.do(ctx, "create", func() syscall.Errno { return errno(h.p.Fstat(h.fd, &st)) }); e != 0 {
		return nil, nil, 0, e
	}
	return n.newChild(ctx, &st, out), h, fuse.FOPEN_DIRECT_IO, 0
}

func (n *node) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	var list []fuse.DirEntry
	e := n.s.do(ctx, "readdir", func(p *sim.Process) syscall.Errno {
		fd, err := p.Open(n.path(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return errno(err)
		}
		defer p.Close(fd)
		buf := make([]byte, 1<<16)
		for {
			m, err := p.Getdents(fd, buf)
			if err != nil {
				return errno(err)
			}
			if m == 0 {
				return 0
			}
			for b := buf[:m]; len(b) >= 19; {
				reclen := int(b[16]) | int(b[17])<<8
				ino := uint64(0)
				for i := 7; i >= 0; i-- {
					ino = ino<<8 | uint64(b[i])
				}
				nm := b[19:reclen]
				for i, c := range nm {
					if c == 0 {
						nm = nm[:i]
						break
					}
				}
				if s := string(nm); s != "." && s != ".." {
					list = append(list, fuse.DirEntry{Name: s, Ino: ino, Mode: uint32(b[18]) << 12})
				}
				b = b[reclen:]
			}
		}
	})
	if e != 0 {
		return nil, e
	}
	return fs.NewListDirStream(list), 0
}

// Fsync is a file's fsync (on its handle) or a directory's fsyncdir (on a
// descriptor of its own, as the kernel passes no handle the model knows).
func (n *node) Fsync(ctx context.Context, f fs.FileHandle, flags uint32) syscall.Errno {
	if h, ok := f.(*handle); ok {
		return h.Fsync(ctx, flags)
	}
	return n.s.do(ctx, "fsyncdir", func(p *sim.Process) syscall.Errno {
		fd, err := p.Open(n.path(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return errno(err)
		}
		defer p.Close(fd)
		if flags&1 != 0 {
			return errno(p.Fdatasync(fd))
		}
		return errno(p.Fsync(fd))
	})
}

// do is Server.do for a call on h: EIO when the model h was opened on has
// been replaced.
func (h *handle) do(ctx context.Context, op string, f func() syscall.Errno) syscall.Errno {
	return h.s.do(ctx, op, func(*sim.Process) syscall.Errno {
		if h.gen != h.s.gen {
			return syscall.EIO
		}
		return f()
	})
}

func (h *handle) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	var m int
	e := h.do(ctx, "read", func() syscall.Errno {
		var err error
		m, err = h.p.Pread(h.fd, dest, off)
		return errno(err)
	})
	if e != 0 {
		return nil, e
	}
	return fuse.ReadResultData(dest[:m]), 0
}

func (h *handle) Write(ctx context.Context, data []byte, off int64) (uint32, syscall.Errno) {
	var m int
	e := h.do(ctx, "write", func() syscall.Errno {
		var err error
		m, err = h.p.Pwrite(h.fd, data, off)
		return errno(err)
	})
	return uint32(m), e
}

func (h *handle) Fsync(ctx context.Context, flags uint32) syscall.Errno {
	return h.do(ctx, "fsync", func() syscall.Errno {
		if flags&1 != 0 { // FUSE_FSYNC_FDATASYNC
			return errno(h.p.Fdatasync(h.fd))
		}
		return errno(h.p.Fsync(h.fd))
	})
}

func (h *handle) Flush(ctx context.Context) syscall.Errno { return 0 }

func (h *handle) Release(ctx context.Context) syscall.Errno {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	if h.s.dead || h.gen != h.s.gen {
		return 0
	}
	return errno(h.p.Close(h.fd))
}

func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	var st unix.Stat_t
	e := h.do(ctx, "getattr", func() syscall.Errno { return errno(h.p.Fstat(h.fd, &st)) })
	if e == 0 {
		toAttr(&st, &out.Attr)
	}
	return e
}

func (h *handle) Allocate(ctx context.Context, off uint64, size uint64, mode uint32) syscall.Errno {
	return h.do(ctx, "fallocate", func() syscall.Errno {
		return errno(h.p.Fallocate(h.fd, mode, int64(off), int64(size)))
	})
}

func (h *handle) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	var r int64
	e := h.do(ctx, "lseek", func() syscall.Errno {
		var err error
		r, err = h.p.Seek(h.fd, int64(off), int(whence))
		return errno(err)
	})
	return uint64(r), e
}

// Options are what Mount takes beyond the server and the mount point.
type Options struct {
	// Debug logs every FUSE request.
	Debug bool
}

// Mount serves s at dir and returns the FUSE server (Unmount it, Wait on it).
// A stale mount at dir (a killed run's: "transport endpoint is not
// connected") is unmounted first and said so on stderr; a missing
// /dev/fuse is an error naming what is needed.
func Mount(s *Server, dir string, o Options) (*fuse.Server, error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("/dev/fuse: %v: load the fuse kernel module (modprobe fuse) or give the container /dev/fuse", err)
	}
	if _, err := os.Stat(dir); err != nil && errno(unwrapErrno(err)) == syscall.ENOTCONN {
		fmt.Fprintf(os.Stderr, "iosim mount: %s is a stale mount (a killed run's); unmounting it\n", dir)
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			return nil, fmt.Errorf("%s: stale mount: unmount: %v", dir, err)
		}
	}
	var z = new(int64)
	_ = z
	to := new(durationZero)
	opts := &fs.Options{
		EntryTimeout:    &to.d,
		AttrTimeout:     &to.d,
		NegativeTimeout: &to.d,
		MountOptions: fuse.MountOptions{
			FsName:        "iosim",
			Name:          "iosim",
			DirectMount:   os.Geteuid() == 0,
			Debug:         o.Debug,
			DisableXAttrs: false,
			MaxWrite:      1 << 20,
			// A shared mapping of a direct-I/O file (SQLite's -shm) is allowed;
			// its dirty pages reach the model as writes at writeback.
			ExtraCapabilities: fuse.CAP_DIRECT_IO_ALLOW_MMAP,
		},
	}
	srv, err := fs.Mount(dir, s.Root(), opts)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %v (as non-root, fusermount3 from Debian's fuse3 is needed)", dir, err)
	}
	return srv, nil
}

func unwrapErrno(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

type durationZero struct{ d time.Duration }

func statfs(p *sim.Process, name string, st *unix.Statfs_t) error {
	return p.Syscall(sim.Call{Nr: sim.SYS_STATFS, Path: name, Obj: st}).Err()
}

func lgetxattr(p *sim.Process, name, attr string, dest []byte) (int, error) {
	r := p.Syscall(sim.Call{Nr: sim.SYS_LGETXATTR, Path: name, Path2: attr, Buf: dest, Args: [6]int64{3: int64(len(dest))}})
	return int(r.Ret), r.Err()
}

func llistxattr(p *sim.Process, name string, dest []byte) (int, error) {
	r := p.Syscall(sim.Call{Nr: sim.SYS_LLISTXATTR, Path: name, Buf: dest, Args: [6]int64{2: int64(len(dest))}})
	return int(r.Ret), r.Err()
}

package crash

import (
	"fmt"
	"path"
	"strings"
	"syscall"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// Op is a call of the explored program that changed what could become durable
// (or, with EveryCall, any call): the unit in which reports name what a crash
// lost or reordered.
type Op struct {
	Index int    `json:"index"`          // order among the recorded calls
	File  string `json:"file,omitempty"` // trace file ("" for a Go workload)
	Line  int    `json:"line"`           // trace line (a Go workload: call number)
	Call  string `json:"call"`           // syscall (or afero method) name
	Path  string `json:"path,omitempty"`

	seq0, seq1 uint64 // the pending changes it made have Seq in (seq0, seq1]
	write      bool   // a buffered data write: its size change is delayed allocation's
}

func (o Op) String() string {
	s := fmt.Sprintf("line %d: %s", o.Line, o.Call)
	if o.File != "" {
		s = fmt.Sprintf("%s:%d: %s", path.Base(o.File), o.Line, o.Call)
	}
	if o.Path != "" {
		s += " " + o.Path
	}
	return s
}

// callInfo is what the explorer learns of a call before it runs.
type callInfo struct {
	name     string
	path     string
	ino      *vfs.Inode // the fd's (or path's) inode, when there is one
	sync     syncKind
	inFlight bool      // the synced inode had changes in flight (ext4 then commits the running transaction)
	file     *sim.File // an O_SYNC/O_DSYNC write's description
	off      int64     // and where it wrote (set after the call)
	n        int64
	aio      []*vfs.Inode // io_submit: per iocb, the inode an fsync/fdsync iocb syncs
	events   bool         // io_getevents: completions acknowledge what they did
	acked    bool         // an AIO fsync completion acknowledged a file (set after the call)
	stdout   bool
	write    bool // data write (buffered unless O_SYNC/O_DSYNC)
	rename   *renameInfo
	closing  bool // close of the last fd: auto_da_alloc's release
	truncTo  bool // truncate to zero (ftruncate/truncate 0, open O_TRUNC, creat)
}

type syncKind uint8

const (
	syncNone   syncKind = iota
	syncFile            // fsync, fdatasync, O_SYNC/O_DSYNC write: the inode
	syncAll             // sync, syncfs
	syncCommit          // msync(MS_SYNC), sync_file_range...: commits the journal, no promise recorded
)

type renameInfo struct {
	src, dst   string // resolved absolute paths
	oldContent [][]byte
	replacing  bool
}

// resolveAt resolves p as an *at call's (dirfd, path) pair would, without
// following a final symlink; nil if it does not exist.
func resolveAt(t *sim.Task, dirfd int64, p string) *vfs.Inode {
	base := dirBase(t, dirfd, p)
	if base == nil {
		return nil
	}
	ino, err := base.Resolve(p, false)
	if err != nil {
		return nil
	}
	return ino
}

func dirBase(t *sim.Task, dirfd int64, p string) *vfs.Inode {
	if strings.HasPrefix(p, "/") || dirfd == atFdcwd {
		if strings.HasPrefix(p, "/") {
			return t.Kernel().FS().Root()
		}
		return t.Group().Cwd()
	}
	if f := t.File(int(dirfd)); f != nil {
		return f.Inode()
	}
	return nil
}

// absPath is p made absolute against (dirfd, cwd), lexically.
func absPath(t *sim.Task, dirfd int64, p string) string {
	if strings.HasPrefix(p, "/") {
		return path.Clean(p)
	}
	if b := dirBase(t, dirfd, p); b != nil {
		return path.Join(b.Path(), p)
	}
	return p
}

const atFdcwd = -100

func fdInode(t *sim.Task, fd int64) *vfs.Inode {
	if f := t.File(int(fd)); f != nil {
		return f.Inode()
	}
	return nil
}

func fdIsStdout(t *sim.Task, fd int64) bool {
	if fd != 1 {
		return false
	}
	f := t.File(1)
	return f != nil && (f.Inode() == nil || !f.Inode().IsRegular())
}

// inspect classifies c before it runs.
func inspect(c *sim.Call) callInfo {
	t := c.Task
	ci := callInfo{name: c.Nr.String()}
	fdPath := func(fd int64) {
		if ino := fdInode(t, fd); ino != nil {
			ci.ino, ci.path = ino, ino.Path()
		}
	}
	switch nr := c.Nr; {
	case nr.Is(sim.Writes):
		if fdIsStdout(t, c.Args[0]) {
			ci.stdout = true
			return ci
		}
		fdPath(c.Args[0])
		ci.write = true
		if f := t.File(int(c.Args[0])); f != nil && f.Flags()&syscall.O_DSYNC != 0 {
			ci.sync = syncFile
			ci.file = f
		}
	case nr.Is(sim.SyncsFile):
		fdPath(c.Args[0])
		ci.sync = syncFile
	case nr.Is(sim.SyncsAll):
		ci.sync = syncAll
	case nr == sim.SYS_MSYNC || nr == sim.SYS_SYNC_FILE_RANGE:
		ci.sync = syncCommit
	case nr == sim.SYS_IO_SUBMIT:
		if cbs, ok := c.Obj.([]*sim.Iocb); ok {
			for _, cb := range cbs {
				if cb != nil && (cb.Opcode == sim.IOCB_CMD_FSYNC || cb.Opcode == sim.IOCB_CMD_FDSYNC) {
					ci.aio = append(ci.aio, fdInode(t, int64(cb.Fd)))
					ci.sync = syncCommit // ext4 commits the running transaction
				} else {
					ci.aio = append(ci.aio, nil)
				}
			}
		}
	case nr == sim.SYS_IO_GETEVENTS:
		ci.events = true
	case nr == sim.SYS_FTRUNCATE:
		fdPath(c.Args[0])
		ci.truncTo = c.Args[1] == 0 && nonEmpty(ci.ino)
	case nr == sim.SYS_TRUNCATE:
		ci.path = absPath(t, atFdcwd, c.Path)
		ci.ino = resolveAt(t, atFdcwd, c.Path)
		ci.truncTo = c.Args[1] == 0 && nonEmpty(ci.ino)
	case nr == sim.SYS_CLOSE:
		fdPath(c.Args[0])
		ci.closing = true
	case nr == sim.SYS_OPEN:
		ci.path = absPath(t, atFdcwd, c.Path)
		ci.truncTo = c.Args[1]&syscall.O_TRUNC != 0 && nonEmpty(resolveAt(t, atFdcwd, c.Path))
	case nr == sim.SYS_OPENAT:
		ci.path = absPath(t, c.Args[0], c.Path)
		ci.truncTo = c.Args[2]&syscall.O_TRUNC != 0 && nonEmpty(resolveAt(t, c.Args[0], c.Path))
	case nr == sim.SYS_CREAT:
		ci.path = absPath(t, atFdcwd, c.Path)
		ci.truncTo = nonEmpty(resolveAt(t, atFdcwd, c.Path))
	case nr == sim.SYS_RENAME || nr == sim.SYS_RENAMEAT || nr == sim.SYS_RENAMEAT2:
		od, nd := int64(atFdcwd), int64(atFdcwd)
		if c.Nr != sim.SYS_RENAME {
			od, nd = c.Args[0], c.Args[2]
		}
		r := &renameInfo{src: absPath(t, od, c.Path), dst: absPath(t, nd, c.Path2)}
		if old := resolveAt(t, nd, c.Path2); old != nil && old.IsRegular() {
			r.replacing = true
			r.oldContent = [][]byte{readAll(old)}
			if d := t.Kernel().FS().Crash(); d != nil {
				if ino, err := d.Root().Resolve(r.dst, false); err == nil && ino.IsRegular() {
					r.oldContent = append(r.oldContent, readAll(ino))
				}
			}
		}
		ci.rename, ci.path = r, r.src+" -> "+r.dst
	case nr == sim.SYS_FALLOCATE || nr == sim.SYS_FCHMOD || nr == sim.SYS_FCHOWN || nr == sim.SYS_FSETXATTR || nr == sim.SYS_FREMOVEXATTR:
		fdPath(c.Args[0])
	default:
		if c.Path != "" {
			ci.path = absPath(t, pathDirfd(c), c.Path)
		}
	}
	return ci
}

// nonEmpty reports whether ino is a regular file with data: truncating it to
// zero runs ext4_truncate, which arms auto_da_alloc's flush at close
// (EXT4_STATE_DA_ALLOC_CLOSE); an O_TRUNC open that creates the file, or
// finds it empty, truncates nothing.
func nonEmpty(ino *vfs.Inode) bool { return ino != nil && ino.IsRegular() && ino.Size() > 0 }

// pathDirfd returns the dirfd of an *at call (in Args[0]), else AT_FDCWD.
func pathDirfd(c *sim.Call) int64 {
	if strings.HasSuffix(c.Nr.String(), "at") || c.Nr == sim.SYS_RENAMEAT2 {
		return c.Args[0]
	}
	return atFdcwd
}

// readAll returns ino's content as reads see it.
func readAll(ino *vfs.Inode) []byte {
	b := make([]byte, ino.Size())
	n, _ := ino.ReadAt(b, 0)
	return b[:n]
}

// stdoutBytes returns what a successful write of c to stdout wrote.
func stdoutBytes(c *sim.Call, n int64) []byte {
	var out []byte
	if c.Nr == sim.SYS_WRITE || c.Nr == sim.SYS_PWRITE64 {
		out = c.Buf
	} else {
		for _, v := range c.Iov {
			out = append(out, v...)
		}
	}
	if int64(len(out)) > n && n >= 0 {
		out = out[:n]
	}
	return out
}

package sim

import (
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// openat2(2)'s resolve flags (RESOLVE_*).
const (
	resolveNoXdev       = 0x01
	resolveNoMagiclinks = 0x02
	resolveNoSymlinks   = 0x04
	resolveBeneath      = 0x08
	resolveInRoot       = 0x10
	resolveCached       = 0x20
	resolveValid        = 0x3f

	openHowSizeVer0 = 24 // OPEN_HOW_SIZE_VER0
	maxSymlinks     = 40 // MAXSYMLINKS
)

// sysOpenat2 implements openat2(2) (Args: dirfd, path, how, size; Obj: the
// *unix.OpenHow). Unlike openat it checks every argument (build_open_flags): a
// size below 24 is EINVAL, above a page E2BIG; flags outside VALID_OPEN_FLAGS,
// unknown resolve flags, RESOLVE_BENEATH with RESOLVE_IN_ROOT, a mode beyond
// 07777, a mode without O_CREAT or O_TMPFILE, or O_PATH with flags other than
// O_DIRECTORY, O_NOFOLLOW and O_CLOEXEC are EINVAL; RESOLVE_CACHED with
// O_CREAT, O_TRUNC or O_TMPFILE is EAGAIN (otherwise every lookup of the model
// is cached). The path is then resolved under the resolve flags:
//
//   - RESOLVE_BENEATH: an absolute path, a ".." above dirfd, or a symlink whose
//     target is absolute or climbs above dirfd is EXDEV;
//   - RESOLVE_IN_ROOT: dirfd is the root: absolute paths and targets start there
//     and ".." stops there;
//   - RESOLVE_NO_SYMLINKS: a symlink to follow (final or not) is ELOOP;
//   - RESOLVE_NO_MAGICLINKS: a /proc/<pid>/fd/N link is ELOOP (as it is under
//     NO_SYMLINKS, and EXDEV under BENEATH and IN_ROOT);
//   - RESOLVE_NO_XDEV: the model has one file system and procfs: a path into
//     /proc is EXDEV.
//
// The rest is openat's.
func (k *Kernel) sysOpenat2(c *Call) Result {
	how, _ := c.Obj.(*unix.OpenHow)
	size := uint64(c.Args[3])
	switch {
	case size < openHowSizeVer0:
		return Fail(syscall.EINVAL)
	case size > 4096:
		return Fail(syscall.E2BIG)
	case how == nil:
		return Fail(syscall.EFAULT)
	}
	fl, res := how.Flags&^uint64(syscall.O_CLOEXEC), how.Resolve
	switch {
	case fl&^uint64(validOpenFlags) != 0, res&^resolveValid != 0,
		res&resolveBeneath != 0 && res&resolveInRoot != 0:
		return Fail(syscall.EINVAL)
	case fl&(syscall.O_CREAT|oTmpfile) != 0 && how.Mode&^0o7777 != 0,
		fl&(syscall.O_CREAT|oTmpfile) == 0 && how.Mode != 0:
		return Fail(syscall.EINVAL)
	case res&resolveCached != 0 && fl&(syscall.O_CREAT|syscall.O_TRUNC|oTmpfile) != 0:
		return Fail(syscall.EAGAIN)
	}
	flags := int(how.Flags)
	if flags&oPath != 0 && flags&^(oPath|syscall.O_DIRECTORY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC) != 0 {
		return Fail(syscall.EINVAL) // O_PATH permits only O_PATH_FLAGS
	}
	t, path, mode := c.Task, c.Path, uint32(how.Mode)
	if e := openArgsErr(path, flags); e != 0 {
		return Fail(e)
	}
	g := t.g
	limit := g.nofile.Load()
	if !g.files.hasFree(limit) {
		return Fail(syscall.EMFILE)
	}
	var f *File
	var e syscall.Errno
	if res&(resolveNoXdev|resolveNoMagiclinks|resolveNoSymlinks|resolveBeneath|resolveInRoot) == 0 {
		f, e = k.openFile(t, int(c.Args[0]), path, flags, mode)
	} else {
		f, e = k.openScoped(t, int(c.Args[0]), path, flags, mode, res)
	}
	if e != 0 {
		return Fail(e)
	}
	fd, e := g.files.alloc(f, 0, limit, flags&syscall.O_CLOEXEC != 0)
	if e != 0 {
		f.decRef()
		return Fail(e)
	}
	return Result{Ret: int64(fd)}
}

// openScoped opens path under the resolve flags res (see sysOpenat2).
func (k *Kernel) openScoped(t *Task, dirfd int, path string, flags int, mode uint32, res uint64) (*File, syscall.Errno) {
	scoped := res&(resolveBeneath|resolveInRoot) != 0
	if isProcPath(path) && !(scoped && res&resolveInRoot != 0) {
		switch {
		case res&resolveBeneath != 0:
			return nil, syscall.EXDEV // absolute
		case res&resolveNoXdev != 0:
			return nil, syscall.EXDEV
		}
		if _, rest, ok, _ := t.procFd(path); ok && rest == "" && res&(resolveNoMagiclinks|resolveNoSymlinks) != 0 {
			return nil, syscall.ELOOP
		}
		return k.openFile(t, dirfd, path, flags, mode)
	}
	if !scoped && res&resolveNoSymlinks == 0 {
		return k.openFile(t, dirfd, path, flags, mode)
	}
	root, e := t.dirOf(dirfd, path)
	if e != 0 {
		return nil, e
	}
	if path != "" && path[0] == '/' {
		if res&resolveBeneath != 0 {
			return nil, syscall.EXDEV
		}
		if res&resolveInRoot == 0 {
			root = k.fs.Root()
		} else if root, e = t.dirOf(dirfd, "."); e != 0 { // dirOf gave the cwd for an absolute path
			return nil, e
		}
	}
	follow := flags&syscall.O_NOFOLLOW == 0 && flags&(syscall.O_CREAT|syscall.O_EXCL) != syscall.O_CREAT|syscall.O_EXCL
	dir, name, e := walkScoped(root, path, res, follow)
	if e != 0 {
		return nil, e
	}
	return k.openFileIn(t, dir, name, flags, mode)
}

// walkScoped resolves path from root under the resolve flags res down to the
// directory holding its last component and that component's name ("." when the
// path ends at a directory; the path's trailing slash is kept), following symlinks itself
// as scoped lookups do (follow: the last component's too).
func walkScoped(root *vfs.Inode, path string, res uint64, follow bool) (*vfs.Inode, string, syscall.Errno) {
	stack := []*vfs.Inode{root}
	trailing := strings.HasSuffix(path, "/")
	comps := strings.FieldsFunc(path, func(r rune) bool { return r == '/' })
	links := 0
	for len(comps) > 0 {
		c := comps[0]
		comps = comps[1:]
		last := len(comps) == 0
		cur := stack[len(stack)-1]
		switch c {
		case ".":
			if last {
				return cur, ".", 0
			}
			continue
		case "..":
			switch {
			case len(stack) > 1:
				stack = stack[:len(stack)-1]
			case res&resolveBeneath != 0:
				return nil, "", syscall.EXDEV
			case res&resolveInRoot != 0:
			default:
				stack[0] = cur.Parent()
			}
			if last {
				return stack[len(stack)-1], ".", 0
			}
			continue
		}
		ino, err := cur.Resolve(c, false)
		if err != nil || ino == nil {
			if last {
				return cur, c + slash(trailing), 0 // the open decides (O_CREAT)
			}
			if err == nil {
				err = syscall.ENOENT
			}
			return nil, "", errnoOf(err)
		}
		if ino.IsSymlink() && (!last || follow || trailing) {
			if res&resolveNoSymlinks != 0 {
				return nil, "", syscall.ELOOP
			}
			if links++; links > maxSymlinks {
				return nil, "", syscall.ELOOP
			}
			target := ino.Target()
			if strings.HasPrefix(target, "/") {
				if res&resolveBeneath != 0 {
					return nil, "", syscall.EXDEV
				}
				stack = stack[:1]
				if res&resolveInRoot == 0 {
					stack[0] = root.FS().Root()
				}
			}
			comps = append(strings.FieldsFunc(target, func(r rune) bool { return r == '/' }), comps...)
			continue
		}
		if last {
			return cur, c + slash(trailing), 0
		}
		if !ino.IsDir() {
			return nil, "", syscall.ENOTDIR
		}
		stack = append(stack, ino)
	}
	return stack[len(stack)-1], ".", 0
}

func slash(trailing bool) string {
	if trailing {
		return "/"
	}
	return ""
}

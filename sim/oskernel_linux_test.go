//go:build linux

package sim_test

// Helpers that run one syscall sequence on the model (*sim.Process) and on the real
// kernel of this machine (osKernel), so that kernel_diff_linux_test.go and
// errpaths_test.go can compare every return value and errno.
//
// # The real side
//
// osKernel runs each call on Linux, inside a fresh directory on an ext4 file system
// that plays the model's "/". Path arguments are rewritten to resolve under that
// directory: an absolute path "/a/b" becomes "a/b" relative to an O_PATH descriptor
// of the directory, passed to the *at form of the call (openat, fstatat, unlinkat,
// renameat, mkdirat, symlinkat, readlinkat); a relative path resolves against the
// same descriptor (the model's cwd is "/"). So path lengths are the model's minus
// the leading slash. Two things do not translate and the tests avoid them: ".."
// at the top ("/.." is "/" in the model but the directory's parent here) and
// absolute symlink targets (they would resolve against the real root). truncate(2)
// has no *at form and gets the directory's real path as a prefix.
//
// # fd numbers
//
// The test process owns fds of its own (0-2, the Go runtime's epoll and eventfd,
// descriptors inherited from whatever started the test), so the first fd the kernel
// hands out is not the model's. We make the two fd tables identical at and above a
// baseline rather than map numbers through a bijection: a bijection cannot express
// dup2(fd, 7) or F_DUPFD with a minimum, which name an fd number the other side has
// never returned, and it would hide a model that reuses the wrong free slot. So:
//
//   - on the kernel, base is one more than the highest fd open in the process, and
//     every hole below base is plugged with a /dev/null descriptor, so lowest-free
//     allocation starts at base;
//   - on the model, fds 0..base-1 are taken by placeholder opens of "/".
//
// The model kernel gets the process's RLIMIT_NOFILE soft limit (Go raises it to
// the hard limit at start-up, 20000 here), so limits and EBADF/EINVAL/EMFILE
// boundaries are at the same numbers too.
//
// From then on the kernel and the model must return the same fd numbers, and the
// tests compare them with ==, which also checks lowest-free reuse after close,
// dup2/dup3 targets and F_DUPFD minimums. Sequences name only fds >= base, negative
// fds and fds beyond RLIMIT_NOFILE; osKernel refuses any fd in [0, base) (test bug)
// so that a generated close or dup2 can never touch the test binary's own fds.
// Tests that use this must not run in parallel with anything that opens fds; none
// of them calls t.Parallel, and Go runs parallel tests only after the sequential
// ones have finished.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// failer is what the helpers need of *testing.T and *rapid.T.
type failer interface {
	Helper()
	Fatalf(format string, args ...any)
	Errorf(format string, args ...any)
	Logf(format string, args ...any)
}

// sys is the syscall surface the tests drive: the names and signatures of
// golang.org/x/sys/unix, implemented by *sim.Process and by osKernel.
type sys interface {
	Open(path string, flags int, mode uint32) (int, error)
	Openat(dirfd int, path string, flags int, mode uint32) (int, error)
	Creat(path string, mode uint32) (int, error)
	Read(fd int, p []byte) (int, error)
	Write(fd int, p []byte) (int, error)
	Pread(fd int, p []byte, off int64) (int, error)
	Pwrite(fd int, p []byte, off int64) (int, error)
	Readv(fd int, iovs [][]byte) (int, error)
	Writev(fd int, iovs [][]byte) (int, error)
	Preadv(fd int, iovs [][]byte, off int64) (int, error)
	Pwritev(fd int, iovs [][]byte, off int64) (int, error)
	Seek(fd int, off int64, whence int) (int64, error)
	FcntlInt(fd uintptr, cmd, arg int) (int, error)
	Dup(fd int) (int, error)
	Dup2(oldfd, newfd int) error
	Dup3(oldfd, newfd, flags int) error
	Fsync(fd int) error
	Fdatasync(fd int) error
	Ftruncate(fd int, length int64) error
	Truncate(path string, length int64) error
	Fallocate(fd int, mode uint32, off, length int64) error
	Fadvise(fd int, offset, length int64, advice int) error
	Fstat(fd int, st *unix.Stat_t) error
	Stat(path string, st *unix.Stat_t) error
	Lstat(path string, st *unix.Stat_t) error
	Unlink(path string) error
	Rename(oldpath, newpath string) error
	Mkdir(path string, mode uint32) error
	Rmdir(path string) error
	Symlink(target, linkpath string) error
	Readlink(path string, buf []byte) (int, error)
	Umask(mask int) int
	Close(fd int) error
}

var (
	_ sys = (*sim.Process)(nil)
	_ sys = (*osKernel)(nil)
)

// ext4Dir returns a new empty directory on an ext4 file system, removed at the
// end of the test, or skips the test if there is none.
func ext4Dir(t testing.TB) string {
	t.Helper()
	d, why := ext4DirOrWhy(t)
	if d == "" {
		t.Skip(why)
	}
	return d
}

// ext4DirOrWhy returns a new empty directory on an ext4 file system, removed at
// the end of the test, or "" and why there is none.
func ext4DirOrWhy(t testing.TB) (string, string) {
	t.Helper()
	isExt4 := func(d string) bool {
		var s unix.Statfs_t
		return unix.Statfs(d, &s) == nil && s.Type == unix.EXT4_SUPER_MAGIC
	}
	tmp := t.TempDir()
	if isExt4(tmp) {
		return tmp, ""
	}
	for _, parent := range []string{"/work", "/root", "/var/tmp"} {
		if !isExt4(parent) {
			continue
		}
		d, err := os.MkdirTemp(parent, "iosim-kdiff-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d, ""
	}
	return "", fmt.Sprintf("no ext4 directory to compare the model with the kernel (%s and /work, /root, /var/tmp are not ext4)", tmp)
}

// host is the test process's side of the fd arrangement: the ext4 directory that
// holds one subdirectory per run, the baseline fd, and the placeholders below it.
type host struct {
	t      testing.TB
	dir    string
	base   int   // first fd the sequences use
	rootfd int   // the reserved slot (< base) that holds the current run's root
	plugs  []int // fds opened to plug holes below base
	nofile int   // the process's RLIMIT_NOFILE soft limit
	umask  int   // the umask to restore
	runs   int
}

// newHost prepares the process for kernel runs. It must be called from a test that
// does not run in parallel with others.
func newHost(t testing.TB) *host {
	t.Helper()
	return newHostIn(t, ext4Dir(t))
}

// newHostIn is newHost in the ext4 directory dir.
func newHostIn(t testing.TB, dir string) *host {
	t.Helper()
	// Let the Go runtime create its netpoller (epoll fd, eventfd) now, so that it
	// does not take an fd number in the middle of a sequence.
	if f, err := os.Open(dir); err == nil {
		f.Close()
	}
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		t.Fatal(err)
	}
	h := &host{t: t, dir: dir, nofile: int(rl.Cur), umask: unix.Umask(0o022)}
	t.Cleanup(h.close)

	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	maxfd := -1
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// ReadDir's own fd shows up too; it is closed by now and gets plugged below.
		maxfd = max(maxfd, n)
	}
	null, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.plugs = append(h.plugs, null)
	maxfd = max(maxfd, null)
	// One more slot for the run's root directory fd.
	h.rootfd = maxfd + 1
	if err := unix.Dup3(null, h.rootfd, unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	h.plugs = append(h.plugs, h.rootfd)
	h.base = h.rootfd + 1
	for fd := 0; fd < h.base; fd++ {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil {
			continue
		}
		if err := unix.Dup3(null, fd, unix.O_CLOEXEC); err != nil {
			t.Fatal(err)
		}
		h.plugs = append(h.plugs, fd)
	}
	if _, err := unix.FcntlInt(uintptr(h.base), unix.F_GETFD, 0); err == nil {
		t.Skipf("fd %d appeared while arranging the fd table; something runs concurrently", h.base)
	}
	return h
}

func (h *host) close() {
	for _, fd := range h.plugs {
		unix.Close(fd)
	}
	h.plugs = nil
	unix.Umask(h.umask)
}

// pair is one run: a fresh model process and a fresh kernel directory, with
// identical fd tables from base up.
type pair struct {
	h   *host
	m   *sim.Process
	k   *osKernel
	fs  *vfs.FS
	krn *sim.Kernel
}

// newPair starts a run. tb receives the failures; done must be called at its end
// (it closes every fd the run opened on the kernel and removes its directory).
func (h *host) newPair(tb failer) *pair {
	tb.Helper()
	h.runs++
	dir := filepath.Join(h.dir, fmt.Sprintf("run%d", h.runs))
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatalf("%v", err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	// fd is base (all lower slots are taken); move it to the reserved slot.
	if err := unix.Dup3(fd, h.rootfd, unix.O_CLOEXEC); err != nil {
		tb.Fatalf("%v", err)
	}
	unix.Close(fd)
	k := &osKernel{tb: tb, dir: dir, root: h.rootfd, base: h.base, opened: map[int]bool{}}

	fs := vfs.New()
	krn := sim.New(fs, sim.WithNofile(h.nofile))
	m := krn.Spawn()
	// Take the model's fds below base.
	for {
		fd, err := m.Open("/", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			tb.Fatalf("model: placeholder open: %v", err)
		}
		if fd >= h.base-1 {
			if fd != h.base-1 {
				tb.Fatalf("model: placeholder fd %d, want %d", fd, h.base-1)
			}
			break
		}
	}
	m.Umask(0o022)
	k.Umask(0o022)
	return &pair{h: h, m: m, k: k, fs: fs, krn: krn}
}

// done closes the run's kernel fds and removes its directory.
func (p *pair) done() {
	p.k.closeAll()
	os.RemoveAll(p.k.dir)
}

// osKernel runs the sys methods on the real kernel, inside dir. See the comment at
// the top of the file.
type osKernel struct {
	tb     failer
	dir    string
	root   int // O_PATH fd of dir: the model's "/"
	base   int
	opened map[int]bool // fds >= base that the run may have opened
}

// fd checks that fd is not one of the test process's own.
func (k *osKernel) fd(fd int) int {
	if fd >= 0 && fd < k.base {
		k.tb.Fatalf("test bug: fd %d belongs to the test process (sequences use fds >= %d)", fd, k.base)
	}
	return fd
}

func (k *osKernel) got(fd int, err error) (int, error) {
	if err == nil && fd >= 0 {
		k.opened[fd] = true
	}
	return fd, err
}

func (k *osKernel) closeAll() {
	fds := make([]int, 0, len(k.opened))
	for fd := range k.opened {
		fds = append(fds, fd)
	}
	sort.Ints(fds)
	for _, fd := range fds {
		if fd >= k.base {
			unix.Close(fd)
		}
	}
	k.opened = map[int]bool{}
}

// at maps the model's (dirfd, path) to the kernel's.
func (k *osKernel) at(dirfd int, path string) (int, string) {
	if strings.HasPrefix(path, "/") {
		rel := strings.TrimLeft(path, "/")
		if rel == "" {
			rel = "."
		}
		return k.root, rel
	}
	if dirfd == unix.AT_FDCWD {
		return k.root, path
	}
	return k.fd(dirfd), path
}

// real is the real path of a model path, for the calls that have no *at form.
func (k *osKernel) real(path string) string {
	if strings.HasPrefix(path, "/") {
		return k.dir + path
	}
	return k.dir + "/" + path
}

func (k *osKernel) Open(path string, flags int, mode uint32) (int, error) {
	return k.Openat(unix.AT_FDCWD, path, flags, mode)
}

func (k *osKernel) Openat(dirfd int, path string, flags int, mode uint32) (int, error) {
	d, p := k.at(dirfd, path)
	return k.got(unix.Openat(d, p, flags, mode))
}

func (k *osKernel) Creat(path string, mode uint32) (int, error) {
	return k.Open(path, unix.O_CREAT|unix.O_WRONLY|unix.O_TRUNC, mode)
}

func (k *osKernel) Read(fd int, p []byte) (int, error) { return unix.Read(k.fd(fd), p) }

func (k *osKernel) Write(fd int, p []byte) (int, error) { return unix.Write(k.fd(fd), p) }

func (k *osKernel) Pread(fd int, p []byte, off int64) (int, error) {
	return unix.Pread(k.fd(fd), p, off)
}

func (k *osKernel) Pwrite(fd int, p []byte, off int64) (int, error) {
	return unix.Pwrite(k.fd(fd), p, off)
}

func (k *osKernel) Readv(fd int, iovs [][]byte) (int, error) { return unix.Readv(k.fd(fd), iovs) }

func (k *osKernel) Writev(fd int, iovs [][]byte) (int, error) {
	return unix.Writev(k.fd(fd), iovs)
}

func (k *osKernel) Preadv(fd int, iovs [][]byte, off int64) (int, error) {
	return unix.Preadv(k.fd(fd), iovs, off)
}

func (k *osKernel) Pwritev(fd int, iovs [][]byte, off int64) (int, error) {
	return unix.Pwritev(k.fd(fd), iovs, off)
}

func (k *osKernel) Seek(fd int, off int64, whence int) (int64, error) {
	return unix.Seek(k.fd(fd), off, whence)
}

func (k *osKernel) FcntlInt(fd uintptr, cmd, arg int) (int, error) {
	r, err := unix.FcntlInt(uintptr(k.fd(int(fd))), cmd, arg)
	if cmd == unix.F_DUPFD || cmd == unix.F_DUPFD_CLOEXEC {
		return k.got(r, err)
	}
	return r, err
}

func (k *osKernel) Dup(fd int) (int, error) { return k.got(unix.Dup(k.fd(fd))) }

// Dup2 is golang.org/x/sys/unix.Dup2, which on linux is dup3(old, new, 0): it
// fails with EINVAL when old == new, where the dup2(2) syscall returns new. The
// model's facade mirrors x/sys; rawDup2 compares the syscall itself.
func (k *osKernel) Dup2(oldfd, newfd int) error {
	err := unix.Dup2(k.fd(oldfd), k.fd(newfd))
	k.got(newfd, err)
	return err
}

// rawDup2 is the dup2(2) system call.
func (k *osKernel) rawDup2(oldfd, newfd int) (int, error) {
	k.fd(oldfd)
	k.fd(newfd)
	r, _, e := unix.Syscall(unix.SYS_DUP2, uintptr(oldfd), uintptr(newfd), 0)
	if e != 0 {
		return -1, e
	}
	k.got(newfd, nil)
	return int(r), nil
}

func (k *osKernel) Dup3(oldfd, newfd, flags int) error {
	err := unix.Dup3(k.fd(oldfd), k.fd(newfd), flags)
	k.got(newfd, err)
	return err
}

func (k *osKernel) Fsync(fd int) error     { return unix.Fsync(k.fd(fd)) }
func (k *osKernel) Fdatasync(fd int) error { return unix.Fdatasync(k.fd(fd)) }

func (k *osKernel) Ftruncate(fd int, length int64) error {
	return unix.Ftruncate(k.fd(fd), length)
}

func (k *osKernel) Truncate(path string, length int64) error {
	return unix.Truncate(k.real(path), length)
}

func (k *osKernel) Fallocate(fd int, mode uint32, off, length int64) error {
	return unix.Fallocate(k.fd(fd), mode, off, length)
}

func (k *osKernel) Fadvise(fd int, offset, length int64, advice int) error {
	return unix.Fadvise(k.fd(fd), offset, length, advice)
}

func (k *osKernel) Fstat(fd int, st *unix.Stat_t) error { return unix.Fstat(k.fd(fd), st) }

func (k *osKernel) Stat(path string, st *unix.Stat_t) error {
	d, p := k.at(unix.AT_FDCWD, path)
	return unix.Fstatat(d, p, st, 0)
}

func (k *osKernel) Lstat(path string, st *unix.Stat_t) error {
	d, p := k.at(unix.AT_FDCWD, path)
	return unix.Fstatat(d, p, st, unix.AT_SYMLINK_NOFOLLOW)
}

func (k *osKernel) Unlink(path string) error {
	d, p := k.at(unix.AT_FDCWD, path)
	return unix.Unlinkat(d, p, 0)
}

func (k *osKernel) Rename(oldpath, newpath string) error {
	d1, p1 := k.at(unix.AT_FDCWD, oldpath)
	d2, p2 := k.at(unix.AT_FDCWD, newpath)
	return unix.Renameat(d1, p1, d2, p2)
}

func (k *osKernel) Mkdir(path string, mode uint32) error {
	d, p := k.at(unix.AT_FDCWD, path)
	return unix.Mkdirat(d, p, mode)
}

// Rmdir refuses "/": Linux answers EBUSY, but unlinkat(root, ".", AT_REMOVEDIR)
// answers EINVAL, and rmdir of the real directory would succeed.
func (k *osKernel) Rmdir(path string) error {
	if strings.Trim(path, "/") == "" && path != "" {
		k.tb.Fatalf("test bug: rmdir(%q) does not translate to the kernel", path)
	}
	d, p := k.at(unix.AT_FDCWD, path)
	return unix.Unlinkat(d, p, unix.AT_REMOVEDIR)
}

func (k *osKernel) Symlink(target, linkpath string) error {
	d, p := k.at(unix.AT_FDCWD, linkpath)
	return unix.Symlinkat(target, d, p)
}

func (k *osKernel) Readlink(path string, buf []byte) (int, error) {
	d, p := k.at(unix.AT_FDCWD, path)
	return unix.Readlinkat(d, p, buf)
}

// Umask sets the process's umask (the host restores it at the end of the test).
func (k *osKernel) Umask(mask int) int { return unix.Umask(mask) }

func (k *osKernel) Close(fd int) error {
	err := unix.Close(k.fd(fd))
	if err == nil {
		delete(k.opened, fd)
	}
	return err
}

// errnoOf returns err as an errno, and whether it was one (nil is errno 0). The
// model must return bare syscall.Errno values.
func errnoOf(err error) (syscall.Errno, bool) {
	if err == nil {
		return 0, true
	}
	var e syscall.Errno
	if errors.As(err, &e) {
		_, bare := err.(syscall.Errno)
		return e, bare
	}
	return 0, false
}

// errName prints an errno as its Linux name (EBADF), or "ok".
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	if e, ok := errnoOf(err); ok {
		if n := unix.ErrnoName(e); n != "" {
			return n
		}
		return fmt.Sprintf("errno %d", int(e))
	}
	return fmt.Sprintf("non-errno error %T %q", err, err)
}

// fiemap layout (linux/fiemap.h): a 32-byte header, then 56-byte extents.
const (
	fsIocFiemap         = 0xC020660B // _IOWR('f', 11, struct fiemap)
	fiemapFlagSync      = 0x1        // FIEMAP_FLAG_SYNC
	fiemapExtentUnwrit  = 0x800      // FIEMAP_EXTENT_UNWRITTEN
	fiemapHeaderSize    = 32
	fiemapExtentSize    = 56
	fiemapMaxExtentsReq = 512
)

// fiemap returns, for a real fd (after writeback: FIEMAP_FLAG_SYNC), how many extents ext4 keeps (physical: the
// extents as FIEMAP reports them) and how many there would be if extents that are
// adjacent in the file and of the same kind (written or unwritten) were one
// (logical): the model's count, which assumes physical contiguity; and a
// description of the extents for failure messages.
func fiemap(fd int) (physical, logical int, desc string, err error) {
	ext, err := fiemapExtents(fd, fiemapFlagSync)
	if err != nil {
		return 0, 0, "", err
	}
	var sb strings.Builder
	var end uint64
	var unwr bool
	for i, x := range ext {
		u := x.flags&fiemapExtentUnwrit != 0
		if i == 0 || x.logical != end || u != unwr {
			logical++
		}
		end, unwr = x.logical+x.length, u
		fmt.Fprintf(&sb, "[%d+%d phys %d flags %#x] ", x.logical, x.length, x.physical, x.flags)
	}
	return len(ext), logical, sb.String(), nil
}

// extent is one struct fiemap_extent.
type extent struct {
	logical, physical, length uint64
	flags                     uint32
}

// fiemapExtents returns the extents of a real fd (FS_IOC_FIEMAP with flags).
func fiemapExtents(fd int, flags uint32) ([]extent, error) {
	buf := make([]byte, fiemapHeaderSize+fiemapMaxExtentsReq*fiemapExtentSize)
	le := binary.LittleEndian
	le.PutUint64(buf[0:], 0)          // fm_start
	le.PutUint64(buf[8:], ^uint64(0)) // fm_length
	le.PutUint32(buf[16:], flags)     // fm_flags
	le.PutUint32(buf[24:], fiemapMaxExtentsReq)
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), fsIocFiemap, uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
		return nil, e
	}
	n := int(le.Uint32(buf[20:])) // fm_mapped_extents
	ext := make([]extent, n)
	for i := range ext {
		x := buf[fiemapHeaderSize+i*fiemapExtentSize:]
		ext[i] = extent{logical: le.Uint64(x[0:]), physical: le.Uint64(x[8:]), length: le.Uint64(x[16:]), flags: le.Uint32(x[40:])}
	}
	return ext, nil
}

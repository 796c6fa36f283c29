package sim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// openat2er is what the openat2 test needs of the kernel and of the model.
type openat2er interface {
	Openat2(dirfd int, path string, how *unix.OpenHow) (int, error)
	Close(fd int) error
	FcntlInt(fd uintptr, cmd, arg int) (int, error)
	Fstat(fd int, st *unix.Stat_t) error
}

type realOpenat2 struct{}

func (realOpenat2) Openat2(d int, p string, h *unix.OpenHow) (int, error) {
	return unix.Openat2(d, p, h)
}
func (realOpenat2) Close(fd int) error                         { return unix.Close(fd) }
func (realOpenat2) FcntlInt(fd uintptr, c, a int) (int, error) { return unix.FcntlInt(fd, c, a) }
func (realOpenat2) Fstat(fd int, st *unix.Stat_t) error        { return unix.Fstat(fd, st) }

// openat2Script opens paths of the tree below root (an O_PATH fd of "top":
// top/sub/f, top/f, top/up -> ../out, top/abs -> /etc, top/rel -> sub/f,
// top/loop -> loop, and out beside top) under each resolve flag; one line per
// call: the errno, or the file's type, size and F_GETFL.
func openat2Script(s openat2er, root int) string {
	var out strings.Builder
	open := func(path string, flags, mode, resolve uint64) {
		fd, err := s.Openat2(root, path, &unix.OpenHow{Flags: flags | unix.O_CLOEXEC, Mode: mode, Resolve: resolve})
		fmt.Fprintf(&out, "%s flags=%#x mode=%o resolve=%#x: ", path, flags, mode, resolve)
		if err != nil {
			fmt.Fprintln(&out, unix.ErrnoName(err.(syscall.Errno)))
			return
		}
		var st unix.Stat_t
		_ = s.Fstat(fd, &st)
		fl, _ := s.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		fmt.Fprintf(&out, "mode=%o size=%d flags=%#x\n", st.Mode&unix.S_IFMT, st.Size, fl)
		_ = s.Close(fd)
	}
	const (
		beneath = unix.RESOLVE_BENEATH
		inRoot  = unix.RESOLVE_IN_ROOT
		noSym   = unix.RESOLVE_NO_SYMLINKS
		noMagic = unix.RESOLVE_NO_MAGICLINKS
		noXdev  = unix.RESOLVE_NO_XDEV
		cached  = 0x20 // RESOLVE_CACHED (x/sys/unix lacks it)
	)
	for _, r := range []uint64{0, beneath, inRoot, noSym, noMagic, noXdev, cached} {
		for _, p := range []string{"f", "sub/f", "sub/../f", "..", "../out", "up", "rel", "abs", "/f", "sub/", "f/", ".", "loop", "sub/../../top/f"} {
			if r&(beneath|inRoot) == 0 && (p == "abs" || p == "/f") {
				continue // the host's root, not the tree's
			}
			open(p, unix.O_RDONLY, 0, r)
		}
		open("rel", unix.O_RDONLY|unix.O_NOFOLLOW, 0, r)
		open("rel", unix.O_PATH|unix.O_NOFOLLOW, 0, r)
	}
	// Argument checks.
	open("f", unix.O_RDONLY, 0o644, 0)
	open("new", unix.O_RDWR|unix.O_CREAT, 0o640, 0)
	open("new2", unix.O_RDWR|unix.O_CREAT, 0o10644, 0)
	open("f", 1<<40, 0, 0)
	open("f", 0x4000000, 0, 0)
	open("f", unix.O_RDONLY, 0, 0x40)
	open("f", unix.O_RDONLY, 0, beneath|inRoot)
	open("f", unix.O_RDWR|unix.O_TRUNC, 0, cached)
	open("new3", unix.O_RDWR|unix.O_CREAT, 0o600, cached)
	open("f", unix.O_PATH|unix.O_RDWR|unix.O_TRUNC, 0, 0)
	open("sub/new4", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL, 0o600, beneath)
	open("../new5", unix.O_RDWR|unix.O_CREAT, 0o600, beneath)
	open("", unix.O_RDONLY, 0, 0)
	return out.String()
}

// TestOpenat2MatchesKernel runs openat2Script on this machine's kernel and on
// the model: the same answers.
func TestOpenat2MatchesKernel(t *testing.T) {
	base := t.TempDir()
	mk := func(mkdir func(string) error, write func(string, string) error, symlink func(string, string) error) {
		require.NoError(t, mkdir("top"))
		require.NoError(t, mkdir("top/sub"))
		require.NoError(t, mkdir("out"))
		require.NoError(t, write("top/f", "top"))
		require.NoError(t, write("top/sub/f", "sub-f"))
		require.NoError(t, write("out/x", "x"))
		require.NoError(t, write("f", "outside"))
		require.NoError(t, symlink("../out", "top/up"))
		require.NoError(t, symlink("/etc", "top/abs"))
		require.NoError(t, symlink("sub/f", "top/rel"))
		require.NoError(t, symlink("loop", "top/loop"))
	}
	in := func(p string) string { return filepath.Join(base, p) }
	mk(func(p string) error { return os.Mkdir(in(p), 0o755) },
		func(p, d string) error { return os.WriteFile(in(p), []byte(d), 0o644) },
		func(t, l string) error { return os.Symlink(t, in(l)) })
	root, err := unix.Open(in("top"), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(root)
	if _, err := unix.Openat2(root, "f", &unix.OpenHow{Flags: unix.O_RDONLY | unix.O_CLOEXEC}); err == unix.ENOSYS {
		t.Skip("no openat2 here")
	}
	want := openat2Script(realOpenat2{}, root)

	p := sim.New(vfs.New()).Spawn()
	write := func(path, d string) error {
		fd, err := p.Open("/"+path, unix.O_CREAT|unix.O_WRONLY, 0o644)
		if err != nil {
			return err
		}
		_, err = p.Write(fd, []byte(d))
		p.Close(fd)
		return err
	}
	mk(func(path string) error { return p.Mkdir("/"+path, 0o755) }, write,
		func(t, l string) error { return p.Symlink(t, "/"+l) })
	mroot, err := p.Open("/top", unix.O_PATH|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	got := openat2Script(p, mroot)
	require.Equal(t, cachedAsUncached(want), cachedAsUncached(got))
	require.Contains(t, want, "EXDEV")
	require.Contains(t, want, "ELOOP")
}

// cachedAsUncached rewrites each RESOLVE_CACHED line of an openat2 script's
// output whose result is EAGAIN into the result of the same call without
// RESOLVE_CACHED. openat2(2): with RESOLVE_CACHED the lookup "fails with
// EAGAIN" when it cannot be done from the cache alone; whether it can
// depends on what the host's dentry cache holds, which the kernel does not
// promise, so the test compares what it does promise: EAGAIN or the
// uncached answer. Opens that must fail with EAGAIN whatever the cache
// holds (O_CREAT, O_TRUNC) have no uncached line and keep it.
func cachedAsUncached(out string) string {
	lines := strings.Split(out, "\n")
	uncached := map[string]string{}
	for _, l := range lines {
		if k, res, ok := strings.Cut(l, " resolve=0x0: "); ok {
			uncached[k] = res
		}
	}
	for i, l := range lines {
		if k, res, ok := strings.Cut(l, " resolve=0x20: "); ok && res == "EAGAIN" {
			if u, ok := uncached[k]; ok {
				lines[i] = k + " resolve=0x20: " + u
			}
		}
	}
	return strings.Join(lines, "\n")
}

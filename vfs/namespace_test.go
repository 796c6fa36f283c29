package vfs_test

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/faultrule"
	"github.com/iosim/iosim/vfs"
)

// The namespace edge cases are written as small scripts, one step a line:
//
//	op arg... [= ERRNO]
//
// Without "= ERRNO" the step must succeed. The same scripts run against the model
// (here) and against the real kernel in a temporary directory on ext4
// (namespace_linux_test.go), so every expected errno is the kernel's. Paths are
// relative to a working directory; in arguments, {c*N} expands to c repeated N
// times and {s*N} to "s/" repeated N times, for the length limits.
//
// Ops:
//
//	mkdir P | rmdir P | unlink P | create P | symlink TARGET P | link OLD NEW
//	rename OLD NEW | open P FLAGS (rdonly|wronly|rdwr|creat|excl|trunc|nofollow|directory)
//	write P TEXT (open P O_WRONLY, pwrite at 0) | read P TEXT (content equals TEXT)
//	nlink P N (lstat's link count) | size P N | type P reg|dir|lnk (lstat) | stat P (follows)
//	readlink P TARGET | hold NAME P (open P O_RDONLY and keep it as NAME)
//	hread NAME TEXT (the held file's content) | hnlink NAME N (the held file's link count)
type nsEnv interface {
	mkdir(p string) error
	rmdir(p string) error
	unlink(p string) error
	symlink(target, p string) error
	link(oldp, newp string) error
	rename(oldp, newp string) error
	open(p string, flags int) (handle, error)
	lstat(p string, follow bool) (mode uint32, nlink uint32, size int64, err error)
	readlink(p string) (string, error)
}

// handle is an open file of an nsEnv.
type handle interface {
	pwrite(b []byte, off int64) error
	content() (string, error)
	nlink() uint32
	close()
}

type nsCase struct {
	name   string
	script string
}

var nsCases = []nsCase{
	{"mkdir", `
mkdir d
type d dir
nlink d 2
nlink . 3
mkdir d = EEXIST
mkdir d/ = EEXIST
mkdir x/y = ENOENT
mkdir d/e/
type d/e dir
nlink d 3
create f
mkdir f/x = ENOTDIR
mkdir f = EEXIST
mkdir . = EEXIST
mkdir .. = EEXIST
mkdir d/. = EEXIST
`},
	{"rmdir", `
mkdir d
mkdir d/e
create d/f
rmdir d = ENOTEMPTY
rmdir d/f = ENOTDIR
rmdir nope = ENOENT
rmdir d/e/. = EINVAL
rmdir d/e/.. = ENOTEMPTY
rmdir d/e/
unlink d/f
rmdir d
nlink . 2
rmdir d = ENOENT
`},
	{"unlink", `
create f
mkdir d
unlink d = EISDIR
unlink d/ = EISDIR
unlink f/ = ENOTDIR
unlink nope = ENOENT
unlink nope/x = ENOENT
unlink f/x = ENOTDIR
unlink f
unlink f = ENOENT
`},
	{"regular open", `
open f rdonly = ENOENT
open f wronly|creat
type f reg
open f wronly|creat|excl = EEXIST
open f/ rdonly = ENOTDIR
open f/ wronly|creat = EISDIR
open f rdonly|directory = ENOTDIR
open f/x rdonly = ENOTDIR
mkdir d
open d rdonly
open d rdonly|directory
open d wronly = EISDIR
open d rdwr = EISDIR
open d rdonly|creat = EISDIR
open d wronly|creat = EISDIR
open d rdonly|creat|excl = EEXIST
open d/ wronly|creat = EISDIR
open . rdonly|directory
open . wronly|creat = EISDIR
open d rdonly|creat|directory = EINVAL
open new rdwr|creat|directory = EINVAL
type new = ENOENT
open nodir/f wronly|creat = ENOENT
`},
	{"O_TRUNC with O_RDONLY truncates", `
write f hello
size f 5
open f rdonly|trunc
size f 0
read f ""
`},
	{"paths", `
mkdir a
mkdir a/b
create a/b/f
type ./a/./b/../b/f reg
type a//b///f reg
type a/b/f/ = ENOTDIR
type a/b/../../a/b/f reg
type a/nope/../b/f = ENOENT
stat a/b/f/.. = ENOTDIR
type ./ dir
`},
	{"names too long", `
create {n*255}
type {n*255} reg
create {n*256} = ENAMETOOLONG
open {n*256} rdonly = ENAMETOOLONG
mkdir {n*256} = ENAMETOOLONG
type {n*256} = ENAMETOOLONG
type {n*256}/x = ENAMETOOLONG
type {s*2047}s = ENOENT
type {s*2048}s = ENAMETOOLONG
type {s*2048} = ENAMETOOLONG
create {s*2048}s = ENAMETOOLONG
`},
	{"symlinks", `
create f
symlink f l
type l lnk
stat l
readlink l f
readlink f = EINVAL
readlink nope = ENOENT
symlink nope dangling
stat dangling = ENOENT
type dangling lnk
symlink f l = EEXIST
mkdir d
symlink d dl
type dl/ dir
create dl/g
type d/g reg
symlink ../f d/up
read d/up ""
write l via
read f via
symlink self self
stat self = ELOOP
type self lnk
open self rdonly = ELOOP
open self wronly|creat = ELOOP
symlink f/ slash
stat slash = ENOTDIR
symlink f newlink/ = ENOENT
symlink f l/ = EEXIST
symlink f d/ = EEXIST
type newlink = ENOENT
open d rdonly|trunc = EISDIR
mkdir f/ = EEXIST
rmdir f/ = ENOTDIR
rmdir dl = ENOTDIR
rmdir dl/ = ENOTDIR
unlink dl/ = ENOTDIR
rename dl/ x = ENOTDIR
mkdir dangling = EEXIST
open dangling/ wronly|creat = EISDIR
open dl/ wronly = EISDIR
unlink dl
type d dir
`},
	{"O_NOFOLLOW", `
create f
symlink f l
open l rdonly|nofollow = ELOOP
open l wronly|creat|nofollow = ELOOP
open l wronly|creat|excl = EEXIST
symlink nope dangling
open dangling rdonly|nofollow = ELOOP
open f rdonly|nofollow
mkdir d
symlink d dl
open dl/ rdonly|nofollow
open dl rdonly|directory|nofollow = ENOTDIR
open l rdonly|directory|nofollow = ENOTDIR
`},
	{"O_CREAT through a dangling symlink creates the target", `
symlink target l
open l wronly|creat
type target reg
mkdir d
symlink d/t2 d2
open d2 wronly|creat
type d/t2 reg
symlink /nonexistent-dir/x abs
symlink nodir/x rel
open rel wronly|creat = ENOENT
symlink target2 l2
open l2 wronly|creat|excl = EEXIST
type target2 = ENOENT
symlink l3 l4
symlink target3 l3
open l4 wronly|creat
type target3 reg
`},
	{"hard links", `
write f data
nlink f 1
link f g
nlink f 2
nlink g 2
read g data
link f g = EEXIST
link nope h = ENOENT
mkdir d
link d e = EPERM
link f d/h
nlink f 3
link f d = EEXIST
link f nodir/h = ENOENT
link f/ h = ENOTDIR
link d/h h/ = ENOENT
link d/h d/ = EEXIST
unlink f
nlink g 2
read d/h data
symlink g sl
link sl sl2
type sl2 lnk
nlink sl 2
`},
	{"rename files", `
write a A
write b B
rename a b
read b A
type a = ENOENT
rename nope b = ENOENT
rename b b
read b A
link b c
rename b c
nlink c 2
read b A
mkdir d
rename b d = EISDIR
rename b d/ = ENOTDIR
rename c d/b
read d/b A
rename d/b x/y = ENOENT
rename d/b d/b/x = ENOTDIR
`},
	{"rename directories", `
mkdir d
mkdir d/sub
write d/sub/f F
mkdir e
rename d e
read e/sub/f F
type d = ENOENT
nlink e 3
mkdir x
rename e x/moved
read x/moved/sub/f F
nlink x 3
nlink . 3
rename x x/moved/in = EINVAL
rename x/moved x/moved/sub/deeper = EINVAL
mkdir full
create full/f
rename x full = ENOTEMPTY
create file
rename x file = ENOTDIR
rename file x = EISDIR
rename x/moved/ y/
type y/sub/f reg
rename . z = EBUSY
rename y/.. z = EBUSY
rename y . = EBUSY
rename file/ z = ENOTDIR
mkdir y/sub/in
rename y/sub/in y = ENOTEMPTY
rename y/sub/in y/sub/in/.. = EBUSY
rename y/sub y/sub/in/x = EINVAL
rmdir y/sub/in
rename y/sub/ y/sub2//
type y/sub2/f reg
`},
	{"unlink and rename over open files", `
write f one
hold h f
unlink f
hread h one
hnlink h 0
write g two
hold h2 g
write n new
rename n g
read g new
hread h2 two
hnlink h2 0
`},
	// Looking a name up again and again (seed 000) is served by a per-directory
	// one-entry cache; every change to the names must be seen through it.
	{"repeated lookups", `
mkdir d
mkdir e
write d/a one
read d/a one
read d/a one
link d/a e/b
read d/b = ENOENT
read d/a one
read e/b one
rename d/a d/c
read d/a = ENOENT
read d/c one
read d/c one
unlink d/c
read d/c = ENOENT
write d/c two
read d/c two
read e/b one
rename e/b d/c
read d/c one
read e/b = ENOENT
symlink c d/s
read d/s one
rename d/s d/c
read d/c = ELOOP
type d/c lnk
`},
	// The changes here name entries of the working directory itself, so they
	// resolve no path of their own: each is the next lookup's only warning
	// that the last one's answer has changed.
	{"repeated lookups of names in the working directory", `
write a one
read a one
unlink a
read a = ENOENT
write a two
write b three
read a two
rename b a
read a three
read b = ENOENT
mkdir d
write d/f four
read d/f four
rename d e
read d/f = ENOENT
read e/f four
stat e
rmdir e/f = ENOTDIR
unlink e/f
rmdir e
stat e = ENOENT
link a c
read c three
unlink c
read c = ENOENT
read a three
`},
}

// nsCasesModelOnly need what the kernel test cannot have: absolute paths, the root.
var nsCasesModelOnly = []nsCase{
	{"absolute paths and the root", `
mkdir /a
create /a/f
type a/f reg
type /a/../a/f reg
type /../../a/f reg
type .. dir
nlink / 3
rmdir / = EBUSY
mkdir / = EEXIST
unlink / = EISDIR
rename / a/z = EBUSY
symlink /a/f abs
read abs ""
symlink /a a/loop
type a/loop/loop/loop/f reg
`},
}

func expand(s string) string {
	for {
		i := strings.Index(s, "{")
		if i < 0 {
			return s
		}
		j := strings.Index(s[i:], "}") + i
		c, n, _ := strings.Cut(s[i+1:j], "*")
		k, err := strconv.Atoi(n)
		if err != nil {
			panic(err)
		}
		if c == "s" {
			c = "s/"
		}
		s = s[:i] + strings.Repeat(c, k) + s[j+1:]
	}
}

func parseFlags(s string) int {
	f := 0
	for _, w := range strings.Split(s, "|") {
		f |= map[string]int{"rdonly": unix.O_RDONLY, "wronly": unix.O_WRONLY, "rdwr": unix.O_RDWR, "creat": unix.O_CREAT,
			"excl": unix.O_EXCL, "trunc": unix.O_TRUNC, "nofollow": unix.O_NOFOLLOW, "directory": unix.O_DIRECTORY}[w]
	}
	return f
}

// runNS runs a script against env and reports the first step whose result differs.
func runNS(t *testing.T, env nsEnv, script string) {
	t.Helper()
	held := map[string]handle{}
	defer func() {
		for _, h := range held {
			h.close()
		}
	}()
	for ln, line := range strings.Split(strings.TrimSpace(script), "\n") {
		line = strings.TrimSpace(line)
		want := error(nil)
		if l, e, ok := strings.Cut(line, " = "); ok {
			line = l
			errno, known := faultrule.ErrnoByName(e)
			require.True(t, known, "unknown errno %s", e)
			want = errno
		}
		f := strings.Fields(line)
		for k := range f {
			f[k] = expand(f[k])
		}
		arg := func(k int) string {
			if k < len(f) {
				if f[k] == `""` {
					return ""
				}
				return f[k]
			}
			return ""
		}
		var got error
		check := func(cond bool, format string, args ...any) {
			if got == nil && !cond {
				t.Fatalf("line %d %q: %s", ln+1, line, fmt.Sprintf(format, args...))
			}
		}
		switch f[0] {
		case "mkdir":
			got = env.mkdir(arg(1))
		case "rmdir":
			got = env.rmdir(arg(1))
		case "unlink":
			got = env.unlink(arg(1))
		case "symlink":
			got = env.symlink(arg(1), arg(2))
		case "link":
			got = env.link(arg(1), arg(2))
		case "rename":
			got = env.rename(arg(1), arg(2))
		case "create", "open", "write", "read", "hold":
			flags := unix.O_WRONLY | unix.O_CREAT
			switch f[0] {
			case "open":
				flags = parseFlags(arg(2))
			case "read", "hold":
				flags = unix.O_RDONLY
			}
			p := arg(1)
			if f[0] == "hold" {
				p = arg(2)
			}
			var h handle
			h, got = env.open(p, flags)
			if got != nil {
				break
			}
			switch f[0] {
			case "write":
				got = h.pwrite([]byte(arg(2)), 0)
			case "read":
				var s string
				s, got = h.content()
				check(s == arg(2), "content %q, want %q", s, arg(2))
			case "hold":
				held[arg(1)] = h
				continue
			}
			h.close()
		case "hread":
			s, err := held[arg(1)].content()
			got = err
			check(s == arg(2), "content %q, want %q", s, arg(2))
		case "hnlink":
			n := held[arg(1)].nlink()
			check(strconv.Itoa(int(n)) == arg(2), "nlink %d, want %s", n, arg(2))
		case "nlink", "size", "type", "stat":
			var mode, nlink uint32
			var size int64
			mode, nlink, size, got = env.lstat(arg(1), f[0] == "stat")
			switch f[0] {
			case "nlink":
				check(strconv.Itoa(int(nlink)) == arg(2), "nlink %d, want %s", nlink, arg(2))
			case "size":
				check(strconv.FormatInt(size, 10) == arg(2), "size %d, want %s", size, arg(2))
			case "type":
				typ := map[uint32]string{vfs.S_IFREG: "reg", vfs.S_IFDIR: "dir", vfs.S_IFLNK: "lnk"}[mode&vfs.S_IFMT]
				check(typ == arg(2), "type %s, want %s", typ, arg(2))
			}
		case "readlink":
			var s string
			s, got = env.readlink(arg(1))
			check(s == arg(2), "target %q, want %q", s, arg(2))
		default:
			t.Fatalf("line %d: unknown op %q", ln+1, f[0])
		}
		if got != want {
			t.Fatalf("line %d %q: got %v (%s), want %v", ln+1, line, got, errName(got), want)
		}
	}
}

func errName(err error) string {
	if e, ok := err.(syscall.Errno); ok {
		return faultrule.ErrnoName(e)
	}
	return fmt.Sprint(err)
}

// modelEnv runs scripts on the model, in the working directory dir.
type modelEnv struct{ dir *vfs.Inode }

func (m modelEnv) mkdir(p string) error  { return m.dir.Mkdir(p, 0o755) }
func (m modelEnv) rmdir(p string) error  { return m.dir.Rmdir(p) }
func (m modelEnv) unlink(p string) error { return m.dir.Unlink(p) }
func (m modelEnv) symlink(target, p string) error {
	return m.dir.Symlink(target, p)
}
func (m modelEnv) link(o, n string) error   { return m.dir.Link(o, m.dir, n, false) }
func (m modelEnv) rename(o, n string) error { return m.dir.Rename(o, m.dir, n, 0) }
func (m modelEnv) open(p string, flags int) (handle, error) {
	ino, _, err := m.dir.Open(p, flags, 0o644)
	if err != nil {
		return nil, err
	}
	return modelHandle{ino}, nil
}
func (m modelEnv) lstat(p string, follow bool) (uint32, uint32, int64, error) {
	ino, err := m.dir.Resolve(p, follow)
	if err != nil {
		return 0, 0, 0, err
	}
	var st vfs.Stat
	ino.Stat(&st)
	return st.Mode, st.Nlink, st.Size, nil
}
func (m modelEnv) readlink(p string) (string, error) { return m.dir.Readlink(p) }

type modelHandle struct{ ino *vfs.Inode }

func (h modelHandle) pwrite(b []byte, off int64) error {
	_, err := h.ino.WriteAt(b, off)
	return err
}
func (h modelHandle) content() (string, error) {
	b := make([]byte, h.ino.Size())
	n, err := h.ino.ReadAt(b, 0)
	return string(b[:n]), err
}
func (h modelHandle) nlink() uint32 { return h.ino.Nlink() }
func (h modelHandle) close()        {}

func TestNamespaceScripts(t *testing.T) {
	for _, c := range nsCases {
		t.Run(c.name, func(t *testing.T) {
			fs := vfs.New()
			require.NoError(t, fs.Root().Mkdir("w", 0o755))
			w, err := fs.Root().Resolve("w", true)
			require.NoError(t, err)
			runNS(t, modelEnv{w}, c.script)
		})
	}
	for _, c := range nsCasesModelOnly {
		t.Run(c.name, func(t *testing.T) {
			runNS(t, modelEnv{vfs.New().Root()}, c.script)
		})
	}
}

// TestSymlinkLoopLimit: a chain of 40 symlinks resolves, 41 is ELOOP (MAXSYMLINKS),
// counted across the whole resolution, intermediate components included.
// (The kernel runs the same script in TestNamespaceScriptsKernel.)
func TestSymlinkLoopLimit(t *testing.T) {
	runNS(t, newModelEnv(t), symlinkChainScript())
}

func newModelEnv(t *testing.T) nsEnv {
	fs := vfs.New()
	require.NoError(t, fs.Root().Mkdir("w", 0o755))
	w, err := fs.Root().Resolve("w", true)
	require.NoError(t, err)
	return modelEnv{w}
}

// symlinkChainScript builds l0 → l1 → ... → l40 → f, and m0 → ... → m39 → d.
func symlinkChainScript() string {
	var b strings.Builder
	b.WriteString("create f\nmkdir d\ncreate d/g\n")
	for k := 0; k <= 40; k++ {
		next := fmt.Sprintf("l%d", k+1)
		if k == 40 {
			next = "f"
		}
		fmt.Fprintf(&b, "symlink %s l%d\n", next, k)
	}
	for k := 0; k < 40; k++ {
		next := fmt.Sprintf("m%d", k+1)
		if k == 39 {
			next = "d"
		}
		fmt.Fprintf(&b, "symlink %s m%d\n", next, k)
	}
	// l1 is 40 links from f, l0 is 41.
	b.WriteString("stat l1\nstat l0 = ELOOP\nopen l1 rdonly\nopen l0 rdonly = ELOOP\n")
	b.WriteString("type l0 lnk\nopen l0 wronly|creat = ELOOP\n")
	// m0 is 40 links from d; then one more for a symlink inside d.
	b.WriteString("stat m0/g\nsymlink g d/lg\nstat m1/lg\nstat m0/lg = ELOOP\n")
	return b.String()
}

// TestNamespaceErrnoTypes: errors are bare syscall.Errno, comparable with unix's.
func TestNamespaceErrnoTypes(t *testing.T) {
	fs := vfs.New()
	_, _, err := fs.Root().Open("nope", unix.O_RDONLY, 0)
	require.Equal(t, unix.ENOENT, err)
	require.Equal(t, unix.EEXIST, fs.Root().Mkdir("/", 0o755))
}

// TestRenameExchange covers renameat2 flags.
func TestRenameExchange(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	require.NoError(t, r.Mkdir("d", 0o755))
	a, _, err := r.Open("a", unix.O_CREAT|unix.O_WRONLY, 0o644)
	require.NoError(t, err)
	require.Equal(t, unix.ENOENT, r.Rename("a", r, "b", vfs.RenameExchange))
	require.NoError(t, r.Rename("a", r, "d/a", vfs.RenameNoreplace))
	require.Equal(t, unix.EEXIST, r.Rename("d", r, "d/a", vfs.RenameNoreplace))
	require.Equal(t, unix.EINVAL, r.Rename("d", r, "d", vfs.RenameNoreplace|vfs.RenameExchange))
	require.Equal(t, unix.EINVAL, r.Rename("d/a", r, "d", vfs.RenameExchange)) // d into itself
	require.NoError(t, r.Mkdir("e", 0o755))
	require.NoError(t, r.Rename("d/a", r, "e", vfs.RenameExchange))
	got, err := r.Resolve("e", false)
	require.NoError(t, err)
	require.Same(t, a, got)
	dir, err := r.Resolve("d/a", false)
	require.NoError(t, err)
	require.True(t, dir.IsDir())
	require.Equal(t, "/d/a", dir.Path())
	require.Equal(t, uint32(3), r.Nlink())
	d, _ := r.Resolve("d", false)
	require.Equal(t, uint32(3), d.Nlink())
}

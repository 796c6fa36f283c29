package sim_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// xattrer is what the xattr test needs of the kernel and of the model.
type xattrer interface {
	Mkdir(path string, mode uint32) error
	Open(path string, mode int, perm uint32) (int, error)
	Close(fd int) error
	Symlink(target, link string) error
	Chmod(path string, mode uint32) error
	Lstat(path string, st *unix.Stat_t) error
	Setxattr(path, attr string, data []byte, flags int) error
	Lsetxattr(path, attr string, data []byte, flags int) error
	Fsetxattr(fd int, attr string, data []byte, flags int) error
	Removexattr(path, attr string) error
	Lremovexattr(path, attr string) error
}

type realXattr struct{ dir string }

func (r realXattr) p(s string) string                           { return filepath.Join(r.dir, s) }
func (r realXattr) Mkdir(s string, m uint32) error              { return unix.Mkdir(r.p(s), m) }
func (r realXattr) Open(s string, f int, m uint32) (int, error) { return unix.Open(r.p(s), f, m) }
func (realXattr) Close(fd int) error                            { return unix.Close(fd) }
func (r realXattr) Symlink(t, l string) error                   { return unix.Symlink(t, r.p(l)) }
func (r realXattr) Chmod(s string, m uint32) error              { return unix.Chmod(r.p(s), m) }
func (r realXattr) Lstat(s string, st *unix.Stat_t) error       { return unix.Lstat(r.p(s), st) }
func (r realXattr) Setxattr(s, a string, d []byte, f int) error {
	return unix.Setxattr(r.p(s), a, d, f)
}
func (r realXattr) Lsetxattr(s, a string, d []byte, f int) error {
	return unix.Lsetxattr(r.p(s), a, d, f)
}
func (realXattr) Fsetxattr(fd int, a string, d []byte, f int) error {
	return unix.Fsetxattr(fd, a, d, f)
}
func (r realXattr) Removexattr(s, a string) error  { return unix.Removexattr(r.p(s), a) }
func (r realXattr) Lremovexattr(s, a string) error { return unix.Lremovexattr(r.p(s), a) }

// acl encodes a POSIX ACL as its xattr: version, then (tag, perm, id) entries.
func acl(version uint32, ents ...[3]uint32) []byte {
	b := binary.LittleEndian.AppendUint32(nil, version)
	for _, e := range ents {
		b = binary.LittleEndian.AppendUint16(b, uint16(e[0]))
		b = binary.LittleEndian.AppendUint16(b, uint16(e[1]))
		b = binary.LittleEndian.AppendUint32(b, e[2])
	}
	return b
}

// xattrScript sets and removes POSIX ACLs, valid and not, on a file, a
// directory and a symlink, and returns each call's error and the modes after.
func xattrScript(t *testing.T, s xattrer) []string {
	t.Helper()
	const (
		uo, u, gO, g, m, o = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
		x                  = 0xffffffff
		access, dflt       = "system.posix_acl_access", "system.posix_acl_default"
	)
	minimal := func(pu, pg, po uint32) []byte {
		return acl(2, [3]uint32{uo, pu, x}, [3]uint32{gO, pg, x}, [3]uint32{o, po, x})
	}
	fd, err := s.Open("f", unix.O_CREAT|unix.O_RDWR, 0o600)
	require.NoError(t, err)
	require.NoError(t, s.Mkdir("d", 0o700))
	require.NoError(t, s.Symlink("f", "l"))
	var out []string
	mode := func(p string) uint32 {
		var st unix.Stat_t
		require.NoError(t, s.Lstat(p, &st))
		return st.Mode & 0o7777
	}
	do := func(what string, err error) {
		var errno unix.Errno
		if err != nil && !errors.As(err, &errno) {
			t.Fatalf("%s: %v", what, err)
		}
		out = append(out, fmt.Sprintf("%s: %v f=%#o d=%#o", what, errno, mode("f"), mode("d")))
	}
	do("minimal 0755", s.Setxattr("f", access, minimal(7, 5, 5), 0))
	do("user, group and mask", s.Setxattr("f", access, acl(2, [3]uint32{uo, 6, x}, [3]uint32{u, 7, 1000}, [3]uint32{gO, 4, x}, [3]uint32{g, 6, 100}, [3]uint32{m, 5, x}, [3]uint32{o, 0, x}), 0))
	do("mask of a minimal ACL", s.Setxattr("f", access, acl(2, [3]uint32{uo, 7, x}, [3]uint32{gO, 5, x}, [3]uint32{m, 3, x}, [3]uint32{o, 1, x}), 0))
	do("ids of *_OBJ ignored", s.Setxattr("f", access, acl(2, [3]uint32{uo, 7, 0}, [3]uint32{gO, 1, 0}, [3]uint32{o, 1, 0}), 0))
	do("user ids unordered", s.Setxattr("f", access, acl(2, [3]uint32{uo, 6, x}, [3]uint32{u, 7, 1001}, [3]uint32{u, 7, 1000}, [3]uint32{gO, 4, x}, [3]uint32{m, 5, x}, [3]uint32{o, 0, x}), 0))
	do("version 1", s.Setxattr("f", access, acl(1, [3]uint32{uo, 7, x}, [3]uint32{gO, 5, x}, [3]uint32{o, 5, x}), 0))
	do("3 bytes", s.Setxattr("f", access, []byte{2, 0, 0}, 0))
	do("a byte too many", s.Setxattr("f", access, append(minimal(7, 5, 5), 0), 0))
	do("group before user", s.Setxattr("f", access, acl(2, [3]uint32{gO, 5, x}, [3]uint32{uo, 7, x}, [3]uint32{o, 5, x}), 0))
	do("two USER_OBJ", s.Setxattr("f", access, acl(2, [3]uint32{uo, 7, x}, [3]uint32{uo, 7, x}, [3]uint32{gO, 5, x}, [3]uint32{o, 5, x}), 0))
	do("user without mask", s.Setxattr("f", access, acl(2, [3]uint32{uo, 6, x}, [3]uint32{u, 7, 1000}, [3]uint32{gO, 4, x}, [3]uint32{o, 0, x}), 0))
	do("no OTHER", s.Setxattr("f", access, acl(2, [3]uint32{uo, 7, x}, [3]uint32{gO, 5, x}), 0))
	do("perm 8", s.Setxattr("f", access, minimal(8, 5, 5), 0))
	do("unknown tag", s.Setxattr("f", access, acl(2, [3]uint32{uo, 7, x}, [3]uint32{gO, 5, x}, [3]uint32{0x40, 5, x}, [3]uint32{o, 5, x}), 0))
	do("entry after OTHER", s.Setxattr("f", access, acl(2, [3]uint32{uo, 7, x}, [3]uint32{gO, 5, x}, [3]uint32{o, 5, x}, [3]uint32{o, 5, x}), 0))
	do("no entries", s.Setxattr("f", access, acl(2), 0))
	do("empty value", s.Setxattr("f", access, nil, 0))
	do("XATTR_CREATE", s.Setxattr("f", access, minimal(7, 0, 0), unix.XATTR_CREATE))
	do("XATTR_REPLACE", s.Setxattr("f", access, minimal(6, 4, 4), unix.XATTR_REPLACE))
	do("flags 4", s.Setxattr("f", access, minimal(7, 5, 5), 4))
	require.NoError(t, s.Chmod("f", 0o4755))
	do("set-id bits kept", s.Setxattr("f", access, minimal(7, 0, 0), 0))
	do("fsetxattr", s.Fsetxattr(fd, access, minimal(6, 4, 0), 0))
	do("fsetxattr bad fd", s.Fsetxattr(99, access, minimal(6, 4, 0), 0))
	do("default on a file", s.Setxattr("f", dflt, minimal(7, 5, 5), 0))
	do("empty default on a file", s.Setxattr("f", dflt, nil, 0))
	do("default on a directory", s.Setxattr("d", dflt, minimal(7, 5, 5), 0))
	do("bad default on a directory", s.Setxattr("d", dflt, acl(2, [3]uint32{uo, 7, x}), 0))
	do("access on a directory", s.Setxattr("d", access, minimal(7, 5, 0), 0))
	do("through the symlink", s.Setxattr("l", access, minimal(6, 0, 0), 0))
	do("on the symlink", s.Lsetxattr("l", access, minimal(7, 7, 7), 0))
	do("bad ACL on the symlink", s.Lsetxattr("l", access, acl(2), 0))
	do("no such file", s.Setxattr("nope", access, minimal(7, 5, 5), 0))
	do("empty name", s.Setxattr("f", "", []byte("x"), 0))
	do("256-byte name", s.Setxattr("f", "system."+strings.Repeat("a", 249), []byte("x"), 0))
	do("255-byte name", s.Setxattr("f", "system."+strings.Repeat("a", 248), []byte("x"), 0))
	do("value over 64 KiB", s.Setxattr("f", access, make([]byte, 65537), 0))
	do("system.foo", s.Setxattr("f", "system.foo", []byte("x"), 0))
	do("remove access", s.Removexattr("f", access))
	do("remove default of a file", s.Removexattr("f", dflt))
	do("remove default of a directory", s.Removexattr("d", dflt))
	do("remove on the symlink", s.Lremovexattr("l", access))
	require.NoError(t, s.Close(fd))
	return out
}

// TestXattrACLMatchesKernel runs xattrScript on this machine's kernel (ext4,
// as root) and on the model: the same errors and the same modes after each call.
func TestXattrACLMatchesKernel(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Setxattr(dir, "system.posix_acl_access", acl(2, [3]uint32{1, 7, 0}, [3]uint32{4, 5, 0}, [3]uint32{0x20, 5, 0}), 0); err != nil || unix.Geteuid() != 0 {
		t.Skipf("POSIX ACLs as root are not available here (%v)", err)
	}
	want := xattrScript(t, realXattr{dir})
	got := xattrScript(t, sim.New(vfs.New()).Spawn())
	require.Equal(t, want, got)
}

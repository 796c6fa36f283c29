//go:build linux

package osunix_test

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/sim/osunix"
	"github.com/iosim/iosim/vfs"
)

// storeAndReadBack is storage code written once against sim.Unix: it replaces
// dir/state durably (write a temporary file, fsync, rename over, fsync the
// directory), then reads everything back and tries the calls' usual failures.
// It returns a transcript of what each call returned, without fd numbers,
// inode numbers, times, block counts, directory sizes or directory order,
// which are the kernel's or the file system's to choose.
func storeAndReadBack(sys sim.Unix, dir string) []string {
	var out []string
	note := func(what string, ret any, err error) {
		e := "ok"
		if err != nil {
			var errno syscall.Errno
			if !errors.As(err, &errno) || error(errno) != err {
				e = fmt.Sprintf("not a bare syscall.Errno: %T %v", err, err)
			} else {
				e = unix.ErrnoName(errno)
			}
		}
		out = append(out, fmt.Sprintf("%s = %v %s", what, ret, e))
	}
	stat := func(what string, call func(*unix.Stat_t) error) {
		var st unix.Stat_t
		err := call(&st)
		size := "-" // a directory's size is the file system's
		if st.Mode&unix.S_IFMT == unix.S_IFREG {
			size = fmt.Sprint(st.Size)
		}
		note(what, fmt.Sprintf("{type %#o owner %#o size %s nlink %d}", st.Mode&unix.S_IFMT, st.Mode&0o700, size, st.Nlink), err)
	}
	path := func(name string) string { return filepath.Join(dir, name) }

	note("mkdir sub", "", sys.Mkdir(path("sub"), 0o755))
	note("mkdir sub again", "", sys.Mkdir(path("sub"), 0o755))
	fd, err := sys.Open(path("state.tmp"), unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	note("open state.tmp", "", err)
	n, err := sys.Write(fd, []byte("version 2: the new state\n"))
	note("write", n, err)
	n, err = sys.Pwrite(fd, []byte("V"), 0)
	note("pwrite at 0", n, err)
	off, err := sys.Seek(fd, 0, unix.SEEK_END)
	note("lseek SEEK_END", off, err)
	note("fallocate KEEP_SIZE 1 MiB", "", sys.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, 1<<20))
	note("sync_file_range", "", sys.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE))
	note("fdatasync", "", sys.Fdatasync(fd))
	note("fsync", "", sys.Fsync(fd))
	stat("fstat", func(st *unix.Stat_t) error { return sys.Fstat(fd, st) })
	n, err = sys.Read(fd, make([]byte, 4))
	note("read of a write-only fd", n, err)
	note("close", "", sys.Close(fd))
	note("close again", "", sys.Close(fd))
	note("rename over state", "", sys.Rename(path("state.tmp"), path("state")))
	note("rename a missing file", "", sys.Rename(path("state.tmp"), path("state")))
	note("rename a file over a directory", "", sys.Rename(path("state"), path("sub")))
	d, err := sys.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	note("open dir", "", err)
	note("fsync dir", "", sys.Fsync(d))

	fd, err = sys.Openat(d, "state", unix.O_RDWR|unix.O_CLOEXEC, 0)
	note("openat state", "", err)
	buf := make([]byte, 64)
	n, err = sys.Pread(fd, buf, 0)
	note("pread", fmt.Sprintf("%q", buf[:max(n, 0)]), err)
	note("ftruncate 7", "", sys.Ftruncate(fd, 7))
	n, err = sys.Read(fd, buf)
	note("read", fmt.Sprintf("%q", buf[:max(n, 0)]), err)
	stat("stat state", func(st *unix.Stat_t) error { return sys.Stat(path("state"), st) })
	stat("fstatat sub", func(st *unix.Stat_t) error { return sys.Fstatat(d, "sub", st, 0) })
	stat("lstat missing", func(st *unix.Stat_t) error { return sys.Lstat(path("missing"), st) })
	note("close", "", sys.Close(fd))
	_, err = sys.Openat(d, "state", unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o644)
	note("openat O_EXCL of an existing file", "", err)
	note("renameat2 RENAME_NOREPLACE", "", sys.Renameat2(d, "state", d, "sub", unix.RENAME_NOREPLACE))
	note("renameat state to kept", "", sys.Renameat(d, "state", d, "kept"))
	note("mkdirat sub/inner", "", sys.Mkdirat(d, "sub/inner", 0o755))
	note("rmdir a non-empty directory", "", sys.Rmdir(path("sub")))
	note("unlinkat sub/inner AT_REMOVEDIR", "", sys.Unlinkat(d, "sub/inner", unix.AT_REMOVEDIR))

	var names []string
	for {
		n, err := sys.Getdents(d, buf)
		if err != nil || n <= 0 {
			note("getdents end", n, err)
			break
		}
		_, _, names = unix.ParseDirent(buf[:n], -1, names)
	}
	slices.Sort(names) // directory order is the file system's
	note("names", names, nil)
	note("unlink kept", "", sys.Unlink(path("kept")))
	note("unlink kept again", "", sys.Unlink(path("kept")))
	note("close dir", "", sys.Close(d))
	return out
}

// TestSameCodeModelAndKernel runs storeAndReadBack on the model and on this
// machine's kernel (in a temporary directory: any Linux file system that
// supports fallocate with FALLOC_FL_KEEP_SIZE) and requires the same
// transcript, call by call.
func TestSameCodeModelAndKernel(t *testing.T) {
	p := sim.New(vfs.New()).Spawn()
	require.NoError(t, p.Mkdir("/db", 0o755))
	model := storeAndReadBack(p, "/db")
	kernel := storeAndReadBack(osunix.Kernel{}, t.TempDir())
	require.Equal(t, kernel, model)
	t.Logf("%d calls, the same on both:\n%s", len(kernel), strings.Join(kernel, "\n"))
	require.Contains(t, kernel, `pread = "Version 2: the new state\n" ok`, "the transcript shows the data read back")
}

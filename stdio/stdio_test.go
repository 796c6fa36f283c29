package stdio_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/stdio"
	"github.com/iosim/iosim/vfs"
)

// durable returns the content of path after a power cut now.
func durable(t *testing.T, fs *vfs.FS, path string) string {
	t.Helper()
	return content(t, fs.Crash(), path)
}

// content returns the content of path in fs.
func content(t *testing.T, fs *vfs.FS, path string) string {
	t.Helper()
	f, err := fs.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	b := make([]byte, st.Size())
	_, err = f.Read(b)
	if st.Size() > 0 {
		require.NoError(t, err)
	}
	return string(b)
}

// TestFsyncWithoutFflush: fsync(fileno(f)) after fwrite makes nothing
// durable, the bytes being in the stream's buffer; after fflush it does.
func TestFsyncWithoutFflush(t *testing.T) {
	fs := vfs.New()
	p := sim.New(fs).Spawn()
	f, err := stdio.Fopen(p, "/journal", "w")
	require.NoError(t, err)
	dir, err := p.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	require.NoError(t, err)
	require.NoError(t, p.Fsync(dir), "the name is durable")

	n, err := f.Fwrite([]byte("commit 1\n"))
	require.NoError(t, err)
	require.Equal(t, 9, n)
	require.Equal(t, 9, f.Buffered())
	require.NoError(t, p.Fsync(f.Fileno()))
	require.Equal(t, "", durable(t, fs, "/journal"), "fsync without fflush: nothing reached the kernel")
	var st unix.Stat_t
	require.NoError(t, p.Stat("/journal", &st))
	require.Zero(t, st.Size, "not even the page cache")

	require.NoError(t, f.Fflush())
	require.Zero(t, f.Buffered())
	require.Equal(t, "", durable(t, fs, "/journal"), "fflush without fsync: in the page cache only")
	require.NoError(t, p.Fsync(f.Fileno()))
	require.Equal(t, "commit 1\n", durable(t, fs, "/journal"))
	require.NoError(t, f.Fclose())
}

// TestMixedWriteOrder: bytes written with fwrite and with write(2) on the
// same file reach it in another order than the program wrote them: the
// fwrite bytes wait in the buffer while the write(2) lands.
func TestMixedWriteOrder(t *testing.T) {
	fs := vfs.New()
	p := sim.New(fs).Spawn()
	f, err := stdio.Fopen(p, "/log", "a")
	require.NoError(t, err)
	require.NoError(t, f.Fputs("1 buffered\n"))
	_, err = p.Write(f.Fileno(), []byte("2 direct\n"))
	require.NoError(t, err)
	require.NoError(t, f.Fputs("3 buffered\n"))
	require.NoError(t, f.Fclose())
	require.Equal(t, "2 direct\n1 buffered\n3 buffered\n", content(t, fs, "/log"))

	// Without "a" the stream writes at its own position, over what write(2)
	// put there.
	f, err = stdio.Fopen(p, "/over", "w")
	require.NoError(t, err)
	require.NoError(t, f.Fputs("AAAA"))
	_, err = p.Write(f.Fileno(), []byte("bbbbbb"))
	require.NoError(t, err)
	require.NoError(t, f.Fclose())
	require.Equal(t, "bbbbbbAAAA", content(t, fs, "/over"), "the flush writes at the descriptor's offset")
}

// TestBufferSize: the buffer is st_blksize (the file system's block size)
// when below BUFSIZ, else BUFSIZ.
func TestBufferSize(t *testing.T) {
	for _, bs := range []int64{1024, 4096, 16384} {
		t.Run(fmt.Sprint(bs), func(t *testing.T) {
			fs := vfs.New(vfs.WithBlockSize(bs))
			rec := &recorder{sys: sim.New(fs).Spawn()}
			f, err := stdio.Fopen(rec, "/f", "w")
			require.NoError(t, err)
			_, err = f.Fwrite([]byte(strings.Repeat("x", 100000)))
			require.NoError(t, err)
			want := min(bs, stdio.BUFSIZ)
			require.Equal(t, fmt.Sprintf("write %d = %d", 100000/want*want, 100000/want*want), rec.log[2])
			require.Equal(t, int(100000%want), f.Buffered())
		})
	}
}

// TestStreamErrors: modes, access, and calls on a closed stream.
func TestStreamErrors(t *testing.T) {
	fs := vfs.New()
	p := sim.New(fs).Spawn()
	_, err := stdio.Fopen(p, "/f", "q")
	require.Equal(t, unix.EINVAL, err)
	_, err = stdio.Fopen(p, "/missing", "r")
	require.Equal(t, unix.ENOENT, err)
	f, err := stdio.Fopen(p, "/f", "w")
	require.NoError(t, err)
	_, err = f.Fread(make([]byte, 4))
	require.Equal(t, unix.EBADF, err, "reading a write-only stream")
	require.True(t, f.Ferror())
	f.Clearerr()
	require.False(t, f.Ferror())
	require.Equal(t, unix.EINVAL, f.Setvbuf(7, 0))
	require.NoError(t, f.Fclose())
	require.Equal(t, unix.EBADF, f.Fclose())
	_, err = f.Fwrite([]byte("x"))
	require.Equal(t, unix.EBADF, err)

	fd, err := p.Open("/f", unix.O_RDONLY, 0)
	require.NoError(t, err)
	_, err = stdio.Fdopen(p, fd, "w")
	require.Equal(t, unix.EINVAL, err, "fdopen for writing of a read-only descriptor")
	r, err := stdio.Fdopen(p, fd, "r")
	require.NoError(t, err)
	require.Equal(t, unix.EBADF, r.Fputs("x"))
	n, err := r.Fread(make([]byte, 10))
	require.NoError(t, err)
	require.Zero(t, n)
	require.True(t, r.Feof())
	require.NoError(t, r.Fclose())
}

// TestOpenatArgs: fopen's openat carries glibc's flags and mode exactly (no
// O_LARGEFILE, which x/sys/unix's Open adds), as interposers see them.
func TestOpenatArgs(t *testing.T) {
	fs := vfs.New()
	k := sim.New(fs)
	var got []string
	h := sim.HandlerFunc(func(c *sim.Call) sim.Result {
		if c.Nr == sim.SYS_OPENAT {
			got = append(got, fmt.Sprintf("%s %#o %#o", c.Path, c.Args[2], c.Args[3]))
		}
		return k.Syscall(c)
	})
	p := k.Spawn().Through(h)
	for _, mode := range []string{"w", "a+", "rxe"} {
		if f, err := stdio.Fopen(p, "/f", mode); err == nil {
			require.NoError(t, f.Fclose())
		}
	}
	require.Equal(t, []string{
		fmt.Sprintf("/f %#o 0666", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC),
		fmt.Sprintf("/f %#o 0666", unix.O_RDWR|unix.O_CREAT|unix.O_APPEND),
		fmt.Sprintf("/f %#o 0666", unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC),
	}, got)
}

// TestNames: the Go-style names and ParseMode's validation.
func TestNames(t *testing.T) {
	for mode, want := range map[string]struct {
		flags   int
		seekEnd bool
	}{
		"r":   {unix.O_RDONLY, false},
		"w+b": {unix.O_RDWR | unix.O_CREAT | unix.O_TRUNC, false},
		"a":   {unix.O_WRONLY | unix.O_CREAT | unix.O_APPEND, true},
		"a+":  {unix.O_RDWR | unix.O_CREAT | unix.O_APPEND, false},
		"wxe": {unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC | unix.O_EXCL | unix.O_CLOEXEC, false},
	} {
		flags, seekEnd, err := stdio.ParseMode(mode)
		require.NoError(t, err, mode)
		require.Equal(t, want.flags, flags, mode)
		require.Equal(t, want.seekEnd, seekEnd, mode)
	}
	for _, bad := range []string{"", "q", "rz", "w+m"} {
		_, _, err := stdio.ParseMode(bad)
		require.Error(t, err, bad)
	}

	fs := vfs.New()
	p := sim.New(fs).Spawn()
	f, err := stdio.Open(p, "/n", "w")
	require.NoError(t, err)
	n, err := f.Write([]byte("ab"))
	require.NoError(t, err)
	require.Equal(t, 2, n)
	n, err = f.WriteString("cd")
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 4, f.Buffered())
	require.NoError(t, f.Flush())
	require.NoError(t, p.Fsync(f.Fd()))
	require.NoError(t, f.Close())
	require.Equal(t, "abcd", content(t, fs, "/n"))
}

// TestFailedFlushLosesBytes: a write(2) that fails empties the buffer, as
// glibc's new_do_write does: the bytes are gone and fclose does not write
// them (observed with glibc 2.36 on /dev/full, see the package doc).
func TestFailedFlushLosesBytes(t *testing.T) {
	fs, p, writes := fullDevice()
	f, err := stdio.Fopen(p, "/x", "w")
	require.NoError(t, err)
	require.NoError(t, f.Fputs("0123456789"))
	require.Equal(t, 10, f.Buffered())
	require.Equal(t, unix.ENOSPC, f.Fflush())
	require.True(t, f.Ferror())
	require.Zero(t, f.Buffered())
	require.NoError(t, f.Fclose())
	require.Equal(t, 1, *writes)
	require.Equal(t, "", content(t, fs, "/x"))
}

// fullDevice returns a process whose every write(2) fails with ENOSPC, as on
// /dev/full, and the count of its writes.
func fullDevice() (*vfs.FS, *sim.Process, *int) {
	fs := vfs.New()
	k := sim.New(fs)
	writes := new(int)
	h := sim.HandlerFunc(func(c *sim.Call) sim.Result {
		if c.Nr == sim.SYS_WRITE {
			*writes++
			return sim.Fail(unix.ENOSPC)
		}
		return k.Syscall(c)
	})
	return fs, k.Spawn().Through(h), writes
}

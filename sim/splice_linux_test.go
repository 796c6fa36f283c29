package sim_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// splicer is what the splice test needs of the kernel and of the model.
type splicer interface {
	open(path string, flags int) (int, error)
	pipe() ([2]int, error)
	splice(in int, offIn *int64, out int, offOut *int64, n, flags int) (int, error)
	tee(in, out, n, flags int) (int, error)
	vmsplice(fd int, b []byte) (int, error)
	read(fd int, b []byte) (int, error)
	write(fd int, b []byte) (int, error)
	pread(fd int, b []byte, off int64) (int, error)
	seek(fd int, off int64, whence int) (int64, error)
	close(fd int) error
}

type realSplice struct{ dir string }

func (r realSplice) open(p string, fl int) (int, error) {
	return unix.Open(filepath.Join(r.dir, p), fl|unix.O_CLOEXEC, 0o644)
}
func (realSplice) pipe() ([2]int, error) {
	p := make([]int, 2)
	err := unix.Pipe2(p, unix.O_CLOEXEC)
	return [2]int{p[0], p[1]}, err
}
func (realSplice) splice(in int, oi *int64, out int, oo *int64, n, fl int) (int, error) {
	r, err := unix.Splice(in, oi, out, oo, n, fl)
	return int(r), err
}
func (realSplice) tee(in, out, n, fl int) (int, error) {
	r, err := unix.Tee(in, out, n, fl)
	return int(r), err
}
func (realSplice) vmsplice(fd int, b []byte) (int, error) {
	var iov unix.Iovec
	iov.Base = &b[0]
	iov.SetLen(len(b))
	return unix.Vmsplice(fd, []unix.Iovec{iov}, 0)
}
func (realSplice) read(fd int, b []byte) (int, error)           { return unix.Read(fd, b) }
func (realSplice) write(fd int, b []byte) (int, error)          { return unix.Write(fd, b) }
func (realSplice) pread(fd int, b []byte, o int64) (int, error) { return unix.Pread(fd, b, o) }
func (realSplice) seek(fd int, o int64, w int) (int64, error)   { return unix.Seek(fd, o, w) }

type modelSplice struct{ p *sim.Process }

func (m modelSplice) open(p string, fl int) (int, error) { return m.p.Open(p, fl, 0o644) }
func (m modelSplice) pipe() ([2]int, error) {
	var fds [2]int
	return fds, m.p.Pipe2(&fds, 0)
}
func (m modelSplice) do(c sim.Call) (int, error) {
	r := m.p.Syscall(c)
	return int(r.Ret), r.Err()
}
func (m modelSplice) splice(in int, oi *int64, out int, oo *int64, n, fl int) (int, error) {
	c := sim.Call{Nr: sim.SYS_SPLICE, Args: [6]int64{int64(in), sim.NullOffset, int64(out), sim.NullOffset, int64(n), int64(fl)}}
	if oi != nil {
		c.Args[1] = *oi
	}
	if oo != nil {
		c.Args[3] = *oo
	}
	return m.do(c)
}
func (m modelSplice) tee(in, out, n, fl int) (int, error) {
	return m.do(sim.Call{Nr: sim.SYS_TEE, Args: [6]int64{int64(in), int64(out), int64(n), int64(fl)}})
}
func (m modelSplice) vmsplice(fd int, b []byte) (int, error) {
	return m.do(sim.Call{Nr: sim.SYS_VMSPLICE, Args: [6]int64{int64(fd), 0, 1}, Iov: [][]byte{b}})
}
func (m modelSplice) read(fd int, b []byte) (int, error)           { return m.p.Read(fd, b) }
func (m modelSplice) write(fd int, b []byte) (int, error)          { return m.p.Write(fd, b) }
func (m modelSplice) pread(fd int, b []byte, o int64) (int, error) { return m.p.Pread(fd, b, o) }
func (m modelSplice) seek(fd int, o int64, w int) (int64, error)   { return m.p.Seek(fd, o, w) }

func spliceScript(t *testing.T, s splicer) string {
	var out strings.Builder
	put := func(call string, v any, err error) {
		if err != nil {
			fmt.Fprintf(&out, "%s: %s\n", call, unix.ErrnoName(err.(syscall.Errno)))
			return
		}
		fmt.Fprintf(&out, "%s: %v\n", call, v)
	}
	f, err := s.open("f", unix.O_CREAT|unix.O_RDWR)
	require.NoError(t, err)
	_, err = s.write(f, []byte("0123456789"))
	require.NoError(t, err)
	_, err = s.seek(f, 0, unix.SEEK_SET)
	require.NoError(t, err)
	g, err := s.open("g", unix.O_CREAT|unix.O_RDWR)
	require.NoError(t, err)
	ap, err := s.open("a", unix.O_CREAT|unix.O_WRONLY|unix.O_APPEND)
	require.NoError(t, err)
	p, err := s.pipe()
	require.NoError(t, err)
	q, err := s.pipe()
	require.NoError(t, err)
	buf := make([]byte, 64)

	n, err := s.splice(f, nil, p[1], nil, 4, 0)
	put("splice file->pipe", n, err)
	o, err := s.seek(f, 0, unix.SEEK_CUR)
	put("file offset", o, err)
	off := int64(2)
	n, err = s.splice(f, &off, p[1], nil, 3, 0)
	put("splice file@2->pipe", n, err)
	o, err = s.seek(f, 0, unix.SEEK_CUR)
	put("file offset", o, err)
	n, err = s.read(p[0], buf)
	put("read pipe", string(buf[:n]), err)
	n, err = s.splice(p[0], nil, g, nil, 10, unix.SPLICE_F_NONBLOCK)
	put("splice empty nonblock", n, err)
	_, err = s.write(p[1], []byte("abc"))
	require.NoError(t, err)
	woff := int64(5)
	n, err = s.splice(p[0], nil, g, &woff, 10, 0)
	put("splice pipe->file@5", n, err)
	n, err = s.pread(g, buf, 0)
	put("pread g", fmt.Sprintf("%q", buf[:n]), err)
	o, err = s.seek(g, 0, unix.SEEK_CUR)
	put("g offset", o, err)
	_, err = s.write(p[1], []byte("xyz"))
	require.NoError(t, err)
	n, err = s.tee(p[0], q[1], 10, 0)
	put("tee", n, err)
	n, err = s.read(q[0], buf)
	put("read q", string(buf[:n]), err)
	n, err = s.splice(p[0], nil, q[1], nil, 2, 0)
	put("splice pipe->pipe", n, err)
	n, err = s.read(q[0], buf)
	put("read q", string(buf[:n]), err)
	n, err = s.read(p[0], buf)
	put("read p", string(buf[:n]), err)
	n, err = s.vmsplice(p[1], []byte("hi"))
	put("vmsplice", n, err)
	n, err = s.read(p[0], buf)
	put("read p", string(buf[:n]), err)

	_, err = s.splice(f, nil, g, nil, 1, 0)
	put("splice file->file", 0, err)
	_, err = s.splice(p[0], &off, g, nil, 1, 0)
	put("splice off_in on pipe", 0, err)
	_, err = s.splice(f, nil, p[1], &off, 1, 0)
	put("splice off_out on pipe", 0, err)
	_, err = s.splice(p[0], nil, p[1], nil, 1, 0)
	put("splice pipe to itself", 0, err)
	_, err = s.splice(p[1], nil, g, nil, 1, 0)
	put("splice from write end", 0, err)
	_, err = s.write(p[1], []byte("z"))
	require.NoError(t, err)
	_, err = s.splice(p[0], nil, ap, nil, 1, 0)
	put("splice into O_APPEND", 0, err)
	_, err = s.tee(f, q[1], 1, 0)
	put("tee from a file", 0, err)
	_, err = s.tee(p[0], p[1], 1, 0)
	put("tee to itself", 0, err)
	_, err = s.vmsplice(f, []byte("x"))
	put("vmsplice file", 0, err)
	n, err = s.splice(f, nil, p[1], nil, 0, 0)
	put("splice 0", n, err)
	for _, fd := range []int{f, g, ap, p[0], p[1], q[0], q[1]} {
		require.NoError(t, s.close(fd))
	}
	return out.String()
}

// TestSpliceMatchesKernel runs spliceScript on this machine's kernel and on the
// model.
func TestSpliceMatchesKernel(t *testing.T) {
	want := spliceScript(t, realSplice{t.TempDir()})
	got := spliceScript(t, modelSplice{sim.New(vfs.New()).Spawn()})
	require.Equal(t, want, got)
	require.Contains(t, want, "splice pipe->file@5: 3")
}

func (realSplice) close(fd int) error    { return unix.Close(fd) }
func (m modelSplice) close(fd int) error { return m.p.Close(fd) }

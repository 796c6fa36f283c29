package vfs_test

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The namespace scripts of namespace_test.go run here against the real kernel, in
// a fresh temporary directory, so the model's errnos are Linux's. Skipped unless
// the temporary directory is on ext4.

func requireExt4(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.EXT4_SUPER_MAGIC {
		t.Skip("temporary directory is not on ext4")
	}
	return dir
}

type kernelEnv struct{ fd int }

func newKernelEnv(t *testing.T) nsEnv {
	dir := requireExt4(t)
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return kernelEnv{fd}
}

func (k kernelEnv) mkdir(p string) error  { return bare(unix.Mkdirat(k.fd, p, 0o755)) }
func (k kernelEnv) rmdir(p string) error  { return bare(unix.Unlinkat(k.fd, p, unix.AT_REMOVEDIR)) }
func (k kernelEnv) unlink(p string) error { return bare(unix.Unlinkat(k.fd, p, 0)) }
func (k kernelEnv) symlink(target, p string) error {
	return bare(unix.Symlinkat(target, k.fd, p))
}
func (k kernelEnv) link(o, n string) error   { return bare(unix.Linkat(k.fd, o, k.fd, n, 0)) }
func (k kernelEnv) rename(o, n string) error { return bare(unix.Renameat(k.fd, o, k.fd, n)) }
func (k kernelEnv) open(p string, flags int) (handle, error) {
	fd, err := unix.Openat(k.fd, p, flags|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return nil, bare(err)
	}
	return kernelHandle{fd}, nil
}
func (k kernelEnv) lstat(p string, follow bool) (uint32, uint32, int64, error) {
	var st unix.Stat_t
	fl := unix.AT_SYMLINK_NOFOLLOW
	if follow {
		fl = 0
	}
	if err := unix.Fstatat(k.fd, p, &st, fl); err != nil {
		return 0, 0, 0, bare(err)
	}
	return st.Mode, uint32(st.Nlink), st.Size, nil
}
func (k kernelEnv) readlink(p string) (string, error) {
	b := make([]byte, 4096)
	n, err := unix.Readlinkat(k.fd, p, b)
	if err != nil {
		return "", bare(err)
	}
	return string(b[:n]), nil
}

type kernelHandle struct{ fd int }

func (h kernelHandle) pwrite(b []byte, off int64) error {
	_, err := unix.Pwrite(h.fd, b, off)
	return bare(err)
}
func (h kernelHandle) content() (string, error) {
	b := make([]byte, 1<<16)
	n, err := unix.Pread(h.fd, b, 0)
	if err != nil {
		return "", bare(err)
	}
	return string(b[:n]), nil
}
func (h kernelHandle) nlink() uint32 {
	var st unix.Stat_t
	_ = unix.Fstat(h.fd, &st)
	return uint32(st.Nlink)
}
func (h kernelHandle) close() { unix.Close(h.fd) }

// bare turns a nil unix error into a nil error interface.
func bare(err error) error {
	if err == nil {
		return nil
	}
	return err
}

func TestNamespaceScriptsKernel(t *testing.T) {
	for _, c := range nsCases {
		t.Run(c.name, func(t *testing.T) { runNS(t, newKernelEnv(t), c.script) })
	}
	t.Run("symlink loop limit", func(t *testing.T) { runNS(t, newKernelEnv(t), symlinkChainScript()) })
}

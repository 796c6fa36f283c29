package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/mount"
)

func TestCtlWithoutMountIsUsageError(t *testing.T) {
	var out, errb bytes.Buffer
	require.Equal(t, 2, run([]string{"ctl", t.TempDir(), "report"}, &out, &errb))
	require.Contains(t, errb.String(), "no iosim mount answers there")
	require.Equal(t, 2, run([]string{"mount", "--model", "bogus", t.TempDir()}, &out, &errb))
	require.Contains(t, errb.String(), "unknown persistence model")
}

// iosim mount serves --root's copy; ctl crashes and restarts it; umount ends it.
func TestMountCommand(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("needs FUSE: /dev/fuse: %v", err)
	}
	snap, dir := t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(snap, "x"), []byte("hi"), 0o644))
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"mount", "--root", snap, dir}, &out, &errb) }()
	t.Cleanup(func() {
		unix.Unmount(dir, unix.MNT_DETACH)
	})
	require.Eventually(t, func() bool {
		_, err := mount.Ctl(dir, "report")
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	b, err := os.ReadFile(filepath.Join(dir, "x"))
	require.NoError(t, err)
	require.Equal(t, "hi", string(b))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "y"), []byte("unsynced"), 0o644))
	var o bytes.Buffer
	require.Equal(t, 0, run([]string{"ctl", dir, "crash"}, &o, &errb), errb.String())
	require.Equal(t, 0, run([]string{"ctl", dir, "restart"}, &o, &errb), errb.String())
	_, err = os.Stat(filepath.Join(dir, "y"))
	require.ErrorIs(t, err, os.ErrNotExist)
	b, err = os.ReadFile(filepath.Join(dir, "x"))
	require.NoError(t, err)
	require.Equal(t, "hi", string(b))
	require.Equal(t, 0, run([]string{"umount", dir}, &o, &errb), errb.String())
	select {
	case code := <-done:
		require.Equal(t, 0, code, errb.String())
	case <-time.After(5 * time.Second):
		t.Fatal("iosim mount did not exit after umount")
	}
}

// --record writes what the mount served; replay --verify replays it clean.
func TestMountRecordReplaysClean(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("needs FUSE: /dev/fuse: %v", err)
	}
	dir := t.TempDir()
	rec := filepath.Join(t.TempDir(), "rec.trace")
	var out, errb bytes.Buffer
	done := make(chan int, 1)
	go func() { done <- run([]string{"mount", "--record", rec, dir}, &out, &errb) }()
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	require.Eventually(t, func() bool {
		_, err := mount.Ctl(dir, "report")
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "d"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "d/f"), bytes.Repeat([]byte("0123456789"), 1000), 0o644))
	require.NoError(t, os.Rename(filepath.Join(dir, "d/f"), filepath.Join(dir, "d/g")))
	require.Equal(t, 0, run([]string{"umount", dir}, &out, &errb), errb.String())
	select {
	case code := <-done:
		require.Equal(t, 0, code, errb.String())
	case <-time.After(5 * time.Second):
		t.Fatal("iosim mount did not exit after umount")
	}
	b, err := os.ReadFile(rec)
	require.NoError(t, err)
	require.Contains(t, string(b), "rename")
	require.Contains(t, string(b), strings.Repeat("0123456789", 1000), "no string is cut")
	var o, e bytes.Buffer
	require.Equal(t, 0, run([]string{"replay", "--verify", rec}, &o, &e), o.String()+e.String())
	require.Contains(t, o.String(), "divergences: 0")
}

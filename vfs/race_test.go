package vfs_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// These tests are meant for go test -race ./vfs: many goroutines on one FS.

// TestRaceInodeAPI: writers, readers, truncaters, syncers and namespace changes on
// one file system; every read sees whole 512-byte records (writes are atomic).
func TestRaceInodeAPI(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	var wg sync.WaitGroup
	const rec = 512
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := bytes.Repeat([]byte{byte('a' + g)}, rec)
			for k := range 300 {
				if _, err := f.WriteAt(p, int64((k*7+g)%64)*rec); err != nil {
					t.Error(err)
					return
				}
				if k%50 == 0 {
					_ = f.Fdatasync(nil)
				}
			}
		}()
	}
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]byte, rec)
			for k := range 300 {
				n, err := f.ReadAt(b, int64(k%64)*rec)
				if err != nil {
					t.Error(err)
					return
				}
				if n == rec && !bytes.Equal(b, bytes.Repeat(b[:1], rec)) {
					t.Errorf("torn record at %d", k%64*rec)
					return
				}
				_, _ = f.SeekData(0)
				var st vfs.Stat
				f.Stat(&st)
			}
		}()
	}
	wg.Add(2)
	go func() {
		defer wg.Done()
		for k := range 200 {
			name := fmt.Sprintf("n%d", k%5)
			if ino, _, err := r.Open(name, unix.O_CREAT|unix.O_RDWR, 0o644); err == nil {
				_, _ = ino.WriteAt([]byte("x"), 0)
			}
			_ = r.Rename(name, r, name+".moved", 0)
			_ = r.Unlink(name + ".moved")
			if k%20 == 0 {
				_ = r.Fsync(nil)
				_ = fs.Sync()
			}
		}
	}()
	go func() {
		defer wg.Done()
		for range 50 {
			c := fs.Crash()
			_ = fs.Pending()
			_ = fs.RandomCrash(vfs.Torn, 3)
			_, _ = c.Root().Dirents()
		}
	}()
	wg.Wait()
}

// TestRaceAfero: afero Files shared between goroutines, and one per goroutine.
func TestRaceAfero(t *testing.T) {
	fs := vfs.New()
	shared, err := fs.OpenFile("/log", os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			own, err := fs.OpenFile(fmt.Sprintf("/own%d", g), os.O_CREATE|os.O_RDWR, 0o644)
			if err != nil {
				t.Error(err)
				return
			}
			defer own.Close()
			line := []byte(fmt.Sprintf("goroutine %d\n", g))
			for k := range 200 {
				if _, err := shared.Write(line); err != nil {
					t.Error(err)
					return
				}
				if _, err := own.Write(line); err != nil {
					t.Error(err)
					return
				}
				if k%10 == 0 {
					_, _ = own.Seek(0, io.SeekStart)
					_, _ = io.ReadAll(own)
					_ = own.Sync()
					_, _ = fs.Stat("/log")
				}
			}
		}()
	}
	wg.Wait()
	got, err := fs.Stat("/log")
	require.NoError(t, err)
	require.Equal(t, int64(6*200*len("goroutine 0\n")), got.Size(), "appends never overwrite each other")
	require.NoError(t, shared.Close())
}

// TestRaceCrashStates: crash states built from one file system are used by
// concurrent goroutines (crash exploration runs checkers in parallel), while the
// original goes on.
func TestRaceCrashStates(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	f := create(t, r, "f")
	write(t, f, string(bytes.Repeat([]byte("d"), 64*1024)), 0)
	require.NoError(t, fs.Sync())
	write(t, f, "pending", 100)
	states := []*vfs.FS{fs.Crash(), fs.Crash(), fs.RandomCrash(vfs.Subset, 1), fs.RandomCrash(vfs.Torn, 2)}
	var wg sync.WaitGroup
	for k, c := range append(states, fs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cf, err := c.Root().Resolve("f", true)
			if err != nil {
				t.Error(err)
				return
			}
			b := make([]byte, 4096)
			for j := range 50 {
				var st vfs.Stat
				cf.Stat(&st)
				_, _ = cf.ReadAt(b, int64(j%16)*4096)
				_, _ = cf.WriteAt([]byte{byte(k)}, int64(j%16)*4096)
				if j%10 == 0 {
					_ = cf.Fsync(nil)
					_ = c.Crash()
				}
			}
		}()
	}
	wg.Wait()
}

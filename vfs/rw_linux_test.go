package vfs_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/vfs"
)

// TestInodeDataKernel runs the same random data operations through the inode API on a
// real file on ext4 and on the model and compares errnos, sizes and content.
// SEEK_DATA/SEEK_HOLE and st_blocks, which depend on ext4's extent and page-cache
// details, are compared by data_linux_test.go at the fileData level.
func TestInodeDataKernel(t *testing.T) {
	dir := requireExt4(t)
	var sfs unix.Statfs_t
	if err := unix.Statfs(dir, &sfs); err != nil || sfs.Bsize != 4096 {
		t.Skip("not 4 KiB blocks")
	}
	n := 0
	rapid.Check(t, func(t *rapid.T) {
		const bs = 4096
		n++
		fd, err := unix.Open(filepath.Join(dir, "f"+string(rune('a'+n%26))), unix.O_CREAT|unix.O_TRUNC|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		fs := vfs.New()
		ino, _, err := fs.Root().Open("f", unix.O_CREAT|unix.O_RDWR, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		offGen := rapid.Int64Range(0, 24*bs)
		lenGen := rapid.Int64Range(1, 3*bs)
		same := func(what string, kerr, merr error) {
			if kerr == nil {
				kerr = error(nil)
			}
			if merr != kerr && !(merr == nil && kerr == nil) {
				t.Fatalf("%s: kernel %v, model %v", what, kerr, merr)
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"write": func(t *rapid.T) {
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				p := bytes.Repeat([]byte{byte(rapid.IntRange(1, 255).Draw(t, "c"))}, int(n))
				_, kerr := unix.Pwrite(fd, p, off)
				_, merr := ino.WriteAt(p, off)
				same("pwrite", bare(kerr), merr)
			},
			"truncate": func(t *rapid.T) {
				n := offGen.Draw(t, "size")
				same("ftruncate", bare(unix.Ftruncate(fd, n)), ino.Truncate(n))
			},
			"fallocate": func(t *rapid.T) {
				mode := rapid.SampledFrom([]uint32{0, vfs.FallocKeepSize, vfs.FallocPunchHole | vfs.FallocKeepSize,
					vfs.FallocZeroRange, vfs.FallocZeroRange | vfs.FallocKeepSize}).Draw(t, "mode")
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				same("fallocate", bare(unix.Fallocate(fd, mode, off, n)), ino.Fallocate(mode, off, n))
			},
			"": func(t *rapid.T) {
				var st unix.Stat_t
				if err := unix.Fstat(fd, &st); err != nil {
					t.Fatal(err)
				}
				if st.Size != ino.Size() {
					t.Fatalf("size: kernel %d, model %d", st.Size, ino.Size())
				}
			},
			"read": func(t *rapid.T) {
				// Reads cache pages, which changes SEEK_DATA over unwritten blocks.
				off, n := offGen.Draw(t, "off"), lenGen.Draw(t, "n")
				kb, mb := make([]byte, n), make([]byte, n)
				kn, kerr := unix.Pread(fd, kb, off)
				mn, merr := ino.ReadAt(mb, off)
				same("pread", bare(kerr), merr)
				if kn != mn || !bytes.Equal(kb, mb) {
					t.Fatalf("pread(%d, %d): kernel %d bytes, model %d, or content differs", off, n, kn, mn)
				}
			},
		})
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			t.Fatal(err)
		}
		kb := make([]byte, st.Size)
		if _, err := unix.Pread(fd, kb, 0); err != nil {
			t.Fatal(err)
		}
		mb := make([]byte, st.Size)
		if _, err := ino.ReadAt(mb, 0); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(kb, mb) {
			t.Fatalf("content differs")
		}
	})
}

// TestReadCachesUnwrittenKernel is TestReadCachesUnwritten on the kernel, with
// the same answers.
func TestReadCachesUnwrittenKernel(t *testing.T) {
	dir := requireExt4(t)
	fd, err := unix.Open(filepath.Join(dir, "f"), unix.O_CREAT|unix.O_RDWR|unix.O_CLOEXEC, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	seek := func(off int64) [2]int64 {
		d, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err != nil {
			d = -1
		}
		h, err := unix.Seek(fd, off, unix.SEEK_HOLE)
		if err != nil {
			h = -1
		}
		return [2]int64{d, h}
	}
	if err := unix.Fallocate(fd, 0, 0, 16384); err != nil {
		t.Fatal(err)
	}
	if got := seek(0); got != [2]int64{-1, 0} {
		t.Fatalf("before the read: %v", got)
	}
	if _, err := unix.Pread(fd, make([]byte, 100), 4096); err != nil {
		t.Fatal(err)
	}
	if got := seek(0); got != [2]int64{4096, 0} {
		t.Fatalf("after the read, from 0: %v", got)
	}
	if got := seek(4096); got != [2]int64{4096, 8192} {
		t.Fatalf("after the read, from 4096: %v", got)
	}
}

//go:build linux

package sim_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/internal/ddscript"
	"github.com/iosim/iosim/internal/ext4host"
)

// TestExtentTreeBlocks pins down when ext4 charges an extent-tree block in
// st_blocks (vfs fileData.Blocks states the rule). The rows are
// testdata/extents.txt: each is a list of steps (runExtentSteps) and the
// st_blocks this kernel (ext4) reports after each. The model always runs and
// must give those numbers, twice: with fstat after every step, and with fstat
// only after fsync (as TestKernelDiff asks), since ext4's answer does not
// depend on when it is asked. Where an ext4 directory is available the kernel
// runs too and must agree with the file (-rewrite regenerates it from the
// kernel).
//
// The rule, in short: the tree changes when ext4 changes it, not when the page
// cache does. A buffered write only reserves its blocks (delayed allocation);
// they get extents at writeback (fsync, fdatasync, an O_DIRECT read of them,
// the release of a file after a truncate to 0, a rename over another file).
// Every insertion or conversion of an extent (writeback, fallocate, zero
// range) pulls a one-leaf tree back into the inode if at most 4 extents
// remain (ext4_ext_try_to_merge_up); removals (punch, truncate) never do.
//
// Host facts: the kernel side needs an ext4 directory with 4 KiB blocks. The
// file records upstream ext4; whether this host's ext4 pulls a one-leaf tree
// back into the inode as upstream does is probed first (ext4host.Probe,
// logged). Where it keeps the leaf, a step whose st_blocks differs from the
// file's agrees if the data blocks FIEMAP maps equal the file's and the
// difference is one leaf that ext4host's TreeAgrees allows; -rewrite refuses
// to run on such a host.
//
// A kernel run whose file ends up with logically adjacent extents of one kind
// placed apart on disk is inconclusive (the model counts them as one extent,
// see fileData.Extents) and is retried on a fresh file; after five such runs
// the kernel side of the row is logged as inconclusive and the model is still
// checked against the file.
func TestExtentTreeBlocks(t *testing.T) {
	dir, why := ext4DirOrWhy(t)
	if dir == "" {
		t.Logf("model side only: %s", why)
	}
	var facts ext4host.Facts
	if dir != "" {
		var err error
		facts, err = ext4host.Probe(dir)
		require.NoError(t, err)
		t.Log(facts)
	}
	var h *host
	datadriven.RunTest(t, "testdata/extents.txt", func(t *testing.T, d *datadriven.TestData) string {
		if d.Cmd != "extents" {
			t.Errorf("%s: unknown directive %q (want extents)", d.Pos, d.Cmd)
			return d.Expected
		}
		steps, err := ddscript.Lines(d)
		if err != nil {
			t.Errorf("%v", err)
			return d.Expected
		}
		want := d.Expected
		if dir != "" {
			if h == nil {
				h = newHostIn(t, dir) // once datadriven holds the file open
			}
			kernel, maps, ok := extentKernel(t, h, steps)
			switch {
			case !ok:
				t.Logf("%s: ext4 placed adjacent extents apart on disk in every try; kernel side inconclusive", d.Pos)
			case d.Rewrite && facts.KeepsLeaf:
				t.Fatalf("%s: -rewrite would record this host's ext4, which keeps a one-leaf tree upstream ext4 frees; rewrite on a host where ext4host.Probe says otherwise", d.Pos)
			case d.Rewrite:
				want = kernel
			default:
				if why := kernelAgrees(facts, kernel, d.Expected, maps); why != "" {
					t.Errorf("%s: kernel st_blocks\n%swant\n%s%s", d.Pos, kernel, d.Expected, why)
				}
			}
		}
		wantBlocks := strings.Fields(want)
		for _, every := range []bool{true, false} {
			m := modelProcess(t, modelOnlyBase, 1024)
			got, err := runExtentSteps(m, steps, func(int) bool { return every })
			if err != nil {
				t.Errorf("%v", err)
				return d.Expected
			}
			for i, b := range got {
				w := ""
				if i < len(wantBlocks) {
					w = wantBlocks[i]
				}
				if e, ok := strings.CutSuffix(b, ":-"); ok { // an errno, not asked st_blocks
					w, _, _ = strings.Cut(w, ":")
					b = e
				}
				if b != "-" && b != w {
					t.Errorf("%s: model st_blocks %s after step %d (%s:%s), want %s (stat after every step: %v)",
						d.Pos, b, i+1, steps[i].Pos, steps[i].Name, strings.Join(wantBlocks, " "), every)
					break
				}
			}
		}
		return want
	})
}

// extentMap is what FIEMAP shows of the kernel's file after a step: the blocks
// it maps (delayed allocations included, as st_blocks counts them) and the
// extents in the tree (delayed ones are not).
type extentMap struct {
	data, extents int64
}

// extentKernel runs the steps on the kernel (up to five times while the result is
// inconclusive) and returns st_blocks after each step, one per line, and what
// FIEMAP showed after each.
func extentKernel(t *testing.T, h *host, steps []*ddscript.Cmd) (string, []extentMap, bool) {
	for try := 0; try < 5; try++ {
		p := h.newPair(t)
		apart := false
		var maps []extentMap
		got, err := runExtentSteps(p.k, steps, func(fd int) bool {
			if extentsApart(t, fd) {
				apart = true
			}
			maps = append(maps, fiemapCount(t, fd))
			return !apart
		})
		p.done()
		if err != nil {
			t.Fatalf("%v", err)
		}
		if !apart {
			return strings.Join(got, "\n") + "\n", maps, true
		}
	}
	return "", nil, false
}

// fiemapCount counts what FIEMAP maps of fd, in 4 KiB blocks.
func fiemapCount(t *testing.T, fd int) extentMap {
	ext, err := fiemapExtents(fd, 0) // no FIEMAP_FLAG_SYNC: that would write back
	require.NoError(t, err)
	var m extentMap
	for _, x := range ext {
		m.data += int64((x.logical%4096 + x.length + 4095) / 4096)
		if x.flags&fiemapExtentDelalloc == 0 {
			m.extents++
		}
	}
	return m
}

// kernelAgrees compares the kernel's st_blocks lines with the file's, step by
// step, and returns "" if they agree on a host with these facts or a line
// saying at which step they do not: equal, or (errno parts equal) the file's
// data blocks are the ones FIEMAP mapped and the extent-tree blocks differ as
// facts.TreeAgrees allows.
func kernelAgrees(facts ext4host.Facts, kernel, file string, maps []extentMap) string {
	k, f := strings.Fields(kernel), strings.Fields(file)
	if len(k) != len(f) || len(k) != len(maps) {
		return fmt.Sprintf("\n(%d kernel lines, %d in the file, %d FIEMAP answers)", len(k), len(f), len(maps))
	}
	for i := range k {
		if k[i] == f[i] {
			continue
		}
		ke, kb, _ := strings.Cut(k[i], ":")
		fe, fb, _ := strings.Cut(f[i], ":")
		if !strings.Contains(k[i], ":") {
			ke, kb, fe, fb = "", k[i], "", f[i]
		}
		kn, kerr := strconv.ParseInt(kb, 10, 64)
		fn, ferr := strconv.ParseInt(fb, 10, 64)
		m := maps[i]
		if ke == fe && kerr == nil && ferr == nil && fn/8 >= m.data &&
			facts.TreeAgrees(kn/8-m.data, fn/8-m.data, int(m.extents)) {
			continue
		}
		return fmt.Sprintf("(step %d: kernel %s, file %s; FIEMAP maps %d blocks in %d extents; %v)", i+1, k[i], f[i], m.data, m.extents, facts)
	}
	return ""
}

// TestExtentScript runs the steps of IOSIM_EXTENT_SCRIPT (separated by ";",
// commands of runExtentSteps separated by ",") on the kernel, logging st_blocks
// and FIEMAP after every step: a tool to find out what ext4 does.
//
//	IOSIM_EXTENT_SCRIPT='w off=0 len=1,d,t size=1,s' go test ./sim -run TestExtentScript -v
func TestExtentScript(t *testing.T) {
	scripts := os.Getenv("IOSIM_EXTENT_SCRIPT")
	if scripts == "" {
		t.Skip("IOSIM_EXTENT_SCRIPT not set")
	}
	h := newHost(t)
	for i, script := range strings.Split(scripts, ";") {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			var steps []*ddscript.Cmd
			for j, l := range strings.Split(script, ",") {
				c, err := ddscript.Parse(fmt.Sprintf("IOSIM_EXTENT_SCRIPT:%d:%d", i, j+1), l)
				require.NoError(t, err)
				steps = append(steps, c)
			}
			p := h.newPair(t)
			defer p.done()
			got, err := runExtentSteps(p.k, steps, func(fd int) bool {
				t.Logf("FIEMAP %s", fiemapDesc(t, fd))
				return true
			})
			require.NoError(t, err)
			t.Logf("st_blocks %v", got)
		})
	}
}

// fiemapExtentDelalloc is FIEMAP_EXTENT_DELALLOC: a delayed-allocation range,
// not yet in the extent tree (physical 0).
const fiemapExtentDelalloc = 0x4

// extentsApart reports whether the kernel's FIEMAP of fd shows two logically
// adjacent extents of one kind apart on disk (the model's extent count is then
// lower by design).
func extentsApart(t *testing.T, fd int) bool {
	ext, err := fiemapExtents(fd, 0) // no FIEMAP_FLAG_SYNC: that would write back
	require.NoError(t, err)
	for j := 1; j < len(ext); j++ {
		prev, x := ext[j-1], ext[j]
		sameKind := (prev.flags^x.flags)&fiemapExtentUnwrit == 0
		mapped := (prev.flags|x.flags)&fiemapExtentDelalloc == 0
		adjacent := prev.logical+prev.length == x.logical
		if mapped && sameKind && adjacent && prev.physical+prev.length != x.physical {
			return true
		}
	}
	return false
}

func fiemapDesc(t *testing.T, fd int) string {
	ext, err := fiemapExtents(fd, 0)
	require.NoError(t, err)
	var desc strings.Builder
	for _, x := range ext {
		fmt.Fprintf(&desc, "[%d+%d flags %#x] ", x.logical/4096, x.length/4096, x.flags)
	}
	return desc.String()
}

// extentArg reads an offset or length: blocks of 4096 bytes, or bytes with a
// "b" suffix.
func extentArg(c *ddscript.Cmd, key string) int64 {
	v := c.Str(key)
	unit := int64(4096)
	if s, ok := strings.CutSuffix(v, "b"); ok {
		v, unit = s, 1
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil && c.Err() == nil {
		c.Failf("%s=%s: want a number of blocks, or of bytes with a b suffix", key, c.Str(key))
	}
	return n * unit
}

// runExtentSteps runs steps on /f of side s and returns st_blocks after each
// step where stat(fd) says so ("-" elsewhere), and always after s. The steps:
//
//	w off= len=   pwrite len bytes of data at off
//	a off= len=   fallocate(0): allocate, extending the size
//	k off= len=   fallocate(FALLOC_FL_KEEP_SIZE)
//	p off= len=   fallocate(FALLOC_FL_PUNCH_HOLE|FALLOC_FL_KEEP_SIZE)
//	z off= len=   fallocate(FALLOC_FL_ZERO_RANGE|FALLOC_FL_KEEP_SIZE)
//	Z off= len=   fallocate(FALLOC_FL_ZERO_RANGE), extending the size
//	t size=       ftruncate
//	T             open /f with O_TRUNC (creat) and close that descriptor
//	K             open /f with O_TRUNC (creat) and keep that descriptor open
//	u             unlink /f (its descriptor stays open)
//	o             open /proc/self/fd/N of the descriptor read-only and close it
//	s, d          fsync, fdatasync
//	c             open /f read-only again and close it
//	r             rename /f over a new file /x, and back
//	x             renameat2(RENAME_EXCHANGE) of /f and a new file /x
//	R off= len=   pread of an O_DIRECT descriptor of /f
//	W off= len=   pwrite of len bytes (from an aligned buffer) at off through an
//	              O_DIRECT descriptor of /f; a byte offset or length that is not
//	              a multiple of 512 makes it fail (EINVAL) on both sides
//	D off= len=   W through the script's own descriptor, O_DIRECT set on it
//	              for the call with F_SETFL (no open, no release)
//	f off= len=   fadvise(POSIX_FADV_DONTNEED) (len 0: to the end of file)
//
// An errno a step returns is part of its line (EINVAL:16).
func runExtentSteps(s sys, steps []*ddscript.Cmd, stat func(fd int) bool) ([]string, error) {
	fd, err := s.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
	if err != nil {
		return nil, err
	}
	type renamer interface {
		Renameat2(olddirfd int, oldpath string, newdirfd int, newpath string, flags uint) error
	}
	var out []string
	for _, c := range steps {
		var off, n int64
		switch c.Name {
		case "w", "a", "k", "p", "z", "Z", "R", "W", "D", "f":
			off, n = extentArg(c, "off"), extentArg(c, "len")
		case "t":
			off = extentArg(c, "size")
		}
		if err := c.Done(); err != nil {
			return nil, err
		}
		var err error
		switch c.Name {
		case "w":
			_, err = s.Pwrite(fd, []byte(strings.Repeat("x", int(n))), off)
		case "a":
			err = s.Fallocate(fd, 0, off, n)
		case "k":
			err = s.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, off, n)
		case "Z":
			err = s.Fallocate(fd, unix.FALLOC_FL_ZERO_RANGE, off, n)
		case "p":
			err = s.Fallocate(fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		case "z":
			err = s.Fallocate(fd, unix.FALLOC_FL_ZERO_RANGE|unix.FALLOC_FL_KEEP_SIZE, off, n)
		case "T", "K":
			var fd2 int
			fd2, err = s.Creat("/f", 0o644)
			if err == nil && c.Name == "T" {
				err = s.Close(fd2)
			}
		case "u":
			err = s.Unlink("/f")
		case "o":
			link := "/proc/self/fd/" + strconv.Itoa(fd)
			if k, ok := s.(*osKernel); ok {
				link = "/proc/self/fd/" + strconv.Itoa(k.fd(fd))
				var fd2 int
				if fd2, err = unix.Open(link, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
					err = unix.Close(fd2)
				}
				break
			}
			var fd2 int
			if fd2, err = s.Open(link, unix.O_RDONLY|unix.O_CLOEXEC, 0); err == nil {
				err = s.Close(fd2)
			}
		case "t":
			err = s.Ftruncate(fd, off)
		case "s":
			err = s.Fsync(fd)
		case "d":
			err = s.Fdatasync(fd)
		case "c":
			var fd2 int
			if fd2, err = s.Open("/f", unix.O_RDONLY, 0); err == nil {
				err = s.Close(fd2)
			}
		case "r", "x":
			var fd2 int
			if fd2, err = s.Creat("/x", 0o644); err == nil {
				err = s.Close(fd2)
			}
			switch {
			case err != nil:
			case c.Name == "x":
				err = s.(renamer).Renameat2(unix.AT_FDCWD, "/f", unix.AT_FDCWD, "/x", unix.RENAME_EXCHANGE)
			default:
				if err = s.Rename("/f", "/x"); err == nil {
					err = s.Rename("/x", "/f")
				}
			}
		case "f":
			err = s.Fadvise(fd, off, n, unix.FADV_DONTNEED)
		case "D":
			if _, err = s.FcntlInt(uintptr(fd), unix.F_SETFL, unix.O_DIRECT); err == nil {
				_, err = s.Pwrite(fd, alignedBuf(int(n), 0), off)
				if _, ferr := s.FcntlInt(uintptr(fd), unix.F_SETFL, 0); err == nil {
					err = ferr
				}
			}
		case "R", "W":
			flags := unix.O_RDONLY
			if c.Name == "W" {
				flags = unix.O_WRONLY
			}
			var fd2 int
			if fd2, err = s.Open("/f", flags|unix.O_DIRECT, 0); err == nil {
				if c.Name == "W" {
					_, err = s.Pwrite(fd2, alignedBuf(int(n), 0), off)
				} else {
					_, err = s.Pread(fd2, alignedBuf(int(n), 0), off)
				}
				if cerr := s.Close(fd2); err == nil {
					err = cerr
				}
			}
		default:
			return nil, c.Failf("unknown step (want w, a, k, p, z, Z, t, T, K, u, o, s, d, c, r, x, R, W, D, f)")
		}
		line := "-"
		if stat(fd) || c.Name == "s" {
			var st unix.Stat_t
			if err := s.Fstat(fd, &st); err != nil {
				return nil, fmt.Errorf("%s: fstat: %v", c.Pos, err)
			}
			line = strconv.FormatInt(st.Blocks, 10)
		}
		if err != nil {
			line = errName(err) + ":" + line
		}
		out = append(out, line)
	}
	return out, nil
}

// TestMsyncSyncsItsRange: msync(MS_SYNC) of part of a shared mapping writes
// back that part of the file only (vfs_fsync_range), on the kernel and on the
// model: five dirty one-block extents and an msync of the first page leave
// four blocks delayed (no leaf: 40), fsync then maps them (48). In the model,
// a crash after the msync keeps the first block's data and not the others'.
func TestMsyncSyncsItsRange(t *testing.T) {
	h := newHost(t)
	p := h.newPair(t)
	defer p.done()
	const bs = 4096
	var fd int
	for _, s := range []sys{p.m, p.k} {
		var err error
		fd, err = s.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
		require.NoError(t, err)
		dir, err := s.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
		require.NoError(t, err)
		require.NoError(t, s.Fsync(dir)) // the name is durable
		require.NoError(t, s.Close(dir))
		require.NoError(t, s.Ftruncate(fd, 10*bs))
		for b := int64(0); b < 10; b += 2 {
			_, err := s.Pwrite(fd, []byte(strings.Repeat("x", bs)), b*bs)
			require.NoError(t, err)
		}
	}
	km, err := unix.Mmap(p.k.fd(fd), 0, 10*bs, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	defer unix.Munmap(km)
	mm, err := p.m.Mmap(fd, 0, 10*bs, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	require.NoError(t, err)
	require.NoError(t, unix.Msync(km[:bs], unix.MS_SYNC))
	require.NoError(t, p.m.Msync(mm[:bs], unix.MS_SYNC))

	blocks := func(what string) {
		var ks, ms unix.Stat_t
		require.NoError(t, p.k.Fstat(fd, &ks))
		require.NoError(t, p.m.Fstat(fd, &ms))
		require.Equal(t, ks.Blocks, ms.Blocks, "st_blocks %s", what)
	}
	blocks("after msync of the first page")

	crashed, err := p.fs.Crash().Root().Resolve("/f", true)
	require.NoError(t, err)
	got := make([]byte, bs)
	_, err = crashed.ReadAt(got, 0)
	require.NoError(t, err)
	require.Equal(t, strings.Repeat("x", bs), string(got), "the msynced block is durable")
	_, err = crashed.ReadAt(got, 2*bs)
	require.NoError(t, err)
	require.Equal(t, make([]byte, bs), got, "a block outside the msynced range is not")

	require.NoError(t, p.k.Fsync(fd))
	require.NoError(t, p.m.Fsync(fd))
	blocks("after fsync")
}

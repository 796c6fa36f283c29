package vfs

import (
	"bytes"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
	gib = int64(1) << 30
)

// checkInvariants verifies the representation invariants stated in data.go.
func (d *fileData) checkInvariants() error {
	var mem int64
	for i, c := range d.chunks {
		if c.base%chunkBlocks != 0 || c.base < 0 {
			return fmt.Errorf("chunk %d: base %d not aligned", i, c.base)
		}
		if i > 0 && d.chunks[i-1].base >= c.base {
			return fmt.Errorf("chunk %d: base %d not after %d", i, c.base, d.chunks[i-1].base)
		}
		if c.written|c.unwr == 0 {
			return fmt.Errorf("chunk %d: empty", i)
		}
		if c.written&c.unwr != 0 {
			return fmt.Errorf("chunk %d: written&unwr = %b", i, c.written&c.unwr)
		}
		if c.cached&^c.unwr != 0 {
			return fmt.Errorf("chunk %d: cached not within unwritten", i)
		}
		if (c.delayed|c.unconv)&^c.written != 0 || c.delayed&c.unconv != 0 {
			return fmt.Errorf("chunk %d: delayed %b / unconverted %b not disjoint within written %b", i, c.delayed, c.unconv, c.written)
		}
		for j := range chunkBlocks {
			b, bit := c.buf(j), uint32(1)<<j
			if b == nil {
				if c.owner != nil && c.owned&bit != 0 {
					return fmt.Errorf("chunk %d block %d: owned without buffer", i, j)
				}
				continue
			}
			mem += d.bs
			if int64(len(b)) != d.bs {
				return fmt.Errorf("chunk %d block %d: buffer of %d bytes", i, j, len(b))
			}
			if c.written&bit == 0 {
				return fmt.Errorf("chunk %d block %d: buffer on a block that is not written", i, j)
			}
		}
	}
	if mem != d.mem {
		return fmt.Errorf("mem = %d, buffers hold %d", d.mem, mem)
	}
	return nil
}

// writebackAll is Writeback of every block, as fsync does.
func (d *fileData) writebackAll() {
	if len(d.chunks) > 0 {
		d.Writeback(0, (d.chunks[len(d.chunks)-1].base+chunkBlocks)<<d.shift)
	}
}

func readAll(d *fileData, off, n int64) []byte {
	p := make([]byte, n)
	d.ReadAt(p, off)
	return p
}

func fill(n int, c byte) []byte { return bytes.Repeat([]byte{c}, n) }

// seekMap lists SEEK_DATA and SEEK_HOLE answers at the given offsets, in the
// form "off:D<data>/H<hole>" used by the kernel probes in data_linux_test.go.
func seekMap(d *fileData, size int64, offs ...int64) []string {
	var out []string
	for _, o := range offs {
		out = append(out, fmt.Sprintf("%d:D%d/H%d", o, d.SeekData(o, size), d.SeekHole(o, size)))
	}
	return out
}

// TestDataSparseTrace replays the calls of testdata/traces/sparse.seekdata.strace
// and checks every SEEK answer, read and st_blocks recorded there.
func TestDataSparseTrace(t *testing.T) {
	d := newFileData(0)
	size := gib
	require.Equal(t, int64(-1), d.SeekData(0, size))
	require.Equal(t, int64(0), d.Blocks())
	d.WriteAt(fill(4096, 'A'), 0)
	d.WriteAt(fill(4096, 'B'), mib)
	d.WriteAt(fill(8192, 'C'), 104861696)
	d.WriteAt(fill(200, 'D'), 536871012)
	d.WriteAt(fill(4096, 'E'), 1073737728)
	require.Equal(t, int64(48), d.Blocks(), "6 blocks, no extent inserted before writeback")
	d.writebackAll() // fsync
	require.Equal(t, int64(56), d.Blocks(), "6 blocks in 5 extents + 1 leaf block")
	for _, q := range [][3]int64{ // off, SEEK_DATA, SEEK_HOLE
		{0, 0, 4096}, {4096, 1048576, 4096}, {1048576, 1048576, 1052672},
		{1052672, 104861696, 1052672}, {104861696, 104861696, 104869888},
		{104869888, 536870912, 104869888}, {536870912, 536870912, 536875008},
		{536875008, 1073737728, 536875008}, {1073737728, 1073737728, 1073741824},
		{1073741824, -1, -1}, {2147483648, -1, -1}, {1073741823, 1073741823, 1073741824},
	} {
		require.Equal(t, q[1], d.SeekData(q[0], size), "SEEK_DATA %d", q[0])
		require.Equal(t, q[2], d.SeekHole(q[0], size), "SEEK_HOLE %d", q[0])
	}
	require.Equal(t, make([]byte, 64), readAll(d, 2*mib, 64))
	require.Equal(t, fill(64, 'D'), readAll(d, 536871012, 64))
	require.Equal(t, make([]byte, 100), readAll(d, 536870912, 100), "zeros before the 200-byte write in its block")

	d.PunchHole(mib, 4096)
	require.Equal(t, int64(48), d.Blocks(), "5 blocks in 4 extents; the leaf block stays")
	require.Equal(t, int64(104861696), d.SeekData(4096, size))
	require.Equal(t, make([]byte, 64), readAll(d, mib, 64))

	d.Truncate(209715200)
	size = 209715200
	require.Equal(t, int64(32), d.Blocks(), "3 blocks in 2 extents; the leaf block stays")
	require.Equal(t, int64(-1), d.SeekData(104869888, size))

	d.Truncate(0)
	require.Equal(t, int64(0), d.Blocks())
	require.Equal(t, int64(-1), d.SeekData(0, 0))
	require.Zero(t, d.MemBytes())
	require.NoError(t, d.checkInvariants())

	// dense.img: 16 × 64 KiB sequential writes, one extent.
	d = newFileData(0)
	for i := int64(0); i < 16; i++ {
		d.WriteAt(fill(65536, 'x'), i*65536)
	}
	d.writebackAll()
	require.Equal(t, int64(2048), d.Blocks())
	require.Equal(t, int64(1), d.Extents())
	require.Equal(t, int64(0), d.SeekData(0, mib))
	require.Equal(t, mib, d.SeekHole(0, mib))
	require.Equal(t, int64(-1), d.SeekData(mib, mib))
}

// TestDataSeek covers the SEEK_DATA/SEEK_HOLE edge cases.
func TestDataSeek(t *testing.T) {
	const B = 4096
	for _, tc := range []struct {
		name  string
		setup func(d *fileData)
		size  int64
		want  []string // at offsets 0, 100, B, 2B, 3B, 4B, size-1, size
	}{
		{"all hole", func(d *fileData) {}, 8 * B,
			[]string{"0:D-1/H0", "100:D-1/H100", "4096:D-1/H4096", "8192:D-1/H8192", "12288:D-1/H12288", "16384:D-1/H16384", "32767:D-1/H32767", "32768:D-1/H-1"}},
		{"empty file", func(d *fileData) {}, 0,
			[]string{"0:D-1/H-1", "100:D-1/H-1", "4096:D-1/H-1", "8192:D-1/H-1", "12288:D-1/H-1", "16384:D-1/H-1", "-1:D-1/H-1", "0:D-1/H-1"}},
		{"one byte in block 1, size mid block 3", func(d *fileData) { d.WriteAt([]byte{1}, B+4095) }, 3*B + 10,
			[]string{"0:D4096/H0", "100:D4096/H100", "4096:D4096/H8192", "8192:D-1/H8192", "12288:D-1/H12288", "16384:D-1/H-1", "12297:D-1/H12297", "12298:D-1/H-1"}},
		{"data to EOF: implicit hole at size", func(d *fileData) { d.WriteAt(fill(3*B+10, 1), 0) }, 3*B + 10,
			[]string{"0:D0/H12298", "100:D100/H12298", "4096:D4096/H12298", "8192:D8192/H12298", "12288:D12288/H12298", "16384:D-1/H-1", "12297:D12297/H12298", "12298:D-1/H-1"}},
		{"unwritten is a hole", func(d *fileData) { d.Allocate(0, 4*B); d.WriteAt([]byte{1}, 2*B) }, 4 * B,
			[]string{"0:D8192/H0", "100:D8192/H100", "4096:D8192/H4096", "8192:D8192/H12288", "12288:D-1/H12288", "16384:D-1/H-1", "16383:D-1/H16383", "16384:D-1/H-1"}},
		{"cached unwritten page is data", func(d *fileData) { d.Allocate(0, 16*B); d.CacheUnwritten(B, 100) }, 16 * B,
			[]string{"0:D4096/H0", "100:D4096/H100", "4096:D4096/H8192", "8192:D-1/H8192", "12288:D-1/H12288", "16384:D-1/H16384", "65535:D-1/H65535", "65536:D-1/H-1"}},
		{"chunk boundary", func(d *fileData) { d.WriteAt(fill(3*B, 1), 31*B) }, 40 * B,
			[]string{"0:D126976/H0", "100:D126976/H100", "4096:D126976/H4096", "8192:D126976/H8192", "12288:D126976/H12288", "16384:D126976/H16384", "163839:D-1/H163839", "163840:D-1/H-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newFileData(0)
			tc.setup(d)
			offs := []int64{0, 100, B, 2 * B, 3 * B, 4 * B, tc.size - 1, tc.size}
			require.Equal(t, tc.want, seekMap(d, tc.size, offs...))
			require.NoError(t, d.checkInvariants())
		})
	}
	d := newFileData(0)
	d.WriteAt(fill(4096, 1), 31*4096)
	d.WriteAt(fill(4096, 1), 32*4096)
	require.Equal(t, int64(33*4096), d.SeekHole(31*4096, 100*4096))
	require.Equal(t, int64(31*4096), d.SeekData(0, 100*4096))
	require.Equal(t, int64(-1), d.SeekData(33*4096, 100*4096))
	require.Equal(t, int64(-1), d.SeekData(-1, 100*4096))
}

// TestDataFallocate checks Allocate, PunchHole and ZeroRange on partial and whole
// blocks against the states ext4 (Linux 6.18) reported through FIEMAP in the
// same situations (see probe comments).
func TestDataFallocate(t *testing.T) {
	const B = 4096
	state := func(d *fileData, nblocks int64) string {
		s := ""
		for b := int64(0); b < nblocks; b++ {
			bit := uint32(1) << (b & chunkMask)
			i, ok := d.search(b &^ chunkMask)
			switch {
			case !ok:
				s += "."
			case d.chunks[i].written&bit != 0:
				s += "w"
			case d.chunks[i].unwr&bit != 0:
				s += "u"
			default:
				s += "."
			}
		}
		return s
	}
	t.Run("zero range on empty allocates partial blocks", func(t *testing.T) {
		// kernel: fallocate(ZERO_RANGE|KEEP_SIZE, 100, 3B) → [0+4u], st_blocks 32
		d := newFileData(0)
		d.ZeroRange(100, 3*B)
		require.Equal(t, "uuuu....", state(d, 8))
		require.Equal(t, int64(32), d.Blocks())
		require.Equal(t, int64(-1), d.SeekData(0, 0))
	})
	t.Run("zero range on written converts whole blocks only", func(t *testing.T) {
		// kernel: [0+1w][1+2u][3+5w], 64 blocks
		d := newFileData(0)
		d.WriteAt(fill(8*B, 'x'), 0)
		d.ZeroRange(100, 3*B)
		require.Equal(t, "wuuwwwww", state(d, 8))
		require.Equal(t, int64(64), d.Blocks())
		want := fill(8*B, 'x')
		clear(want[100 : 100+3*B])
		require.Equal(t, want, readAll(d, 0, 8*B))
		require.Equal(t, []string{"0:D0/H4096", "4096:D12288/H4096", "12288:D12288/H32768", "16384:D16384/H32768"},
			seekMap(d, 8*B, 0, B, 3*B, 4*B))
	})
	t.Run("zero range on sparse", func(t *testing.T) {
		// kernel: size 8B, 100 bytes at 0, ZERO_RANGE(2B+5, 3B) → [0+1w][2+4u], 40
		d := newFileData(0)
		d.WriteAt(fill(100, 'x'), 0)
		d.ZeroRange(2*B+5, 3*B)
		require.Equal(t, "w.uuuu..", state(d, 8))
		require.Equal(t, int64(40), d.Blocks())
	})
	t.Run("punch on hole allocates nothing", func(t *testing.T) {
		d := newFileData(0)
		d.PunchHole(100, 3*B)
		require.Equal(t, "........", state(d, 8))
		require.Empty(t, d.chunks)
	})
	t.Run("punch on unwritten keeps partial blocks", func(t *testing.T) {
		// kernel: [0+1u][3+5u], 48
		d := newFileData(0)
		d.Allocate(0, 8*B)
		d.PunchHole(100, 3*B)
		require.Equal(t, "u..uuuuu", state(d, 8))
		require.Equal(t, int64(48), d.Blocks())
	})
	t.Run("punch on written zeroes partial blocks in place", func(t *testing.T) {
		d := newFileData(0)
		d.WriteAt(fill(8*B, 'x'), 0)
		d.PunchHole(100, 3*B)
		require.Equal(t, "w..wwwww", state(d, 8))
		want := fill(8*B, 'x')
		clear(want[100 : 100+3*B])
		require.Equal(t, want, readAll(d, 0, 8*B))
		d.PunchHole(5*B+1, 10) // inside one block
		clear(want[5*B+1 : 5*B+11])
		require.Equal(t, want, readAll(d, 0, 8*B))
		require.Equal(t, "w..wwwww", state(d, 8))
	})
	t.Run("allocate rounds out and keeps data", func(t *testing.T) {
		d := newFileData(0)
		d.WriteAt(fill(10, 'x'), 2*B)
		d.Allocate(B+1, 3*B)
		require.Equal(t, ".uwuu...", state(d, 8))
		require.Equal(t, fill(10, 'x'), readAll(d, 2*B, 10))
		d.Allocate(0, 0)
		require.Equal(t, ".uwuu...", state(d, 8))
	})
	t.Run("write into unwritten converts the block", func(t *testing.T) {
		// kernel: fallocate 16 blocks, pwrite 10 bytes at 4B+10 → [0+4u][4+1w][5+11u]
		d := newFileData(0)
		d.Allocate(0, 16*B)
		d.WriteAt(fill(10, 'x'), 4*B+10)
		require.Equal(t, "uuuuwuuuuuuuuuuu", state(d, 16))
		require.Equal(t, int64(1), d.Extents(), "converted at writeback")
		d.writebackAll()
		require.Equal(t, int64(3), d.Extents())
		require.Equal(t, int64(128), d.Blocks())
		require.Equal(t, []string{"0:D16384/H0", "16384:D16384/H20480", "20480:D-1/H20480"}, seekMap(d, 16*B, 0, 4*B, 5*B))
	})
	t.Run("cache marks and drop", func(t *testing.T) {
		d := newFileData(0)
		d.Allocate(0, 16*B)
		d.CacheUnwritten(4*B, 100)
		require.Equal(t, []string{"0:D16384/H0", "16384:D16384/H20480", "32768:D-1/H32768"}, seekMap(d, 16*B, 0, 4*B, 8*B))
		d.DropCache()
		require.Equal(t, []string{"0:D-1/H0", "16384:D-1/H16384"}, seekMap(d, 16*B, 0, 4*B))
		d.CacheUnwritten(0, 16*B)
		d.ZeroRange(B, B)
		require.Equal(t, int64(B), d.SeekHole(0, 16*B), "zero range drops the pages of whole blocks")
	})
}

// TestDataTruncate covers truncation down into a block and up again.
func TestDataTruncate(t *testing.T) {
	const B = 4096
	d := newFileData(0)
	d.WriteAt(fill(3*B, 'x'), 0)
	d.Truncate(B + 10)
	// The caller grows the size without calling Truncate; the tail must read zeros.
	want := make([]byte, 3*B)
	copy(want, fill(B+10, 'x'))
	require.Equal(t, want, readAll(d, 0, 3*B))
	require.Equal(t, int64(16), d.Blocks())
	require.Equal(t, int64(2*B), d.MemBytes())

	// Truncate to a block boundary drops the block exactly.
	d.Truncate(B)
	require.Equal(t, int64(8), d.Blocks())
	d.Truncate(0)
	require.Equal(t, int64(0), d.Blocks())
	require.Empty(t, d.chunks)

	// KEEP_SIZE blocks beyond EOF: a same-size truncate frees them (kernel:
	// size 2B, KEEP_SIZE 8 blocks: 64; ftruncate up to 4B: 64; ftruncate 4B again: 32).
	d.Allocate(0, 8*B)
	require.Equal(t, int64(64), d.Blocks())
	d.Truncate(4 * B)
	require.Equal(t, int64(32), d.Blocks())
	d.Truncate(3*B + 5) // partial unwritten last block stays
	require.Equal(t, int64(32), d.Blocks())

	// Truncate across chunks, with a clone sharing them.
	d = newFileData(0)
	d.WriteAt(fill(100*B, 'y'), 0)
	c := d.Clone()
	d.Truncate(40*B + 7)
	require.Equal(t, fill(100*B, 'y'), readAll(c, 0, 100*B))
	want = make([]byte, 100*B)
	copy(want, fill(40*B+7, 'y'))
	require.Equal(t, want, readAll(d, 0, 100*B))
	require.Equal(t, int64(41*B), d.MemBytes())
	require.NoError(t, d.checkInvariants())
	require.NoError(t, c.checkInvariants())
}

// TestDataBlocks checks st_blocks accounting, including extent-tree blocks.
func TestDataBlocks(t *testing.T) {
	const B = 4096
	// kernel (probe "tree"): single blocks at 0, 2B, 4B, ... after fsync.
	d := newFileData(0)
	for i, want := range []int64{8, 16, 24, 32, 48, 56} {
		d.WriteAt(fill(B, 1), int64(i)*2*B)
		d.writebackAll()
		require.Equal(t, want, d.Blocks(), "after %d writes", i+1)
	}
	d.PunchHole(10*B, B)
	require.Equal(t, int64(48), d.Blocks())
	d.PunchHole(8*B, B)
	require.Equal(t, int64(40), d.Blocks(), "4 extents, leaf block kept")
	d.WriteAt(fill(B, 1), 7*B) // extends the extent at 6: merge-up frees the leaf at writeback
	require.Equal(t, int64(48), d.Blocks(), "before writeback: the leaf stays")
	d.writebackAll()
	require.Equal(t, int64(40), d.Blocks())

	// A punch that splits an extent grows the tree for a moment (kernel: 56
	// after this sequence, found by TestDataKernelRapid).
	d = newFileData(0)
	d.WriteAt([]byte{1}, 64*B)
	d.WriteAt(fill(2*B, 1), 0)
	d.writebackAll()
	d.ZeroRange(46*B, B)
	d.ZeroRange(35, 19214)
	require.Equal(t, "w u4 u w", extentString(d))
	require.Equal(t, int64(56), d.Blocks())
	d.PunchHole(3, 8192)
	require.Equal(t, int64(48+8), d.Blocks(), "4 extents, but [1-4u] was split at 2 first")

	// A punch of whole extents does not split.
	d = newFileData(0)
	for i := int64(0); i < 4; i++ {
		d.WriteAt(fill(B, 1), i*2*B)
	}
	d.writebackAll()
	d.PunchHole(2*B, B)
	require.Equal(t, int64(24), d.Blocks())

	// Extent length limits.
	d = newFileData(0)
	d.Allocate(0, (ext4MaxUnwrittenLen+1)*B)
	require.Equal(t, int64(2), d.Extents())
	d = newFileData(512)
	d.WriteAt(make([]byte, ext4MaxWrittenLen*512), 0)
	d.writebackAll()
	require.Equal(t, int64(1), d.Extents())
	d.WriteAt([]byte{1}, ext4MaxWrittenLen*512)
	d.writebackAll()
	require.Equal(t, int64(2), d.Extents())

	// Alternating written/unwritten blocks are separate extents.
	d = newFileData(0)
	d.Allocate(0, 10*B)
	for i := int64(0); i < 10; i += 2 {
		d.WriteAt([]byte{1}, i*B)
	}
	require.Equal(t, int64(1), d.Extents(), "converted at writeback")
	d.writebackAll()
	require.Equal(t, int64(10), d.Extents())
	require.Equal(t, int64(10*8+8), d.Blocks())

	require.Equal(t, int64(0), treeBlocksFor(4))
	require.Equal(t, int64(1), treeBlocksFor(5))
	require.Equal(t, int64(1), treeBlocksFor(340))
	require.Equal(t, int64(2), treeBlocksFor(341))
	require.Equal(t, int64(4+1+1), treeBlocksFor(4*340+1))
}

// extentString renders the model's runs: w, u, or kind:length for longer runs.
func extentString(d *fileData) string {
	var out []string
	kind, run := 0, 0
	flush := func() {
		if kind != 0 {
			k := " wu"[kind : kind+1]
			if run > 1 {
				k += fmt.Sprint(run)
			}
			out = append(out, k)
		}
		kind, run = 0, 0
	}
	for b := int64(0); len(d.chunks) > 0 && b < d.chunks[len(d.chunks)-1].base+chunkBlocks; b++ {
		if k := d.kind(b); k != kind {
			flush()
			kind = k
		}
		run++
	}
	flush()
	return strings.Join(out, " ")
}

// TestDataBlocksWriteback checks that the extent tree changes at writeback,
// not at write, and that only insertions merge a leaf back into the inode
// (kernel: TestExtentTreeBlocks in package sim).
func TestDataBlocksWriteback(t *testing.T) {
	const B = 4096
	fiveBlocks := func() *fileData {
		d := newFileData(0)
		for i := int64(0); i < 5; i++ {
			d.WriteAt(fill(B, 1), 2*i*B)
		}
		return d
	}

	// Seed 16450334979847100287 of TestKernelDiff: the leaf appears at
	// fdatasync, whoever asks for st_blocks, and a truncate keeps it.
	d := fiveBlocks()
	d.writebackAll()
	d.Truncate(B)
	require.Equal(t, int64(16), d.Blocks(), "1 block + the leaf kept by truncate")

	// Before writeback the blocks are reservations: no leaf, ever.
	d = fiveBlocks()
	require.Equal(t, int64(40), d.Blocks())
	require.Zero(t, d.Extents())
	d.PunchHole(8*B, B)
	d.writebackAll()
	require.Equal(t, int64(32), d.Blocks())

	// Leaf with 4 extents: an overwrite written back keeps it; a write into
	// an unwritten extent, once written back, pulls the tree into the inode.
	d = newFileData(0)
	d.Allocate(0, B)
	for i := int64(1); i < 5; i++ {
		d.WriteAt(fill(B, 1), 2*i*B)
	}
	d.writebackAll()
	d.PunchHole(8*B, B)
	require.Equal(t, int64(40), d.Blocks(), "4 extents, leaf kept")
	d.WriteAt(fill(B, 2), 2*B)
	d.writebackAll()
	require.Equal(t, int64(40), d.Blocks(), "overwrite: nothing inserted")
	d.WriteAt(fill(B, 2), 0)
	require.Equal(t, int64(40), d.Blocks(), "converted at writeback only")
	d.writebackAll()
	require.Equal(t, int64(32), d.Blocks(), "conversion: merge-up")

	// fallocate over a delayed block maps it unwritten: one extent [0+3u].
	d = newFileData(0)
	for _, b := range []int64{10, 12, 14} {
		d.Allocate(b*B, B)
	}
	d.WriteAt(fill(2*B, 1), 0)
	d.Allocate(0, 3*B)
	require.Equal(t, int64(4), d.Extents())
	require.Equal(t, int64(48), d.Blocks())
	d.writebackAll()
	require.Equal(t, int64(5), d.Extents(), "[0+2w][2+1u] and three more")
	require.Equal(t, int64(56), d.Blocks())
	require.NoError(t, d.checkInvariants())
}

// TestDataPunchAtSize checks ext4's clamping of punch ranges to the file size.
func TestDataPunchAtSize(t *testing.T) {
	const B = 4096
	d := newFileData(0)
	d.WriteAt(fill(2, 1), 0)
	d.PunchHoleAtSize(0, 184, 2)
	require.Empty(t, d.chunks, "the partial last block is freed")

	d.WriteAt(fill(2*B, 1), 0)
	d.writebackAll()
	d.Allocate(2*B, 4*B)
	d.PunchHoleAtSize(2*B, 4*B, 2*B)
	require.Equal(t, "w2 u4", extentString(d), "nothing happens at or after EOF")
	d.PunchHoleAtSize(100, 10, 2*B)
	require.Equal(t, "w2 u4", extentString(d))
	require.Equal(t, make([]byte, 10), readAll(d, 100, 10))
	d.PunchHoleAtSize(B+1, 10*B, B+2)
	require.Equal(t, "w2 u4", extentString(d), "the range is clamped to [B+1, 2B): zeroed, not freed")
	d.PunchHoleAtSize(B, 10*B, B+2)
	require.Equal(t, "w u4", extentString(d), "block 1 freed, KEEP_SIZE blocks after it kept")
}

// TestDataMemory checks that memory follows what was written, and that reads
// of holes and overwrites do not allocate.
func TestDataMemory(t *testing.T) {
	d := newFileData(0)
	r := rand.New(rand.NewPCG(1, 2))
	blk := fill(4096, 7)
	for d.MemBytes() < mib {
		d.WriteAt(blk, r.Int64N(100*gib/4096)*4096)
	}
	require.Equal(t, mib, d.MemBytes())
	require.LessOrEqual(t, len(d.chunks), 256)
	require.Equal(t, int64(-1), d.SeekData(100*gib-1, 100*gib), "only if the last block was not drawn")

	p := make([]byte, 64*kib)
	require.Zero(t, testing.AllocsPerRun(100, func() { d.ReadAt(p, 50*gib+123) }), "ReadAt")
	off := d.chunks[10].base * 4096
	d.WriteAt(blk, off)
	require.Zero(t, testing.AllocsPerRun(100, func() { d.WriteAt(blk, off) }), "overwrite")
	require.Zero(t, testing.AllocsPerRun(100, func() { d.SeekData(0, 100*gib); d.SeekHole(off, 100*gib) }), "seek")
	require.Zero(t, testing.AllocsPerRun(10, func() { d.Blocks() }), "Blocks")

	// A write into a hole allocates its buffer (and at most a chunk header and
	// slice growth), not more.
	e := newFileData(0)
	e.WriteAt(blk, 0)
	allocs := testing.AllocsPerRun(100, func() { e.Truncate(4096); e.WriteAt(blk, 4096) })
	require.LessOrEqual(t, allocs, 1.0)
}

// TestDataZeroBlocks checks that written zeros are data without buffers: a
// file laid out with zeros costs no buffer memory, a zero block written over
// data frees the data's buffer, and neither touches a clone's buffers.
func TestDataZeroBlocks(t *testing.T) {
	d := newFileData(0)
	zero := make([]byte, 4096)
	const size = 256 * mib
	for off := int64(0); off < size; off += 4096 {
		d.WriteAt(zero, off)
	}
	require.Zero(t, d.MemBytes())
	w, u := d.AllocatedBlocks()
	require.Equal(t, [2]int64{size / 4096, 0}, [2]int64{w, u})
	require.Equal(t, int64(size), d.SeekHole(0, size), "no hole below EOF")
	require.Equal(t, int64(0), d.SeekData(0, size))
	require.Equal(t, int64(size/512), d.Blocks()-d.tree*8)

	blk := fill(4096, 9)
	d.WriteAt(blk, 8192)
	d.WriteAt(blk[:100], 3*4096+5) // partial data into a zero block
	require.Equal(t, int64(2*4096), d.MemBytes())
	c := d.Clone()
	d.WriteAt(zero, 8192)
	d.WriteAt(zero[:100], 3*4096+5) // zeros into part of a buffered block: kept
	require.Equal(t, int64(4096), d.MemBytes())
	require.Equal(t, int64(2*4096), c.MemBytes(), "the clone keeps its buffers")
	require.Equal(t, blk, readAll(c, 8192, 4096))
	require.Equal(t, zero, readAll(d, 8192, 4096))
	require.Equal(t, zero, readAll(d, 3*4096, 4096))
	require.NoError(t, d.checkInvariants())
	require.NoError(t, c.checkInvariants())
}

// TestDataCloneCopyRange checks copy-on-write and CopyRange on a simple case.
func TestDataCloneCopyRange(t *testing.T) {
	const B = 4096
	d := newFileData(0)
	d.WriteAt(fill(64*B, 'a'), 0)
	c := d.Clone()
	c.WriteAt(fill(10, 'b'), 5)
	c.WriteAt(fill(B, 'b'), 40*B)
	c.PunchHole(50*B, 2*B)
	require.Equal(t, fill(64*B, 'a'), readAll(d, 0, 64*B))
	d.WriteAt(fill(B, 'c'), 41*B)
	require.Equal(t, fill(B, 'a'), readAll(c, 41*B, B))

	// Make d equal to c over [0, 64B) except block 41 which d keeps.
	d.CopyRange(c, 0, 41*B)
	d.CopyRange(c, 42*B, 22*B)
	want := readAll(c, 0, 64*B)
	copy(want[41*B:], fill(B, 'c'))
	require.Equal(t, want, readAll(d, 0, 64*B))
	// Mutating either afterwards leaves the other alone.
	d.WriteAt(fill(B, 'z'), 40*B)
	require.Equal(t, fill(B, 'b'), readAll(c, 40*B, B))
	c.WriteAt(fill(7, 'y'), 0)
	require.Equal(t, byte('a'), readAll(d, 0, 1)[0])
	require.NoError(t, d.checkInvariants())
	require.NoError(t, c.checkInvariants())
}

// blockState is the oracle's per-block allocation state.
type blockState uint8

const (
	stHole blockState = iota
	stWritten
	stUnwritten
	stCached // unwritten, page cached
)

// oracle is a deliberately dumb model: a flat byte slice plus a state per block,
// as reads see it (state) and as the extent tree maps it (tree: stHole,
// stWritten or stUnwritten; a written block becomes written in the tree only
// at writeback).
type oracle struct {
	bs    int64
	data  []byte
	state []blockState
	tree  []blockState
	size  int64
}

func newOracle(bs, nblocks int64) *oracle {
	return &oracle{bs: bs, data: make([]byte, bs*nblocks), state: make([]blockState, nblocks), tree: make([]blockState, nblocks)}
}

func (o *oracle) clone() *oracle {
	return &oracle{bs: o.bs, data: bytes.Clone(o.data), state: append([]blockState(nil), o.state...),
		tree: append([]blockState(nil), o.tree...), size: o.size}
}

// treeKind is how the extent tree maps a block in state s once written back.
func treeKind(s blockState) blockState {
	if s == stCached {
		return stUnwritten
	}
	return s
}

func (o *oracle) writeback(off, n int64) {
	a, b := o.span(off, n)
	for i := a; i < b; i++ {
		if o.state[i] == stWritten {
			o.tree[i] = stWritten
		}
	}
}

// span returns the first and one-past-last block touched by [off, off+n).
func (o *oracle) span(off, n int64) (int64, int64) {
	if n <= 0 {
		return 0, 0
	}
	return off / o.bs, (off + n + o.bs - 1) / o.bs
}

// whole returns the blocks wholly inside [off, off+n).
func (o *oracle) whole(off, n int64) (int64, int64) { return (off + o.bs - 1) / o.bs, (off + n) / o.bs }

func (o *oracle) write(p []byte, off int64) {
	copy(o.data[off:], p)
	a, b := o.span(off, int64(len(p)))
	for i := a; i < b; i++ {
		o.state[i] = stWritten
	}
	o.size = max(o.size, off+int64(len(p)))
}

func (o *oracle) truncate(sz int64) {
	if sz > o.size {
		o.size = sz
		return
	}
	o.size = sz
	clear(o.data[sz:])
	for i := (sz + o.bs - 1) / o.bs; i < int64(len(o.state)); i++ {
		o.state[i] = stHole
		o.tree[i] = stHole
	}
}

func (o *oracle) allocate(off, n int64) {
	a, b := o.span(off, n)
	for i := a; i < b; i++ {
		if o.state[i] == stHole {
			o.state[i] = stUnwritten
		}
		if o.tree[i] == stHole {
			o.tree[i] = stUnwritten
		}
	}
}

func (o *oracle) punch(off, n int64) {
	clear(o.data[off : off+n])
	a, b := o.whole(off, n)
	for i := a; i < b; i++ {
		o.state[i] = stHole
		o.tree[i] = stHole
	}
}

func (o *oracle) zero(off, n int64) {
	clear(o.data[off : off+n])
	a, b := o.span(off, n)
	wa, wb := o.whole(off, n)
	for i := a; i < b; i++ {
		switch {
		case i >= wa && i < wb:
			o.state[i] = stUnwritten
			o.tree[i] = stUnwritten
		case o.state[i] == stHole:
			o.state[i] = stUnwritten
			o.tree[i] = stUnwritten
		case o.tree[i] == stHole:
			o.tree[i] = stUnwritten
		}
	}
}

func (o *oracle) cache(off, n int64) {
	a, b := o.span(off, n)
	for i := a; i < b; i++ {
		if o.state[i] == stUnwritten {
			o.state[i] = stCached
		}
	}
}

func (o *oracle) drop() {
	for i, s := range o.state {
		if s == stCached {
			o.state[i] = stUnwritten
		}
	}
}

// copyRange mirrors fileData.CopyRange's documented rules.
func (o *oracle) copyRange(src *oracle, off, n int64) {
	copy(o.data[off:off+n], src.data[off:off+n])
	a, b := o.span(off, n)
	wa, wb := o.whole(off, n)
	for i := a; i < b; i++ {
		switch {
		case i >= wa && i < wb:
			o.state[i] = src.state[i]
			o.tree[i] = treeKind(src.state[i])
		case src.state[i] == stWritten:
			o.state[i] = stWritten
			o.tree[i] = stWritten
		case o.state[i] == stWritten:
		default:
			o.state[i] = src.state[i]
			o.tree[i] = treeKind(src.state[i])
		}
	}
}

func (o *oracle) isData(i int64) bool {
	return i < int64(len(o.state)) && (o.state[i] == stWritten || o.state[i] == stCached)
}

func (o *oracle) seekData(off int64) int64 {
	if off < 0 || off >= o.size {
		return -1
	}
	for i := off / o.bs; i*o.bs < o.size; i++ {
		if o.isData(i) {
			return max(off, i*o.bs)
		}
	}
	return -1
}

func (o *oracle) seekHole(off int64) int64 {
	if off < 0 || off >= o.size {
		return -1
	}
	for i := off / o.bs; i*o.bs < o.size; i++ {
		if !o.isData(i) {
			return max(off, i*o.bs)
		}
	}
	return o.size
}

func (o *oracle) counts() (w, u int64) {
	for _, s := range o.state {
		switch s {
		case stWritten:
			w++
		case stUnwritten, stCached:
			u++
		}
	}
	return w, u
}

// extents counts the runs of the extent tree.
func (o *oracle) extents() int64 {
	var n int64
	prev := stHole
	for _, k := range o.tree {
		if k != stHole && k != prev {
			n++
		}
		prev = k
	}
	return n
}

// check compares d with o exhaustively.
func check(t *rapid.T, name string, d *fileData, o *oracle) {
	if err := d.checkInvariants(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	got := readAll(d, 0, int64(len(o.data)))
	if !bytes.Equal(got, o.data) {
		for i := range got {
			if got[i] != o.data[i] {
				t.Fatalf("%s: byte %d (block %d) = %d, oracle %d", name, i, int64(i)/o.bs, got[i], o.data[i])
			}
		}
	}
	w, u := d.AllocatedBlocks()
	ow, ou := o.counts()
	if w != ow || u != ou {
		t.Fatalf("%s: written/unwritten blocks = %d/%d, oracle %d/%d (oracle states %v)", name, w, u, ow, ou, o.state)
	}
	for i, k := range o.tree {
		if got, want := d.kind(int64(i)), []int{stHole: 0, stWritten: 1, stUnwritten: 2}[k]; got != want {
			t.Fatalf("%s: block %d is %d in the extent tree, oracle %d (states %v, tree %v)", name, i, got, want, o.state, o.tree)
		}
	}
	if e, oe := d.Extents(), o.extents(); e != oe {
		t.Fatalf("%s: extents = %d, oracle %d", name, e, oe)
	}
	var bufs int64
	for _, c := range d.chunks {
		for j := range chunkBlocks {
			if c.buf(j) != nil {
				bufs++
			}
		}
	}
	if bufs > ow {
		t.Fatalf("%s: %d buffers for %d written blocks", name, bufs, ow)
	}
	for i := int64(0); i <= int64(len(o.state)); i++ {
		for _, off := range []int64{i * o.bs, i*o.bs + 1, i*o.bs - 1} {
			if sd, od := d.SeekData(off, o.size), o.seekData(off); sd != od {
				t.Fatalf("%s: SeekData(%d) size %d = %d, oracle %d (states %v)", name, off, o.size, sd, od, o.state)
			}
			if sh, oh := d.SeekHole(off, o.size), o.seekHole(off); sh != oh {
				t.Fatalf("%s: SeekHole(%d) size %d = %d, oracle %d (states %v)", name, off, o.size, sh, oh, o.state)
			}
			for _, n := range []int64{1, o.bs, 3 * o.bs} {
				oh := o.seekHole(off)
				want := off >= 0 && off < o.size && oh >= 0 && oh < min(off+n, o.size)
				if got := d.HoleIn(off, n, o.size); got != want {
					t.Fatalf("%s: HoleIn(%d, %d) size %d = %v, oracle %v (states %v)", name, off, n, o.size, got, want, o.state)
				}
			}
		}
	}
}

// TestDataRapid is a state machine test of fileData against the oracle, with a
// clone (or CopyRange source) on the side mutated independently.
func TestDataRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bs := rapid.SampledFrom([]int64{512, 4096}).Draw(t, "bs")
		nblocks := rapid.Int64Range(1, 3*chunkBlocks).Draw(t, "nblocks")
		limit := bs * nblocks
		d, o := newFileData(bs), newOracle(bs, nblocks)
		other, oo := newFileData(bs), newOracle(bs, nblocks)

		rng := func(t *rapid.T) (int64, int64) {
			// Offsets biased to block boundaries.
			pick := func(label string) int64 {
				if rapid.Bool().Draw(t, label+"Aligned") {
					return rapid.Int64Range(0, nblocks).Draw(t, label+"Block") * bs
				}
				return rapid.Int64Range(0, limit).Draw(t, label)
			}
			a, b := pick("a"), pick("b")
			if a > b {
				a, b = b, a
			}
			return a, b - a
		}
		t.Repeat(map[string]func(*rapid.T){
			"write": func(t *rapid.T) {
				off, n := rng(t)
				p := make([]byte, n)
				c := byte(rapid.IntRange(1, 255).Draw(t, "c"))
				for i := range p {
					p[i] = c + byte(i)
				}
				d.WriteAt(p, off)
				o.write(p, off)
			},
			"writeZeros": func(t *rapid.T) {
				off, n := rng(t)
				p := make([]byte, n)
				d.WriteAt(p, off)
				o.write(p, off)
			},
			"writeNoData": func(t *rapid.T) {
				off, n := rng(t)
				d.WriteZeros(off, n)
				o.write(make([]byte, n), off)
			},
			"fill": func(t *rapid.T) {
				off, n := rng(t)
				d.Fill(off, n)
				o.write(make([]byte, n), off)
				o.writeback(off, n)
			},
			"writeback": func(t *rapid.T) {
				off, n := rng(t)
				d.Writeback(off, n)
				o.writeback(off, n)
			},
			"mapRun": func(t *rapid.T) {
				first := rapid.Int64Range(0, nblocks).Draw(t, "first")
				end := rapid.Int64Range(first, nblocks).Draw(t, "end")
				want := int64(-1)
				for i := first; i < end; i++ {
					if o.state[i] == stWritten && o.tree[i] != stWritten {
						want = i
					}
				}
				if got := d.mapRun(first, end); got != want {
					t.Fatalf("mapRun(%d, %d) = %d, oracle %d", first, end, got, want)
				}
				o.writeback(first*bs, (end-first)*bs)
			},
			"read": func(t *rapid.T) {
				off, n := rng(t)
				if got, want := readAll(d, off, n), o.data[off:off+n]; !bytes.Equal(got, want) {
					t.Fatalf("ReadAt(%d, %d) differs", off, n)
				}
			},
			"truncate": func(t *rapid.T) {
				sz := rapid.Int64Range(0, limit).Draw(t, "size")
				if sz <= o.size {
					d.Truncate(sz)
				}
				o.truncate(sz)
			},
			"allocate": func(t *rapid.T) {
				off, n := rng(t)
				keep := rapid.Bool().Draw(t, "keep")
				d.Allocate(off, n)
				o.allocate(off, n)
				if !keep && n > 0 {
					o.size = max(o.size, off+n)
				}
			},
			"punch": func(t *rapid.T) {
				off, n := rng(t)
				d.PunchHole(off, n)
				o.punch(off, n)
			},
			"zero": func(t *rapid.T) {
				off, n := rng(t)
				keep := rapid.Bool().Draw(t, "keep")
				d.ZeroRange(off, n)
				o.zero(off, n)
				if !keep && n > 0 {
					o.size = max(o.size, off+n)
				}
			},
			"cache": func(t *rapid.T) {
				off, n := rng(t)
				d.CacheUnwritten(off, n)
				o.cache(off, n)
			},
			"drop": func(t *rapid.T) {
				d.DropCache()
				o.drop()
			},
			"clone": func(t *rapid.T) {
				other, oo = d.Clone(), o.clone()
			},
			"swap": func(t *rapid.T) {
				d, other = other, d
				o, oo = oo, o
			},
			"writeOther": func(t *rapid.T) {
				off, n := rng(t)
				p := fill(int(n), byte(rapid.IntRange(1, 255).Draw(t, "c")))
				other.WriteAt(p, off)
				oo.write(p, off)
			},
			"copyRange": func(t *rapid.T) {
				off, n := rng(t)
				d.CopyRange(other, off, n)
				o.copyRange(oo, off, n)
				if !bytes.Equal(readAll(d, off, n), readAll(other, off, n)) {
					t.Fatalf("CopyRange(%d, %d): range differs", off, n)
				}
			},
			"": func(t *rapid.T) {
				check(t, "d", d, o)
				check(t, "other", other, oo)
			},
		})
	})
}

// Benchmarks. Run: go test -run x -bench Data -benchmem ./vfs

const bench64 = 64 * mib

func denseFile(size int64) *fileData {
	d := newFileData(0)
	blk := fill(4096, 'x')
	for off := int64(0); off < size; off += 4096 {
		d.WriteAt(blk, off)
	}
	return d
}

func randomOffsets(n int, span int64) []int64 {
	r := rand.New(rand.NewPCG(7, 8))
	offs := make([]int64, n)
	for i := range offs {
		offs[i] = r.Int64N(span/4096) * 4096
	}
	return offs
}

func BenchmarkDataReadAtRandom4K(b *testing.B) {
	d := denseFile(bench64)
	offs := randomOffsets(1<<16, bench64)
	p := make([]byte, 4096)
	b.SetBytes(4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.ReadAt(p, offs[i&(len(offs)-1)])
	}
}

// BenchmarkDataCopy4KBaseline is the floor for BenchmarkDataReadAtRandom4K: a
// 4 KiB copy at random offsets out of a flat 64 MiB slice.
func BenchmarkDataCopy4KBaseline(b *testing.B) {
	src := fill(int(bench64), 'x')
	offs := randomOffsets(1<<16, bench64)
	p := make([]byte, 4096)
	b.SetBytes(4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := offs[i&(len(offs)-1)]
		copy(p, src[off:off+4096])
	}
}

func BenchmarkDataWriteAtRandom4K(b *testing.B) {
	d := denseFile(bench64)
	offs := randomOffsets(1<<16, bench64)
	p := fill(4096, 'y')
	b.SetBytes(4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d.WriteAt(p, offs[i&(len(offs)-1)])
	}
}

func BenchmarkDataAppend4K(b *testing.B) { benchAppend(b, fill(4096, 'y')) }

// BenchmarkDataAppendZeros4K appends blocks of zeros (fio's layout with
// zero_buffers): no buffer per block, a chunk header per 32.
func BenchmarkDataAppendZeros4K(b *testing.B) { benchAppend(b, make([]byte, 4096)) }

// benchAppend appends p at the end of a file, starting a new one at 64 MiB.
func benchAppend(b *testing.B, p []byte) {
	d := newFileData(0)
	var off int64
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if off == bench64 {
			b.StopTimer()
			d, off = newFileData(0), 0
			b.StartTimer()
		}
		d.WriteAt(p, off)
		off += int64(len(p))
	}
}

// BenchmarkDataSparse100GiB writes 1 MiB in 4 KiB blocks at random offsets of a
// 100 GiB range per op and reports the memory held.
func BenchmarkDataSparse100GiB(b *testing.B) {
	offs := randomOffsets(256, 100*gib)
	p := fill(4096, 'z')
	var ms0, ms1 runtime.MemStats
	var keep *fileData
	for i := 0; i < b.N; i++ {
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		d := newFileData(0)
		for _, off := range offs {
			d.WriteAt(p, off)
		}
		runtime.GC()
		runtime.ReadMemStats(&ms1)
		keep = d
	}
	b.ReportMetric(float64(keep.MemBytes()), "membytes")
	b.ReportMetric(float64(int64(ms1.HeapAlloc)-int64(ms0.HeapAlloc)), "heapbytes")
}

func BenchmarkDataClone64MiB(b *testing.B) {
	d := denseFile(bench64)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = d.Clone()
	}
}

// BenchmarkDataCopyRange4K makes one dirty 4 KiB block of a 64 MiB page-cache
// file durable, as fsync does.
func BenchmarkDataCopyRange4K(b *testing.B) {
	cache := denseFile(bench64)
	durable := cache.Clone()
	offs := randomOffsets(1<<16, bench64)
	p := fill(4096, 'w')
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := offs[i&(len(offs)-1)]
		cache.WriteAt(p, off)
		durable.CopyRange(cache, off, 4096)
	}
}

// TestSortedBlocksRapid checks sortedBlocks on dense keys (its bitmap) and on
// sparse ones (its sort) against a plain sort.
func TestSortedBlocksRapid(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		span := rapid.Int64Range(1, 1<<rapid.IntRange(1, 40).Draw(t, "bits")).Draw(t, "span")
		base := rapid.Int64Range(0, 1<<40).Draw(t, "base")
		m := map[int64]uint64{}
		for _, k := range rapid.SliceOfN(rapid.Int64Range(0, span-1), 0, 500).Draw(t, "keys") {
			m[base+k] = 1
		}
		want := slices.Sorted(maps.Keys(m))
		got := sortedBlocks(m)
		if len(want) == 0 {
			require.Empty(t, got)
			return
		}
		require.Equal(t, want, got)
	})
}

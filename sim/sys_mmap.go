package sim

import (
	"bytes"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/iosim/iosim/vfs"
)

// mmap(2) constants.
const (
	protRead     = 0x1
	protWrite    = 0x2
	mapShared    = 0x1
	mapPrivate   = 0x2
	mapSharedVal = 0x3
	mapType      = 0xf
	mapAnonymous = 0x20
	// legacyMapMask is LEGACY_MAP_MASK (x86-64): the flags MAP_SHARED_VALIDATE
	// accepts on a file without MAP_SYNC support.
	legacyMapMask = 0x1 | 0x2 | 0x10 | 0x20 | 0x40 | 0x100 | 0x800 | 0x1000 | 0x2000 | 0x4000 |
		0x8000 | 0x10000 | 0x20000 | 0x40000 | 0x4000000 | 21<<26 | 30<<26
	msAsync       = 1
	msInvalidate  = 2
	msSync        = 4
	mmapBase      = 0x7f00_0000_0000
	pageMask      = PageSize - 1
	mappingGuard  = PageSize // a gap between mappings, so addresses never touch
	maxMapAddress = 0x7fff_ffff_f000
)

// mapping is one mmap'd region. Its bytes are a Go slice handed to the caller.
type mapping struct {
	addr     uint64
	buf      []byte
	off      int64
	shared   bool
	writable bool
	f        *File // holds a reference, as vma->vm_file; nil for anonymous mappings
	g        *ThreadGroup
}

// mmTable holds every mapping of the kernel, sorted by address.
type mmTable struct {
	mu     sync.Mutex
	active atomic.Int32 // shared file mappings: writes refresh them when non-zero
	next   uint64
	maps   []*mapping
}

func (mm *mmTable) init() { mm.next = mmapBase }

// find returns the index of the mapping containing addr, or -1.
func (mm *mmTable) find(addr uint64) int {
	i, _ := slices.BinarySearchFunc(mm.maps, addr, func(m *mapping, a uint64) int {
		switch {
		case m.addr+m.span() <= a:
			return -1
		case m.addr > a:
			return 1
		}
		return 0
	})
	if i < len(mm.maps) && mm.maps[i].addr <= addr && addr < mm.maps[i].addr+mm.maps[i].span() {
		return i
	}
	return -1
}

// span is the mapping's length rounded up to whole pages.
func (m *mapping) span() uint64 { return (uint64(len(m.buf)) + pageMask) &^ pageMask }

// AddrOf returns the virtual address of b's first byte if b lies in a mapping this
// kernel made (what x/sys/unix's mmapper tracks), and whether it does.
func (k *Kernel) AddrOf(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	mm := &k.mm
	mm.mu.Lock()
	defer mm.mu.Unlock()
	p := uintptr(unsafe.Pointer(&b[0]))
	for _, m := range mm.maps {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(m.buf)))
		if p >= base && p-base < uintptr(len(m.buf)) {
			return m.addr + uint64(p-base), true
		}
	}
	return 0, false
}

// refresh copies [off, off+n) of ino's page cache into every shared mapping of it,
// so that a shared mapping sees writes made through write(2), as the page cache
// makes it on Linux. Private mappings are copy-on-write snapshots taken at mmap time
// (Linux would show file changes in pages the process has not written; the model
// cannot tell which those are).
func (mm *mmTable) refresh(ino *vfs.Inode, off, n int64) {
	mm.mu.Lock()
	defer mm.mu.Unlock()
	for _, m := range mm.maps {
		if m.f == nil || m.f.ino != ino || !m.shared {
			continue
		}
		lo, hi := max(off, m.off), min(off+n, m.off+int64(len(m.buf)))
		if n < 0 || off+n < off { // to the end
			hi = m.off + int64(len(m.buf))
		}
		if lo >= hi {
			continue
		}
		dst := m.buf[lo-m.off : hi-m.off]
		got, _ := ino.ReadAt(dst, lo)
		clear(dst[got:]) // beyond end of file: zeros (Linux: SIGBUS on access)
	}
}

// flush writes the pages of a shared writable mapping that differ from the page
// cache back into it (what the page cache would already hold on Linux: a store into
// a shared mapping dirties the page; the model sees stores only here). Bytes beyond
// the end of file are dropped, as Linux drops them. Called with mm.mu held.
func (m *mapping) flush() {
	if m.f == nil || !m.shared || !m.writable {
		return
	}
	ino := m.f.ino
	size := ino.Size()
	cur := make([]byte, PageSize)
	for p := 0; p < len(m.buf); p += PageSize {
		off := m.off + int64(p)
		if off >= size {
			break
		}
		end := min(p+PageSize, len(m.buf), int(size-m.off))
		page := m.buf[p:end]
		n, _ := ino.ReadAt(cur[:len(page)], off)
		if n == len(page) && bytes.Equal(cur[:n], page) {
			continue
		}
		_, _, _ = ino.Write(page, off, 0, &m.f.errseq)
	}
}

// sysMmap implements mmap(2) of files (Args: addr (ignored: the model picks the
// address), length, prot, flags, fd, offset; Obj a *[]byte that receives the mapping's
// bytes). The result is the mapping's virtual address. Checks in do_mmap's order: an
// offset not page-aligned is EINVAL; EBADF; length 0 is EINVAL; a map type other than
// MAP_SHARED, MAP_PRIVATE, MAP_SHARED_VALIDATE is EINVAL; MAP_SHARED_VALIDATE with a
// flag outside LEGACY_MAP_MASK is EOPNOTSUPP; a shared writable mapping of a
// description without write access is EACCES, then any mapping of one without read
// access; then a directory or a pipe is ENODEV. MAP_ANONYMOUS mappings (and /dev/zero) are
// plain zeroed memory.
//
// The mapping's bytes are filled from the page cache at mmap time; a shared mapping
// is kept up to date by later write/pwrite/truncate/fallocate of the file; stores
// into a shared writable mapping reach the page cache at msync or munmap (on Linux
// at once). Bytes past the end of file read as zeros (Linux raises SIGBUS). Reading
// the slice while another goroutine writes the file is a data race, as on Linux
// without synchronisation.
func (k *Kernel) sysMmap(c *Call) Result {
	length, prot, flags, off := c.Args[1], c.Args[2], c.Args[3], c.Args[5]
	if off&pageMask != 0 {
		return Fail(syscall.EINVAL)
	}
	if flags&mapAnonymous != 0 {
		return k.mmap(c, nil, length, prot, flags, off)
	}
	return c.Task.withFile(int(c.Args[4]), func(f *File) Result { return k.mmap(c, f, length, prot, flags, off) })
}

// mmap maps length bytes of f at off (nil: anonymous memory), after the fd look-up.
func (k *Kernel) mmap(c *Call, f *File, length, prot, flags, off int64) Result {
	if length <= 0 {
		return Fail(syscall.EINVAL)
	}
	typ := flags & mapType
	if typ != mapShared && typ != mapPrivate && typ != mapSharedVal {
		return Fail(syscall.EINVAL)
	}
	if length > maxMapAddress-mmapBase {
		return Fail(syscall.ENOMEM)
	}
	if f != nil {
		// do_mmap's switch on the map type: MAP_SHARED_VALIDATE refuses flags
		// outside LEGACY_MAP_MASK (ext4 without DAX adds no MAP_SYNC); a shared
		// writable mapping needs write access, every mapping read access, and
		// only then is the file asked for its mmap operation.
		if typ == mapSharedVal && flags&^legacyMapMask != 0 {
			return Fail(syscall.EOPNOTSUPP)
		}
		if typ != mapPrivate && prot&protWrite != 0 && !f.writable() {
			return Fail(syscall.EACCES)
		}
		if !f.readable() {
			return Fail(syscall.EACCES)
		}
		if f.special != nil {
			if _, zero := f.special.(DevZero); !zero {
				return Fail(syscall.ENODEV)
			}
			f = nil
		} else if !f.ino.IsRegular() {
			return Fail(syscall.ENODEV)
		}
	}
	m := &mapping{buf: make([]byte, length), off: off, shared: typ != mapPrivate, writable: prot&protWrite != 0, g: c.Task.g}
	if f != nil {
		n, _ := f.ino.ReadAt(m.buf, off)
		clear(m.buf[n:])
		f.incRef()
		m.f = f
	}
	mm := &k.mm
	mm.mu.Lock()
	m.addr = mm.next
	mm.next += m.span() + mappingGuard
	mm.maps = append(mm.maps, m)
	if m.f != nil && m.shared {
		mm.active.Add(1)
	}
	mm.mu.Unlock()
	if out, _ := c.Obj.(*[]byte); out != nil {
		*out = m.buf
	}
	return Result{Ret: int64(m.addr)}
}

// unmapLocked removes mapping i, flushing a shared writable one first.
func (k *Kernel) unmapLocked(i int) *File {
	mm := &k.mm
	m := mm.maps[i]
	m.flush()
	mm.maps = slices.Delete(mm.maps, i, i+1)
	if m.f != nil && m.shared {
		mm.active.Add(-1)
	}
	return m.f
}

// sysMunmap implements munmap(2) (Args: addr, length): an address not page-aligned
// or a length of 0 is EINVAL; every mapping that starts in [addr, addr+length) is
// removed (partial unmaps are not modelled: a mapping is removed whole); unmapping
// nothing succeeds, as on Linux.
func (k *Kernel) sysMunmap(c *Call) Result {
	addr, length := uint64(c.Args[0]), c.Args[1]
	if addr&pageMask != 0 || length <= 0 {
		return Fail(syscall.EINVAL)
	}
	end := addr + uint64(length)
	mm := &k.mm
	var drop []*File
	mm.mu.Lock()
	for i := 0; i < len(mm.maps); {
		m := mm.maps[i]
		if m.addr >= addr && m.addr < end && m.g == c.Task.g {
			if f := k.unmapLocked(i); f != nil {
				drop = append(drop, f)
			}
			continue
		}
		i++
	}
	mm.mu.Unlock()
	for _, f := range drop {
		f.decRef()
	}
	return Result{}
}

// sysMsync implements msync(2) (Args: addr, length, flags): unknown flags or
// MS_ASYNC with MS_SYNC are EINVAL, an address not page-aligned is EINVAL, a range
// not entirely mapped is ENOMEM. Stores into shared writable mappings reach the page
// cache; MS_SYNC then syncs the file range each mapping covers in the range, as
// fdatasync of that range (vfs_fsync_range with datasync: vfs
// Kernel.FdatasyncRange), reporting a writeback error once per description.
func (k *Kernel) sysMsync(c *Call) Result {
	addr, length, flags := uint64(c.Args[0]), c.Args[1], c.Args[2]
	if flags&^(msAsync|msInvalidate|msSync) != 0 || flags&msAsync != 0 && flags&msSync != 0 {
		return Fail(syscall.EINVAL)
	}
	if addr&pageMask != 0 || length < 0 {
		return Fail(syscall.EINVAL)
	}
	end := addr + (uint64(length)+pageMask)&^pageMask
	mm := &k.mm
	mm.mu.Lock()
	// The file range each shared mapping covers in [addr, end): msync syncs
	// that and no more (vfs_fsync_range(file, fstart, fend, 1)).
	type fileRange struct {
		f      *File
		off, n int64
	}
	var files []fileRange
	for a := addr; a < end; {
		i := mm.find(a)
		if i < 0 {
			mm.mu.Unlock()
			for _, r := range files {
				r.f.decRef()
			}
			return Fail(syscall.ENOMEM)
		}
		m := mm.maps[i]
		m.flush()
		stop := min(end, m.addr+m.span())
		if m.f != nil && m.shared && flags&msSync != 0 {
			m.f.incRef()
			files = append(files, fileRange{m.f, m.off + int64(a-m.addr), int64(stop - a)})
		}
		a = stop
	}
	mm.mu.Unlock()
	var err error
	for _, r := range files {
		if e := r.f.ino.Kernel().FdatasyncRange(r.off, r.n, &r.f.errseq); e != nil && err == nil {
			err = e
		}
		r.f.decRef()
	}
	return res(0, err)
}

// exit removes the mappings of an exiting process.
func (mm *mmTable) exit(k *Kernel, g *ThreadGroup) {
	var drop []*File
	mm.mu.Lock()
	for i := 0; i < len(mm.maps); {
		if mm.maps[i].g == g {
			if f := k.unmapLocked(i); f != nil {
				drop = append(drop, f)
			}
			continue
		}
		i++
	}
	mm.mu.Unlock()
	for _, f := range drop {
		f.decRef()
	}
}

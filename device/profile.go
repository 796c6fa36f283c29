// Package device describes the hardware under the model: a storage device (its
// kind, service-time model, bandwidth, queue depth, write cache, flush and FUA
// cost), the CPU's kernel costs, the memory given to the page cache and the
// writeback tunables, and the file system's rules. A Profile is data: it is read
// from TOML (Load, Parse) or taken from the bundled set (Lookup, Names), and
// package sim turns it into virtual time (sim.WithDevice).
//
// Units are those of the TOML keys: _ns, _us and _ms are nanoseconds, microseconds
// and milliseconds; _mb_s is 10^6 bytes per second; _bytes and _kb (1024) sizes.
// Every bundled number cites its source in the profile file beside it.
//
// A Profile is immutable once loaded by convention: Lookup returns a fresh copy
// each time, so a caller may adjust one (a test mounting ufs) without affecting
// another.
package device

import (
	"fmt"
	"math"
)

// Kind is the kind of storage device.
type Kind string

// Device kinds.
const (
	HDD  Kind = "hdd"  // rotating disk: seek curve and rotational position
	SSD  Kind = "ssd"  // flash behind SATA: per-page latencies, internal parallelism
	NVMe Kind = "nvme" // flash behind NVMe: as SSD, deeper queues
	RAM  Kind = "ram"  // memory-backed (brd, tmpfs-like): bandwidth only
)

// Profile is a machine as the cost model sees it.
type Profile struct {
	Name        string `toml:"name"`
	Description string `toml:"description"`
	Device      Device `toml:"device"`
	CPU         CPU    `toml:"cpu"`
	Memory      Memory `toml:"memory"`
	FS          FS     `toml:"fs"`
}

// Device is the storage device.
type Device struct {
	Kind           Kind    `toml:"kind"`
	CapacityBytes  int64   `toml:"capacity_bytes"`
	LogicalSector  int     `toml:"logical_sector"`
	PhysicalSector int     `toml:"physical_sector"`
	QueueDepth     int     `toml:"queue_depth"`
	WriteCache     bool    `toml:"write_cache"`
	ReadMBs        float64 `toml:"seq_read_mb_s"`
	WriteMBs       float64 `toml:"seq_write_mb_s"`
	CommandUs      float64 `toml:"command_us"` // controller overhead per command
	FlushUs        float64 `toml:"flush_us"`   // cache flush with nothing to destage
	FUAUs          float64 `toml:"fua_us"`     // extra cost of a FUA write over a plain one
	// Rotating disks.
	RPM           float64 `toml:"rpm"`
	TrackSeekMs   float64 `toml:"track_to_track_seek_ms"`
	AverageSeekMs float64 `toml:"average_seek_ms"`
	WriteSettleMs float64 `toml:"write_settle_ms"` // extra settling before a write
	// Flash.
	ReadUs      float64 `toml:"read_us"`    // one page read, queue depth 1
	ProgramUs   float64 `toml:"program_us"` // one page program (write reaching flash)
	Parallelism int     `toml:"parallelism"`
	// Service-time spread (flash). A command's read or program latency is
	// drawn from a lognormal distribution whose mean is read_us (program_us)
	// and whose 99th percentile is read_p99_us (program_p99_us); 0 keeps the
	// latency constant. The draws come from a generator seeded with
	// latency_seed, in the order the commands reach the device, so the same
	// profile and the same calls give the same latencies.
	ReadP99Us    float64 `toml:"read_p99_us"`
	ProgramP99Us float64 `toml:"program_p99_us"`
	LatencySeed  uint64  `toml:"latency_seed"`
}

// CPU is what the kernel's own work costs: the numbers belong to a processor, not
// to a workload.
type CPU struct {
	SyscallNs    float64 `toml:"syscall_ns"`     // entry and exit of a null system call
	PathLookupNs float64 `toml:"path_lookup_ns"` // resolving a path and opening/closing a file beyond the entry
	CopyMBs      float64 `toml:"copy_mb_s"`      // memcpy of buffers that fit the last-level cache
	// Optional refinements (0: copy_mb_s for every size).
	L1CopyMBs    float64 `toml:"l1_copy_mb_s"`   // memcpy of buffers that fit the L1 data cache
	L1Bytes      int64   `toml:"l1_bytes"`       // the L1 data cache: smaller copies run at l1_copy_mb_s
	MemCopyMBs   float64 `toml:"mem_copy_mb_s"`  // memcpy of buffers larger than the last-level cache
	CacheBytes   int64   `toml:"cache_bytes"`    // the last-level cache: larger copies run at mem_copy_mb_s
	PageLookupNs float64 `toml:"page_lookup_ns"` // finding a page in the page cache
	PageAllocNs  float64 `toml:"page_alloc_ns"`  // allocating a page and adding it to the cache
	PinPageNs    float64 `toml:"pin_page_ns"`    // get_user_pages for O_DIRECT, per page
	JournalNs    float64 `toml:"journal_ns"`     // journalling one metadata change in memory
	BlockAllocNs float64 `toml:"block_alloc_ns"` // allocating one block to a file (bitmap search, journalled)
	// Cores is how many processors run the threads' CPU work (user work and the
	// kernel's work in their calls). A thread that needs a processor while all
	// are busy waits in the run queue. 0: one processor per thread (no wait).
	Cores int `toml:"cores"`
}

// Memory is the page cache and its writeback tunables (Documentation/admin-guide/
// sysctl/vm.rst).
type Memory struct {
	PageCacheBytes         int64 `toml:"page_cache_bytes"`
	ReadAheadKB            int   `toml:"read_ahead_kb"`
	DirtyRatio             int   `toml:"dirty_ratio"`
	DirtyBackgroundRatio   int   `toml:"dirty_background_ratio"`
	DirtyExpireCentisecs   int   `toml:"dirty_expire_centisecs"`
	DirtyWritebackCentisec int   `toml:"dirty_writeback_centisecs"`
}

// FS is the file system's rules.
type FS struct {
	Type string `toml:"type"` // "ext4" (data=ordered, jbd2) or "ufs"
	// NoJournal: ext4 made without a journal (mke2fs -O ^has_journal). fsync
	// writes the inode's block and flushes the cache (fs/ext4/fsync.c,
	// ext4_fsync_nojournal) instead of committing a transaction.
	NoJournal     bool `toml:"no_journal"`
	CommitSeconds int  `toml:"commit_seconds"` // ext4 commit= (periodic journal commit)
	ForceDirectIO bool `toml:"forcedirectio"`  // ufs forcedirectio mount option
	// JournalOffset is where the journal lives on the device, as a fraction of
	// its capacity (mke2fs puts it in the middle block group of ext4).
	JournalOffset float64 `toml:"journal_offset"`
	// FreeBlocksUs is what an unlink that drops a file's last link spends
	// freeing its blocks on the device, per file. ext4 defers the discard of
	// freed blocks to the journal commit, but without a journal and mounted
	// with discard it issues it in the call (fs/ext4/mballoc.c,
	// ext4_mb_clear_bb). Measured by iosim calibrate; 0: not priced.
	FreeBlocksUs float64 `toml:"free_blocks_us"`
}

// Validate reports the first field that cannot be used, naming it by its TOML key.
func (p *Profile) Validate() error {
	d := &p.Device
	bad := func(key string, why string) error { return fmt.Errorf("%s: %s", key, why) }
	switch d.Kind {
	case HDD, SSD, NVMe, RAM:
	case "":
		return bad("device.kind", "missing; expected hdd, ssd, nvme or ram")
	default:
		return bad("device.kind", fmt.Sprintf("%q: expected hdd, ssd, nvme or ram", d.Kind))
	}
	pos := []struct {
		key string
		v   float64
	}{
		{"device.capacity_bytes", float64(d.CapacityBytes)},
		{"device.logical_sector", float64(d.LogicalSector)},
		{"device.queue_depth", float64(d.QueueDepth)},
		{"device.seq_read_mb_s", d.ReadMBs},
		{"device.seq_write_mb_s", d.WriteMBs},
		{"cpu.copy_mb_s", p.CPU.CopyMBs},
		{"memory.page_cache_bytes", float64(p.Memory.PageCacheBytes)},
	}
	if d.Kind == HDD {
		pos = append(pos, struct {
			key string
			v   float64
		}{"device.rpm", d.RPM}, struct {
			key string
			v   float64
		}{"device.average_seek_ms", d.AverageSeekMs})
	}
	for _, f := range pos {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return bad(f.key, "must be positive")
		}
	}
	nonneg := []struct {
		key string
		v   float64
	}{
		{"device.command_us", d.CommandUs}, {"device.flush_us", d.FlushUs}, {"device.fua_us", d.FUAUs},
		{"device.track_to_track_seek_ms", d.TrackSeekMs}, {"device.write_settle_ms", d.WriteSettleMs},
		{"device.read_us", d.ReadUs}, {"device.program_us", d.ProgramUs}, {"device.parallelism", float64(d.Parallelism)},
		{"cpu.syscall_ns", p.CPU.SyscallNs}, {"cpu.path_lookup_ns", p.CPU.PathLookupNs},
		{"cpu.page_lookup_ns", p.CPU.PageLookupNs}, {"cpu.page_alloc_ns", p.CPU.PageAllocNs},
		{"cpu.pin_page_ns", p.CPU.PinPageNs}, {"cpu.journal_ns", p.CPU.JournalNs},
		{"cpu.block_alloc_ns", p.CPU.BlockAllocNs}, {"cpu.cores", float64(p.CPU.Cores)},
		{"cpu.l1_copy_mb_s", p.CPU.L1CopyMBs}, {"cpu.l1_bytes", float64(p.CPU.L1Bytes)},
		{"cpu.mem_copy_mb_s", p.CPU.MemCopyMBs}, {"cpu.cache_bytes", float64(p.CPU.CacheBytes)},
		{"memory.read_ahead_kb", float64(p.Memory.ReadAheadKB)},
		{"memory.dirty_expire_centisecs", float64(p.Memory.DirtyExpireCentisecs)},
		{"memory.dirty_writeback_centisecs", float64(p.Memory.DirtyWritebackCentisec)},
		{"fs.commit_seconds", float64(p.FS.CommitSeconds)}, {"fs.free_blocks_us", p.FS.FreeBlocksUs},
	}
	for _, f := range nonneg {
		if f.v < 0 || math.IsNaN(f.v) || math.IsInf(f.v, 0) {
			return bad(f.key, "must not be negative")
		}
	}
	for _, t := range []struct {
		key, meanKey string
		p99, mean    float64
	}{{"device.read_p99_us", "device.read_us", d.ReadP99Us, d.ReadUs}, {"device.program_p99_us", "device.program_us", d.ProgramP99Us, d.ProgramUs}} {
		switch {
		case t.p99 == 0:
		case !(t.p99 > 0) || math.IsInf(t.p99, 0):
			return bad(t.key, "must not be negative")
		case d.Kind == HDD || d.Kind == RAM:
			return bad(t.key, "is a flash device's (ssd, nvme) latency spread")
		case !(t.mean > 0):
			return bad(t.key, fmt.Sprintf("needs %s, the mean it spreads around", t.meanKey))
		case t.p99 < t.mean:
			return bad(t.key, fmt.Sprintf("%g is below the mean %s=%g", t.p99, t.meanKey, t.mean))
		case t.p99 >= t.mean*maxTailRatio:
			return bad(t.key, fmt.Sprintf("%g is %.1f times the mean %s=%g; a lognormal's 99th percentile is less than %.1f times its mean", t.p99, t.p99/t.mean, t.meanKey, t.mean, maxTailRatio))
		}
	}
	if d.LogicalSector&(d.LogicalSector-1) != 0 {
		return bad("device.logical_sector", "must be a power of two")
	}
	if d.PhysicalSector != 0 && (d.PhysicalSector < d.LogicalSector || d.PhysicalSector&(d.PhysicalSector-1) != 0) {
		return bad("device.physical_sector", "must be a power of two, at least the logical sector")
	}
	for _, r := range []struct {
		key string
		v   int
	}{{"memory.dirty_ratio", p.Memory.DirtyRatio}, {"memory.dirty_background_ratio", p.Memory.DirtyBackgroundRatio}} {
		if r.v < 0 || r.v > 100 {
			return bad(r.key, "must be a percentage (0-100)")
		}
	}
	switch p.FS.Type {
	case "ext4", "ufs":
	default:
		return bad("fs.type", fmt.Sprintf("%q: expected ext4 or ufs", p.FS.Type))
	}
	if p.FS.JournalOffset < 0 || p.FS.JournalOffset >= 1 {
		return bad("fs.journal_offset", "must be in [0, 1)")
	}
	return nil
}

// Clone returns a copy of p that shares nothing with it.
func (p *Profile) Clone() *Profile {
	c := *p
	return &c
}

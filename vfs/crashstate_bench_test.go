package vfs_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// crashWorkload is the workload of the crash-exploration target: 1,000 files
// of 4 KiB in the root, every other one fsynced, the root fsynced once half of
// them are made, which leaves 2,001 pending changes: 500 creates; the block,
// size and times of each of the 500 files not synced; the root's times.
func crashWorkload(b testing.TB) *vfs.FS {
	fs := vfs.New()
	r := fs.Root()
	block := make([]byte, 4096)
	for k := range 1000 {
		f, _, err := r.Open(fmt.Sprintf("f%04d", k), unix.O_CREAT|unix.O_RDWR, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		block[0] = byte(k)
		if _, err := f.WriteAt(block, 0); err != nil {
			b.Fatal(err)
		}
		if k%2 == 0 {
			if err := f.Fsync(nil); err != nil {
				b.Fatal(err)
			}
		}
		if k == 499 {
			if err := r.Fsync(nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	return fs
}

// BenchmarkCrashStates measures crash states per second on crashWorkload:
//
//	go test -run x -bench CrashStates -benchmem ./vfs
//
// The target is 100,000 states a second on 2 cores with cheap checks. Crash,
// RandomCrash and CrashWith build a whole file system per state; the State
// cases step a CrashState from one state to the next by one survival choice
// (each a new state) and check it cheaply: its hash for deduplication, and a
// stat of the inodes the step touched.
func BenchmarkCrashStates(b *testing.B) {
	fs := crashWorkload(b)
	if n := len(fs.Pending()); n != 2001 {
		b.Fatalf("%d pending changes, want 2001", n)
	}
	b.Run("Crash", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = fs.Crash()
		}
	})
	b.Run("RandomCrash", func(b *testing.B) {
		b.ReportAllocs()
		seed := uint64(0)
		for b.Loop() {
			seed++
			_ = fs.RandomCrash(vfs.Subset, seed)
		}
	})
	b.Run("Snapshot", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = fs.Snapshot()
		}
	})
	// What a crash point costs before its first state: the snapshot and the
	// split of its changes into components.
	b.Run("SnapshotState", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = fs.Snapshot().State()
		}
	})
	snap := fs.Snapshot()
	ps := snap.Pending()
	step := func(st *vfs.CrashState, rng *rand.Rand, seen map[uint64]bool) {
		k := rng.IntN(len(ps))
		st.Set(k, vfs.Survival{Keep: !st.Survival(k).Keep})
		seen[st.Hash()] = true
		for _, ino := range st.Touched(k) {
			if _, err := st.StatIno(ino); err != nil && err != unix.ENOENT {
				b.Fatal(err)
			}
		}
	}
	b.Run("State", func(b *testing.B) {
		b.ReportAllocs()
		st := snap.State()
		rng := rand.New(rand.NewPCG(1, 2))
		seen := map[uint64]bool{}
		for b.Loop() {
			step(st, rng, seen)
		}
	})
	b.Run("StateParallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			st := snap.State()
			rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
			seen := map[uint64]bool{}
			for pb.Next() {
				step(st, rng, seen)
			}
		})
	})
	b.Run("CrashWith", func(b *testing.B) {
		b.ReportAllocs()
		keep := make([]vfs.Survival, len(ps))
		for k := range keep {
			keep[k].Keep = k%2 == 0
		}
		for b.Loop() {
			if _, err := fs.CrashWith(keep); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("RandomCrashParallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			rng := rand.New(rand.NewPCG(rand.Uint64(), 1))
			for pb.Next() {
				_ = fs.RandomCrash(vfs.Subset, rng.Uint64())
			}
		})
	})
}

// BenchmarkChurnRetained creates, writes 6,000 bytes to, closes and removes
// a file per iteration through the afero face, never syncing, and reports the
// heap still held per iteration at the end (retained-B/iter): what changes
// that cancel out leave behind.
//
//	go test -run x -bench ChurnRetained -benchtime 100000x ./vfs
func BenchmarkChurnRetained(b *testing.B) {
	fs := vfs.New()
	if err := fs.Mkdir("/d", 0o755); err != nil {
		b.Fatal(err)
	}
	if err := fs.Sync(); err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 6000)
	before := heapInuse()
	k := 0
	for b.Loop() {
		k++
		name := fmt.Sprintf("/d/tmp%d", k%7)
		f, err := fs.Create(name)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := f.Write(buf); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
		if err := fs.Remove(name); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(int64(heapInuse())-int64(before))/float64(b.N), "retained-B/iter")
	runtime.KeepAlive(fs)
}

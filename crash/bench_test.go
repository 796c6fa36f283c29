package crash

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/internal/cputime"
	"github.com/iosim/iosim/vfs"
)

// BenchmarkExplore1000Files explores the crash point after a workload of
// 1,000 files of 4 KiB, every other one fsynced (about 2,000 changes in
// flight), under every model at depth 1, with the built-in checks. It reports
// states/s (all states built or found equal to one built at the point),
// distinct states/s, and states per CPU-second of the process (all
// goroutines, the collector's included: a figure that other load on the
// machine changes less than the wall clock's). In "newdir" the program makes the directory (its
// creation stays in flight: every change in it depends on that one), in
// "dir" the directory was there before. "nosync" is "dir" with no file
// fsynced (about 3,000 changes in flight): the journal models' states are
// then journal cuts that each lose hundreds of units.
func BenchmarkExplore1000Files(b *testing.B) {
	b.Run("newdir", func(b *testing.B) { benchExplore1000(b, false, 2) })
	b.Run("dir", func(b *testing.B) { benchExplore1000(b, true, 2) })
	b.Run("nosync", func(b *testing.B) { benchExplore1000(b, true, 0) })
}

// benchExplore1000 fsyncs every syncEvery-th file (0: none).
func benchExplore1000(b *testing.B, dirBefore bool, syncEvery int) {
	data := make([]byte, 4096)
	var states, distinct int
	var setup Setup
	// the calls before the last ("done"), whose point alone is explored:
	// the opens and writes, the fsyncs, the mkdir
	skip := 2000
	if syncEvery > 0 {
		skip += 1000 / syncEvery
	}
	if dirBefore {
		setup = func(fs *vfs.FS) error { return fs.Mkdir("/d", 0o755) }
	} else {
		skip++
	}
	cpu0 := cputime.Process()
	for b.Loop() {
		rep, err := ExploreFunc(Options{Skip: skip}, setup, func(env *Env) error {
			p := env.Proc
			if !dirBefore {
				if err := p.Mkdir("/d", 0o755); err != nil {
					return err
				}
			}
			for i := range 1000 {
				fd, err := p.Open(fmt.Sprintf("/d/f%04d", i), unix.O_WRONLY|unix.O_CREAT, 0o644)
				if err != nil {
					return err
				}
				if _, err := p.Write(fd, data); err != nil {
					return err
				}
				if syncEvery > 0 && i%syncEvery == 0 {
					if err := p.Fsync(fd); err != nil {
						return err
					}
				}
				if err := p.Close(fd); err != nil {
					return err
				}
			}
			_, err := p.Write(1, []byte("done\n"))
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
		if rep.CrashPoints != 1 {
			b.Fatalf("%d crash points explored, want the last one", rep.CrashPoints)
		}
		states += rep.States
		distinct += rep.DistinctStates
	}
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
	b.ReportMetric(float64(distinct)/b.Elapsed().Seconds(), "distinct/s")
	b.ReportMetric(float64(states)/(cputime.Process()-cpu0).Seconds(), "states/cpu-s")
}

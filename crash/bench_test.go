package crash

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"

	"iosim/internal/cputime"
	"iosim/vfs"
)

// BenchmarkExplore1000Files explores the crash point after a workload of
// 1,000 files of 4 KiB, every other one fsynced (about 2,000 changes in
// flight), under every model at depth 1, with the built-in checks. It reports
// states/s (all states built or found equal to one built at the point),
// distinct states/s, and states per CPU-second of the process (all
// goroutines, the collector's included: a figure that other load on the
// machine changes less than the wall clock's). In "newdir" the program makes the directory (its
// creation stays in flight: every change in it depends on that one), in
// "dir" the directory was there before.
func BenchmarkExplore1000Files(b *testing.B) {
	b.Run("newdir", func(b *testing.B) { benchExplore1000(b, false) })
	b.Run("dir", func(b *testing.B) { benchExplore1000(b, true) })
}

func benchExplore1000(b *testing.B, dirBefore bool) {
	data := make([]byte, 4096)
	var states, distinct int
	var setup Setup
	skip := 2501
	if dirBefore {
		setup = func(fs *vfs.FS) error { return fs.Mkdir("/d", 0o755) }
		skip--
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
				if i%2 == 0 {
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
		states += rep.States
		distinct += rep.DistinctStates
	}
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
	b.ReportMetric(float64(distinct)/b.Elapsed().Seconds(), "distinct/s")
	b.ReportMetric(float64(states)/(cputime.Process()-cpu0).Seconds(), "states/cpu-s")
}

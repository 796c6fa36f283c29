package crash

import (
	"fmt"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkExplore1000Files explores the crash point after a workload of
// 1,000 files of 4 KiB, every other one fsynced (about 2,000 changes in
// flight), under every model at depth 1, with the built-in checks. It reports
// states/s (all states built or found equal to one built at the point) and
// distinct states/s.
func BenchmarkExplore1000Files(b *testing.B) {
	data := make([]byte, 4096)
	var states, distinct int
	for b.Loop() {
		rep, err := ExploreFunc(Options{Skip: 2501}, nil, func(env *Env) error {
			p := env.Proc
			if err := p.Mkdir("/d", 0o755); err != nil {
				return err
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
}

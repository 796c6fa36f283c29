package fio

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// calibratedJobs are the canonical jobs of scenarios/fio.
var calibratedJobs = []string{"seq-write-buffered", "seq-write-sync", "rand-read-direct", "rand-write-fdatasync", "aio-randread-qd16", "rand-read-buffered-big"}

// TestCalibratedProfileWithin2x pins the committed calibrated profile
// (scenarios/fio/dev-vm.toml, from iosim calibrate) against the real fio's
// committed results (scenarios/fio/measured): on each job the model's
// bandwidth is within 2x of fio's, and the jobs rank the same by bandwidth.
// On rand-read-buffered-big, whose reads all miss the page cache on both
// sides, the median completion latency is within 2x too.
// The model is deterministic, so a change to the device model, the cost model
// or calibrate's profile that moves a job out of the band fails here.
func TestCalibratedProfileWithin2x(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six fio jobs on the model, one laying out 24 GiB")
	}
	dir := filepath.Join("..", "scenarios", "fio")
	prof, err := device.Load(filepath.Join(dir, "dev-vm.toml"))
	require.NoError(t, err)
	model := map[string]float64{}
	real := map[string]float64{}
	for _, name := range calibratedJobs {
		f, err := os.Open(filepath.Join(dir, name+".fio"))
		require.NoError(t, err)
		jobs, err := Parse(f, name+".fio")
		f.Close()
		require.NoError(t, err)
		k := sim.New(vfs.New(), sim.WithLockWait(false), sim.WithDevice(prof.Clone()))
		res, err := Run(k, k, jobs, Options{Layout: k})
		require.NoError(t, err)
		require.NoError(t, res[0].Err, name)
		mj := ToJSON(res).Jobs[0]
		f, err = os.Open(filepath.Join(dir, "measured", name+".json"))
		require.NoError(t, err)
		meas, err := ReadJSON(f)
		f.Close()
		require.NoError(t, err)
		rj := meas.Jobs[0]
		require.Equal(t, name, rj.JobName)
		model[name] = float64(mj.Read.BW + mj.Write.BW)
		real[name] = float64(rj.Read.BW + rj.Write.BW)
		ratio := model[name] / real[name]
		t.Logf("%s: model %.0f KiB/s, fio %.0f KiB/s, ratio %.2f", name, model[name], real[name], ratio)
		require.True(t, ratio >= 0.5 && ratio <= 2, "%s: model/fio bandwidth %.2f is outside [0.5, 2]", name, ratio)
		if name == "rand-read-buffered-big" {
			k50 := PercentileKey(50)
			m50, r50 := float64(mj.Read.ClatNs.Percentile[k50]), float64(rj.Read.ClatNs.Percentile[k50])
			t.Logf("%s: median completion latency: model %.0f ns, fio %.0f ns", name, m50, r50)
			require.True(t, m50/r50 >= 0.5 && m50/r50 <= 2, "%s: median latency model/fio %.2f is outside [0.5, 2]", name, m50/r50)
			b := k.Breakdown()
			require.Zero(t, b.CacheHits, "every read misses: fio dropped the laid-out file from the cache (invalidate=1), and no block is read twice")
		}
	}
	rank := func(bw map[string]float64) []string {
		r := slices.Clone(calibratedJobs)
		slices.SortFunc(r, func(a, b string) int { return cmp.Compare(bw[b], bw[a]) })
		return r
	}
	require.Equal(t, rank(real), rank(model), "the jobs by bandwidth, fastest first: fio's, then the model's")
}

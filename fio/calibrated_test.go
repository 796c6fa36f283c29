package fio

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"iosim/device"
	"iosim/sim"
	"iosim/vfs"
)

// calibratedJobs are the canonical jobs of scenarios/fio.
var calibratedJobs = []string{"seq-write-buffered", "seq-write-sync", "rand-read-direct", "rand-write-fdatasync", "aio-randread-qd16", "rand-read-buffered-big"}

// bandwidthBand is how far the model's bandwidth may be from fio's: 2x, but
// 3x for rand-read-buffered-big, 2.7x faster on the model. Its 4 KiB reads
// all miss the page cache on both sides and their median latency agrees
// (checked within 2x below), but on the measured machine 1% of them took over
// 1.6 ms: in part the virtual disk reading 24 GiB at random (O_DIRECT reads of
// the same file averaged 91 us, of rand-read-direct's 1 GiB file 66 us),
// where the model's device gives a read one latency whatever the span; in
// part the kernel's buffered read path on a loaded machine, which the model
// prices as the direct read plus a page allocation and a copy
// (scenarios/README.md has the figures).
func bandwidthBand(job string) float64 {
	if job == "rand-read-buffered-big" {
		return 3
	}
	return 2
}

// TestCalibratedProfileWithin2x pins the committed calibrated profile
// (scenarios/fio/dev-vm.toml, from iosim calibrate) against the real fio's
// committed results (scenarios/fio/measured): on each job the model's
// bandwidth is within 2x of fio's (3x for one job, see bandwidthBand), and
// the jobs rank the same by bandwidth.
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
		ratio, band := model[name]/real[name], bandwidthBand(name)
		t.Logf("%s: model %.0f KiB/s, fio %.0f KiB/s, ratio %.2f", name, model[name], real[name], ratio)
		require.True(t, ratio >= 1/band && ratio <= band, "%s: model/fio bandwidth %.2f is outside [%.2f, %g]", name, ratio, 1/band, band)
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

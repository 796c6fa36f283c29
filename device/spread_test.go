package device

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// A flash profile with read_p99_us spreads its reads: the draws keep the
// mean, reach the tail given, and repeat for the same seed.
func TestLatencySpread(t *testing.T) {
	d := Device{Kind: NVMe, QueueDepth: 1, Parallelism: 1, ReadMBs: 1e6, WriteMBs: 1e6, ReadUs: 60, ReadP99Us: 150, ProgramUs: 18}
	lat := func(d Device) []int64 {
		m := NewModel(&d)
		out := make([]int64, 20000)
		at := int64(0)
		for i := range out {
			_, done := m.Submit(at, Read, 0, 4096)
			out[i] = done - at
			at = done
		}
		return out
	}
	a := lat(d)
	require.Equal(t, a, lat(d), "the same seed, the same latencies")
	d2 := d
	d2.LatencySeed = 7
	require.NotEqual(t, a, lat(d2), "another seed, other latencies")
	s := slices.Clone(a)
	slices.Sort(s)
	mean := 0.0
	for _, v := range s {
		mean += float64(v)
	}
	mean /= float64(len(s))
	require.InDelta(t, 60e3, mean, 60e3*0.03, "the mean is read_us")
	require.InDelta(t, 150e3, float64(s[len(s)*99/100]), 150e3*0.06, "the 99th percentile is read_p99_us")
	require.Less(t, s[len(s)/2], s[len(s)*99/100])
	// Without read_p99_us every read takes the same time.
	d.ReadP99Us = 0
	c := lat(d)
	require.Equal(t, slices.Min(c), slices.Max(c))
}

func TestLatencySpreadValidate(t *testing.T) {
	for _, tc := range []struct {
		edit func(p *Profile)
		want string
	}{
		{func(p *Profile) { p.Device.ReadUs, p.Device.ReadP99Us = 60, 30 }, "device.read_p99_us: 30 is below the mean device.read_us=60"},
		{func(p *Profile) { p.Device.ReadUs, p.Device.ReadP99Us = 60, 6000 }, "device.read_p99_us: 6000 is 100.0 times the mean"},
		{func(p *Profile) { p.Device.ReadUs, p.Device.ReadP99Us = 0, 100 }, "device.read_p99_us: needs device.read_us"},
		{func(p *Profile) { p.Device.ProgramP99Us = -1 }, "device.program_p99_us: must not be negative"},
		{func(p *Profile) {
			p.Device.Kind, p.Device.RPM, p.Device.AverageSeekMs, p.Device.ReadP99Us = HDD, 7200, 8, 100
		}, "device.read_p99_us: is a flash device's"},
	} {
		p, err := Lookup("nvme")
		require.NoError(t, err)
		tc.edit(p)
		err = p.Validate()
		require.Error(t, err, tc.want)
		require.Contains(t, err.Error(), tc.want)
	}
	for _, name := range Names() {
		p, err := Lookup(name)
		require.NoError(t, err)
		require.NoError(t, p.Validate(), name)
	}
}

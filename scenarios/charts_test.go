package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCharts draws filecache.scen's comparison and checks that the charts
// carry the ratio and the arms. IOSIM_CHART_PNG=DIR also writes PNGs there,
// to look at.
func TestCharts(t *testing.T) {
	c := &Charts{}
	r := RunFile("filecache.scen", RunOptions{Charts: c})
	require.True(t, r.Passed(), "%v", r.Err)
	dir := t.TempDir()
	files, err := c.Write(dir)
	require.NoError(t, err)
	require.Equal(t, []string{
		filepath.Join(dir, "filecache-compare1.svg"),
		filepath.Join(dir, "filecache-compare1-time.svg"),
		filepath.Join(dir, "filecache-compare1-latency.svg"),
		filepath.Join(dir, "filecache-latency.svg"),
	}, files)
	svg, err := os.ReadFile(files[0])
	require.NoError(t, err)
	require.Contains(t, string(svg), "lookups / cached = 1.33 (kernel-calls)")
	svg, err = os.ReadFile(files[1])
	require.NoError(t, err)
	require.Contains(t, string(svg), "lseek")
	if d := os.Getenv("IOSIM_CHART_PNG"); d != "" {
		_, err := c.WriteExt(d, ".png")
		require.NoError(t, err)
	}
}

// TestSeedCharts draws seed 001's comparison on a device: the bar chart
// carries the ratio, the stacked bar the time model's categories, the CDF
// both arms on a logarithmic time axis. IOSIM_CHART_PNG=DIR also draws
// every seed's charts there as PNGs.
func TestSeedCharts(t *testing.T) {
	c := &Charts{}
	r := RunFile("seed-001-osync.scen", RunOptions{Charts: c})
	require.True(t, r.Passed(), "%v", r.Err)
	dir := t.TempDir()
	files, err := c.Write(dir)
	require.NoError(t, err)
	require.Equal(t, []string{
		filepath.Join(dir, "seed-001-osync-compare1.svg"),
		filepath.Join(dir, "seed-001-osync-compare1-time.svg"),
		filepath.Join(dir, "seed-001-osync-compare1-latency.svg"),
		filepath.Join(dir, "seed-001-osync-latency.svg"),
	}, files)
	read := func(i int) string {
		b, err := os.ReadFile(files[i])
		require.NoError(t, err)
		return string(b)
	}
	require.Contains(t, read(0), "osync / buffered = 9.67 (time)")
	require.Contains(t, read(1), "journal commit")
	require.Contains(t, read(1), "device service")
	require.NotContains(t, read(1), ">write<", "by category, not by syscall")
	require.Contains(t, read(2), ">100ms<")
	if d := os.Getenv("IOSIM_CHART_PNG"); d != "" {
		seeds, err := filepath.Glob("seed-*.scen")
		require.NoError(t, err)
		for _, f := range seeds {
			c := &Charts{}
			require.True(t, RunFile(f, RunOptions{Charts: c}).Passed())
			_, err := c.WriteExt(d, ".png")
			require.NoError(t, err)
		}
	}
}

// TestCrashCharts draws the crash runs of crash-file-update.scen: one chart
// per crash command, with the three series, the crash points' lines on the
// axis and the finding counts written on their bars.
func TestCrashCharts(t *testing.T) {
	c := &Charts{}
	r := RunFile("crash-file-update.scen", RunOptions{Charts: c})
	require.True(t, r.Passed(), "%v", r.Err)
	require.NotEmpty(t, c.crashes)
	dir := t.TempDir()
	files, err := c.Write(dir)
	require.NoError(t, err)
	require.Contains(t, files, filepath.Join(dir, "crash-file-update-crash1.svg"))
	require.Contains(t, files, filepath.Join(dir, fmt.Sprintf("crash-file-update-crash%d.svg", len(c.crashes))))
	b, err := os.ReadFile(filepath.Join(dir, "crash-file-update-crash1.svg"))
	require.NoError(t, err)
	svg := string(b)
	require.Contains(t, svg, "crash unsafe: states and findings per crash point")
	for _, series := range []string{">states<", ">failing states<", ">findings first found<"} {
		require.Contains(t, svg, series)
	}
	rep := c.crashes[0].rep
	require.Positive(t, rep.Points[len(rep.Points)-1].Findings+rep.Points[0].Findings+rep.Points[1].Findings)
	for _, pt := range rep.Points {
		require.Contains(t, svg, fmt.Sprintf(">%d<", pt.Point.Line), "the axis names the call before each crash point")
	}
	if d := os.Getenv("IOSIM_CHART_PNG"); d != "" {
		_, err := c.WriteExt(d, ".png")
		require.NoError(t, err)
	}
}

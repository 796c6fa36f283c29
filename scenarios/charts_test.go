package scenarios

import (
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

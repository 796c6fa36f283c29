package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"iosim/device"
)

// calibrate measures a real directory and writes a profile that --device
// loads; it leaves no scratch file behind.
func TestCalibrateWritesLoadableProfile(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the machine for a few seconds")
	}
	dir := t.TempDir()
	out := filepath.Join(t.TempDir(), "me.toml")
	code, _, errOut := runCmd("calibrate", "-duration", "2s", "-o", out, dir)
	require.Equal(t, 0, code, errOut)
	p, err := device.Lookup(out)
	require.NoError(t, err)
	require.Equal(t, "calibrated", p.Name)
	require.Positive(t, p.Device.ReadMBs)
	require.Positive(t, p.CPU.SyscallNs)
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, ents, "scratch files removed")

	code, rep, errOut := runCmd("replay", "--device", out, "../../testdata/traces/commit.fsync.strace")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, rep, "device: calibrated")

	code, _, errOut = runCmd("calibrate", filepath.Join(dir, "missing"))
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "no such file or directory")
}

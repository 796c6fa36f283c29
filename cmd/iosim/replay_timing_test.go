package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A timed replay reports total virtual time, the per-syscall and per-file
// tables and where the time went; the same input gives the same bytes.
func TestReplayDeviceReport(t *testing.T) {
	trace := "../../testdata/traces/syncwrite.osync.strace"
	code, out, errOut := runCmd("replay", "--device", "hdd-7200", trace)
	require.Equal(t, 0, code, errOut)
	for _, want := range []string{"device: hdd-7200", "usecs/call", "p99 us", "per file:", "where the time went:", "journal commit (", "device service", "lock wait ("} {
		require.Contains(t, out, want)
	}
	_, again, _ := runCmd("replay", "--device", "hdd-7200", trace)
	require.Equal(t, out, again, "byte-identical reports")

	code, js, errOut := runCmd("replay", "--device", "hdd-7200", "--json", trace)
	require.Equal(t, 0, code, errOut)
	var rep struct {
		VirtualTimeNs int64 `json:"virtual_time_ns"`
		Timing        struct {
			VirtualTimeNs int64 `json:"virtual_time_ns"`
			Syscalls      []struct {
				Name  string `json:"name"`
				Calls int64  `json:"calls"`
				P99Ns int64  `json:"p99_ns"`
			} `json:"syscalls"`
			Breakdown struct {
				Journal int64 `json:"journal_ns"`
				Commits int64 `json:"commits"`
			} `json:"breakdown"`
		} `json:"timing"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	require.Positive(t, rep.VirtualTimeNs)
	require.Equal(t, rep.VirtualTimeNs, rep.Timing.VirtualTimeNs)
	require.Positive(t, rep.Timing.Breakdown.Commits, "O_SYNC writes commit the journal")
	require.Equal(t, "write", rep.Timing.Syscalls[0].Name, "the O_SYNC writes take the time")
}

// Seed 001 from its recordings: the O_SYNC run takes several times as long
// as the buffered one on the same profile.
func TestReplayDeviceOSyncRatio(t *testing.T) {
	vt := func(trace string) int64 {
		code, js, errOut := runCmd("replay", "--device", "hdd-7200", "--json", "../../testdata/traces/"+trace)
		require.Equal(t, 0, code, errOut)
		var rep struct {
			VirtualTimeNs int64 `json:"virtual_time_ns"`
		}
		require.NoError(t, json.Unmarshal([]byte(js), &rep))
		return rep.VirtualTimeNs
	}
	osync, buffered := vt("syncwrite.osync.strace"), vt("syncwrite.buffered.strace")
	require.Greater(t, float64(osync)/float64(buffered), 5.0)
}

func TestReplayCompareAndVsDevice(t *testing.T) {
	trace := "../../testdata/traces/commit.fsync.strace"
	var cmp struct {
		Baseline struct {
			VirtualTimeNs int64 `json:"virtual_time_ns"`
			Stack         string
		} `json:"baseline"`
		Variant struct {
			VirtualTimeNs int64 `json:"virtual_time_ns"`
			Stack         string
		} `json:"variant"`
		Ratio float64 `json:"ratio"`
	}
	code, js, errOut := runCmd("replay", "--device", "hdd-7200", "--vs-device", "nvme-plp", "--json", trace)
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(js), &cmp))
	require.InDelta(t, float64(cmp.Variant.VirtualTimeNs)/float64(cmp.Baseline.VirtualTimeNs), cmp.Ratio, 1e-9)
	require.Less(t, cmp.Ratio, 0.1, "fsync on a disk against a device with power-loss protection")

	code, js, errOut = runCmd("replay", "--device", "hdd-7200", "--compare", "fdatasync", "--json", trace)
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(js), &cmp))
	require.Equal(t, "fdatasync", cmp.Variant.Stack)
	require.Empty(t, cmp.Baseline.Stack)

	code, out, _ := runCmd("replay", "--device", "hdd-7200", "--vs-device", "ram", trace)
	require.Equal(t, 0, code)
	require.Contains(t, out, "baseline: no stack on hdd-7200; variant: no stack on ram")
}

func TestReplayDeviceErrors(t *testing.T) {
	trace := "../../testdata/traces/commit.fsync.strace"
	code, _, errOut := runCmd("replay", "--device", "floppy", trace)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `device "floppy": not a bundled profile`)
	bad := filepath.Join(t.TempDir(), "bad.toml")
	require.NoError(t, os.WriteFile(bad, []byte("name = \"x\"\nspeed = 3\n"), 0o644))
	code, _, errOut = runCmd("replay", "--device", bad, trace)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "bad.toml:2: unknown key \"speed\"")
	code, _, errOut = runCmd("replay", "--vs-device", "nvme", trace)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--vs-device needs --device")
}

func TestDevicesLists(t *testing.T) {
	code, out, _ := runCmd("devices")
	require.Equal(t, 0, code)
	for _, n := range []string{"hdd-7200", "sata-ssd", "nvme", "nvme-plp", "ram"} {
		require.Contains(t, out, n)
	}
}

// --timing puts the model against strace -T's durations: per class, in total
// and for the device-bound calls.
func TestReplayTimingAgainstRecording(t *testing.T) {
	trace := "../../testdata/traces/syncwrite.osync.strace"
	code, js, errOut := runCmd("replay", "--device", "hdd-7200", "--timing", "--json", trace)
	require.Equal(t, 0, code, errOut)
	var rep struct {
		Timing struct {
			Overhead    int64 `json:"strace_overhead_ns"`
			DeviceBound struct {
				Calls      int64 `json:"calls"`
				RecordedNs int64 `json:"recorded_ns"`
				ModelNs    int64 `json:"model_ns"`
			} `json:"device_bound"`
			Classes []struct {
				Name        string  `json:"name"`
				Calls       int64   `json:"calls"`
				MedianRatio float64 `json:"median_ratio"`
			} `json:"classes"`
		} `json:"timing"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &rep))
	require.Positive(t, rep.Timing.Overhead)
	require.Equal(t, int64(20), rep.Timing.Classes[0].Calls, "the 20 O_SYNC writes take the recorded time")
	require.Equal(t, "write", rep.Timing.Classes[0].Name)
	require.GreaterOrEqual(t, rep.Timing.DeviceBound.Calls, int64(20))
	require.Positive(t, rep.Timing.DeviceBound.RecordedNs)
	require.Positive(t, rep.Timing.DeviceBound.ModelNs)

	code, out, _ := runCmd("replay", "--device", "hdd-7200", "--timing", trace)
	require.Equal(t, 0, code)
	require.Contains(t, out, "device-bound calls (>= 100 us recorded)")

	code, _, errOut = runCmd("replay", "--timing", trace)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--timing needs --device")
}

// TestReplaySVG: --svg draws a comparison (the ratio in the title, where the
// time went by the time model's categories) and refuses a single run.
func TestReplaySVG(t *testing.T) {
	out := filepath.Join(t.TempDir(), "cmp.svg")
	code, _, errOut := runCmd("replay", "--device", "hdd-7200", "--vs-device", "nvme", "--svg", out, "../../testdata/traces/commit.fsync.strace")
	require.Equal(t, 0, code, errOut)
	svg, err := os.ReadFile(out)
	require.NoError(t, err)
	require.Regexp(t, `nvme / hdd-7200 = 0\.\d\d \(time\)`, string(svg))
	require.Contains(t, string(svg), "journal commit")
	code, _, errOut = runCmd("replay", "--svg", out, "../../testdata/traces/commit.fsync.strace")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--svg draws a comparison")
	code, _, errOut = runCmd("replay", "--device", "hdd-7200", "--compare", "fdatasync", "--svg", filepath.Join(t.TempDir(), "x.bogus"), "../../testdata/traces/commit.fsync.strace")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--svg:")
}

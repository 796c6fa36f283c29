package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunScenarios(t *testing.T) {
	code, out, errOut := runCmd("run", "../../scenarios/oraus.scen", "../../scenarios/fsio.scen")
	require.Equal(t, 0, code, out+errOut)
	require.Contains(t, out, "ok   ../../scenarios/oraus.scen")
	require.Contains(t, out, "2 of 2 scenario files passed")

	dir := t.TempDir()
	p := filepath.Join(dir, "a.scen")
	require.NoError(t, os.WriteFile(p, []byte("file /a size=1k\n----\nnot this\n"), 0o644))
	code, out, _ = runCmd("run", dir)
	require.Equal(t, 1, code)
	require.Contains(t, out, "FAIL "+p+": 1 of 1 outputs differ")
	require.Contains(t, out, "-not this\n+file /a: 1024 bytes, written, zero\n")
	code, _, _ = runCmd("run", "--rewrite", p)
	require.Equal(t, 0, code)
	code, _, _ = runCmd("run", p)
	require.Equal(t, 0, code)

	require.NoError(t, os.WriteFile(p, []byte("frobnicate\n----\n"), 0o644))
	code, out, _ = runCmd("run", p)
	require.Equal(t, 2, code)
	require.Contains(t, out, p+":1: frobnicate: unknown command")
}

func TestFioJSON(t *testing.T) {
	p := filepath.Join(t.TempDir(), "j.fio")
	require.NoError(t, os.WriteFile(p, []byte("[rr]\nrw=randread\nbs=4k\nsize=256k\nioengine=libaio\niodepth=8\ndirect=1\n"), 0o644))
	code, out, errOut := runCmd("fio", "--output-format=json", p)
	require.Equal(t, 0, code, errOut)
	var m struct {
		Jobs []struct {
			JobName string `json:"jobname"`
			Read    struct {
				IOPS     float64 `json:"iops"`
				TotalIOs int64   `json:"total_ios"`
				ClatNs   struct {
					Percentile map[string]int64 `json:"percentile"`
				} `json:"clat_ns"`
			} `json:"read"`
		} `json:"jobs"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	require.Len(t, m.Jobs, 1)
	require.Equal(t, "rr", m.Jobs[0].JobName)
	require.Equal(t, int64(64), m.Jobs[0].Read.TotalIOs)
	require.Positive(t, m.Jobs[0].Read.IOPS)
	require.Contains(t, m.Jobs[0].Read.ClatNs.Percentile, "99.000000")

	code, out, _ = runCmd("fio", p)
	require.Equal(t, 0, code)
	require.Contains(t, out, "rr: (groupid=0, jobs=1)")
	require.Contains(t, out, "read: IOPS=")

	small := filepath.Join(t.TempDir(), "small.fio")
	require.NoError(t, os.WriteFile(small, []byte("[rand-read-direct]\nrw=randread\nbs=4k\nsize=64k\ndirect=1\n"), 0o644))
	code, out, errOut = runCmd("fio", "--compare", "../../scenarios/fio/measured/rand-read-direct.json", small)
	require.Equal(t, 0, code, errOut)
	require.Regexp(t, `rand-read-direct +read +iops +\S+ +14946.3`, out)

	require.NoError(t, os.WriteFile(p, []byte("[x]\nsize=1m\nzonemode=zbd\n"), 0o644))
	code, _, errOut = runCmd("fio", p)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, p+":3: zonemode: option not supported")
}

// TestFioDevice: --device prices the job with a profile (a 7200 rpm disk
// does a few hundred random reads a second, not the constant cost's
// millions); an unknown profile is a usage error.
func TestFioDevice(t *testing.T) {
	p := filepath.Join(t.TempDir(), "j.fio")
	require.NoError(t, os.WriteFile(p, []byte("[rr]\nrw=randread\nbs=4k\nsize=4m\nio_size=256k\ndirect=1\n"), 0o644))
	iops := func(args ...string) float64 {
		code, out, errOut := runCmd(append([]string{"fio", "--output-format=json"}, args...)...)
		require.Equal(t, 0, code, errOut)
		var m struct {
			Jobs []struct {
				Read struct {
					IOPS     float64 `json:"iops"`
					TotalIOs int64   `json:"total_ios"`
				} `json:"read"`
			} `json:"jobs"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		require.Equal(t, int64(64), m.Jobs[0].Read.TotalIOs, "io_size=256k of 4k reads")
		return m.Jobs[0].Read.IOPS
	}
	require.Greater(t, iops(p), 1e6)
	disk := iops("--device", "hdd-7200", p)
	require.Greater(t, disk, 30.0)
	require.Less(t, disk, 300.0)
	code, _, errOut := runCmd("fio", "--device", "nosuch", p)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `--device: device "nosuch": not a bundled profile`)
}

package fio

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// payloadJobs are job files beyond the canonical ones that exercise every
// engine and a job that reads back what it wrote, small enough to run twice.
var payloadJobs = map[string]string{
	"randrw-psync":    "[m]\nrw=randrw\nbs=4k\nsize=4m\nnumjobs=2\nruntime=20ms\n",
	"rw-sync":         "[m]\nrw=rw\nbs=16k\nsize=2m\nioengine=sync\nfsync=8\n",
	"randrw-libaio":   "[m]\nrw=randrw\nbs=4k\nsize=4m\nioengine=libaio\niodepth=8\ndirect=1\nruntime=20ms\n",
	"randwrite-pv2":   "[m]\nrw=randwrite\nbs=8k\nsize=4m\nioengine=pvsync2\nfdatasync=4\nruntime=20ms\n",
	"write-posixaio":  "[m]\nrw=write\nbs=64k\nsize=4m\nioengine=posixaio\nend_fsync=1\n",
	"randwrite-dsync": "[m]\nrw=randwrite\nbs=4k\nsize=1m\nsync=dsync\nruntime=20ms\n",
}

// runPayload runs jobs on a fresh kernel with prof and returns fio's JSON, the
// breakdown of the run and the stat of the first job's file.
func runPayload(t *testing.T, prof *device.Profile, jobs []*Job, payload bool) (string, sim.Breakdown, vfs.Stat) {
	k := sim.New(vfs.New(), sim.WithLockWait(false), sim.WithDevice(prof.Clone()))
	res, err := Run(k, k, jobs, Options{Layout: k, Payload: payload})
	require.NoError(t, err)
	var ios int64
	for _, r := range res {
		require.NoError(t, r.Err)
		ios += r.Read.TotalIOs + r.Write.TotalIOs
	}
	require.Positive(t, ios)
	var out bytes.Buffer
	require.NoError(t, WriteJSON(&out, res))
	ino, err := k.FS().Root().Resolve(strings.TrimPrefix(jobs[0].FileName(0), "/"), true)
	require.NoError(t, err)
	var st vfs.Stat
	ino.Stat(&st)
	return out.String(), k.Breakdown(), st
}

// TestPayloadFreeSameResults runs the canonical jobs of scenarios/fio on the
// committed profile, and jobs of every engine, with the payload and
// payload-free: fio's JSON, where the time went, and the file's stat are the
// same.
func TestPayloadFreeSameResults(t *testing.T) {
	dir := filepath.Join("..", "scenarios", "fio")
	prof, err := device.Load(filepath.Join(dir, "dev-vm.toml"))
	require.NoError(t, err)
	files := map[string]string{}
	for name, text := range payloadJobs {
		files[name] = text
	}
	if !testing.Short() {
		for _, name := range calibratedJobs {
			b, err := os.ReadFile(filepath.Join(dir, name+".fio"))
			require.NoError(t, err)
			files[name] = string(b)
		}
	}
	for name, text := range files {
		t.Run(name, func(t *testing.T) {
			jobs, err := Parse(strings.NewReader(text), name+".fio")
			require.NoError(t, err)
			j1, b1, st1 := runPayload(t, prof, jobs, true)
			j2, b2, st2 := runPayload(t, prof, jobs, false)
			require.Equal(t, j1, j2, "fio's JSON")
			require.Equal(t, b1, b2, "where the time went")
			require.Equal(t, st1, st2, "the job's file")
		})
	}
}

// TestPayloadFree2TiB runs jobs on 2 TiB files, a sequential write through
// the page cache and a random write with O_DIRECT, each of 1 GiB (io_size):
// payload-free, the heap grows by the model's bookkeeping of what they did
// (page-cache slots, dirty and device-cache block lists, chunk headers:
// under 128 bytes a 4 KiB block written), not by the bytes written; with the
// payload it holds them (which is what the check would catch). The files
// are not preallocated (fallocate=none): a fallocated file's unwritten
// extents cost a chunk header per 32 blocks of its size.
func TestPayloadFree2TiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2 GiB on the model, and 256 MiB kept")
	}
	prof, err := device.Lookup("nvme")
	require.NoError(t, err)
	heap := func(text string, payload bool) (int64, []*JobResult) {
		jobs, err := Parse(strings.NewReader(text), "big.fio")
		require.NoError(t, err)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		k := sim.New(vfs.New(), sim.WithLockWait(false), sim.WithDevice(prof.Clone()))
		res, err := Run(k, k, jobs, Options{Payload: payload})
		require.NoError(t, err)
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(k)
		return int64(after.HeapAlloc) - int64(before.HeapAlloc), res
	}
	for _, text := range []string{
		"[seq]\nrw=write\nbs=1m\nsize=2t\nio_size=1g\nfallocate=none\n",
		"[rand]\nrw=randwrite\nbs=64k\nsize=2t\nio_size=1g\nioengine=libaio\niodepth=16\ndirect=1\nfallocate=none\n",
	} {
		start := time.Now()
		grew, res := heap(text, false)
		require.NoError(t, res[0].Err)
		require.Equal(t, int64(1<<30), res[0].Write.IOBytes)
		t.Logf("%s: heap +%d bytes, %v", strings.SplitN(text, "\n", 2)[0], grew, time.Since(start))
		require.Less(t, grew, int64(1<<30)/32, "payload-free: the heap holds no written bytes")
	}
	grew, _ := heap("[kept]\nrw=write\nbs=1m\nsize=2t\nio_size=256m\nfallocate=none\n", true)
	require.Greater(t, grew, int64(256<<20)*9/10, "with the payload, the written bytes are held")
}

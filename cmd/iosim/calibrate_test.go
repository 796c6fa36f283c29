package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
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

// The AIO structs match the kernel's (struct iocb is 64 bytes, struct
// io_event 32), and the queue-depth-16 measurement reads 4 KiB O_DIRECT
// blocks of a real file (a wrong layout fails io_submit or reads short) and
// yields a unit count calibrate can write.
func TestCalibrateParallelism(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the machine")
	}
	require.EqualValues(t, 64, unsafe.Sizeof(aioCB{}))
	require.EqualValues(t, 32, unsafe.Sizeof(aioEvent{}))
	path := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(path, make([]byte, 4<<20), 0o644))
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Skipf("no O_DIRECT here: %v", err)
	}
	defer unix.Close(fd)
	c := &calibration{fd: fd, deadline: time.Now().Add(time.Second), step: time.Second}
	n, err := c.parallelism(50*time.Microsecond, func(i int) int64 { return int64(i%1024) * 4096 })
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 1)
	require.LessOrEqual(t, n, calQueueDepth)

	bad := &calibration{fd: -1, deadline: time.Now().Add(time.Second), step: time.Second}
	_, err = bad.parallelism(50*time.Microsecond, func(int) int64 { return 0 })
	require.Error(t, err, "io_submit on a bad descriptor fails")
}

// read_us and program_us are mean latencies, not medians: with one run in
// ten 20 times as long as the others (a skewed device), meanTime counts it
// and timeIt's median does not.
func TestCalibrateMeanTime(t *testing.T) {
	if testing.Short() {
		t.Skip("sleeps")
	}
	c := &calibration{deadline: time.Now().Add(time.Minute), step: time.Minute}
	run := func(i int) error {
		d := time.Millisecond
		if i%10 == 9 {
			d = 20 * time.Millisecond
		}
		time.Sleep(d)
		return nil
	}
	m, err := c.meanTime(10, run)
	require.NoError(t, err)
	require.GreaterOrEqual(t, m, 2900*time.Microsecond, "(9 * 1 ms + 20 ms) / 10, at least")
	med, err := c.timeIt(10, run)
	require.NoError(t, err)
	require.Less(t, med, m, "the median leaves out the slow run")
}

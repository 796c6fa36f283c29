//go:build linux

package fio

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// fileCalls are the calls compared per job file: the ones a job makes on its
// file once it has opened it (io_getevents names no file, and how many a real
// run makes depends on timing).
var fileCalls = []string{"openat", "read", "write", "pread64", "pwrite64", "preadv2", "pwritev2", "fsync", "fdatasync",
	"fadvise64", "fallocate", "ftruncate", "io_submit", "mmap", "close"}

// TestRealFioSameCalls runs each job file of testdata/realfio with the real
// fio under strace and on the model, and requires, per job, the same counts
// in fio's JSON (I/Os and bytes per direction, sync calls and error) and, per
// job file, the same number of each call on that file once the job opened it
// for its I/O (after the layout): the model makes the calls fio makes. It
// skips where fio or strace is not installed (CI installs both).
func TestRealFioSameCalls(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real fio")
	}
	fioBin, err1 := exec.LookPath("fio")
	straceBin, err2 := exec.LookPath("strace")
	if err1 != nil || err2 != nil {
		t.Skip("needs fio and strace (apt-get install fio strace)")
	}
	files, err := filepath.Glob(filepath.Join("testdata", "realfio", "*.fio"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".fio"), func(t *testing.T) {
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			jobs, err := Parse(bytes.NewReader(src), file)
			require.NoError(t, err)

			// The real fio, in a directory of its own.
			dir := t.TempDir()
			jobFile := filepath.Join(dir, "job.fio")
			require.NoError(t, os.WriteFile(jobFile, src, 0o644))
			trace := filepath.Join(dir, "fio.strace")
			cmd := exec.Command(straceBin, "-f", "-y", "-o", trace, fioBin, "--output-format=json", "job.fio")
			cmd.Dir = dir
			out, err := cmd.Output()
			require.NoError(t, err, "fio: %s", out)
			real, err := ReadJSON(bytes.NewReader(out))
			require.NoError(t, err)

			// The model, its calls counted per job clone.
			k := sim.New(vfs.New(), sim.WithLockWait(false))
			count := interposer.NewCount(k)
			res, err := Run(k, count, jobs, Options{Layout: k})
			require.NoError(t, err)
			model := ToJSON(res)

			require.Len(t, model.Jobs, len(real.Jobs))
			for i, rj := range real.Jobs {
				mj := model.Jobs[i]
				require.Equal(t, rj.JobName, mj.JobName)
				require.Equal(t, jsonCounts(rj), jsonCounts(mj), "job %s: fio's counts, then the model's", rj.JobName)
			}

			realCalls := map[string]int64{}
			for _, j := range jobs {
				for n := range j.NumJobs {
					name := j.FileName(n)
					for c, v := range straceFileCalls(t, trace, filepath.Join(dir, name), filepath.Base(name)) {
						realCalls[c] += v
					}
				}
			}
			modelCalls := map[string]int64{}
			for _, r := range count.Table() {
				if slices.Contains(fileCalls, r.Name) {
					modelCalls[r.Name] = r.Calls
				}
			}
			require.Equal(t, realCalls, modelCalls, "calls on the job files after their open for I/O: fio's, then the model's")
		})
	}
}

// jsonCounts are the fields of a job's JSON that do not depend on time.
func jsonCounts(j JSONJob) map[string]int64 {
	return map[string]int64{
		"error":           int64(j.Error),
		"read.total_ios":  j.Read.TotalIOs,
		"read.io_bytes":   j.Read.IOBytes,
		"write.total_ios": j.Write.TotalIOs,
		"write.io_bytes":  j.Write.IOBytes,
		"sync.total_ios":  j.Sync.TotalIOs,
		"sync.lat_ns.N":   j.Sync.LatNs.N,
	}
}

// straceCall is a call line of strace -f -y: its name and arguments.
var straceCall = regexp.MustCompile(`^(?:\d+ +)?([a-z0-9_]+)\((.*)$`)

// straceFileCalls counts, by name, the calls of trace (strace -f -y) on the
// file at path (named base relative to the working directory) from the open
// after the last layout open (O_WRONLY) on: the job's calls for its I/O, and
// for verify= the open and reads of its verify phase.
func straceFileCalls(t *testing.T, trace, path, base string) map[string]int64 {
	f, err := os.Open(trace)
	require.NoError(t, err)
	defer f.Close()
	var calls []string
	layout := false // between a layout's open and the job's
	onFile := "<" + path + ">"
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		m := straceCall.FindStringSubmatch(sc.Text())
		if m == nil || !slices.Contains(fileCalls, m[1]) {
			continue
		}
		args := m[2]
		if m[1] == "openat" {
			if strings.Contains(args, `"`+base+`"`) || strings.Contains(args, `"`+path+`"`) {
				layout = strings.Contains(args, "O_WRONLY")
				if layout {
					calls = calls[:0] // a layout: the job's calls start after it
					continue
				}
				calls = append(calls, m[1])
			}
			continue
		}
		if !layout && strings.Contains(args, onFile) {
			calls = append(calls, m[1])
		}
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, calls, "the trace shows no call on %s", path)
	got := map[string]int64{}
	for _, c := range calls {
		got[c]++
	}
	return got
}

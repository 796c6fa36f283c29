package fio

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

func parse(t *testing.T, text string) []*Job {
	t.Helper()
	jobs, err := Parse(strings.NewReader(text), "j.fio")
	require.NoError(t, err)
	return jobs
}

func TestParseSizeAndTime(t *testing.T) {
	for in, want := range map[string]int64{"4096": 4096, "4k": 4096, "4K": 4096, "4kb": 4096, "4KB": 4096,
		"1m": 1 << 20, "1024k": 1 << 20, "1g": 1 << 30, "1mi": 1e6, "1000ki": 1e6, "1ti": 1e12, "1t": 1 << 40, "0x10": 16, "4096b": 4096} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "k", "4x", "-1", "1e3", "99999999999p"} {
		_, err := ParseSize(bad)
		require.Error(t, err, bad)
	}
	for in, want := range map[string]time.Duration{"30": 30 * time.Second, "10s": 10 * time.Second, "500ms": 500 * time.Millisecond,
		"2m": 2 * time.Minute, "1h": time.Hour, "250us": 250 * time.Microsecond, "5msec": 5 * time.Millisecond} {
		got, err := ParseTime(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseTime("10 parsecs")
	require.Error(t, err)
}

func TestParseGlobalAndJobs(t *testing.T) {
	jobs := parse(t, `; comment
[global]
bs=8k   # trailing comment
size=1m
ioengine=libaio
direct=1

[a]
rw=randrw
rwmixread=70
iodepth=4

[global]
bs=16k
[b]
rw=write
buffered=1
fdatasync=2
end_fsync
time_based
runtime=1s
numjobs=3
filename=/data/b.dat
`)
	require.Len(t, jobs, 2)
	a, b := jobs[0], jobs[1]
	require.Equal(t, "a", a.Name)
	require.Equal(t, 8, a.Line)
	require.Equal(t, int64(8192), a.BS)
	require.Equal(t, int64(1<<20), a.Size)
	require.Equal(t, "randrw", a.RW)
	require.Equal(t, 70, a.MixRead)
	require.True(t, a.Direct)
	require.Equal(t, 4, a.IODepth)
	require.Equal(t, "/a.0.0", a.FileName(0))
	require.Equal(t, int64(16384), b.BS, "a later [global] changes the jobs after it")
	require.False(t, b.Direct)
	require.Equal(t, int64(2), b.Fdatasync)
	require.True(t, b.EndFsync)
	require.True(t, b.TimeBased)
	require.Equal(t, time.Second, b.Runtime)
	require.Equal(t, 3, b.NumJobs)
	require.Equal(t, "/data/b.dat", b.FileName(2))
}

func TestParseErrors(t *testing.T) {
	for text, want := range map[string]string{
		"[j]\nsize=1m\nrw=trim\n":                                          "j.fio:3: rw: unsupported value \"trim\"",
		"[j]\nsize=1m\nioengine=io_uring\n":                                "j.fio:3: ioengine: unsupported engine \"io_uring\"",
		"[j]\nsize=1m\nverify_backlog=8\n":                                 "j.fio:3: verify_backlog: option not supported",
		"[j]\nsize=1m\nverify=crc32c\n":                                    "j.fio:1: verify: job j: verify is supported for rw=write and rw=randwrite only",
		"[j]\nsize=1m\nverify=md5\n":                                       "j.fio:3: verify: unsupported verify \"md5\"",
		"[j]\nsize=1m\nrw=write\nverify=crc32c\ntime_based=1\nruntime=1\n": "j.fio:1: verify: job j: verify with time_based is not supported",
		"[j]\nsize=1m\nhipri\n":                                            "j.fio:1: hipri: job j: hipri is an option of ioengine=pvsync2",
		"[j]\nsize=1m\nioengine=posixaio\niodepth=4\n":                     "j.fio:1: iodepth: job j: iodepth=4 with posixaio is not supported",
		"[j]\nsize=1m\nrandom_distribution=zipf:1\n":                       "j.fio:3: random_distribution: want zipf:THETA with THETA > 0 and not 1",
		"[j]\nsize=1m\nrandom_distribution=pareto:0.9\n":                   "j.fio:3: random_distribution: unsupported distribution \"pareto:0.9\"",
		"[j]\nsize=1m\nrate=1m,2m,3m\n":                                    "j.fio:3: rate: want RATE or READRATE,WRITERATE",
		"[j]\nsize=1m\nrate_iops=fast\n":                                   "j.fio:3: rate_iops: want a rate",
		"[j]\nsize=1m\nramp_time=later\n":                                  "j.fio:3: ramp_time: want a time",
		"[j]\nsize=1m\ngroup_reporting=yes\n":                              "j.fio:3: group_reporting: want 0 or 1",
		"[j]\nsize=1m\nbs=4q\n":                                            "j.fio:3: bs: want a size",
		"[j]\nsize=1m\niodepth=8\n":                                        "j.fio:1: iodepth: job j: iodepth=8 needs an async engine",
		"[j]\nrw=read\n":                                                   "j.fio:1: size: job j has no size",
		"rw=read\n":                                                        "j.fio:1: not a fio job file: \"rw=read\" before any section",
		"[global]\nsize=1m\n":                                              "no job section",
		"[j\nsize=1m\n":                                                    "j.fio:1: malformed section header",
		"[j]\nsize=1m\nfilename=a:b\n":                                     "j.fio:3: filename: want one file name",
		"[j]\nsize=1m\ndirect=yes\n":                                       "j.fio:3: direct: want 0 or 1",
		"[j]\nsize=1m\nrwmixread=101\n":                                    "j.fio:3: rwmixread: want a percentage",
		"[j]\nsize=4k\nbs=8k\n":                                            "j.fio:1: bs: job j: bs=8192 is larger than size=4096",
		"[j]\nsize=1m\nruntime=soon\n":                                     "j.fio:3: runtime: want a time",
		// Files that are not job files: one short line, no dump of their bytes.
		"\x7fELF\x02\x01\x01\x00\x00[x]":                             "j.fio:1: not a fio job file: binary data (byte 0x7f at column 1)",
		"; job\n[j]\nsize=1m\x00\x00\n":                              "j.fio:3: not a fio job file: binary data (byte 0x00 at column 8)",
		"[j]\nsize=1m\n\xff\xfe\n":                                   "j.fio:3: not a fio job file: binary data (byte 0xff at column 1)",
		"Dear reader, this is a letter and not a job file at all.\n": "j.fio:1: not a fio job file: \"Dear reader, this is a letter and not a \"... before any section",
		"[letter]\nDear reader, hello\n":                             "j.fio:2: not a fio job file: \"Dear reader, hello\" is no option or option=value",
		"[j]\nsize=1m\nbs=" + strings.Repeat("4", 2<<20) + "\n":      "j.fio:3: not a fio job file: a line longer than 1 MiB",
	} {
		_, err := Parse(strings.NewReader(text), "j.fio")
		require.Error(t, err, text)
		require.Contains(t, err.Error(), want, text)
		require.NotContains(t, err.Error(), "\n", "one line")
		require.Less(t, len(err.Error()), 200, "a short line")
	}
}

func run(t *testing.T, text string, stack ...string) ([]*JobResult, *interposer.Count) {
	t.Helper()
	k := sim.New(vfs.New(), sim.WithLockWait(false))
	count := interposer.NewCount(k)
	st, err := interposer.ParseStack(stack)
	require.NoError(t, err)
	h, err := st.Build(count)
	require.NoError(t, err)
	res, err := Run(k, h, parse(t, text), Options{Layout: k})
	require.NoError(t, err)
	return res, count
}

func TestRunCounts(t *testing.T) {
	res, c := run(t, "[w]\nrw=write\nbs=4k\nsize=64k\nfsync=4\nend_fsync=1\n")
	require.Len(t, res, 1)
	require.NoError(t, res[0].Err)
	require.Equal(t, int64(16), res[0].Write.TotalIOs)
	require.Equal(t, int64(64<<10), res[0].Write.IOBytes)
	// As fio 3.33 under strace: 16 pwrite64 and 4 fsync (the sync that
	// fsync=4 asks for is issued before the next write, so none follows
	// the 16th; end_fsync makes the 4th).
	require.Equal(t, int64(3), res[0].Sync.TotalIOs)
	require.Equal(t, int64(16), c.Calls(sim.SYS_PWRITE64))
	require.Equal(t, int64(4), c.Calls(sim.SYS_FSYNC))
	require.Equal(t, int64(2), c.Calls(sim.SYS_FADVISE64), "invalidate and the access hint")
	res, c = run(t, "[w]\nrw=randwrite\nbs=4k\nsize=64k\nfdatasync=1\n")
	require.Equal(t, int64(15), c.Calls(sim.SYS_FDATASYNC), "fio 3.33 makes 15 for 16 writes")
	sync := ToJSON(res).Jobs[0].Sync
	require.Zero(t, sync.TotalIOs, "fio's sync.total_ios counts fsync= calls, not fdatasync=")
	require.EqualValues(t, 15, sync.LatNs.N, "the fdatasync latencies are reported")

	// sync engine: read at the file offset, lseek only to move it.
	res, c = run(t, "[r]\nrw=read\nbs=4k\nsize=32k\nioengine=sync\n")
	require.Equal(t, int64(8), res[0].Read.TotalIOs)
	require.Equal(t, int64(0), c.Calls(sim.SYS_LSEEK))
	require.Equal(t, int64(8), c.Calls(sim.SYS_READ))
	_, c = run(t, "[r]\nrw=randread\nbs=4k\nsize=64k\nioengine=sync\n")
	require.Equal(t, int64(16), c.Calls(sim.SYS_READ))
	require.Less(t, c.Calls(sim.SYS_LSEEK), int64(16))
	require.Greater(t, c.Calls(sim.SYS_LSEEK), int64(8))

	// libaio at depth 4: one io_submit per read (fio's iodepth_batch=1),
	// an io_getevents whenever the queue is full.
	res, c = run(t, "[a]\nrw=randread\nbs=4k\nsize=64k\nioengine=libaio\niodepth=4\ndirect=1\n")
	require.NoError(t, res[0].Err)
	require.Equal(t, int64(16), res[0].Read.TotalIOs)
	require.Equal(t, int64(16), c.Calls(sim.SYS_IO_SUBMIT))
	require.Equal(t, int64(4), c.Calls(sim.SYS_IO_GETEVENTS))
	require.Equal(t, int64(1), c.Calls(sim.SYS_IO_SETUP))

	// numjobs: one process and one file per clone; the rw mix is followed.
	res, c = run(t, "[m]\nrw=randrw\nrwmixread=75\nbs=4k\nsize=400k\nnumjobs=3\n")
	require.Len(t, res, 3)
	var reads, writes int64
	for i, r := range res {
		require.Equal(t, i, r.JobNum)
		reads += r.Read.TotalIOs
		writes += r.Write.TotalIOs
	}
	require.Equal(t, int64(300), reads+writes)
	require.InDelta(t, 0.75, float64(reads)/300, 0.1)
	require.Equal(t, int64(3), c.Calls(sim.SYS_OPENAT))
}

// TestRandomTouchesEveryBlockOnce checks fio's random map: a size-based
// random job reads each block once, in an order that depends on randseed.
func TestRandomTouchesEveryBlockOnce(t *testing.T) {
	for _, n := range []int64{1, 2, 3, 16, 1000, 4097} {
		p := newPermutation(n, 42)
		seen := map[int64]bool{}
		var order []int64
		for range n {
			v := p.next()
			require.False(t, seen[v], "n=%d: %d twice", n, v)
			require.True(t, v >= 0 && v < n)
			seen[v] = true
			order = append(order, v)
		}
		if n >= 16 {
			q := newPermutation(n, 43)
			var other []int64
			for range n {
				other = append(other, q.next())
			}
			require.NotEqual(t, order, other)
		}
	}
}

// TestMixedOffsets checks the offsets of a mixed job against fio 3.33 under
// strace: rw=rw keeps a sequential offset per direction; randrw draws both
// directions from one random map, each block once.
func TestMixedOffsets(t *testing.T) {
	offsets := func(text string) (reads, writes []int64) {
		k := sim.New(vfs.New())
		var mu sync.Mutex
		h := sim.HandlerFunc(func(c *sim.Call) sim.Result {
			mu.Lock()
			switch c.Nr {
			case sim.SYS_PREAD64:
				reads = append(reads, c.Args[3])
			case sim.SYS_PWRITE64:
				writes = append(writes, c.Args[3])
			}
			mu.Unlock()
			return k.Syscall(c)
		})
		_, err := Run(k, h, parse(t, text), Options{Layout: k})
		require.NoError(t, err)
		return reads, writes
	}
	reads, writes := offsets("[m]\nrw=rw\nbs=4k\nsize=64k\n")
	require.Len(t, append(reads, writes...), 16)
	for i, off := range reads {
		require.Equal(t, int64(i*4096), off)
	}
	for i, off := range writes {
		require.Equal(t, int64(i*4096), off)
	}
	reads, writes = offsets("[m]\nrw=randrw\nbs=4k\nsize=64k\n")
	all := append(reads, writes...)
	slices.Sort(all)
	for i, off := range all {
		require.Equal(t, int64(i*4096), off)
	}
}

func TestRunRuntimeAndDeterminism(t *testing.T) {
	// At the default 100 ns per call, 10 us of virtual time is 100 reads.
	res, _ := run(t, "[t]\nrw=randread\nbs=4k\nsize=8k\ntime_based=1\nruntime=10us\n")
	require.Equal(t, int64(100), res[0].Read.TotalIOs)
	require.Equal(t, int64(10_000), res[0].Runtime)
	a, _ := run(t, "[r]\nrw=randrw\nbs=4k\nsize=256k\nrandseed=9\n")
	b, _ := run(t, "[r]\nrw=randrw\nbs=4k\nsize=256k\nrandseed=9\n")
	c, _ := run(t, "[r]\nrw=randrw\nbs=4k\nsize=256k\nrandseed=10\n")
	require.Equal(t, a[0].Read.TotalIOs, b[0].Read.TotalIOs)
	require.NotEqual(t, a[0].Read.TotalIOs, c[0].Read.TotalIOs)
}

// TestRunZeroBuffers checks zero_buffers's parsing, and that a job that reads
// a large file lays it out and reads it without the heap growing with it.
func TestRunZeroBuffers(t *testing.T) {
	require.True(t, parse(t, "[z]\nsize=4k\nzero_buffers=1\n")[0].ZeroBuffers)
	require.False(t, parse(t, "[z]\nsize=4k\nzero_buffers=0\n")[0].ZeroBuffers)
	_, err := Parse(strings.NewReader("[z]\nsize=4k\nzero_buffers=yes\n"), "j.fio")
	require.ErrorContains(t, err, "j.fio:3: zero_buffers: want 0 or 1")

	const size = 256 << 20
	k := sim.New(vfs.New())
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	job := "[big]\nrw=randread\nsize=256m\nio_size=64k\nzero_buffers=1\n"
	res, err := Run(k, k, parse(t, job), Options{})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.Equal(t, int64(16), res[0].Read.TotalIOs)
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	require.Less(t, int64(after.HeapAlloc)-int64(before.HeapAlloc), int64(size/8), "heap growth for a %d-byte file of zeros", size)

	p := k.Spawn()
	defer p.Exit()
	fd, err := p.Open("/big.0.0", unix.O_RDONLY, 0)
	require.NoError(t, err)
	var st unix.Stat_t
	require.NoError(t, p.Fstat(fd, &st))
	require.Equal(t, int64(size), st.Size)
	require.Equal(t, int64(size/512), st.Blocks, "written zeros are allocated data")
	off, err := p.Seek(fd, 0, unix.SEEK_HOLE)
	require.NoError(t, err)
	require.Equal(t, int64(size), off, "no hole below EOF")
	buf := make([]byte, 4096)
	_, err = p.Pread(fd, buf, 100<<20)
	require.NoError(t, err)
	require.Equal(t, make([]byte, 4096), buf)
}

func TestRunErrorEndsJob(t *testing.T) {
	res, _ := run(t, "[w]\nrw=write\nbs=4k\nsize=64k\n", "fault:rule=pwrite64#nth=3=ENOSPC")
	require.ErrorContains(t, res[0].Err, "no space left on device")
	require.Equal(t, int64(2), res[0].Write.TotalIOs)
	out := ToJSON(res)
	require.Equal(t, 28, out.Jobs[0].Error)
}

// TestJSONFieldNames checks the names that tools read in fio's JSON.
func TestJSONFieldNames(t *testing.T) {
	res, _ := run(t, "[r]\nrw=randread\nbs=4k\nsize=64k\n")
	var buf bytes.Buffer
	require.NoError(t, WriteJSON(&buf, res))
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m))
	job := m["jobs"].([]any)[0].(map[string]any)
	require.Equal(t, "r", job["jobname"])
	read := job["read"].(map[string]any)
	require.Equal(t, 16.0, read["total_ios"])
	require.Equal(t, 65536.0, read["io_bytes"])
	require.Equal(t, 1e7, read["iops"], "16 reads of 100 ns")
	require.Equal(t, float64(65536*1e7/16/1024), read["bw"], "KiB/s")
	pct := read["clat_ns"].(map[string]any)["percentile"].(map[string]any)
	require.Equal(t, 100.0, pct["99.000000"])
	require.Len(t, pct, len(Percentiles))
}

// TestCanonicalJobsParse keeps the shipped job files valid.
func TestCanonicalJobsParse(t *testing.T) {
	files, err := filepath.Glob("../scenarios/fio/*.fio")
	require.NoError(t, err)
	require.Len(t, files, 6)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		_, err = Parse(bytes.NewReader(b), f)
		require.NoError(t, err, f)
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("../scenarios/fio/*.fio")
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("[global]\nbs=4k\n[a]\nsize=1m\nrw=randrw\nrwmixread=30\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := Parse(bytes.NewReader(data), "f.fio")
		if err != nil {
			var fe *Error
			require.ErrorAs(t, err, &fe)
			return
		}
		for _, j := range jobs {
			require.Positive(t, j.Size)
			require.Positive(t, j.BS)
			require.LessOrEqual(t, j.BS, j.Size)
		}
	})
}

// TestReadMeasuredJSON reads the real fio's JSON of the six canonical jobs
// (fio 3.33 on the development machine) with iosim's types: the field names
// are fio's, so every job's numbers come through.
func TestReadMeasuredJSON(t *testing.T) {
	files, err := filepath.Glob("../scenarios/fio/measured/*.json")
	require.NoError(t, err)
	require.Len(t, files, 6)
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		m, err := ReadJSON(bytes.NewReader(b))
		require.NoError(t, err, f)
		require.Len(t, m.Jobs, 1, f)
		j := m.Jobs[0]
		require.Equal(t, strings.TrimSuffix(filepath.Base(f), ".json"), j.JobName)
		d := j.Read
		if d.TotalIOs == 0 {
			d = j.Write
		}
		require.Positive(t, d.TotalIOs, f)
		require.Positive(t, d.IOPS, f)
		require.Positive(t, d.BW, f)
		require.Equal(t, d.IOBytes, d.IOKBytes*1024, f)
		require.Len(t, d.ClatNs.Percentile, len(Percentiles), f)
		for _, p := range Percentiles {
			require.Contains(t, d.ClatNs.Percentile, PercentileKey(p), f)
		}
	}
}

func TestWriteComparison(t *testing.T) {
	res, _ := run(t, "[rand-read-direct]\nrw=randread\nbs=4k\nsize=64k\ndirect=1\n")
	b, err := os.ReadFile("../scenarios/fio/measured/rand-read-direct.json")
	require.NoError(t, err)
	measured, err := ReadJSON(bytes.NewReader(b))
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, WriteComparison(&out, ToJSON(res), measured))
	// 16 reads of 100 ns: 1e7 IOPS against fio's 14946.
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		rows = append(rows, strings.Fields(l))
	}
	require.Contains(t, rows, []string{"rand-read-direct", "read", "iops", "1e+07", "14946.3", "669"})
	require.Contains(t, rows, []string{"rand-read-direct", "read", "clat", "p99", "ns", "100", "305152", "0.000328"})
	res, _ = run(t, "[other]\nrw=read\nbs=4k\nsize=64k\n")
	require.ErrorContains(t, WriteComparison(&out, ToJSON(res), measured), "no job of the model's")
}

// TestIOSizeAndThinkTime: io_size sets the I/O done over the size= region
// (a sequential job wraps around), thinktime is the job's own time between
// I/Os, and two clones that share one device wait for each other.
func TestIOSizeAndThinkTime(t *testing.T) {
	jobs := parse(t, "[j]\nrw=read\nbs=64k\nsize=1m\nio_size=3m\nthinktime=250\n")
	require.Equal(t, int64(3<<20), jobs[0].IOBytes())
	require.Equal(t, 250*time.Microsecond, jobs[0].ThinkTime)
	res, _ := run(t, "[j]\nrw=read\nbs=64k\nsize=1m\nio_size=3m\nthinktime=250\n")
	require.Equal(t, int64(48), res[0].Read.TotalIOs, "3 passes over 16 blocks")
	plain, _ := run(t, "[j]\nrw=read\nbs=64k\nsize=1m\nio_size=3m\n")
	// 47 thinktimes between 48 reads, each 250 us of the job's time.
	require.Equal(t, int64(47*250_000), res[0].Runtime-plain[0].Runtime)

	dev, err := device.Lookup("hdd-7200")
	require.NoError(t, err)
	clones := func(n string) []*JobResult {
		k := sim.New(vfs.New(), sim.WithDevice(dev.Clone()))
		res, err := Run(k, k, parse(t, "[j]\nrw=randread\nbs=4k\nsize=4m\nio_size=64k\ndirect=1\nnumjobs="+n+"\n"), Options{})
		require.NoError(t, err)
		return res
	}
	one, two := clones("1"), clones("2")
	// Two clones reading at once on one disk: each takes longer than one
	// alone (it waits for the other's reads), not twice as long in all.
	for _, r := range two {
		require.Greater(t, r.Runtime, 3*one[0].Runtime/2)
		require.Less(t, r.Runtime, 3*one[0].Runtime)
	}
}

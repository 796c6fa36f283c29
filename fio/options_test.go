package fio

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/device"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// runSeen runs text on the model with every call of the jobs passed to seen
// before the kernel answers it (after for the reads, with corrupt a chance to
// change what a read returned).
func runSeen(t *testing.T, text string, seen func(c *sim.Call), after func(c *sim.Call)) []*JobResult {
	t.Helper()
	k := sim.New(vfs.New(), sim.WithLockWait(false))
	h := sim.HandlerFunc(func(c *sim.Call) sim.Result {
		if seen != nil {
			seen(c)
		}
		r := k.Syscall(c)
		if after != nil {
			after(c)
		}
		return r
	})
	res, err := Run(k, h, parse(t, text), Options{Layout: k})
	require.NoError(t, err)
	return res
}

func TestNoRandomMapRepeats(t *testing.T) {
	offsets := func(text string) map[int64]int {
		seen := map[int64]int{}
		runSeen(t, text, func(c *sim.Call) {
			if c.Nr == sim.SYS_PREAD64 {
				seen[c.Args[3]]++
			}
		}, nil)
		return seen
	}
	mapped := offsets("[r]\nrw=randread\nbs=4k\nsize=256k\n")
	require.Len(t, mapped, 64, "the random map: every block once")
	free := offsets("[r]\nrw=randread\nbs=4k\nsize=256k\nnorandommap\n")
	n := 0
	for _, v := range free {
		n += v
	}
	require.Equal(t, 64, n, "as many reads")
	require.Less(t, len(free), 64, "norandommap: some blocks twice, some never")
}

func TestZipfIsFios(t *testing.T) {
	// fio's zipf: rank k has probability k^-theta / zeta(n, theta); rank 1
	// is the block at the generator's offset (hash(0) = 0).
	const n, theta, draws = 1000, 1.2, 200000
	z := newZipf(n, theta, rand.New(rand.NewPCG(1, 2)))
	zeta := 0.0
	for k := 1; k <= n; k++ {
		zeta += math.Pow(float64(k), -theta)
	}
	count := make([]int, n)
	for range draws {
		b := z.next()
		require.Less(t, b, uint64(n))
		count[b]++
	}
	top := int(z.off % n)
	second := int((0x61C8864680B583EB + z.off) % n) // rank 2 is hash(1)
	require.InDelta(t, 1/zeta, float64(count[top])/draws, 0.01, "rank 1")
	require.InDelta(t, math.Pow(2, -theta)/zeta, float64(count[second])/draws, 0.01, "rank 2")
	for b, c := range count {
		require.LessOrEqual(t, c, count[top], "block %d drawn more than rank 1", b)
	}
}

func TestZipfJobRepeatsHotBlocks(t *testing.T) {
	seen := map[int64]int{}
	res := runSeen(t, "[r]\nrw=randread\nbs=4k\nsize=4m\nrandom_distribution=zipf:1.2\n", func(c *sim.Call) {
		if c.Nr == sim.SYS_PREAD64 {
			seen[c.Args[3]]++
		}
	}, nil)
	require.EqualValues(t, 1024, res[0].Read.TotalIOs)
	hottest := 0
	for _, v := range seen {
		hottest = max(hottest, v)
	}
	require.Greater(t, hottest, 100, "zipf:1.2 reads its hottest block far more than once")
	require.Less(t, len(seen), 600)
}

func TestRampTime(t *testing.T) {
	const job = "[r]\nrw=randread\nbs=4k\nsize=1m\ntime_based\nruntime=20ms\n"
	calls := func(text string) (*JobResult, int64) {
		var n int64
		res := runSeen(t, text, func(c *sim.Call) {
			if c.Nr == sim.SYS_PREAD64 {
				n++
			}
		}, nil)
		return res[0], n
	}
	plain, _ := calls(job)
	ramped, n := calls(job + "ramp_time=5ms\n")
	require.Equal(t, plain.Start+int64(5*time.Millisecond), ramped.Start, "counting starts after ramp_time")
	require.GreaterOrEqual(t, ramped.Runtime, int64(20*time.Millisecond), "runtime follows ramp_time")
	require.Less(t, ramped.Runtime, int64(21*time.Millisecond))
	require.Less(t, ramped.Read.TotalIOs, n, "the ramp's reads are made and not counted")
	require.Equal(t, ramped.Read.TotalIOs, ramped.Read.Clat.TotalCount())
}

func TestRate(t *testing.T) {
	for _, tc := range []struct {
		text string
		min  time.Duration // the last I/O cannot start before this
	}{
		{"rw=randread\nrate_iops=1000\n", 15 * time.Millisecond},
		{"rw=write\nrate=1m\n", 15 * 4096 * time.Second / (1 << 20)},
		{"rw=write\nrate=,1m\nioengine=libaio\niodepth=4\n", 15 * 4096 * time.Second / (1 << 20)},
	} {
		res := runSeen(t, "[j]\nbs=4k\nsize=64k\n"+tc.text, nil, nil)
		require.NoError(t, res[0].Err)
		require.GreaterOrEqual(t, res[0].Runtime, int64(tc.min), tc.text)
		require.Less(t, res[0].Runtime, int64(tc.min)+int64(time.Millisecond), tc.text)
	}
	// A limit on writes leaves reads alone.
	res := runSeen(t, "[j]\nbs=4k\nsize=64k\nrw=read\nrate=,1k\n", nil, nil)
	require.Less(t, res[0].Runtime, int64(time.Millisecond))
}

func TestVerify(t *testing.T) {
	for _, engine := range []string{"psync", "sync", "pvsync2", "posixaio", "mmap", "libaio"} {
		res := runSeen(t, "[w]\nrw=randwrite\nbs=4k\nsize=64k\nverify=crc32c\nioengine="+engine+"\n", nil, nil)
		require.NoError(t, res[0].Err, engine)
		require.EqualValues(t, 16, res[0].Write.TotalIOs, engine)
		require.EqualValues(t, 16, res[0].Read.TotalIOs, engine+": every block read back")
	}
	// A read that returns other bytes than were written fails the job with
	// EILSEQ, as fio's verify does.
	reads := 0
	res := runSeen(t, "[w]\nrw=randwrite\nbs=4k\nsize=64k\nverify=crc32c\n", nil, func(c *sim.Call) {
		if c.Nr == sim.SYS_PREAD64 {
			reads++
			if reads == 3 {
				c.Buf[100] ^= 1
			}
		}
	})
	require.ErrorIs(t, res[0].Err, unix.EILSEQ)
	require.Contains(t, res[0].Err.Error(), "crc32c: verify failed at file /w.0.0 offset ")
	require.EqualValues(t, 3, res[0].Read.TotalIOs, "the verify stops at the bad block")
	require.Equal(t, int(unix.EILSEQ), ToJSON(res).Jobs[0].Error)
	// A block written to the wrong place fails too (the offset is in it).
	res = runSeen(t, "[w]\nrw=write\nbs=4k\nsize=64k\nverify=crc32c\n", func(c *sim.Call) {
		if c.Nr == sim.SYS_PWRITE64 && c.Args[3] == 8192 {
			c.Args[3] = 4096
		}
	}, nil)
	require.ErrorIs(t, res[0].Err, unix.EILSEQ)
	require.Contains(t, res[0].Err.Error(), "offset 4096")
}

func TestEngines(t *testing.T) {
	var flags []int64
	res := runSeen(t, "[r]\nrw=randread\nbs=4k\nsize=16k\nioengine=pvsync2\nhipri\n", func(c *sim.Call) {
		if c.Nr == sim.SYS_PREADV2 {
			flags = append(flags, c.Args[4])
		}
	}, nil)
	require.NoError(t, res[0].Err)
	require.Equal(t, []int64{unix.RWF_HIPRI, unix.RWF_HIPRI, unix.RWF_HIPRI, unix.RWF_HIPRI}, flags)

	// posixaio: the pwrites are made by a thread of the job's process.
	var byThread, byMain int
	res = runSeen(t, "[w]\nrw=write\nbs=4k\nsize=16k\nioengine=posixaio\n", func(c *sim.Call) {
		if c.Nr == sim.SYS_PWRITE64 {
			if c.Task.Tid() == c.Task.Pid() {
				byMain++
			} else {
				byThread++
			}
		}
	}, nil)
	require.NoError(t, res[0].Err)
	require.Equal(t, 4, byThread)
	require.Zero(t, byMain)
	require.EqualValues(t, 4, res[0].Write.TotalIOs)

	// mmap: one mapping, stores that reach the file; msync for direct=1.
	k := sim.New(vfs.New(), sim.WithLockWait(false))
	var msyncs int
	h := sim.HandlerFunc(func(c *sim.Call) sim.Result {
		if c.Nr == sim.SYS_MSYNC {
			msyncs++
		}
		return k.Syscall(c)
	})
	res, err := Run(k, h, parse(t, "[w]\nrw=write\nbs=4k\nsize=16k\nioengine=mmap\ndirect=1\nzero_buffers=0\n"), Options{Layout: k})
	require.NoError(t, err)
	require.NoError(t, res[0].Err)
	require.Equal(t, 4, msyncs, "direct=1: an msync per write")
	p := k.Spawn()
	fd, err := p.Open("/w.0.0", unix.O_RDONLY, 0)
	require.NoError(t, err)
	got := make([]byte, 16<<10)
	n, err := p.Pread(fd, got, 0)
	require.NoError(t, err)
	require.Equal(t, 16<<10, n)
	want := make([]byte, 4096)
	for i := range want {
		want[i] = byte(i * 7)
	}
	require.True(t, bytes.Equal(want, got[:4096]), "the mapping's stores are in the file")
}

func TestGroupReporting(t *testing.T) {
	res := runSeen(t, "[global]\nbs=4k\nsize=64k\nrw=randread\n[a]\nnumjobs=3\ngroup_reporting\n[b]\n", nil, nil)
	require.Len(t, res, 4)
	js := ToJSON(res)
	require.Len(t, js.Jobs, 2, "a's three clones in one entry, b alone")
	a, b := js.Jobs[0], js.Jobs[1]
	require.Equal(t, "a", a.JobName)
	require.EqualValues(t, 48, a.Read.TotalIOs)
	require.EqualValues(t, 3*64<<10, a.Read.IOBytes)
	require.EqualValues(t, 48, a.Read.ClatNs.N)
	require.Equal(t, max(res[0].Runtime, res[1].Runtime, res[2].Runtime)/1e6, a.JobRuntime)
	require.EqualValues(t, 16, b.Read.TotalIOs)
	var out strings.Builder
	WriteText(&out, res)
	require.Contains(t, out.String(), "a: (groupid=0, jobs=3)")
	require.EqualValues(t, 16, res[0].Read.TotalIOs, "the clones' results are not changed")
}

func TestNotes(t *testing.T) {
	require.Empty(t, Notes(parse(t, "[r]\nsize=64k\n")))
	n := Notes(parse(t, "[global]\nsize=64k\n[m]\nioengine=mmap\n[a]\nioengine=posixaio\n[z]\nrw=randread\nrandom_distribution=zipf:0.8\n[h]\nioengine=pvsync2\nhipri\n"))
	require.Len(t, n, 4)
	require.Contains(t, n[0], "job m: ioengine=mmap")
	require.Contains(t, n[1], "job a: ioengine=posixaio")
	require.Contains(t, n[2], "job z: the random offsets follow fio's distribution")
	require.Contains(t, n[3], "job h: hipri")
}

// On a profile with a latency spread, an O_DIRECT random read's percentiles
// differ as a device's do, and the same profile and job give the same JSON.
func TestLatencySpreadInJSON(t *testing.T) {
	out := func() []byte {
		p, err := device.Lookup("nvme")
		require.NoError(t, err)
		// a tail the user's profile gives (the bundled ones cite no p99)
		p.Device.ReadP99Us = 2.5 * p.Device.ReadUs
		require.NoError(t, p.Validate())
		k := sim.New(vfs.New(), sim.WithLockWait(false), sim.WithDevice(p))
		res, err := Run(k, k, parse(t, "[r]\nrw=randread\nbs=4k\nsize=4m\ndirect=1\n"), Options{})
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, WriteJSON(&b, res))
		return b.Bytes()
	}
	a := out()
	require.Equal(t, a, out(), "the same seed gives the same bytes")
	js, err := ReadJSON(bytes.NewReader(a))
	require.NoError(t, err)
	clat := js.Jobs[0].Read.ClatNs
	require.Less(t, clat.Percentile[PercentileKey(50)], clat.Percentile[PercentileKey(99)])
	require.Less(t, clat.Percentile[PercentileKey(1)], clat.Percentile[PercentileKey(50)])
	require.Greater(t, clat.Stddev, 0.0)
}

package fio

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Percentiles are fio's default percentile_list: the keys of clat_ns.percentile.
var Percentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// JSON is the subset of fio's --output-format=json that iosim fills, with
// fio's field names, so tools that read fio's JSON read it.
type JSON struct {
	Version string    `json:"fio version"`
	Jobs    []JSONJob `json:"jobs"`
}

// JSONJob is one entry of jobs[].
type JSONJob struct {
	JobName    string   `json:"jobname"`
	GroupID    int      `json:"groupid"`
	Error      int      `json:"error"`
	JobRuntime int64    `json:"job_runtime"` // ms
	Read       JSONDir  `json:"read"`
	Write      JSONDir  `json:"write"`
	Sync       JSONSync `json:"sync"`
}

// JSONDir is jobs[].read or jobs[].write.
type JSONDir struct {
	IOBytes  int64   `json:"io_bytes"`
	IOKBytes int64   `json:"io_kbytes"`
	BWBytes  int64   `json:"bw_bytes"`
	BW       int64   `json:"bw"` // KiB/s
	IOPS     float64 `json:"iops"`
	Runtime  int64   `json:"runtime"` // ms
	TotalIOs int64   `json:"total_ios"`
	ClatNs   JSONLat `json:"clat_ns"`
	LatNs    JSONLat `json:"lat_ns"`
}

// JSONSync is jobs[].sync: the latencies of the fsync and fdatasync calls of
// fsync= and fdatasync=; total_ios counts the fsync calls alone, as fio does.
type JSONSync struct {
	TotalIOs int64   `json:"total_ios"`
	LatNs    JSONLat `json:"lat_ns"`
}

// JSONLat is a latency summary in ns.
type JSONLat struct {
	Min        int64            `json:"min"`
	Max        int64            `json:"max"`
	Mean       float64          `json:"mean"`
	Stddev     float64          `json:"stddev"`
	N          int64            `json:"N"`
	Percentile map[string]int64 `json:"percentile,omitempty"`
}

// PercentileKey is fio's key for percentile p ("99.000000").
func PercentileKey(p float64) string { return strconv.FormatFloat(p, 'f', 6, 64) }

func lat(d Dir, pct bool) JSONLat {
	h := d.Clat
	l := JSONLat{N: h.TotalCount()}
	if l.N == 0 {
		return l
	}
	l.Min, l.Max, l.Mean, l.Stddev = h.Min(), h.Max(), h.Mean(), h.StdDev()
	if pct {
		l.Percentile = map[string]int64{}
		for _, p := range Percentiles {
			l.Percentile[PercentileKey(p)] = h.ValueAtQuantile(p)
		}
	}
	return l
}

func dirJSON(d Dir, runtime int64) JSONDir {
	out := JSONDir{IOBytes: d.IOBytes, IOKBytes: d.IOBytes >> 10, TotalIOs: d.TotalIOs, Runtime: runtime / 1e6}
	if d.TotalIOs > 0 && runtime > 0 {
		sec := float64(runtime) / 1e9
		out.BWBytes = int64(float64(d.IOBytes) / sec)
		out.BW = out.BWBytes >> 10
		out.IOPS = float64(d.TotalIOs) / sec
	}
	if d.TotalIOs == 0 {
		out.Runtime = 0
	}
	out.ClatNs = lat(d, true)
	out.LatNs = lat(d, false)
	return out
}

// Grouped applies group_reporting: a result whose job has group_reporting
// joins the entry before it when that entry's job has group_reporting too
// (every job is in group 0: there is no stonewall or new_group), and the
// entry then sums them as fio's sum_thread_stats does: I/Os, bytes and syncs
// added, latencies merged, the runtime the longest, the first error. Other
// results stay one entry each. res is not changed.
func Grouped(res []*JobResult) []*JobResult {
	var out []*JobResult
	for _, r := range res {
		if n := len(out); n > 0 && r.Job.GroupReporting && out[n-1].Job.GroupReporting {
			g := out[n-1]
			g.Jobs += max(r.Jobs, 1)
			g.Start = min(g.Start, r.Start)
			g.Runtime = max(g.Runtime, r.Runtime)
			g.Fsyncs += r.Fsyncs
			for _, d := range []struct{ dst, src *Dir }{{&g.Read, &r.Read}, {&g.Write, &r.Write}, {&g.Sync, &r.Sync}} {
				d.dst.IOBytes += d.src.IOBytes
				d.dst.TotalIOs += d.src.TotalIOs
				d.dst.Clat.Merge(d.src.Clat)
			}
			if g.Err == nil {
				g.Err = r.Err
			}
			continue
		}
		c := *r
		c.Jobs = max(c.Jobs, 1)
		if r.Job.GroupReporting {
			// A copy whose histograms later results merge into.
			for _, d := range []*Dir{&c.Read, &c.Write, &c.Sync} {
				d.Clat = hdrhistogram.Import(d.Clat.Export())
			}
		}
		out = append(out, &c)
	}
	return out
}

// ToJSON converts results to fio's JSON shape, one entry per job clone or,
// with group_reporting, per group (Grouped).
func ToJSON(res []*JobResult) JSON {
	out := JSON{Version: "iosim-fio", Jobs: []JSONJob{}}
	for _, r := range Grouped(res) {
		j := JSONJob{JobName: r.Job.Name, JobRuntime: r.Runtime / 1e6}
		if r.Err != nil {
			j.Error = 5 // EIO, as fio reports the errno of the failed I/O
			if e, ok := errnoOf(r.Err); ok {
				j.Error = e
			}
		}
		j.Read = dirJSON(r.Read, r.Runtime)
		j.Write = dirJSON(r.Write, r.Runtime)
		j.Sync = JSONSync{TotalIOs: r.Fsyncs, LatNs: lat(r.Sync, true)}
		out.Jobs = append(out.Jobs, j)
	}
	return out
}

// WriteJSON writes results as fio's --output-format=json does (indented).
func WriteJSON(w io.Writer, res []*JobResult) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(ToJSON(res))
}

// WriteText writes results in the shape of fio's normal output: per job its
// IOPS, bandwidth, completion latencies and their percentiles.
func WriteText(w io.Writer, res []*JobResult) {
	for _, r := range Grouped(res) {
		errno := 0
		if r.Err != nil {
			errno, _ = errnoOf(r.Err)
		}
		if r.Jobs > 1 {
			fmt.Fprintf(w, "%s: (groupid=0, jobs=%d): err=%2d: runtime %s\n", r.Job.Name, r.Jobs, errno, FormatNs(float64(r.Runtime)))
		} else {
			fmt.Fprintf(w, "%s: (groupid=0, jobs=1): err=%2d: job %d, runtime %s\n", r.Job.Name, errno, r.JobNum, FormatNs(float64(r.Runtime)))
		}
		if r.Err != nil {
			fmt.Fprintf(w, "  error: %v\n", r.Err)
		}
		for _, d := range []struct {
			name string
			dir  Dir
		}{{"read", r.Read}, {"write", r.Write}} {
			if d.dir.TotalIOs == 0 {
				continue
			}
			j := dirJSON(d.dir, r.Runtime)
			fmt.Fprintf(w, "  %s: IOPS=%s, BW=%s/s (%s/%s)\n", d.name, siCount(j.IOPS), iec(float64(j.BWBytes)), iec(float64(j.IOBytes)), FormatNs(float64(r.Runtime)))
			writeLat(w, "clat", j.ClatNs)
		}
		if r.Sync.TotalIOs > 0 {
			fmt.Fprintf(w, "  sync: %d calls\n", r.Sync.TotalIOs)
			writeLat(w, "lat", lat(r.Sync, true))
		}
	}
}

func writeLat(w io.Writer, what string, l JSONLat) {
	fmt.Fprintf(w, "    %s (nsec): min=%d, max=%d, avg=%.2f, stdev=%.2f\n", what, l.Min, l.Max, l.Mean, l.Stddev)
	fmt.Fprintf(w, "     %s percentiles (nsec):\n", what)
	for i, p := range Percentiles {
		if i%4 == 0 {
			fmt.Fprint(w, "      |")
		}
		fmt.Fprintf(w, " %6.2fth=[%d]", p, l.Percentile[PercentileKey(p)])
		if i%4 == 3 || i == len(Percentiles)-1 {
			fmt.Fprintln(w)
		} else {
			fmt.Fprint(w, ",")
		}
	}
}

func siCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

func iec(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	return fmt.Sprintf("%.1f%s", v, units[i])
}

// FormatNs prints a virtual duration with a unit: 950ns, 12.3us, 4.56ms, 1.23s.
func FormatNs(ns float64) string {
	switch a := math.Abs(ns); {
	case a < 1e3:
		return fmt.Sprintf("%.0fns", ns)
	case a < 1e6:
		return fmt.Sprintf("%.3g", ns/1e3) + "us"
	case a < 1e9:
		return fmt.Sprintf("%.3g", ns/1e6) + "ms"
	case a < 1e12:
		return fmt.Sprintf("%.3g", ns/1e9) + "s"
	}
	return fmt.Sprintf("%.0fs", ns/1e9)
}

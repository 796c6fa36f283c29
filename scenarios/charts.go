package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/fio"
)

// Charts collects a scenario file's runs and comparisons and draws them with
// gonum/plot: per compare, a bar chart of the two arms with the ratio written
// on it, a stacked bar per arm of where the time went (the time model's
// breakdown on a device, else by syscall) and the two arms' latency CDFs;
// per crash, the states and findings per crash point (CrashChart);
// per file, the latency CDF of every arm run.
type Charts struct {
	file    string
	runs    []*Result
	cmps    []*comparison
	crashes []crashRun
}

func (c *Charts) addRun(r *Result)            { c.runs = append(c.runs, r) }
func (c *Charts) addComparison(x *comparison) { c.cmps = append(c.cmps, x) }
func (c *Charts) addCrash(x crashRun)         { c.crashes = append(c.crashes, x) }

// Write draws the charts into dir (the file name's extension, .svg or .png,
// comes from ext; "" means .svg) and returns the files written.
func (c *Charts) Write(dir string) ([]string, error) { return c.WriteExt(dir, ".svg") }

// WriteExt is Write with the image format chosen by extension.
func (c *Charts) WriteExt(dir, ext string) ([]string, error) {
	base := strings.TrimSuffix(filepath.Base(c.file), Ext)
	var out []string
	save := func(p *plot.Plot, w vg.Length, name string) error {
		f := filepath.Join(dir, name+ext)
		if err := p.Save(w, 8*vg.Centimeter, f); err != nil {
			return err
		}
		out = append(out, f)
		return nil
	}
	for i, cmp := range c.cmps {
		p, err := barChart(cmp)
		if err != nil {
			return nil, err
		}
		if err := save(p, 12*vg.Centimeter, fmt.Sprintf("%s-compare%d", base, i+1)); err != nil {
			return nil, err
		}
		if p, ok := stackedChart(cmp); ok {
			if err := save(p, 16*vg.Centimeter, fmt.Sprintf("%s-compare%d-time", base, i+1)); err != nil {
				return nil, err
			}
		}
		if hasLat(cmp.a) && hasLat(cmp.b) {
			if err := save(cdfChart([]*Result{cmp.a, cmp.b}), 16*vg.Centimeter, fmt.Sprintf("%s-compare%d-latency", base, i+1)); err != nil {
				return nil, err
			}
		}
	}
	for i, cr := range c.crashes {
		p, err := CrashChart("crash "+cr.arm, cr.rep)
		if err != nil {
			return nil, err
		}
		if err := save(p, 16*vg.Centimeter, fmt.Sprintf("%s-crash%d", base, i+1)); err != nil {
			return nil, err
		}
	}
	var withLat []*Result
	for _, r := range c.runs {
		if hasLat(r) {
			withLat = append(withLat, r)
		}
	}
	if len(withLat) > 0 {
		if err := save(cdfChart(withLat), 16*vg.Centimeter, base+"-latency"); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// WriteComparison draws two runs compared by virtual time into one image at
// path (its extension says the format: .svg, .png, .pdf...): the bar chart
// with the ratio b/a, and beside it the stacked bar of where each run's time
// went. It is what iosim replay --svg draws for --compare and --vs-device.
func WriteComparison(path string, a, b *Result) error {
	c := &comparison{a: a, b: b, metric: "time", ratio: ratio(metric(b, "time"), metric(a, "time"))}
	bar, err := barChart(c)
	if err != nil {
		return err
	}
	bar.Title.Text = fmt.Sprintf("%s / %s = %s (time)", b.Arm, a.Arm, ratioString(metric(b, "time"), metric(a, "time")))
	row := []*plot.Plot{bar}
	width := 12 * vg.Centimeter
	if st, ok := stackedChart(c); ok {
		row = append(row, st)
		width += 16 * vg.Centimeter
	}
	ext := strings.TrimPrefix(filepath.Ext(path), ".")
	img, err := draw.NewFormattedCanvas(width, 8*vg.Centimeter, ext)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: len(row), PadX: vg.Centimeter}
	for i, cv := range plot.Align([][]*plot.Plot{row}, tiles, dc)[0] {
		row[i].Draw(cv)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := img.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// CrashChart draws a crash exploration along its trace: per crash point
// (after the call at the line on the axis), the states the models allow
// there and how many of them failed a check, as lines, and the
// findings first found there, as bars with their count.
func CrashChart(title string, r *crash.Report) (*plot.Plot, error) {
	if len(r.Points) == 0 {
		return nil, fmt.Errorf("%s: no crash point to draw", title)
	}
	p := plot.New()
	p.Title.Text = title + ": states and findings per crash point"
	p.X.Label.Text = "crash point: after the call at line"
	p.Y.Label.Text = "count"
	var states, failed plotter.XYs
	vulns := make(plotter.Values, len(r.Points))
	var labels plotter.XYLabels
	var top float64
	for k, pt := range r.Points {
		x := float64(k)
		states = append(states, plotter.XY{X: x, Y: float64(pt.States)})
		failed = append(failed, plotter.XY{X: x, Y: float64(pt.Failed)})
		vulns[k] = float64(pt.Findings)
		if pt.Findings > 0 {
			labels.XYs = append(labels.XYs, plotter.XY{X: x, Y: vulns[k]})
			labels.Labels = append(labels.Labels, fmt.Sprint(pt.Findings))
		}
		top = max(top, float64(pt.States), vulns[k])
	}
	bars, err := plotter.NewBarChart(vulns, vg.Points(10))
	if err != nil {
		return nil, err
	}
	bars.Color = plotutil.Color(2)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.Legend.Add("findings first found", bars)
	for i, series := range []struct {
		name string
		xys  plotter.XYs
	}{{"states", states}, {"failing states", failed}} {
		l, pts, err := plotter.NewLinePoints(series.xys)
		if err != nil {
			return nil, err
		}
		l.Color, pts.Color = plotutil.Color(i), plotutil.Color(i)
		l.Dashes = plotutil.Dashes(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(series.name, l, pts)
	}
	if len(labels.XYs) > 0 {
		if err := addBarLabels(p, labels); err != nil {
			return nil, err
		}
	}
	p.X.Tick.Marker = pointTicks(r.Points)
	p.X.Min, p.X.Max = -0.5, float64(len(r.Points))-0.5
	p.Y.Min, p.Y.Max = 0, top*1.15+1
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	p.Add(plotter.NewGrid())
	return p, nil
}

// pointTicks marks crash points with the line of the call before them, at
// most about 16 of them.
type pointTicks []crash.PointStats

// Ticks returns the ticks between min and max.
func (pt pointTicks) Ticks(min, max float64) []plot.Tick {
	step := (len(pt) + 15) / 16
	var out []plot.Tick
	for k := 0; k < len(pt); k += step {
		if x := float64(k); x >= min && x <= max {
			out = append(out, plot.Tick{Value: x, Label: fmt.Sprint(pt[k].Point.Line)})
		}
	}
	return out
}

// WriteCrashChart draws CrashChart into an image at path (its extension says
// the format: .svg, .png, .pdf...). It is what iosim crash --svg draws.
func WriteCrashChart(path, title string, r *crash.Report) error {
	p, err := CrashChart(title, r)
	if err != nil {
		return err
	}
	return p.Save(16*vg.Centimeter, 8*vg.Centimeter, path)
}

func hasLat(r *Result) bool { return r.Lat != nil && r.Lat.TotalCount() > 0 }

// timeUnit picks the unit that shows ns values up to max readably.
func timeUnit(max float64) (string, float64) {
	switch {
	case max >= 1e9:
		return "s", 1e9
	case max >= 1e6:
		return "ms", 1e6
	case max >= 1e3:
		return "us", 1e3
	}
	return "ns", 1
}

// axis returns the label of a metric's axis and the divisor of its values.
func axis(c *comparison) (string, float64) {
	if c.metric != "time" {
		return c.metric, 1
	}
	u, div := timeUnit(max(metric(c.a, "time"), metric(c.b, "time")))
	return "virtual time (" + u + ")", div
}

// barChart draws the two arms of a comparison with the ratio written above.
func barChart(c *comparison) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s / %s = %s (%s)", c.a.Arm, c.b.Arm, ratioString(metric(c.a, c.metric), metric(c.b, c.metric)), c.metric)
	label, div := axis(c)
	p.Y.Label.Text = label
	vals := plotter.Values{metric(c.a, c.metric) / div, metric(c.b, c.metric) / div}
	bars, err := plotter.NewBarChart(vals, vg.Centimeter*2)
	if err != nil {
		return nil, err
	}
	bars.Color = plotutil.Color(0)
	p.Add(bars)
	p.NominalX(c.a.Arm, c.b.Arm)
	if err := addBarLabels(p, plotter.XYLabels{
		XYs:    []plotter.XY{{X: 0, Y: vals[0]}, {X: 1, Y: vals[1]}},
		Labels: []string{fmt.Sprintf("%.4g", vals[0]), fmt.Sprintf("%.4g", vals[1])},
	}); err != nil {
		return nil, err
	}
	p.Y.Min = 0
	p.Y.Max = max(vals[0], vals[1]) * 1.15
	return p, nil
}

// addBarLabels writes each label centred just above its bar's top (X, Y).
func addBarLabels(p *plot.Plot, xyl plotter.XYLabels) error {
	lb, err := plotter.NewLabels(xyl)
	if err != nil {
		return err
	}
	for i := range lb.TextStyle {
		lb.TextStyle[i].XAlign = -0.5
	}
	lb.Offset = vg.Point{Y: vg.Points(3)}
	p.Add(lb)
	return nil
}

// stackedChart draws, for each arm of a comparison, its virtual time split
// by where it went: the time model's breakdown when both arms ran on a
// device (each category's share of all threads' time, scaled to the arm's
// virtual time, so that concurrent threads do not make a bar taller than
// the run), else by syscall (false when an arm has neither: a replayed
// trace on the default device).
func stackedChart(c *comparison) (*plot.Plot, bool) {
	rs := []*Result{c.a, c.b}
	type part struct {
		name  string
		color int        // a category keeps its color from chart to chart
		vals  [2]float64 // ns per arm
	}
	var parts []part
	title := "where the virtual time went, by syscall"
	if c.a.Breakdown != nil && c.b.Breakdown != nil {
		title = "where the virtual time went (share of all threads' time)"
		var rows [2][]timeRow
		for j, r := range rs {
			rows[j] = timeRows(r.Breakdown)
		}
		for i := range rows[0] {
			pt := part{color: i}
			pt.name = rows[0][i].what
			if k := strings.IndexByte(pt.name, '('); k > 0 {
				pt.name = strings.TrimSpace(pt.name[:k])
			}
			for j, r := range rs {
				if tot := r.Breakdown.Total(); tot > 0 {
					pt.vals[j] = float64(rows[j][i].ns) / float64(tot) * float64(r.TimeNs)
				}
			}
			if pt.vals[0] > 0 || pt.vals[1] > 0 {
				parts = append(parts, pt)
			}
		}
	} else {
		seen := map[string]int{}
		for j, r := range rs {
			for _, row := range r.Syscalls {
				if row.TimeNs < 0 {
					return nil, false
				}
				if row.TimeNs == 0 {
					continue
				}
				i, ok := seen[row.Name]
				if !ok {
					i = len(parts)
					seen[row.Name] = i
					parts = append(parts, part{name: row.Name, color: i})
				}
				parts[i].vals[j] = float64(row.TimeNs)
			}
		}
	}
	if len(parts) == 0 {
		return nil, false
	}
	var top float64
	for j := range rs {
		var sum float64
		for _, pt := range parts {
			sum += pt.vals[j]
		}
		top = max(top, sum)
	}
	unit, div := timeUnit(top)
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "virtual time (" + unit + ")"
	var below *plotter.BarChart
	for _, pt := range parts {
		b, err := plotter.NewBarChart(plotter.Values{pt.vals[0] / div, pt.vals[1] / div}, vg.Centimeter*2)
		if err != nil {
			return nil, false
		}
		b.Color = plotutil.Color(pt.color)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(pt.name, b)
	}
	// The legend sits to the right of the two bars.
	p.Legend.Top = true
	p.Legend.Left = false
	p.NominalX(c.a.Arm, c.b.Arm)
	p.X.Max += 2.2 // room for the legend
	p.Y.Min = 0
	p.Y.Max = top / div * 1.05
	return p, true
}

// cdfChart draws each arm's latency CDF (per call, or per I/O for fio), on
// a logarithmic time axis (latencies run from a cached read's nanoseconds to
// a disk's milliseconds).
func cdfChart(rs []*Result) *plot.Plot {
	p := plot.New()
	p.Title.Text = "latency CDF per arm"
	p.X.Label.Text = "latency (virtual time)"
	p.Y.Label.Text = "fraction of calls"
	p.Y.Min, p.Y.Max = 0, 1
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = durationTicks{}
	for i, r := range rs {
		var xys plotter.XYs
		total := float64(r.Lat.TotalCount())
		var cum float64
		for _, b := range r.Lat.Distribution() {
			if b.Count == 0 {
				continue
			}
			// A step: flat up to the bucket's value, then up by its count.
			x := float64(max(b.To, 1))
			xys = append(xys, plotter.XY{X: x, Y: cum / total})
			cum += float64(b.Count)
			xys = append(xys, plotter.XY{X: x, Y: cum / total})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			continue
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		l.Dashes = plotutil.Dashes(i)
		p.Add(l)
		p.Legend.Add(r.Arm, l)
	}
	p.Legend.Top = false
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(4)
	p.Legend.YOffs = vg.Points(14)
	p.Add(plotter.NewGrid())
	return p
}

// durationTicks marks a logarithmic nanosecond axis at the powers of ten
// (1ns, 10ns, ... 1s), and at their doubles and fives too when fewer than
// two powers fall in the range.
type durationTicks struct{}

// Ticks returns the ticks between min and max.
func (durationTicks) Ticks(min, max float64) []plot.Tick {
	var pow, all []plot.Tick
	for v := 1.0; v <= max; v *= 10 {
		for _, m := range []float64{1, 2, 5} {
			x := v * m
			if x < min || x > max {
				continue
			}
			t := plot.Tick{Value: x, Label: fio.FormatNs(x)}
			all = append(all, t)
			if m == 1 {
				pow = append(pow, t)
			}
		}
	}
	if len(pow) >= 2 {
		return pow
	}
	return all
}

package scenarios

import (
	"fmt"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Charts collects a scenario file's runs and comparisons and draws them with
// gonum/plot: per compare, a bar chart of the two arms with the ratio written
// on it and, when the arms say where their time went, a stacked bar per arm
// by syscall; per file, the latency CDF of every arm run.
type Charts struct {
	file string
	runs []*Result
	cmps []*comparison
}

func (c *Charts) addRun(r *Result)            { c.runs = append(c.runs, r) }
func (c *Charts) addComparison(x *comparison) { c.cmps = append(c.cmps, x) }

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
	}
	var withLat []*Result
	for _, r := range c.runs {
		if r.Lat != nil && r.Lat.TotalCount() > 0 {
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

func unitOf(m string) string {
	if m == "time" {
		return "virtual time (us)"
	}
	return m
}

func scaled(r *Result, m string) float64 {
	v := metric(r, m)
	if m == "time" {
		return v / 1e3
	}
	return v
}

// barChart draws the two arms of a comparison with the ratio written above.
func barChart(c *comparison) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s / %s = %s (%s)", c.a.Arm, c.b.Arm, ratioString(metric(c.a, c.metric), metric(c.b, c.metric)), c.metric)
	p.Y.Label.Text = unitOf(c.metric)
	vals := plotter.Values{scaled(c.a, c.metric), scaled(c.b, c.metric)}
	bars, err := plotter.NewBarChart(vals, vg.Centimeter*2)
	if err != nil {
		return nil, err
	}
	bars.Color = plotutil.Color(0)
	p.Add(bars)
	p.NominalX(c.a.Arm, c.b.Arm)
	labels, err := plotter.NewLabels(plotter.XYLabels{
		XYs:    []plotter.XY{{X: 0, Y: vals[0]}, {X: 1, Y: vals[1]}},
		Labels: []string{fmt.Sprintf("%.4g", vals[0]), fmt.Sprintf("%.4g", vals[1])},
	})
	if err != nil {
		return nil, err
	}
	for i := range labels.TextStyle {
		labels.TextStyle[i].XAlign = -0.5
	}
	labels.Offset = vg.Point{Y: vg.Points(3)}
	p.Add(labels)
	p.Y.Min = 0
	p.Y.Max = max(vals[0], vals[1]) * 1.15
	return p, nil
}

// stackedChart draws, for each arm of a comparison, its virtual time split by
// syscall (false when an arm has no such breakdown: a replayed trace).
func stackedChart(c *comparison) (*plot.Plot, bool) {
	rs := []*Result{c.a, c.b}
	var names []string
	seen := map[string]bool{}
	for _, r := range rs {
		for _, row := range r.Syscalls {
			if row.TimeNs < 0 {
				return nil, false
			}
			if row.TimeNs > 0 && !seen[row.Name] {
				seen[row.Name] = true
				names = append(names, row.Name)
			}
		}
	}
	if len(names) == 0 {
		return nil, false
	}
	p := plot.New()
	p.Title.Text = "where the virtual time went"
	p.Y.Label.Text = "virtual time (us)"
	var below *plotter.BarChart
	for i, n := range names {
		vals := make(plotter.Values, len(rs))
		for j, r := range rs {
			for _, row := range r.Syscalls {
				if row.Name == n {
					vals[j] = float64(row.TimeNs) / 1e3
				}
			}
		}
		b, err := plotter.NewBarChart(vals, vg.Centimeter*2)
		if err != nil {
			return nil, false
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		if below != nil {
			b.StackOn(below)
		}
		below = b
		p.Add(b)
		p.Legend.Add(n, b)
	}
	// The legend sits between the two bars.
	p.Legend.Top = true
	p.Legend.Left = false
	p.Legend.XOffs = -5 * vg.Centimeter
	p.NominalX(c.a.Arm, c.b.Arm)
	p.Y.Min = 0
	return p, true
}

// cdfChart draws each arm's latency CDF (per call, or per I/O for fio).
func cdfChart(rs []*Result) *plot.Plot {
	p := plot.New()
	p.Title.Text = "latency CDF per arm"
	p.X.Label.Text = "latency (virtual ns)"
	p.Y.Label.Text = "fraction of calls"
	p.Y.Min, p.Y.Max = 0, 1
	for i, r := range rs {
		var xys plotter.XYs
		total := float64(r.Lat.TotalCount())
		var cum float64
		for _, b := range r.Lat.Distribution() {
			if b.Count == 0 {
				continue
			}
			cum += float64(b.Count)
			xys = append(xys, plotter.XY{X: float64(b.To), Y: cum / total})
		}
		if len(xys) == 1 {
			xys = append(plotter.XYs{{X: xys[0].X, Y: 0}}, xys...)
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
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	return p
}

package fio

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// ReadJSON reads fio's --output-format=json (the real fio's or iosim's):
// the fields of JSON, others ignored.
func ReadJSON(r io.Reader) (JSON, error) {
	var out JSON
	err := json.NewDecoder(r).Decode(&out)
	return out, err
}

// WriteComparison prints, per job and direction that moved data, the model's
// IOPS, bandwidth and completion-latency percentiles beside a measured run's
// (fio's JSON, jobs matched by name and order), with the ratio model/measured.
func WriteComparison(w io.Writer, model, measured JSON) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "job\tdir\tmetric\tmodel\tmeasured\tmodel/measured\t")
	matched := 0
	for i, mj := range model.Jobs {
		var rj *JSONJob
		for k := range measured.Jobs {
			if measured.Jobs[k].JobName == mj.JobName && (k == i || rj == nil) {
				rj = &measured.Jobs[k]
			}
		}
		if rj == nil {
			continue
		}
		matched++
		for _, d := range []struct {
			name string
			m, r JSONDir
		}{{"read", mj.Read, rj.Read}, {"write", mj.Write, rj.Write}} {
			if d.m.TotalIOs == 0 && d.r.TotalIOs == 0 {
				continue
			}
			row := func(metric string, m, r float64) {
				ratio := "-"
				if r != 0 {
					ratio = fmt.Sprintf("%.3g", m/r)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%.6g\t%.6g\t%s\t\n", mj.JobName, d.name, metric, m, r, ratio)
			}
			row("iops", d.m.IOPS, d.r.IOPS)
			row("bw KiB/s", float64(d.m.BW), float64(d.r.BW))
			for _, p := range []float64{50, 99} {
				k := PercentileKey(p)
				row(fmt.Sprintf("clat p%g ns", p), float64(d.m.ClatNs.Percentile[k]), float64(d.r.ClatNs.Percentile[k]))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if matched == 0 {
		return fmt.Errorf("no job of the model's (%d) is in the measured run (%d jobs)", len(model.Jobs), len(measured.Jobs))
	}
	return nil
}

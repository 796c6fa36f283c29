package scenarios

// Charts collects a scenario file's runs and comparisons and draws them.
type Charts struct {
	file string
	runs []*Result
	cmps []*comparison
}

func (c *Charts) addRun(r *Result)            { c.runs = append(c.runs, r) }
func (c *Charts) addComparison(x *comparison) { c.cmps = append(c.cmps, x) }

// Write draws the charts into dir and returns the files written.
func (c *Charts) Write(dir string) ([]string, error) { return nil, nil }

package interposer_test

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// recorder is a rapid.TB that records instead of failing: rapid.Check with it
// returns normally, and the log holds rapid's report and the output of the property
// re-run on the shrunk counterexample.
type recorder struct {
	name   string
	logs   []string
	failed bool
}

type stopRecorder struct{}

func (r *recorder) Helper()                       {}
func (r *recorder) Name() string                  { return r.name }
func (r *recorder) Logf(format string, a ...any)  { r.logs = append(r.logs, fmt.Sprintf(format, a...)) }
func (r *recorder) Log(a ...any)                  { r.logs = append(r.logs, fmt.Sprint(a...)) }
func (r *recorder) Skipf(format string, a ...any) { panic("skip in a recorded check") }
func (r *recorder) Skip(a ...any)                 { panic("skip in a recorded check") }
func (r *recorder) SkipNow()                      { panic("skip in a recorded check") }
func (r *recorder) Errorf(format string, a ...any) {
	r.failed = true
	r.Logf(format, a...)
}
func (r *recorder) Error(a ...any) { r.failed = true; r.Log(a...) }
func (r *recorder) Fatalf(format string, a ...any) {
	r.Errorf(format, a...)
	r.FailNow()
}
func (r *recorder) Fatal(a ...any) { r.Error(a...); r.FailNow() }
func (r *recorder) FailNow()       { r.failed = true; panic(stopRecorder{}) }
func (r *recorder) Fail()          { r.failed = true }
func (r *recorder) Failed() bool   { return r.failed }

// counterexample is a shrunk failing program found by findCounterexample.
type counterexample struct {
	Program    string // the ops up to the first divergence
	Divergence string // that op and what each side returned
}

// findCounterexample runs prop under rapid with a fixed seed (so the suite is
// deterministic) for up to checks programs and returns the shrunk counterexample
// it found, if any.
func findCounterexample(t *testing.T, seed uint64, checks int, prop func(*rapid.T)) (counterexample, bool) {
	t.Helper()
	for name, v := range map[string]string{"rapid.nofailfile": "true", "rapid.seed": fmt.Sprint(seed), "rapid.checks": fmt.Sprint(checks)} {
		old := flag.Lookup(name).Value.String()
		if err := flag.Set(name, v); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { flag.Set(name, old) })
	}
	rec := &recorder{name: t.Name()}
	func() {
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopRecorder); !ok {
					panic(r)
				}
			}
		}()
		rapid.Check(rec, prop)
	}()
	if !rec.failed {
		return counterexample{Program: strings.Join(rec.logs, "\n")}, false
	}
	var ce counterexample
	for _, l := range rec.logs {
		if s, ok := strings.CutPrefix(l, "counterexample: "); ok {
			ce.Program = s
		}
		if s, ok := strings.CutPrefix(l, "divergence: "); ok {
			ce.Divergence = s
		}
	}
	if ce.Program == "" {
		t.Fatalf("rapid failed without a counterexample:\n%s", strings.Join(rec.logs, "\n"))
	}
	return ce, true
}

package scenarios

import (
	"fmt"
	"strings"

	"github.com/cockroachdb/datadriven"
)

// Answer is what one command of a scenario file found, in a line: a
// comparison's ratio, a crash exploration's vulnerabilities (Detail: one
// line each), an equivalence check's differing calls, or an expect's
// measured value beside its claim (Claim).
type Answer struct {
	Pos    string // FILE:LINE of the command
	Text   string
	Detail []string
	Claim  bool
}

// note records the answer of a command that ran (out is its output).
func (s *Scenario) note(td *datadriven.TestData, out string) {
	add := func(text string, detail []string, claim bool) {
		s.answers = append(s.answers, Answer{Pos: td.Pos, Text: text, Detail: detail, Claim: claim})
	}
	switch td.Cmd {
	case "compare":
		if c := s.lastCmp; c != nil {
			add(c.line(), nil, false)
		}
	case "equiv":
		if e := s.lastEquiv; e != nil {
			add(fmt.Sprintf("equiv %s: %d of %d calls differ with the stack", e.arm, e.differ, e.calls), nil, false)
		}
	case "crash":
		if c := s.lastCrash; c != nil {
			var detail []string
			for _, f := range c.rep.Findings {
				var calls []string
				for _, cc := range f.Calls {
					c := cc.Role + " " + cc.Call
					if cc.Path != "" {
						c += " " + cc.Path
					}
					calls = append(calls, c)
				}
				detail = append(detail, fmt.Sprintf("%s (%s) under %s: %d states", f.Property, strings.Join(calls, "; "), strings.Join(f.Models, ", "), f.States))
				if f.Fix != "" {
					detail = append(detail, "  fix: "+f.Fix)
				}
			}
			n := len(c.rep.Findings)
			what := "findings"
			if n == 1 {
				what = "finding"
			}
			add(fmt.Sprintf("crash %s: %d %s (%d of %d distinct states failed)", c.arm, n, what, c.rep.Failed, c.rep.DistinctStates), detail, false)
		}
	case "expect":
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			add(strings.TrimPrefix(l, "ok: "), nil, true)
		}
	}
}

// Answers returns what the commands run so far found, in file order.
func (s *Scenario) Answers() []Answer { return s.answers }

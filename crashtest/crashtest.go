// Package crashtest explores the crash states of a Go workload inside a test:
// the workload runs on iosim's model (through the sim facade, whose methods
// have golang.org/x/sys/unix's names, or through afero), a crash point follows
// every call that changes what could become durable, and every distinct state
// the persistence model allows is checked in a subtest of its own.
//
// A subtest's name is the state's ID (crash.StateID, as the findings name
// their example states) and its name: the crash point (call number and the
// workload's source line) and the calls whose changes it lost (l), tore (t),
// wrote in part (p) or split (s), so `go test -run 'TestX/^4.2-'` or
// `go test -run 'TestX/p004-line57-l52m'` checks that state again. When
// states fail, the test also prints the findings they show, one per cause,
// with the workload's lines of the calls involved and example state IDs.
package crashtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/iosim/iosim/crash"
)

// Option configures Explore.
type Option func(*config)

type config struct {
	setup crash.Setup
	opts  crash.Options
}

// WithSetup prepares the file system before the workload (the result is
// durable).
func WithSetup(s crash.Setup) Option { return func(c *config) { c.setup = s } }

// WithDepth sets how many calls a state may lose, tear or reorder (default 1).
func WithDepth(k int) Option { return func(c *config) { c.opts.Depth = k } }

// WithSample adds n random states per crash point, drawn from seed.
func WithSample(n int, seed uint64) Option {
	return func(c *config) { c.opts.Sample, c.opts.Seed = n, seed }
}

// WithBuiltinChecks also runs the built-in checks (durability, atomic-replace,
// fsck) on every state.
func WithBuiltinChecks() Option {
	return func(c *config) {
		c.opts.Checkers = append(c.opts.Checkers, crash.Durability{}, crash.AtomicReplace{}, crash.Fsck{})
	}
}

// Explore runs workload with every crash point explored under model (a name
// crash.ParseModels takes: "posix", "ext4-ordered", "ext4-writeback", "alice",
// a comma-separated list, "default" (the real file systems and posix) or
// "all" (alice too)), and calls check on each distinct crash
// state in a subtest named after it. It returns the report.
func Explore(t *testing.T, model string, workload func(env *crash.Env) error, check func(t testing.TB, s *crash.State), opts ...Option) *crash.Report {
	t.Helper()
	ms, err := crash.ParseModels(model)
	if err != nil {
		t.Fatal(err)
	}
	c := &config{}
	for _, o := range opts {
		o(c)
	}
	c.opts.Models = ms
	c.opts.Checkers = append(c.opts.Checkers, crash.CheckFunc{ID: "test", F: func(s *crash.State) []crash.Finding {
		var msg string
		ok := t.Run(s.ID+"-"+s.Name, func(t *testing.T) {
			r := &recorder{TB: t}
			defer func() { msg = r.msg.String() }() // FailNow ends the goroutine
			check(r, s)
		})
		if ok {
			return nil
		}
		if msg == "" {
			msg = "check failed"
		}
		return []crash.Finding{{Kind: "test", Message: strings.TrimSpace(msg)}}
	}})
	rep, err := crash.ExploreFunc(c.opts, c.setup, workload)
	if err != nil {
		t.Fatalf("workload: %v", err)
	}
	if len(rep.Findings) > 0 {
		var b strings.Builder
		rep.WriteText(&b)
		t.Errorf("crash states fail:\n%s", b.String())
	}
	return rep
}

// recorder is the *testing.T given to check: what it reports also goes into
// the finding's messages.
type recorder struct {
	testing.TB
	msg strings.Builder
}

func (r *recorder) Errorf(format string, args ...any) {
	fmt.Fprintf(&r.msg, format+"\n", args...)
	r.TB.Helper()
	r.TB.Errorf(format, args...)
}

func (r *recorder) Fatalf(format string, args ...any) {
	fmt.Fprintf(&r.msg, format+"\n", args...)
	r.TB.Helper()
	r.TB.Fatalf(format, args...)
}

func (r *recorder) Error(args ...any) {
	fmt.Fprintln(&r.msg, args...)
	r.TB.Helper()
	r.TB.Error(args...)
}

func (r *recorder) Fatal(args ...any) {
	fmt.Fprintln(&r.msg, args...)
	r.TB.Helper()
	r.TB.Fatal(args...)
}

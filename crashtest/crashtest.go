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

// Explore runs workload with every crash point explored under model, and
// calls check on each distinct crash state in a subtest named after it. It
// returns the report; the test fails if a state fails, printing the
// findings, or if the workload returns an error. model is a name
// crash.ParseModels takes, a comma-separated list of them, "default" (the real file systems and posix; what an empty model gives) or
// "all" (alice too):
//
//   - "posix": only what a sync made durable is guaranteed; anything in flight
//     may survive or not, in any order, data torn at 512-byte sectors
//   - "ext4-ordered": ext4's default (data=ordered, delalloc, auto_da_alloc,
//     commit=5)
//   - "ext4-writeback": ext4 with data=writeback: metadata journalled in
//     order, data not ordered with it
//   - "ext4-journal": ext4 with data=journal: data and metadata journalled
//     together, in order
//   - "alice" (hypothetical, opt-in): ALICE's default abstract persistence model: any order between
//     syncs, appends over garbage, non-atomic rename
//   - "xfs": XFS's defaults: metadata logged in order (delayed logging),
//     delayed allocation, size updated at I/O completion
//   - "btrfs": btrfs's defaults: copy on write, transactions, fsync through
//     the per-file log tree, directory operations not ordered
//
// The -model flag of `iosim crash` takes the same names (crash.ModelNames);
// each model's rules, with their sources, are in package crash.
func Explore(t *testing.T, model string, workload func(env *crash.Env) error, check func(t testing.TB, s *crash.State), opts ...Option) *crash.Report {
	t.Helper()
	rep, err := explore(model, workload, crash.CheckFunc{ID: "test", F: func(s *crash.State) []crash.Finding {
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
	}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Findings) > 0 {
		var b strings.Builder
		rep.WriteText(&b)
		t.Errorf("crash states fail:\n%s", b.String())
	}
	return rep
}

// Run is Explore outside a test (a program, an example): check returns nil
// for a state that is fine, or an error saying what is wrong with it, which
// becomes the state's finding (kind "check"). The report groups the failing
// states into vulnerabilities. Run returns an error if model names no model,
// or, with the report, the error the workload returned. check is called from
// one goroutine at a time.
func Run(model string, workload func(env *crash.Env) error, check func(s *crash.State) error, opts ...Option) (*crash.Report, error) {
	return explore(model, workload, crash.CheckFunc{ID: "check", F: func(s *crash.State) []crash.Finding {
		if err := check(s); err != nil {
			return []crash.Finding{{Kind: "check", Message: err.Error()}}
		}
		return nil
	}}, opts)
}

// explore runs workload under model with checker and the options.
func explore(model string, workload func(env *crash.Env) error, checker crash.Checker, opts []Option) (*crash.Report, error) {
	ms, err := crash.ParseModels(model)
	if err != nil {
		return nil, err
	}
	c := &config{}
	for _, o := range opts {
		o(c)
	}
	c.opts.Models = ms
	c.opts.Checkers = append(c.opts.Checkers, checker)
	rep, err := crash.ExploreFunc(c.opts, c.setup, workload)
	if err != nil {
		return rep, fmt.Errorf("workload: %w", err)
	}
	return rep, nil
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

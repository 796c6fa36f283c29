package replay

import (
	"fmt"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// Explore replays the trace files as Run does (opts: the stack, Root,
// Cwd, KeepGoing...) with a crash explorer at the top of the stack, and returns
// its report: every crash point of the trace explored under copts. What
// replay infers existed before the trace, and Root's tree, is durable from the
// start. The explorer's position is the trace line of each call. What the
// program writes to its standard output is announced to the explorer, and
// also given to opts.Stdout when set.
//
// A crash state must not hold bytes the trace does not show (a write whose
// data strace's -s cut: the model holds zeros there): Explore refuses such a
// trace with an error that wraps ErrUnknownBytes and names the first call,
// before running it; with copts.SkipUnknown it goes on, and the states that
// may hold such bytes are counted in the report's Unchecked, not checked;
// with copts.AssumeUnknown every state is checked with the model's bytes in
// their place, and the report's Assumed says so.
func Explore(files []string, opts Options, copts crash.Options) (*crash.Report, *Report, error) {
	var e *crash.Explorer
	opts.Verify = false
	opts.FS = append(opts.FS, crash.FSOptions()...)
	opts.Observe = func(fs *vfs.FS, next sim.Handler) sim.Handler {
		e = crash.NewExplorer(fs, next, copts)
		return e
	}
	opts.OnEvent = func(file string, line int) { e.SetPosition(file, line) }
	also := opts.Stdout
	opts.Stdout = func(b []byte) {
		e.Announce(b)
		if also != nil {
			also(b)
		}
	}
	opts.Settle = func(ino *vfs.Inode) {
		ino.FS().Settle(ino)
		e.Forget(ino.Ino())
	}
	opts.Unknown = func(u Unknown) error {
		if u.Stdout {
			switch {
			case copts.AssumeUnknown:
				e.Assume(u.String() + ": the stdout a checker reads holds the bytes shown only")
				return nil
			case copts.SkipUnknown:
				e.UnknownStdout(u.String())
				return nil
			}
			return fmt.Errorf("%s:%d: %s: %s: %w (a checker reads what the program printed); %s", u.File, u.Line, u.Call, u.Why, ErrUnknownBytes, u.Fix)
		}
		if copts.AssumeUnknown {
			e.Assume(u.String())
			return nil
		}
		if !copts.SkipUnknown {
			return fmt.Errorf("%s:%d: %s: %s: %w (the model has zeros or stale bytes in their place); %s", u.File, u.Line, u.Call, u.Why, ErrUnknownBytes, u.Fix)
		}
		e.Unknown(u.Ino, u.Off, u.String())
		return nil
	}
	rep, err := Run(files, opts)
	if e == nil {
		return nil, rep, err
	}
	return e.Finish(), rep, err
}

package replay

import (
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
	rep, err := Run(files, opts)
	if e == nil {
		return nil, rep, err
	}
	return e.Finish(), rep, err
}

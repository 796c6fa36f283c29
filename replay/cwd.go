package replay

import (
	"fmt"
	pathpkg "path"
	"path/filepath"
	"strings"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/strace"
)

// rootMount returns where Options.Root puts its tree in the model ("" for
// none), as seedFromHost does: MOUNT of "DIR:/MOUNT", else DIR's absolute
// path.
func rootMount(root string) string {
	if root == "" {
		return ""
	}
	if i := strings.LastIndex(root, ":"); i >= 0 && strings.HasPrefix(root[i+1:], "/") {
		return pathpkg.Clean(root[i+1:])
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(abs)
}

// relativeUse notes the first call that resolves a relative path against
// the assumed starting directory (its task's working directory at or below
// it): the replay depends on that assumption from then on.
func (r *replayer) relativeUse(t *sim.Task, nr sim.Sysno, ev *strace.Event, c *sim.Call) {
	if r.cwdAssumed == "" || r.cwdFirst != "" {
		return
	}
	in := sim.Info(nr)
	rel := func(p string, dirSlot int) bool {
		return p != "" && p[0] != '/' && (dirSlot < 0 || c.Args[dirSlot] == atFdcwd)
	}
	if !rel(c.Path, in.Slot(sim.ArgDirfd, 0)) && !rel(c.Path2, in.Slot(sim.ArgDirfd, 1)) {
		return
	}
	cwd := t.Group().Cwd()
	if cwd == nil {
		return
	}
	if p := cwd.Path(); p != r.cwdAssumed && !strings.HasPrefix(p, strings.TrimSuffix(r.cwdAssumed, "/")+"/") {
		return // a chdir to an absolute path left it
	}
	r.cwdFirst = fmt.Sprintf("%s:%d", ev.File, ev.Line)
}

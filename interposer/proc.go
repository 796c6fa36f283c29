package interposer

import "github.com/iosim/iosim/sim"

// procID names a process (thread group): the unit whose fd table, and whose
// LD_PRELOAD statics, an interposer keeps state for.
type procID = *sim.ThreadGroup

func procOf(t *sim.Task) procID { return t.Group() }

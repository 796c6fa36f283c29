package interposer

import (
	"fmt"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// changesFds reports whether some call of syscall nr, among a few argument
// patterns (an open fd, a second fd number, AT_FDCWD with an existing or a new
// path, F_DUPFD-like commands), creates an fd or replaces what an fd holds in
// the model's process. The answer comes from the model itself, so a syscall the
// model learns to implement is found without a list to update.
func changesFds(nr sim.Sysno) (bool, error) {
	patterns := []sim.Call{
		{Args: [6]int64{3}},
		{Args: [6]int64{3, 10}},
		{Args: [6]int64{3, 10, 0}},
		{Args: [6]int64{3, 0, 10}},
		{Args: [6]int64{unix.AT_FDCWD, 0, unix.O_RDONLY}, Path: "/f"},
		{Args: [6]int64{unix.AT_FDCWD, 0, unix.O_RDWR | unix.O_CREAT, 0o644}, Path: "/new"},
		{Args: [6]int64{0, unix.O_RDWR | unix.O_CREAT, 0o644}, Path: "/new"},
		{Args: [6]int64{0, unix.O_RDONLY}, Path: "/f"},
	}
	for _, pat := range patterns {
		changed, err := func() (changed bool, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("%s%v panics: %v", nr, pat.Args, r)
				}
			}()
			k := sim.New(vfs.New())
			p := k.Spawn()
			for fd := range 3 {
				if err := p.Task().InstallSpecial(fd, sim.DevNull{}, unix.O_RDWR); err != nil {
					return false, err
				}
			}
			fd, err := p.Open("/f", unix.O_RDWR|unix.O_CREAT, 0o644)
			if err != nil || fd != 3 {
				return false, fmt.Errorf("setup: open = %d, %v", fd, err)
			}
			before := map[int]*sim.File{}
			for _, fd := range p.Task().FDs() {
				before[fd] = p.Task().File(fd)
			}
			c := pat
			c.Nr, c.Task = nr, p.Task()
			if r := k.Syscall(&c); r.Errno != 0 || p.Task().Exited() {
				return false, nil
			}
			for _, fd := range p.Task().FDs() {
				if f, ok := before[fd]; !ok || f != p.Task().File(fd) {
					return true, nil
				}
			}
			return false, nil
		}()
		if changed || err != nil {
			return changed, err
		}
	}
	return false, nil
}

// TestFileCacheHandlesEveryFdCall fails when the model gains a syscall that
// creates an fd or replaces what an fd holds and FileCache does not route it
// through its fd-table handlers: such a call would leave the cache's view of
// the process's fds out of step with the kernel's.
func TestFileCacheHandlesEveryFdCall(t *testing.T) {
	handled := []sim.Sysno{sim.SYS_OPEN, sim.SYS_OPENAT, sim.SYS_CREAT}
	for nr, h := range fdHandlerOf {
		if h != nil {
			handled = append(handled, sim.Sysno(nr))
		}
	}
	var found []string
	for _, s := range sim.Syscalls() {
		if s.Support == sim.NotModelled {
			continue
		}
		changed, err := changesFds(s.Nr)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if changed {
			found = append(found, s.Name)
			if !slices.Contains(handled, s.Nr) {
				t.Errorf("%s creates or replaces fds in the model, and FileCache does not handle it (fdHandlerFor gives it no handler: mark its row)", s.Name)
			}
		}
	}
	// The probe itself must see the calls everyone knows create fds.
	for _, want := range []string{"open", "openat", "creat", "dup", "dup2", "dup3", "fcntl"} {
		if !slices.Contains(found, want) {
			t.Errorf("the probe did not see %s create an fd (found %v)", want, found)
		}
	}
	t.Logf("calls that create or replace fds: %v", found)
}

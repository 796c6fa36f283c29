package mount

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// replace serves fs from now on: a new kernel and stack, no model process
// and no open handle of the old model (their calls answer EIO). s.mu is held.
func (s *Server) replace(fs *vfs.FS) error {
	k, h, err := s.build(fs)
	if err != nil {
		return err
	}
	s.k, s.h = k, h
	s.procs = map[uint32]*sim.Process{}
	s.gen++
	return nil
}

// ClearCache loses everything not durable, as a power cut would under the
// strict model, and serves what is left: names and renames not made durable
// are lost too, not only data. Files open before answer EIO.
func (s *Server) ClearCache() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return fmt.Errorf("the mount has crashed: restart it first")
	}
	return s.replace(s.k.FS().Crash())
}

// Checkpoint makes everything durable, as sync(2).
func (s *Server) Checkpoint() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return fmt.Errorf("the mount has crashed: restart it first")
	}
	return s.k.FS().Sync()
}

// Report lists what is not durable, per file: one line per file with its
// pending changes, in path order.
func (s *Server) Report() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return "crashed: every call answers EIO until restart\n"
	}
	byPath := map[string][]string{}
	for _, p := range s.k.FS().Pending() {
		byPath[p.Path] = append(byPath[p.Path], p.String())
	}
	paths := make([]string, 0, len(byPath))
	for p := range byPath {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	if len(paths) == 0 {
		b.WriteString("everything is durable\n")
	}
	for _, p := range paths {
		fmt.Fprintf(&b, "%s: %s\n", p, strings.Join(byPath[p], ", "))
	}
	return b.String()
}

// Crash cuts the power: every call answers EIO from now on, and the state
// Restart serves is the one the cut leaves: only the durable state (the worst
// a power cut may leave) when seed is nil, else a state drawn under the
// mount's model with seed.
func (s *Server) Crash(seed *uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dead {
		return fmt.Errorf("the mount has crashed already")
	}
	if seed == nil {
		s.crashed = s.k.FS().Crash()
	} else {
		s.crashed = s.k.FS().RandomCrash(s.model, *seed)
	}
	s.dead = true
	return nil
}

// Restart serves the state the last crash left, so that a program's recovery
// runs on it.
func (s *Server) Restart() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dead {
		return fmt.Errorf("the mount has not crashed")
	}
	if err := s.replace(s.crashed); err != nil {
		return err
	}
	s.dead, s.crashed = false, nil
	return nil
}

// Command runs one control command, in iosim's words (clear-cache,
// checkpoint, report, crash [--seed N], restart) or LazyFS's FIFO strings
// (lazyfs::clear-cache, lazyfs::cache-checkpoint, lazyfs::unsynced-data-report,
// lazyfs::display-cache-usage), and returns its answer.
func (s *Server) Command(line string) (string, error) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "", fmt.Errorf("empty command: want clear-cache, checkpoint, report, crash [--seed N] or restart")
	}
	switch f[0] {
	case "lazyfs::clear-cache":
		f[0] = "clear-cache"
	case "lazyfs::cache-checkpoint":
		f[0] = "checkpoint"
	case "lazyfs::unsynced-data-report", "lazyfs::display-cache-usage":
		f[0] = "report"
	}
	args := f[1:]
	noArgs := func() error {
		if len(args) != 0 {
			return fmt.Errorf("%s: takes no arguments, got %q", f[0], strings.Join(args, " "))
		}
		return nil
	}
	switch f[0] {
	case "clear-cache":
		if err := noArgs(); err != nil {
			return "", err
		}
		return "ok\n", s.ClearCache()
	case "checkpoint":
		if err := noArgs(); err != nil {
			return "", err
		}
		return "ok\n", s.Checkpoint()
	case "report":
		if err := noArgs(); err != nil {
			return "", err
		}
		return s.Report(), nil
	case "restart":
		if err := noArgs(); err != nil {
			return "", err
		}
		return "ok\n", s.Restart()
	case "crash":
		var seed *uint64
		switch {
		case len(args) == 0:
		case len(args) == 2 && args[0] == "--seed":
			n, err := strconv.ParseUint(args[1], 10, 64)
			if err != nil {
				return "", fmt.Errorf("crash --seed %q: want a number", args[1])
			}
			seed = &n
		default:
			return "", fmt.Errorf("crash: want no argument or --seed N, got %q", strings.Join(args, " "))
		}
		return "ok\n", s.Crash(seed)
	}
	return "", fmt.Errorf("unknown command %q: want clear-cache, checkpoint, report, crash [--seed N] or restart (or LazyFS's lazyfs::clear-cache, lazyfs::cache-checkpoint, lazyfs::unsynced-data-report)", f[0])
}

package scenarios

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/cockroachdb/datadriven"

	"github.com/iosim/iosim/crash"
)

// Scenario is the state of one scenario file being run: the setup that arms
// defined from now on take, the arms, and what the last comparison found.
// Commands run in file order; Exec runs one.
type Scenario struct {
	file string // the scenario file's path, for relative paths and messages
	cur  setup
	arms []*arm
	by   map[string]*arm

	lastArm   *arm        // the arm the last run/equiv reported
	lastCmp   *comparison // the last compare
	lastEquiv *equivResult
	lastCrash *crashRun
	answers   []Answer
	// SVG, when set, receives every comparison and run for charts.
	SVG *Charts
}

// New returns the state for running the scenario file at path.
func New(path string) *Scenario {
	return &Scenario{file: path, by: map[string]*arm{}, cur: defaultSetup()}
}

// resolve returns p relative to the scenario file's directory.
func (s *Scenario) resolve(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(s.file), p)
}

// Exec runs one command and returns its output. A *MalformedError says the
// command cannot be run as written; an *AssertionError that an expect failed.
func (s *Scenario) Exec(td *datadriven.TestData) (string, error) {
	h, ok := commands[td.Cmd]
	if !ok {
		return "", malformed(td, "unknown command (known: %s)", commandNames())
	}
	if err := checkInput(td, h); err != nil {
		return "", err
	}
	out, err := h.run(s, td)
	if err == nil {
		s.note(td, out)
	}
	return out, err
}

// checkInput refuses a directive whose input holds what a missing `----`
// let in (the datadriven reader takes every line up to the next `----` as
// input): any input for a command that takes none, and, in the input of one
// that takes some (but a file's text), a line after a blank line that is
// itself a directive of a known command.
func checkInput(td *datadriven.TestData, h command) error {
	if td.Input == "" {
		return nil
	}
	lines := strings.Split(td.Input, "\n")
	if !h.input {
		return malformed(td, "takes no input, but %q follows it before `----`: is the `----` after the directive missing?", strings.TrimSpace(lines[0]))
	}
	if td.Cmd == "file" {
		return nil
	}
	for k := 1; k < len(lines); k++ {
		if strings.TrimSpace(lines[k-1]) != "" {
			continue
		}
		l := strings.TrimSpace(lines[k])
		if cmd, _, err := datadriven.ParseLine(l); err == nil && cmd != "" && !strings.HasPrefix(l, "#") {
			if _, known := commands[cmd]; known {
				return malformed(td, "its input runs into the directive %q: is the `----` that ends the input missing?", l)
			}
		}
	}
	return nil
}

type command struct {
	run func(*Scenario, *datadriven.TestData) (string, error)
	doc string
	// input: the command reads the lines between it and `----`.
	input bool
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"fs":      {(*Scenario).cmdFS, "fs model=MODEL[,MODEL...]|all: the persistence models crash explores (" + strings.Join(crash.ModelNames(), ", ") + ")", false},
		"device":  {(*Scenario).cmdDevice, "device NAME|FILE [TABLE.KEY=VALUE...]: the device profile that prices calls (default: a constant cost per call), with values of its TOML changed", false},
		"file":    {(*Scenario).cmdFile, "file PATH [size=N] [sparse|prealloc] [content=zero|random] [cold]: a file the workload finds, in the page cache unless cold (input: its text)", true},
		"stack":   {(*Scenario).cmdStack, "stack: the interposer stack, one spec per input line, the first nearest the program", true},
		"faults":  {(*Scenario).cmdFaults, "faults [seed=N]: fault rules, one per input line (the fault interposer's language)", true},
		"calls":   {(*Scenario).cmdCalls, "calls NAME: an arm whose workload is the input's calls in strace syntax (PID prefix: a thread; cpu(DURATION); repeat N ... end)", true},
		"trace":   {(*Scenario).cmdTrace, "trace NAME file=PATH|(PATH, ...)|BUNDLE: an arm replaying a recorded strace (-ff: several files), or the bundle iosim record wrote (its trace on its snapshot, in its directory)", false},
		"fio":     {(*Scenario).cmdFio, "fio NAME [file=PATH]: an arm running a fio job file (input or file)", true},
		"stdio":   {(*Scenario).cmdStdio, "stdio NAME: an arm whose workload is the input's C stdio calls (fopen, fputs, fwrite, fflush, fsync(fileno(f)), fclose) as glibc makes them", true},
		"arm":     {(*Scenario).cmdArm, "arm NAME like=OTHER: an arm with OTHER's workload and the current setup", false},
		"run":     {(*Scenario).cmdRun, "run [NAME...] [show=calls]: run arms and print their reports (show=calls: every call, for calls and stdio arms)", false},
		"compare": {(*Scenario).cmdCompare, "compare A B [by=time|calls|kernel-calls]: two arms side by side, with the ratio A/B", false},
		"equiv":   {(*Scenario).cmdEquiv, "equiv NAME: run a calls arm with and without its stack and compare every result", false},
		"crash":   {(*Scenario).cmdCrash, "crash NAME [models=M,...|all] [depth=N] [checks=(durability, atomic-replace, fsck, stdio)]: the findings (failing crash states by cause) of the arm's workload when power is lost at any point, under the persistence models (default: fs model=); input: disk fault rules on vfs operations, e.g. writeback@/db/f#nth=1=EIO", true},
		"expect":  {(*Scenario).cmdExpect, "expect METRIC=VALUE|LO..HI ... [arm=NAME]: the claim, checked (ratio, time, calls, kernel-calls, divergences, differ, lock-waits, findings)", false},
	}
}

func commandNames() string {
	var n []string
	for k := range commands {
		n = append(n, k)
	}
	sort.Strings(n)
	return strings.Join(n, ", ")
}

// Commands returns one line per command: its syntax and meaning.
func Commands() []string {
	var out []string
	for _, n := range strings.Split(commandNames(), ", ") {
		out = append(out, commands[n].doc)
	}
	return out
}

// arm looks up an arm by name.
func (s *Scenario) arm(td *datadriven.TestData, name string) (*arm, error) {
	a, ok := s.by[name]
	if !ok {
		var names []string
		for _, x := range s.arms {
			names = append(names, x.name)
		}
		known := "none defined yet"
		if len(names) > 0 {
			known = "defined: " + strings.Join(names, ", ")
		}
		return nil, malformed(td, "no arm %q (%s)", name, known)
	}
	return a, nil
}

func (s *Scenario) addArm(td *datadriven.TestData, a *arm) error {
	if _, dup := s.by[a.name]; dup {
		return malformed(td, "arm %q is already defined", a.name)
	}
	a.setup = s.cur.clone()
	a.pos = td.Pos
	s.arms = append(s.arms, a)
	s.by[a.name] = a
	return nil
}

// describe is the one-line echo of a defined arm.
func (a *arm) describe() string {
	return fmt.Sprintf("arm %s: %s; %s", a.name, a.work.describe(), a.setup.describe())
}

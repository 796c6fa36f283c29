// Package ddscript reads the commands of data-driven files (the format of
// github.com/cockroachdb/datadriven): a directive line, or each line of a
// directive's input, is a command followed by key=value arguments, and the
// handlers fetch those arguments through typed getters that report what was
// wrong and where.
//
//	read fd=wo n=10
//	open path=/f flags=O_RDWR|O_DIRECT
//	run limit=lowered bug="a note with spaces"
//
// A Cmd is checked, not trusted: a getter that fails, an argument no getter asked
// for (Done), a flag name a table does not hold, all become one error naming the
// file, the line, the command and the key, with what was expected. The getters
// never panic; after the first error they return zero values, so a handler can
// read all its arguments and check Err once.
package ddscript

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/datadriven"
)

// Cmd is one command and its arguments, with its position ("file:line").
type Cmd struct {
	Pos  string
	Name string
	args []datadriven.CmdArg
	used []bool
	err  error
}

// FromDirective returns the command of a directive line.
func FromDirective(d *datadriven.TestData) *Cmd {
	return &Cmd{Pos: d.Pos, Name: d.Cmd, args: d.CmdArgs, used: make([]bool, len(d.CmdArgs))}
}

// Lines parses each non-empty line of a directive's input as a command; a line
// starting with '#' is a comment. Positions count from the directive's line.
func Lines(d *datadriven.TestData) ([]*Cmd, error) {
	file, line := d.Pos, 0
	if i := strings.LastIndexByte(d.Pos, ':'); i >= 0 {
		if n, err := strconv.Atoi(d.Pos[i+1:]); err == nil {
			file, line = d.Pos[:i], n
		}
	}
	var out []*Cmd
	for k, l := range strings.Split(d.Input, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		pos := fmt.Sprintf("%s:%d", file, line+1+k)
		c, err := Parse(pos, l)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// Parse parses one command line; pos names it in errors.
func Parse(pos, line string) (*Cmd, error) {
	name, args, err := datadriven.ParseLine(line)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", pos, err)
	}
	if name == "" {
		return nil, fmt.Errorf("%s: want a command", pos)
	}
	return &Cmd{Pos: pos, Name: name, args: args, used: make([]bool, len(args))}, nil
}

// Err returns the first error a getter met, or nil.
func (c *Cmd) Err() error { return c.err }

// Failf records an error about the command (the first one wins) and returns it.
func (c *Cmd) Failf(format string, a ...any) error {
	if c.err == nil {
		c.err = fmt.Errorf("%s: %s: %s", c.Pos, c.Name, fmt.Sprintf(format, a...))
	}
	return c.err
}

// Has reports whether the argument key is given.
func (c *Cmd) Has(key string) bool {
	for _, a := range c.args {
		if a.Key == key {
			return true
		}
	}
	return false
}

// lookup returns the values of key, marking it used.
func (c *Cmd) lookup(key string) ([]string, bool) {
	for i, a := range c.args {
		if a.Key == key {
			c.used[i] = true
			return a.Vals, true
		}
	}
	return nil, false
}

func (c *Cmd) one(key string, required bool) (string, bool) {
	v, ok := c.lookup(key)
	switch {
	case !ok:
		if required {
			c.Failf("want argument %s=", key)
		}
		return "", false
	case len(v) != 1:
		c.Failf("%s: want one value, got %d", key, len(v))
		return "", false
	}
	return v[0], true
}

// Str returns the string value of key (required).
func (c *Cmd) Str(key string) string {
	v, _ := c.one(key, true)
	return v
}

// StrOr returns the value of key, or def when it is absent.
func (c *Cmd) StrOr(key, def string) string {
	if v, ok := c.one(key, false); ok {
		return v
	}
	return def
}

// Int returns the integer value of key (required): decimal, 0x hex, 0o octal,
// or a suffix k/m/g/t for KiB/MiB/GiB/TiB (4k = 4096).
func (c *Cmd) Int(key string) int64 {
	v, ok := c.one(key, true)
	if !ok {
		return 0
	}
	return c.parseInt(key, v)
}

// IntOr returns the integer value of key, or def when it is absent.
func (c *Cmd) IntOr(key string, def int64) int64 {
	v, ok := c.one(key, false)
	if !ok {
		return def
	}
	return c.parseInt(key, v)
}

func (c *Cmd) parseInt(key, v string) int64 {
	n, err := ParseInt(v)
	if err != nil {
		c.Failf("%s=%s: %v", key, v, err)
	}
	return n
}

// ParseInt reads an integer as Cmd.Int does.
func ParseInt(v string) (int64, error) {
	mult := int64(1)
	if len(v) > 1 {
		switch v[len(v)-1] {
		case 'k':
			mult = 1 << 10
		case 'm':
			mult = 1 << 20
		case 'g':
			mult = 1 << 30
		case 't':
			mult = 1 << 40
		}
	}
	if mult != 1 {
		v = v[:len(v)-1]
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("want an integer (12, 0x1f, 4k)")
	}
	return n * mult, nil
}

// Ints returns the integer values of key, (a,b,c) in the file; absent: nil.
func (c *Cmd) Ints(key string) []int64 {
	v, _ := c.lookup(key)
	out := make([]int64, len(v))
	for i, s := range v {
		out[i] = c.parseInt(key, s)
	}
	return out
}

// Strs returns the values of key, (a,b,c) in the file; absent: nil.
func (c *Cmd) Strs(key string) []string {
	v, _ := c.lookup(key)
	return v
}

// Bool reports whether key is given (as a bare key or key=true).
func (c *Cmd) Bool(key string) bool {
	v, ok := c.lookup(key)
	if !ok {
		return false
	}
	if len(v) == 0 || len(v) == 1 && v[0] == "true" {
		return true
	}
	if len(v) == 1 && v[0] == "false" {
		return false
	}
	c.Failf("%s: want no value, true or false", key)
	return false
}

// Flags is a table of symbolic names for the bits or values of one argument.
type Flags map[string]int64

// Flags returns the value of key written as names of table joined by '|', with
// numbers allowed among them (O_RDWR|O_DIRECT, 0x4000); absent: def.
func (c *Cmd) Flags(key string, table Flags, def int64) int64 {
	v, ok := c.one(key, false)
	if !ok {
		return def
	}
	var out int64
	for _, n := range strings.Split(v, "|") {
		if f, ok := table[n]; ok {
			out |= f
			continue
		}
		x, err := ParseInt(n)
		if err != nil {
			c.Failf("%s=%s: unknown name %q (want %s or a number)", key, v, n, table.names())
			return 0
		}
		out |= x
	}
	return out
}

func (t Flags) names() string {
	var n []string
	for k := range t {
		n = append(n, k)
	}
	sort.Strings(n)
	if len(n) > 8 {
		return "names such as " + strings.Join(n[:8], ", ")
	}
	return strings.Join(n, ", ")
}

// Done records an error for every argument no getter asked for, and returns Err.
func (c *Cmd) Done() error {
	for i, a := range c.args {
		if !c.used[i] {
			c.Failf("unknown argument %s", a.Key)
		}
	}
	return c.err
}

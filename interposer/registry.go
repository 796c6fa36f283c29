package interposer

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/iosim/iosim/sim"
)

// Param describes one parameter of an interposer spec.
type Param struct {
	Name    string
	Default string // "" when the parameter is required or has no default
	Repeat  bool   // may be given more than once (path=a,path=b)
	Doc     string
}

// Info describes an interposer: its name, what it does and its parameters.
type Info struct {
	Name    string
	Summary string
	Params  []Param
	build   func(next sim.Handler, a *Args) (sim.Handler, error)
}

var registry = map[string]*Info{}

func register(i *Info) {
	if _, dup := registry[i.Name]; dup {
		panic("interposer: duplicate registration of " + i.Name)
	}
	registry[i.Name] = i
}

// List returns every registered interposer, sorted by name.
func List() []Info {
	out := make([]Info, 0, len(registry))
	for _, i := range registry {
		out = append(out, *i)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// Usage renders List as text for a CLI's --help: one block per interposer.
func Usage() string {
	var b strings.Builder
	b.WriteString("interposers (--stack NAME[:key=value,...], repeatable; the first is nearest the program):\n")
	for _, i := range List() {
		fmt.Fprintf(&b, "  %-10s %s\n", i.Name, i.Summary)
		for _, p := range i.Params {
			extra := ""
			if p.Default != "" {
				extra = " (default " + p.Default + ")"
			}
			if p.Repeat {
				extra += " (repeatable)"
			}
			fmt.Fprintf(&b, "      %-10s %s%s\n", p.Name+"=", p.Doc, extra)
		}
	}
	return b.String()
}

// Spec is one parsed --stack element: NAME[:key=value,...].
type Spec struct {
	Name string
	Args []KV
}

// KV is one key=value of a Spec, in the order given.
type KV struct{ Key, Value string }

// String prints the spec back in the form ParseSpec reads.
func (s Spec) String() string {
	if len(s.Args) == 0 {
		return s.Name
	}
	parts := make([]string, len(s.Args))
	for i, kv := range s.Args {
		parts[i] = kv.Key + "=" + kv.Value
	}
	return s.Name + ":" + strings.Join(parts, ",")
}

// ParseSpec parses NAME[:key=value,...] and checks the name and keys against the
// registry. A value runs to the next comma; the key ends at the first '=' (so a fault
// rule such as rule=write@/db/*#nth=3=EIO keeps its own '=' signs).
func ParseSpec(spec string) (Spec, error) {
	name, rest, hasArgs := strings.Cut(strings.TrimSpace(spec), ":")
	info, ok := registry[name]
	if !ok {
		return Spec{}, fmt.Errorf("interposer: unknown interposer %q in %q (known: %s)", name, spec, strings.Join(names(), ", "))
	}
	s := Spec{Name: name}
	if !hasArgs {
		return s, nil
	}
	if rest == "" {
		return Spec{}, fmt.Errorf("interposer %s: empty parameter list in %q", name, spec)
	}
	seen := map[string]bool{}
	for _, field := range strings.Split(rest, ",") {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			return Spec{}, fmt.Errorf("interposer %s: parameter %q is not key=value", name, field)
		}
		p := info.param(k)
		if p == nil {
			return Spec{}, fmt.Errorf("interposer %s: unknown parameter %q (known: %s)", name, k, info.paramNames())
		}
		if seen[k] && !p.Repeat {
			return Spec{}, fmt.Errorf("interposer %s: parameter %q given twice", name, k)
		}
		seen[k] = true
		s.Args = append(s.Args, KV{k, v})
	}
	return s, nil
}

func names() []string {
	var n []string
	for k := range registry {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func (i *Info) param(k string) *Param {
	for j := range i.Params {
		if i.Params[j].Name == k {
			return &i.Params[j]
		}
	}
	return nil
}

func (i *Info) paramNames() string {
	var n []string
	for _, p := range i.Params {
		n = append(n, p.Name)
	}
	if len(n) == 0 {
		return "none"
	}
	return strings.Join(n, ", ")
}

// Build wraps next in the interposer that spec names: Build(kernel, "fsio:mode=setall").
func Build(next sim.Handler, spec string) (sim.Handler, error) {
	s, err := ParseSpec(spec)
	if err != nil {
		return nil, err
	}
	return s.Build(next)
}

// Build wraps next in the interposer s names.
func (s Spec) Build(next sim.Handler) (sim.Handler, error) {
	info, ok := registry[s.Name]
	if !ok {
		return nil, fmt.Errorf("interposer: unknown interposer %q", s.Name)
	}
	if next == nil {
		return nil, fmt.Errorf("interposer %s: nil next handler", s.Name)
	}
	a := &Args{name: s.Name, info: info, kv: s.Args}
	return info.build(next, a)
}

// Stack is a parsed --stack list; Stack[0] is nearest the program.
type Stack []Spec

// ParseStack parses repeated --stack values; specs[0] is nearest the program.
func ParseStack(specs []string) (Stack, error) {
	st := make(Stack, 0, len(specs))
	for _, sp := range specs {
		s, err := ParseSpec(sp)
		if err != nil {
			return nil, err
		}
		st = append(st, s)
	}
	return st, nil
}

// Build stacks the interposers over kernel and returns the outermost layer (the one
// the program calls). It is kernel itself for an empty stack.
func (st Stack) Build(kernel sim.Handler) (sim.Handler, error) {
	h := kernel
	for i := len(st) - 1; i >= 0; i-- {
		var err error
		if h, err = st[i].Build(h); err != nil {
			return nil, err
		}
	}
	return h, nil
}

// String prints the stack as --stack flags.
func (st Stack) String() string {
	var parts []string
	for _, s := range st {
		parts = append(parts, "--stack "+s.String())
	}
	return strings.Join(parts, " ")
}

// Layers returns h and every layer below it, outermost first, following Unwrap.
func Layers(h sim.Handler) []sim.Handler {
	var out []sim.Handler
	for h != nil {
		out = append(out, h)
		u, ok := h.(interface{ Unwrap() sim.Handler })
		if !ok {
			break
		}
		h = u.Unwrap()
	}
	return out
}

// Find returns the first layer of h's stack of type T.
func Find[T sim.Handler](h sim.Handler) (T, bool) {
	for _, l := range Layers(h) {
		if t, ok := l.(T); ok {
			return t, true
		}
	}
	var zero T
	return zero, false
}

// Args gives an interposer's builder typed access to its parameters, with errors that
// name the interposer, the key and the bad value.
type Args struct {
	name string
	info *Info
	kv   []KV
}

func (a *Args) errf(key, val, format string, args ...any) error {
	return fmt.Errorf("interposer %s: bad value %q for %s: %s", a.name, val, key, fmt.Sprintf(format, args...))
}

// All returns every value given for key, in order, or the default.
func (a *Args) All(key string) []string {
	var out []string
	for _, kv := range a.kv {
		if kv.Key == key {
			out = append(out, kv.Value)
		}
	}
	if out == nil {
		if p := a.info.param(key); p != nil && p.Default != "" {
			out = []string{p.Default}
		}
	}
	return out
}

// String returns the last value given for key, or its default.
func (a *Args) String(key string) string {
	v := a.All(key)
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// Required is String that fails when the key was not given and has no default.
func (a *Args) Required(key string) (string, error) {
	v := a.String(key)
	if v == "" {
		return "", fmt.Errorf("interposer %s: parameter %s= is required", a.name, key)
	}
	return v, nil
}

// Enum returns the value of key, which must be one of choices.
func (a *Args) Enum(key string, choices ...string) (string, error) {
	v := a.String(key)
	for _, c := range choices {
		if v == c {
			return v, nil
		}
	}
	return "", a.errf(key, v, "want one of %s", strings.Join(choices, "|"))
}

// Int returns the value of key as an integer (0 when absent without default).
func (a *Args) Int(key string) (int64, error) {
	v := a.String(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 0, 64)
	if err != nil {
		return 0, a.errf(key, v, "not an integer")
	}
	return n, nil
}

// Duration returns the value of key as a duration ("5us", "1ms").
func (a *Args) Duration(key string) (time.Duration, error) {
	v := a.String(key)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, a.errf(key, v, "not a duration")
	}
	return d, nil
}

// Bool returns the value of key as a boolean.
func (a *Args) Bool(key string) (bool, error) {
	v := a.String(key)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, a.errf(key, v, "not a boolean")
	}
	return b, nil
}

// FdObserver is implemented by layers that keep a model of a process's fd table
// (FileCache). Task.InstallPath and Task.InstallSpecial put an fd in a process
// without crossing the stack; whoever calls them on a process whose calls go
// through a stack must tell the stack with NotifyInstalled.
type FdObserver interface {
	FdInstalled(t *sim.Task, fd int)
}

// NotifyInstalled tells every layer of h's stack that implements FdObserver that fd
// of t's process was installed (replaced) outside the stack.
func NotifyInstalled(h sim.Handler, t *sim.Task, fd int) {
	for _, l := range Layers(h) {
		if o, ok := l.(FdObserver); ok {
			o.FdInstalled(t, fd)
		}
	}
}

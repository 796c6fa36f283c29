package interposer_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

var writeCounterexamples = flag.Bool("write-counterexamples", false, "rewrite COUNTEREXAMPLES.md from the shrunk counterexamples")

func orausStack(k sim.Handler) sim.Handler     { return interposer.NewOraus(k, msbPath) }
func openCacheStack(k sim.Handler) sim.Handler { return interposer.NewOpenCache(k, msbPath) }

// A bug of the published seed-000 code and a generator restricted to the ops that
// expose it. The read-equivalence property over such programs must fail, and rapid
// shrinks the failure to a short program.
type bug struct {
	name    string
	layer   string
	stack   func(sim.Handler) sim.Handler
	prog    func(t *rapid.T) []op
	compare func(op) bool // which results to compare (nil: all)
}

func openMsb() op { return op{Kind: "open", Path: msbPath} }

// oneOf draws programs of 1..max ops from gens (a fixed prefix first).
func oneOf(prefix []op, max int, gens ...func(*rapid.T) op) func(*rapid.T) []op {
	return func(t *rapid.T) []op {
		g := rapid.Custom(func(t *rapid.T) op { return gens[rapid.IntRange(0, len(gens)-1).Draw(t, "which")](t) })
		return append(append([]op{}, prefix...), rapid.SliceOfN(g, 1, max).Draw(t, "ops")...)
	}
}

var (
	gRead = func(t *rapid.T) op { return op{Kind: "read", Fd: lastFd, N: genN(t)} }
	gSeek = func(t *rapid.T) op {
		return op{Kind: "lseek", Fd: lastFd, Off: rapid.Int64Range(0, msbSize).Draw(t, "off"), Whence: rapid.IntRange(0, 2).Draw(t, "whence")}
	}
	gFcntl = func(t *rapid.T) op {
		cmd := rapid.SampledFrom([]int{unix.F_GETFD, unix.F_SETFD, unix.F_GETFL}).Draw(t, "cmd")
		return op{Kind: "fcntl", Fd: lastFd, Cmd: cmd, Arg: rapid.IntRange(0, 1).Draw(t, "arg")}
	}
	gOpenAny = func(t *rapid.T) op {
		return op{Kind: "open", Path: msbPath, Flags: rapid.SampledFrom([]int{unix.O_RDONLY, unix.O_RDWR, unix.O_WRONLY}).Draw(t, "flags")}
	}
	gWrite = func(t *rapid.T) op { return op{Kind: "write", Fd: lastFd, N: genN(t)} }
	gGetfd = func(t *rapid.T) op {
		return op{Kind: "fcntl", Fd: rapid.IntRange(3, 4).Draw(t, "fd"), Cmd: unix.F_GETFD}
	}
	gOpenOther = func(t *rapid.T) op { return op{Kind: "open", Path: otherPath} }
)

func bugs() []bug {
	onlyWrites := func(o op) bool { return o.Kind == "write" }
	return []bug{
		{name: "read does not advance the offset", layer: "oraus", stack: orausStack,
			prog: oneOf([]op{openMsb()}, 8, gRead)},
		{name: "lseek ignores whence", layer: "oraus", stack: orausStack,
			prog: oneOf([]op{openMsb()}, 8, gSeek)},
		{name: "read returns the requested count past end of file", layer: "oraus", stack: orausStack,
			prog: func(t *rapid.T) []op {
				off := rapid.Int64Range(0, msbSize+600).Draw(t, "off")
				return []op{openMsb(), {Kind: "lseek", Fd: lastFd, Off: off}, {Kind: "read", Fd: lastFd, N: genN(t)}}
			}},
		{name: "fcntl returns the first result for every later fcntl", layer: "oraus", stack: orausStack,
			prog: oneOf([]op{openMsb()}, 8, gFcntl)},
		{name: "a writable open gets the read-only fd", layer: "oraus", stack: orausStack,
			prog: oneOf(nil, 8, gOpenAny, gWrite), compare: onlyWrites},
		{name: "a writable open gets the read-only fd", layer: "opencache", stack: openCacheStack,
			prog: oneOf(nil, 8, gOpenAny, gWrite), compare: onlyWrites},
		{name: "the fd is never released", layer: "oraus", stack: orausStack,
			prog: oneOf([]op{openMsb(), {Kind: "close", Fd: lastFd}}, 8, gOpenOther, gGetfd)},
		{name: "the fd is never released", layer: "opencache", stack: openCacheStack,
			prog: oneOf([]op{openMsb(), {Kind: "close", Fd: lastFd}}, 8, gOpenOther, gGetfd)},
		{name: "close is ignored: the fd and its description live on", layer: "opencache", stack: openCacheStack,
			prog:    oneOf(nil, 8, func(*rapid.T) op { return openMsb() }, gRead, func(*rapid.T) op { return op{Kind: "close", Fd: lastFd} }),
			compare: func(o op) bool { return o.Kind == "read" }},
		{name: "bytes written later are never seen (exact path match misses a symlink)", layer: "oraus", stack: orausStack,
			prog: func(t *rapid.T) []op {
				off := genOff(t)
				return []op{openMsb(), {Kind: "open", Path: "/msb.link", Flags: unix.O_RDWR},
					{Kind: "pwrite", Fd: lastFd, N: genN(t) + 1, Off: max(off, 0)},
					{Kind: "lseek", Fd: 3, Off: rapid.Int64Range(0, msbSize).Draw(t, "off2")},
					{Kind: "read", Fd: 3, N: genN(t)}}
			}, compare: func(o op) bool { return o.Kind == "read" }},
		// The general property, every op of the read-equivalence suite: it must fail too.
		{name: "general read-equivalence (any op)", layer: "oraus", stack: orausStack,
			prog: func(t *rapid.T) []op { return genProg(t, 20, readOps, hotOps) }},
		{name: "general read-equivalence (any op)", layer: "opencache", stack: openCacheStack,
			prog: func(t *rapid.T) []op { return genProg(t, 20, readOps, hotOps) }},
	}
}

// TestPublishedBugsFound asserts that read-equivalence finds and shrinks each bug
// of the published cache_oraus.so / cache_open_calls.so (and that the general
// property, over every op, fails against both), and logs the shrunk
// counterexamples (go test -run PublishedBugs -v; -write-counterexamples rewrites
// COUNTEREXAMPLES.md).
func TestPublishedBugsFound(t *testing.T) {
	var md strings.Builder
	md.WriteString("# Counterexamples found by read-equivalence\n\n")
	md.WriteString("Generated by `go test ./interposer -run TestPublishedBugsFound -write-counterexamples`.\n")
	md.WriteString("Each program was drawn by rapid from the ops that expose one bug of seed 000's published\n")
	md.WriteString("interposers, run on the kernel model alone and through the interposer (fresh identical\n")
	md.WriteString("worlds), and shrunk. `last` is the fd the last successful open returned; the process has\n")
	md.WriteString("fds 0-2 open, so its first file is fd 3. Only the results named in the divergence differ.\n\n")
	for i, b := range bugs() {
		t.Run(b.layer+"/"+strings.ReplaceAll(b.name, " ", "_"), func(t *testing.T) {
			ce, found := findCounterexample(t, uint64(1000+i), 1000, func(rt *rapid.T) {
				checkEquivalentOn(rt, b.prog(rt), b.stack, b.compare)
			})
			if !found {
				t.Fatalf("read-equivalence found no counterexample for %s: %s", b.layer, b.name)
			}
			t.Logf("%s — %s\n  program:    %s\n  divergence: %s", b.layer, b.name, ce.Program, ce.Divergence)
			fmt.Fprintf(&md, "## %s: %s\n\n    %s\n\n    %s\n\n", b.layer, b.name,
				strings.ReplaceAll(ce.Program, "; ", "\n    "), ce.Divergence)
		})
	}
	if *writeCounterexamples {
		if err := os.WriteFile("COUNTEREXAMPLES.md", []byte(md.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

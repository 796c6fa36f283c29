package strace_test

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/iosim/iosim/strace"
)

// FuzzParse checks that no input makes the parser panic or loop, and that
// whatever it accepts it can format and read back.
//
//	go test -fuzz=FuzzParse ./strace
func FuzzParse(f *testing.F) {
	for _, file := range traceFiles(f) {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		// Every syscall name and line shape of every trace, without
		// thousands of near-identical seeds: the first line of each
		// (syscall, failed?) kind, and the first few unfinished pairs.
		lines := bytes.Split(b, []byte("\n"))
		seen := map[string]bool{}
		pairs := 0
		for i, l := range lines {
			key := shapeKey(l)
			if !seen[key] {
				seen[key] = true
				f.Add(l)
			}
			if pairs < 5 && bytes.Contains(l, []byte("<unfinished ...>")) {
				pairs++
				f.Add(bytes.Join(lines[i:min(i+4, len(lines))], []byte("\n")))
			}
		}
	}
	f.Add([]byte("write(1, \"ab\", 2) = 2\n | 00000  61 62                                             ab               |\n"))
	f.Add([]byte("[pid 12] 1.5 read(3</a\\x3eb<char 1:5>>(deleted), \"\\x41\\101\"..., 9) = -1 EIO (I/O error) (INJECTED) <0.1>"))
	// strace's stderr captured: messages cutting calls, pids without prefix
	f.Add([]byte(stderrTrace))
	f.Add([]byte("fork()strace: Process 7 attached\n = 7\n[pid 6] +++ exited with 0 +++\nclose(3strace: Process 8 attached\nstrace: Process 9 attached\n) = 0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, keep := range []bool{false, true} {
			p := strace.NewParser(bytes.NewReader(data), "fuzz.123", strace.Options{KeepGoing: keep, MaxLineLen: 1 << 16})
			var out []byte
			var evs []*strace.Event
			for n := 0; ; n++ {
				if n > len(data)+10 {
					t.Fatalf("more events than lines")
				}
				ev, err := p.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					if keep {
						t.Fatalf("error with KeepGoing: %v", err)
					}
					if _, ok := err.(*strace.SyntaxError); !ok {
						t.Fatalf("not a SyntaxError: %v", err)
					}
					continue
				}
				checkFastPaths(t, ev)
				for i, a := range ev.Args() {
					ev.Int(i)
					ev.Str(i)
					ev.Fd(i)
					ev.Flags(i)
					a.Field("x")
					a.Names(nil)
				}
				c := ev.Clone()
				c.Args()
				evs = append(evs, c)
				out = strace.AppendFormat(out, ev)
			}
			// What parsed cleanly formats to text that parses to the same events.
			if keep && p.Skipped() == 0 {
				evs2, err := parseAll(t, "fuzz.123", string(out), strace.Options{})
				if err != nil {
					t.Fatalf("formatted output does not parse: %v\n%s", err, out)
				}
				if len(evs2) != len(evs) {
					t.Fatalf("%d events, %d after formatting:\n%s", len(evs), len(evs2), out)
				}
				for i := range evs {
					a, b := flatten(evs[i]), flatten(evs2[i])
					if a.Desc == "" {
						b.Desc = "" // Format supplies the strerror text strace always prints
					}
					if a != b {
						t.Fatalf("round trip changed event %d:\n%+v\n%+v\n%s", i, a, b, out)
					}
				}
			}
		}
	})
}

// checkFastPaths checks that Int, Str and NArgs, asked before the argument
// tree is built (their fast paths), answer what the full tree answers.
func checkFastPaths(t *testing.T, ev *strace.Event) {
	full := ev.Clone()
	full.Args()
	if a, b := ev.NArgs(), full.NArgs(); a != b {
		t.Fatalf("NArgs %d, tree %d: %q", a, b, ev.RawArgs)
	}
	for i := -1; i < 8; i++ {
		v1, ok1 := ev.Int(i)
		v2, ok2 := full.Int(i)
		b1, tr1, s1 := ev.Str(i)
		b2, tr2, s2 := full.Str(i)
		if v1 != v2 || ok1 != ok2 || !bytes.Equal(b1, b2) || tr1 != tr2 || s1 != s2 {
			t.Fatalf("arg %d: Int %d %v, tree %d %v; Str %q %v %v, tree %q %v %v: %q", i, v1, ok1, v2, ok2, b1, tr1, s1, b2, tr2, s2, ev.RawArgs)
		}
	}
}

// shapeKey identifies a line by its event word (syscall name, "+++",
// "---", ...) and whether it carries an errno or a decoration.
func shapeKey(l []byte) string {
	i := bytes.IndexAny(l, "(+-<")
	if i < 0 {
		return string(l)
	}
	j := i
	for j > 0 && l[j-1] != ' ' {
		j--
	}
	return string(l[j:i+1]) + fmt.Sprint(bytes.Contains(l, []byte(" = -1 ")), bytes.Contains(l, []byte(">, ")))
}

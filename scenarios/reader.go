package scenarios

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/cockroachdb/datadriven"
)

// A block is one directive of a scenario file as datadriven reads it: the
// command line (with `\` continuations), its input up to `----`, and the
// expected output up to the first blank line (or, after a second `----`, up to
// a `----` `----` pair, for output with blank lines).
type block struct {
	td   datadriven.TestData
	line int // the directive's line
	// pre holds the file's text before the expected output (comments, the
	// directive, its input, up to and excluding the first `----`); the
	// rewrite keeps it and replaces only the output.
	pre string
	// hasSep: the directive was followed by `----` (else it has no output).
	hasSep bool
}

// readFile splits a scenario file into blocks, the way datadriven's reader
// does (the same comment, continuation and separator rules), so that the
// command-line runner and `go test` read a file identically. tail is the text
// after the last block (comments and blank lines), kept by a rewrite.
func readFile(name string, r io.Reader) (blocks []block, tail string, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	line := 0
	scan := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return sc.Text(), true
	}
	var pre strings.Builder
	for {
		text, ok := scan()
		if !ok {
			break
		}
		pre.WriteString(text + "\n")
		directive := strings.TrimSpace(text)
		if strings.HasPrefix(directive, "#") || directive == "" {
			continue
		}
		start := line
		for strings.HasSuffix(directive, `\`) {
			next, ok := scan()
			if !ok {
				break
			}
			pre.WriteString(next + "\n")
			directive = strings.TrimSuffix(directive, `\`) + " " + strings.TrimSpace(next)
		}
		cmd, args, perr := datadriven.ParseLine(directive)
		if perr != nil {
			return nil, "", &MalformedError{Pos: pos(name, start), Msg: perr.Error()}
		}
		b := block{line: start}
		b.td = datadriven.TestData{Pos: pos(name, start), Cmd: cmd, CmdArgs: args}
		var in bytes.Buffer
		for {
			t, ok := scan()
			if !ok {
				break
			}
			if t == "----" {
				b.hasSep = true
				break
			}
			pre.WriteString(t + "\n")
			in.WriteString(t + "\n")
		}
		b.td.Input = strings.TrimSpace(in.String())
		if b.hasSep {
			exp, perr := readExpected(scan)
			if perr != "" {
				return nil, "", &MalformedError{Pos: pos(name, line), Msg: perr}
			}
			b.td.Expected = exp
		}
		b.pre = pre.String()
		pre.Reset()
		blocks = append(blocks, b)
	}
	if err := sc.Err(); err != nil {
		return nil, "", fmt.Errorf("%s: %w", name, err)
	}
	return blocks, pre.String(), nil
}

// readExpected reads the expected output after `----` (see block).
func readExpected(scan func() (string, bool)) (string, string) {
	var buf strings.Builder
	first, ok := scan()
	if !ok {
		return "", ""
	}
	if first != "----" {
		for line := first; strings.TrimSpace(line) != ""; {
			buf.WriteString(line + "\n")
			if line, ok = scan(); !ok {
				break
			}
		}
		return buf.String(), ""
	}
	for {
		line, ok := scan()
		if !ok {
			return "", "the output opened by `----` `----` does not end with `----` `----`"
		}
		if line == "----" {
			line2, ok := scan()
			if !ok {
				return "", "the output opened by `----` `----` does not end with `----` `----`"
			}
			if line2 == "----" {
				if after, ok := scan(); ok && after != "" {
					return "", "a non-blank line follows the `----` `----` that ends an output"
				}
				return buf.String(), ""
			}
			buf.WriteString(line + "\n" + line2 + "\n")
			continue
		}
		buf.WriteString(line + "\n")
	}
}

func pos(name string, line int) string { return fmt.Sprintf("%s:%d", name, line) }

// render writes a block's output the way datadriven's rewrite does.
func render(w *strings.Builder, actual string) {
	w.WriteString("----\n")
	if actual != "" && !strings.HasSuffix(actual, "\n") {
		actual += "\n"
	}
	if hasBlankLine(actual) {
		w.WriteString("----\n")
		w.WriteString(actual)
		w.WriteString("----\n----\n\n")
		return
	}
	w.WriteString(actual)
	w.WriteString("\n")
}

// blankLine is datadriven's test for output that needs the `----` `----` form.
var blankLine = regexp.MustCompile(`(?m)^[\t ]*\n`)

func hasBlankLine(s string) bool { return blankLine.MatchString(s) }

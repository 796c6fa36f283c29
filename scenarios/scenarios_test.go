package scenarios

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
)

// TestScenarios runs every scenario file of this directory through
// datadriven (go test ./scenarios -rewrite regenerates their outputs).
func TestScenarios(t *testing.T) {
	files, err := Files([]string{"."})
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, path := range files {
		t.Run(path, func(t *testing.T) {
			s := New(path)
			datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
				out, err := s.Exec(td)
				if err != nil {
					t.Fatal(err)
				}
				return out
			})
		})
	}
}

func writeScen(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.scen")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// TestMalformed checks that a scenario that cannot run names its file, its
// line and what was expected, and makes the exit status 2.
func TestMalformed(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"bogus\n----\n", "x.scen:1: bogus: unknown command (known: arm, calls"},
		{"# c\n\nfile /a size=abc\n----\n", `x.scen:3: file: argument size=abc: want a size`},
		{"file /a siz=4k\n----\n", "x.scen:1: file: unknown argument siz= (known: size, content)"},
		{"file a size=1\n----\n", `x.scen:1: file: path "a": want an absolute path`},
		{"file /a\n----\n", "x.scen:1: file: missing size="},
		{"calls A\n----\n", "x.scen:1: calls: missing input"},
		{"calls A\nopen(\"/x\", O_RDONLY) = 3\nmmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3, 0) = 0x1000\n----\n", "x.scen:3: calls: mmap is not one of the calls"},
		{"calls A\nopen(\"/x\", O_BOGUS) = 3\n----\n", "x.scen:2: calls: argument 2 (O_BOGUS): not a number or a known constant"},
		{"calls A\nwrite(1, \"ab\", 3) = 3\n----\n", "x.scen:2: calls: the string holds 2 bytes, the count says 3"},
		{"stack\nnosuch\n----\n", `x.scen:1: stack: interposer: unknown interposer "nosuch"`},
		{"stack\nfsio:mode=sideways\n----\n", `x.scen:1: stack: interposer fsio: bad value "sideways"`},
		{"faults\nwrite=EWHAT\n----\n", `x.scen:1: faults: rule "write=EWHAT"`},
		{"device nvme-fast\n----\n", `x.scen:1: device: device "nvme-fast": not a bundled profile`},
		{"fs model=ext5\n----\n", `x.scen:1: fs: argument model=ext5: unknown persistence model`},
		{"run\n----\n", "x.scen:1: run: no arm to run"},
		{"compare A B\n----\n", `x.scen:1: compare: no arm "A" (none defined yet)`},
		{"expect ratio=2\n----\n", "x.scen:1: expect: ratio: no compare before this expect"},
		{"expect divergences\n----\n", "x.scen:1: expect: want METRIC VALUE pairs"},
		{"calls A\nclose(1) = 0\n----\n\nexpect speed=3 arm=A\n----\n", `x.scen:5: expect: unknown metric "speed"`},
		{"calls A\nclose(1) = 0\n----\n\nequiv A\n----\n", "x.scen:5: equiv: arm A has no stack"},
		{"fio J\n[j]\nrw=read\nsize=1m\nbogus_opt=1\n----\n", "x.scen:5: fio: bogus_opt: option not supported"},
		{"trace T file=nosuch.strace\n----\n", "x.scen:1: trace: file=nosuch.strace:"},
		{"trace T file=.\n----\n", ": not a bundle: no bundle.json"},
		{"trace T file=(., x.scen)\n----\n", "x.scen:1: trace: file=. is a directory: a recording bundle is given alone"},
		{"calls A\nclose(1) = 0\n----\n\ncalls A\nclose(2) = 0\n----\n", `x.scen:5: calls: arm "A" is already defined`},
		{"run a=(b\n----\n", "x.scen:1: cannot parse directive"},
		{"stdio S\nfputs(\"x\", g)\n----\n", `x.scen:2: stdio: stream "g" is not open`},
		{"stdio S\nf = fopen(\"/x\", \"w\")\n\ng = fopen(\"/x\", \"q\")\n----\n", `x.scen:4: stdio: mode "q": want r, w or a first`},
		{"stdio S\nf = fopen(\"/x\", \"w\")\nfwrite(\"ab\", 1, 3, f)\n----\n", "x.scen:3: stdio: fwrite: SIZE*N must be the string's 2 bytes"},
		{"stdio S\nf = fopen(\"/x\", \"w\")\nfread(f)\n----\n", `x.scen:3: stdio: unknown call "fread"`},
		{"stdio S\nf = fopen(\"/x\", \"w\")\nfsync(f)\n----\n", "x.scen:3: stdio: want fsync(fileno(STREAM))"},
		{"stdio S\nf = fopen(\"/x\", \"w\")\nfclose(f)\nfflush(f)\n----\n", `x.scen:4: stdio: stream "f" is not open`},
		{"stdio S\nf = fopen(/x, \"w\")\n----\n", "x.scen:2: stdio: argument 1 of fopen: want a quoted string, got /x"},
		{"fio J\n[j]\nrw=read\nsize=1m\n----\n\nrun J show=calls\n----\n", "x.scen:7: run: show=calls lists the calls of calls and stdio arms; J is not one"},
		{"calls A\nclose(1) = 0\n----\n\nrun A show=all\n----\n", "x.scen:5: run: argument show=all: want one of counts, calls"},
		{"run\n----\n----\nx\n", "the output opened by `----` `----` does not end"},
		{"calls A\nrepeat 3\nclose(1) = 0\n----\n", "x.scen:2: calls: repeat without end"},
		{"calls A\nrepeat 20001\nclose(9) = -1 EBADF (Bad file descriptor)\nend\n----\n\nrun A show=calls\n----\n", "x.scen:7: run: show=calls lists at most 20000 calls; A makes 20001"},
		{"stack\ncount\n----\n\ncalls A\nrepeat 20001\nclose(9) = -1 EBADF (Bad file descriptor)\nend\n----\n\nequiv A\n----\n", "x.scen:11: equiv: arm A makes 20001 calls: equiv compares at most 20000"},
		{"calls A\nclose(1) = 0\nend\n----\n", "x.scen:3: calls: end without repeat"},
		{"calls A\nrepeat 0\nclose(1) = 0\nend\n----\n", "x.scen:2: calls: repeat 0: want a count from 1 to 1e9"},
		{"calls A\nrepeat 100000\nrepeat 100000\nclose(1) = 0\nend\nend\n----\n", "x.scen:1: calls: the repeats make more than 1000000000 calls"},
		{"calls A\nrepeat 2\nend\nclose(1) = 0\n----\n", "x.scen:3: calls: an empty repeat block"},
		{"calls A\nclose(1) = 0\ncpu(fast)\n----\n", "x.scen:3: calls: cpu(fast): want a duration"},
		{"calls A\ncpu(1ms)\n----\n", "x.scen:1: calls: no call in the input"},
		{"calls A\nwrite(1, \"abc\"..., 2) = 2\n----\n", "x.scen:2: calls: count 2: want from the 3 bytes shown to 1 GiB"},
		{"calls A\nopen(\"/x\"..., O_RDONLY) = 3\n----\n", "x.scen:2: calls: argument 1 is cut"},
		{"device hdd-7200 memory.page_cache=1\n----\n", "x.scen:1: device: profile override: unknown key memory.page_cache"},
		{"device hdd-7200 write_cache=false\n----\n", "x.scen:1: device: write_cache=false: want TABLE.KEY=VALUE"},
		{"device hdd-7200 device.queue_depth=0\n----\n", "x.scen:1: device: device.queue_depth"},
		{"device hdd-7200 device.write_cache=maybe\n----\n", "x.scen:1: device: profile override:"},
		{"device default fs.type=ufs\n----\n", "x.scen:1: device: the default device has no profile to override"},
		{"device ../nosuch.toml\n----\n", "x.scen:1: device: open"},
		{"file /a size=1k cold warm\n----\n", `x.scen:1: file: unexpected word "warm"`},
		{"calls A\nclose(1) = 0\n----\n\nexpect lock-waits 0 arm=A\n----\n", "x.scen:5: expect: lock-waits: arm A runs on the default device"},
		{"fio J\n[j]\nrw=read\nsize=1m\nioengine=libaio\nthinktime=10\n----\n", "fio: thinktime: job j: thinktime is supported with the sync and psync engines only"},
		// A missing `----` lets the next directive in as input.
		{"calls A\nclose(1) = 0\n----\n\nrun A\n\nexpect calls=1 arm=A\n----\nok\n", "x.scen:5: run: takes no input, but \"expect calls=1 arm=A\" follows it before `----`: is the `----` after the directive missing?"},
		{"calls A\nclose(1) = 0\n----\n\ncompare A A\nexpect ratio=1\n----\nok\n", "x.scen:5: compare: takes no input, but \"expect ratio=1\" follows it"},
		{"calls A\nclose(1) = 0\n\ncalls B\nclose(2) = 0\n----\n", "x.scen:1: calls: its input runs into the directive \"calls B\": is the `----` that ends the input missing?"},
		{"stack\ncount\n\ncompare A B\n----\n", "x.scen:1: stack: its input runs into the directive \"compare A B\""},
		{"calls A\nclose(1) = 0\n----\n\nexpect calls=1 arm=A\n", "x.scen:5: expect: no `----` and expected output follow it ('iosim run --rewrite' writes them)"},
	} {
		p := writeScen(t, tc.text)
		r := RunFile(p, RunOptions{})
		require.Error(t, r.Err, tc.text)
		require.Contains(t, r.Err.Error(), tc.want, tc.text)
		require.True(t, strings.HasPrefix(r.Err.Error(), p+":"), r.Err.Error())
		require.Equal(t, 2, ExitCode([]*FileResult{r}), tc.text)
	}
}

// TestMismatchRewrite checks the runner outside go test: a wrong output is a
// mismatch with a diff (exit 1), -rewrite fixes it, a second rewrite changes
// nothing, and a failed expect is exit 1 whatever the outputs.
func TestMismatchRewrite(t *testing.T) {
	text := "# comment\nfile /a size=4k\n----\nwrong\n\ncalls A\nopen(\"/a\", O_RDONLY) = 3\nread(3, \"\", 10) = 10\n----\n\nrun A\n----\n----\nstale\n\nlines\n----\n----\n\n# tail\n"
	p := writeScen(t, text)
	r := RunFile(p, RunOptions{})
	require.NoError(t, r.Err)
	require.Len(t, r.Mismatches, 3)
	require.Contains(t, r.Mismatches[0].Diff, "-wrong\n+file /a: 4096 bytes, written, zero\n")
	require.Equal(t, p+":2", r.Mismatches[0].Pos)
	require.Equal(t, 1, ExitCode([]*FileResult{r}))

	r = RunFile(p, RunOptions{Rewrite: true})
	require.NoError(t, r.Err)
	require.True(t, r.Rewritten)
	once, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Contains(t, string(once), "# tail\n")
	require.Contains(t, string(once), "diverged 0\n")
	r = RunFile(p, RunOptions{})
	require.True(t, r.Passed(), "%v %v", r.Err, r.Mismatches)
	require.Equal(t, 0, ExitCode([]*FileResult{r}))
	RunFile(p, RunOptions{Rewrite: true})
	twice, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, string(once), string(twice))

	// go test's reader (datadriven) agrees with the rewritten file.
	s := New(p)
	datadriven.RunTest(t, p, func(t *testing.T, td *datadriven.TestData) string {
		out, err := s.Exec(td)
		require.NoError(t, err)
		return out
	})

	p = writeScen(t, "calls A\nread(0, \"\", 1) = 0\n----\n\nrun A\n----\n\nexpect calls=2\n----\n")
	RunFile(p, RunOptions{Rewrite: true})
	r = RunFile(p, RunOptions{})
	var ae *AssertionError
	require.ErrorAs(t, r.Err, &ae)
	require.Contains(t, ae.Error(), "x.scen:8: expect calls=2: A's calls = 1")
	require.Equal(t, 1, ExitCode([]*FileResult{r}))
}

// TestReaderMatchesDatadriven checks that the runner of `iosim run` reads
// every shipped scenario exactly as datadriven does.
func TestReaderMatchesDatadriven(t *testing.T) {
	files, err := Files([]string{"."})
	require.NoError(t, err)
	for _, path := range files {
		var theirs []datadriven.TestData
		datadriven.RunTest(t, path, func(t *testing.T, td *datadriven.TestData) string {
			theirs = append(theirs, *td)
			return td.Expected
		})
		f, err := os.Open(path)
		require.NoError(t, err)
		ours, _, err := readFile(path, f)
		f.Close()
		require.NoError(t, err)
		require.Len(t, ours, len(theirs), path)
		for i, b := range ours {
			th := theirs[i]
			require.Equal(t, th.Pos, b.td.Pos)
			require.Equal(t, th.Cmd, b.td.Cmd, th.Pos)
			require.Equal(t, th.CmdArgs, b.td.CmdArgs, th.Pos)
			require.Equal(t, th.Input, b.td.Input, th.Pos)
			require.Equal(t, th.Expected, b.td.Expected, th.Pos)
		}
	}
}

// FuzzReadFile feeds arbitrary text to the scenario reader and to every
// command that only sets up or defines arms: errors, never panics.
func FuzzReadFile(f *testing.F) {
	files, _ := Files([]string{"."})
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("run\n----\n----\nx\n----\n----\n"))
	f.Add([]byte("expect ratio 5..12\n----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		blocks, _, err := readFile("f.scen", bytes.NewReader(data))
		if err != nil {
			var me *MalformedError
			require.ErrorAs(t, err, &me)
			return
		}
		s := New("f.scen")
		for _, b := range blocks {
			switch b.td.Cmd {
			case "run", "compare", "equiv", "expect":
				continue
			}
			_, _ = s.Exec(&b.td)
		}
	})
}

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi float64
		bad    bool
	}{
		{"5..12", 5, 12, false}, {"3", 3, 3, false}, {"1.5..", 1.5, math.Inf(1), false},
		{"..2", math.Inf(-1), 2, false}, {"..", 0, 0, true}, {"5..1", 0, 0, true}, {"x", 0, 0, true}, {"NaN", 0, 0, true},
	} {
		lo, hi, err := parseRange(tc.in, false)
		if tc.bad {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.lo, lo, tc.in)
		require.Equal(t, tc.hi, hi, tc.in)
	}
	lo, _, err := parseRange("1ms..", true)
	require.NoError(t, err)
	require.Equal(t, 1e6, lo)
}

// TestRewriteMatchesDatadriven checks that `iosim run --rewrite` writes every
// shipped scenario byte for byte as datadriven's -rewrite does, from a copy
// whose outputs are all wrong.
func TestRewriteMatchesDatadriven(t *testing.T) {
	files, err := Files([]string{"."})
	require.NoError(t, err)
	for _, path := range files {
		orig, err := os.ReadFile(path)
		require.NoError(t, err)
		f, err := os.Open(path)
		require.NoError(t, err)
		blocks, tail, err := readFile(path, f)
		f.Close()
		require.NoError(t, err)
		var stale strings.Builder
		for _, b := range blocks {
			stale.WriteString(b.pre)
			render(&stale, "stale\n\noutput\n")
		}
		stale.WriteString(tail)

		dir := t.TempDir()
		ours := filepath.Join(filepath.Dir(path), ".rewrite-ours-"+filepath.Base(path))
		theirs := filepath.Join(dir, filepath.Base(path))
		t.Cleanup(func() { os.Remove(ours) })
		for _, p := range []string{ours, theirs} {
			require.NoError(t, os.WriteFile(p, []byte(stale.String()), 0o644))
		}
		// ours lives beside the original so its relative paths resolve.
		r := RunFile(ours, RunOptions{Rewrite: true})
		got, err := os.ReadFile(ours)
		require.NoError(t, r.Err, path)
		require.NoError(t, err)
		require.Equal(t, string(orig), string(got), path)

		// datadriven's own rewrite of the same stale copy, with the same outputs.
		require.NoError(t, flag.Set("rewrite", "true"))
		i := 0
		datadriven.RunTest(t, theirs, func(t *testing.T, td *datadriven.TestData) string {
			out := blocks[i].td.Expected
			i++
			return out
		})
		require.NoError(t, flag.Set("rewrite", "false"))
		want, err := os.ReadFile(theirs)
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), path)
	}
}

// FuzzParseCalls: any input parses or is a MalformedError naming the file;
// a parsed program's cursors, one per thread, step through exactly the calls
// it counts.
func FuzzParseCalls(f *testing.F) {
	f.Add("open(\"/a\", O_RDONLY) = 3\nrepeat 3\nread(3, \"\", 4) = 4\ncpu(1us)\nend\nclose(3) = 0")
	f.Add("101 open(\"/a\", O_RDONLY) = 3\nrepeat 2\n101 cpu(5)\n102 write(3, \"ab\"..., 8) = 8\nrepeat 2\n101 close(3) = 0\nend\nend")
	f.Add("repeat 2\nend")
	f.Add("end\nrepeat x")
	f.Fuzz(func(t *testing.T, input string) {
		w, err := parseCalls("f.scen", 1, input)
		if err != nil {
			var me *MalformedError
			require.ErrorAs(t, err, &me)
			require.True(t, strings.HasPrefix(me.Pos, "f.scen:"), me.Pos)
			return
		}
		require.Positive(t, w.calls)
		if w.calls > 100_000 {
			return
		}
		var n int64
		for _, pid := range w.pids {
			c := newCursor(w.prog, pid)
			for x := c.next(); x != nil; x = c.next() {
				require.Equal(t, pid, x.pid)
				if x.ev != nil {
					n++
				}
			}
		}
		require.Equal(t, w.calls, n)
	})
}

// TestCallsProgram: repeat blocks nest, each thread steps through its own
// lines of a block, and a cpu line without a PID is the main thread's.
func TestCallsProgram(t *testing.T) {
	w, err := parseCalls("f.scen", 1, "101 open(\"/a\", O_RDONLY) = 3\nrepeat 2\ncpu(2us)\n102 read(3, \"\", 1) = 1\nrepeat 3\n101 lseek(3, 0, SEEK_SET) = 0\nend\nend")
	require.NoError(t, err)
	require.Equal(t, []int{101, 102}, w.pids)
	require.Equal(t, int64(1+2+6), w.calls)
	steps := func(pid int) []string {
		var out []string
		c := newCursor(w.prog, pid)
		for x := c.next(); x != nil; x = c.next() {
			if x.ev != nil {
				out = append(out, x.ev.Name)
			} else {
				out = append(out, fmt.Sprintf("cpu %d", x.cpu))
			}
		}
		return out
	}
	require.Equal(t, []string{"open", "cpu 2000", "lseek", "lseek", "lseek", "cpu 2000", "lseek", "lseek", "lseek"}, steps(101))
	require.Equal(t, []string{"read", "read"}, steps(102))
	require.Len(t, steps(-1), 11)
}

// TestFileTextIsNotChecked: a file's text is data, whatever its lines look
// like; the missing-`----` check leaves it alone.
func TestFileTextIsNotChecked(t *testing.T) {
	p := writeScen(t, "file /a\nhello\n\nrun A\n----\nfile /a: 13 bytes, written, text\n")
	r := RunFile(p, RunOptions{})
	require.True(t, r.Passed(), "%v %v", r.Err, r.Mismatches)
}

// TestAnswers: a run keeps what each comparison, equivalence check, crash
// exploration and expect found, with its position, in file order.
func TestAnswers(t *testing.T) {
	p := writeScen(t, `calls slow
open("/a", O_WRONLY|O_CREAT|O_SYNC, 0644) = 3
write(3, "x", 1) = 1
close(3) = 0
----

calls fast
open("/a", O_WRONLY|O_CREAT, 0644) = 3
write(3, "x", 1) = 1
close(3) = 0
----

compare slow fast by=calls
----

expect ratio=1
----

file /c
old
----

calls unsafe
open("/c.tmp", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3
write(3, "new\n", 4) = 4
close(3) = 0
rename("/c.tmp", "/c") = 0
----

crash unsafe models=posix checks=atomic-replace
----

stack
count
----

calls counted
close(9) = -1 EBADF (Bad file descriptor)
----

equiv counted
----
`)
	r := RunFile(p, RunOptions{Rewrite: true})
	require.NoError(t, r.Err)
	var got []string
	for _, a := range r.Answers {
		line := strings.TrimPrefix(a.Pos, p+":") + " " + a.Text
		if a.Claim {
			line += " (claim)"
		}
		got = append(got, line)
		for _, d := range a.Detail {
			got = append(got, "  "+d)
		}
	}
	// The crash's findings as its output states them, each a detail line
	// and its fix.
	text, err := os.ReadFile(p)
	require.NoError(t, err)
	n := strings.Count(string(text), "\nfinding ")
	require.Positive(t, n)
	require.Len(t, got, 4+2*n, "%q", got)
	require.Equal(t, "13 ratio (calls) slow/fast = 1.00", got[0])
	require.Equal(t, "16 ratio (calls) slow/fast = 1.00, want 1 (claim)", got[1])
	require.Regexp(t, fmt.Sprintf(`^30 crash unsafe: %d findings? \(\d+ of \d+ distinct states failed\)$`, n), got[2])
	for k := range n {
		require.Regexp(t, `^  ordering \(.*write /c\.tmp.*; persisted rename /c\.tmp -> /c\) under posix: \d+ states$`, got[3+2*k])
		require.Equal(t, "    fix: fsync the file before renaming it over the old one", got[4+2*k])
	}
	require.Equal(t, "41 equiv counted: 0 of 1 calls differ with the stack", got[3+2*n])
}

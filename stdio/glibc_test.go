package stdio_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/stdio"
	"github.com/iosim/iosim/vfs"
)

// A script is a sequence of library calls on one stream, one a line:
//
//	fopen MODE            f = fopen("t.txt", MODE)
//	open FLAGS            fd = open("t.txt", FLAGS, 0666), FLAGS as O_A|O_B
//	fdopen MODE           f = fdopen(fd, MODE)
//	setvbuf full|line|none [SIZE]   setvbuf(f, SIZE ? malloc(SIZE) : NULL, mode, SIZE)
//	fputs "TEXT"          fputs(TEXT, f), TEXT quoted as in Go
//	fputc "C"             fputc(C, f)
//	fwrite N              fwrite(N bytes of a..z repeated, 1, N, f)
//	write "TEXT"          write(fileno(f), TEXT, len)
//	fread N               fread(buf, 1, N, f)
//	fflush | fsync | fclose
type step struct {
	op   string
	args []string
	text string // the unquoted TEXT of fputs, fputc, write
	n    int    // N of fwrite, fread; SIZE of setvbuf
}

var openFlags = map[string]int{"O_RDONLY": unix.O_RDONLY, "O_WRONLY": unix.O_WRONLY, "O_RDWR": unix.O_RDWR,
	"O_CREAT": unix.O_CREAT, "O_TRUNC": unix.O_TRUNC, "O_APPEND": unix.O_APPEND}

func parseScript(input string) ([]step, error) {
	var out []step
	for k, line := range strings.Split(strings.TrimSpace(input), "\n") {
		op, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		s := step{op: op, args: strings.Fields(rest)}
		bad := func(want string) error { return fmt.Errorf("line %d: %q: want %s", k+1, line, want) }
		switch op {
		case "fopen", "fdopen", "open":
			if len(s.args) != 1 {
				return nil, bad(op + " and one argument")
			}
			if op == "open" {
				for _, f := range strings.Split(s.args[0], "|") {
					if _, ok := openFlags[f]; !ok {
						return nil, bad("open flags among O_RDONLY, O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND")
					}
				}
			}
		case "setvbuf":
			if len(s.args) < 1 || len(s.args) > 2 || !strings.Contains(" full line none ", " "+s.args[0]+" ") {
				return nil, bad("setvbuf full|line|none [SIZE]")
			}
			if len(s.args) == 2 {
				n, err := strconv.Atoi(s.args[1])
				if err != nil || n <= 0 {
					return nil, bad("a positive SIZE")
				}
				s.n = n
			}
		case "fputs", "fputc", "write":
			t, err := strconv.Unquote(strings.TrimSpace(rest))
			if err != nil || op == "fputc" && len(t) != 1 {
				return nil, bad(op + ` "TEXT"`)
			}
			s.text = t
		case "fwrite", "fread":
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 {
				return nil, bad(op + " N")
			}
			s.n = n
		case "fflush", "fsync", "fclose":
		default:
			return nil, bad("fopen, open, fdopen, setvbuf, fputs, fputc, fwrite, write, fread, fflush, fsync or fclose")
		}
		out = append(out, s)
	}
	return out, nil
}

func pattern(n int) []byte {
	b := make([]byte, n)
	for k := range b {
		b[k] = 'a' + byte(k%26)
	}
	return b
}

// runModel runs the script on the model, the file holding init bytes of
// the pattern first, and returns the recorded calls and the file's content.
func runModel(t *testing.T, script []step, init int) ([]string, string) {
	fs := vfs.New()
	p := sim.New(fs).Spawn()
	if init > 0 {
		fd, err := p.Open("/t.txt", unix.O_WRONLY|unix.O_CREAT, 0o644)
		require.NoError(t, err)
		_, err = p.Write(fd, pattern(init))
		require.NoError(t, err)
		require.NoError(t, p.Close(fd))
	}
	rec := &recorder{sys: p}
	var f *stdio.File
	fd := -1
	for _, s := range script {
		var err error
		switch s.op {
		case "fopen":
			f, err = stdio.Fopen(rec, "/t.txt", s.args[0])
		case "open":
			flags := 0
			for _, n := range strings.Split(s.args[0], "|") {
				flags |= openFlags[n]
			}
			fd, err = rec.Open("/t.txt", flags, 0o666)
		case "fdopen":
			f, err = stdio.Fdopen(rec, fd, s.args[0])
		case "setvbuf":
			err = f.Setvbuf(map[string]int{"full": stdio.IOFBF, "line": stdio.IOLBF, "none": stdio.IONBF}[s.args[0]], s.n)
		case "fputs":
			err = f.Fputs(s.text)
		case "fputc":
			err = f.Fputc(s.text[0])
		case "fwrite":
			_, err = f.Fwrite(pattern(s.n))
		case "write":
			_, err = rec.Write(f.Fileno(), []byte(s.text))
		case "fread":
			_, err = f.Fread(make([]byte, s.n))
		case "fflush":
			err = f.Fflush()
		case "fsync":
			err = p.Fsync(f.Fileno())
			rec.log = append(rec.log, "fsync = "+ret(0, err))
		case "fclose":
			err = f.Fclose()
		}
		require.NoError(t, err, "%s %v", s.op, s.args)
	}
	return rec.log, content(t, fs, "/t.txt")
}

// cProgram is the script as a C program on t.txt in the working directory.
func cProgram(script []step) string {
	var b strings.Builder
	b.WriteString(`#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static char pat[1 << 20], rbuf[1 << 20];
int main(void) {
	for (int i = 0; i < (int)sizeof pat; i++) pat[i] = 'a' + i % 26;
	FILE *f = 0;
	int fd = -1;
	(void)fd;
`)
	for _, s := range script {
		switch s.op {
		case "fopen":
			fmt.Fprintf(&b, "\tif (!(f = fopen(\"t.txt\", %q))) return 2;\n", s.args[0])
		case "open":
			fmt.Fprintf(&b, "\tif ((fd = open(\"t.txt\", %s, 0666)) < 0) return 2;\n", s.args[0])
		case "fdopen":
			fmt.Fprintf(&b, "\tif (!(f = fdopen(fd, %q))) return 2;\n", s.args[0])
		case "setvbuf":
			mode := map[string]string{"full": "_IOFBF", "line": "_IOLBF", "none": "_IONBF"}[s.args[0]]
			buf := "NULL"
			if s.n > 0 {
				buf = fmt.Sprintf("malloc(%d)", s.n)
			}
			fmt.Fprintf(&b, "\tif (setvbuf(f, %s, %s, %d)) return 2;\n", buf, mode, s.n)
		case "fputs":
			fmt.Fprintf(&b, "\tif (fputs(%q, f) == EOF) return 2;\n", s.text)
		case "fputc":
			fmt.Fprintf(&b, "\tif (fputc(%s, f) == EOF) return 2;\n", strconv.QuoteRune(rune(s.text[0])))
		case "fwrite":
			fmt.Fprintf(&b, "\tif (fwrite(pat, 1, %d, f) != %d) return 2;\n", s.n, s.n)
		case "write":
			fmt.Fprintf(&b, "\tif (write(fileno(f), %q, %d) != %d) return 2;\n", s.text, len(s.text), len(s.text))
		case "fread":
			fmt.Fprintf(&b, "\tfread(rbuf, 1, %d, f);\n", s.n)
		case "fflush":
			b.WriteString("\tif (fflush(f)) return 2;\n")
		case "fsync":
			b.WriteString("\tif (fsync(fileno(f))) return 2;\n")
		case "fclose":
			b.WriteString("\tif (fclose(f)) return 2;\n")
		}
	}
	b.WriteString("\treturn 0;\n}\n")
	// Go's quoting (%q, QuoteRune) is C's for the printable ASCII and the
	// \n the scripts use.
	return b.String()
}

// straceLine is a line of strace: name, arguments, result.
var straceLine = regexp.MustCompile(`^(\w+)\((.*)\)\s+= (.*)$`)

// runGlibc compiles and runs the script against the real glibc and kernel
// under strace, and returns the calls on t.txt reduced as recorder reduces
// them, and the file's content.
func runGlibc(t *testing.T, gcc, strace string, script []step, init int) ([]string, string) {
	dir := t.TempDir()
	src := filepath.Join(dir, "prog.c")
	require.NoError(t, os.WriteFile(src, []byte(cProgram(script)), 0o644))
	out, err := exec.Command(gcc, "-O0", "-o", filepath.Join(dir, "prog"), src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	if init > 0 {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "t.txt"), pattern(init), 0o644))
	}
	trace := filepath.Join(dir, "trace")
	cmd := exec.Command(strace, "-qq", "-s", "0", "-e", "signal=none", "-o", trace,
		"-e", "trace=openat,read,write,lseek,close,newfstatat,fstat,fcntl,fsync", "./prog")
	cmd.Dir = dir
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	got, err := os.ReadFile(filepath.Join(dir, "t.txt"))
	require.NoError(t, err)
	tf, err := os.Open(trace)
	require.NoError(t, err)
	defer tf.Close()
	var calls []string
	fd := ""
	sc := bufio.NewScanner(tf)
	for sc.Scan() {
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		line := m[0]
		name, args := m[1], strings.Split(m[2], ", ")
		res, _, _ := strings.Cut(m[3], " (")
		if errno := strings.Fields(res); len(errno) > 1 {
			res = errno[0] + " " + errno[1]
		}
		if name == "openat" && strings.Contains(line, `"t.txt"`) {
			fd = res
			calls = append(calls, "openat = 0")
			continue
		}
		if fd == "" || args[0] != fd {
			continue
		}
		last := args[len(args)-1]
		switch name {
		case "read", "write":
			calls = append(calls, fmt.Sprintf("%s %s = %s", name, last, res))
		case "lseek":
			calls = append(calls, fmt.Sprintf("lseek %s %s = %s", args[1], args[2], res))
		case "newfstatat", "fstat":
			calls = append(calls, "fstat = "+res)
		case "fcntl":
			if args[1] == "F_SETFL" {
				calls = append(calls, "fcntl F_SETFL = "+res)
			} else {
				calls = append(calls, "fcntl "+args[1])
			}
		case "close", "fsync":
			calls = append(calls, name+" = "+res)
		}
	}
	require.NoError(t, sc.Err())
	return calls, string(got)
}

// TestGlibc runs the scripts of testdata/glibc on the model; the expected
// output is the system calls the stream makes and the file's content. Where
// gcc and strace are installed, the same script also runs as a C program
// against the real glibc and kernel, which must make the same calls and
// leave the same content.
func TestGlibc(t *testing.T) {
	gcc, gerr := exec.LookPath("gcc")
	strace, serr := exec.LookPath("strace")
	real := gerr == nil && serr == nil
	if !real {
		t.Log("gcc or strace missing: the model alone is checked")
	}
	datadriven.RunTest(t, "testdata/glibc", func(t *testing.T, td *datadriven.TestData) string {
		if td.Cmd != "run" {
			td.Fatalf(t, "unknown command %q (want run)", td.Cmd)
		}
		init := 0
		if td.HasArg("init") {
			td.ScanArgs(t, "init", &init)
		}
		script, err := parseScript(td.Input)
		if err != nil {
			td.Fatalf(t, "%v", err)
		}
		calls, got := runModel(t, script, init)
		if real {
			rc, rgot := runGlibc(t, gcc, strace, script, init)
			require.Equal(t, rc, calls, "%s: the model's calls differ from glibc's", td.Pos)
			require.True(t, rgot == got, "%s: the model's file differs from glibc's:\n%q\n%q", td.Pos, rgot, got)
		}
		if len(got) > 60 {
			got = fmt.Sprintf("%d bytes", len(got))
		} else {
			got = strconv.Quote(got)
		}
		return strings.Join(calls, "\n") + "\ncontent " + got + "\n"
	})
}

// TestGlibcFailedFlush compares TestFailedFlushLosesBytes's model with the
// real glibc writing to /dev/full (every write fails with ENOSPC): what is
// buffered before and after the failed fflush, and what fclose returns.
func TestGlibcFailedFlush(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed")
	}
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "full.c")
	require.NoError(t, os.WriteFile(src, []byte(`#include <errno.h>
#include <stdio.h>
#include <stdio_ext.h>
int main(void) {
	FILE *f = fopen("/dev/full", "w");
	if (!f) return 2;
	fputs("0123456789", f);
	size_t before = __fpending(f);
	int r = fflush(f), e = errno;
	size_t after = __fpending(f);
	int failed = ferror(f) != 0;
	int closed = fclose(f);
	printf("%zu %d %d %zu %d %d\n", before, r, e == ENOSPC, after, failed, closed);
	return 0;
}
`), 0o644))
	out, err := exec.Command(gcc, "-o", filepath.Join(dir, "full"), src).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(filepath.Join(dir, "full")).Output()
	require.NoError(t, err)

	_, p, _ := fullDevice()
	f, err := stdio.Fopen(p, "/full", "w")
	require.NoError(t, err)
	require.NoError(t, f.Fputs("0123456789"))
	before := f.Buffered()
	ferr := f.Fflush()
	r := 0
	if ferr != nil {
		r = -1
	}
	after, failed := f.Buffered(), f.Ferror()
	closed := 0
	if f.Fclose() != nil {
		closed = -1
	}
	model := fmt.Sprintf("%d %d %d %d %d %d\n", before, r, b2i(ferr == unix.ENOSPC), after, b2i(failed), closed)
	require.Equal(t, string(out), model)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

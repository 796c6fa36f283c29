package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/strace"
)

const traces = "../testdata/traces/"

// TestBundledTracesVerify is the acceptance test of iosim replay: every recorded
// trace replays with no divergence, every line parses, and the count of system
// calls is the one the traces' README gives.
func TestBundledTracesVerify(t *testing.T) {
	cases := []struct {
		files []string
		calls int64
	}{
		{[]string{"oraus.seek"}, 2240},
		{[]string{"oraus.seq"}, 1440},
		{[]string{"oraus.curend"}, 4440},
		{[]string{"syncwrite.buffered"}, 57},
		{[]string{"syncwrite.osync"}, 57},
		{[]string{"dd.oflag-sync"}, 90},
		{[]string{"dd.oflag-direct"}, 90},
		{[]string{"dd.conv-fsync"}, 74},
		{[]string{"commit.fsync"}, 242},
		{[]string{"commit.fdatasync"}, 242},
		{[]string{"sqlite.delete-full"}, 2128},
		{[]string{"sqlite.delete-normal"}, 2077},
		{[]string{"sparse.seekdata"}, 111},
		{[]string{"aio.dbwr"}, 176},
		{[]string{"fdtable.basic"}, 127},
		{[]string{"fdtable.namespace"}, 188},
		{[]string{"git.init-add-commit"}, 2321},
		{[]string{"tar.create"}, 945},
		{[]string{"python.atomic-replace"}, 431},
		{[]string{"pg.backend"}, 567},
		{[]string{"threads.f"}, 292},
		{[]string{"threads.ffpid25447", "threads.ffpid25448", "threads.ffpid25449", "threads.ffpid25450"}, 292},
		// One file of the -ff set alone: the other threads' fds are not in it.
		{[]string{"threads.ffpid25447"}, 71},
		{[]string{"threads.ffpid25448"}, 90},
		{[]string{"threads.ffpid25449"}, 90},
		{[]string{"threads.ffpid25450"}, 41},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.files, "+"), func(t *testing.T) {
			var files []string
			for _, f := range tc.files {
				files = append(files, traces+f+".strace")
			}
			rep, err := Run(files, Options{Verify: true})
			require.NoError(t, err)
			require.Zero(t, rep.ParseErrors)
			for _, d := range rep.DivergenceList {
				t.Error(d)
			}
			require.Zero(t, rep.Divergences)
			require.Equal(t, tc.calls, rep.Calls, "system calls in the trace")
			require.Positive(t, rep.Verified, "calls whose results were compared")
			require.Positive(t, rep.KernelCalls)
		})
	}
}

// mutate copies a bundled trace into a temp dir with line no (1-based) rewritten.
func mutate(t *testing.T, name string, no int, edit func(string) string) string {
	t.Helper()
	data, err := os.ReadFile(traces + name + ".strace")
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	changed := edit(lines[no-1])
	require.NotEqual(t, lines[no-1], changed, "the mutation must change the line")
	lines[no-1] = changed
	p := filepath.Join(t.TempDir(), name+".strace")
	require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644))
	return p
}

// TestVerifyFindsDivergences shows that --verify is not vacuous: a trace whose
// recorded result was altered is reported at that line, with what differs.
func TestVerifyFindsDivergences(t *testing.T) {
	cases := []struct {
		name  string
		trace string
		line  int
		edit  func(string) string
		what  string
	}{
		{"read count", "oraus.seek", 49, func(l string) string { return strings.Replace(l, "= 512", "= 511", 1) }, "return value"},
		{"errno", "oraus.curend", 55, func(l string) string {
			return strings.Replace(l, "EINVAL (Invalid argument)", "ENXIO (No such device or address)", 1)
		}, "result"},
		{"bytes of a file the trace wrote", "fdtable.basic", 76, func(l string) string { return strings.Replace(l, `"PPPP"`, `"PPQP"`, 1) }, "byte at file offset 102"},
		{"hole read as zeros", "fdtable.basic", 77, func(l string) string { return strings.Replace(l, `"\0\0\0\0PPPP"`, `"\0\1\0\0PPPP"`, 1) }, "byte at file offset 97"},
		{"stat size", "fdtable.namespace", 44, func(l string) string { return strings.Replace(l, "st_size=10,", "st_size=11,", 1) }, "st_size"},
		{"success that the model refuses", "fdtable.basic", 32, func(l string) string {
			return strings.Replace(l, "= -1 EBADF (Bad file descriptor)", "= 0", 1)
		}, "result"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := mutate(t, tc.trace, tc.line, tc.edit)
			rep, err := Run([]string{p}, Options{Verify: true})
			require.NoError(t, err)
			require.NotZero(t, rep.Divergences)
			d := rep.DivergenceList[0]
			require.Equal(t, tc.line, d.Line, "%s", d)
			require.Equal(t, p, d.File)
			require.Contains(t, d.What, tc.what, "%s", d)
		})
	}
}

func writeTrace(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.strace")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestMalformedLine(t *testing.T) {
	p := writeTrace(t, "openat(AT_FDCWD, \"x\", O_RDONLY) = -1 ENOENT (No such file or directory)\nthis is not strace\nclose(3) = -1 EBADF (Bad file descriptor)\n")
	_, err := Run([]string{p}, Options{Verify: true})
	require.Error(t, err)
	var se *strace.SyntaxError
	require.ErrorAs(t, err, &se)
	require.Equal(t, p, se.File)
	require.Equal(t, 2, se.Line)

	rep, err := Run([]string{p}, Options{Verify: true, KeepGoing: true})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.ParseErrors)
	require.EqualValues(t, 2, rep.Calls)
	require.Zero(t, rep.Divergences)
}

// TestHostileTraces: traces that claim what Linux would never answer get Linux's
// answer and a divergence, in bounded memory, never a panic.
func TestHostileTraces(t *testing.T) {
	t.Run("write at 2^62", func(t *testing.T) {
		p := writeTrace(t, "openat(AT_FDCWD, \"f\", O_RDWR|O_CREAT, 0644) = 3\npwrite64(3, \"x\", 1, 4611686018427387904) = 1\n")
		rep, err := Run([]string{p}, Options{Verify: true})
		require.NoError(t, err)
		require.EqualValues(t, 1, rep.Divergences)
		require.Equal(t, "-1 EFBIG", rep.DivergenceList[0].Simulated)
	})
	t.Run("many opens", func(t *testing.T) {
		var b strings.Builder
		for i := 0; i < 3000; i++ {
			fmt.Fprintf(&b, "openat(AT_FDCWD, \"f\", O_RDONLY|O_CREAT, 0644) = %d\n", 3+i)
		}
		rep, err := Run([]string{writeTrace(t, b.String())}, Options{Verify: true, MaxDivergences: 5})
		require.NoError(t, err)
		require.EqualValues(t, 3000-1021, rep.Divergences, "RLIMIT_NOFILE is 1024: fds 3..1023 open")
		require.Len(t, rep.DivergenceList, 5)
		require.Equal(t, "-1 EMFILE", rep.DivergenceList[0].Simulated)
	})
	t.Run("huge read count", func(t *testing.T) {
		p := writeTrace(t, "openat(AT_FDCWD, \"f\", O_RDWR|O_CREAT, 0644) = 3\nread(3, \"\", 1099511627776) = 0\n")
		rep, err := Run([]string{p}, Options{Verify: true})
		require.NoError(t, err)
		require.Zero(t, rep.Divergences)
	})
	t.Run("long line", func(t *testing.T) {
		p := writeTrace(t, "write(1, \""+strings.Repeat("a", 3<<20)+"\", 3145728) = 3145728\n")
		_, err := Run([]string{p}, Options{Verify: true, MaxLineLen: 1 << 20})
		require.Error(t, err)
		require.Contains(t, err.Error(), p+":1")
	})
	t.Run("resumed without start", func(t *testing.T) {
		p := writeTrace(t, "123 <... read resumed>\"abc\", 3) = 3\n")
		_, err := Run([]string{p}, Options{Verify: true})
		require.Error(t, err)
		require.Contains(t, err.Error(), p+":1")
		rep, err := Run([]string{p}, Options{Verify: true, KeepGoing: true})
		require.NoError(t, err)
		require.EqualValues(t, 1, rep.ParseErrors)
	})
	t.Run("creators in a cycle", func(t *testing.T) {
		for _, lines := range [][]string{{
			`100 execve("/bin/x", ["x"], []) = 0`,
			`300 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=200, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---`,
			`200 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=300, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---`,
			`300 close(5) = 0`,
		}, {
			`100 execve("/bin/x", ["x"], []) = 0`,
			`300 clone(child_stack=NULL, flags=SIGCHLD) = 400`,
			`400 clone(child_stack=NULL, flags=SIGCHLD) = 300`,
			`400 close(5) = 0`,
		}} {
			// (a stack overflow before: no recover could catch it)
			rep, err := Run([]string{writeTrace(t, strings.Join(append(lines, ""), "\n"))}, Options{Verify: true})
			require.NoError(t, err)
			require.Positive(t, rep.Replayed)
		}
	})
	t.Run("huge fd numbers", func(t *testing.T) {
		p := writeTrace(t, strings.Join([]string{
			`openat(AT_FDCWD, "f", O_RDONLY|O_CREAT, 0644) = 1000000000`, // above NR_OPEN: no process has it
			`openat(AT_FDCWD, "g", O_RDONLY|O_CREAT, 0644) = 1000000`,    // below: a higher RLIMIT_NOFILE
			`close(1000000) = 0`,
			``,
		}, "\n"))
		rep, err := Run([]string{p}, Options{Verify: true})
		require.NoError(t, err)
		require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
		require.Equal(t, 1, rep.DivergenceList[0].Line)
	})
	t.Run("unknown syscall", func(t *testing.T) {
		p := writeTrace(t, "frobnicate(1, 2) = 0\nclose(7) = -1 EBADF (Bad file descriptor)\n")
		rep, err := Run([]string{p}, Options{Verify: true})
		require.NoError(t, err)
		require.EqualValues(t, 1, rep.NotModelled["frobnicate"])
		require.Zero(t, rep.Divergences)
	})
}

// TestInference: the world before the trace is rebuilt from recorded results.
func TestInference(t *testing.T) {
	p := writeTrace(t, strings.Join([]string{
		`openat(AT_FDCWD, "/etc/data/msg.bin", O_RDONLY) = 3`,
		`newfstatat(3, "", {st_mode=S_IFREG|0640, st_size=100, ...}, AT_EMPTY_PATH) = 0`,
		`read(3, "hello", 5) = 5`,
		`lseek(3, 0, SEEK_END) = 100`,
		`read(3, "", 10) = 0`,
		`pread64(3, "hel", 3, 0) = 3`,
		`openat(AT_FDCWD, "/etc/data", O_RDONLY|O_DIRECTORY) = 4`,
		`openat(AT_FDCWD, "/etc/gone", O_RDONLY) = -1 ENOENT (No such file or directory)`,
		``,
	}, "\n"))
	rep, err := Run([]string{p}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.GreaterOrEqual(t, rep.InferredPaths, 3) // /etc, /etc/data, /etc/data/msg.bin
}

// TestUnknownBytesAreNotCompared: bytes a write shows only in part (strace -s) are
// unknown, so a later read of them is not a divergence, but shown bytes are.
func TestUnknownBytesAreNotCompared(t *testing.T) {
	base := `openat(AT_FDCWD, "f", O_RDWR|O_CREAT, 0644) = 3` + "\n" +
		`write(3, "abcd"..., 8) = 8` + "\n" +
		`pread64(3, %s, 8, 0) = 8` + "\n"
	rep, err := Run([]string{writeTrace(t, fmt.Sprintf(base, `"abcdWXYZ"`))}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	rep, err = Run([]string{writeTrace(t, fmt.Sprintf(base, `"abXdWXYZ"`))}, Options{Verify: true})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.Divergences)
	require.Contains(t, rep.DivergenceList[0].What, "offset 2")
}

func TestStack(t *testing.T) {
	_, err := Run([]string{traces + "oraus.seek.strace"}, Options{Stack: []string{"nosuchlayer"}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "nosuchlayer")
}

var _ = syscall.EBADF

// TestRootSeedsTheModel: with Root, files come from a host directory (read only),
// and their bytes are checked against what the trace read.
func TestRootSeedsTheModel(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	cfg := filepath.Join(root, "etc", "app.conf")
	require.NoError(t, os.WriteFile(cfg, []byte("hello world"), 0o644))
	trace := fmt.Sprintf("openat(AT_FDCWD, %q, O_RDONLY) = 3\nread(3, \"hello world\", 64) = 11\nread(3, \"\", 64) = 0\nclose(3) = 0\n", cfg)
	p := writeTrace(t, trace)
	rep, err := Run([]string{p}, Options{Verify: true, Root: root})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.Zero(t, rep.InferredPaths, "the root provided everything")

	require.NoError(t, os.WriteFile(cfg, []byte("jello world"), 0o644))
	rep, err = Run([]string{p}, Options{Verify: true, Root: root})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.Divergences)
	require.Contains(t, rep.DivergenceList[0].What, "byte at file offset 0")
	data, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Equal(t, "jello world", string(data), "replay never writes to the host")
}

// TestStackEndToEnd: the seed-000 cache done right serves the recorded loop with
// no divergence and almost no kernel calls; the published one is caught where it
// goes wrong.
func TestStackEndToEnd(t *testing.T) {
	plain, err := Run([]string{traces + "oraus.seek.strace"}, Options{Verify: true})
	require.NoError(t, err)
	cached, err := Run([]string{traces + "oraus.seek.strace"}, Options{Verify: true, Stack: []string{"filecache:path=oraus.msb"}})
	require.NoError(t, err)
	require.Zero(t, cached.Divergences, "%v", cached.DivergenceList)
	require.Equal(t, plain.Replayed, cached.Replayed)
	require.Less(t, cached.KernelCalls*20, plain.KernelCalls, "filecache: %d kernel calls, plain: %d", cached.KernelCalls, plain.KernelCalls)

	for _, tr := range []string{"oraus.seq", "oraus.curend"} {
		rep, err := Run([]string{traces + tr + ".strace"}, Options{Verify: true, Stack: []string{"oraus:path=oraus.msb"}})
		require.NoError(t, err)
		require.NotZero(t, rep.Divergences, tr)
		first := rep.DivergenceList[0]
		require.Regexp(t, `^(\S+ )*\s*(read|lseek)\(`, strings.TrimLeft(first.Call, "0123456789:. "), "%s", first)
	}
}

// TestCloseRacingOpen: another thread's close that completes while an open is in
// flight may or may not have freed its fd when the open took one (strace prints
// the open's start before the close, its result after), so the recorded higher fd
// is followed, not a divergence. Without the overlap it is one.
func TestCloseRacingOpen(t *testing.T) {
	head := []string{
		// the whole process is traced: it starts, and the trace has all its calls
		`100 execve("/bin/prog", ["prog"], 0x7ffc0 /* 1 var */) = 0`,
		`100 brk(NULL) = 0x55e94258b000`,
		`100 openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 3`,
		`100 clone(child_stack=0x7f, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM) = 101`,
	}
	tail := []string{
		`101 write(4, "x", 1) = 1`,
		`100 fstat(3, {st_mode=S_IFREG|0644, st_size=1, ...}) = -1 EBADF (Bad file descriptor)`,
		``,
	}
	racing := append(append(append([]string{}, head...),
		`101 openat(AT_FDCWD, "b", O_WRONLY|O_CREAT, 0644 <unfinished ...>`,
		`100 close(3) = 0`,
		`101 <... openat resumed>) = 4`,
	), tail...)
	rep, err := Run([]string{writeTrace(t, strings.Join(racing, "\n"))}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)

	ordered := append(append(append([]string{}, head...),
		`100 close(3) = 0`,
		`101 openat(AT_FDCWD, "b", O_WRONLY|O_CREAT, 0644) = 4`,
	), tail...)
	rep, err = Run([]string{writeTrace(t, strings.Join(ordered, "\n"))}, Options{Verify: true})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
	require.Contains(t, rep.DivergenceList[0].Call, "openat")
}

// TestOpenTakesFdOfCloseInFlight: a close printed as <unfinished ...> has freed
// its fd as soon as it entered the kernel, so another thread's open that
// completes before the close's result may return that fd. The replay closes it
// then (the recorded close is not run again, its result is still checked), and
// the new file is the one at the fd afterwards.
func TestOpenTakesFdOfCloseInFlight(t *testing.T) {
	trace := func(closing string) string {
		return strings.Join([]string{
			`100 openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 3`,
			`100 openat(AT_FDCWD, "c", O_WRONLY|O_CREAT, 0644) = 4`,
			`100 clone(child_stack=0x7f, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM) = 101`,
			`100 close(` + closing + ` <unfinished ...>`,
			`101 openat(AT_FDCWD, "b", O_WRONLY|O_CREAT, 0644) = 3`,
			`100 <... close resumed>) = 0`,
			`101 write(3, "xy", 2) = 2`,
			`100 fstat(3, {st_mode=S_IFREG|0644, st_size=2, ...}) = 0`,
			`100 newfstatat(AT_FDCWD, "a", {st_mode=S_IFREG|0644, st_size=0, ...}, 0) = 0`,
			`101 close(3) = 0`,
			`100 close(3) = -1 EBADF (Bad file descriptor)`,
			``,
		}, "\n")
	}
	rep, err := Run([]string{writeTrace(t, trace("3"))}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.EqualValues(t, 10, rep.Replayed) // the close's two lines are one call

	// A close of another fd in flight leaves fd 3 taken: the open's 3 diverges.
	rep, err = Run([]string{writeTrace(t, trace("4"))}, Options{Verify: true})
	require.NoError(t, err)
	require.NotZero(t, rep.Divergences)
	require.Equal(t, 5, rep.DivergenceList[0].Line)
	require.Equal(t, "return value", rep.DivergenceList[0].What)
}

// TestUntracedTasks: the tasks a trace does not show may take and free fds of
// the table they share with the traced ones, so fd numbers that the lowest free
// one does not explain are not divergences there; where the trace shows every
// task, they are.
func TestUntracedTasks(t *testing.T) {
	// the program starts, and the trace has all its calls
	exec := "100 execve(\"/bin/prog\", [\"prog\"], 0x7ffc0 /* 1 var */) = 0\n100 brk(NULL) = 0x55e94258b000"
	thread := `100 clone(child_stack=0x7f, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM) = 101`
	// fd 3 is made and freed by the trace: not an fd inherited from before it
	opened, closed := `100 openat(AT_FDCWD, "x", O_RDONLY|O_CREAT, 0644) = 3`, `100 close(3) = 0`
	cases := []struct {
		name  string
		lines []string
		lineN int // the line of the one divergence, or 0 for none
	}{
		{"a thread traced without -f", []string{
			exec, opened, closed, thread,
			`100 openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 4`, // 101 took 3
			`100 openat(AT_FDCWD, "b", O_WRONLY|O_CREAT, 0644) = 3`, // and closed it
			`100 write(3, "b", 1) = 1`,
			`100 write(4, "a", 1) = 1`,
		}, 0},
		{"an fd that an untraced thread opened", []string{
			exec, opened, closed, thread,
			`100 write(3, "z", 1) = 1`, // the thread's fd, its number passed in memory
		}, 0},
		{"the same thread traced", []string{
			exec, opened, closed, thread,
			`101 getpid() = 100`,
			`100 openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 4`,
		}, 7},
		{"before the thread", []string{
			exec, opened, closed,
			`100 openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 4`,
			thread,
		}, 5},
		{"attached to the threads of a process", []string{
			// strace -f -p: no task's creation is in the trace; they share
			// one fd table, so 201 writes to the file 200 opened.
			`200 openat(AT_FDCWD, "a", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3`,
			`201 pwrite64(3, "shared", 6, 0) = 6`,
			`201 openat(AT_FDCWD, "b", O_WRONLY|O_CREAT, 0644) = 4`,
			`200 pread64(3, "shared", 64, 0) = 6`,
			`202 openat(AT_FDCWD, "c", O_WRONLY|O_CREAT, 0644) = 7`, // untraced threads hold 5 and 6
		}, 0},
		{"attached to two processes (strace -p A -p B)", []string{
			`200 openat(AT_FDCWD, "a", O_RDONLY|O_CREAT, 0644) = 3`,
			`300 openat(AT_FDCWD, "a", O_RDONLY|O_CREAT, 0644) = 3`, // its own fd table
			`200 close(3) = 0`,
			`300 close(3) = 0`,
			`200 exit_group(0) = ?`,
			`200 +++ exited with 0 +++`,
			`300 exit_group(0) = ?`,
			`300 +++ exited with 0 +++`,
		}, 0},
		{"attached: a byte read back wrong", []string{
			`200 openat(AT_FDCWD, "a", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3`,
			`201 pwrite64(3, "shared", 6, 0) = 6`,
			`200 pread64(3, "sharex", 64, 0) = 6`,
		}, 3},
		{"attached: an fd the traced threads hold", []string{
			`201 close(5) = 0`, // an fd from before the attach: the trace shows closes
			`200 openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 3`,
			`201 openat(AT_FDCWD, "b", O_WRONLY|O_CREAT, 0644) = 3`,
		}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTrace(t, strings.Join(append(tc.lines, ""), "\n"))
			rep, err := Run([]string{p}, Options{Verify: true, Cwd: "/w"})
			require.NoError(t, err)
			if tc.lineN == 0 {
				require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
				require.Positive(t, rep.Verified)
				require.NotEmpty(t, rep.Notes, "what replay took as recorded")
				return
			}
			require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
			require.Equal(t, tc.lineN, rep.DivergenceList[0].Line, "%v", rep.DivergenceList[0])
		})
	}
}

// TestTraceOfSomeCalls: a trace recorded with -e trace=%file shows no close and
// no write, so fd numbers and sizes that those calls explain are taken as
// recorded; the same lines in a trace of every call are divergences.
func TestTraceOfSomeCalls(t *testing.T) {
	lines := []string{
		`100 execve("/bin/prog", ["prog"], 0x7ffc0 /* 1 var */) = 0`,
		`100 openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 3`,
		`100 openat(AT_FDCWD, "b", O_RDONLY|O_CREAT, 0644) = 3`,                        // a close between
		`100 newfstatat(AT_FDCWD, "a", {st_mode=S_IFREG|0644, st_size=5, ...}, 0) = 0`, // a write before
		`100 newfstatat(AT_FDCWD, "b", {st_mode=S_IFREG|0600, st_size=0, ...}, 0) = 0`, // a chmod before
		`100 read(3, "data", 4096) = 4`,                                                // a write before
		``,
	}
	rep, err := Run([]string{writeTrace(t, strings.Join(lines, "\n"))}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.EqualValues(t, 5, rep.Verified) // the opens, the stats and the read
	require.Len(t, rep.Notes, 2)
	require.Contains(t, rep.Notes[0], "some calls only")
	require.Contains(t, rep.Notes[1], "2 file(s) opened with O_CREAT", "not promoted: writes the trace does not show explain the size")

	// -e trace=%desc: no fork, no execve. The child's fd 3 (a copy of the
	// parent's, FD_CLOEXEC) is gone after the exec the trace does not show.
	desc := []string{
		`100 openat(AT_FDCWD, "x", O_RDONLY|O_CREAT|O_CLOEXEC, 0644) = 3`,
		`100 close(4) = 0`,
		`101 fcntl(3, F_GETFD) = -1 EBADF (Bad file descriptor)`,
		`101 openat(AT_FDCWD, "y", O_RDONLY|O_CREAT, 0644) = 3`,
		`102 openat(AT_FDCWD, "z", O_RDONLY|O_CREAT, 0644) = 3`, // a second child, after its exec
		`102 close(3) = 0`,
		`102 openat(AT_FDCWD, "x", O_RDONLY|O_CLOEXEC, 0644) = 3`,
		`103 close(3) = -1 EBADF (Bad file descriptor)`, // a third child: close is the call that finds it gone
		`100 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=103, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---`,
		`100 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=102, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---`,
		`100 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=101, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---`,
		``,
	}
	rep, err = Run([]string{writeTrace(t, strings.Join(desc, "\n"))}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)

	// A write to an fd opened read-only fails with EBADF by itself: no exec
	// is inferred, and the bytes after it are still compared.
	rep = requireDivergences(t, []string{
		`100 openat(AT_FDCWD, "/w/a", O_RDWR|O_CREAT, 0644) = 3`,
		`100 write(3, "hello", 5) = 5`,
		`100 close(3) = 0`,
		`100 openat(AT_FDCWD, "/w/a", O_RDONLY|O_CLOEXEC) = 3`,
		`101 close(9) = 0`,
		`100 write(3, "x", 1) = -1 EBADF (Bad file descriptor)`,
		`100 pread64(3, "jello", 5, 0) = 5`,
		`100 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=101, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---`,
	}, 1)
	require.Equal(t, 7, rep.DivergenceList[0].Line)

	all := append([]string{lines[0], `100 brk(NULL) = 0x55e94258b000`}, lines[1:]...)
	rep, err = Run([]string{writeTrace(t, strings.Join(all, "\n"))}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	// In a trace of every call, a's size shows that the O_CREAT open found
	// a file, as b's read does (creat.go): only the fd and b's mode diverge.
	require.EqualValues(t, 2, rep.Divergences, "%v", rep.DivergenceList)
	require.Equal(t, 4, rep.DivergenceList[0].Line)
	require.Equal(t, 6, rep.DivergenceList[1].Line)
	require.Equal(t, "st_mode", rep.DivergenceList[1].What)
	require.Len(t, factNotesOf(rep), 2)
	require.Contains(t, rep.Notes[0], "/w/a, opened with O_CREAT at line 3, existed before the trace: the call shows its size, 5")
	require.Contains(t, rep.Notes[1], "/w/b, opened with O_CREAT at line 4, existed before the trace: the call shows 4 byte(s) read")
}

// TestReadlinkTargetNotShown: with -s 0 a readlink shows no target. At a path
// that replay inferred as a file from an execve (which follows links) the
// model cannot know the link: nothing to compare. At a file the trace made, a
// successful readlink is a divergence.
func TestReadlinkTargetNotShown(t *testing.T) {
	start := []string{
		`100 execve("/usr/bin/py", ["py"], 0x7ffc0 /* 1 var */) = 0`,
		`100 brk(NULL) = 0x55e94258b000`,
	}
	for _, tc := range []struct {
		name     string
		lines    []string
		diverged int
	}{
		{"a path the model does not have", []string{`100 readlink("/usr/bin/py", ""..., 4096) = 10`}, 0},
		{"a path inferred as a file", []string{
			`100 newfstatat(AT_FDCWD, "/usr/bin/py", {st_mode=S_IFREG|0755, st_size=100, ...}, 0) = 0`,
			`100 readlink("/usr/bin/py", ""..., 4096) = 10`,
		}, 0},
		{"a path in a directory the trace made", []string{
			`100 mkdir("/w/fresh", 0755) = 0`,
			`100 readlink("/w/fresh/zz", "/a/very/long/target/path/that/st"..., 4096) = 46`,
		}, 1},
		{"a path the trace removed", []string{
			`100 unlink("/w/g") = 0`,
			`100 readlink("/w/g", ""..., 4096) = 10`,
		}, 1},
		{"target shown", []string{`100 readlink("/usr/bin/py", "python3.11", 4096) = 10`}, 0},
		{"a file the trace made", []string{
			`100 openat(AT_FDCWD, "/w/f", O_WRONLY|O_CREAT, 0644) = 3`,
			`100 readlink("/w/f", ""..., 4096) = 10`,
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireDivergences(t, append(append([]string{}, start...), tc.lines...), tc.diverged)
		})
	}
}

// TestUntimedFFThreads: -ff files without timestamps do not tell in which
// order two threads took and freed their fds, so an fd that the other thread
// may have held is one Linux could have returned; in one file the order is
// known.
func TestUntimedFFThreads(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(append(lines, ""), "\n")), 0o644))
		return p
	}
	start := []string{
		`execve("/bin/prog", ["prog"], 0x7ffc0 /* 1 var */) = 0`,
		`brk(NULL) = 0x55e94258b000`,
		`openat(AT_FDCWD, "x", O_RDONLY|O_CREAT, 0644) = 3`,
		`close(3) = 0`,
		`clone(child_stack=0x7f, flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM) = 101`,
	}
	threadLines := []string{
		`openat(AT_FDCWD, "b", O_WRONLY|O_CREAT, 0644) = 3`,
		`close(3) = 0`,
		`openat(AT_FDCWD, "c", O_WRONLY|O_CREAT, 0644) = 4`, // the main thread held 3 by then
	}
	main := write("t.100", append(append([]string{}, start...), `openat(AT_FDCWD, "a", O_WRONLY|O_CREAT, 0644) = 3`)...)
	thread := write("t.101", threadLines...)
	rep, err := Run([]string{main, thread}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.EqualValues(t, 6, rep.Verified)
	require.Len(t, rep.Notes, 2)
	require.Contains(t, rep.Notes[0], "no timestamps")
	require.Contains(t, rep.Notes[1], "4 file(s) opened with O_CREAT")

	// One file: the thread's last open came when 3 was free.
	var one []string
	for _, l := range start {
		one = append(one, "100 "+l)
	}
	for _, l := range threadLines {
		one = append(one, "101 "+l)
	}
	rep, err = Run([]string{write("one.strace", one...)}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
	require.Equal(t, 8, rep.DivergenceList[0].Line)
}

// TestWorldInference covers what replay infers and tracks beside the model's
// own state: an unlink of a dangling symlink infers no target, and bytes
// copied by copy_file_range or sendfile are as unknown (-s cut them) as the
// ones they were copied from.
func TestWorldInference(t *testing.T) {
	start := []string{
		`100 execve("/bin/prog", ["prog"], 0x7ffc0 /* 1 var */) = 0`,
		`100 brk(NULL) = 0x55e94258b000`,
	}
	for _, tc := range []struct {
		name     string
		lines    []string
		diverged int
	}{
		{"unlink of a dangling symlink", []string{
			`100 mkdir("d", 0755) = 0`,
			`100 openat(AT_FDCWD, "d/f1", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
			`100 close(3) = 0`,
			`100 symlinkat("f1", AT_FDCWD, "d/link") = 0`,
			`100 unlink("d/f1") = 0`,
			`100 unlink("d/link") = 0`,
			`100 rmdir("d") = 0`,
		}, 0},
		{"copy_file_range of unknown bytes", []string{
			`100 openat(AT_FDCWD, "a", O_RDWR|O_CREAT, 0644) = 3`,
			`100 write(3, "0123"..., 8192) = 8192`, // -s 4: 8188 bytes unknown
			`100 openat(AT_FDCWD, "b", O_RDWR|O_CREAT, 0644) = 4`,
			`100 copy_file_range(3, [0], 4, [100], 8192, 0) = 8192`,
			`100 pread64(4, "\0\0\0\0000123WXYZ", 12, 96) = 12`, // a hole, then a's shown bytes and unknown ones
			`100 sendfile(4, 3, [4], 16) = 16`,                  // at b's offset 0
			`100 pread64(4, "xyzw", 4, 0) = 4`,
		}, 0},
		{"stat of a device", []string{
			`100 newfstatat(AT_FDCWD, "/dev/null", {st_mode=S_IFCHR|0666, st_rdev=makedev(0x1, 0x3), ...}, 0) = 0`,
		}, 0},
		{"an access ACL sets the mode (cp -a)", []string{
			`100 openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_EXCL, 0600) = 3`,
			`100 fsetxattr(3, "system.posix_acl_access", "\2\0\0\0\1\0\7\0\377\377\377\377\4\0\5\0\377\377\377\377 \0\5\0\377\377\377\377", 28, 0) = 0`,
			`100 removexattr("f", "system.posix_acl_default") = 0`,
			`100 newfstatat(AT_FDCWD, "f", {st_mode=S_IFREG|0755, st_size=0, ...}, 0) = 0`,
		}, 0},
		{"a user attribute (cp -a)", []string{
			`100 openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_EXCL, 0600) = 3`,
			`100 fsetxattr(3, "user.foo", "bar", 3, 0) = 0`,
			`100 removexattr("f", "user.foo") = 0`,
		}, 0},
		{"an ACL that -s 0 hides, then a chmod", []string{
			`100 openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_EXCL, 0600) = 3`,
			`100 fsetxattr(3, ""..., ""..., 28, 0) = 0`,
			`100 newfstatat(AT_FDCWD, "f", {st_mode=S_IFREG|0755, st_size=0, ...}, 0) = 0`, // unknown bits
			`100 fchmod(3, 0600) = 0`,
			`100 newfstatat(AT_FDCWD, "f", {st_mode=S_IFREG|0644, st_size=0, ...}, 0) = 0`, // known again: diverges
		}, 1},
		{"a shared writable mapping", []string{
			`100 openat(AT_FDCWD, "f", O_RDWR|O_CREAT, 0644) = 3`,
			`100 write(3, "hello", 5) = 5`,
			`100 mmap(NULL, 5, PROT_READ|PROT_WRITE, MAP_SHARED, 3, 0) = 0x7fc1c33e0000`,
			`100 pread64(3, "HELLO", 5, 0) = 5`, // stored through the mapping
			`100 pread64(3, "HeLLO", 5, 0) = 5`, // and again: the mapping is still there
		}, 0},
		{"a shared writable mapping, unmapped", []string{
			`100 openat(AT_FDCWD, "f", O_RDWR|O_CREAT, 0644) = 3`,
			`100 write(3, "hello", 5) = 5`,
			`100 mmap(NULL, 5, PROT_READ|PROT_WRITE, MAP_SHARED, 3, 0) = 0x7fc1c33e0000`,
			`100 munmap(0x7fc1c33e0000, 5) = 0`,
			`100 pwrite64(3, "abcde", 5, 0) = 5`,
			`100 pread64(3, "xxxxx", 5, 0) = 5`, // no mapping left to explain it
		}, 1},
		{"a private mapping", []string{
			`100 openat(AT_FDCWD, "f", O_RDWR|O_CREAT, 0644) = 3`,
			`100 write(3, "hello", 5) = 5`,
			`100 mmap(NULL, 5, PROT_READ|PROT_WRITE, MAP_PRIVATE, 3, 0) = 0x7fc1c33e0000`,
			`100 pread64(3, "HELLO", 5, 0) = 5`, // its stores do not reach the file
		}, 1},
		{"copy_file_range of known bytes", []string{
			`100 openat(AT_FDCWD, "a", O_RDWR|O_CREAT, 0644) = 3`,
			`100 write(3, "0123", 4) = 4`,
			`100 openat(AT_FDCWD, "b", O_RDWR|O_CREAT, 0644) = 4`,
			`100 copy_file_range(3, NULL, 4, NULL, 4, 0) = 0`, // a's offset is at its end
			`100 copy_file_range(3, [0], 4, NULL, 4, 0) = 4`,
			`100 pread64(4, "0124", 4, 0) = 4`,
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			requireDivergences(t, append(append([]string{}, start...), tc.lines...), tc.diverged)
		})
	}
}

// TestInheritedFdFlags: what fds the program had before the trace (0, 1, 2
// here) are, and their flags, are the launcher's: F_GETFL, fstat, reads and
// seeks of them are not compared; F_GETFL of an fd the trace made is.
func TestInheritedFdFlags(t *testing.T) {
	lines := []string{
		`100 execve("/bin/prog", ["prog"], 0x7ffc0 /* 1 var */) = 0`,
		`100 brk(NULL) = 0x55e94258b000`,
		`100 fcntl(1, F_GETFL) = 0x8001 (flags O_WRONLY|O_LARGEFILE)`,
		`100 fstat(0, {st_mode=S_IFIFO|0600, st_size=0, ...}) = 0`, // stdin: a pipe
		`100 read(0, "abc\n", 4096) = 4`,
		`100 lseek(0, 0, SEEK_CUR) = -1 ESPIPE (Illegal seek)`,
		`100 fork() = 101`,
		`101 fcntl(2, F_GETFL) = 0x8002 (flags O_RDWR|O_LARGEFILE)`, // a copy of the parent's
		`100 openat(AT_FDCWD, "f", O_WRONLY|O_CREAT, 0644) = 3`,
		`100 fcntl(3, F_GETFL) = 0x8401 (flags O_WRONLY|O_APPEND|O_LARGEFILE)`, // not what open made
		`100 openat(AT_FDCWD, "g", O_WRONLY|O_CREAT, 0644) = 6`,                // 4 and 5 from before the trace
		`100 fcntl(4, F_GETFL) = 0x8000 (flags O_RDONLY|O_LARGEFILE)`,
		``,
	}
	rep, err := Run([]string{writeTrace(t, strings.Join(lines, "\n"))}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
	require.Equal(t, 10, rep.DivergenceList[0].Line)
}

// requireDivergences replays lines, a trace, with verification (working
// directory /w) and requires want divergences and some call compared.
func requireDivergences(t *testing.T, lines []string, want int) *Report {
	t.Helper()
	rep, err := Run([]string{writeTrace(t, strings.Join(append(lines, ""), "\n"))}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	require.EqualValues(t, want, rep.Divergences, "%v", rep.DivergenceList)
	require.Positive(t, rep.Verified)
	return rep
}

// TestFchmodat2Replayed: fchmodat2 is modelled, so replay runs it (not skipped),
// and a later stat compares against the mode it set.
func TestFchmodat2Replayed(t *testing.T) {
	lines := []string{
		`openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
		`close(3) = 0`,
		`fchmodat2(AT_FDCWD, "f", 0600, 0) = 0`,
		`newfstatat(AT_FDCWD, "f", {st_mode=S_IFREG|%s, st_size=0, ...}, 0) = 0`,
	}
	trace := func(mode string) []string {
		out := slices.Clone(lines)
		out[3] = fmt.Sprintf(out[3], mode)
		return out
	}
	rep := requireDivergences(t, trace("0600"), 0)
	require.Empty(t, rep.Skipped)
	require.Empty(t, rep.NotModelled)
	requireDivergences(t, trace("0644"), 1)
}

const ownTraces = "testdata/traces/"

// TestInferenceReachesLayers: what replay infers about files from before the trace
// and learns from reads reaches a layer that keeps files' bytes (filecache), so
// the program reads the same through it as without it. Bytes the trace never
// showed stay uncompared through the layer; bytes it showed are compared there too.
func TestInferenceReachesLayers(t *testing.T) {
	inline := writeTrace(t, strings.Join([]string{
		`openat(AT_FDCWD, "/d/data.bin", O_RDONLY) = 3`,
		`openat(AT_FDCWD, "/d/data.bin", O_RDONLY) = 4`,
		`read(4, "0123456789", 10) = 10`,
		`read(4, "abcdefghij", 10) = 10`,
		`read(4, "KL", 10) = 2`,
		`read(4, "", 10) = 0`,
		`close(4) = 0`,
		`close(3) = 0`,
		``,
	}, "\n"))
	for _, tc := range []struct {
		trace, cwd, path string
	}{
		{inline, "/w", "/d/data.bin"},
		{ownTraces + "reread.strace", "/w", "/tmp/iosim15/data.bin"},
		{ownTraces + "s256-reread.strace", "/w", "/w/out.bin"},
	} {
		plain, err := Run([]string{tc.trace}, Options{Verify: true, Cwd: tc.cwd})
		require.NoError(t, err)
		require.Zero(t, plain.Divergences, "%s: %v", tc.trace, plain.DivergenceList)
		cached, err := Run([]string{tc.trace}, Options{Verify: true, Cwd: tc.cwd, Stack: []string{"filecache:path=" + tc.path}})
		require.NoError(t, err)
		require.Zero(t, cached.Divergences, "%s through filecache: %v", tc.trace, cached.DivergenceList)
		require.Equal(t, plain.Verified, cached.Verified, tc.trace)
		require.NotEqual(t, plain.KernelCalls, cached.KernelCalls, "%s: the cache did not act on the file", tc.trace)
	}

	// A byte the trace shows in a read the cache serves is compared: changed, it
	// diverges, with the layer as without it.
	data, err := os.ReadFile(ownTraces + "s256-reread.strace")
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	i := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "pread64(4, ") })
	require.Positive(t, i)
	lines[i] = strings.Replace(lines[i], `pread64(4, "\250`, `pread64(4, "\251`, 1)
	bad := writeTrace(t, strings.Join(lines, "\n"))
	for _, stack := range [][]string{nil, {"filecache:path=/w/out.bin"}} {
		rep, err := Run([]string{bad}, Options{Verify: true, Cwd: "/w", Stack: stack})
		require.NoError(t, err)
		require.EqualValues(t, 1, rep.Divergences, "%v: %v", stack, rep.DivergenceList)
		require.Contains(t, rep.DivergenceList[0].What, "byte at file offset 3000")
	}
}

// TestUnlinkEISDIRThenRmdir: unlink of a directory from before the trace fails
// with EISDIR, which shows the directory; the rmdir that follows (rm -r) removes
// it.
func TestUnlinkEISDIRThenRmdir(t *testing.T) {
	rep, err := Run([]string{ownTraces + "unlink-eisdir.strace"}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	requireDivergences(t, []string{
		`unlinkat(AT_FDCWD, "e", 0) = -1 EISDIR (Is a directory)`,
		`unlinkat(AT_FDCWD, "e", AT_REMOVEDIR) = 0`,
		`rmdir("f") = -1 ENOTDIR (Not a directory)`,
		`unlink("f") = 0`,
	}, 0)
}

// TestRootMountedElsewhere: --root DIR:/MOUNT puts the host tree at /MOUNT.
func TestRootMountedElsewhere(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(root, "etc"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "etc", "app.conf"), []byte("hello world"), 0o644))
	trace := writeTrace(t, "openat(AT_FDCWD, \"/data/etc/app.conf\", O_RDONLY) = 3\nread(3, \"hello world\", 64) = 11\nread(3, \"\", 64) = 0\nclose(3) = 0\n")
	rep, err := Run([]string{trace}, Options{Verify: true, Root: root + ":/data", Cwd: "/data"})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.Zero(t, rep.InferredPaths, "the root provided everything")

	wrong := writeTrace(t, "openat(AT_FDCWD, \"/data/etc/app.conf\", O_RDONLY) = 3\nread(3, \"jello world\", 64) = 11\n")
	rep, err = Run([]string{wrong}, Options{Verify: true, Root: root + ":/data"})
	require.NoError(t, err)
	require.EqualValues(t, 1, rep.Divergences, "the seeded bytes are compared")
}

// TestFilesFromBeforeTheTrace: a symlink an lstat shows (S_IFLNK) exists, with
// the target a later readlink gives; a directory opened without O_DIRECTORY and
// then used as one (fstatat, getdents64) is a directory.
func TestFilesFromBeforeTheTrace(t *testing.T) {
	rep, err := Run([]string{ownTraces + "preexist.strace"}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	requireDivergences(t, []string{
		`lstat("l", {st_mode=S_IFLNK|0777, st_size=6, ...}) = 0`,
		`readlink("l", "target", 4096) = 6`,
		`statx(AT_FDCWD, "m", AT_STATX_SYNC_AS_STAT|AT_SYMLINK_NOFOLLOW, STATX_ALL, {stx_mode=S_IFLNK|0777, stx_size=3, ...}) = 0`,
		`readlinkat(AT_FDCWD, "m", "abc", 64) = 3`,
	}, 0)
	// A target the readlink shows differently from the link's is a divergence.
	requireDivergences(t, []string{
		`lstat("l", {st_mode=S_IFLNK|0777, st_size=6, ...}) = 0`,
		`readlink("l", "target", 4096) = 6`,
		`readlink("l", "tarGet", 4096) = 6`,
	}, 1)
}

// TestStartingDirectoryListing: the working directory a trace starts in existed
// before it, with entries the trace may not show: its listing is taken as
// recorded, and the names it shows are inferred.
func TestStartingDirectoryListing(t *testing.T) {
	rep, err := Run([]string{ownTraces + "listcwd.strace"}, Options{Verify: true})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	requireDivergences(t, []string{
		`openat(AT_FDCWD, ".", O_RDONLY|O_DIRECTORY) = 3`,
		`getdents64(3, [{d_ino=2, d_off=1, d_reclen=24, d_type=DT_DIR, d_name="."}, {d_ino=1, d_off=2, d_reclen=24, d_type=DT_DIR, d_name=".."}, {d_ino=5, d_off=3, d_reclen=24, d_type=DT_REG, d_name="x"}], 32768) = 72`,
		`newfstatat(AT_FDCWD, "x", {st_mode=S_IFREG|0644, st_size=0, ...}, AT_SYMLINK_NOFOLLOW) = 0`,
		`unlink("x") = 0`,
	}, 0)
}

// TestListingsOfPartialTraces: in a trace of some calls (strace -e trace=), a
// listing may show entries that calls the trace leaves out made: it is taken as
// recorded, and the report says so. In a whole trace it is compared.
func TestListingsOfPartialTraces(t *testing.T) {
	list := []string{
		`100 mkdir("d", 0755) = 0`,
		`100 openat(AT_FDCWD, "d/a", O_WRONLY|O_CREAT, 0644) = 3`,
		`100 close(3) = 0`,
		`100 openat(AT_FDCWD, "d", O_RDONLY|O_DIRECTORY) = 3`,
		`100 getdents64(3, [{d_ino=2, d_off=1, d_reclen=24, d_type=DT_DIR, d_name="."}, {d_ino=1, d_off=2, d_reclen=24, d_type=DT_DIR, d_name=".."}, {d_ino=5, d_off=3, d_reclen=24, d_type=DT_REG, d_name="a"}, {d_ino=6, d_off=4, d_reclen=24, d_type=DT_REG, d_name="b"}], 32768) = 96`,
	}
	whole := append([]string{`100 execve("/bin/prog", ["prog"], 0x7ffc0 /* 1 var */) = 0`, `100 brk(NULL) = 0x55e94258b000`}, list...)
	requireDivergences(t, whole, 1) // "b": made by nothing the trace shows
	some := append([]string{`100 execve("/bin/prog", ["prog"], 0x7ffc0 /* 1 var */) = 0`}, list...)
	rep := requireDivergences(t, some, 0)
	require.True(t, slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.Contains(n, "1 directory listing(s) taken as recorded") }), "%v", rep.Notes)
}

// TestLearnThroughServedFd: bytes a trace's write did not show (-s) and a later
// read shows are learnt, and compared from then on, also when the read goes
// through an fd a layer serves without the kernel holding it (filecache).
func TestLearnThroughServedFd(t *testing.T) {
	trace := func(last string) string {
		return writeTrace(t, strings.Join([]string{
			`openat(AT_FDCWD, "/w/f", O_RDWR|O_CREAT, 0644) = 3`,
			`write(3, "abcd"..., 8) = 8`, // -s 4: bytes 4-7 unknown
			`close(3) = 0`,
			`openat(AT_FDCWD, "/w/f", O_RDONLY) = 3`,
			`openat(AT_FDCWD, "/w/f", O_RDONLY) = 4`, // served by filecache
			`read(4, "abcdWXYZ", 8) = 8`,             // shows them
			`pread64(3, "abcdWXY` + last + `", 8, 0) = 8`,
			``,
		}, "\n"))
	}
	for _, stack := range [][]string{nil, {"filecache:path=/w/f"}} {
		rep, err := Run([]string{trace("Z")}, Options{Verify: true, Cwd: "/w", Stack: stack})
		require.NoError(t, err)
		require.Zero(t, rep.Divergences, "%v: %v", stack, rep.DivergenceList)
		rep, err = Run([]string{trace("Q")}, Options{Verify: true, Cwd: "/w", Stack: stack})
		require.NoError(t, err)
		require.EqualValues(t, 1, rep.Divergences, "%v: the byte the read showed is compared", stack)
		require.Contains(t, rep.DivergenceList[0].What, "byte at file offset 7")
	}
	// The cache acted on the file (it opens and checks it by calls of its own).
	plain, err := Run([]string{trace("Z")}, Options{Verify: true, Cwd: "/w"})
	require.NoError(t, err)
	cached, err := Run([]string{trace("Z")}, Options{Verify: true, Cwd: "/w", Stack: []string{"filecache:path=/w/f"}})
	require.NoError(t, err)
	require.NotEqual(t, plain.KernelCalls, cached.KernelCalls, "the cache did not act on the file")
}

// TestPreexistingFileShown: what vectored reads, a collapse or insert, and
// SEEK_DATA/SEEK_HOLE show of a file from before the trace is inferred, so
// the calls replay as recorded, with and without a layer that holds data.
func TestPreexistingFileShown(t *testing.T) {
	lines := []string{
		`openat(AT_FDCWD, "pre1", O_RDONLY) = 3`,
		`readv(3, [{iov_base="abc", iov_len=100}, {iov_base="def", iov_len=200}], 2) = 300`,
		`preadv(3, [{iov_base="bc", iov_len=100}, {iov_base="xyz", iov_len=200}], 2, 1) = 300`,
		`preadv2(3, [{iov_base="", iov_len=100}, {iov_base="", iov_len=200}], 2, 4900, 0) = 100`,
		`preadv2(3, [{iov_base="", iov_len=100}], 1, -1, 0) = 100`,
		`close(3) = 0`,
		`openat(AT_FDCWD, "pre2", O_RDWR) = 3`,
		`fallocate(3, FALLOC_FL_COLLAPSE_RANGE, 0, 4096) = 0`,
		`fallocate(3, FALLOC_FL_INSERT_RANGE, 4096, 4096) = 0`,
		`close(3) = 0`,
		`openat(AT_FDCWD, "pre3", O_RDONLY) = 3`,
		`lseek(3, 0, SEEK_DATA) = 0`,
		`lseek(3, 0, SEEK_HOLE) = 9000`,
		`lseek(3, 16384, SEEK_DATA) = 20480`,
		`lseek(3, 20480, SEEK_HOLE) = 24576`,
		`close(3) = 0`,
	}
	requireDivergences(t, lines, 0)
	rep, err := Run([]string{writeTrace(t, strings.Join(append(lines, ""), "\n"))},
		Options{Verify: true, Cwd: "/w", Stack: []string{"filecache:path=/w"}})
	require.NoError(t, err)
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	// Only files from before the trace are inferred: one the trace made
	// holds what it wrote.
	requireDivergences(t, []string{
		`openat(AT_FDCWD, "made", O_RDWR|O_CREAT|O_EXCL, 0644) = 3`,
		`write(3, "0123456789", 10) = 10`,
		`preadv(3, [{iov_base="0123456789", iov_len=100}, {iov_base="", iov_len=200}], 2, 0) = 300`,
		`lseek(3, 0, SEEK_HOLE) = 9000`,
	}, 2)
}

// TestDirOpenedAsFileFlags: a directory opened without O_DIRECTORY and found
// to be one keeps the flags of its open, as F_GETFL shows them (glibc's
// fdopendir checks them).
func TestDirOpenedAsFileFlags(t *testing.T) {
	requireDivergences(t, []string{
		`openat(AT_FDCWD, "dir", O_RDONLY|O_NONBLOCK) = 3`,
		`newfstatat(3, "", {st_mode=S_IFDIR|0755, st_size=4096, ...}, AT_EMPTY_PATH) = 0`,
		`fcntl(3, F_GETFL) = 0x8800 (flags O_RDONLY|O_NONBLOCK|O_LARGEFILE)`,
		`getdents64(3, 0x5581 /* 2 entries */, 32768) = 48`,
		`fcntl(3, F_GETFL) = 0x8800 (flags O_RDONLY|O_NONBLOCK|O_LARGEFILE)`,
	}, 0)
}

// TestRenameExchangeInfers: renameat2 with RENAME_EXCHANGE shows that both
// names existed before the trace; RENAME_NOREPLACE's EEXIST that the new one did.
func TestRenameExchangeInfers(t *testing.T) {
	requireDivergences(t, []string{
		`renameat2(AT_FDCWD, "p2", AT_FDCWD, "p3", RENAME_EXCHANGE) = 0`,
		`renameat2(AT_FDCWD, "p2", AT_FDCWD, "p4", RENAME_NOREPLACE) = -1 EEXIST (File exists)`,
		`renameat2(AT_FDCWD, "p2", AT_FDCWD, "p4", RENAME_EXCHANGE) = 0`,
	}, 0)
}

// TestAioReadOfPreexistingFile: the completions of AIO reads of a file from
// before the trace show its size, as a pread's count does; they are inferred,
// not divergences. A read of a file the trace made is still compared.
func TestAioReadOfPreexistingFile(t *testing.T) {
	lines := []string{
		`io_setup(8, [0x7f00]) = 0`,
		`openat(AT_FDCWD, "pre", O_RDONLY) = 3`,
		`openat(AT_FDCWD, "made", O_RDWR|O_CREAT|O_TRUNC, 0644) = 4`,
		`io_submit(0x7f00, 3, [{aio_data=0x1, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=3, aio_buf=0x1000, aio_nbytes=4096, aio_offset=0}, ` +
			`{aio_data=0x2, aio_lio_opcode=IOCB_CMD_PREADV, aio_fildes=3, aio_buf=[{iov_base=0x2000, iov_len=4096}, {iov_base=0x3000, iov_len=4096}], aio_offset=4096}, ` +
			`{aio_data=0x3, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=4, aio_buf=0x4000, aio_nbytes=4096, aio_offset=0}]) = 3`,
		`io_getevents(0x7f00, 3, 8, [{data=0x2, obj=0x10, res=5000, res2=0}, {data=0x1, obj=0x20, res=4096, res2=0}, {data=0x3, obj=0x30, res=%s, res2=0}], NULL) = 3`,
		`fstat(3, {st_mode=S_IFREG|0644, st_size=9096, ...}) = 0`,
		`io_destroy(0x7f00) = 0`,
	}
	trace := func(res string) []string {
		out := slices.Clone(lines)
		out[4] = fmt.Sprintf(out[4], res)
		return out
	}
	requireDivergences(t, trace("0"), 0)
	requireDivergences(t, trace("10"), 1)

	// An iocb Linux did not take (io_submit returned 1 of 2) infers nothing:
	// a later completion with its aio_data is compared.
	requireDivergences(t, []string{
		lines[0], lines[1], lines[2],
		`io_submit(0x7f00, 2, [{aio_data=0x1, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=4, aio_buf=0x4000, aio_nbytes=4096, aio_offset=0}, ` +
			`{aio_data=0x5, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=3, aio_buf=0x1000, aio_nbytes=4096, aio_offset=0}]) = 1`,
		`io_submit(0x7f00, 1, [{aio_data=0x5, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=4, aio_buf=0x4000, aio_nbytes=4096, aio_offset=0}]) = 1`,
		`io_getevents(0x7f00, 2, 8, [{data=0x1, obj=0x10, res=0, res2=0}, {data=0x5, obj=0x20, res=77, res2=0}], NULL) = 2`,
	}, 2) // io_submit's count, and the event
}

// TestNewNameInfersDirectory: symlink, link and rename into a directory from
// before the trace show that the directory existed; one the trace removed
// stays removed.
func TestNewNameInfersDirectory(t *testing.T) {
	requireDivergences(t, []string{
		`symlinkat("a", AT_FDCWD, "src/l2") = 0`,
		`symlink("a", "/w/src2/l2") = 0`,
		`link("f1", "dir2/b") = 0`,
		`rename("f2", "dir3/b") = 0`,
		`linkat(AT_FDCWD, "f3", AT_FDCWD, "dir4/b", 0) = 0`,
		`renameat2(AT_FDCWD, "f4", AT_FDCWD, "dir5/b", RENAME_NOREPLACE) = 0`,
	}, 0)
	requireDivergences(t, []string{
		`mkdir("gone", 0755) = 0`,
		`rmdir("gone") = 0`,
		`symlink("a", "gone/l") = 0`,
	}, 1)
}

// TestSubsetWithoutClose: a trace of opens without any close nor the
// start-up calls (strace -e trace=openat,write) leaves out the closes that
// freed the fds it shows reused; a trace with closes does not.
func TestSubsetWithoutClose(t *testing.T) {
	lines := []string{
		`openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3`,
		`openat(AT_FDCWD, "/lib/libc.so.6", O_RDONLY|O_CLOEXEC) = 3`,
		`write(1, "hi\n", 3) = 3`,
	}
	requireDivergences(t, lines, 0)
	requireDivergences(t, append(slices.Clone(lines), `close(9) = -1 EBADF (Bad file descriptor)`), 1)
}

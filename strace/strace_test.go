package strace_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/strace"
)

const traceDir = "../testdata/traces"

func traceFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(traceDir, "*.strace"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	return files
}

// parseAll parses text and returns clones of all events.
func parseAll(t testing.TB, name, text string, opts strace.Options) ([]*strace.Event, error) {
	t.Helper()
	p := strace.NewParser(strings.NewReader(text), name, opts)
	var evs []*strace.Event
	for {
		ev, err := p.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		ev.Args()
		evs = append(evs, ev.Clone())
	}
}

func parseFile(t testing.TB, file string) []*strace.Event {
	t.Helper()
	b, err := os.ReadFile(file)
	require.NoError(t, err)
	evs, err := parseAll(t, filepath.Base(file), string(b), strace.Options{})
	require.NoError(t, err)
	return evs
}

// one parses a single-event text.
func one(t *testing.T, text string) *strace.Event {
	t.Helper()
	evs, err := parseAll(t, "test.strace", text, strace.Options{})
	require.NoError(t, err)
	require.Len(t, evs, 1, text)
	return evs[0]
}

func findLine(evs []*strace.Event, line int) *strace.Event {
	for _, ev := range evs {
		if ev.Line == line || ev.EndLine == line {
			return ev
		}
	}
	return nil
}

func TestCorpusParsesWithoutErrors(t *testing.T) {
	total := 0
	for _, f := range traceFiles(t) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		lines := bytes.Count(b, []byte("\n"))
		p := strace.NewParser(bytes.NewReader(b), filepath.Base(f), strace.Options{})
		n, joined, maxEnd := 0, 0, 0
		for {
			ev, err := p.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			require.False(t, ev.Unfinished, "%s:%d", f, ev.Line)
			for _, a := range ev.Args() {
				// The tree must cover the argument text.
				require.NotEmpty(t, a.Raw, "%s:%d", f, ev.Line)
			}
			n++
			if ev.EndLine != ev.Line {
				joined++
			}
			maxEnd = max(maxEnd, ev.EndLine)
		}
		// every line is one event, or half of a joined pair
		require.Equal(t, lines, n+joined, f)
		require.Equal(t, lines, maxEnd, f)
		require.Zero(t, p.Skipped())
		total += n
	}
	t.Logf("%d events", total)
}

func TestPidFromFileName(t *testing.T) {
	for name, want := range map[string]int{
		"threads.ffpid25447.strace": 25447,
		"/x/y/trace.out.12345":      12345,
		"trace.12":                  12,
		"oraus.seq.strace":          0,
		"plain":                     0,
		"x.ffpid.strace":            0,
	} {
		require.Equal(t, want, strace.PidFromFileName(name), name)
	}
}

func TestPrefixes(t *testing.T) {
	for _, tc := range []struct {
		line     string
		pid      int
		style    strace.PidStyle
		kind     strace.TimeKind
		time     int64
		prec     uint8
		dur      int64
		hasDur   bool
		durPrec  uint8
		fileName string
	}{
		{line: `close(3) = 0`},
		{line: `24184 close(3) = 0`, pid: 24184, style: strace.PidColumn},
		{line: `[pid 24184] close(3) = 0`, pid: 24184, style: strace.PidBracket},
		{line: `[pid   184] 01:29:07 close(3) = 0`, pid: 184, style: strace.PidBracket, kind: strace.TimeOfDay, time: (1*3600 + 29*60 + 7) * 1e9},
		{line: `01:29:07.190339 close(3) = 0 <0.001319>`, kind: strace.TimeOfDay, time: (1*3600+29*60+7)*1e9 + 190339000, prec: 6, dur: 1319000, hasDur: true, durPrec: 6},
		{line: `24184 01:29:08.298169 close(3) = 0`, pid: 24184, style: strace.PidColumn, kind: strace.TimeOfDay, time: (1*3600+29*60+8)*1e9 + 298169000, prec: 6},
		{line: `1796002145.157643 close(3) = 0`, kind: strace.TimeEpoch, time: 1796002145157643000, prec: 6},
		{line: `24220 1796002148.759341 close(3) = 0 <0.000053>`, pid: 24220, style: strace.PidColumn, kind: strace.TimeEpoch, time: 1796002148759341000, prec: 6, dur: 53000, hasDur: true, durPrec: 6},
		{line: `     0.002089 close(3) = 0`, kind: strace.TimeRelative, time: 2089000, prec: 6},
		{line: `12 1.5 close(3) = 0`, pid: 12, style: strace.PidColumn, kind: strace.TimeRelative, time: 1500000000, prec: 1},
		{line: `01:29:07.123456789 close(3) = 0 <0.000000012>`, kind: strace.TimeOfDay, time: (1*3600+29*60+7)*1e9 + 123456789, prec: 9, dur: 12, hasDur: true, durPrec: 9},
		{line: `close(3) = 0`, pid: 25447, fileName: "threads.ffpid25447.strace"},
		{line: `7 close(3) = 0`, pid: 7, style: strace.PidColumn, fileName: "threads.ffpid25447.strace"},
	} {
		name := tc.fileName
		if name == "" {
			name = "t"
		}
		evs, err := parseAll(t, name, tc.line, strace.Options{})
		require.NoError(t, err, tc.line)
		require.Len(t, evs, 1)
		ev := evs[0]
		require.Equal(t, "close", ev.Name, tc.line)
		require.Equal(t, tc.pid, ev.Pid, tc.line)
		require.Equal(t, tc.style, ev.PidStyle, tc.line)
		require.Equal(t, tc.kind, ev.TimeKind, tc.line)
		require.Equal(t, tc.time, ev.Time, tc.line)
		require.Equal(t, tc.prec, ev.TimePrec, tc.line)
		require.Equal(t, tc.dur, ev.Duration, tc.line)
		require.Equal(t, tc.hasDur, ev.HasDuration, tc.line)
		require.Equal(t, tc.durPrec, ev.DurPrec, tc.line)
		fd, _, ok := ev.Fd(0)
		require.True(t, ok)
		require.Equal(t, 3, fd)
	}
}

func TestResults(t *testing.T) {
	for _, tc := range []struct {
		line      string
		ret       int64
		known     bool
		hex       bool
		errno     syscall.Errno
		errnoName string
		desc      string
		comment   string
		injected  bool
		path      string
		deleted   bool
	}{
		{line: `close(3) = 0`, known: true},
		{line: `brk(NULL)                               = 0x555f2d384000`, ret: 0x555f2d384000, known: true, hex: true},
		{line: `mmap(NULL, 1) = 0xffffffffffffffff`, ret: -1, known: true, hex: true},
		{line: `access("/etc/ld.so.preload", R_OK)      = -1 ENOENT (No such file or directory)`, ret: -1, known: true, errno: syscall.Errno(2), errnoName: "ENOENT", desc: "No such file or directory"},
		{line: `exit_group(0)                           = ?`},
		{line: `futex(0x7f84ce1da990, FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, 25448, NULL, FUTEX_BITSET_MATCH_ANY) = ? ERESTARTSYS (To be restarted if SA_RESTART is set)`, errno: 512, errnoName: "ERESTARTSYS", desc: "To be restarted if SA_RESTART is set"},
		{line: `fcntl(11, F_GETFD)                      = 0x1 (flags FD_CLOEXEC)`, ret: 1, known: true, hex: true, comment: "flags FD_CLOEXEC"},
		{line: `openat(AT_FDCWD, "x", O_RDONLY) = -1 ENOENT (No such file or directory) (INJECTED)`, ret: -1, known: true, errno: 2, errnoName: "ENOENT", desc: "No such file or directory", injected: true},
		{line: `write(1, "x", 1) = 1 (INJECTED)`, ret: 1, known: true, injected: true},
		{line: `openat(AT_FDCWD</tmp>, "x", O_RDONLY) = 3</tmp/x> <0.000050>`, ret: 3, known: true, path: "/tmp/x"},
		{line: `openat(AT_FDCWD, "/dev/zero", O_RDONLY) = 3</dev/zero<char 1:5>>`, ret: 3, known: true, path: "/dev/zero<char 1:5>"},
		{line: `dup(3</tmp/a\x3eb>(deleted)) = 4</tmp/a\x3eb>(deleted)`, ret: 4, known: true, path: "/tmp/a>b", deleted: true},
		{line: `recvfrom(6, 0x1, 8192, 0, NULL, NULL) = -1 EAGAIN (Resource temporarily unavailable)`, ret: -1, known: true, errno: 11, errnoName: "EAGAIN", desc: "Resource temporarily unavailable"},
		{line: `poll([{fd=3, events=POLLIN}], 1, 0) = 1 ([{fd=3, revents=POLLIN}])`, ret: 1, known: true, comment: "[{fd=3, revents=POLLIN}]"},
		{line: `lseek(3, -70000, SEEK_CUR) = -1 EINVAL (Invalid argument) <0.000016>`, ret: -1, known: true, errno: 22, errnoName: "EINVAL", desc: "Invalid argument"},
	} {
		ev := one(t, tc.line)
		require.Equal(t, strace.KindSyscall, ev.Kind, tc.line)
		require.Equal(t, tc.ret, ev.Ret, tc.line)
		require.Equal(t, tc.known, ev.RetKnown, tc.line)
		require.Equal(t, tc.hex, ev.RetHex, tc.line)
		require.Equal(t, tc.errno, ev.Errno, tc.line)
		require.Equal(t, tc.errnoName, ev.ErrnoName, tc.line)
		require.Equal(t, tc.errnoName != "", ev.Failed(), tc.line)
		require.Equal(t, tc.desc, string(ev.ErrnoDesc), tc.line)
		require.Equal(t, tc.comment, string(ev.RetComment), tc.line)
		require.Equal(t, tc.injected, ev.Injected, tc.line)
		require.Equal(t, tc.path, string(ev.RetPath), tc.line)
		require.Equal(t, tc.path != "", ev.RetHasPath, tc.line)
		require.Equal(t, tc.deleted, ev.RetDeleted, tc.line)
	}
}

func TestStrings(t *testing.T) {
	for _, tc := range []struct {
		line      string
		arg       int
		want      string
		truncated bool
	}{
		{`write(1, "a\nb\tc\"d\\e", 9) = 9`, 1, "a\nb\tc\"d\\e", false},
		{`write(3, "\25\23\"\1ORAUS.MSB\0\0\0\377\377"..., 8192) = 8192`, 1, "\x15\x13\"\x01ORAUS.MSB\x00\x00\x00\xff\xff", true},
		{`write(3, "\0001\177\r\v\f", 6) = 6`, 1, "\x001\x7f\r\v\f", false},
		{`getrandom("\x82\x57\xcb\xb8", 4, GRND_NONBLOCK) = 4`, 0, "\x82\x57\xcb\xb8", false},
		{`write(3, ""..., 5242880) = 5242880`, 1, "", true},
		{`write(3, "", 0) = 0`, 1, "", false},
		{`write(3, "(not) a, \"paren\" )", 3) = 3`, 1, `(not) a, "paren" )`, false},
	} {
		ev := one(t, tc.line)
		b, tr, ok := ev.Str(tc.arg)
		require.True(t, ok, tc.line)
		require.Equal(t, tc.want, string(b), tc.line)
		require.Equal(t, tc.truncated, tr, tc.line)
	}
	// the exact octal-escaped header of oraus.seek line 31
	evs := parseFile(t, filepath.Join(traceDir, "oraus.seek.strace"))
	ev := findLine(evs, 31)
	require.Equal(t, "write", ev.Name)
	b, tr, ok := ev.Str(1)
	require.True(t, ok)
	require.True(t, tr)
	require.Equal(t, append([]byte("\x15\x13\"\x01ORAUS.MSB\x00\x00\x00"), bytes.Repeat([]byte{0xff}, 16)...), b)
	n, ok := ev.Int(2)
	require.True(t, ok)
	require.Equal(t, int64(8192), n)
}

func TestStructsArraysFlags(t *testing.T) {
	ev := one(t, `newfstatat(3, "", {st_mode=S_IFREG|0644, st_size=33635, ...}, AT_EMPTY_PATH) = 0`)
	st := ev.Arg(2)
	require.Equal(t, strace.NodeStruct, st.Kind)
	require.Len(t, st.Kids, 3)
	require.Equal(t, strace.NodeEllipsis, st.Kids[2].Kind)
	mode := st.Field("st_mode")
	require.Equal(t, strace.NodeFlags, mode.Kind)
	v, ok := mode.Value()
	require.True(t, ok)
	require.Equal(t, int64(0100644), v)
	require.Equal(t, int64(33635), ev.Field(2, "st_size").Int)
	require.Nil(t, st.Field("st_nope"))
	f, ok := ev.Flags(3)
	require.True(t, ok)
	require.Equal(t, uint64(0x1000), f)

	ev = one(t, `openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3`)
	f, ok = ev.Flags(2)
	require.True(t, ok)
	require.Equal(t, uint64(0x80000), f)
	require.Equal(t, []string{"O_RDONLY", "O_CLOEXEC"}, names(ev.Arg(2)))
	fd, path, ok := ev.Fd(0)
	require.True(t, ok)
	require.Equal(t, -100, fd)
	require.Nil(t, path)

	for line, want := range map[string]uint64{
		`openat(AT_FDCWD, "f", O_WRONLY|O_CREAT|O_TRUNC|O_SYNC, 0666) = 3`: 0x241 | 04010000,
		`lseek(3, 0, SEEK_HOLE) = 4096`:                                    4,
		`fallocate(3, FALLOC_FL_KEEP_SIZE|FALLOC_FL_PUNCH_HOLE, 1, 2) = 0`: 3,
		`fcntl(3, F_DUPFD_CLOEXEC, 20) = 21`:                               1030,
		`unlinkat(4, "d", AT_REMOVEDIR) = 0`:                               0x200,
		`openat(AT_FDCWD, "f", O_RDWR|O_CREAT|O_EXCL|O_DIRECT, 0600) = 3`:  2 | 0100 | 0200 | 040000,
	} {
		ev := one(t, line)
		i := 2
		if ev.Name == "lseek" || ev.Name == "fcntl" || ev.Name == "unlinkat" {
			i = ev.NArgs() - 1
			if ev.Name == "fcntl" {
				i = 1
			}
		}
		if ev.Name == "fallocate" {
			i = 1
		}
		got, ok := ev.Flags(i)
		require.True(t, ok, line)
		require.Equal(t, want, got, line)
	}
	_, ok = one(t, `openat(AT_FDCWD, "f", O_RDONLY|O_UNKNOWNFLAG) = 3`).Flags(2)
	require.False(t, ok)

	// iovec arrays
	ev = one(t, `writev(4, [{iov_base="alpha-", iov_len=6}, {iov_base="beta-", iov_len=5}, {iov_base="gamma\n", iov_len=6}], 3) = 17`)
	iov := ev.Arg(1)
	require.Equal(t, strace.NodeArray, iov.Kind)
	require.Len(t, iov.Kids, 3)
	require.Equal(t, "gamma\n", string(iov.Kids[2].Field("iov_base").Text))
	require.Equal(t, int64(5), iov.Kids[1].Field("iov_len").Int)

	// io_submit iocb arrays and io_getevents event arrays
	ev = one(t, `io_submit(0x7f577cb68000, 2, [{aio_data=0, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=3, aio_buf="dbwr blk=0 ver=0\0\0"..., aio_nbytes=8192, aio_offset=0}, {aio_data=0x1, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=3, aio_buf=0x7f0000, aio_nbytes=8192, aio_offset=1073152}]) = 2`)
	cbs := ev.Arg(2)
	require.Len(t, cbs.Kids, 2)
	op, ok := cbs.Kids[0].Field("aio_lio_opcode").Value()
	require.True(t, ok)
	require.Equal(t, int64(1), op)
	buf := cbs.Kids[0].Field("aio_buf")
	require.Equal(t, "dbwr blk=0 ver=0\x00\x00", string(buf.Text))
	require.True(t, buf.Truncated)
	require.Equal(t, int64(1073152), cbs.Kids[1].Field("aio_offset").Int)
	ev = one(t, `io_getevents(0x7f577cb68000, 4, 4, [{data=0, obj=0x7fff259b8270, res=8192, res2=0}, {data=0x3, obj=0x7fff259b8330, res=8192, res2=0}], {tv_sec=600, tv_nsec=0}) = 2`)
	require.Equal(t, int64(3), ev.Arg(3).Kids[1].Field("data").Int)
	require.Equal(t, int64(600), ev.Field(4, "tv_sec").Int)

	// function-like values, comments, nested structs, raw expressions, in/out
	ev = one(t, `newfstatat(3, "", {st_dev=makedev(0xfe, 0), st_atime=1796001385 /* 2026-11-30T01:16:25.587000457+0000 */, st_rdev=makedev(0x1, 0x3)}, AT_EMPTY_PATH) = 0`)
	dev := ev.Field(2, "st_rdev")
	require.Equal(t, strace.NodeCall, dev.Kind)
	require.Equal(t, "makedev", string(dev.Text))
	require.Equal(t, int64(3), dev.Kids[1].Int)
	require.Equal(t, "2026-11-30T01:16:25.587000457+0000", string(ev.Field(2, "st_atime").Comment))
	require.Equal(t, int64(1796001385), ev.Field(2, "st_atime").Int)

	ev = one(t, `execve("/bin/x", ["x", "-c"], 0x7ffcb5215d20 /* 7 vars */) = 0`)
	require.Equal(t, "7 vars", string(ev.Arg(2).Comment))
	require.Equal(t, "-c", string(ev.Arg(1).Kids[1].Text))

	ev = one(t, `wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 24185`)
	st = &ev.Arg(1).Kids[0]
	require.Equal(t, strace.NodeRaw, st.Kids[0].Kind)
	require.Equal(t, "WIFEXITED(s) && WEXITSTATUS(s) == 0", string(st.Kids[0].Raw))
	require.Equal(t, 4, ev.NArgs())

	ev = one(t, `prlimit64(0, RLIMIT_STACK, NULL, {rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}) = 0`)
	require.Equal(t, "8192*1024", string(ev.Field(3, "rlim_cur").Raw))
	require.Equal(t, strace.NodeRaw, ev.Field(3, "rlim_cur").Kind)

	ev = one(t, `clone3({flags=CLONE_VM|CLONE_FS, exit_signal=0, stack=0x7f31bdefb000} => {parent_tid=[24496]}, 88) = 24496`)
	io := ev.Arg(0)
	require.Equal(t, strace.NodeInOut, io.Kind)
	require.Equal(t, int64(24496), io.Kids[1].Field("parent_tid").Kids[0].Int)
	require.Equal(t, int64(0x300), io.Kids[0].Field("flags").Int)

	ev = one(t, `clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f5d24fbfa10) = 24189`)
	require.Equal(t, "flags", string(ev.Arg(1).Key))
	require.Equal(t, int64(0x200000|0x1000000|17), ev.Arg(1).Int)

	ev = one(t, `rt_sigaction(SIGCHLD, {sa_handler=0x55ea223acdc0, sa_mask=~[RTMIN RT_1], sa_flags=SA_RESTORER}, NULL, 8) = 0`)
	require.Equal(t, "~[RTMIN RT_1]", string(ev.Field(1, "sa_mask").Raw))

	ev = one(t, `restart_syscall(<... resuming interrupted read ...>) = 0`)
	require.Equal(t, "restart_syscall", ev.Name)
	require.Equal(t, "<... resuming interrupted read ...>", string(ev.Arg(0).Raw))
	require.Equal(t, strace.NodeRaw, ev.Arg(0).Kind)

	ev = one(t, `getdents64(3, 0x5622ae8dc350 /* 6 entries */, 32768) = 168`)
	v, ok = ev.Int(1)
	require.True(t, ok)
	require.Equal(t, int64(0x5622ae8dc350), v)

	ev = one(t, `chmod("f", 0644) = 0`)
	v, _ = ev.Int(1)
	require.Equal(t, int64(0644), v)
}

func names(n *strace.Node) []string {
	var s []string
	for _, b := range n.Names(nil) {
		s = append(s, string(b))
	}
	return s
}

func TestVerboseAndRaw(t *testing.T) {
	// -X verbose: the number is the value, the names are a comment.
	ev := one(t, `openat(-100 /* AT_FDCWD */</tmp/corpus-work/run/sqlite.delete-normal>, "/tmp/corpus-work/run/sqlite.delete-normal/test.db", 0xa0042 /* O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC */, 0644) = 3</tmp/corpus-work/run/sqlite.delete-normal/test.db>`)
	f, ok := ev.Flags(2)
	require.True(t, ok)
	require.Equal(t, uint64(0xa0042), f)
	require.Equal(t, "O_RDWR|O_CREAT|O_NOFOLLOW|O_CLOEXEC", string(ev.Arg(2).Comment))
	fd, path, ok := ev.Fd(0)
	require.True(t, ok)
	require.Equal(t, -100, fd)
	require.Equal(t, "/tmp/corpus-work/run/sqlite.delete-normal", string(path))
	require.Equal(t, "AT_FDCWD", string(ev.Arg(0).Comment))
	mode, _ := ev.Int(3)
	require.Equal(t, int64(0644), mode)

	ev = one(t, `socket(0x1 /* AF_UNIX */, 0x1 /* SOCK_STREAM */|0x80800 /* SOCK_CLOEXEC|SOCK_NONBLOCK */, 0) = 3<socket:[36423]>`)
	f, ok = ev.Flags(1)
	require.True(t, ok)
	require.Equal(t, uint64(0x80801), f)
	require.Equal(t, "socket:[36423]", string(ev.RetPath))

	ev = one(t, `fcntl(3</x>, 0x6 /* F_SETLK */, {l_type=0 /* F_RDLCK */, l_whence=0 /* SEEK_SET */, l_start=1073741824, l_len=1}) = 0`)
	require.Equal(t, int64(1073741824), ev.Field(2, "l_start").Int)
	require.Equal(t, "F_RDLCK", string(ev.Field(2, "l_type").Comment))

	// -X raw: plain numbers everywhere
	ev = one(t, `openat(0xffffff9c, 0x7ffd1000, 0x80000) = 0x3`)
	f, _ = ev.Flags(2)
	require.Equal(t, uint64(0x80000), f)
	require.Equal(t, int64(3), ev.Ret)

	// the corpus line
	evs := parseFile(t, filepath.Join(traceDir, "sqlite.delete-normal.strace"))
	ev = findLine(evs, 114)
	require.Equal(t, "openat", ev.Name)
	f, ok = ev.Flags(2)
	require.True(t, ok)
	require.Equal(t, uint64(0xa0042), f)
	require.Equal(t, int64(3), ev.Ret)
}

func TestDecorations(t *testing.T) {
	evs := parseFile(t, filepath.Join(traceDir, "dd.oflag-direct.strace"))
	ev := findLine(evs, 37) // dup2(3</dev/zero<char 1:5>>, 0</dev/null<char 1:3>>) = 0</dev/zero<char 1:5>>
	require.Equal(t, "dup2", ev.Name)
	fd, path, ok := ev.Fd(0)
	require.True(t, ok)
	require.Equal(t, 3, fd)
	require.Equal(t, "/dev/zero", string(path))
	require.Equal(t, "char 1:5", string(ev.Arg(0).Dev))
	fd, path, _ = ev.Fd(1)
	require.Equal(t, 0, fd)
	require.Equal(t, "/dev/null", string(path))
	require.Equal(t, "char 1:3", string(ev.Arg(1).Dev))
	require.Equal(t, "/dev/zero<char 1:5>", string(ev.RetPath))

	ev = one(t, `recvfrom(6<UNIX-STREAM:[36969->36782,"/tmp/corpus-work/run/pg.backend/.s.PGSQL.5432"]>, "Q\0\0\0L"..., 8192, 0, NULL, NULL) = 77 <0.000053>`)
	fd, path, _ = ev.Fd(0)
	require.Equal(t, 6, fd)
	require.Equal(t, `UNIX-STREAM:[36969->36782,"/tmp/corpus-work/run/pg.backend/.s.PGSQL.5432"]`, string(path))
	require.Equal(t, 6, ev.NArgs())

	ev = one(t, `openat(AT_FDCWD</tmp/corpus-work/run/pg.backend/data>, "base/5/3467", O_RDWR) = 20</tmp/corpus-work/run/pg.backend/data/base/5/3467> <0.000050>`)
	fd, path, _ = ev.Fd(0)
	require.Equal(t, -100, fd)
	require.Equal(t, "/tmp/corpus-work/run/pg.backend/data", string(path))
	require.Equal(t, int64(20), ev.Ret)

	ev = one(t, `read(3</tmp/corpus-work/run/fdtable.namespace/tmpf>(deleted), "still", 512) = 28`)
	require.True(t, ev.Arg(0).Deleted)
	require.Equal(t, "/tmp/corpus-work/run/fdtable.namespace/tmpf", string(ev.Arg(0).Text))
	require.Equal(t, 3, ev.NArgs())

	ev = one(t, `read(3</tmp/a\x3cb\x3e (c)>, "", 1) = 0`)
	_, path, _ = ev.Fd(0)
	require.Equal(t, "/tmp/a<b> (c)", string(path))
	require.Equal(t, 3, ev.NArgs())
}

func TestJoinUnfinished(t *testing.T) {
	evs := parseFile(t, filepath.Join(traceDir, "threads.f.strace"))
	// 40: 24495 rseq(0x7f31be6fbfe0, 0x20, 0, 0x53053053 <unfinished ...>
	// 41: 24494 rt_sigprocmask(SIG_SETMASK, [],  <unfinished ...>
	// 42: 24495 <... rseq resumed>) = 0 <0.000024>
	// 43: 24494 <... rt_sigprocmask resumed>NULL, 8) = 0 <0.000021>
	ev := findLine(evs, 43)
	require.Equal(t, "rt_sigprocmask", ev.Name)
	require.Equal(t, 41, ev.Line)
	require.Equal(t, 43, ev.EndLine)
	require.Equal(t, 24494, ev.Pid)
	require.Equal(t, 4, ev.NArgs())
	require.Equal(t, "SIG_SETMASK, [], NULL, 8", string(ev.RawArgs))
	require.Equal(t, int64((1*3600+29*60+18)*1e9+997074000), ev.Time) // time of the start line
	require.Equal(t, int64(21000), ev.Duration)
	ev = findLine(evs, 42)
	require.Equal(t, "rseq", ev.Name)
	require.Equal(t, 40, ev.Line)
	require.Equal(t, 42, ev.EndLine)
	require.Equal(t, 24495, ev.Pid)
	v, _ := ev.Int(3)
	require.Equal(t, int64(0x53053053), v)

	// order of emission: the completion order
	var lines []int
	for _, ev := range evs {
		if ev.EndLine >= 40 && ev.EndLine <= 43 {
			lines = append(lines, ev.Line)
		}
	}
	require.Equal(t, []int{40, 41}, lines)

	// clone resumed with keyword args; clone3 with =>
	text := "1 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD <unfinished ...>\n" +
		"2 write(1, \"x\", 1) = 1\n" +
		"1 <... clone resumed>, child_tidptr=0x7f31be6fca10) = 24497 <0.000892>\n"
	all, err := parseAll(t, "t", text, strace.Options{})
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, "child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD, child_tidptr=0x7f31be6fca10", string(all[1].RawArgs))
	require.Equal(t, 3, all[1].NArgs())
	require.Equal(t, []int{1, 3}, []int{all[1].Line, all[1].EndLine})

	// never resumed: flushed at EOF, marked Unfinished
	all, err = parseAll(t, "t", "5 read(3,  <unfinished ...>\n6 +++ killed by SIGKILL +++\n", strace.Options{})
	require.NoError(t, err)
	require.Len(t, all, 2)
	require.Equal(t, strace.KindKilled, all[0].Kind)
	require.Equal(t, "SIGKILL", all[0].Name)
	require.True(t, all[1].Unfinished)
	require.False(t, all[1].RetKnown)
	require.Equal(t, 5, all[1].Pid)
	require.Equal(t, "3, ", string(all[1].RawArgs))
}

func TestOtherKinds(t *testing.T) {
	text := `01:30:18.895233 --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=25450, si_uid=0, si_status=0, si_utime=0, si_stime=1 /* 0.01 s */} ---
01:30:18.900763 +++ exited with 3 +++
+++ killed by SIGSEGV (core dumped) +++
strace: Process 123 attached
[pid   123] strace: Process 124 detached
--- stopped by SIGSTOP ---
[ Process PID=77 runs in 32 bit mode. ]
`
	evs, err := parseAll(t, "t", text, strace.Options{})
	require.NoError(t, err)
	require.Len(t, evs, 7)
	require.Equal(t, strace.KindSignal, evs[0].Kind)
	require.Equal(t, "SIGCHLD", evs[0].Name)
	require.Equal(t, int64(25450), evs[0].Field(0, "si_pid").Int)
	require.Equal(t, strace.KindExit, evs[1].Kind)
	require.Equal(t, int64(3), evs[1].Ret)
	require.Equal(t, strace.KindKilled, evs[2].Kind)
	require.Equal(t, "SIGSEGV", evs[2].Name)
	require.True(t, evs[2].CoreDumped)
	require.Equal(t, strace.KindAttached, evs[3].Kind)
	require.Equal(t, 123, evs[3].Pid)
	require.Equal(t, strace.KindDetached, evs[4].Kind)
	require.Equal(t, 124, evs[4].Pid)
	require.Equal(t, strace.KindSignal, evs[5].Kind)
	require.Equal(t, "stopped", evs[5].Name)
	require.Equal(t, strace.KindMessage, evs[6].Kind)
}

func TestHexDump(t *testing.T) {
	text := `write(1, "hello, world, this is a dump\n", 29) = 29
 | 00000  68 65 6c 6c 6f 2c 20 77  6f 72 6c 64 2c 20 74 68  hello, world, th |
 | 00010  69 73 20 69 73 20 61 20  64 75 6d 70 0a           is is a dump.    |
close(1) = 0
`
	evs, err := parseAll(t, "t", text, strace.Options{})
	require.NoError(t, err)
	require.Len(t, evs, 2)
	require.Equal(t, "hello, world, this is a dump\n", string(evs[0].Dump))
	s, _, _ := evs[0].Str(1)
	require.Equal(t, "hello, world, this is a dump\n", string(s))
	require.Equal(t, 1, evs[0].Line)
	// the same with the lines aliasing a large buffered input
	long := strings.Repeat("close(9) = 0\n", 5000) + text + strings.Repeat("close(9) = 0\n", 5000)
	all, err := parseAll(t, "t", long, strace.Options{})
	require.NoError(t, err)
	require.Len(t, all, 10002)
	s, _, _ = all[5000].Str(1)
	require.Equal(t, "hello, world, this is a dump\n", string(s))
	require.Equal(t, "hello, world, this is a dump\n", string(all[5000].Dump))
	require.Equal(t, "write", all[5000].Name)
	require.Equal(t, 5004, all[5001].Line)
	require.Nil(t, evs[1].Dump)
	require.Equal(t, 4, evs[1].Line)
	// round trip of the dump lines
	require.Equal(t, text[:len(text)-len("close(1) = 0\n")], strings.Replace(strace.Format(evs[0]), ")                         = 29", ") = 29", 1))

	_, err = parseAll(t, "t", " | 00000  68 65  he |\n", strace.Options{})
	var se *strace.SyntaxError
	require.ErrorAs(t, err, &se)
}

func TestSyntaxErrors(t *testing.T) {
	for _, tc := range []struct {
		text string
		line int
		col  int
		msg  string
	}{
		{"close(3) = 0\nclose(3 = 0\n", 2, 12, "expected ')'"},
		{"close(3)\n", 1, 9, "expected '= result'"},
		{`write(1, "abc, 3) = 3`, 1, 10, "unterminated string"},
		{"read(3, [1, 2}, 3) = 3\n", 1, 14, "expected ']', found '}'"},
		{"close(3) = zero\n", 1, 12, "expected a return value"},
		{"close(3) = 0 junk\n", 1, 14, "unexpected text after the return value"},
		{"close(3) = 0 <0.1\n", 1, 14, "expected a duration"},
		{"1 <... read resumed>) = 0\n", 1, 3, "no unfinished call"},
		{"1 read(3,  <unfinished ...>\n1 <... write resumed>) = 0\n", 2, 8, "unfinished call of pid 1 is read"},
		{"99:00:00 close(3) = 0\n", 1, 1, "timestamp out of range"},
		{"+++ exited with x +++\n", 1, 17, "expected an exit status"},
		{"hello world\n", 1, 6, "expected '(' after syscall name"},
		{"!\n", 1, 1, "expected a syscall name"},
		{"close(3</x) = 0\n", 1, 8, "unterminated fd decoration"},
		{"--- SIGCHLD {si_signo=SIGCHLD ---\n", 1, 30, "expected '}' before end of line"},
		{"--- SIGCHLD {a}) ---\n", 1, 16, "unbalanced ')'"},
		{"--- SIGCHLD {a} +++\n", 1, 20, "expected ' ---'"},
	} {
		_, err := parseAll(t, "bad.strace", tc.text, strace.Options{})
		var se *strace.SyntaxError
		require.ErrorAs(t, err, &se, tc.text)
		require.Equal(t, "bad.strace", se.File)
		require.Equal(t, tc.line, se.Line, tc.text)
		require.Equal(t, tc.col, se.Col, "%q: %v", tc.text, se)
		require.Contains(t, se.Msg, tc.msg, tc.text)
		require.Contains(t, se.Error(), "bad.strace:")
	}
}

func TestKeepGoing(t *testing.T) {
	text := "close(3) = 0\ngarbage(\n<... read resumed>) = 1\nclose(4) = 0\n"
	p := strace.NewParser(strings.NewReader(text), "k", strace.Options{KeepGoing: true})
	var got []int
	for {
		ev, err := p.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, ev.Line)
	}
	require.Equal(t, []int{1, 4}, got)
	require.Equal(t, 2, p.Skipped())
	require.Len(t, p.Errors(), 2)
	require.Equal(t, 3, p.Errors()[1].Line)

	// without KeepGoing the parser can still continue after an error
	p = strace.NewParser(strings.NewReader(text), "k", strace.Options{})
	var errs int
	got = nil
	for {
		ev, err := p.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			errs++
			continue
		}
		got = append(got, ev.Line)
	}
	require.Equal(t, 2, errs)
	require.Equal(t, []int{1, 4}, got)
}

// endless is an io.Reader of n bytes of 'a' (no newline), then "\nclose(3) = 0\n".
type endless struct {
	n    int
	tail string
}

func (e *endless) Read(b []byte) (int, error) {
	if e.n <= 0 {
		if e.tail == "" {
			return 0, io.EOF
		}
		k := copy(b, e.tail)
		e.tail = e.tail[k:]
		return k, nil
	}
	k := min(len(b), e.n)
	for i := range b[:k] {
		b[i] = 'a'
	}
	e.n -= k
	return k, nil
}

func TestLongLine(t *testing.T) {
	// 64 MiB line with a 1 MiB cap: an error, bounded memory, and the next line parses.
	p := strace.NewParser(&endless{n: 64 << 20, tail: "\nclose(3) = 0\n"}, "long", strace.Options{MaxLineLen: 1 << 20})
	_, err := p.Next()
	var se *strace.SyntaxError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 1, se.Line)
	require.Contains(t, se.Msg, "line longer than")
	ev, err := p.Next()
	require.NoError(t, err)
	require.Equal(t, "close", ev.Name)
	require.Equal(t, 2, ev.Line)
	_, err = p.Next()
	require.Equal(t, io.EOF, err)

	// a 1 MiB string argument is fine under the default cap
	big := `write(1, "` + strings.Repeat("x", 1<<20) + `", 1048576) = 1048576`
	ev = one(t, big)
	b, _, _ := ev.Str(1)
	require.Len(t, b, 1<<20)
}

// TestMaxLineLenBoundary: a line of exactly MaxLineLen bytes parses and
// one byte more is the error, whether Next's fast path frames the line (more
// lines follow it in the buffer) or the general one does (the last lines).
func TestMaxLineLenBoundary(t *testing.T) {
	const maxLen = 40
	pad := func(n int) string { // a close(3) line of n bytes
		s := "close(3) = 0"
		return strings.Repeat(" ", n-len(s)) + s
	}
	filler := strings.Repeat("close(4) = 0\n", 8)
	for _, tail := range []string{filler, ""} {
		for _, n := range []int{maxLen, maxLen + 1} {
			text := filler + pad(n) + "\n" + tail
			p := strace.NewParser(strings.NewReader(text), "max", strace.Options{MaxLineLen: maxLen})
			var err error
			for range 9 {
				if _, err = p.Next(); err != nil {
					break
				}
			}
			if n <= maxLen {
				require.NoError(t, err, "a line of %d bytes, %q after it", n, tail)
				continue
			}
			var se *strace.SyntaxError
			require.ErrorAs(t, err, &se, "a line of %d bytes, %q after it", n, tail)
			require.Equal(t, 9, se.Line)
			require.Contains(t, se.Msg, "line longer than 40 bytes")
		}
	}
}

func TestDeepNesting(t *testing.T) {
	deep := "f(" + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + ") = 0"
	ev := one(t, deep)
	require.Equal(t, 1, ev.NArgs())
}

type mitem struct {
	ts   string
	pid  int
	line int
	k    int
}

func TestMergeFF(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(traceDir, "threads.ffpid*.strace"))
	require.NoError(t, err)
	require.Len(t, files, 4)
	var want []mitem
	var ps []*strace.Parser
	for k, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		pid := strace.PidFromFileName(f)
		for i, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
			want = append(want, mitem{ts: l[:15], pid: pid, line: i + 1, k: k})
		}
		ps = append(ps, strace.NewParser(bytes.NewReader(b), filepath.Base(f), strace.Options{}))
	}
	sort.SliceStable(want, func(i, j int) bool { return want[i].ts < want[j].ts })
	m := strace.Merge(ps...)
	var got []mitem
	for {
		ev, err := m.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, mitem{ts: want[0].ts, pid: ev.Pid, line: ev.Line})
	}
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, [2]int{want[i].pid, want[i].line}, [2]int{got[i].pid, got[i].line}, "position %d", i)
	}
	// the first events: main process, then the threads start in time order
	require.Equal(t, 25447, got[0].pid)
	require.Equal(t, []int{25447, 25448, 25449, 25450}, firstSeen(got))
}

func firstSeen(items []mitem) []int {
	seen := map[int]bool{}
	var order []int
	for _, it := range items {
		if !seen[it.pid] {
			seen[it.pid] = true
			order = append(order, it.pid)
		}
	}
	return order
}

func TestMergeNoTimestamps(t *testing.T) {
	a := strace.NewParser(strings.NewReader("close(1) = 0\nclose(2) = 0\n"), "x.1", strace.Options{})
	b := strace.NewParser(strings.NewReader("close(3) = 0\n"), "x.2", strace.Options{})
	m := strace.Merge(a, b)
	var pids []int
	for {
		ev, err := m.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		pids = append(pids, ev.Pid)
	}
	require.Equal(t, []int{1, 1, 2}, pids)
}

// comparable projection of an event for round-trip tests
type flat struct {
	Kind                            strace.Kind
	Pid                             int
	PidStyle                        strace.PidStyle
	Time                            int64
	TimeKind                        strace.TimeKind
	TimePrec, DurPrec               uint8
	Duration                        int64
	HasDuration                     bool
	Name, Args, RetPath, Desc, Comm string
	Ret                             int64
	RetKnown, RetHex, HasPath, Inj  bool
	Errno                           syscall.Errno
	ErrnoName, Dump                 string
	Unfinished, Core, Deleted       bool
}

func flatten(ev *strace.Event) flat {
	return flat{ev.Kind, ev.Pid, ev.PidStyle, ev.Time, ev.TimeKind, ev.TimePrec, ev.DurPrec, ev.Duration, ev.HasDuration,
		ev.Name, string(ev.RawArgs), string(ev.RetPath), string(ev.ErrnoDesc), string(ev.RetComment),
		ev.Ret, ev.RetKnown, ev.RetHex, ev.RetHasPath, ev.Injected, ev.Errno, ev.ErrnoName, string(ev.Dump),
		ev.Unfinished, ev.CoreDumped, ev.RetDeleted}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, f := range traceFiles(t) {
		evs := parseFile(t, f)
		var out []byte
		for _, ev := range evs {
			out = strace.AppendFormat(out, ev)
		}
		evs2, err := parseAll(t, filepath.Base(f), string(out), strace.Options{})
		require.NoError(t, err, f)
		require.Len(t, evs2, len(evs), f)
		for i := range evs {
			require.Equal(t, flatten(evs[i]), flatten(evs2[i]), "%s:%d", f, evs[i].Line)
		}
		// a one-line event formats to its own text, modulo alignment
		var out2 []byte
		for _, ev := range evs2 {
			out2 = strace.AppendFormat(out2, ev)
		}
		require.Equal(t, string(out), string(out2), f)
	}
	// byte-exact for lines strace aligned
	b, err := os.ReadFile(filepath.Join(traceDir, "oraus.curend.strace"))
	require.NoError(t, err)
	evs := parseFile(t, filepath.Join(traceDir, "oraus.curend.strace"))
	var out []byte
	for _, ev := range evs {
		out = strace.AppendFormat(out, ev)
	}
	require.Equal(t, string(b), string(out))
}

func TestAppendQuoted(t *testing.T) {
	s := []byte("a\x00\x001\"\\\n\xff\x7f")
	q := strace.AppendQuoted(nil, s, true)
	require.Equal(t, `"a\0\0001\"\\\n\377\177"...`, string(q))
	ev := one(t, "write(1, "+string(q)+", 9) = 9")
	b, tr, _ := ev.Str(1)
	require.Equal(t, s, b)
	require.True(t, tr)
}

func TestErrnoTable(t *testing.T) {
	e, ok := strace.ErrnoByName("ENOENT")
	require.True(t, ok)
	require.Equal(t, syscall.Errno(2), e)
	e, _ = strace.ErrnoByName("ERESTARTSYS")
	require.Equal(t, syscall.Errno(512), e)
	require.Equal(t, "EBADF", strace.ErrnoName(9))
	require.Equal(t, "No such file or directory", strace.ErrnoDesc(2))
	v, ok := strace.ConstValue("O_TMPFILE")
	require.True(t, ok)
	require.Equal(t, int64(020200000), v)
}

func TestCloneIndependent(t *testing.T) {
	p := strace.NewParser(strings.NewReader("write(1, \"ab\\n\", 3) = 3\nwrite(1, \"zz\\t\", 3) = 3\n"), "c", strace.Options{})
	ev, err := p.Next()
	require.NoError(t, err)
	c := ev.Clone()
	_, err = p.Next()
	require.NoError(t, err)
	b, _, _ := c.Str(1)
	require.Equal(t, "ab\n", string(b))
	require.Equal(t, 1, c.Line)
}

func TestSteadyStateAllocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(traceDir, "threads.f.strace"))
	require.NoError(t, err)
	data := bytes.Repeat(b, 60)
	r := bytes.NewReader(data)
	p := strace.NewParser(r, "alloc", strace.Options{})
	// warm up buffers
	for i := 0; i < 1000; i++ {
		ev, err := p.Next()
		require.NoError(t, err)
		ev.Args()
	}
	// Batches of 100 events: a per-event allocation would show as >= 100
	// per run; the runtime's own occasional allocations (seen on a loaded
	// machine, absent from a heap profile of this loop) stay below one.
	allocs := testing.AllocsPerRun(20, func() {
		for i := 0; i < 100; i++ {
			ev, err := p.Next()
			if err != nil {
				t.Fatal(err)
			}
			ev.Args()
		}
	})
	require.Zero(t, allocs)
}

func TestCorpusSpotChecks(t *testing.T) {
	ns := parseFile(t, filepath.Join(traceDir, "fdtable.namespace.strace"))
	ev := findLine(ns, 41) // openat(AT_FDCWD</...>, "nonexistent", O_RDONLY) = -1 ENOENT
	require.Equal(t, syscall.Errno(2), ev.Errno)
	require.Equal(t, "ENOENT", ev.ErrnoName)
	require.Equal(t, int64(-1), ev.Ret)
	s, _, _ := ev.Str(1)
	require.Equal(t, "nonexistent", string(s))
	ev = findLine(ns, 36) // openat(..., "d", O_RDWR|O_CREAT, 0644) = -1 EISDIR
	require.Equal(t, syscall.Errno(21), ev.Errno)
	f, _ := ev.Flags(2)
	require.Equal(t, uint64(0102), f)

	ev = findLine(parseFile(t, filepath.Join(traceDir, "oraus.curend.strace")), 55)
	require.Equal(t, "lseek", ev.Name)
	require.Equal(t, syscall.Errno(22), ev.Errno)
	off, _ := ev.Int(1)
	require.Equal(t, int64(-70000), off)
	wh, _ := ev.Flags(2)
	require.Equal(t, uint64(1), wh)
	_, path, _ := ev.Fd(0)
	require.Equal(t, "/tmp/corpus-work/run/oraus.curend/oraus.msb", string(path))
	require.Equal(t, int64(16000), ev.Duration)

	ev = findLine(parseFile(t, filepath.Join(traceDir, "oraus.seq.strace")), 2)
	require.Equal(t, strace.TimeRelative, ev.TimeKind)
	require.Equal(t, int64(1715000), ev.Time)

	ev = findLine(parseFile(t, filepath.Join(traceDir, "commit.fdatasync.strace")), 1)
	require.Equal(t, strace.TimeEpoch, ev.TimeKind)
	require.Equal(t, int64(1796002145157643000), ev.Time)

	ev = findLine(parseFile(t, filepath.Join(traceDir, "fdtable.basic.strace")), 93)
	require.Equal(t, "pwrite64", ev.Name)
	off, _ = ev.Int(3)
	require.Equal(t, int64(0), off)
	s, tr, _ := ev.Str(1)
	require.Equal(t, "X", string(s))
	require.False(t, tr)

	ev = findLine(parseFile(t, filepath.Join(traceDir, "tar.create.strace")), 129)
	require.Equal(t, strace.KindExit, ev.Kind)
	require.Equal(t, 24221, ev.Pid)

	ev = findLine(parseFile(t, filepath.Join(traceDir, "threads.f.strace")), 312)
	require.Equal(t, strace.KindSignal, ev.Kind)
	require.Equal(t, "SIGCHLD", ev.Name)
	require.Equal(t, int64(24497), ev.Field(0, "si_pid").Int)
	require.Equal(t, "CLD_EXITED", string(ev.Field(0, "si_code").Text))
}

// TestMergeCausal: -ff files without timestamps are ordered by what their
// calls say: a child's events before the wait4 that returns its pid, a
// thread's right after the clone that made it, and the rest in list order.
func TestMergeCausal(t *testing.T) {
	files := []struct{ name, text string }{
		{"t.10", strings.Join([]string{
			`clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|CLONE_CHILD_SETTID|SIGCHLD, child_tidptr=0x7f) = 11`,
			`openat(AT_FDCWD, "a", O_RDONLY) = 3`,
			`wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 11`,
			`clone3({flags=CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|CLONE_SYSVSEM, exit_signal=0, stack=0x7f, stack_size=0x7fff00}, 88) = 12`,
			`clone(child_stack=0x7f, flags=0x3d0f00, parent_tid=0x7f, tls=0x7f, child_tidptr=0x7f) = 13`,
			`close(3) = 0`,
			`wait4(14, NULL, 0, NULL) = 14`,
			`fork() = 16`,
		}, "\n") + "\n"},
		{"t.11", "execve(\"/bin/true\", [\"true\"], 0x7ffc /* 1 var */) = 0\nexit_group(0) = ?\n+++ exited with 0 +++\n"},
		{"t.12", "openat(AT_FDCWD, \"b\", O_RDONLY) = 4\nexit(0) = ?\n+++ exited with 0 +++\n"},
		{"t.13", "openat(AT_FDCWD, \"c\", O_RDONLY) = 5\n"}, // -X raw flags: 0x10000 is CLONE_THREAD
		{"t.14", "getpid() = 14\n"}, // made by nothing shown, waited for
		{"t.15", "getpid() = 15\n"}, // neither: last
		{"t.16", "getpid() = 16\n"}, // forked, not waited for: before t.15
	}
	var ps []*strace.Parser
	for _, f := range files {
		ps = append(ps, strace.NewParser(strings.NewReader(f.text), f.name, strace.Options{}))
	}
	m := strace.Merge(ps...)
	var got [][2]int
	for {
		ev, err := m.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, [2]int{ev.Pid, ev.Line})
	}
	require.Equal(t, [][2]int{
		{10, 1}, {10, 2}, // the fork, and the parent goes on
		{11, 1}, {11, 2}, {11, 3}, // the child, before the wait that returns it
		{10, 3}, {10, 4}, // the wait, the thread's clone
		{12, 1}, {12, 2}, {12, 3}, // the thread, at once
		{10, 5},          // the next thread's clone
		{13, 1},          // that thread
		{10, 6},          // the parent again
		{14, 1}, {10, 7}, // waited for
		{10, 8}, {16, 1}, // forked, at the parent's end
		{15, 1},
	}, got)
}

// TestStatusFilterContinuation: with -z or -e status=, strace prints the
// second half of an interrupted call on the next line with no pid and no
// `<... name resumed>`; the parser joins it with the call it continues.
func TestStatusFilterContinuation(t *testing.T) {
	text := strings.Join([]string{
		`15668 read(3,  <unfinished ...>`,
		`"", 4096)                               = 0`,
		`15668 wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], WNOHANG, NULL) = 15669`,
		`15676 rt_sigprocmask(SIG_SETMASK, [],  <unfinished ...>`,
		`NULL, 8)                                = 0`,
		`15676 lseek(3,  <unfinished ...>`,
		`0, SEEK_SET)                            = 0`,
		``,
	}, "\n")
	evs, err := parseAll(t, "z.strace", text, strace.Options{})
	require.NoError(t, err)
	require.Len(t, evs, 4)
	type call struct {
		pid, line, end int
		name, args     string
		ret            int64
	}
	var got []call
	for _, ev := range evs {
		got = append(got, call{ev.Pid, ev.Line, ev.EndLine, ev.Name, string(ev.RawArgs), ev.Ret})
	}
	require.Equal(t, []call{
		{15668, 1, 2, "read", `3, "", 4096`, 0},
		{15668, 3, 3, "wait4", `-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], WNOHANG, NULL`, 15669},
		{15676, 4, 5, "rt_sigprocmask", `SIG_SETMASK, [], NULL, 8`, 0},
		{15676, 6, 7, "lseek", `3, 0, SEEK_SET`, 0},
	}, got)

	// Only the line right after the unfinished call continues it, and only
	// if it does not start as an event does.
	for _, bad := range []string{
		"1 read(3,  <unfinished ...>\n1 close(4) = 0\n\"\", 4096) = 0\n",
		"1 read(3,  <unfinished ...>\n2 \"\", 4096) = 0\n",
		"1 read(3,  <unfinished ...>\n<... write resumed>) = 0\n",
		"1 read(3,  <unfinished ...>\n[pid 2] ) = 0\n",
	} {
		_, err := parseAll(t, "z.strace", bad, strace.Options{})
		var se *strace.SyntaxError
		require.ErrorAs(t, err, &se, "%q", bad)
	}
}

// TestDecodePidsComm: --decode-pids=comm (-Y) writes the pid column as
// PID<comm>; the comm (at most 15 bytes, maybe with spaces) is skipped.
func TestDecodePidsComm(t *testing.T) {
	text := strings.Join([]string{
		`15983<strace> execve("/usr/bin/sh", ["sh", "../work.sh"], 0x7ffe725d9548 /* 35 vars */) = 0`,
		`15983<sh> 01:29:02.087632 close(3) = 0`,
		`15984<my worker> lseek(4, 0, SEEK_END) = 65536`,
		`15983<sh> wait4(-1, [{WIFEXITED(s) && WEXITSTATUS(s) == 0}], 0, NULL) = 15984<my worker>`,
		`[pid  5347<thr>] close(9) = 0`, // strace writing to a terminal
		``,
	}, "\n")
	evs, err := parseAll(t, "y.strace", text, strace.Options{})
	require.NoError(t, err)
	require.Len(t, evs, 5)
	require.Equal(t, 5347, evs[4].Pid)
	require.Equal(t, strace.PidBracket, evs[4].PidStyle)
	require.Equal(t, "close", evs[4].Name)
	for i, want := range []struct {
		pid  int
		name string
		ret  int64
	}{{15983, "execve", 0}, {15983, "close", 0}, {15984, "lseek", 65536}, {15983, "wait4", 15984}} {
		require.Equal(t, want.pid, evs[i].Pid, "line %d", i+1)
		require.Equal(t, strace.PidColumn, evs[i].PidStyle)
		require.Equal(t, want.name, evs[i].Name)
		require.Equal(t, want.ret, evs[i].Ret)
	}
	require.Equal(t, strace.TimeOfDay, evs[1].TimeKind)

	_, err = parseAll(t, "y.strace", "15983<sh close(3) = 0\n", strace.Options{})
	var se *strace.SyntaxError
	require.ErrorAs(t, err, &se)
}

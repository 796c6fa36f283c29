package interposer_test

import (
	"fmt"
	"hash/fnv"
	"strings"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/iosim/iosim/sim"
)

// A program is a list of ops run by one process, on the kernel alone and through an
// interposer, each on a fresh identical world; read-equivalence says every observed
// result is identical.

type op struct {
	Kind   string
	Path   string
	Path2  string
	Flags  int
	Fd     int
	Fd2    int
	N      int
	Off    int64
	Whence int
	Cmd    int
	Arg    int
	Sizes  []int
	Legacy bool // open: the open(2) syscall rather than openat(2)
}

var flagNames = []struct {
	v int
	n string
}{
	{unix.O_WRONLY, "O_WRONLY"}, {unix.O_RDWR, "O_RDWR"}, {unix.O_CREAT, "O_CREAT"},
	{unix.O_TRUNC, "O_TRUNC"}, {unix.O_APPEND, "O_APPEND"}, {unix.O_NONBLOCK, "O_NONBLOCK"},
	{unix.O_CLOEXEC, "O_CLOEXEC"}, {unix.O_NOFOLLOW, "O_NOFOLLOW"}, {unix.O_DIRECTORY, "O_DIRECTORY"},
}

func flagString(f int) string {
	var s []string
	if f&unix.O_ACCMODE == 0 {
		s = append(s, "O_RDONLY")
	}
	for _, x := range flagNames {
		if f&x.v != 0 {
			s = append(s, x.n)
		}
	}
	return strings.Join(s, "|")
}

var whenceName = []string{"SEEK_SET", "SEEK_CUR", "SEEK_END", "SEEK_DATA", "SEEK_HOLE", "5"}

var cmdName = map[int]string{unix.F_GETFD: "F_GETFD", unix.F_SETFD: "F_SETFD", unix.F_GETFL: "F_GETFL",
	unix.F_SETFL: "F_SETFL", unix.F_DUPFD: "F_DUPFD", unix.F_DUPFD_CLOEXEC: "F_DUPFD_CLOEXEC"}

func (o op) String() string {
	if o.Fd == lastFd {
		o.Fd = 0
		return strings.Replace(o.withFd(), "(0", "(last", 1)
	}
	return o.withFd()
}

func (o op) withFd() string {
	switch o.Kind {
	case "open":
		if o.Legacy {
			return fmt.Sprintf("open(%q, %s) [open(2)]", o.Path, flagString(o.Flags))
		}
		return fmt.Sprintf("open(%q, %s)", o.Path, flagString(o.Flags))
	case "read":
		return fmt.Sprintf("read(%d, %d)", o.Fd, o.N)
	case "pread":
		return fmt.Sprintf("pread64(%d, %d, %d)", o.Fd, o.N, o.Off)
	case "readv":
		return fmt.Sprintf("readv(%d, %v)", o.Fd, o.Sizes)
	case "lseek":
		return fmt.Sprintf("lseek(%d, %d, %s)", o.Fd, o.Off, whenceName[o.Whence])
	case "fcntl":
		switch o.Cmd {
		case unix.F_GETFD, unix.F_GETFL:
			return fmt.Sprintf("fcntl(%d, %s)", o.Fd, cmdName[o.Cmd])
		case unix.F_SETFL:
			return fmt.Sprintf("fcntl(%d, F_SETFL, %s)", o.Fd, flagString(o.Arg))
		}
		return fmt.Sprintf("fcntl(%d, %s, %d)", o.Fd, cmdName[o.Cmd], o.Arg)
	case "dup":
		return fmt.Sprintf("dup(%d)", o.Fd)
	case "dup2":
		return fmt.Sprintf("dup2(%d, %d)", o.Fd, o.Fd2)
	case "dup3":
		return fmt.Sprintf("dup3(%d, %d, O_CLOEXEC)", o.Fd, o.Fd2)
	case "fstat", "close", "fsync":
		return fmt.Sprintf("%s(%d)", o.Kind, o.Fd)
	case "write":
		return fmt.Sprintf("write(%d, %d bytes)", o.Fd, o.N)
	case "pwrite":
		return fmt.Sprintf("pwrite64(%d, %d bytes, %d)", o.Fd, o.N, o.Off)
	case "ftruncate":
		return fmt.Sprintf("ftruncate(%d, %d)", o.Fd, o.Off)
	case "fallocate":
		return fmt.Sprintf("fallocate(%d, 0, %d, %d)", o.Fd, o.Off, o.N)
	case "truncate":
		return fmt.Sprintf("truncate(%q, %d)", o.Path, o.Off)
	case "rename":
		return fmt.Sprintf("rename(%q, %q)", o.Path, o.Path2)
	case "unlink":
		return fmt.Sprintf("unlink(%q)", o.Path)
	case "link":
		return fmt.Sprintf("link(%q, %q)", o.Path, o.Path2)
	case "symlink":
		return fmt.Sprintf("symlink(%q, %q)", o.Path2, o.Path)
	case "chdir":
		return fmt.Sprintf("chdir(%q)", o.Path)
	case "execve":
		return "execve()"
	case "setrlimit":
		return fmt.Sprintf("setrlimit(RLIMIT_NOFILE, %d)", o.N)
	case "fork":
		return "fork()"
	case "switch":
		return fmt.Sprintf("switch to process %d", o.N)
	case "close_range":
		return fmt.Sprintf("close_range(%d, %d, %d)", o.Fd, o.Fd2, o.Arg)
	}
	return o.Kind + "(?)"
}

func prog(ops []op) string {
	s := make([]string, len(ops))
	for i, o := range ops {
		s[i] = o.String()
	}
	return strings.Join(s, "; ")
}

// result renders what a program could observe of one call.
func result(r sim.Result, data []byte, extra string) string {
	if r.Errno != 0 {
		return "-1 " + unix.ErrnoName(r.Errno)
	}
	s := fmt.Sprint(r.Ret)
	if n := min(int(max(r.Ret, 0)), len(data)); n > 0 {
		h := fnv.New32a() // the bytes, in short
		h.Write(data[:n])
		s += fmt.Sprintf(" bytes#%08x", h.Sum32())
	}
	return s + extra
}

// wdata is the deterministic payload of write ops.
func wdata(n int, salt int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + (i+salt)%26)
	}
	return b
}

// lastFd is the Fd of an op that means "the fd the last successful open returned".
const lastFd = -100

// runner runs ops on one process, remembering the last fd an open returned.
type runner struct {
	p     *sim.Process
	last  int64
	procs []*sim.Process // every process of the run (fork adds one)
}

func (rn *runner) run(o op, salt int) string {
	switch o.Kind {
	case "fork":
		if len(rn.procs) == 0 {
			rn.procs = []*sim.Process{rn.p}
		}
		if len(rn.procs) >= 4 {
			return "not forked"
		}
		child := rn.p.Fork()
		if child == nil {
			return "fork failed"
		}
		rn.procs = append(rn.procs, child)
		rn.p = child
		return fmt.Sprint("pid ", child.Pid())
	case "switch":
		if len(rn.procs) == 0 {
			return "one process"
		}
		rn.p = rn.procs[o.N%len(rn.procs)]
		return fmt.Sprint("pid ", rn.p.Pid())
	}
	p := rn.p
	c := sim.Call{Path: o.Path, Path2: o.Path2}
	var data []byte
	extra := ""
	fd := int64(o.Fd)
	if o.Fd == lastFd {
		fd = rn.last
	}
	switch o.Kind {
	case "open":
		c.Nr, c.Args = sim.SYS_OPENAT, [6]int64{unix.AT_FDCWD, 0, int64(o.Flags) | 0x8000, 0o644}
		if o.Legacy {
			c.Nr, c.Args = sim.SYS_OPEN, [6]int64{0, int64(o.Flags), 0o644}
		}
	case "read":
		data = make([]byte, o.N)
		c.Nr, c.Args, c.Buf = sim.SYS_READ, [6]int64{fd, 0, int64(o.N)}, data
	case "pread":
		data = make([]byte, o.N)
		c.Nr, c.Args, c.Buf = sim.SYS_PREAD64, [6]int64{fd, 0, int64(o.N), o.Off}, data
	case "readv":
		c.Nr, c.Args = sim.SYS_READV, [6]int64{fd, 0, int64(len(o.Sizes))}
		tot := 0
		for _, n := range o.Sizes {
			tot += n
		}
		data = make([]byte, tot)
		rest := data
		for _, n := range o.Sizes {
			c.Iov = append(c.Iov, rest[:n:n])
			rest = rest[n:]
		}
	case "lseek":
		c.Nr, c.Args = sim.SYS_LSEEK, [6]int64{fd, o.Off, int64(o.Whence)}
	case "fcntl":
		c.Nr, c.Args = sim.SYS_FCNTL, [6]int64{fd, int64(o.Cmd), int64(o.Arg)}
	case "dup":
		c.Nr, c.Args = sim.SYS_DUP, [6]int64{fd}
	case "dup2":
		c.Nr, c.Args = sim.SYS_DUP2, [6]int64{fd, int64(o.Fd2)}
	case "dup3":
		c.Nr, c.Args = sim.SYS_DUP3, [6]int64{fd, int64(o.Fd2), unix.O_CLOEXEC}
	case "fstat":
		var st unix.Stat_t
		c.Nr, c.Args, c.Obj = sim.SYS_FSTAT, [6]int64{fd}, &st
		r := p.Syscall(c)
		if r.Errno == 0 {
			extra = fmt.Sprintf(" {dev=%d ino=%d mode=%o nlink=%d size=%d blocks=%d}", st.Dev, st.Ino, st.Mode, st.Nlink, st.Size, st.Blocks)
		}
		return result(r, nil, extra)
	case "close":
		c.Nr, c.Args = sim.SYS_CLOSE, [6]int64{fd}
	case "fsync":
		c.Nr, c.Args = sim.SYS_FSYNC, [6]int64{fd}
	case "write":
		c.Nr, c.Args, c.Buf = sim.SYS_WRITE, [6]int64{fd, 0, int64(o.N)}, wdata(o.N, salt)
	case "pwrite":
		c.Nr, c.Args, c.Buf = sim.SYS_PWRITE64, [6]int64{fd, 0, int64(o.N), o.Off}, wdata(o.N, salt)
	case "ftruncate":
		c.Nr, c.Args = sim.SYS_FTRUNCATE, [6]int64{fd, o.Off}
	case "fallocate":
		c.Nr, c.Args = sim.SYS_FALLOCATE, [6]int64{fd, 0, o.Off, int64(o.N)}
	case "truncate":
		c.Nr, c.Args = sim.SYS_TRUNCATE, [6]int64{0, o.Off}
	case "rename":
		c.Nr = sim.SYS_RENAME
	case "unlink":
		c.Nr = sim.SYS_UNLINK
	case "link":
		c.Nr = sim.SYS_LINK
	case "symlink":
		c.Nr = sim.SYS_SYMLINK
	case "chdir":
		c.Nr = sim.SYS_CHDIR
	case "execve":
		c.Nr = sim.SYS_EXECVE
	case "close_range":
		c.Nr, c.Args = sim.SYS_CLOSE_RANGE, [6]int64{fd, int64(uint32(o.Fd2)), int64(o.Arg)}
	case "setrlimit":
		c.Nr, c.Args, c.Obj = sim.SYS_SETRLIMIT, [6]int64{unix.RLIMIT_NOFILE}, &unix.Rlimit{Cur: uint64(o.N), Max: 1 << 20}
	default:
		panic(o.Kind)
	}
	r := p.Syscall(c)
	if o.Kind == "open" && r.Errno == 0 {
		rn.last = r.Ret
	}
	return result(r, data, extra)
}

// runProg runs ops on a fresh world through stack (nil: the kernel alone).
func runProg(t fataler, ops []op, stack func(sim.Handler) sim.Handler) []string {
	_, k, p := newWorld(t)
	if stack != nil {
		p = p.Through(stack(k))
	}
	out := make([]string, len(ops))
	rn := &runner{p: p, last: -1}
	for i, o := range ops {
		out[i] = rn.run(o, i)
	}
	return out
}

// checkEquivalent runs ops both ways and fails t at the first difference, logging
// the program up to it (the counterexample after shrinking).
func checkEquivalent(t *rapid.T, ops []op, stack func(sim.Handler) sim.Handler) {
	checkEquivalentOn(t, ops, stack, nil)
}

// checkEquivalentOn is checkEquivalent comparing only the ops for which compare
// is true (all when nil).
func checkEquivalentOn(t *rapid.T, ops []op, stack func(sim.Handler) sim.Handler, compare func(op) bool) {
	want := runProg(t, ops, nil)
	got := runProg(t, ops, stack)
	for i := range ops {
		if want[i] != got[i] && (compare == nil || compare(ops[i])) {
			t.Logf("counterexample: %s", prog(ops[:i+1]))
			t.Logf("divergence: %s = %s (kernel) vs %s (interposer)", ops[i], want[i], got[i])
			t.Fatalf("op %d %s: kernel %s, interposer %s", i, ops[i], want[i], got[i])
		}
	}
}

// Generators.

var (
	cachedPaths = []string{msbPath, "ora/mesg/oraus.msb", "/ora/./mesg/../mesg/oraus.msb", "/msb.link", "/ora/mesg/hard", "oraus.msb", "mesg/oraus.msb"}
	allPaths    = append(append([]string{}, cachedPaths...), otherPath, "/ora/mesg/new", "/ora/mesg")
	readFlags   = []int{unix.O_RDONLY, unix.O_RDONLY | unix.O_CLOEXEC, unix.O_RDONLY | unix.O_NONBLOCK, unix.O_RDONLY | unix.O_NOFOLLOW, unix.O_RDONLY | unix.O_DIRECTORY}
	writeFlags  = []int{unix.O_RDWR, unix.O_WRONLY | unix.O_APPEND, unix.O_RDWR | unix.O_TRUNC, unix.O_RDWR | unix.O_CREAT}
	offsets     = []int64{-10, 0, 1, 256, 512, 1024, 39936, msbSize - 100, msbSize, msbSize + 100}
)

// genFd draws an fd: mostly the ones a short program opens (3, 4, 5), sometimes
// stdin..stderr, a never-opened one or -1.
func genFd(t *rapid.T) int {
	return rapid.SampledFrom([]int{3, 4, 5, 3, 4, 3, 6, 0, -1}).Draw(t, "fd")
}

func genOff(t *rapid.T) int64 {
	if rapid.Bool().Draw(t, "anyoff") {
		return rapid.Int64Range(-5, msbSize+600).Draw(t, "off")
	}
	return rapid.SampledFrom(offsets).Draw(t, "off")
}

func genN(t *rapid.T) int { return rapid.IntRange(0, 700).Draw(t, "n") }

type gen func(*rapid.T) op

var readOps = map[string]gen{
	"open": func(t *rapid.T) op {
		return op{Kind: "open", Path: rapid.SampledFrom(allPaths).Draw(t, "path"), Flags: rapid.SampledFrom(readFlags).Draw(t, "flags")}
	},
	"open2": func(t *rapid.T) op { // the cached file, the common way
		return op{Kind: "open", Path: rapid.SampledFrom(cachedPaths[:2]).Draw(t, "path"), Flags: rapid.SampledFrom(readFlags[:2]).Draw(t, "flags"),
			Legacy: rapid.IntRange(0, 3).Draw(t, "legacy") == 0}
	},
	"read":  func(t *rapid.T) op { return op{Kind: "read", Fd: genFd(t), N: genN(t)} },
	"pread": func(t *rapid.T) op { return op{Kind: "pread", Fd: genFd(t), N: genN(t), Off: genOff(t)} },
	"readv": func(t *rapid.T) op {
		return op{Kind: "readv", Fd: genFd(t), Sizes: rapid.SliceOfN(rapid.IntRange(0, 400), 0, 3).Draw(t, "sizes")}
	},
	"lseek": func(t *rapid.T) op {
		return op{Kind: "lseek", Fd: genFd(t), Off: genOff(t), Whence: rapid.IntRange(0, 5).Draw(t, "whence")}
	},
	"fcntl": func(t *rapid.T) op {
		cmd := rapid.SampledFrom([]int{unix.F_GETFD, unix.F_SETFD, unix.F_GETFL, unix.F_SETFL, unix.F_DUPFD, unix.F_DUPFD_CLOEXEC}).Draw(t, "cmd")
		arg := 0
		switch cmd {
		case unix.F_SETFD:
			arg = rapid.IntRange(0, 1).Draw(t, "arg")
		case unix.F_SETFL:
			arg = rapid.SampledFrom([]int{0, unix.O_NONBLOCK, unix.O_APPEND}).Draw(t, "arg")
		case unix.F_DUPFD, unix.F_DUPFD_CLOEXEC:
			arg = rapid.IntRange(0, 6).Draw(t, "arg")
		}
		return op{Kind: "fcntl", Fd: genFd(t), Cmd: cmd, Arg: arg}
	},
	"dup":    func(t *rapid.T) op { return op{Kind: "dup", Fd: genFd(t)} },
	"dup2":   func(t *rapid.T) op { return op{Kind: "dup2", Fd: genFd(t), Fd2: genFd(t)} },
	"dup3":   func(t *rapid.T) op { return op{Kind: "dup3", Fd: genFd(t), Fd2: genFd(t)} },
	"fstat":  func(t *rapid.T) op { return op{Kind: "fstat", Fd: genFd(t)} },
	"close":  func(t *rapid.T) op { return op{Kind: "close", Fd: genFd(t)} },
	"execve": func(t *rapid.T) op { return op{Kind: "execve"} },
	"fork":   func(t *rapid.T) op { return op{Kind: "fork"} },
	"switch": func(t *rapid.T) op { return op{Kind: "switch", N: rapid.IntRange(0, 3).Draw(t, "proc")} },
	"close_range": func(t *rapid.T) op {
		return op{Kind: "close_range", Fd: rapid.IntRange(0, 6).Draw(t, "first"), Fd2: rapid.SampledFrom([]int{3, 4, 6, -1}).Draw(t, "last"),
			Arg: rapid.SampledFrom([]int{0, unix.CLOSE_RANGE_CLOEXEC}).Draw(t, "flags")}
	},
}

// hotOps weighs programs towards the calls a cache serves, on the first fd.
var hotOps = map[string]gen{
	"open3": readOps["open2"],
	"open4": readOps["open2"],
	"read4": func(t *rapid.T) op { return op{Kind: "read", Fd: rapid.IntRange(3, 5).Draw(t, "fd"), N: genN(t)} },
	"lseek4": func(t *rapid.T) op {
		return op{Kind: "lseek", Fd: rapid.IntRange(3, 5).Draw(t, "fd"), Off: genOff(t), Whence: rapid.IntRange(0, 4).Draw(t, "whence")}
	},
	"read3":  func(t *rapid.T) op { return op{Kind: "read", Fd: 3, N: genN(t)} },
	"pread3": func(t *rapid.T) op { return op{Kind: "pread", Fd: 3, N: genN(t), Off: genOff(t)} },
	"lseek3": func(t *rapid.T) op {
		return op{Kind: "lseek", Fd: 3, Off: genOff(t), Whence: rapid.IntRange(0, 5).Draw(t, "whence")}
	},
}

var mutateOps = map[string]gen{
	"openw": func(t *rapid.T) op {
		return op{Kind: "open", Path: rapid.SampledFrom(allPaths).Draw(t, "path"), Flags: rapid.SampledFrom(writeFlags).Draw(t, "flags")}
	},
	"write":     func(t *rapid.T) op { return op{Kind: "write", Fd: genFd(t), N: genN(t)} },
	"pwrite":    func(t *rapid.T) op { return op{Kind: "pwrite", Fd: genFd(t), N: genN(t), Off: genOff(t)} },
	"ftruncate": func(t *rapid.T) op { return op{Kind: "ftruncate", Fd: genFd(t), Off: genOff(t)} },
	"fallocate": func(t *rapid.T) op { return op{Kind: "fallocate", Fd: genFd(t), Off: genOff(t), N: genN(t) + 1} },
	"truncate": func(t *rapid.T) op {
		return op{Kind: "truncate", Path: rapid.SampledFrom(allPaths).Draw(t, "path"), Off: genOff(t)}
	},
	"rename": func(t *rapid.T) op {
		return op{Kind: "rename", Path: rapid.SampledFrom(allPaths).Draw(t, "path"), Path2: rapid.SampledFrom(allPaths).Draw(t, "path2")}
	},
	"unlink": func(t *rapid.T) op { return op{Kind: "unlink", Path: rapid.SampledFrom(allPaths).Draw(t, "path")} },
	"symlink": func(t *rapid.T) op {
		return op{Kind: "symlink", Path: rapid.SampledFrom(allPaths).Draw(t, "path"), Path2: rapid.SampledFrom(allPaths).Draw(t, "target")}
	},
	"chdir": func(t *rapid.T) op {
		return op{Kind: "chdir", Path: rapid.SampledFrom([]string{"/", "/ora", "/ora/mesg"}).Draw(t, "dir")}
	},
	"link": func(t *rapid.T) op {
		return op{Kind: "link", Path: rapid.SampledFrom(allPaths).Draw(t, "path"), Path2: rapid.SampledFrom(allPaths).Draw(t, "path2")}
	},
}

// genProg draws a program from the named ops of the tables.
func genProg(t *rapid.T, maxLen int, tables ...map[string]gen) []op {
	var names []string
	all := map[string]gen{}
	for _, tb := range tables {
		for n, g := range tb {
			all[n] = g
			names = append(names, n)
		}
	}
	sortStrings(names)
	g := rapid.Custom(func(t *rapid.T) op { return all[rapid.SampledFrom(names).Draw(t, "op")](t) })
	return rapid.SliceOfN(g, 1, maxLen).Draw(t, "prog")
}

// genLongProg is genProg with at least minLen ops: programs long enough to reach
// the states where a cache goes wrong (used where no counterexample is expected).
func genLongProg(t *rapid.T, minLen, maxLen int, tables ...map[string]gen) []op {
	var names []string
	all := map[string]gen{}
	for _, tb := range tables {
		for n, g := range tb {
			all[n] = g
			names = append(names, n)
		}
	}
	sortStrings(names)
	g := rapid.Custom(func(t *rapid.T) op { return all[rapid.SampledFrom(names).Draw(t, "op")](t) })
	return rapid.SliceOfN(g, minLen, maxLen).Draw(t, "prog")
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

package interposer

import (
	"flag"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/format.golden from the formatter")

// goldenCalls returns a fixed, seeded set of calls of every x86-64 syscall, with
// argument values that exercise the formatter's names (AT_FDCWD, open flags, modes,
// whence, fcntl commands...), successes and failures.
func goldenCalls() []struct {
	c sim.Call
	r sim.Result
} {
	rng := rand.New(rand.NewPCG(14, 1))
	pool := []int64{0, 1, 3, 7, -1, unix.AT_FDCWD, 0o644, 0o755, 4096, 1 << 20,
		unix.O_WRONLY | unix.O_CREAT | unix.O_TRUNC, unix.O_RDONLY | unix.O_CLOEXEC,
		unix.O_RDWR | unix.O_DIRECT | unix.O_APPEND, unix.O_TMPFILE | unix.O_RDWR, 0x40000000,
		unix.AT_EMPTY_PATH, unix.AT_SYMLINK_NOFOLLOW, unix.AT_REMOVEDIR, unix.O_CLOEXEC,
		unix.F_SETFD, unix.F_GETFL, unix.F_SETFL, unix.F_DUPFD_CLOEXEC, unix.F_SETLK, 2, 4, 1234}
	var out []struct {
		c sim.Call
		r sim.Result
	}
	for _, s := range sim.Syscalls() {
		for k := range 6 {
			c := sim.Call{Nr: s.Nr}
			for i := range c.Args {
				if rng.IntN(3) > 0 {
					c.Args[i] = pool[rng.IntN(len(pool))]
				}
			}
			if k%3 != 2 {
				c.Path = []string{"a", "/tmp/x y", "dir/\"q\"\n", ""}[rng.IntN(4)]
			}
			if k%2 == 0 {
				c.Path2 = []string{"b", "/t", ""}[rng.IntN(3)]
			}
			buf := make([]byte, rng.IntN(48))
			for i := range buf {
				buf[i] = byte(rng.IntN(256))
				if rng.IntN(2) == 0 {
					buf[i] = "abc 019\n"[rng.IntN(8)]
				}
			}
			c.Buf = buf
			if k%2 == 1 {
				c.Iov = [][]byte{buf[:len(buf)/2], buf[len(buf)/2:]}
			}
			if k%3 == 0 {
				c.Obj = &unix.Stat_t{Mode: []uint32{unix.S_IFREG | 0o644, unix.S_IFDIR | 0o755, unix.S_IFLNK | 0o777, 0o600}[rng.IntN(4)], Size: int64(rng.IntN(10000))}
			}
			r := sim.Result{Ret: pool[rng.IntN(len(pool))]}
			if k == 4 {
				r = sim.Result{Ret: -1, Errno: []unix.Errno{unix.ENOENT, unix.EBADF, unix.EINVAL}[rng.IntN(3)]}
			}
			out = append(out, struct {
				c sim.Call
				r sim.Result
			}{c, r})
		}
	}
	return out
}

// TestFormatGolden checks the tracer's rendering of every syscall against
// testdata/format.golden (go test -run TestFormatGolden -update rewrites it).
func TestFormatGolden(t *testing.T) {
	var b strings.Builder
	for _, g := range goldenCalls() {
		b.Write(appendCall(nil, &g.c, g.r, 16))
		b.WriteByte('\n')
	}
	if *updateGolden {
		require.NoError(t, os.WriteFile("testdata/format.golden", []byte(b.String()), 0o644))
	}
	want, err := os.ReadFile("testdata/format.golden")
	require.NoError(t, err)
	wl, gl := strings.Split(string(want), "\n"), strings.Split(b.String(), "\n")
	require.Equal(t, len(wl), len(gl))
	for i := range wl {
		require.Equal(t, wl[i], gl[i], "line %d", i+1)
	}
}

// TestFormatErrnoAsStrace: errno 95 prints as strace prints it, EOPNOTSUPP,
// so that the trace layer's lines read back with the recorded errno name.
func TestFormatErrnoAsStrace(t *testing.T) {
	c := &sim.Call{Nr: sim.SYS_FSYNC, Args: [6]int64{3}}
	got := string(appendCall(nil, c, sim.Result{Ret: -1, Errno: unix.EOPNOTSUPP}, 32))
	require.Equal(t, "fsync(3) = -1 EOPNOTSUPP (Operation not supported)", got)
}

// TestFormatGetcwd: getcwd's path prints without the NUL its result counts,
// as strace prints it, so that the line replays.
func TestFormatGetcwd(t *testing.T) {
	c := &sim.Call{Nr: sim.SYS_GETCWD, Buf: append([]byte("/w/d\x00"), make([]byte, 59)...)}
	c.Args[1] = int64(len(c.Buf))
	require.Equal(t, `getcwd("/w/d", 64) = 5`, string(appendCall(nil, c, sim.Result{Ret: 5}, 32)))
}

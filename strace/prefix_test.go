package strace_test

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/strace"
)

// TestSyscallNumberAndIPPrefixes: strace -n prints the syscall number and -i
// the instruction pointer between the timestamp and the event, on calls,
// resumptions, signals and exits; -k prints the call's stack after it, one
// " > " frame a line. The events are the ones the same trace has without
// them, and the formatter writes the prefixes back.
func TestSyscallNumberAndIPPrefixes(t *testing.T) {
	in := `32613 06:39:55.804359 [ 257] [00007f6aa14d6b1d] openat(AT_FDCWD, "/etc/ld.so.cache", O_RDONLY|O_CLOEXEC) = 3
 > /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2(_dl_catch_error+0x869d) [0x20b1d]
 > /usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2(_dl_rtld_di_serinfo+0x1f36) [0xa936]
32613 06:39:55.804548 [   3] [00007f6aa14d6a07] close(3 <unfinished ...>
32614 06:39:55.815865 [ 231] [????????????????] +++ exited with 0 +++
32613 06:39:55.815900 [   3] [00007f6aa14d6a07] <... close resumed>) = 0
 > unexpected_backtracing_error [0x7f6aa14d6a07]
32613 06:39:55.815911 [  61] [00007f6aa1394bd3] --- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=32614, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---
[1000] read(3, "x", 1) = 1
[ Process PID=32615 runs in 32 bit mode. ]
`
	p := strace.NewParser(strings.NewReader(in), "t", strace.Options{})
	type got struct {
		kind  strace.Kind
		name  string
		nr    int
		ip    uint64
		ipUnk bool
		ret   int64
	}
	var evs []got
	var formatted []string
	for {
		ev, err := p.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if ev.Kind == strace.KindSyscall || ev.Kind == strace.KindExit || ev.Kind == strace.KindSignal {
			require.True(t, ev.HasNr, ev.Line)
		}
		evs = append(evs, got{ev.Kind, ev.Name, ev.Nr, ev.IP, ev.IPUnknown, ev.Ret})
		formatted = append(formatted, string(strace.AppendFormat(nil, ev)))
	}
	require.Equal(t, []got{
		{strace.KindSyscall, "openat", 257, 0x7f6aa14d6b1d, false, 3},
		{strace.KindExit, "", 231, 0, true, 0},
		{strace.KindSyscall, "close", 3, 0x7f6aa14d6a07, false, 0},
		{strace.KindSignal, "SIGCHLD", 61, 0x7f6aa1394bd3, false, 0},
		{strace.KindSyscall, "read", 1000, 0, false, 1},
		{strace.KindMessage, "", 0, 0, false, 0},
	}, evs)
	require.True(t, strings.HasPrefix(formatted[0], "32613 06:39:55.804359 [ 257] [00007f6aa14d6b1d] openat(AT_FDCWD, "), formatted[0])
	require.True(t, strings.HasPrefix(formatted[1], "32614 06:39:55.815865 [ 231] [????????????????] +++ exited with 0 +++"), formatted[1])
	require.True(t, strings.HasPrefix(formatted[4], "[1000] read("), formatted[4])
}

// TestStackTraceFramesAreSkipped: a strace -k file yields the same events as
// the same file without its frame lines.
func TestStackTraceFramesAreSkipped(t *testing.T) {
	data, err := os.ReadFile("testdata/k.strace")
	require.NoError(t, err)
	var plain []string
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(l, " > ") {
			plain = append(plain, l)
		}
	}
	names := func(text string) []string {
		p := strace.NewParser(strings.NewReader(text), "t", strace.Options{})
		var out []string
		for {
			ev, err := p.Next()
			if err == io.EOF {
				return out
			}
			require.NoError(t, err)
			out = append(out, ev.Name+string(ev.RawArgs))
		}
	}
	withFrames, without := names(string(data)), names(strings.Join(plain, ""))
	require.Greater(t, len(without), 10)
	require.Equal(t, without, withFrames)
	require.Less(t, len(plain), strings.Count(string(data), "\n"), "the file has frames")
}

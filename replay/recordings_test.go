package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	iodevice "github.com/iosim/iosim/device"
)

// recordings are traces made on Linux/ext4 for the shapes of recording
// that replay reads (testdata/rec/README.md says how each was made).
const recordings = "testdata/rec/"

// replayClean replays files with Verify and requires a clean replay, every
// line read.
func replayClean(t *testing.T, opts Options, files ...string) *Report {
	t.Helper()
	opts.Verify = true
	rep, err := Run(files, opts)
	require.NoError(t, err)
	require.Zero(t, rep.ParseErrors)
	for _, d := range rep.DivergenceList {
		t.Error(d)
	}
	require.Zero(t, rep.Divergences)
	require.Positive(t, rep.Verified)
	return rep
}

// TestStderrRecordingsReplayAlike: the same program recorded with
// `strace -f -o FILE` and with `strace -f prog 2> FILE` (strace's messages
// cutting call lines, no [pid N] while one task is traced, the program's
// own stderr output inside call lines) replays clean, with the same calls.
func TestStderrRecordingsReplayAlike(t *testing.T) {
	for _, name := range []string{"pipeline", "threads-fork", "errout"} {
		t.Run(name, func(t *testing.T) {
			var reps []*Report
			for _, form := range []string{".o", ".stderr"} {
				reps = append(reps, replayClean(t, Options{}, recordings+name+form+".strace"))
			}
			o, e := reps[0], reps[1]
			require.Equal(t, o.Processes, e.Processes)
			require.Equal(t, o.Replayed, e.Replayed)
			for _, n := range []string{"openat", "read", "write", "close", "unlink", "unlinkat", "newfstatat", "execve", "copy_file_range"} {
				require.Equal(t, o.Syscalls[n], e.Syscalls[n], n)
			}
		})
	}
}

// TestStopReported: a replay that stops at a malformed line returns the
// report of what it read, marked incomplete with the error; one that skips
// lines is incomplete too.
func TestStopReported(t *testing.T) {
	p := filepath.Join(t.TempDir(), "bad.strace")
	require.NoError(t, os.WriteFile(p, []byte("close(0) = 0\nclose(1 = 0\nclose(2) = 0\n"), 0o644))
	rep, err := Run([]string{p}, Options{Verify: true})
	require.Error(t, err)
	require.NotNil(t, rep)
	require.False(t, rep.Complete)
	require.Equal(t, err.Error(), rep.Error)
	require.Contains(t, rep.Error, "bad.strace:2:")
	require.EqualValues(t, 1, rep.Calls)

	rep, err = Run([]string{p}, Options{Verify: true, KeepGoing: true})
	require.NoError(t, err)
	require.False(t, rep.Complete)
	require.Empty(t, rep.Error)
	require.EqualValues(t, 1, rep.ParseErrors)
	require.EqualValues(t, 2, rep.Calls)

	require.True(t, replayClean(t, Options{}, recordings+"pipeline.o.strace").Complete)
}

// TestAIORecording: a program's Linux AIO (aio.c: vectored iocbs, O_DIRECT
// iocbs with a misaligned buffer and offset that complete with -EINVAL, six
// iocbs in a context of io_setup(4), direct reads completing after
// buffered ones) replays clean; an altered completion is caught at its own
// event, whatever the order of the events.
func TestAIORecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"aio.strace")
	require.EqualValues(t, 5, rep.Syscalls["io_getevents"].Calls)

	alter := func(t *testing.T, line int, from, to string) *Report {
		b, err := os.ReadFile(recordings + "aio.strace")
		require.NoError(t, err)
		lines := strings.Split(string(b), "\n")
		require.Contains(t, lines[line-1], from)
		lines[line-1] = strings.Replace(lines[line-1], from, to, 1)
		p := filepath.Join(t.TempDir(), "aio.strace")
		require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644))
		rep, err := Run([]string{p}, Options{Verify: true})
		require.NoError(t, err)
		return rep
	}
	// the misaligned direct read's -EINVAL
	rep = alter(t, 38, "data=0x65, obj=0x7ffd97698280, res=-22", "data=0x65, obj=0x7ffd97698280, res=4096")
	require.EqualValues(t, 1, rep.Divergences)
	require.Contains(t, rep.DivergenceList[0].What, "event data=0x65 res")
	require.Equal(t, "4096", rep.DivergenceList[0].Recorded)
	require.Equal(t, "-22", rep.DivergenceList[0].Simulated)
	// the vectored write's count
	rep = alter(t, 38, "res=8192", "res=0")
	require.EqualValues(t, 1, rep.Divergences)
	// a completion of an iocb the program never submitted
	rep = alter(t, 41, "{data=0x71,", "{data=0x99,")
	require.EqualValues(t, 1, rep.Divergences)
	require.Contains(t, rep.DivergenceList[0].What, "event data=0x99 (returned at line 41)")
	require.Equal(t, "data=0x71 res=4096", rep.DivergenceList[0].Simulated)
	// the events of one call in another order are the same completions
	rep = alter(t, 41, "{data=0x70, obj=0x7ffd97698000, res=4096, res2=0}, {data=0x71, obj=0x7ffd97698040, res=4096, res2=0}",
		"{data=0x71, obj=0x7ffd97698040, res=4096, res2=0}, {data=0x70, obj=0x7ffd97698000, res=4096, res2=0}")
	require.Zero(t, rep.Divergences)
}

// TestAIORecordingOnDevices: under a time model, where an O_DIRECT iocb
// completes when the model's device does, each io_getevents waits for as
// many completions as the recorded call returned, so the AIO recordings
// replay clean on every kind of device.
func TestAIORecordingOnDevices(t *testing.T) {
	for _, dev := range []string{"nvme", "sata-ssd", "hdd-7200"} {
		prof, err := iodevice.Lookup(dev)
		require.NoError(t, err)
		for _, name := range []string{"aio.strace", "aio-timeout.strace", "aio-badaddr.strace"} {
			t.Run(dev+"/"+name, func(t *testing.T) { replayClean(t, Options{Device: prof}, recordings+name) })
		}
	}
}

// TestUntimedFFPipes: a program whose parent acts on what its child wrote
// to a pipe (pipe.c, as git repack with pack-objects) replays alike from
// -ff files with and without timestamps: without them, the order comes
// from the pipe and the SIGCHLD.
func TestUntimedFFPipes(t *testing.T) {
	var reps []*Report
	for _, form := range []string{"pipe-ff", "pipe-fftt"} {
		files, err := filepath.Glob(recordings + form + ".*")
		require.NoError(t, err)
		require.Len(t, files, 2)
		reps = append(reps, replayClean(t, Options{}, files...))
	}
	require.Equal(t, reps[0].Calls, reps[1].Calls)
	require.Equal(t, reps[0].Verified, reps[1].Verified)
	require.Equal(t, reps[0].Syscalls, reps[1].Syscalls)
}

// TestTmpfileRecording: O_TMPFILE files written, named with linkat (by
// AT_EMPTY_PATH and through /proc/self/fd/N), an O_EXCL one refused
// (ENOENT), with their `-y` "(deleted)" decorations, replay clean.
func TestTmpfileRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"tmpfile.strace")
	require.EqualValues(t, 4, rep.Syscalls["linkat"].Calls)
	require.EqualValues(t, 1, rep.Syscalls["linkat"].Errors)
}

// TestShiftRecording: fallocate's COLLAPSE_RANGE and INSERT_RANGE move the
// data that later reads, SEEK_DATA/SEEK_HOLE and fstat see, with and without
// a cache in the stack.
func TestShiftRecording(t *testing.T) {
	for _, stack := range [][]string{nil, {"filecache:path=f"}} {
		rep := replayClean(t, Options{Stack: stack}, recordings+"shift.strace")
		require.EqualValues(t, 2, rep.Syscalls["fallocate"].Errors)
	}
}

// TestCloseRangeRecording: close_range frees the fds a later open and close
// find free (Python's subprocess calls it in the child before exec).
func TestCloseRangeRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"close-range.strace")
	require.EqualValues(t, 2, rep.Syscalls["close_range"].Calls)
	require.Empty(t, rep.Skipped["close_range (not replayed)"])
}

// TestAIOBadAddressRecording: io_submit refuses a buffer outside user space
// and an unreadable iocb or array (EFAULT), and completes one at an
// unmapped low address with res -EFAULT, as Linux did.
func TestAIOBadAddressRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"aio-badaddr.strace")
	require.EqualValues(t, 8, rep.Syscalls["io_submit"].Calls)
	require.EqualValues(t, 4, rep.Syscalls["io_submit"].Errors)
	for k := range rep.Skipped {
		require.NotContains(t, k, "io_")
	}
}

// TestAIOTimeoutRecording: io_getevents returned fewer events than min_nr
// when its timeout ran out (an fdatasync iocb still in flight); the model,
// which completes every iocb at submission, returns as many as Linux did.
func TestAIOTimeoutRecording(t *testing.T) {
	replayClean(t, Options{}, recordings+"aio-timeout.strace")
}

// TestTraceLayerOutputReplays: what the trace layer writes while a recording
// replays is strace's syntax for every call it shows, AIO included: it
// replays clean in turn.
func TestTraceLayerOutputReplays(t *testing.T) {
	for name, call := range map[string]string{"aio.strace": "io_submit", "aio-timeout.strace": "io_getevents",
		"aio-badaddr.strace": "io_submit", "tmpfile.strace": "linkat", "shift.strace": "fallocate"} {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out.strace")
			_, err := Run([]string{recordings + name}, Options{Stack: []string{"trace:out=" + out + ",s=65536"}})
			require.NoError(t, err)
			rep := replayClean(t, Options{}, out)
			require.NotNil(t, rep.Syscalls[call], "the output shows %s", call)
		})
	}
}

// TestFifoRecording: a program's pipe, socketpair, FIFO and device node
// (fifo.c) replays clean: the model answers ESPIPE for lseek, pread and
// fadvise64 on the FIFO, S_IFIFO with size 0 for its stat, F_GETPIPE_SZ and
// the socketpair's O_RDWR F_GETFL as Linux, and makes the calls' fds itself.
func TestFifoRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"fifo.strace")
	for _, n := range []string{"pipe2", "socketpair", "mknodat", "lseek", "fadvise64", "fcntl"} {
		require.Positive(t, rep.Syscalls[n].Calls, n)
		require.Zero(t, rep.NotModelled[n], n)
	}
	for k := range rep.Skipped {
		require.NotContains(t, k, "fcntl", k)
		require.NotContains(t, k, "mknodat", k)
	}
}

// TestOpenat2Recording: openat2 calls under each resolve flag (openat2.c)
// replay clean: their errnos (EXDEV, ELOOP, EAGAIN, EINVAL) and the fds they
// return, which later calls use.
func TestOpenat2Recording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"openat2.strace")
	require.EqualValues(t, 10, rep.Syscalls["openat2"].Calls)
	require.Zero(t, rep.NotModelled["openat2"])
	for k := range rep.Skipped {
		require.NotContains(t, k, "openat2", k)
	}
}

// TestXattrUtimesRecording: reading xattrs (getxattr ENODATA, listxattr 0) and
// utime, utimes and futimesat (xattr-utimes.c) replay clean and are modelled.
func TestXattrUtimesRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"xattr-utimes.strace")
	for _, n := range []string{"getxattr", "lgetxattr", "fgetxattr", "listxattr", "flistxattr", "llistxattr", "utime", "utimes", "futimesat"} {
		require.Positive(t, rep.Syscalls[n].Calls, n)
		require.Zero(t, rep.NotModelled[n], n)
	}
	for k := range rep.Skipped {
		require.True(t, strings.HasPrefix(k, "mmap") || strings.HasPrefix(k, "munmap"), k)
	}
}

// TestOFDGetlkRecording: an F_OFD_GETLK that found a conflicting OFD lock
// shows l_pid=-1, the kernel's answer; rebuilt as the query (l_pid 0) it
// replays clean instead of failing with EINVAL (ofd-getlk.c).
func TestOFDGetlkRecording(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"ofd-getlk.strace")
	require.EqualValues(t, 5, rep.Syscalls["fcntl"].Calls)
	for k := range rep.Skipped {
		require.NotContains(t, k, "fcntl", k)
	}
}

// TestFifoBeforeTrace: a FIFO the trace did not make but stat shows is
// inferred as a FIFO, so opening it, lseek (ESPIPE) and fstat (S_IFIFO, size
// 0) answer as recorded; the bytes read from it are the recording's answer.
func TestFifoBeforeTrace(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo.strace")
	trace := `1 newfstatat(AT_FDCWD, "/w/ff", {st_mode=S_IFIFO|0644, st_size=0, ...}, 0) = 0
1 openat(AT_FDCWD, "/w/ff", O_RDONLY|O_NONBLOCK) = 3
1 lseek(3, 0, SEEK_CUR) = -1 ESPIPE (Illegal seek)
1 read(3, "abc", 64) = 3
1 fstat(3, {st_mode=S_IFIFO|0644, st_size=0, ...}) = 0
1 fcntl(3, F_GETPIPE_SZ) = 65536
1 close(3) = 0
`
	require.NoError(t, os.WriteFile(p, []byte(trace), 0o644))
	rep := replayClean(t, Options{}, p)
	require.EqualValues(t, 6, rep.Verified, "all but the read, whose bytes are the recording's")
	require.Empty(t, rep.Skipped)
}

// TestPipeAroundInheritedFd: pipe2 returned fds 3 and 5 because fd 4 was
// inherited (pipe-inherited.c run with 4</dev/null); replay infers fd 4 as
// it does for an open, so the model's fds are the recorded ones.
func TestPipeAroundInheritedFd(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"pipe-inherited.strace")
	require.EqualValues(t, 1, rep.Syscalls["pipe2"].Calls)
	require.EqualValues(t, 1, rep.Syscalls["socketpair"].Calls)
}

// TestFFOrderSearch: threads-order.c's threads read what the other thread
// wrote to a shared file (a pread after a barrier, offsets of a shared fd
// after appends and after racing writes). Recorded with -ff and no
// timestamps, the files' own order (a thread runs to its end) diverges;
// with -ff -tt so does the order of the calls' start times, since a call
// takes effect after it starts. Replay searches for an order in which
// every result agrees, replays clean in it, and says so in a note; the
// search is deterministic.
func TestFFOrderSearch(t *testing.T) {
	for _, form := range []string{"threads-order-ff", "threads-order-fftt"} {
		t.Run(form, func(t *testing.T) {
			files, err := filepath.Glob(recordings + form + ".*")
			require.NoError(t, err)
			require.Len(t, files, 3)
			own, err := replayOnce(files, Options{Verify: true}, nil)
			require.NoError(t, err)
			require.Positive(t, own.Divergences, "the files' own order agrees: the recording does not need the search")

			rep := replayClean(t, Options{}, files...)
			note := searchNote(rep)
			require.Contains(t, note, "the order of the -ff files was chosen by search")
			require.Contains(t, note, form+".")

			again := replayClean(t, Options{}, files...)
			require.Equal(t, note, searchNote(again))
			require.Equal(t, rep.Syscalls, again.Syscalls)

			// The same order under a layer and with the callbacks crash uses.
			var events int
			layered := replayClean(t, Options{Stack: []string{"count"}, OnEvent: func(string, int) { events++ }}, files...)
			require.Equal(t, note, searchNote(layered))
			lines := 0
			for _, f := range files {
				b, err := os.ReadFile(f)
				require.NoError(t, err)
				lines += strings.Count(string(b), "\n")
			}
			require.Equal(t, lines, events, "an event told of more than once: the search's replays are not the replay's")
		})
	}
}

// TestFFOrderSearchInconsistent: a result that no order of the files can
// give (an offset edited to a value no interleaving of the writes makes)
// is still a divergence, named by its line, and the note says that no
// order agrees.
func TestFFOrderSearchInconsistent(t *testing.T) {
	files, err := filepath.Glob(recordings + "threads-order-ff.*")
	require.NoError(t, err)
	dir := t.TempDir()
	var edited string
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		if strings.HasSuffix(f, ".16863") {
			lines := strings.Split(string(b), "\n")
			require.Equal(t, "lseek(3, 0, SEEK_CUR)                   = 156", lines[20])
			lines[20] = "lseek(3, 0, SEEK_CUR)                   = 150"
			b = []byte(strings.Join(lines, "\n"))
			edited = filepath.Join(dir, filepath.Base(f))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644))
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Join(dir, filepath.Base(f)))
	}
	rep, err := Run(names, Options{Verify: true})
	require.NoError(t, err)
	require.Positive(t, rep.Divergences)
	var found bool
	for _, d := range rep.DivergenceList {
		if d.File == edited && d.Line == 21 {
			found = true
			require.Equal(t, "150", d.Recorded)
		}
	}
	require.True(t, found, "no divergence at the edited line: %v", rep.DivergenceList)
	require.Contains(t, searchNote(rep), "no order of the -ff files agrees with every recorded result")
}

// searchNote returns the note on the order of -ff files.
func searchNote(rep *Report) string {
	for _, n := range rep.Notes {
		if strings.Contains(n, "order of the -ff files") {
			return n
		}
	}
	return ""
}

package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzReplay feeds arbitrary trace text to a verifying replay: whatever the input,
// the replay ends with a report or an error, never a panic or a hang.
func FuzzReplay(f *testing.F) {
	for _, name := range []string{"fdtable.basic", "fdtable.namespace", "sparse.seekdata", "aio.dbwr", "threads.f"} {
		data, err := os.ReadFile(traces + name + ".strace")
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := 0; i+8 <= len(lines); i += 8 {
			f.Add(strings.Join(lines[i:i+8], "\n"))
		}
	}
	// the shapes of the recordings: strace's stderr, AIO, O_TMPFILE, shifts
	for _, name := range []string{"pipeline.stderr.strace", "errout.stderr.strace", "aio.strace", "aio-badaddr.strace", "tmpfile.strace", "shift.strace"} {
		data, err := os.ReadFile(recordings + name)
		if err != nil {
			f.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		for i := len(lines) / 2; i+16 <= len(lines); i += 48 {
			f.Add(strings.Join(lines[i:i+16], "\n"))
		}
	}
	// what a file from before the trace shows: vectored reads, shifts, seeks
	// for data and holes, AIO reads, names made in its directories
	f.Add("openat(AT_FDCWD, \"pre\", O_RDWR) = 3\nreadv(3, [{iov_base=\"abc\", iov_len=100}], 1) = 3\n" +
		"preadv2(3, [{iov_base=\"\", iov_len=10}], 1, -1, 0) = 10\nfallocate(3, FALLOC_FL_COLLAPSE_RANGE, 0, 4096) = 0\n" +
		"lseek(3, 4096, SEEK_HOLE) = 9000\nlseek(3, 0, SEEK_DATA) = 0\nsymlink(\"a\", \"d/l\") = 0\n" +
		"io_setup(8, [0x7f00]) = 0\nio_submit(0x7f00, 1, [{aio_data=0x1, aio_lio_opcode=IOCB_CMD_PREAD, aio_fildes=3, aio_buf=0x1000, aio_nbytes=4096, aio_offset=0}]) = 1\n" +
		"io_getevents(0x7f00, 1, 8, [{data=0x1, obj=0x10, res=100, res2=0}], NULL) = 1")
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, text string) {
		p := filepath.Join(dir, "fuzz.strace")
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, _ = Run([]string{p}, Options{Verify: true, KeepGoing: true, MaxLineLen: 1 << 16})
		_, _ = Run([]string{p}, Options{Verify: true})
	})
}

package replay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// cutvec.c writes with every shape of write (writev, a writev of 40 iovecs,
// pwritev, pwritev2, an io_submit IOCB_CMD_PWRITE), each longer than
// strace's default -s 32, then reads bytes that only a longer -s shows.

// TestCutWritesUnknown: the bytes each shape of write wrote past what -s
// showed are unknown, not zeros: the reads of them are not compared, and a
// note counts them; the bytes the trace shows are still compared.
func TestCutWritesUnknown(t *testing.T) {
	rep := replayClean(t, Options{}, recordings+"cutvec.strace")
	// preadv@40: 32 of writev's A's; pread@120: 8 B's; pread@170: the last 8
	// bytes of the cut iovec array; preadv@240: 8 D's; pread@340: 20 E's;
	// pread@420: 20 F's of the AIO write (each read shows 32 bytes at most)
	require.Contains(t, rep.Notes, "96 byte(s) read were written with data the trace does not show (strace -s cut it): not compared")
	require.EqualValues(t, 2, rep.Syscalls["writev"].Calls-rep.Syscalls["writev"].Errors)
	require.Zero(t, rep.Skipped["writev (iovec array cut)"], "the writev whose iovec array strace cut is replayed")

	full := replayClean(t, Options{}, recordings+"cutvec.s4096.strace")
	for _, n := range full.Notes {
		require.NotContains(t, n, "not compared")
	}

	for _, tc := range []struct {
		name     string
		line     int
		from, to string
		want     int // the line the divergence is reported at
	}{
		// the first shown byte of pwritev's first iovec, read back at line 40
		{"vectored write's shown bytes", 33, `iov_base="CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"...`, `iov_base="XCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"...`, 40},
		// a shown iovec of the writev whose array strace cut (offset 170)
		{"cut array's shown iovecs", 32, `{iov_base="u", iov_len=1}`, `{iov_base="U", iov_len=1}`, 40},
		// a read's byte where the model knows the file holds a hole (offset 190)
		{"hole", 40, `mn\0\0`, `mn\1\0`, 40},
		// the AIO write's last shown byte (offset 431)
		{"AIO write's shown bytes", 36, `FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF"..., aio_nbytes`, `FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFG"..., aio_nbytes`, 43},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile(recordings + "cutvec.strace")
			require.NoError(t, err)
			lines := strings.Split(string(b), "\n")
			require.Contains(t, lines[tc.line-1], tc.from)
			lines[tc.line-1] = strings.Replace(lines[tc.line-1], tc.from, tc.to, 1)
			p := filepath.Join(t.TempDir(), "cutvec.strace")
			require.NoError(t, os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644))
			rep, err := Run([]string{p}, Options{Verify: true})
			require.NoError(t, err)
			require.NotZero(t, rep.Divergences)
			require.Equal(t, tc.want, rep.DivergenceList[0].Line, "%s", rep.DivergenceList[0])
		})
	}
}

// TestUnknownHook: Options.Unknown is told of every range a write wrote
// unseen, with its call and line; an error it returns stops the replay after
// that call.
func TestUnknownHook(t *testing.T) {
	type got struct {
		line     int
		call     string
		off, end int64
	}
	var us []got
	rep, err := Run([]string{recordings + "cutvec.strace"}, Options{Unknown: func(u Unknown) error {
		us = append(us, got{u.Line, u.Call, u.Off, u.End})
		require.Contains(t, u.Why, "strace -s")
		return nil
	}})
	require.NoError(t, err)
	require.True(t, rep.Complete)
	require.Equal(t, []got{
		{31, "writev", 32, 100}, {31, "writev", 132, 150}, // 100 A's, 50 B's
		{32, "writev", 182, 190},                             // 40 iovecs of 1 byte, 32 shown
		{33, "pwritev", 232, 240}, {33, "pwritev", 272, 300}, // 40 C's, 60 D's at 200
		{34, "pwritev2", 332, 370},  // 70 E's at 300
		{36, "io_submit", 432, 464}, // 64 F's at 400
	}, us)

	stop := errors.New("stop")
	var n int
	rep, err = Run([]string{recordings + "cutvec.strace"}, Options{Unknown: func(u Unknown) error {
		n++
		require.Equal(t, "the trace shows 32 of the 100 bytes this call wrote (strace -s 32 cut the data)", u.Why)
		require.Equal(t, "record with a -s at least the largest write (strace -s 1048576) or with iosim record", u.Fix)
		require.Equal(t, "cutvec.strace:31: writev: "+u.Why, filepath.Base(u.String()))
		return stop
	}})
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)
	require.False(t, rep.Complete)
	require.EqualValues(t, 31, rep.Calls)

	_, err = Run([]string{recordings + "cutvec.s4096.strace"}, Options{Unknown: func(u Unknown) error {
		t.Errorf("the trace shows every byte: %v", u)
		return nil
	}})
	require.NoError(t, err)
}

// TestLearnVectored: a vectored read teaches the model the bytes it shows
// where they were unknown, each iovec's at its place, so a later read is
// compared there; the bytes no read showed stay unknown.
func TestLearnVectored(t *testing.T) {
	trace := `openat(AT_FDCWD, "/f", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3
pwrite64(3, "AAAAAAAAAA"..., 40, 0) = 40
preadv(3, [{iov_base="AAAA", iov_len=4}, {iov_base="AAAAAAAAAA"..., iov_len=20}], 2, 10) = 24
pread64(3, "AAAAAAAAAAAAAAAAAAAAAAAA", 24, 10) = 24
`
	rep := replayClean(t, Options{}, writeTrace(t, trace))
	// preadv: 4 + 10 shown unknown bytes; pread64: the 10 at [24,34) no read showed
	require.Contains(t, rep.Notes, "24 byte(s) read were written with data the trace does not show (strace -s cut it): not compared")
	for _, tc := range []struct {
		at      int // offset in the file of the byte pread64 shows altered
		diverge bool
	}{{13, true}, {22, true}, {23, true}, {24, false}, {33, false}} {
		b := []byte(strings.Repeat("A", 24))
		b[tc.at-10] = 'B'
		altered := strings.Replace(trace, `pread64(3, "AAAAAAAAAAAAAAAAAAAAAAAA"`, `pread64(3, "`+string(b)+`"`, 1)
		rep, err := Run([]string{writeTrace(t, altered)}, Options{Verify: true})
		require.NoError(t, err)
		if !tc.diverge {
			require.Zero(t, rep.Divergences, "byte %d was never shown", tc.at)
			continue
		}
		require.EqualValues(t, 1, rep.Divergences, "byte %d", tc.at)
		require.Equal(t, 4, rep.DivergenceList[0].Line)
		require.Equal(t, fmt.Sprintf("byte at file offset %d", tc.at), rep.DivergenceList[0].What)
	}
}

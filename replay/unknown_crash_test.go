package replay

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/crash"
)

// update8k.c replaces /tmp/rec/u8k/app/data (8192 'o') with 8192 bytes of
// 'a'..'z' the safe way (temp file, fsync, rename, fsync of the directory);
// update8k.strace is it at strace's default -s 32, update8k.s1048576.strace
// at -s 1048576.

const u8kDir = "/tmp/rec/u8k/app"

// u8kContent is a checker in the program's own terms: data, when present,
// holds the old content or the new, whole. With cut, no state given to it
// holds the zeros the model has where the trace did not show the write
// (data.tmp or data with a zero right after the 32 bytes -s showed; in a
// full recording a lost write reads as zeros too).
func u8kContent(t *testing.T, cut bool) crash.Checker {
	old := bytes.Repeat([]byte("o"), 8192)
	var new []byte
	for i := range 8192 {
		new = append(new, byte('a'+i%26))
	}
	return crash.CheckFunc{ID: "content", F: func(s *crash.State) []crash.Finding {
		for _, p := range []string{u8kDir + "/data", u8kDir + "/data.tmp"} {
			if b, ok := s.ReadFile(p); cut && ok && len(b) > 32 && b[32] == 0 {
				t.Errorf("%s: the checker was given %s holding bytes the trace does not show", s.Name, p)
			}
		}
		b, ok := s.ReadFile(u8kDir + "/data")
		if ok && !bytes.Equal(b, old) && !bytes.Equal(b, new) {
			return []crash.Finding{{Kind: "content", Path: u8kDir + "/data", Message: "neither old nor new"}}
		}
		return nil
	}}
}

func exploreU8k(t *testing.T, trace string, copts crash.Options) (*crash.Report, error) {
	copts.Checkers = []crash.Checker{crash.Durability{}, crash.AtomicReplace{}, crash.Fsck{}, u8kContent(t, trace == "update8k.strace")}
	rep, _, err := Explore([]string{crashData + trace}, Options{Root: crashData + "update8k.snapshot:" + u8kDir}, copts)
	return rep, err
}

// TestExploreUnknownBytes: a crash state never holds bytes the trace does
// not show. A trace whose write -s cut is refused, naming the write and the
// -s to record with; with SkipUnknown, only the states without such bytes
// are checked and the others counted; the program recorded in full is
// safe.
func TestExploreUnknownBytes(t *testing.T) {
	_, err := exploreU8k(t, "update8k.strace", crash.Options{})
	require.ErrorIs(t, err, ErrUnknownBytes)
	require.Contains(t, err.Error(), "update8k.strace:31: write: the trace shows 32 of the 8192 bytes this call wrote (strace -s 32 cut the data)")
	require.Contains(t, err.Error(), "strace -s 1048576")

	rep, err := exploreU8k(t, "update8k.strace", crash.Options{SkipUnknown: true})
	require.NoError(t, err)
	require.Empty(t, rep.Findings, "a state holding the zeros the model has for the unseen bytes was checked")
	require.Positive(t, rep.Unchecked)
	require.Positive(t, rep.Checked, "the states before the write, or without it, are checked")
	require.Equal(t, rep.DistinctStates, rep.Checked+rep.Unchecked)
	require.Contains(t, rep.UncheckedWhy, "update8k.strace:31: write:")

	full, err := exploreU8k(t, "update8k.s1048576.strace", crash.Options{})
	require.NoError(t, err)
	require.Empty(t, full.Findings)
	require.Zero(t, full.Unchecked)
	require.Empty(t, full.UncheckedWhy)
	require.Greater(t, full.Checked, rep.Checked)
}

// TestExploreUnknownBytesEveryShape: every shape of write that -s cut is
// refused (cutvec.strace: writev is the first).
func TestExploreUnknownBytesEveryShape(t *testing.T) {
	_, _, err := Explore([]string{recordings + "cutvec.strace"}, Options{}, crash.Options{})
	require.True(t, errors.Is(err, ErrUnknownBytes), "%v", err)
	require.Contains(t, err.Error(), "cutvec.strace:31: writev: the trace shows 32 of the 100 bytes")

	rep, _, err := Explore([]string{recordings + "cutvec.strace"}, Options{}, crash.Options{SkipUnknown: true})
	require.NoError(t, err)
	require.Positive(t, rep.Unchecked)

	rep, _, err = Explore([]string{recordings + "cutvec.s4096.strace"}, Options{}, crash.Options{})
	require.NoError(t, err)
	require.Zero(t, rep.Unchecked)
	require.Empty(t, rep.Findings)
}

// TestExploreUnknownBytesOtherCauses: a copy of a file from before the trace
// (its bytes are not in the trace), a copy of bytes written unseen and a
// shared writable mapping (no trace shows its stores) are refused too, at
// their call; a copy of bytes the trace shows is not.
func TestExploreUnknownBytesOtherCauses(t *testing.T) {
	for _, tc := range []struct {
		name, trace string
		want        string // "" : explored
	}{
		{"copy of a file from before the trace", `openat(AT_FDCWD, "/src", O_RDONLY) = 3
fstat(3, {st_mode=S_IFREG|0644, st_size=100, ...}) = 0
openat(AT_FDCWD, "/dst", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4
copy_file_range(3, NULL, 4, NULL, 100, 0) = 100
fsync(4) = 0
`, "t.strace:4: copy_file_range: copied from a file that existed before the trace, whose bytes it does not show"},
		{"copy of bytes written unseen", `openat(AT_FDCWD, "/src", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3
write(3, "0123456789"..., 40) = 40
openat(AT_FDCWD, "/dst", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4
sendfile(4, 3, [0] => [40], 40) = 40
`, "t.strace:2: write: the trace shows 10 of the 40 bytes this call wrote (strace -s 10 cut the data)"},
		{"sendfile of bytes the trace shows", `openat(AT_FDCWD, "/src", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3
write(3, "0123456789", 10) = 10
openat(AT_FDCWD, "/dst", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4
sendfile(4, 3, [0] => [10], 10) = 10
fsync(4) = 0
`, ""},
		{"shared writable mapping", `openat(AT_FDCWD, "/f", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3
ftruncate(3, 4096) = 0
mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_SHARED, 3, 0) = 0x7f0000000000
fsync(3) = 0
`, "t.strace:3: mmap: a shared writable mapping: the stores through it are not in the trace"},
		{"private mapping", `openat(AT_FDCWD, "/f", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3
ftruncate(3, 4096) = 0
mmap(NULL, 4096, PROT_READ|PROT_WRITE, MAP_PRIVATE, 3, 0) = 0x7f0000000000
fsync(3) = 0
`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := writeTrace(t, tc.trace)
			rep, _, err := Explore([]string{p}, Options{}, crash.Options{})
			if tc.want == "" {
				require.NoError(t, err)
				require.Zero(t, rep.Unchecked)
				return
			}
			require.ErrorIs(t, err, ErrUnknownBytes)
			require.Contains(t, err.Error(), tc.want)
		})
	}

	// The copy of bytes written unseen makes them unseen in its destination.
	type got struct {
		line     int
		off, end int64
	}
	var us []got
	inos := map[uint64]bool{}
	p := writeTrace(t, `openat(AT_FDCWD, "/src", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3
write(3, "0123456789"..., 40) = 40
openat(AT_FDCWD, "/dst", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4
sendfile(4, 3, [0] => [40], 40) = 40
sendfile(4, 3, [0] => [5], 5) = 5
`)
	_, err := Run([]string{p}, Options{Unknown: func(u Unknown) error {
		us = append(us, got{u.Line, u.Off, u.End})
		inos[u.Ino] = true
		return nil
	}})
	require.NoError(t, err)
	require.Equal(t, []got{{2, 10, 40}, {4, 10, 40}}, us, "the second sendfile copies shown bytes")
	require.Len(t, inos, 2)
}

// TestExploreReadOfUnknownBytes: under crash exploration a read of bytes the
// trace did not show changes nothing a crash can leave (replay does not
// write what it showed into the model, as it does to verify): the same
// distinct states as without the read.
func TestExploreReadOfUnknownBytes(t *testing.T) {
	with := `openat(AT_FDCWD, "/f", O_RDWR|O_CREAT|O_TRUNC, 0644) = 3
pwrite64(3, "AAAAAAAAAA"..., 40, 0) = 40
pread64(3, "AAAAAAAAAAAAAAAAAAAA", 20, 0) = 20
pwrite64(3, "B", 1, 100) = 1
`
	without := strings.Replace(with, "pread64(3, \"AAAAAAAAAAAAAAAAAAAA\", 20, 0) = 20\n", "", 1)
	var distinct []int
	for _, tr := range []string{with, without} {
		rep, _, err := Explore([]string{writeTrace(t, tr)}, Options{}, crash.Options{SkipUnknown: true})
		require.NoError(t, err)
		require.Positive(t, rep.Unchecked)
		distinct = append(distinct, rep.DistinctStates)
	}
	require.Equal(t, distinct[1], distinct[0])
}

// TestExploreCutAnnouncement: an announcement whose data -s cut (the
// program printed 36 bytes, the trace shows 32) is refused as a file's
// unseen bytes are: a checker would read a stdout the program did not
// print. With SkipUnknown the states from that announcement on are not
// checked; with AssumeUnknown they are, with the bytes shown, and the report
// says so. Options.Stdout is given the bytes shown.
func TestExploreCutAnnouncement(t *testing.T) {
	p := writeTrace(t, joinLines([]string{
		`100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`,
		`100 openat(AT_FDCWD, "/w/f", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3`,
		`100 write(3, "new\n", 4) = 4`,
		`100 write(1, "started\n", 8) = 8`,
		`100 fsync(3) = 0`,
		`100 write(1, "the configuration was updated: d"..., 36) = 36`,
		`100 close(3) = 0`,
	}))
	var seen []string
	check := crash.CheckFunc{ID: "stdout", F: func(s *crash.State) []crash.Finding {
		seen = append(seen, string(s.Stdout))
		return nil
	}}
	_, _, err := Explore([]string{p}, Options{}, crash.Options{Checkers: []crash.Checker{check}})
	require.ErrorIs(t, err, ErrUnknownBytes)
	require.Contains(t, err.Error(), p+":6: write: the trace shows 32 of the 36 bytes the program printed (strace -s 32 cut the data)")
	require.Contains(t, err.Error(), "a checker reads what the program printed")

	seen = nil
	rep, _, err := Explore([]string{p}, Options{}, crash.Options{SkipUnknown: true, Checkers: []crash.Checker{check}})
	require.NoError(t, err)
	require.Positive(t, rep.Unchecked)
	require.Contains(t, rep.UncheckedWhy, p+":6: write: the trace shows 32 of the 36 bytes the program printed")
	require.Contains(t, seen, "started\n", "the states before the cut announcement are checked")
	for _, s := range seen {
		require.NotContains(t, s, "configuration", "a state holding the cut announcement was checked")
	}

	// cat of a file from before the trace, without --root: its bytes are
	// not known.
	cat := writeTrace(t, joinLines([]string{
		`100 execve("/bin/cat", ["cat", "old.txt"], 0x7ffd /* 1 var */) = 0`,
		`100 openat(AT_FDCWD, "/w/old.txt", O_RDONLY) = 3`,
		`100 copy_file_range(3, NULL, 1, NULL, 9223372035781033984, 0) = 5`,
	}))
	_, _, err = Explore([]string{cat}, Options{}, crash.Options{Checkers: []crash.Checker{check}})
	require.ErrorIs(t, err, ErrUnknownBytes)
	require.Contains(t, err.Error(), cat+":3: copy_file_range: copied from a file that existed before the trace")

	// a writev whose second string -s cut
	vec := writeTrace(t, joinLines([]string{
		`100 execve("/bin/p", ["p"], 0x7ffd /* 1 var */) = 0`,
		`100 writev(1, [{iov_base="done: ", iov_len=6}, {iov_base="the configuration was updated, a"..., iov_len=40}], 2) = 46`,
	}))
	_, _, err = Explore([]string{vec}, Options{}, crash.Options{Checkers: []crash.Checker{check}})
	require.ErrorIs(t, err, ErrUnknownBytes)
	require.Contains(t, err.Error(), vec+":2: writev: the trace shows 38 of the 46 bytes the program printed")

	seen = nil
	var out []byte
	rep, _, err = Explore([]string{p}, Options{Stdout: func(b []byte) { out = append(out, b...) }}, crash.Options{AssumeUnknown: true, Checkers: []crash.Checker{check}})
	require.NoError(t, err)
	require.Zero(t, rep.Unchecked)
	require.Contains(t, rep.Assumed, "the stdout a checker reads holds the bytes shown only")
	require.Contains(t, seen, "started\nthe configuration was updated: d")
	require.Equal(t, "started\nthe configuration was updated: d", string(out))
}

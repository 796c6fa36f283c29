package replay

import (
	"bytes"
	"errors"
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
	require.Empty(t, rep.Vulnerabilities, "a state holding the zeros the model has for the unseen bytes was checked")
	require.Positive(t, rep.Unchecked)
	require.Positive(t, rep.Checked, "the states before the write, or without it, are checked")
	require.Equal(t, rep.DistinctStates, rep.Checked+rep.Unchecked)
	require.Contains(t, rep.UncheckedWhy, "update8k.strace:31: write:")

	full, err := exploreU8k(t, "update8k.s1048576.strace", crash.Options{})
	require.NoError(t, err)
	require.Empty(t, full.Vulnerabilities)
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
	require.Empty(t, rep.Vulnerabilities)
}

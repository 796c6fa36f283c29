package vfs_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"iosim/vfs"
)

func TestRuleParsePrint(t *testing.T) {
	for _, c := range []struct{ in, out, err string }{
		{in: "op=write,err=EIO"},
		{in: "op=writeback,path=/db/*.log,nth=3,err=EIO"},
		{in: "op=read,every=2,short=100"},
		{in: "op=*,after=5,p=0.25,err=ENOSPC"},
		{in: "op=fsync,delay=1.5ms"},
		{in: "op=read,corrupt"},
		{in: " op=read , err=EROFS ", out: "op=read,err=EROFS"},
		{in: "err=EDQUOT", out: "op=*,err=EDQUOT"},
		{in: "op=create,path=/a/b,err=EEXIST,short=1,delay=2s,corrupt"},
		{in: "", err: "empty"},
		{in: "op=write", err: "no effect"},
		{in: "op=nope,err=EIO", err: "unknown op"},
		{in: "op=write,err=ENOPE", err: "unknown errno"},
		{in: "op=write,nth=0,err=EIO", err: "positive"},
		{in: "op=write,after=-1,err=EIO", err: "negative"},
		{in: "op=write,p=1.5,err=EIO", err: "0 < p"},
		{in: "op=write,path=[,err=EIO", err: "bad path"},
		{in: "op=write,corrupt=1", err: "no value"},
		{in: "op=write,bogus=1,err=EIO", err: "unknown key"},
		{in: "op=write,delay=soon", err: "delay"},
	} {
		r, err := vfs.ParseRule(c.in)
		if c.err != "" {
			require.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		want := c.out
		if want == "" {
			want = c.in
		}
		require.Equal(t, want, r.String())
		again, err := vfs.ParseRule(r.String())
		require.NoError(t, err)
		require.Equal(t, r, again)
	}
	rs, err := vfs.ParseRules(7, "op=write,err=EIO; op=read,short=1;")
	require.NoError(t, err)
	require.Equal(t, "op=write,err=EIO;op=read,short=1", rs.String())
	_, err = vfs.ParseRules(7, "op=write,err=EIO;op=zz,err=EIO")
	require.Error(t, err)
	for name, e := range map[string]unix.Errno{"EIO": unix.EIO, "ENOSPC": unix.ENOSPC, "EROFS": unix.EROFS, "EDQUOT": unix.EDQUOT} {
		got, ok := vfs.ErrnoByName(name)
		require.True(t, ok)
		require.Equal(t, e, got)
		require.Equal(t, name, vfs.ErrnoName(e))
	}
	require.Equal(t, "errno 9999", vfs.ErrnoName(9999))
	require.Equal(t, "writeback", vfs.OpWriteback.String())
}

// TestRuleRoundTripRapid: every rule prints to text that parses back to it.
func TestRuleRoundTripRapid(t *testing.T) {
	ops := []vfs.Op{vfs.OpAny, vfs.OpOpen, vfs.OpCreate, vfs.OpRead, vfs.OpWrite, vfs.OpTruncate, vfs.OpFallocate,
		vfs.OpFsync, vfs.OpWriteback, vfs.OpMkdir, vfs.OpRemove, vfs.OpRename, vfs.OpLink, vfs.OpSymlink}
	errnos := []unix.Errno{0, unix.EIO, unix.ENOSPC, unix.EROFS, unix.EDQUOT, unix.EINTR, unix.EAGAIN}
	rapid.Check(t, func(t *rapid.T) {
		r := &vfs.Rule{
			Op:   rapid.SampledFrom(ops).Draw(t, "op"),
			Path: rapid.SampledFrom([]string{"", "/f", "/db/*.log", "/a/[bc]/?"}).Draw(t, "path"),
		}
		switch rapid.IntRange(0, 4).Draw(t, "trigger") {
		case 1:
			r.Nth = rapid.IntRange(1, 1000).Draw(t, "nth")
		case 2:
			r.Every = rapid.IntRange(1, 1000).Draw(t, "every")
		case 3:
			r.After = rapid.IntRange(1, 1000).Draw(t, "after")
		}
		if rapid.Bool().Draw(t, "hasP") {
			r.Prob = float64(rapid.IntRange(1, 1000).Draw(t, "p")) / 1000
		}
		r.Effect.Errno = rapid.SampledFrom(errnos).Draw(t, "errno")
		if rapid.Bool().Draw(t, "short") {
			r.Effect.Short = rapid.IntRange(1, 1<<20).Draw(t, "n")
		}
		if rapid.Bool().Draw(t, "delay") {
			r.Effect.Delay = time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "d"))
		}
		r.Effect.Corrupt = rapid.Bool().Draw(t, "corrupt")
		if r.Effect == (vfs.Fault{}) {
			r.Effect.Corrupt = true
		}
		got, err := vfs.ParseRule(r.String())
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if *got != *r {
			t.Fatalf("%s parsed back as %s (%+v vs %+v)", r, got, *got, *r)
		}
	})
}

// fires returns, for n matching operations, which ones the rules fail.
func fires(t *testing.T, text string, n int) []int {
	rs, err := vfs.ParseRules(42, text)
	require.NoError(t, err)
	var out []int
	for k := 1; k <= n; k++ {
		if rs.Inject(vfs.OpWrite, "/f").Errno != 0 {
			out = append(out, k)
		}
	}
	return out
}

func TestRuleTriggers(t *testing.T) {
	require.Equal(t, []int{3}, fires(t, "op=write,nth=3,err=EIO", 10))
	require.Equal(t, []int{3, 6, 9}, fires(t, "op=write,every=3,err=EIO", 10))
	require.Equal(t, []int{8, 9, 10}, fires(t, "op=write,after=7,err=EIO", 10))
	require.Equal(t, []int{1, 2, 3}, fires(t, "op=*,err=EIO", 3))
	require.Empty(t, fires(t, "op=read,err=EIO", 5))
	require.Empty(t, fires(t, "op=write,path=/g*,err=EIO", 5))
	require.Equal(t, []int{2}, fires(t, "op=write,path=/f,nth=2,err=EIO", 5))
	// Probability: seeded, so reproducible; roughly the rate asked.
	a, b := fires(t, "op=write,p=0.3,err=EIO", 1000), fires(t, "op=write,p=0.3,err=EIO", 1000)
	require.Equal(t, a, b)
	require.InDelta(t, 300, len(a), 60)
	// The first rule that fires decides; each rule counts its own matches, and an
	// operation decided by an earlier rule is not offered to the later ones.
	rs, err := vfs.ParseRules(1, "op=write,nth=2,err=EIO;op=write,every=2,err=ENOSPC")
	require.NoError(t, err)
	var got []unix.Errno
	for range 4 {
		got = append(got, rs.Inject(vfs.OpWrite, "/x").Errno)
	}
	require.Equal(t, []unix.Errno{0, unix.EIO, unix.ENOSPC, 0}, got)
}

func TestFaultEffects(t *testing.T) {
	rules, err := vfs.ParseRules(1, "op=write,path=/short,short=3;op=read,path=/short,short=2;op=read,path=/corrupt,corrupt;"+
		"op=create,path=/ro/*,err=EROFS;op=write,path=/quota,err=EDQUOT;op=mkdir,path=/nomk,err=EIO;"+
		"op=fsync,path=/fs,nth=1,err=EIO;op=truncate,path=/fs,err=EFBIG;op=rename,path=/fs,err=EXDEV")
	require.NoError(t, err)
	fs := vfs.New(vfs.WithFaults(rules))
	r := fs.Root()

	s := create(t, r, "short")
	n, err := s.WriteAt([]byte("abcdef"), 0)
	require.NoError(t, err)
	require.Equal(t, 3, n, "short write")
	require.Equal(t, int64(3), s.Size())
	b := make([]byte, 10)
	n, err = s.ReadAt(b, 0)
	require.NoError(t, err)
	require.Equal(t, 2, n, "short read")
	require.Equal(t, "ab", string(b[:n]))

	c := create(t, r, "corrupt")
	write(t, c, "data", 0)
	n, err = c.ReadAt(b, 0)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.NotEqual(t, "data", string(b[:n]))

	require.NoError(t, r.Mkdir("ro", 0o755))
	_, _, err = r.Open("ro/x", unix.O_CREAT|unix.O_WRONLY, 0o644)
	require.Equal(t, unix.EROFS, err)

	q := create(t, r, "quota")
	_, err = q.WriteAt([]byte("x"), 0)
	require.Equal(t, unix.EDQUOT, err)
	require.Equal(t, unix.EIO, r.Mkdir("nomk", 0o755))

	f := create(t, r, "fs")
	write(t, f, "x", 0)
	require.Equal(t, unix.EIO, f.Fsync(nil))
	require.NoError(t, f.Fsync(nil))
	require.Equal(t, unix.EFBIG, f.Truncate(0))
	require.Equal(t, unix.EXDEV, r.Rename("fs", r, "fs2", 0))

	// SetInjector replaces the rules.
	fs.SetInjector(nil)
	_, err = q.WriteAt([]byte("x"), 0)
	require.NoError(t, err)
}

// TestCapacityENOSPC: WithCapacity limits the allocated blocks.
func TestCapacityENOSPC(t *testing.T) {
	fs := vfs.New(vfs.WithCapacity(64 * kib))
	f := create(t, fs.Root(), "f")
	buf := make([]byte, 4096)
	var written int64
	for {
		_, err := f.WriteAt(buf, written)
		if err != nil {
			require.Equal(t, unix.ENOSPC, err)
			break
		}
		written += 4096
		require.LessOrEqual(t, written, 64*kib)
	}
	require.Equal(t, written, f.Size(), "a failed write changes nothing")
	require.Equal(t, unix.ENOSPC, f.Fallocate(0, written, 4096))
	// Overwrites need no new block; freeing makes room.
	_, err := f.WriteAt(buf, 0)
	require.NoError(t, err)
	require.NoError(t, f.Fallocate(vfs.FallocPunchHole|vfs.FallocKeepSize, 0, 8192))
	_, err = f.WriteAt(buf, written)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(0))
	_, err = f.WriteAt(make([]byte, 32*kib), 0)
	require.NoError(t, err)
	// A sparse write far away needs one block, not the gap.
	_, err = f.WriteAt([]byte("x"), 1<<40)
	require.NoError(t, err)
}

package ddscript_test

import (
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/stretchr/testify/require"

	"github.com/iosim/iosim/internal/ddscript"
)

func TestGetters(t *testing.T) {
	c, err := ddscript.Parse("f.txt:3", "open path=/f flags=O_RDWR|O_DIRECT|0x10 n=4k iov=(1,2) v")
	require.NoError(t, err)
	require.Equal(t, "open", c.Name)
	require.Equal(t, "/f", c.Str("path"))
	require.Equal(t, int64(2|0x4000|0x10), c.Flags("flags", ddscript.Flags{"O_RDWR": 2, "O_DIRECT": 0x4000}, 0))
	require.Equal(t, int64(4096), c.Int("n"))
	require.Equal(t, []int64{1, 2}, c.Ints("iov"))
	require.True(t, c.Bool("v"))
	require.Equal(t, int64(7), c.IntOr("absent", 7))
	require.Equal(t, "d", c.StrOr("absent", "d"))
	require.NoError(t, c.Done())
}

func TestErrors(t *testing.T) {
	for _, tc := range []struct{ line, err string }{
		{"read fd=3 n=x", `f.txt:9: read: n=x: want an integer (12, 0x1f, 4k)`},
		{"read fd=3", `f.txt:9: read: want argument n=`},
		{"read fd=3 n=1 bogus=2", `f.txt:9: read: unknown argument bogus`},
		{"read fd=3 n=(1,2)", `f.txt:9: read: n: want one value, got 2`},
		{"read fd=3 n=1 flags=O_NOPE", `f.txt:9: read: flags=O_NOPE: unknown name "O_NOPE" (want O_RDWR or a number)`},
		{"read fd=3 n=1 v=maybe", `f.txt:9: read: v: want no value, true or false`},
	} {
		c, err := ddscript.Parse("f.txt:9", tc.line)
		require.NoError(t, err)
		c.Str("fd")
		c.Int("n")
		c.Flags("flags", ddscript.Flags{"O_RDWR": 2}, 0)
		c.Bool("v")
		require.EqualError(t, c.Done(), tc.err, tc.line)
	}
	_, err := ddscript.Parse("f.txt:1", "read n=(1,2")
	require.ErrorContains(t, err, "f.txt:1: cannot parse directive")
}

func TestLines(t *testing.T) {
	datadriven.RunTestFromString(t, `
run
# a comment
open path=/f

close fd=3
----
open@<string>:4 close@<string>:6
`, func(t *testing.T, d *datadriven.TestData) string {
		cs, err := ddscript.Lines(d)
		require.NoError(t, err)
		out := ""
		for _, c := range cs {
			out += c.Name + "@" + c.Pos + " "
		}
		return out[:len(out)-1] + "\n"
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"open path=/f flags=O_RDWR", "read n=(1,2)", "x a=(b,(c,d))", "r n=4k", "=", "a b=("} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ddscript.Parse("f:1", s)
		if err != nil {
			return
		}
		for _, k := range []string{"a", "n", "path"} {
			c.IntOr(k, 0)
			c.Str(k)
		}
		_ = c.Done()
	})
}

package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const crashArm = "file /db/f\nold\n----\n\ncalls A\nopen(\"/db/f.tmp\", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3\nwrite(3, \"new\\n\", 4) = 4\nclose(3) = 0\nrename(\"/db/f.tmp\", \"/db/f\") = 0\n----\n\n"

// TestCrashMalformed checks that a crash command that cannot run as written
// names its file, its line and what was expected (exit status 2).
func TestCrashMalformed(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"crash\n----\n", "x.scen:1: crash: want 1 name(s) after the command, got 0"},
		{"crash A\n----\n", `x.scen:1: crash: no arm "A" (none defined yet)`},
		{crashArm + "crash A B\n----\n", `x.scen:12: crash: unexpected word "B"`},
		{crashArm + "crash A models=ext5\n----\n", `x.scen:12: crash: argument models=ext5: unknown persistence model "ext5"`},
		{crashArm + "crash A models=posix,zfs\n----\n", `unknown persistence model "zfs"`},
		{crashArm + "crash A depth=0\n----\n", "x.scen:12: crash: argument depth=0: want 1 to 3"},
		{crashArm + "crash A depth=many\n----\n", "x.scen:12: crash: argument depth=many: want an integer"},
		{crashArm + "crash A checks=(durability, speed)\n----\n", `x.scen:12: crash: argument checks: unknown check "speed" (known: durability, atomic-replace, fsck, stdio)`},
		{crashArm + "crash A checks=stdio\n----\n", "x.scen:12: crash: argument checks: the stdio check applies to stdio arms; A is not one"},
		{crashArm + "crash A seed=3\n----\n", "x.scen:12: crash: unknown argument seed= (known: models, depth, checks...)"},
		{crashArm + "crash A\nwriteback@/db/f=EWHAT\n----\n", "x.scen:12: crash: disk fault rules:"},
		{crashArm + "crash A\nread(3)=EIO\n----\n", "x.scen:12: crash: disk fault rules:"},
		{"fs model=ext4\n----\n", `x.scen:1: fs: argument model=ext4: unknown persistence model "ext4"`},
		{"expect findings=0\n----\n", "x.scen:1: expect: findings: no crash before this expect"},
		{crashArm + "crash A\n----\n\nexpect findings=0 arm=B\n----\n", "x.scen:15: expect: findings: the last crash explored A, not B"},
	} {
		p := writeScen(t, tc.text)
		r := RunFile(p, RunOptions{Rewrite: true})
		require.Error(t, r.Err, tc.text)
		require.Contains(t, r.Err.Error(), tc.want, tc.text)
		require.True(t, strings.HasPrefix(r.Err.Error(), p+":"), r.Err.Error())
		require.Equal(t, 2, ExitCode([]*FileResult{r}), tc.text)
	}
}

// TestCrashRunErrors checks the errors of a crash that cannot explore what
// the arm wrote: a workload that no longer does what its lines say, an fio
// arm, disk faults on a trace.
func TestCrashRunErrors(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"calls A\nopen(\"/nosuch\", O_RDONLY) = 3\n----\n\ncrash A\n----\n", "x.scen:5: crash: arm A diverged from its written results under the explorer (1), first: call 1"},
		{"fio J\n[j]\nrw=write\nsize=4k\n----\n\ncrash J\n----\n", "x.scen:7: crash: arm J: crash explores calls, stdio and trace arms"},
		{"trace T file=" + tracePath(t, "python.atomic-replace.strace") + "\n----\n\ncrash T\nwriteback=EIO\n----\n", "x.scen:4: crash: arm T: disk fault rules apply to calls and stdio arms"},
	} {
		p := writeScen(t, tc.text)
		r := RunFile(p, RunOptions{Rewrite: true})
		require.Error(t, r.Err, tc.text)
		require.Contains(t, r.Err.Error(), tc.want, tc.text)
		require.True(t, strings.HasPrefix(r.Err.Error(), p+":"), r.Err.Error())
	}
}

// TestCrashTrace explores a recorded strace (renames over files never
// fsynced) and checks that the report names the trace's lines and that
// expect reads its count.
func TestCrashTrace(t *testing.T) {
	p := writeScen(t, "trace T file="+tracePath(t, "fdtable.namespace.strace")+"\n----\n\ncrash T models=posix\n----\n\nexpect findings=1..\n----\n")
	r := RunFile(p, RunOptions{Rewrite: true})
	require.NoError(t, r.Err)
	r = RunFile(p, RunOptions{})
	require.True(t, r.Passed(), "%v %v", r.Err, r.Mismatches)
	out := fileText(t, p)
	require.Contains(t, out, "crash T: models posix; depth 1; checks durability, atomic-replace, fsck\n")
	require.Regexp(t, `\n  persisted: rename \S+ -> \S+ \(fdtable.namespace.strace:\d+\)\n`, out)
	require.Contains(t, out, "ok: findings of T = ")
}

// FuzzCrashCommand runs crash commands with any arguments and disk fault
// input: each runs or fails naming the file and line, never panics.
func FuzzCrashCommand(f *testing.F) {
	for _, seed := range [][2]string{
		{"", ""}, {"models=posix", ""}, {"depth=2 checks=(fsck)", ""}, {"models=all", "writeback@/db/f#nth=1=EIO"},
		{"depth=-1", ""}, {"checks=", ""}, {"models=(posix, alice)", "write=short:1"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, argv, input string) {
		if strings.ContainsAny(argv+input, "\n\r") || strings.HasPrefix(strings.TrimSpace(input), "-") {
			return // one directive line; input must not open the output
		}
		text := crashArm + "crash A " + argv + "\n"
		if input != "" {
			text += input + "\n"
		}
		p := writeScen(t, text+"----\n")
		r := RunFile(p, RunOptions{Rewrite: true})
		if r.Err != nil {
			require.True(t, strings.HasPrefix(r.Err.Error(), p), r.Err.Error())
		}
	})
}

func tracePath(t *testing.T, name string) string {
	p, err := filepath.Abs(filepath.Join("..", "testdata", "traces", name))
	require.NoError(t, err)
	return p
}

func fileText(t *testing.T, p string) string {
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

package crashtest

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/afero"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/crash"
	"github.com/iosim/iosim/vfs"
)

var (
	oldData = bytes.Repeat([]byte("old."), 1024)
	newData = bytes.Repeat([]byte("new!"), 2048)
)

func setup(fs *vfs.FS) error {
	if err := fs.MkdirAll("/db", 0o755); err != nil {
		return err
	}
	return afero.WriteFile(fs, "/db/state", oldData, 0o644)
}

// saveSafe replaces /db/state atomically and durably through afero.
func saveSafe(env *crash.Env) error {
	f, err := env.Afero.Create("/db/state.tmp")
	if err != nil {
		return err
	}
	if _, err := f.Write(newData); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := env.Afero.Rename("/db/state.tmp", "/db/state"); err != nil {
		return err
	}
	d, err := env.Afero.Open("/db")
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		return err
	}
	_, err = env.Stdout.Write([]byte("saved\n"))
	return err
}

// saveUnsafe is the same through the sim facade without any fsync.
func saveUnsafe(env *crash.Env) error {
	p := env.Proc
	fd, err := p.Open("/db/state.tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := p.Write(fd, newData); err != nil {
		return err
	}
	if err := p.Close(fd); err != nil {
		return err
	}
	if err := p.Rename("/db/state.tmp", "/db/state"); err != nil {
		return err
	}
	_, err = p.Write(1, []byte("saved\n"))
	return err
}

func checkState(t testing.TB, s *crash.State) {
	got, ok := s.ReadFile("/db/state")
	if tmp, tok := s.ReadFile("/db/state.tmp"); !ok && tok && bytes.Equal(tmp, newData) {
		got, ok = tmp, true // a split rename: recovery finishes it
	}
	require.True(t, ok, "state missing")
	if bytes.Contains(s.Stdout, []byte("saved")) {
		require.True(t, bytes.Equal(got, newData), "saved, but the state holds %d other bytes", len(got))
		return
	}
	require.True(t, bytes.Equal(got, oldData) || bytes.Equal(got, newData), "state holds %d bytes of neither version", len(got))
}

func TestSafeSaveAllModels(t *testing.T) {
	rep := Explore(t, "all", saveSafe, checkState, WithSetup(setup), WithBuiltinChecks())
	require.Empty(t, rep.Findings)
	require.Greater(t, rep.DistinctStates, 5)
}

// TestUnsafeSaveExample fails by design; TestUnsafeSaveIsCaught runs it.
func TestUnsafeSaveExample(t *testing.T) {
	if os.Getenv("CRASHTEST_EXAMPLE") == "" {
		t.Skip("fails by design: run by TestUnsafeSaveIsCaught")
	}
	Explore(t, "posix", saveUnsafe, checkState, WithSetup(setup))
}

func TestUnsafeSaveIsCaught(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go test")
	}
	goTest := func(run string) string {
		cmd := exec.Command("go", "test", "-count=1", "-v", "-run", run, ".")
		cmd.Env = append(os.Environ(), "CRASHTEST_EXAMPLE=1")
		out, err := cmd.CombinedOutput()
		require.Error(t, err, "the example must fail")
		return string(out)
	}
	out := goTest("^TestUnsafeSaveExample$")
	// the failing states are subtests; the report names the workload's lines
	require.Contains(t, out, "--- FAIL: TestUnsafeSaveExample/")
	require.Contains(t, out, "saved, but the state holds")
	require.Regexp(t, `lost: renameat /db/state.tmp -> /db/state \(crashtest_test.go:\d+\)`, out)
	require.Regexp(t, `torn: write /db/state.tmp \(crashtest_test.go:\d+\)`, out)
	require.Contains(t, out, "fsync the file before renaming it over the old one")

	// -run with a failing state's name checks that state alone
	name := regexp.MustCompile(`--- FAIL: TestUnsafeSaveExample/(\S+)`).FindStringSubmatch(out)[1]
	again := goTest("^TestUnsafeSaveExample$/^" + regexp.QuoteMeta(name) + "$")
	require.Equal(t, 1, strings.Count(again, "--- FAIL: TestUnsafeSaveExample/"), again)
	require.Contains(t, again, name)

	// a finding's example state, by its ID, is a subtest of its own
	ex := regexp.MustCompile(`\n\s*states: ([0-9.]+)`).FindStringSubmatch(out)
	require.NotNil(t, ex, out)
	again = goTest("^TestUnsafeSaveExample$/^" + regexp.QuoteMeta(ex[1]) + "-")
	require.Equal(t, 1, strings.Count(again, "--- FAIL: TestUnsafeSaveExample/"+ex[1]+"-"), again)
}

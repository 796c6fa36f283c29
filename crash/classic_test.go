package crash

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

var (
	oldConfig = bytes.Repeat([]byte("old "), 1000)
	newConfig = bytes.Repeat([]byte("new!"), 1500)
)

func configSetup(fs *vfs.FS) error {
	if err := fs.MkdirAll("/data", 0o755); err != nil {
		return err
	}
	ino, _, err := fs.Root().Open("/data/config", unix.O_CREAT|unix.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = ino.WriteAt(oldConfig, 0)
	return err
}

// configCheck is the application's own checker: the config holds the old or
// the new content, the new one once "Updated" was printed, and the two links
// exist together or not at all.
var configCheck = CheckFunc{ID: "app", F: func(s *State) []Finding {
	var out []Finding
	got, ok := s.ReadFile("/data/config")
	switch {
	case !ok:
		if tmp, ok := s.ReadFile("/data/config.tmp"); ok && bytes.Equal(tmp, newConfig) {
			break // recovery finishes the rename
		}
		out = append(out, Finding{Kind: "app", Path: "/data/config", Message: "config missing"})
	case bytes.Contains(s.Stdout, []byte("Updated")) && !bytes.Equal(got, newConfig):
		out = append(out, Finding{Kind: "app", Path: "/data/config", Message: "announced Updated, config is not the new one"})
	case !bytes.Equal(got, newConfig) && !bytes.Equal(got, oldConfig):
		out = append(out, Finding{Kind: "app", Path: "/data/config", Message: fmt.Sprintf("config corrupt (%d bytes)", len(got))})
	}
	_, a := s.ReadFile("/data/link1")
	_, b := s.ReadFile("/data/link2")
	if a != b {
		out = append(out, Finding{Kind: "app", Path: "/data/link1", Message: "one link without the other"})
	}
	return out
}}

// writeTemp writes the new config to /data/config.tmp (fsynced when sync is
// set) and renames it over /data/config.
func writeTemp(env *Env, sync bool) error {
	p := env.Proc
	fd, err := p.Open("/data/config.tmp", unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := p.Write(fd, newConfig); err != nil {
		return err
	}
	if sync {
		if err := p.Fsync(fd); err != nil {
			return err
		}
	}
	if err := p.Close(fd); err != nil {
		return err
	}
	return p.Rename("/data/config.tmp", "/data/config")
}

func unsafeUpdate(env *Env) error {
	p := env.Proc
	if err := writeTemp(env, false); err != nil {
		return err
	}
	if _, err := p.Write(1, []byte("Updated\n")); err != nil {
		return err
	}
	if err := p.Link("/data/config", "/data/link1"); err != nil {
		return err
	}
	return p.Link("/data/config", "/data/link2")
}

func safeUpdate(env *Env) error {
	p := env.Proc
	if err := writeTemp(env, true); err != nil {
		return err
	}
	dir, err := p.Open("/data", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	if err := p.Fsync(dir); err != nil {
		return err
	}
	_, err = p.Write(1, []byte("Updated\n"))
	return err
}

func TestClassicUnsafeUpdate(t *testing.T) {
	checkers := []Checker{Durability{}, AtomicReplace{}, Fsck{}, configCheck}
	rep, err := ExploreFunc(Options{Models: Models(), Depth: 1, Checkers: checkers}, configSetup, unsafeUpdate)
	require.NoError(t, err)
	var buf bytes.Buffer
	rep.WriteText(&buf)
	t.Log(buf.String())
	has := func(model, kind, msg string) bool {
		for _, v := range rep.Vulnerabilities {
			if v.Kind == kind && bytes.Contains([]byte(v.Message), []byte(msg)) {
				for _, m := range v.Models {
					if m == model {
						return true
					}
				}
			}
		}
		return false
	}
	for _, m := range ModelNames() {
		require.True(t, has(m, "app", "announced Updated"), "model %s: the announcement is not durable", m)
		require.True(t, has(m, "app", "one link without the other"), "model %s: links", m)
	}
	for _, m := range []string{"posix", "alice", "ext4-writeback"} {
		require.True(t, has(m, "atomic-replace", "zero bytes"), "model %s: the renamed file can be empty", m)
	}
	require.False(t, has("ext4-ordered", "atomic-replace", ""), "ext4-ordered: auto_da_alloc flushes the data before the rename commits")
}

func TestClassicSafeUpdate(t *testing.T) {
	checkers := []Checker{Durability{}, AtomicReplace{}, Fsck{}, configCheck}
	// Depth 1 is ALICE's own exploration (one call lost, or one call persisted
	// in part): at depth 2 ALICE's model can also lose the temporary file's
	// name (never made durable) and split the rename.
	rep, err := ExploreFunc(Options{Depth: 1, Checkers: checkers}, configSetup, safeUpdate)
	require.NoError(t, err)
	var buf bytes.Buffer
	rep.WriteText(&buf)
	require.Empty(t, rep.Vulnerabilities, buf.String())
	require.Greater(t, rep.DistinctStates, 3)
}

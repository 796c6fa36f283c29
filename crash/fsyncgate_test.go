package crash

import (
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// writePages opens the relation file and overwrites its two pages.
func writePages(env *Env) (int, error) {
	fd, err := env.Proc.Open("/pg/base/1", unix.O_RDWR, 0)
	if err != nil {
		return -1, err
	}
	_, err = env.Proc.Pwrite(fd, fill('b', 8192), 0)
	return fd, err
}

// checkpoint is PostgreSQL's checkpointer before 2018 ("fsyncgate"): write the
// dirty pages, fsync; on failure retry the fsync, and once it succeeds consider
// the checkpoint done.
func checkpoint(env *Env) error {
	p := env.Proc
	fd, err := writePages(env)
	if err != nil {
		return err
	}
	for try := 0; ; try++ {
		err := p.Fsync(fd)
		if err == nil {
			break
		}
		if err != syscall.EIO || try > 3 {
			return err
		}
	}
	_, err = p.Write(1, []byte("checkpoint complete\n"))
	return err
}

func pgSetup(fs *vfs.FS) error {
	if err := fs.MkdirAll("/pg/base", 0o700); err != nil {
		return err
	}
	return writeFile(fs, "/pg/base/1", fill('a', 8192))
}

func TestFsyncgate(t *testing.T) {
	rules, err := vfs.ParseRules(1, "writeback@/pg/base/1#nth=1=EIO")
	require.NoError(t, err)
	rep, err := ExploreFunc(Options{}, pgSetup, func(env *Env) error {
		env.FS.SetInjector(rules)
		return checkpoint(env)
	})
	require.NoError(t, err)
	var found *Cause
	for _, c := range rep.Findings {
		if slices.Contains(c.Checks, "durability") && strings.Contains(strings.Join(c.Messages, "\n"), "/pg/base/1") {
			found = c
		}
	}
	require.NotNil(t, found, "the retried fsync succeeded over lost data")
	require.Equal(t, "durability", found.Property)
	require.Equal(t, modelNames(DefaultModels()), found.Models)
	require.Contains(t, found.Messages[0], "fsync")
	require.Contains(t, found.Fix, "do not retry")

	// Without the fault nothing is lost.
	rep, err = ExploreFunc(Options{}, pgSetup, checkpoint)
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
	require.Equal(t, modelNames(DefaultModels()), rep.Models)
}

// The same through Linux AIO: an IOCB_CMD_FSYNC completion with result 0
// acknowledges the data, and after a writeback error the retried one lies.
func TestFsyncgateAIO(t *testing.T) {
	checkpointAIO := func(env *Env) error {
		p := env.Proc
		fd, err := writePages(env)
		if err != nil {
			return err
		}
		ctx, err := p.IoSetup(4)
		if err != nil {
			return err
		}
		evs := make([]sim.IoEvent, 1)
		for try := 0; try < 3; try++ {
			if _, err := p.IoSubmit(ctx, []*sim.Iocb{{Opcode: sim.IOCB_CMD_FSYNC, Fd: uint32(fd)}}); err != nil {
				return err
			}
			if _, err := p.IoGetevents(ctx, 1, 1, evs, nil); err != nil {
				return err
			}
			if evs[0].Res == 0 {
				break
			}
		}
		_, err = p.Write(1, []byte("checkpoint complete\n"))
		return err
	}
	rules, err := vfs.ParseRules(1, "writeback@/pg/base/1#nth=1=EIO")
	require.NoError(t, err)
	rep, err := ExploreFunc(Options{}, pgSetup, func(env *Env) error {
		env.FS.SetInjector(rules)
		return checkpointAIO(env)
	})
	require.NoError(t, err)
	require.Len(t, rep.Findings, 1)
	require.Equal(t, "durability", rep.Findings[0].Property)
	require.Contains(t, rep.Findings[0].Messages[0], "io_getevents")

	rep, err = ExploreFunc(Options{}, pgSetup, checkpointAIO)
	require.NoError(t, err)
	require.Empty(t, rep.Findings)
}

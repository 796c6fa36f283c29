package vfs_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/vfs"
)

// TestRAMEmptyAfterCrash: a directory SetRAM names (a tmpfs mount) is
// empty in every state a crash leaves, whatever was synced below it, and
// only there: the file beside it, synced, survives; the directory itself
// is there. The running state is unchanged.
func TestRAMEmptyAfterCrash(t *testing.T) {
	fs := vfs.New()
	r := fs.Root()
	require.NoError(t, r.Mkdir("shm", 0o755))
	require.NoError(t, r.Mkdir("data", 0o755))
	require.NoError(t, fs.Sync())
	fs.SetRAM("/shm/")
	require.Equal(t, []string{"/shm"}, fs.RAM())

	lock := create(t, r, "shm/lock")
	write(t, lock, "held", 0)
	require.NoError(t, r.Mkdir("shm/sub", 0o700))
	deep := create(t, r, "shm/sub/f")
	write(t, deep, "deep", 0)
	keep := create(t, r, "data/keep")
	write(t, keep, "kept", 0)
	pend := create(t, r, "data/pending")
	write(t, pend, "maybe", 0)
	for _, i := range []*vfs.Inode{lock, deep, keep} {
		require.NoError(t, i.Fsync(nil))
	}
	shm, err := r.Resolve("shm", false)
	require.NoError(t, err)
	data, err := r.Resolve("data", false)
	require.NoError(t, err)
	require.NoError(t, shm.Fsync(nil))
	require.NoError(t, data.Fsync(nil))

	// The running state has it all.
	b := make([]byte, 4)
	_, err = lock.ReadAt(b, 0)
	require.NoError(t, err)
	require.Equal(t, "held", string(b))

	// Every state of the snapshot, the durable one and the one that keeps
	// everything.
	snap := fs.Snapshot()
	st := snap.State()
	for _, all := range []bool{false, true} {
		for k := range snap.Pending() {
			st.Set(k, vfs.Survival{Keep: all})
		}
		ents, err := st.ReadDir("/shm")
		require.NoError(t, err)
		require.Empty(t, ents, "keep all %v", all)
		_, err = st.LookupIno("/shm/lock")
		require.Equal(t, unix.ENOENT, err)
		_, err = st.ReadFile("/shm/sub/f")
		require.Equal(t, unix.ENOENT, err)
		got, err := st.ReadFile("/data/keep")
		require.NoError(t, err)
		require.Equal(t, "kept", string(got))
		got, err = st.ReadFile("/data/pending")
		require.NoError(t, err, "the fsync of /data made its name durable")
		require.Equal(t, all, string(got) == "maybe", "keep all %v", all)

		crashed := st.FS()
		requireRAMEmpty(t, crashed)
		require.Equal(t, []string{"/shm"}, crashed.RAM(), "a crash of the crashed file system empties it too")
	}
	requireRAMEmpty(t, fs.Crash())
	keepAll := make([]vfs.Survival, len(fs.Pending()))
	for k := range keepAll {
		keepAll[k].Keep = true
	}
	crashed, err := fs.CrashWith(keepAll)
	require.NoError(t, err)
	requireRAMEmpty(t, crashed)
}

// requireRAMEmpty requires /shm empty and /data/keep kept in a crashed fs.
func requireRAMEmpty(t *testing.T, fs *vfs.FS) {
	t.Helper()
	shm, err := fs.Root().Resolve("shm", false)
	require.NoError(t, err)
	ents, err := shm.Dirents()
	require.NoError(t, err)
	for _, d := range ents {
		require.Contains(t, []string{".", ".."}, d.Name)
	}
	_, err = fs.Root().Resolve("data/keep", false)
	require.NoError(t, err)
}

package replay

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCrossDevRecording: xdev.c's rename and link into /dev/shm and its
// copy_file_range out of it failed with EXDEV: the first EXDEV puts
// /dev/shm in the mount table (noted), and the replay is clean; with
// --mount tmpfs:/dev/shm nothing is guessed.
func TestCrossDevRecording(t *testing.T) {
	for _, name := range []string{"xdev.strace", "xdev.tty.strace"} {
		t.Run(name, func(t *testing.T) {
			rep := replayClean(t, Options{}, recordings+name)
			require.EqualValues(t, 1, rep.Syscalls["copy_file_range"].Errors)
			facts := strings.Join(factNotesOf(rep), "\n")
			require.Contains(t, facts, name+":33: rename = -1 EXDEV: ")
			require.Contains(t, facts, "are on two file systems: /dev/shm taken as a mount point (tmpfs, where Linux systems have one)")

			rep = replayClean(t, Options{Mounts: []string{"tmpfs:/dev/shm"}}, recordings+name)
			require.NotContains(t, strings.Join(rep.Notes, "\n"), "mount point")
		})
	}
}

// TestMountTable: where the mounts come from, and what crosses them.
func TestMountTable(t *testing.T) {
	run := func(t *testing.T, opts Options, lines ...string) *Report {
		t.Helper()
		opts.Verify = true
		rep, err := Run([]string{writeTrace(t, "mkdir(\"/w\", 0755) = 0\n"+joinLines(lines))}, opts)
		require.NoError(t, err)
		require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
		return rep
	}
	t.Run("given", func(t *testing.T) {
		rep := run(t, Options{Mounts: []string{"ext4:/data"}},
			`openat(AT_FDCWD, "/w/a", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
			`mkdir("/data/d", 0755) = 0`,
			`rename("/w/a", "/data/d/a") = -1 EXDEV (Invalid cross-device link)`,
			`linkat(AT_FDCWD, "/w/a", AT_FDCWD, "/data/a", 0) = -1 EXDEV (Invalid cross-device link)`,
			`openat(AT_FDCWD, "/data/d/b", O_WRONLY|O_CREAT|O_EXCL, 0644) = 4`,
			`copy_file_range(3, NULL, 4, NULL, 10, 0) = -1 EXDEV (Invalid cross-device link)`,
			`rename("/data/d/b", "/data/b") = 0`,
			`rename("/w/a", "/w/c") = 0`,
		)
		require.Empty(t, factNotesOf(rep), "nothing inferred: %q", rep.Notes)
	})
	t.Run("root", func(t *testing.T) {
		run(t, Options{Root: t.TempDir() + ":/srv"},
			`openat(AT_FDCWD, "/w/a", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
			`rename("/w/a", "/srv/a") = -1 EXDEV (Invalid cross-device link)`,
		)
	})
	t.Run("mountinfo", func(t *testing.T) {
		rep := run(t, Options{},
			`openat(AT_FDCWD, "/proc/self/mountinfo", O_RDONLY|O_CLOEXEC) = 3`,
			`read(3, "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n23 22 0:5 / /mnt/my\\040disk rw - xfs /dev/sdb1 rw\n24 22 0:6 / /v", 4096) = 118`,
			`read(3, "ar/cache rw - btrfs /dev/sdc rw\n", 4096) = 32`,
			`read(3, "", 4096) = 0`,
			`close(3) = 0`,
			`openat(AT_FDCWD, "/w/a", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
			`rename("/w/a", "/mnt/my disk/a") = -1 EXDEV (Invalid cross-device link)`,
			`rename("/w/a", "/var/cache/a") = -1 EXDEV (Invalid cross-device link)`,
			`rename("/w/a", "/var/a") = 0`,
		)
		facts := factNotesOf(rep)
		require.Len(t, facts, 4, "%q", facts) // the two reads, the two parent directories the EXDEVs show
		require.Contains(t, facts[0], ":3: read: 1 mount(s) read from /proc/self/mountinfo taken into the mount table")
		require.Contains(t, facts[1], ":4: read: 1 mount(s) read from /proc/self/mountinfo taken into the mount table")
		require.NotContains(t, strings.Join(facts, "\n"), "mount point")
	})
	t.Run("guessed", func(t *testing.T) {
		rep := run(t, Options{},
			`openat(AT_FDCWD, "/w/a", O_WRONLY|O_CREAT|O_EXCL, 0644) = 3`,
			`rename("/w/a", "/srv/x/a") = -1 EXDEV (Invalid cross-device link)`,
			`rename("/w/a", "/srv/y/a") = -1 EXDEV (Invalid cross-device link)`,
		)
		facts := strings.Join(factNotesOf(rep), "\n")
		require.Contains(t, facts, "/w and /srv/x are on two file systems: /srv taken as a mount point (a guess: the trace does not show where the mount is)")
		require.Equal(t, 1, strings.Count(facts, "taken as a mount point"))
	})
	t.Run("bad spec", func(t *testing.T) {
		_, err := Run([]string{writeTrace(t, "close(0) = 0\n")}, Options{Mounts: []string{"/dev/shm"}})
		require.ErrorContains(t, err, `mount "/dev/shm": want TYPE:/PATH`)
	})
}

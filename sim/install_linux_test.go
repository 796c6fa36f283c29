package sim_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/iosim/iosim/sim"
	"github.com/iosim/iosim/vfs"
)

// TestInstalledPipeFlags: F_GETFL of a pipe or a socket shows no O_LARGEFILE
// (pipe2 and socket do not set it; open does), so the placeholders replay
// installs for them answer as the kernel here does.
func TestInstalledPipeFlags(t *testing.T) {
	var p [2]int
	require.NoError(t, unix.Pipe2(p[:], unix.O_NONBLOCK))
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	require.NoError(t, err)
	defer unix.Close(s)
	var want []int
	for _, fd := range []int{p[0], p[1], s} {
		fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		require.NoError(t, err)
		want = append(want, fl)
	}

	proc := sim.New(vfs.New()).Spawn()
	tk := proc.Task()
	require.NoError(t, tk.InstallSpecial(3, &sim.Placeholder{Kind: vfs.S_IFIFO}, unix.O_RDONLY|unix.O_NONBLOCK))
	require.NoError(t, tk.InstallSpecial(4, &sim.Placeholder{Kind: vfs.S_IFIFO}, unix.O_WRONLY|unix.O_NONBLOCK))
	require.NoError(t, tk.InstallSpecial(5, &sim.Placeholder{Kind: vfs.S_IFSOCK}, unix.O_RDWR))
	var got []int
	for _, fd := range []int{3, 4, 5} {
		fl, err := proc.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
		require.NoError(t, err)
		got = append(got, fl)
	}
	require.Equal(t, want, got)

	// A file from open(2) has it, on the kernel and in the model.
	fd, err := proc.Open("/f", unix.O_CREAT|unix.O_RDWR, 0o644)
	require.NoError(t, err)
	fl, err := proc.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.Equal(t, unix.O_RDWR|0x8000, fl)
}

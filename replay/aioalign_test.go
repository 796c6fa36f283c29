package replay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	iodevice "github.com/iosim/iosim/device"
)

// TestMisalignedDirectWrites: diowrite.c's O_DIRECT writes from a
// misaligned buffer, whose address the trace does not show, failed (write,
// pwrite64) or completed with -EINVAL (AIO): the buffers are placed
// misaligned, noted, and the replay is clean, with and without a time model.
func TestMisalignedDirectWrites(t *testing.T) {
	prof, err := iodevice.Lookup("nvme")
	require.NoError(t, err)
	for _, name := range []string{"diowrite.strace", "diowrite.tty.strace"} {
		for _, opts := range []Options{{}, {Device: prof}} {
			rep := replayClean(t, opts, recordings+name)
			facts := factNotesOf(rep)
			require.Len(t, facts, 4, "%q", rep.Notes)
			require.Contains(t, facts[0], name+":34: write = -1 EINVAL: its buffer was misaligned")
			require.Contains(t, facts[1], name+":35: pwrite64 = -1 EINVAL: its buffer was misaligned")
			require.Contains(t, facts[2], name+":38: io_submit: iocb data=0x1: its buffer was misaligned")
			require.Contains(t, facts[3], name+":38: io_submit: iocb data=0x2: its buffer was misaligned")
		}
	}
	alter := func(from, to string) *Report {
		b, err := os.ReadFile(recordings + "diowrite.strace")
		require.NoError(t, err)
		text := strings.Replace(string(b), from, to, 1)
		require.NotEqual(t, string(b), text)
		p := filepath.Join(t.TempDir(), "diowrite.strace")
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
		rep, err := Run([]string{p}, Options{Verify: true})
		require.NoError(t, err)
		return rep
	}
	// The completion decides: a write of data=0x1 that completed in full
	// had an aligned buffer.
	rep := alter("{data=0x1, obj=0x7ffc56b8e750, res=-22,", "{data=0x1, obj=0x7ffc56b8e750, res=4096,")
	require.Zero(t, rep.Divergences, "%v", rep.DivergenceList)
	require.Len(t, factNotesOf(rep), 3, "%q", rep.Notes)
	// A misaligned offset fails whatever the buffer: a completion in full
	// is still a divergence.
	rep = alter("aio_data=0x3, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=3, aio_buf=\"aaaaaaaa\"..., aio_nbytes=4096, aio_offset=4096",
		"aio_data=0x3, aio_lio_opcode=IOCB_CMD_PWRITE, aio_fildes=3, aio_buf=\"aaaaaaaa\"..., aio_nbytes=4096, aio_offset=4097")
	require.EqualValues(t, 1, rep.Divergences, "%v", rep.DivergenceList)
	require.Contains(t, rep.DivergenceList[0].What, "event data=0x3 res")
}

package strace

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestFrameNextGuardPage runs frameNext on buffers whose capacity ends
// exactly where an inaccessible page begins: a read past the frameSlack
// bytes it may use faults. It tries every newline position (in the slack
// too, as a stale byte), bars around the 24-byte limit, every start up to
// the newline (TestSSE2 runs it with SSE2 as well), and checks that the
// buffer is unchanged.
func TestFrameNextGuardPage(t *testing.T) {
	pg := unix.Getpagesize()
	mem, err := unix.Mmap(-1, 0, 2*pg, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE)
	require.NoError(t, err)
	defer unix.Munmap(mem)
	require.NoError(t, unix.Mprotect(mem[pg:], unix.PROT_NONE))
	for size := 0; size <= 140; size++ {
		c := size + frameSlack
		arr := mem[pg-c : pg]
		b := arr[:size:c]
		for nl := -1; nl < c; nl += 1 + nl/40 {
			for _, bar := range []int{0, 24, 25, 32} {
				for j := range arr {
					arr[j] = 'a'
				}
				if nl >= 0 {
					arr[nl] = '\n'
					if bar > 0 && nl+bar < c {
						arr[nl+bar] = '|'
					}
				}
				before := string(arr)
				for _, i := range []int{0, nl - 1, nl, nl + 1, size} {
					if i >= 0 && i <= size {
						checkFrameNext(t, b, i)
					}
				}
				require.Equal(t, before, string(arr), "frameNext wrote into its buffer")
			}
		}
	}
}

package scenarios

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// BenchmarkCallsArm runs seed 000's lookup loop as an inline calls arm on a
// device profile, 2,000 iterations of 11 calls per op (more calls than an arm lists: none kept).
func BenchmarkCallsArm(b *testing.B) {
	w, err := parseCalls("b.scen", 1, `repeat 2000
open("/m", O_RDONLY) = 3
fcntl(3, F_SETFD, FD_CLOEXEC) = 0
lseek(3, 0, SEEK_SET) = 0
read(3, "", 256) = 256
lseek(3, 512, SEEK_SET) = 512
read(3, "", 512) = 512
lseek(3, 1024, SEEK_SET) = 1024
read(3, "", 512) = 512
lseek(3, 39936, SEEK_SET) = 39936
read(3, "", 512) = 512
close(3) = 0
end`)
	require.NoError(b, err)
	st := defaultSetup()
	st.device, st.devicePath = "hdd-7200", "hdd-7200"
	st.files = []fileSpec{{path: "/m", size: 64 << 10, layout: "written", content: "zero"}}
	b.ReportAllocs()
	for b.Loop() {
		r, err := w.run(st, true)
		require.NoError(b, err)
		require.Zero(b, r.NDiverged)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(int64(b.N)*w.calls), "ns/call")
}

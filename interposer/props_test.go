package interposer_test

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/iosim/iosim/interposer"
	"github.com/iosim/iosim/sim"
)

// fileCacheChecker runs read-equivalence against filecache and tallies how many
// calls it served, so that the log shows the property exercised the cache.
type fileCacheChecker struct {
	ops    int
	served int64
	passed int64
}

func (k *fileCacheChecker) check(t *rapid.T, ops []op) {
	// Most programs start by opening the cached file (fd 3), as seed 000's does.
	if rapid.IntRange(0, 3).Draw(t, "prefix") > 0 {
		ops = append([]op{{Kind: "open", Path: msbPath}}, ops...)
	}
	var fc *interposer.FileCache
	checkEquivalent(t, ops, func(h sim.Handler) sim.Handler {
		fc = interposer.NewFileCache(h, msbPath)
		return fc
	})
	st := fc.Stats()
	k.ops += len(ops)
	k.served += st.Served
	k.passed += st.Passed
}

func (k *fileCacheChecker) report(t *testing.T) {
	t.Logf("%d ops: %d calls served from memory, %d passed to the kernel", k.ops, k.served, k.passed)
}

func TestFileCacheReadEquivalence(t *testing.T) {
	var k fileCacheChecker
	rapid.Check(t, func(t *rapid.T) { k.check(t, genLongProg(t, 10, 60, readOps, hotOps)) })
	k.report(t)
}

// Interleaved writes, truncates, renames, unlinks, links, symlinks, chdir, O_TRUNC
// and O_CREAT opens: the cache never serves stale bytes or stale names.
func TestFileCacheReadEquivalenceWithMutations(t *testing.T) {
	var k fileCacheChecker
	rapid.Check(t, func(t *rapid.T) { k.check(t, genLongProg(t, 10, 60, readOps, hotOps, mutateOps)) })
	k.report(t)
}

// With RLIMIT_NOFILE at 4..12 the program's table fills: EMFILE must come when and
// as the kernel gives it, whatever virtual fds the cache holds.
func TestFileCacheReadEquivalenceFewFds(t *testing.T) {
	var k fileCacheChecker
	rapid.Check(t, func(t *rapid.T) {
		ops := append([]op{{Kind: "setrlimit", N: rapid.IntRange(4, 12).Draw(t, "nofile")}}, genLongProg(t, 10, 60, readOps, hotOps, mutateOps)...)
		k.check(t, ops)
	})
	k.report(t)
}

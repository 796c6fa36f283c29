package interposer_test

import (
	"testing"

	"pgregory.net/rapid"

	"iosim/interposer"
	"iosim/sim"
)

func fileCacheStack(k sim.Handler) sim.Handler { return interposer.NewFileCache(k, msbPath) }

func TestFileCacheReadEquivalence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkEquivalent(t, genProg(t, 40, readOps), fileCacheStack)
	})
}

func TestFileCacheReadEquivalenceWithMutations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkEquivalent(t, genProg(t, 40, readOps, mutateOps), fileCacheStack)
	})
}

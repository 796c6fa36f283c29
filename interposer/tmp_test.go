package interposer_test

import (
	"testing"

	"pgregory.net/rapid"

	"iosim/interposer"
	"iosim/sim"
)

func TestTmpOraus(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		checkEquivalent(t, genProg(t, 40, readOps), func(k sim.Handler) sim.Handler { return interposer.NewOraus(k, msbPath) })
	})
}

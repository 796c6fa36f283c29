//go:build !purego

package strace

import "testing"

// TestSSE2 runs the tests of argMasks, scanArgsWide and frameNext with
// their SSE2 code, which processors without AVX2 take (on those the tests
// ran it already).
func TestSSE2(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: the other tests checked the SSE2 code")
	}
	haveAVX2 = false
	defer func() { haveAVX2 = true }()
	TestArgMasks(t)
	TestScanArgsWideCorpus(t)
	TestScanArgsWideMutations(t)
	TestFrameNext(t)
	TestFrameNextPlaces(t)
	TestFrameNextGuardPage(t)
}

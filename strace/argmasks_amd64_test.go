//go:build !purego

package strace

import "testing"

// TestArgMasksSSE2 runs the tests of argMasks and scanArgsWide with
// argMasks's SSE2 code, which processors without AVX2 take (on those the
// tests ran it already).
func TestArgMasksSSE2(t *testing.T) {
	if !haveAVX2 {
		t.Skip("no AVX2: TestArgMasks checked the SSE2 code")
	}
	haveAVX2 = false
	defer func() { haveAVX2 = true }()
	TestArgMasks(t)
	TestScanArgsWideCorpus(t)
	TestScanArgsWideMutations(t)
}

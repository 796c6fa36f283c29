//go:build !purego

package strace

import "golang.org/x/sys/cpu"

// wideArgs makes the parser try scanArgsWide first: argMasks is vectorised
// here.
const wideArgs = true

// haveAVX2 makes argMasks and frameNext look at 32 bytes per instruction
// instead of 16.
var haveAVX2 = cpu.X86.HasAVX2

// argMasks sets m to the masks of the 64 bytes at w. It is argMasksGeneric
// in assembly (argmasks_amd64.s), with AVX2 where the processor has it
// (haveAVX2), else with SSE2, which every amd64 processor has.
//
//go:noescape
func argMasks(w *[windowLen]byte, m *windowMasks)

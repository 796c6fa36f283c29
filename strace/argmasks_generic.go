//go:build !amd64 || purego

package strace

// wideArgs is false: argMasksGeneric takes longer than scanArgsBytes's byte
// loop over the same bytes, so the parser does without scanArgsWide (which the
// tests still check here).
const wideArgs = false

// argMasks sets m to the masks of the 64 bytes at w.
func argMasks(w *[windowLen]byte, m *windowMasks) { argMasksGeneric(w, m) }

//go:build !purego

package strace

// frameNext is Next's framing of the line at b[i:] (b is the read buffer up
// to its unread end): the index k of the line's newline in b[i:], or -1,
// and, when at least 24 bytes follow the newline in b, whether one of them
// is a '|' (hasBar24 of the next line: it may be a dump line). b's capacity
// must hold frameSlack bytes past its length. It is frameBytes in assembly
// (frame_amd64.s), with AVX2 where the processor has it (haveAVX2), else
// with SSE2.
//
//go:noescape
func frameNext(b []byte, i int) (k int, bar bool)

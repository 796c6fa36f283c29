//go:build !amd64 || purego

package strace

// frameNext is Next's framing of the line at b[i:] (b is the read buffer up
// to its unread end): the index k of the line's newline in b[i:], or -1,
// and, when at least 24 bytes follow the newline in b, whether one of them
// is a '|' (hasBar24 of the next line: it may be a dump line).
func frameNext(b []byte, i int) (k int, bar bool) { return frameBytes(b, i) }

package crash

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/iosim/iosim/vfs"
)

// describeContent says in words what a file holds against the content a
// program wrote (new) and the contents it replaced (old): by 512-byte
// sector, as a crash tears, the runs of new bytes, old bytes, zeros and
// other bytes, each with its length: "empty", "zeros (6000 bytes)", "new
// bytes, then zeros (4096 + 1904 bytes)". A sector is new when it equals
// the new content at its offset, old when it equals an old one's, zeros
// when every byte is 0 (new first: a sector both new and old is new), other
// bytes else (with no new or old content given: every sector not zeros).
func describeContent(have, new []byte, old [][]byte) string {
	if len(have) == 0 {
		return "empty"
	}
	words := [...]string{"new bytes", "old bytes", "zeros", "other bytes"}
	var kinds []int
	var sizes []int
	for off := 0; off < len(have); off += vfs.SectorSize {
		end := min(off+vfs.SectorSize, len(have))
		b := have[off:end]
		k := 3
		switch {
		case end <= len(new) && bytes.Equal(b, new[off:end]):
			k = 0
		case oldAt(b, old, off, end):
			k = 1
		case len(bytes.Trim(b, "\x00")) == 0:
			k = 2
		}
		if n := len(kinds); n > 0 && kinds[n-1] == k {
			sizes[n-1] += end - off
			continue
		}
		kinds, sizes = append(kinds, k), append(sizes, end-off)
	}
	var ws, ns []string
	for i, k := range kinds {
		ws = append(ws, words[k])
		ns = append(ns, fmt.Sprint(sizes[i]))
	}
	return fmt.Sprintf("%s (%s bytes)", strings.Join(ws, ", then "), strings.Join(ns, " + "))
}

func oldAt(b []byte, old [][]byte, off, end int) bool {
	for _, o := range old {
		if end <= len(o) && bytes.Equal(b, o[off:end]) {
			return true
		}
	}
	return false
}

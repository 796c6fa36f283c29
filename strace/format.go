package strace

import (
	"strconv"
)

// AppendFormat appends ev as the line strace would print (with the same
// pid, timestamp and -T style as ev records), followed by a newline and by
// its hex-dump lines if it has a Dump. Arguments are written from RawArgs,
// so an Event built by hand should set RawArgs (see AppendQuoted).
//
// A joined unfinished/resumed pair is written as one line. A result comment
// printed as `/* ... */` is written in parentheses.
func AppendFormat(dst []byte, ev *Event) []byte {
	start := len(dst)
	switch ev.PidStyle {
	case PidColumn:
		n := len(dst)
		dst = strconv.AppendInt(dst, int64(ev.Pid), 10)
		for len(dst)-n < 5 {
			dst = append(dst, ' ')
		}
		dst = append(dst, ' ')
	case PidBracket:
		dst = append(dst, "[pid "...)
		dst = appendPadInt(dst, int64(ev.Pid), 5, ' ')
		dst = append(dst, "] "...)
	}
	switch ev.TimeKind {
	case TimeOfDay:
		s := ev.Time / 1e9
		dst = appendPadInt(dst, s/3600, 2, '0')
		dst = append(dst, ':')
		dst = appendPadInt(dst, s/60%60, 2, '0')
		dst = append(dst, ':')
		dst = appendPadInt(dst, s%60, 2, '0')
		dst = appendFrac(dst, ev.Time%1e9, ev.TimePrec)
		dst = append(dst, ' ')
	case TimeEpoch:
		dst = strconv.AppendInt(dst, ev.Time/1e9, 10)
		dst = appendFrac(dst, ev.Time%1e9, ev.TimePrec)
		dst = append(dst, ' ')
	case TimeRelative:
		dst = appendPadInt(dst, ev.Time/1e9, 6, ' ')
		dst = appendFrac(dst, ev.Time%1e9, ev.TimePrec)
		dst = append(dst, ' ')
	}
	if ev.HasNr {
		dst = append(dst, '[')
		dst = appendPadInt(dst, int64(ev.Nr), 4, ' ')
		dst = append(dst, "] "...)
	}
	if ev.HasIP {
		dst = append(dst, '[')
		if ev.IPUnknown {
			dst = append(dst, "????????????????"...)
		} else {
			for k := 15; k >= 0; k-- { // %016lx
				dst = append(dst, "0123456789abcdef"[ev.IP>>(4*k)&0xf])
			}
		}
		dst = append(dst, "] "...)
	}
	switch ev.Kind {
	case KindSyscall:
		dst = append(dst, ev.Name...)
		dst = append(dst, '(')
		dst = append(dst, ev.RawArgs...)
		if ev.Unfinished {
			dst = append(dst, " <unfinished ...>\n"...)
			return dst
		}
		dst = append(dst, ") "...)
		for len(dst)-start < 40 {
			dst = append(dst, ' ')
		}
		dst = append(dst, "= "...)
		dst = appendResult(dst, ev)
	case KindSignal:
		dst = append(dst, "--- "...)
		dst = append(dst, ev.Name...)
		if len(ev.RawArgs) > 0 {
			dst = append(dst, ' ')
			dst = append(dst, ev.RawArgs...)
		}
		dst = append(dst, " ---"...)
	case KindExit:
		dst = append(dst, "+++ exited with "...)
		dst = strconv.AppendInt(dst, ev.Ret, 10)
		dst = append(dst, " +++"...)
	case KindKilled:
		dst = append(dst, "+++ killed by "...)
		dst = append(dst, ev.Name...)
		if ev.CoreDumped {
			dst = append(dst, " (core dumped)"...)
		}
		dst = append(dst, " +++"...)
	case KindAttached, KindDetached:
		dst = append(dst, "strace: Process "...)
		dst = strconv.AppendInt(dst, int64(ev.Pid), 10)
		if ev.Kind == KindAttached {
			dst = append(dst, " attached"...)
		} else {
			dst = append(dst, " detached"...)
		}
	default:
		dst = append(dst, ev.RawArgs...)
	}
	dst = append(dst, '\n')
	return appendDump(dst, ev.Dump)
}

// Format returns AppendFormat(nil, ev) as a string.
func Format(ev *Event) string { return string(AppendFormat(nil, ev)) }

func appendResult(dst []byte, ev *Event) []byte {
	switch {
	case !ev.RetKnown:
		dst = append(dst, '?')
	case ev.RetHex:
		dst = append(dst, "0x"...)
		dst = strconv.AppendUint(dst, uint64(ev.Ret), 16)
	default:
		dst = strconv.AppendInt(dst, ev.Ret, 10)
	}
	if ev.RetHasPath {
		dst = append(dst, '<')
		dst = appendEscaped(dst, ev.RetPath, true)
		dst = append(dst, '>')
		if ev.RetDeleted {
			dst = append(dst, "(deleted)"...)
		}
	}
	if ev.ErrnoName != "" {
		dst = append(dst, ' ')
		dst = append(dst, ev.ErrnoName...)
		desc := ev.ErrnoDesc
		if desc == nil {
			if d := ErrnoDesc(ev.Errno); d != "" {
				desc = []byte(d)
			}
		}
		if desc == nil && ev.RetComment != nil {
			desc = []byte{} // keep the comment from being read back as the description
		}
		if desc != nil {
			dst = append(dst, " ("...)
			dst = append(dst, desc...)
			dst = append(dst, ')')
		}
	}
	if ev.RetComment != nil {
		if parenSafe(ev.RetComment) {
			dst = append(dst, " ("...)
			dst = append(dst, ev.RetComment...)
			dst = append(dst, ')')
		} else {
			dst = append(dst, " /* "...)
			dst = append(dst, ev.RetComment...)
			dst = append(dst, " */"...)
		}
	}
	if ev.Injected {
		dst = append(dst, " (INJECTED)"...)
	}
	if ev.HasDuration {
		dst = append(dst, " <"...)
		dst = strconv.AppendInt(dst, ev.Duration/1e9, 10)
		dst = appendFrac(dst, ev.Duration%1e9, ev.DurPrec)
		dst = append(dst, '>')
	}
	return dst
}

func appendPadInt(dst []byte, v int64, width int, pad byte) []byte {
	var tmp [24]byte
	s := strconv.AppendInt(tmp[:0], v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, pad)
	}
	return append(dst, s...)
}

// appendFrac appends "." and the first prec digits of ns (nanoseconds).
func appendFrac(dst []byte, ns int64, prec uint8) []byte {
	if prec == 0 {
		return dst
	}
	if prec > 9 {
		prec = 9
	}
	var tmp [9]byte
	for i := 8; i >= 0; i-- {
		tmp[i] = byte('0' + ns%10)
		ns /= 10
	}
	dst = append(dst, '.')
	return append(dst, tmp[:prec]...)
}

// appendDump appends strace's hex-dump lines for b.
func appendDump(dst, b []byte) []byte {
	const hexd = "0123456789abcdef"
	for off := 0; off < len(b); off += 16 {
		row := b[off:min(off+16, len(b))]
		dst = append(dst, " | "...)
		for sh := 16; sh >= 0; sh -= 4 {
			dst = append(dst, hexd[off>>sh&0xf])
		}
		dst = append(dst, "  "...)
		for k := 0; k < 16; k++ {
			if k < len(row) {
				dst = append(dst, hexd[row[k]>>4], hexd[row[k]&0xf], ' ')
			} else {
				dst = append(dst, "   "...)
			}
			if k == 7 {
				dst = append(dst, ' ')
			}
		}
		dst = append(dst, ' ')
		for k := 0; k < 16; k++ {
			c := byte(' ')
			if k < len(row) {
				c = row[k]
				if c < ' ' || c > '~' {
					c = '.'
				}
			}
			dst = append(dst, c)
		}
		dst = append(dst, " |\n"...)
	}
	return dst
}

// AppendQuoted appends s quoted the way strace prints a string argument:
// `"..."` with C escapes (\t \n \v \f \r \" \\, other non-printable bytes in
// octal, three digits when an octal digit follows), and `...` after the
// closing quote when truncated is set.
func AppendQuoted(dst, s []byte, truncated bool) []byte {
	dst = append(dst, '"')
	dst = appendEscaped(dst, s, false)
	dst = append(dst, '"')
	if truncated {
		dst = append(dst, "..."...)
	}
	return dst
}

// appendEscaped escapes s as strace does; in a -y path (path=true) '<' and
// '>' are escaped as well, so the decoration stays balanced.
func appendEscaped(dst, s []byte, path bool) []byte {
	for i, c := range s {
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\v':
			dst = append(dst, '\\', 'v')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		case path && (c == '<' || c == '>'):
			dst = append(dst, '\\', 'x', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		case c < ' ' || c > '~':
			nextOctal := i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '7'
			dst = append(dst, '\\')
			if nextOctal || c >= 0100 {
				dst = append(dst, '0'+c>>6)
			}
			if nextOctal || c >= 010 {
				dst = append(dst, '0'+c>>3&7)
			}
			dst = append(dst, '0'+c&7)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// parenSafe reports whether "(" + c + ")" reads back as one parenthesized
// trailer (balanced brackets, terminated strings).
func parenSafe(c []byte) bool {
	depth := 0
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case '"':
			j := skipString(c, i)
			if j < 0 {
				return false
			}
			i = j - 1
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

package strace

import "bytes"

// Flat argument lists: a fast path for Event.Int, Event.Str and Event.NArgs.
//
// Most calls of a file-I/O trace print their arguments as numbers, names,
// flag sets and strings only: `read(3, "v00 00006"..., 512)`,
// `openat(AT_FDCWD, "a.txt", O_RDONLY|O_CLOEXEC)`, `lseek(3, 512, SEEK_SET)`.
// For such a list the arguments are separated by the ", " that strace prints
// between them, so one pass finds where each begins and ends, and a single
// argument can be evaluated without building the whole tree (which copies a
// large Node per value).
//
// The grammar is deliberately strict, so that what the fast path answers is
// exactly what the tree parser answers for the same list:
//
//	flat  = ""  |  arg { ", " arg }        (at most maxFlatArgs arguments)
//	arg   = token | string [ "..." ]
//	token = 1*( digit | letter | "_" | "|" | "-" )
//	string = '"' ... '"'                   (as skipString finds its end)
//
// A token holds no byte that the tree parser treats specially after a value
// (no '=', '<', '/', '(' or space), and each argument is followed by ',' or
// the end of the list, so the tree parser reads each argument exactly as it
// reads the same text on its own. TestFlatArgsAgree checks the claim against
// the full tree for every call of the corpus, and FuzzFlatArgs for arbitrary
// text.

// maxFlatArgs is the most arguments a flat list may have (a syscall has at
// most six).
const maxFlatArgs = 6

// flatArgs records the split of a flat argument list, and what the fast
// paths computed from it for the current event. Offsets index Event.RawArgs.
type flatArgs struct {
	ok    bool // the list is flat; the fields below describe it
	n     uint8
	str   uint8 // bit i: argument i is a string
	trunc uint8 // bit i: string argument i is followed by "..." (strace cut it)
	start [maxFlatArgs]int32
	end   [maxFlatArgs]int32
	have  uint8 // bit i: vals[i] and bit i of known hold argument i's value
	known uint8
	vals  [maxFlatArgs]int64

	// Escaped strings are decoded into sdec; strIdx-1 is the argument
	// decoded last, at strText (kept so repeated calls decode once). Slices
	// of sdec are never written again before the next reset.
	strIdx  int8
	strText []byte
	sdec    []byte
}

// value returns tokenValue of token argument i, evaluated once per event.
func (f *flatArgs) value(raw []byte, i int) (int64, bool) {
	bit := uint8(1) << i
	if f.have&bit == 0 {
		v, ok := tokenValue(raw[f.start[i]:f.end[i]])
		f.vals[i] = v
		f.have |= bit
		if ok {
			f.known |= bit
		}
	}
	return f.vals[i], f.known&bit != 0
}

// tokenByte marks the bytes of a flat token.
var tokenByte = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = true, true
	}
	t['_'], t['|'], t['-'] = true, true, true
	return t
}()

// split fills f from raw and reports whether raw is a flat list.
func (f *flatArgs) split(raw []byte) bool {
	if len(raw) > 1<<30 {
		return false
	}
	i := 0
	for i < len(raw) {
		if int(f.n) == maxFlatArgs {
			return false
		}
		s := i
		if raw[i] == '"' {
			e := skipString(raw, i)
			if e < 0 {
				return false
			}
			if e+3 <= len(raw) && raw[e] == '.' && raw[e+1] == '.' && raw[e+2] == '.' {
				e += 3
				f.trunc |= 1 << f.n
			}
			f.str |= 1 << f.n
			i = e
		} else {
			for i < len(raw) && tokenByte[raw[i]] {
				i++
			}
			if i == s {
				return false
			}
		}
		f.start[f.n], f.end[f.n] = int32(s), int32(i)
		f.n++
		if i == len(raw) {
			break
		}
		if i+2 >= len(raw) || raw[i] != ',' || raw[i+1] != ' ' {
			return false
		}
		i += 2
	}
	f.ok = true
	return true
}

// flatList returns the split of ev's arguments when they form a flat list.
// The split lives in the event's tree (one per parser, one per Clone): only
// one event of a parser is valid at a time, so the first use for an event
// resets it.
func (ev *Event) flatList() (*flatArgs, bool) {
	if ev.Kind != KindSyscall {
		return nil, false
	}
	f := ev.flat
	if f == nil {
		f = &ev.tree().flat
		sdec := f.sdec[:0]
		*f = flatArgs{sdec: sdec}
		f.split(ev.RawArgs)
		ev.flat = f
	}
	return f, f.ok
}

// tokenValue returns the value the tree parser gives a flat token: a number,
// a name, or a '|' set of them (ok is false when a name is unknown, v then
// holds the known parts, as Node.Value does); any other token is NodeRaw
// text, which has no value.
func tokenValue(tok []byte) (v int64, ok bool) {
	ok = true
	i := 0
	for {
		switch {
		case i < len(tok) && (tok[i] == '-' || isDigit(tok[i])):
			neg := tok[i] == '-'
			if neg {
				i++
			}
			u, e, _, okd := parseUint(tok, i)
			if !okd {
				return 0, false
			}
			x := int64(u)
			if neg {
				x = -x
			}
			v |= x
			i = e
		case i < len(tok) && isIdentStart(tok[i]):
			e := i + 1
			for e < len(tok) && isIdent(tok[e]) {
				e++
			}
			x, known := constValue(tok[i:e])
			v |= x
			ok = ok && known
			i = e
		default:
			return 0, false
		}
		if i == len(tok) {
			return v, ok
		}
		if tok[i] != '|' {
			return 0, false
		}
		i++
	}
}

// flatStr returns string argument i of a flat list, decoded. Text without
// escapes aliases RawArgs; decoded text is kept in f.sdec.
func (ev *Event) flatStr(f *flatArgs, i int) (b []byte, truncated bool) {
	s, e := int(f.start[i]), int(f.end[i])
	truncated = f.trunc&(1<<i) != 0
	if truncated {
		e -= 3
	}
	body := ev.RawArgs[s+1 : e-1]
	if bytes.IndexByte(body, '\\') < 0 {
		return body, truncated
	}
	if f.strIdx != int8(i)+1 {
		n := len(f.sdec)
		f.sdec = unescape(f.sdec, body)
		f.strIdx, f.strText = int8(i)+1, f.sdec[n:len(f.sdec):len(f.sdec)]
	}
	return f.strText, truncated
}

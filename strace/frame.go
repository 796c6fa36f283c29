package strace

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// The framing fast path: Next hands each line to parseFast first. It takes
// the dominant shape of a line,
//
//	[' '+] [PID ' '+] [HH:MM:SS.uuuuuu ' '+ | SECONDS.FRAC ' '+] name(args) = result
//
// where name is one of the syscall names already seen (lookupCall), with
// none of the rarer prefixes (`[pid N]`, -n, -i) and not `<unfinished ...>`;
// the -tt, -r and -ttt timestamps with microseconds take word-at-a-time
// paths (the first is clockMicros written out, the others secondsMicros),
// and parseResult has its own fast paths for ` = N` and ` <S.uuuuuu>`. It
// declines (handled false) anything else, which parseLine then parses
// from scratch: parseFast must leave p.ev exactly as parseLine would for
// the lines it takes (tested on the corpus and on mutations of its lines by
// TestParseFast, and fuzzed by FuzzParseFast). Next hands it the lines it
// finds whole in the read buffer without a call to readLine.
//
// Instead of clearing the whole Event, parseFast writes the fields such a
// line sets, and relies on the others being zero already: p.evRare records
// that the event may hold something else (set by parseLine, by the rarer
// parts of parseResult, by readDumps, flushPending and after an error, and
// by Event.tree, which every write of the lazy argument state (parsed,
// args, flat) calls).

// parseFast parses line into p.ev when it has the common shape described
// above; handled is false when it does not, and then p.ev is left for
// parseLine to clear. When handled, the line produced an event (parseLine's
// ok is true) unless err is not nil.
func (p *Parser) parseFast(line []byte, no int) (handled bool, err *SyntaxError) {
	if len(line) < 24 {
		return false, nil
	}
	// After an event of parseFast's, p.evRare is false, the fields below
	// are as parseLine's clear leaves them and File, p and Kind are already
	// what parseFast sets.
	ev := &p.ev
	if p.evRare {
		*ev = Event{}
		ev.File, ev.p = p.file, p
		p.evRare = false
	}
	ev.Line, ev.EndLine, ev.Text = no, no, line

	// the line prefix: parseLine's, for a pid column and the timestamps
	i := 0
	if line[0] == ' ' {
		i = skipSpaces(line, 0)
	}
	pid, style := p.filePid, PidNone
	if i+16 > len(line) {
		return false, nil
	}
	c := line[i]
	if isDigit(c) {
		m, d := nonDigits(binary.LittleEndian.Uint64(line[i : i+8]))
		n := bits.TrailingZeros64(m) >> 3
		if n == 8 {
			// a -ttt timestamp (parsed below), or a long pid
			if j := skipDigits(line, i+8); j < len(line) && line[j] == ' ' {
				return false, nil
			}
		} else if line[i+n] == ' ' {
			// parseUint's decimal case: 1 to 7 digits, no leading zero
			if c == '0' && n > 1 {
				return false, nil
			}
			pid, style = int(eightDigits(d<<(64-8*uint(n)))), PidColumn
			if i += n + 1; line[i] == ' ' {
				i = skipSpaces(line, i)
			}
			if i+16 > len(line) {
				return false, nil
			}
			c = line[i]
		}
	}
	ev.Pid, ev.PidStyle = pid, style
	if isDigit(c) {
		// clockMicros, written out (i+16 <= len(line))
		d, ok := matchDigits(binary.LittleEndian.Uint64(line[i:i+8]), clockPattern, clockSeps)
		us, ok2 := fracMicros(binary.LittleEndian.Uint64(line[i+8:i+16]), fracSpace)
		t := d*10 + d>>8 // HH in byte 0, MM in byte 3, SS in byte 6
		if h, m, s := int64(t&0xff), int64(t>>24&0xff), int64(t>>48&0xff); ok && ok2 && h <= 23 && m <= 59 && s <= 60 {
			ev.Time, ev.TimeKind, ev.TimePrec = ((h*60+m)*60+s)*1e9+us*1000, TimeOfDay, 6
			if i += 16; i < len(line) && line[i] == ' ' {
				i = skipSpaces(line, i)
			}
		} else if ns, j, ok := secondsMicros(line, i); ok {
			// parseTimeText's answer for these
			ev.Time, ev.TimeKind, ev.TimePrec = ns, TimeRelative, 6
			if ns >= 1e8*1e9 {
				ev.TimeKind = TimeEpoch
			}
			i = skipSpaces(line, j)
		} else {
			ev.TimePrec = 0 // parseTimeText may leave it
			j, serr := p.parseTimeText(ev, line, i, no)
			if serr != nil || j >= len(line) || line[j] != ' ' {
				return false, nil
			}
			i = skipSpaces(line, j)
		}
		if i >= len(line) {
			return false, nil
		}
		c = line[i]
	} else {
		ev.Time, ev.TimeKind, ev.TimePrec = 0, TimeNone, 0
	}

	// parseCall's case of a known name
	if !isIdentStart(c) {
		return false, nil
	}
	// lookupCall, written out
	if i+16 > len(line) {
		return false, nil
	}
	w0, w1 := binary.LittleEndian.Uint64(line[i:i+8]), binary.LittleEndian.Uint64(line[i+8:i+16])
	var n int
	if m := hasZeroByte(w0 ^ ones*'('); m != 0 {
		n = bits.TrailingZeros64(m) >> 3
		w0, w1 = w0&(1<<(8*n)-1), 0
	} else if m := hasZeroByte(w1 ^ ones*'('); m != 0 {
		n = bits.TrailingZeros64(m) >> 3
		w1 &= 1<<(8*n) - 1
		n += 8
	} else {
		return false, nil
	}
	// findCall, written out
	set := p.callSet(w0, w1)
	e := &set[0]
	if e.n != n || e.w0 != w0 || e.w1 != w1 {
		if e = &set[1]; e.n != n || e.w0 != w0 || e.w1 != w1 {
			return false, nil
		}
	}
	if hasSuffix(line, unfinishedTail) {
		return false, nil
	}
	ev.Name = e.name // Kind is KindSyscall (the zero Kind) already
	j := i + n
	ev.Ret, ev.RetKnown, ev.RetHex = 0, false, false
	ev.Duration, ev.HasDuration, ev.DurPrec = 0, false, 0
	// parseArgsResult, with its common case written out
	end := -1
	if wideArgs {
		end = scanArgsWide(line, j+1)
	}
	if end >= 0 {
		ev.RawArgs = line[j+1 : end : end]
		err = p.parseResult(ev, line, end+1, no)
	} else {
		err = p.parseArgsResultBytes(ev, line, j+1, no)
	}
	if err != nil {
		p.evRare = true
		return true, err
	}
	if len(e.name) == 5 && e.name == "write" && !countLast(ev.RawArgs) {
		return false, nil // the program's output after the count: parseLine's
	}
	return true, nil
}

// secondsMicros parses the usual timestamp of -r and -ttt, "S.uuuuuu "
// (1 to 10 digits S, at most 9e9, and a space), at b[i] into nanoseconds,
// and returns the index of the space: what parseFrac(b, i) returns then
// (with 6 fraction digits; tested by TestSecondsMicros and
// FuzzSecondsMicros). It declines (ok false) whatever else is there.
func secondsMicros(b []byte, i int) (ns int64, end int, ok bool) {
	if i < 0 || i+16 > len(b) {
		return 0, 0, false
	}
	m, d := nonDigits(binary.LittleEndian.Uint64(b[i : i+8]))
	n := bits.TrailingZeros64(m) >> 3
	var sec uint64
	switch {
	case n == 0:
		return 0, 0, false
	case n < 8:
		sec = eightDigits(d << (64 - 8*uint(n)))
	default: // the digits go on in the next word
		m2, d2 := nonDigits(binary.LittleEndian.Uint64(b[i+8 : i+16]))
		n2 := bits.TrailingZeros64(m2) >> 3
		if n2 > 2 {
			return 0, 0, false
		}
		sec = eightDigits(d)*pow10[n2] + eightDigits(d2<<(64-8*uint(n2)))
		if sec > 9e9 {
			return 0, 0, false
		}
		n += n2
	}
	j := i + n
	if j+8 > len(b) {
		return 0, 0, false
	}
	us, ok := fracMicros(binary.LittleEndian.Uint64(b[j:j+8]), fracSpace)
	if !ok {
		return 0, 0, false
	}
	return int64(sec)*1e9 + us*1000, j + 7, true
}

// frameSlack is how many bytes past its length the read buffer's capacity
// holds for frameNext, which reads there instead of handling a short tail.
const frameSlack = 64

// frameBytes is frameNext with bytes.IndexByte and hasBar24. bar is false
// when fewer than 24 bytes follow the newline, or there is none; frameNext's
// bar then may be anything (Next looks at it only with 32 bytes there).
func frameBytes(b []byte, i int) (k int, bar bool) {
	k = bytes.IndexByte(b[i:], '\n')
	if n := i + k + 1; k >= 0 && n+24 <= len(b) {
		bar = hasBar24(b[n:])
	}
	return k, bar
}

package stdio

import (
	"errors"
	"fmt"
)

// Go-style names of the stream calls, as package scenarios calls them:
// Open is Fopen, Write Fwrite, WriteString Fputs, Flush Fflush, Close
// Fclose, Fd Fileno.

// ParseMode checks an fopen mode strictly, for input validation: the open(2)
// flags fopen uses, and whether it seeks to the end at open ("a" without
// "+"). An empty mode, a first letter other than r, w or a, or another
// letter than +, b, x and e is an error (glibc ignores unknown letters;
// Fopen does too).
func ParseMode(mode string) (flags int, seekEnd bool, err error) {
	if mode == "" {
		return 0, false, errors.New("empty mode")
	}
	for _, c := range mode[1:] {
		if c != '+' && c != 'b' && c != 'x' && c != 'e' {
			return 0, false, fmt.Errorf("mode %q: unknown flag %q (want +, b, x, e)", mode, c)
		}
	}
	flags, rw, ok := openFlags(mode)
	if !ok {
		return 0, false, fmt.Errorf("mode %q: want r, w or a first", mode)
	}
	return flags, rw&(appending|noReads) == appending|noReads, nil
}

// Open is Fopen.
func Open(sys Sys, path, mode string) (*File, error) { return Fopen(sys, path, mode) }

// Fd is Fileno.
func (f *File) Fd() int { return f.Fileno() }

// Write is Fwrite.
func (f *File) Write(p []byte) (int, error) { return f.Fwrite(p) }

// WriteString is Fputs, returning len(s) when it succeeds.
func (f *File) WriteString(s string) (int, error) {
	if err := f.Fputs(s); err != nil {
		return 0, err
	}
	return len(s), nil
}

// Flush is Fflush.
func (f *File) Flush() error { return f.Fflush() }

// Close is Fclose.
func (f *File) Close() error { return f.Fclose() }

// Package strace parses the text that strace(1) writes, one event at a time.
//
// It reads the formats people record with strace 6.x: plain `strace -o FILE`,
// `-f` (a leading pid column, or a `[pid N] ` prefix when strace writes to a
// terminal), `-ff -o PREFIX` per-task files (the pid comes from the file name:
// `PREFIX.12345` or this repository's renamed `case.ffpid12345.strace`),
// `-t`/`-tt`/`-ttt`/`-r` timestamps, `-T` durations, `-y`/`-yy` fd decorations,
// any `-s`, `-X verbose` and `-X raw`, `-v`, `-e trace=` subsets, the hex dumps
// of `-e write=`/`-e read=`, `-n` syscall numbers and `-i` instruction pointers
// (Event.Nr, Event.IP), `-k` stack frames (skipped), signals, exits and
// attach/detach messages.
// `<unfinished ...>` lines are joined with their `<... name resumed>` line of
// the same pid and emitted as one event carrying both line numbers.
//
// # Streaming and ownership
//
// A [Parser] reads one line at a time through reused buffers: memory does not
// grow with the length of the trace, only with the longest line (capped by
// [Options.MaxLineLen], 16 MiB by default) and with the calls left
// `<unfinished ...>` (at most 65536 of them holding at most 64 MiB of text;
// beyond that a line is a SyntaxError). [Parser.Next] returns a pointer to
// an [Event] owned by the parser. The Event and every byte slice and [Node]
// reachable from it are valid only until the next call to Next; call
// [Event.Clone] to keep one. In steady state Next and [Event.Args] allocate
// nothing.
//
// Arguments are parsed lazily: Next finds and validates the argument text
// (balanced brackets, terminated strings and comments) and parses the return
// value; the argument tree ([Event.Args]) is built on first use into reused
// slices. The tree parser is total: text it does not understand (for example
// `WIFEXITED(s) && WEXITSTATUS(s) == 0`) becomes a [NodeRaw] node holding the
// exact text, never an error. [Event.Int], [Event.Str] and [Event.NArgs]
// answer without building the tree when the list is flat (numbers, names,
// flag sets and strings separated by ", ", as in
// `read(3, "abc"..., 512)`): they split the list once per event and
// evaluate only the argument asked for, with the tree's answers (see
// flat.go; tested against the tree on the corpus and by FuzzFlatArgs).
//
// To collect the hex-dump lines that follow a call, Next looks at the start
// of the next line before returning; on a pipe it may therefore wait for one
// more line of input (or EOF) before handing out an event.
//
// # Merging -ff files
//
// [Merge] interleaves several parsers by timestamp (see [Merger] for the
// exact ordering rules); with `-ff -tt` files this reproduces the global
// order up to strace's microsecond resolution.
//
// # Formatting
//
// [AppendFormat] writes an event back as the line strace prints, so tools can
// emit strace text that this package reads back; for every line of the
// recorded corpus parse(format(parse(line))) equals parse(line) (tested), and
// for aligned input it is byte-identical.
//
// # Errors
//
// A malformed line yields a *[SyntaxError] naming the file, the line, the
// column and what was expected. With [Options.KeepGoing] such lines are counted
// ([Parser.Skipped]) and skipped instead. The parser never panics on any
// input; FuzzParse checks that.
//
// # Performance
//
// BenchmarkParse compares Next with bufio.Scanner line scanning of the same
// text (the whole corpus, 8 times; lines average 105 bytes). Next costs about
// 6x the scan: 133-148 ns per line against 22-26 ns, the fastest of 16-20
// alternated runs in each of four sessions on a 2-core test machine shared
// with other work (medians swing by a quarter from run to run). It executes
// 1,624 instructions per line (cachegrind), down from 1,954 (and 7-8x the
// scan, 168-190 ns) before the fixed-format parts of a line were read a word
// at a time: the -tt timestamp `01:29:07.195780 ` and the -T duration
// `<0.000020>` are matched and converted with a few word operations
// (matchDigits), the syscall name is found by its first 16 bytes in a small
// cache of the names already seen (lookupCall), decimal numbers are taken
// eight digits at a time, the padding before `=` eight spaces at a time, and
// the look at the next line for hex dumps first searches its first 24 bytes
// for a '|'. Each fast path declines to the byte-at-a-time code for anything
// else, and is tested and fuzzed against it (fastpath_test.go).
//
// What remains is mostly the validation of the argument text (balanced
// brackets, terminated strings and comments, so that a malformed line is
// reported at Next with its column): about a third of the instructions.
// Word-at-a-time classification of the argument bytes (a mask of the nine
// special bytes, visiting its set bits) costs more instructions than the
// byte loop, because the plain runs between strings, decorations and
// brackets are short (about ten bytes), and measured no faster; it pays only
// for the long runs of -y paths (skipDecPlain). Clearing the 384-byte Event
// for each line is about 7% of the time (measured by leaving it out), and
// finding the end of the line is the work the scan does. The project's
// target is 4x. Deferring the argument validation to Args would not reach
// it: finding the ')' that ends the arguments still takes a string-aware
// scan (a prototype that only did that: 1,559 instructions per line), and
// even skipping the argument text altogether, by finding the result from
// the end of the line, measured 1,485 instructions and 5.3-6.4x the scan.
// What remains is spread over the line's framing; 4x would take vectorised
// scanning of whole lines, which Go offers only in assembly. Building the argument
// tree roughly doubles the cost of a line; it is paid only for the events
// whose Args are used, and not for the Int/Str/NArgs answers of flat lists.
//
// Numeric values of symbolic constants (O_RDONLY|O_CLOEXEC, SEEK_END,
// AT_FDCWD, FALLOC_FL_*, F_SETFD, ...) are those of Linux x86_64, whatever the
// host.
package strace

// Package strace parses the text that strace(1) writes, one event at a time.
//
// It reads the formats people record with strace 6.x: plain `strace -o FILE`,
// `-f` (a leading pid column, or a `[pid N] ` prefix when strace writes to a
// terminal), `-ff -o PREFIX` per-task files (the pid comes from the file name:
// `PREFIX.12345` or this repository's renamed `case.ffpid12345.strace`),
// `-t`/`-tt`/`-ttt`/`-r` timestamps, `-T` durations, `-y`/`-yy` fd decorations,
// any `-s`, `-X verbose` and `-X raw`, `-v`, `-e trace=` subsets, the hex dumps
// of `-e write=`/`-e read=`, `-n` syscall numbers and `-i` instruction pointers
// (Event.Nr, Event.IP), `-k` stack frames (skipped), `--decode-pids=comm`
// (`PID<comm>`, the comm skipped), `-z` and `-e status=` (whose second half of
// an interrupted call comes on the next line with neither pid nor
// `<... resumed>`), signals, exits and attach/detach messages, and
// strace's stderr captured as the trace (`strace -f prog 2> FILE`: its
// messages and the program's own stderr output inside call lines, the
// `[pid N] ` prefix only while several tasks are traced; see stderr.go).
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
// order up to strace's microsecond resolution. Files without timestamps are
// ordered by what their calls say: a child's events before the wait4 that
// returns its pid and before the SIGCHLD that reports its end, a thread's
// after the clone that made it, a read of a pipe after the writes it reads.
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
// text (the whole corpus, 8 times; lines average 105 bytes). Its ratio
// sub-benchmark runs the two in turn, once each per iteration, and reports
// parse/scan, the median of the per-iteration ratios: on the shared 2-core
// test machine the load moves either time by tens of percent between
// seconds, the ratio of a pair much less. Next executes 997 instructions
// per line (cachegrind; the scan 182). `go test -bench Parse/ratio
// -benchtime 100x`, 30 runs alternated with the build iosim has (`-pgo`,
// below): parse/scan 4.27 (runs from 4.15 to 4.52), 130 ns a line against
// the scan's 30 (medians); built as iosim builds it, 3.99 (3.82 to 4.11).
// Where the linker puts the code moves the ratio by about 5% too: the same
// parser, with the benchmark's loops moved into another package, measured
// 4.05 against 4.37 in alternated runs, because the scan (the
// denominator) ran 8% slower there. Where the time goes:
//
//   - Finding the line, and whether the next one may be a hex dump, is one
//     call to assembly (frameNext: 64 bytes a step with AVX2, reading into
//     slack past the read buffer instead of handling a tail). Copying the
//     input into the read buffer is the scan's own work too.
//   - The usual line takes a fast path (parseFast, frame.go): the pid column
//     and the -tt/-r/-ttt timestamp are read eight bytes at a time, the
//     syscall name is found by its first 16 bytes in a 2-way cache of the
//     names already seen, and the Event is not cleared: parseFast writes the
//     fields such a line sets and clears the whole Event only after a line
//     that set others (Parser.evRare). parseResult has shortcuts for
//     " = value" and a final -T duration.
//   - The argument text is validated (balanced brackets, terminated strings,
//     comments and -y decorations, so that a malformed line is reported at
//     Next with its column) from bit masks of 64 bytes at a time
//     (scanArgsWide, argscan.go; the masks in SSE2/AVX2 assembly): 27-30%
//     of the time, the masks of 1.4 windows a line and the visit of 2.4
//     bytes that matter a line. The byte loop it replaced
//     (scanArgsBytes) stays for malformed text, for other architectures and
//     for builds with the purego tag (`go test -tags purego ./strace`).
//
// The go command builds iosim with profile-guided optimization
// (cmd/iosim/default.pgo); `go test -pgo=$PWD/cmd/iosim/default.pgo`, run
// from the repository root, builds this package as iosim has it. That
// inlines the argument scan (and skipString in it) into parseFast and aligns
// the hot loops (the compiler's alignhot, which needs a profile); it does
// not lower the instruction count. Each of the two, turned off alone,
// loses part of the gain.
//
// Each fast path declines to the general code for anything unusual, and is
// tested and fuzzed against it (fastpath_test.go, frame_test.go,
// argscan_test.go); parseResult's shortcuts, which both paths take, have a
// table of their own (TestResultShortcuts).
//
// Tried and not kept, measured in alternated rounds: the masks of the whole
// read buffer made once per read, framing lines with their newline masks
// (15% more instructions, and slower: the windows no longer start at the
// arguments, so more strings and decorations cross them); framing each
// line with the newline that the argument scan's masks show, and a search
// after the ')' otherwise (4% more instructions, no faster); the window
// loop of the argument scan in assembly (34 fewer instructions a line, and
// parse/scan 4.37 against 4.27); the first 192 bytes of a line framed
// without a branch on where the newline is (no faster); the argument scan,
// skipString and parseResult's usual case written out in parseFast, what
// the profile inlines (0.6-1.5% less, within the placement effect above, for
// a second copy of 100 lines); a return value
// of up to seven digits read as one word, without a branch on its length
// (4-5% slower than the byte loop); dispatching the visited bytes by mask
// bits instead of a table (no change); read buffers of 8 to 128 KiB (no
// change). Earlier, with instruction counts: 128-byte mask windows (+110 a
// line), the masks of the first window taken before the name lookup (+50),
// a branch-free eight-digit return value (+20), the rest of the arguments
// after a long string a byte at a time (+11), a one-entry errno cache (+2).
// Next and the argument tree of every event take four to five times as
// long as Next alone (BenchmarkParse/parse+args against parse); the tree is
// built only for the events whose Args are used, and not for the
// Int/Str/NArgs answers of flat lists.
//
// Numeric values of symbolic constants (O_RDONLY|O_CLOEXEC, SEEK_END,
// AT_FDCWD, FALLOC_FL_*, F_SETFD, ...) are those of Linux x86_64, whatever the
// host.
package strace

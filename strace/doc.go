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
// Next executes no allocation in steady state; its speed against plain line
// scanning, how it is measured and what was tried are in BENCHMARKS.md. Each fast
// path declines to the general code for anything unusual, and is tested and
// fuzzed against it (fastpath_test.go, frame_test.go, argscan_test.go);
// parseResult's shortcuts, which both paths take, have a table of their own
// (TestResultShortcuts). The argument scan has a portable byte loop
// (scanArgsBytes) for malformed text, other architectures and builds with the
// purego tag (`go test -tags purego ./strace`).
//
// Numeric values of symbolic constants (O_RDONLY|O_CLOEXEC, SEEK_END,
// AT_FDCWD, FALLOC_FL_*, F_SETFD, ...) are those of Linux x86_64, whatever the
// host.
package strace

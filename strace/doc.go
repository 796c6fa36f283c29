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
// 8x the scan: medians of 231 ns per line against 29 ns over 30 alternated
// runs on a 2-core test machine shared with other work (it was 276 ns, 9.1x,
// before Next read lines from its own buffer, classified argument bytes and
// syscall-name bytes by table and stepped over -y paths eight bytes at a
// time). The machine's speed varies by a third from minute to minute; thread
// CPU time measured in short interleaved slices gives 7-8x the scan, and 13%
// less than before. Taking one stage out at a time, the validation of the
// argument text (balanced brackets, terminated strings and comments, so that a
// malformed line is reported at Next with its column) is about a quarter of
// that, the result (`= 0 <0.000012>`) about a sixth, and reading the line is
// the work the scan does; the rest is the line prefix, timestamp and syscall
// name. The stages are short and each ends at a data-dependent branch (the end
// of a run of plain bytes, of a number, the ')' closing the arguments), so
// mispredictions rather than instructions seem to dominate: word-at-a-time
// scanning pays for the long runs of -y paths but not for the short runs of
// argument text, nor for return values and fractions (tried: no faster). The
// project's target is 4x; it would need a different design (such as deferring
// the argument validation to Args, so that a malformed argument list would
// surface as NodeRaw instead of an error), not tuning. Building the argument
// tree roughly doubles the cost of a line; it is paid only for the events
// whose Args are used, and not for the Int/Str/NArgs answers of flat lists.
//
// Numeric values of symbolic constants (O_RDONLY|O_CLOEXEC, SEEK_END,
// AT_FDCWD, FALLOC_FL_*, F_SETFD, ...) are those of Linux x86_64, whatever the
// host.
package strace

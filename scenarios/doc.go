// Package scenarios runs scenario files: questions about a program's I/O
// stated once, in the cockroachdb/datadriven format, and answered by the
// model on every run. A file is a list of commands (see Commands and
// README.md): setup (fs, device, file, stack, faults) that the arms defined
// after it take; arms, each a workload (inline calls in strace syntax, C
// stdio calls, a recorded trace replayed with verification, a fio job file);
// and reports
// and claims (run, compare, equiv, expect).
//
// Contracts:
//   - Output is deterministic: each arm runs on a fresh kernel built from its
//     setup, in one goroutine, on virtual clocks (one per thread); on a
//     device, threads and fio clones take turns in virtual-time order
//     (sim.RunByClock), on the default device a calls arm keeps its written
//     order; no wall clock, map order or host state reaches the output.
//   - An arm's time runs from its workload's start (after setup made the
//     files and, on a device, read the ones not cold into the page cache)
//     to the latest clock of its threads; where the time went is the time
//     model's breakdown over the same span.
//   - Exec returns a *MalformedError for a command that cannot run as
//     written (naming file and line) and an *AssertionError for a failed
//     expect; go test and `iosim run` both stop the file there.
//   - RunFile reads a file exactly as datadriven does (the test keeps it so)
//     and rewrites it exactly as datadriven's -rewrite would.
//   - Scenario.Exec's command table is the seam for more commands (a crash
//     command).
package scenarios

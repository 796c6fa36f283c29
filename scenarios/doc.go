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
//     setup, in one goroutine (threads and fio clones take turns), with the
//     kernel's virtual clock; no wall clock, map order or host state reaches
//     the output.
//   - Exec returns a *MalformedError for a command that cannot run as
//     written (naming file and line) and an *AssertionError for a failed
//     expect; go test and `iosim run` both stop the file there.
//   - RunFile reads a file exactly as datadriven does (the test keeps it so)
//     and rewrites it exactly as datadriven's -rewrite would.
//   - Virtual time is the kernel's clock today. Three functions are the
//     seams for what comes next: deviceOptions (a device profile as kernel
//     options), fio.Now (the clock latencies are read from) and Scenario.Exec's
//     command table (a crash command).
package scenarios

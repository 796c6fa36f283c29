// Package crash explores what a power loss at any moment of a program's run
// can leave on disk, under persistence models of real file systems, and
// reports what the program relied on that a crash breaks.
//
// # Crash points and states
//
// An Explorer sits on the syscall seam (it is a sim.Handler) or wraps the afero
// face, and sees every call of the program. A crash point follows every call
// that changed what could become durable (vfs's Seq moved), that synced, or
// that wrote to standard output (Options.EveryCall: every call). At a point it
// takes vfs's Pending list and groups it into units: the changes of one call of
// one kind on one inode (the blocks a write dirtied, a size change, a
// namespace operation). A state is a choice per unit (kept, lost, torn at
// sector boundaries, written in part, or for ALICE's model a split rename),
// closed under the model's rules (see Model). A state is held as its
// deviations from everything kept, sorted by unit, and closing one visits
// only the units a rule can change (the deviations, the other units of their
// inodes, the units after a journal cut): a state of depth 1 costs the same
// whatever the number of changes in flight.
// The states of a point are: everything kept; only the durable state; every
// combination of at most Options.Depth deviations from everything kept; and
// Options.Sample random ones. States are deduplicated twice: by their closed
// deviations at the point (built once whatever the model), and by a hash of
// their content, of what the program had been promised and had announced,
// and of which promises a change in flight has not superseded at the point
// (checked once across points that check the same promises).
//
// # Building states
//
// A point takes one vfs.CrashSnapshot. Options.Workers goroutines (GOMAXPROCS
// by default) each step one vfs.CrashState through a contiguous run of the
// point's distinct states, model by model and by number of deviations (at
// depth 1 consecutive states differ in one or two units, journal cuts in a
// call; a step sets only the units that deviate in either state), and a
// walker beside
// it reads only the records and entries a step can alter
// (vfs.CrashState.Parts): it keeps the reachable names, the content hash (a
// sum over names, so the same whatever the order the state was reached) and
// the built-in checks' findings, re-evaluating only the promises on what
// changed. Verdicts are then taken in enumeration order, so the report does
// not depend on the number of goroutines. A checker other than the built-in
// ones sees the states one at a time, in order; State.FS builds the whole file
// system only when it asks (an external checker does).
//
// # Models
//
// Models() lists the persistence models, each a table of rules with their
// sources (iosim crash --models prints them): posix, ext4-ordered,
// ext4-writeback, ext4-journal, alice, xfs and btrfs; alice, which no file
// system implements, is explored only when named. Every model keeps what
// vfs made durable. vfs's own rules are ext4's where ext4 is stronger than
// POSIX (metadata operations commit in order: a directory fsync also commits
// the operations made before it), so posix, alice and btrfs, which order no
// metadata operations, here never lose what such a commit made durable:
// posix and alice are as weak as POSIX allows above that floor.
//
// # Checks and reports
//
// Checkers (Durability, AtomicReplace, Fsck, External in ALICE's convention,
// or any Checker) see each distinct state once. What fails is grouped into
// Findings, one per cause, as ALICE groups its vulnerabilities (see Cause):
// the property the program relied on (ordering of two calls, atomicity of
// one, durability, or the consistency of the state between two calls) and
// the calls involved, by static identity (a Go workload's source line; a
// trace's call and path), so a pattern repeated is one finding. A failing
// state's cause is the deviations the explorer chose for it (the calls lost,
// torn or split, before the model's rules close them), or the smallest
// failing deviation within them; each failing state is counted in exactly one
// finding, which lists its models, checks, what they found, its crash points,
// a fix where the pattern is known, and the IDs of example states.
//
// A state's ID (StateID, "POINT.K") is its crash point's call index and its
// number among the distinct states met there; the same input, options and
// seed give the same IDs. Options.Only and Visit give one state by its ID
// without checking any (iosim crash --state ID --out DIR), Options.Failed
// every failing state (--keep-failed DIR); WriteState writes one as an
// external checker gets it.
//
// Report fields are deterministic for the same input, options and seed, but
// for StatesPerSecond and Seconds. Options.Shard/Shards split the states
// (every shard enumerates all of them and builds its share); Merge combines
// shard reports into the whole run's (a shard's report lists its failing
// states by deviation before grouping, so that the union groups as one run
// does: the same findings, states and examples), but for
// DistinctStates, Checked, Unchecked and Failed, which count a content met at several
// points once per shard that checks it.
//
// A state that may hold bytes the workload did not show (Explorer.Unknown: a
// replayed write whose data strace's -s cut) is given to no check: it is
// counted in Report.Unchecked.
//
// Entry points: ExploreFunc for Go workloads (package crashtest wraps it for
// tests), NewExplorer for a caller's own stack, and replay.Explore for strace
// files.
//
// # Limits
//
// The explorer keeps the recorded calls from the oldest one with a change
// still in flight (and those a live promise names), the renames and
// truncations a later state can still depend on, and the verdicts of the
// current version of the promises (at most 1<<20): what it keeps stays flat
// over a long run that syncs now and then. vfs itself keeps every change a
// crash could lose until a sync (of removed files too), so a run that never
// syncs grows in vfs. Fsck finds nothing in a state vfs built (vfs makes
// whole records and counts links from the names it finds). Promises of msync(MS_SYNC) are not recorded
// (msync commits the journal for the ext4 models); an O_SYNC write through the
// afero face commits without a promise; Go workloads' process exits are not
// seen.
package crash

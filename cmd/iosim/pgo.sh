#!/usr/bin/env bash
# Rewrites cmd/iosim/default.pgo, the CPU profile that the go command applies to
# every build of iosim (profile-guided optimization): a 500,000-line replay
# with --verify, which spends its time in the parser and the model, merged with
# the parser's benchmark over every bundled trace, which has the line shapes
# the replay's one trace lacks. Run it from anywhere after changing hot code;
# a stale profile still builds, it only helps less.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go test ./replay -run '^$' -bench 'ReplayVerify$' -benchtime 20x -cpuprofile "$tmp/replay.prof" -o "$tmp/replay.test" >/dev/null
go test ./strace -run '^$' -bench 'Parse/parse$' -benchtime 100x -cpuprofile "$tmp/parse.prof" -o "$tmp/strace.test" >/dev/null
go tool pprof -proto "$tmp/replay.prof" "$tmp/parse.prof" >cmd/iosim/default.pgo
echo "wrote cmd/iosim/default.pgo"

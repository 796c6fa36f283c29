# ALICE convention: relative_checker.sh CRASHED_DIR STDOUT_FILE. Once the
# program has printed "done", file1 must hold the new content.
D=$1 O=$2
if grep -q done "$O"; then
	got=$(cat "$D/file1" 2>/dev/null)
	[ "$got" = world ] || { echo "announced done, but file1 holds '$got'"; exit 1; }
fi
exit 0

#!/bin/sh
# sqlite_checker.py with the sqlite3 shell, for speed: argv[1] the crashed
# directory, argv[2] what the program printed. Consistent: integrity_check
# is ok and the table holds every announced row (and at most one more), in
# order from 0.
announced=$(grep -c committed "$2")
out=$(sqlite3 "$1/test.db" 'PRAGMA integrity_check; SELECT count(*), coalesce(max(k), -1), coalesce(min(k), 0) FROM t;' 2>&1) || { echo "database error: $out"; exit 1; }
ok=$(echo "$out" | head -n 1)
[ "$ok" = ok ] || { echo "integrity_check: $out"; exit 1; }
IFS='|' read -r n max min <<EOT
$(echo "$out" | tail -n 1)
EOT
if [ "$min" != 0 ] || [ "$max" != $((n - 1)) ] || [ "$n" -lt "$announced" ] || [ "$n" -gt $((announced + 1)) ]; then
	echo "$announced commits announced, rows 0..$max ($n)"
	exit 1
fi

"""ALICE-convention checker of sqlite_workload.py: argv[1] the crashed
directory, argv[2] what the program printed. Consistent: PRAGMA
integrity_check is ok and the table holds every announced row (and at most
one more, the transaction in flight), in order."""
import os
import sqlite3
import sys

d, out = sys.argv[1], open(sys.argv[2], "rb").read()
announced = out.count(b"committed")
try:
    con = sqlite3.connect(os.path.join(d, "test.db"))
    ok = con.execute("PRAGMA integrity_check").fetchone()[0]
    rows = [r[0] for r in con.execute("SELECT k FROM t ORDER BY k")]
except sqlite3.DatabaseError as e:
    print("database error: %s" % e)
    sys.exit(1)
if ok != "ok":
    print("integrity_check: %s" % ok)
    sys.exit(1)
if rows != list(range(len(rows))) or not announced <= len(rows) <= announced + 1:
    print("%d commits announced, rows %s" % (announced, rows))
    sys.exit(1)

"""Three transactions on an SQLite database in rollback-journal (DELETE) mode,
or the journal mode argv[3] names, each announced on stdout once COMMIT
returns. argv: directory, synchronous[, journal mode]."""
import os
import sqlite3
import sys

d, sync = sys.argv[1], sys.argv[2]
mode = sys.argv[3] if len(sys.argv) > 3 else "DELETE"
con = sqlite3.connect(os.path.join(d, "test.db"), isolation_level=None)
con.execute("PRAGMA journal_mode=" + mode)
con.execute("PRAGMA synchronous=" + sync)
for i in range(3):
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (?, ?)", (i, "row %d" % i))
    con.execute("COMMIT")
    os.write(1, b"committed %d\n" % i)
con.close()

"""Three transactions on an SQLite database in rollback-journal (DELETE) mode,
each announced on stdout once COMMIT returns. argv: directory, synchronous."""
import os
import sqlite3
import sys

d, sync = sys.argv[1], sys.argv[2]
con = sqlite3.connect(os.path.join(d, "test.db"), isolation_level=None)
con.execute("PRAGMA journal_mode=DELETE")
con.execute("PRAGMA synchronous=" + sync)
for i in range(3):
    con.execute("BEGIN")
    con.execute("INSERT INTO t VALUES (?, ?)", (i, "row %d" % i))
    con.execute("COMMIT")
    os.write(1, b"committed %d\n" % i)
con.close()

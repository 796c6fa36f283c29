#!/usr/bin/python3
"""A crash checker for iosim in ALICE's convention: sqlite_check.py DIR STDOUT.

DIR holds the crashed state of the workload's directory, STDOUT what the
program had written to its standard output before the crash. The database
DIR/db must pass PRAGMA integrity_check and hold every row whose commit the
program announced ("committed N" on stdout). Exit 0: consistent.
"""
import sqlite3
import sys


def check(d, out):
    """Returns None when the state is consistent, else the reason."""
    with open(out) as f:
        announced = [int(l.split()[1]) for l in f if l.startswith("committed ")]
    try:
        con = sqlite3.connect(d + "/db")
        try:
            r = con.execute("PRAGMA integrity_check").fetchall()
            if r != [("ok",)]:
                return "integrity_check: %r" % (r,)
            if not announced:
                return None
            have = {k for (k,) in con.execute("SELECT k FROM t")}
        finally:
            con.close()
    except sqlite3.Error as e:
        if not announced:
            return None  # nothing was promised
        return "sqlite: %s" % e
    missing = [k for k in announced if k not in have]
    if missing:
        return "announced rows missing: %s" % missing[:10]
    return None


if __name__ == "__main__":
    why = check(sys.argv[1], sys.argv[2])
    if why:
        print(why)
        sys.exit(1)

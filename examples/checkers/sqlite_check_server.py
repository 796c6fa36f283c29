#!/usr/bin/python3
"""sqlite_check.py's check as an iosim checker server (--checker-server).

Reads one "DIR STDOUT" line per state on stdin and answers one line on
stdout: "ok", or "fail: REASON". Python and the sqlite3 module start once.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sqlite_check import check  # noqa: E402

for line in sys.stdin:
    d, out = line.rstrip("\n").split(" ", 1)
    why = check(d, out)
    sys.stdout.write("ok\n" if why is None else "fail: %s\n" % why.replace("\n", " "))
    sys.stdout.flush()

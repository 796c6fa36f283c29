"""ALICE-convention checker of update.py: argv[1] the crashed directory,
argv[2] what the program printed. Consistent: the config holds the old or the
new content (the new one once "Updated" was printed; a missing config with the
temp file complete counts as recoverable), and the links exist together."""
import os
import sys

d, out = sys.argv[1], open(sys.argv[2], "rb").read()
old, new = b"old " * 1000, b"new!" * 1500

def read(name):
    try:
        with open(os.path.join(d, name), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None

cfg = read("config")
if cfg is None and read("config.tmp") == new:
    cfg = new
bad = []
if cfg not in (old, new):
    bad.append("config is neither old nor new (%s bytes)" % (None if cfg is None else len(cfg)))
elif b"Updated" in out and cfg != new:
    bad.append("printed Updated but config is the old one")
if (read("link1") is None) != (read("link2") is None):
    bad.append("one link without the other")
if bad:
    print("; ".join(bad))
    sys.exit(1)

# update8k_checker.py CRASHED_DIR STDOUT_FILE: update8k replaces DIR/data
# (8192 'o') with 8192 bytes of 'a'..'z' repeated: after a crash DIR/data
# holds one or the other, whole.
import sys

try:
    with open(sys.argv[1] + "/data", "rb") as f:
        got = f.read()
except OSError as e:
    print("data:", e.strerror)
    sys.exit(1)
old = b"o" * 8192
new = bytes(ord("a") + i % 26 for i in range(8192))
if got not in (old, new):
    print("data holds neither the old content nor the new: %d bytes, %r..." % (len(got), got[:40]))
    sys.exit(1)

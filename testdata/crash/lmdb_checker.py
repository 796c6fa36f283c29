"""ALICE-convention checker of lmdb_workload.py: argv[1] the crashed
directory, argv[2] what the program printed. Consistent: the environment
opens, every key reads back whole, and the keys are k0..kN-1 with every
announced one present (at most one more)."""
import sys

import lmdb

d, out = sys.argv[1], open(sys.argv[2], "rb").read()
announced = out.count(b"committed")
try:
    env = lmdb.open(d, readonly=True, lock=False)
    with env.begin() as txn:
        items = list(txn.cursor())
except lmdb.Error as e:
    print("lmdb error: %s" % e)
    sys.exit(1)
keys = [k for k, _ in items]
if keys != [b"k%d" % i for i in range(len(keys))] or any(v != b"value %d " % i * 200 for i, (_, v) in enumerate(items)):
    print("keys %s or values wrong" % keys)
    sys.exit(1)
if not announced <= len(keys) <= announced + 1:
    print("%d commits announced, %d keys" % (announced, len(keys)))
    sys.exit(1)

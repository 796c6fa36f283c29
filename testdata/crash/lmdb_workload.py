"""Three LMDB write transactions, each announced on stdout once commit
returns. argv: directory, "sync" (the default durability) or "nosync"
(MDB_NOSYNC: no flush at commit; the map is written with write(2), not
mmap, as py-lmdb's default writemap=False does)."""
import os
import sys

import lmdb

d, mode = sys.argv[1], sys.argv[2]
env = lmdb.open(d, map_size=1 << 20, sync=(mode == "sync"), metasync=(mode == "sync"), lock=False)
for i in range(3):
    with env.begin(write=True) as txn:
        txn.put(b"k%d" % i, b"value %d " % i * 200)
    os.write(1, b"committed %d\n" % i)
env.close()

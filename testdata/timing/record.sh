#!/bin/sh
# Records the -T traces of testdata/timing. Run as root from this directory:
#   sh record.sh OUTDIR
# OUTDIR must be on the file system the profile was calibrated on.
set -eu
out=$(cd "$1" && pwd)
here=$(pwd)
gcc -O2 -o "$out/synctool" "$here/synctool.c"
cd "$out"
rec() { name=$1; shift; rm -f f; sync; chrt -f 10 strace -f -T -tt -o "$out/$name.strace" "$@"; }
rec dd.osync-4k      dd if=/dev/zero of=f bs=4k count=256 oflag=sync
rec dd.dsync-64k     dd if=/dev/zero of=f bs=64k count=64 oflag=dsync
rec dd.direct-1m     dd if=/dev/zero of=f bs=1M count=8 oflag=direct
rec dd.direct-64k    dd if=/dev/zero of=f bs=64k count=64 oflag=direct
rec dd.fsync-1m      dd if=/dev/zero of=f bs=1M count=8 conv=fsync
rec dd.fdatasync-256k dd if=/dev/zero of=f bs=256k count=16 conv=fdatasync
rec loop.fsync       ./synctool fsync 100 log
rec loop.fdatasync   ./synctool fdatasync 100 log
rec loop.overwrite   ./synctool overwrite 100 data
rec directread       ./synctool directread 200 table
rm -f db.sqlite
sqlite3 db.sqlite 'create table t(k integer primary key, v text);'
i=0; : > ins.sql
while [ $i -lt 40 ]; do echo "insert into t(v) values(hex(randomblob(100)));" >> ins.sql; i=$((i+1)); done
rec sqlite.commits   sqlite3 db.sqlite ".read ins.sql"
rm -f f log data table synctool

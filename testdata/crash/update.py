"""The classic configuration update, unsafe or safe (argv[2]).

unsafe: write a temp file, rename it over the real one without fsync, print
"Updated", then create two links that must appear together.
safe: write the temp file, fsync it, rename, fsync the directory, print.
"""
import os
import sys

d, mode = sys.argv[1], sys.argv[2]
tmp, cfg = os.path.join(d, "config.tmp"), os.path.join(d, "config")
fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"new!" * 1500)
if mode == "safe":
    os.fsync(fd)
os.close(fd)
os.rename(tmp, cfg)
if mode == "safe":
    dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(dfd)
    os.close(dfd)
os.write(1, b"Updated\n")
if mode == "unsafe":
    os.link(cfg, os.path.join(d, "link1"))
    os.link(cfg, os.path.join(d, "link2"))

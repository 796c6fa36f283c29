import os, sys
safe = sys.argv[1] == "safe"
fd = os.open("file1.tmp", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.write(fd, b"world")
if safe:
    os.fsync(fd)
os.close(fd)
os.rename("file1.tmp", "file1")
if safe:
    d = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    os.fsync(d)
    os.close(d)
os.write(1, b"the configuration was updated: done\n")  # 36 bytes: more than strace -s 32 shows

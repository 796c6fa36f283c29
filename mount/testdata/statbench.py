import os, sys, time
d = sys.argv[1]
p = os.path.join(d, "f")
open(p, "w").write("x")
n = 20000
t = time.perf_counter()
for _ in range(n): os.stat(p)
s = (time.perf_counter() - t) / n * 1e6
t = time.perf_counter()
for _ in range(n): os.close(os.open(p, os.O_RDONLY))
o = (time.perf_counter() - t) / n * 1e6
print(f"{d}: stat {s:.1f} us, open+close {o:.1f} us")

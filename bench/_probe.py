import sys; sys.path.insert(0, '.')
import kernels
from kernels.timing import measure, relative_error, scan_error
big = 1 << 28
k = kernels.get("sat_1r1w_lookback"); i = k.make_inputs(big, "float32", 1)
for w in (4, 8, 16):
    for r in (2, 4, 8):
        if w * r <= 64:
            print("sat lookback", w, r, round(measure(k, i, repeats=10, warps=w, rows=r)["median_ms"], 4))
print("sat err", relative_error(k, i)); del i
k = kernels.get("prefix_sums_lookback"); i = k.make_inputs(big, "float32", 2)
for t in (128, 256, 512, 1024):
    for it in (4, 8, 16, 32):
        if t * it <= 8192:
            print("scan", t, it, round(measure(k, i, repeats=10, threads=t, items=it)["median_ms"], 4))
print("scan err", scan_error(k, i))

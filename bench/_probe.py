import sys; sys.path.insert(0, '.')
import kernels
from kernels.timing import measure, relative_error
k = kernels.get("sat_1r1w_lookback"); i = k.make_inputs(1 << 28, "float32", 1)
for p in k.space.points():
    print("sat lookback", p, round(measure(k, i, repeats=10, **p)["median_ms"], 4), flush=True)

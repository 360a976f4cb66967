import sys, json, time, numpy as np, cupy as cp
from pathlib import Path
from memtune import kernels
from memtune.kernels.timing import time_call, measure
from memtune.kernels import resources
from cupy._core import _accelerator

inc = Path(kernels.__file__).parent
mod = cp.RawModule(code=open(Path(__file__).parent / "x_scan.cu").read(), options=("-std=c++17", f"-I{inc}"))
res = {}
def med(ts): return float(np.median(ts))
sizes = [int(s) for s in sys.argv[1].split(",")]
for dt, S in (("float32", "f32"), ("float64", "f64")):
    for n in sizes:
        a = cp.random.standard_normal(n, dtype=cp.float64).astype(dt)
        b = cp.empty_like(a)
        ref = np.cumsum(cp.asnumpy(a).astype(np.float64))
        scale = np.abs(ref).max() + 1
        r = {}
        r["copy"] = med(time_call(lambda: b.__setitem__(slice(None), a)))
        counter = cp.zeros(1, np.uint32); status = cp.zeros(n // 256 * 2 + 64, np.uint64)
        ep = [0]
        for q in (8, 16, 32):
            for t in (128, 256, 512):
                if t * q > 4096: continue
                tile = t * q * (4 if dt == "float32" else 2)
                grid = (n + tile - 1) // tile
                for m, pre in ((0, "reset"), (2, "reset"), (3, "win1"), (3, "win2"), (3, "win4")):
                    f = mod.get_function(f"{pre}_{S}_q{q}_m{m}")
                    counter.fill(0)
                    def run():
                        ep[0] += 1
                        if pre == "early": counter.fill(0)
                        f((grid,), (t,), (a, b, np.int64(n), counter, status, np.uint32(ep[0])))
                    run(); cp.cuda.runtime.deviceSynchronize()
                    err = float(np.abs(cp.asnumpy(b) - ref).max() / scale) if m != 2 else -1
                    r[f"{pre} m{m} t{t} q{q}"] = (med(time_call(run)), err)
        k = kernels.get("prefix_sums_lookback")
        inp = k.make_inputs(n, dt, 2)
        for q in (8, 16, 32):
            for t in (128, 256, 512):
                if t * q > 4096: continue
                r[f"ours t{t} q{q}"] = measure(k, inp, threads=t, vectors=q)["median_ms"]
        del inp
        c = r["copy"]
        print(dt, n, "copy", c, flush=True)
        for key, val in sorted(r.items(), key=lambda kv: kv[1][0] if isinstance(kv[1], tuple) else kv[1]):
            ms = val[0] if isinstance(val, tuple) else val
            print(f"  {key:24s} {ms:.4f} ms {ms / c:.3f}x", val[1] if isinstance(val, tuple) else "", flush=True)
        res[f"{dt}:{n}"] = r
        del a, b
import os
Path(os.environ.get("OUT", "."), "x_scan.json").write_text(json.dumps(res, indent=1))

"""#28 experiment: the pipelined look-back scan (pipeline.cu, variant 2; variant 1 is pipeline_v1.json) against the shipped one and the copy.
Usage: python pipeline.py SIZES_F32 SIZES_F64   (comma-separated exponents); writes $OUT/pipeline.json."""
import json, os, sys
from pathlib import Path
import numpy as np, cupy as cp
from memtune import kernels
from memtune.kernels.timing import time_call, measure
from cupy._core import _accelerator

inc = Path(kernels.__file__).parent
mod = cp.RawModule(code=(Path(__file__).parent / "pipeline.cu").read_text(), options=("-std=c++17", f"-I{inc}"))
sms = cp.cuda.Device().attributes["MultiProcessorCount"]
med = lambda ts: float(np.median(ts))
res = {"device": cp.cuda.runtime.getDeviceProperties(0)["name"].decode(), "sms": sms}
counter = cp.zeros(1, np.uint32)
epoch = [0]
for dt, S, exps in (("float32", "f32", sys.argv[1]), ("float64", "f64", sys.argv[2])):
    V = 16 // np.dtype(dt).itemsize
    for e in [int(x) for x in exps.split(",")]:
        n = 2 ** e + 12345 * (e < 28)        # a tail tile, except at the largest size
        a = cp.random.standard_normal(n, dtype=cp.float64).astype(dt)
        b = cp.empty_like(a)
        ref = np.cumsum(cp.asnumpy(a).astype(np.float64)); scale = float(np.abs(ref).max() + 1)
        r = {"copy": med(time_call(lambda: b.__setitem__(slice(None), a)))}
        status = cp.zeros(n // (128 * 4 * V) * 2 + 64, np.uint64)
        for q in (4, 8, 16):
            for t in (128, 256, 512):
                if t * q > 4096 or t * q < 512: continue
                tiles = -(-n // (t * q * V))
                f = mod.get_function(f"pipe2_{S}_q{q}")
                for k in (1, 2, 3, 4, 0):
                    grid = min(tiles, k * sms) if k else tiles
                    def run():
                        epoch[0] += 1
                        f((grid,), (t,), (a, b, np.int64(n), np.int64(tiles), counter, status, np.uint32(epoch[0])))
                    run(); cp.cuda.runtime.deviceSynchronize()
                    err = float(np.abs(cp.asnumpy(b) - ref).max() / scale)
                    ok = int(counter.get()[0]) == 0
                    r[f"pipe2 t{t} q{q} k{k}"] = {"ms": med(time_call(run)), "err": err, "counter0": ok}
        old_acc = _accelerator.get_routine_accelerators()
        _accelerator.set_routine_accelerators(["cub"])
        cp.cumsum(a, out=b); cp.cuda.runtime.deviceSynchronize()
        r["cub_cumsum"] = {"ms": med(time_call(lambda: cp.cumsum(a, out=b))),
                           "err": float(np.abs(cp.asnumpy(b) - ref).max() / scale), "counter0": True}
        _accelerator.set_routine_accelerators(old_acc)
        k = kernels.get("prefix_sums_lookback")
        inp = k.make_inputs(n, dt, 2)
        for q in (8, 16, 32):
            for t in (128, 256, 512):
                if t * q > 4096: continue
                r[f"shipped t{t} q{q}"] = {"ms": measure(k, inp, threads=t, vectors=q)["median_ms"]}
        del inp
        c = r["copy"]
        rows = sorted(((kk, v) for kk, v in r.items() if kk != "copy"), key=lambda kv: kv[1]["ms"])
        print(dt, n, "copy", round(c, 4), flush=True)
        best_ship = min(v["ms"] for kk, v in rows if kk.startswith("shipped"))
        best_pipe = min(v["ms"] for kk, v in rows if kk.startswith("pipe2 "))
        print(f"  best shipped {best_ship / c:.3f}x  best pipe2 {best_pipe / c:.3f}x  cub {r['cub_cumsum']['ms'] / c:.3f}x err {r['cub_cumsum']['err']:.2g}", flush=True)
        for kk, v in rows[:8]:
            print(f"  {kk:28s} {v['ms']:.4f} ms {v['ms'] / c:.3f}x", v.get("err", ""), v.get("counter0", ""), flush=True)
        bad = [kk for kk, v in rows if kk.startswith("pipe2 ") and (v["err"] > 1e-4 or not v["counter0"])]
        print("  wrong:", bad, flush=True)
        res[f"{dt}:{n}"] = r
        del a, b, status
Path(os.environ.get("OUT", "."), "pipeline.json").write_text(json.dumps(res, indent=1))

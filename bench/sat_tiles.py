"""Summed area tables in two-dimensional tiles against strips, the tuned kernel and the copy, in one run.

    python bench/sat_tiles.py --out bench/results/h100/sat_tiles

Every tile shape of ``shaped.TILE_SHAPES`` and every strip shape of ``shaped.STRIP_SHAPES`` at each case,
checked against a float64 SAT taken with CuPy, timed as memtune.run makes them once warm (CUDA events, a
cold L2 and the GPU held busy before each repeat, medians of ``--repeats``), beside a device copy of the
input and, for squares, memtune.run's tuned SAT. Each time is written beside the physical model's. Writes
sat_tiles.json.
"""
from __future__ import annotations

import json

import numpy as np
from common import setup
from shapes import timed

import memtune
from memtune.kernels.timing import finished_or_exit as finished
from memtune.tuner.shaped_tables import reference

# (images, h, w, input dtype, output dtype, mode)
CASES = [(1, 256, 256, "float32", "float32", "sat"), (1, 512, 512, "float32", "float32", "sat"),
         (1, 1024, 1024, "float32", "float32", "sat"), (1, 2048, 2048, "float32", "float32", "sat"),
         (1, 4096, 4096, "float32", "float32", "sat"), (1, 8192, 8192, "float32", "float32", "sat"),
         (1, 16384, 16384, "float32", "float32", "sat"), (1, 1024, 1024, "float64", "float64", "sat"),
         (1, 4096, 4096, "float64", "float64", "sat"), (1, 16384, 16384, "float64", "float64", "sat"),
         (1, 1080, 1920, "float32", "float32", "sat"), (1, 4099, 4097, "float32", "float32", "sat"),
         (1, 2000, 8000, "float32", "float32", "sat"), (1, 3000, 5000, "float32", "float32", "sat"),
         (16, 512, 512, "float32", "float32", "sat"), (1, 5000, 3000, "float64", "float64", "sat"),
         (1, 1080, 1920, "uint8", "int32", "satpad"), (1, 4096, 4096, "uint8", "int32", "sat"),
         (3, 333, 777, "uint16", "float64", "satpad")]


def error(got, want) -> float:
    import cupy as cp

    if want.dtype.kind == "i":
        return float(cp.abs(got.astype("int64") - want).max())
    return float(cp.abs(got.astype("float64") - want).max() / max(float(cp.abs(want).max()), 1e-300))


def main() -> int:
    args, out = setup(__doc__, repeats=15, extra=lambda p: (
        p.add_argument("--kernels", default=".*", metavar="REGEX", help="only kernels whose name matches"),
        p.add_argument("--tag", default="", help="appended to the output file's name"),
        p.add_argument("--cases", default=".*", metavar="REGEX", help="only cases whose 'images x h x w src dst mode' matches")))
    import re

    import cupy as cp
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import probe, shaped
    from memtune.kernels.timing import Device
    from memtune.tuner import load_model

    device = Device.current().name
    machine = load_model(device).machine
    plans = {}
    cases = [c for c in CASES if re.search(args.cases, "{}x{}x{} {} {} {}".format(*c))]
    for images, h, w, src, dst, mode in cases:
        for shape in shaped.TILE_SHAPES:
            plans[(images, h, w, src, dst, mode, "tiles", shape)] = shaped.tiles_plan(images, h, w, src, dst, mode, *shape)
        for shape in shaped.STRIP_SHAPES:
            plans[(images, h, w, src, dst, mode, "strips", shape)] = shaped.strips_plan(images, h, w, src, dst, mode, *shape)
    plans = {k: p for k, p in plans.items() if re.search(args.kernels, p.launches[-1].function)}
    names = {("shaped.cu", p.launches[-1].function) for p in plans.values()}
    resources = probe.kernel_resources(names)        # compiled in threads, before any timing
    print(f"{len(names)} kernels compiled", flush=True)
    rows, rng = [], np.random.default_rng(7)
    for images, h, w, src, dst, mode in cases:
        shape = (images, h, w)
        host = rng.integers(0, 256, size=shape).astype(src) if np.dtype(src).kind in "iu" else rng.random(shape).astype(src)
        a = cp.asarray(host)
        want = reference(a, dst, mode)
        outarr = cp.empty(want.shape, dst)
        copy = cp.empty_like(a)
        case = {"shape": list(shape), "src": src, "dst": dst, "mode": mode,
                "copy_ms": timed(lambda: cp.copyto(copy, a), args.repeats)}
        if images == 1 and h == w and src == dst and mode == "sat" and src in ("float32", "float64"):
            square = a[0]
            case["tuned_ms"] = timed(lambda: memtune.sat(square), args.repeats)
        for key, plan in plans.items():
            if key[:6] != (images, h, w, src, dst, mode):
                continue
            outarr.fill(0)
            finished(lambda: shaped.execute(plan, {"a": a, "out": outarr}), plan.launches[-1].function)
            err = error(outarr, want)
            ms = timed(lambda: shaped.execute(plan, {"a": a, "out": outarr}), args.repeats)
            fn = plan.launches[-1].function
            rows.append({**case, "kind": key[6], "shape_params": list(key[7]), "kernel": fn, "ms": ms, "error": err,
                         "registers": resources[fn].registers,
                         "predicted_ms": L.run_time_ns(plan, machine) * 1e-6})
            tuned = f", tuned {case['tuned_ms']:.4f}" if "tuned_ms" in case else ""
            print(f"{str(shape):18s} {src}->{dst} {mode:6s} {key[6]:6s} {str(key[7]):12s} {ms:.4f} ms "
                  f"({ms / case['copy_ms']:.2f}x copy{tuned}) "
                  f"err {err:.1e} regs {resources[fn].registers} model {rows[-1]['predicted_ms']:.4f}", flush=True)
    (out / f"sat_tiles{args.tag}.json").write_text(json.dumps({"device": device, "repeats": args.repeats, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Column prefix sums (cumsum down an axis with elements after it): strips against two-dimensional tiles.

    python bench/column_prefix.py --out bench/results/h100

Every strip shape and every tile shape at each request, timed (CUDA events, cold L2, medians of
``--repeats``) and checked against CuPy, beside the physical model's time of each and the copy of
the input. Writes column_prefix.json.
"""
from __future__ import annotations

import json

import numpy as np
from common import setup
from shapes import timed

# (images, h, w, input dtype, sum dtype): tall, wide, square, batched, integer
CASES = [(1, 10007, 1000, "float32", "float32"), (64, 1024, 1024, "float32", "float32"), (1, 65536, 64, "float32", "float32"),
         (1, 4096, 4096, "float32", "float32"), (1, 256, 65536, "float32", "float32"), (8, 1000, 1000, "int32", "int64"),
         (1, 3001, 5, "uint8", "uint64"), (3, 2000, 3000, "float64", "float64")]


def main() -> int:
    args, out = setup(__doc__, repeats=15)
    import cupy as cp

    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped
    from memtune.kernels.timing import Device
    from memtune.tuner import load_model

    device = Device.current().name
    machine = load_model(device).machine
    rows = []
    for images, h, w, src, dst in CASES:
        rng = np.random.default_rng(5)
        host = rng.integers(0, 100, size=(images, h, w)).astype(src)
        a = cp.asarray(host)
        expected = cp.cumsum(a, axis=1, dtype=dst)
        result = cp.empty((images, h, w), dst)
        copy = cp.empty_like(a)
        row = {"shape": [images, h, w], "src": src, "dst": dst,
               "copy_ms": timed(lambda: cp.copyto(copy, a), args.repeats), "ways": []}
        for kind in ("strips", "tiles"):
            choice = shaped.ShapeChoice(kind, images, h, w, src, dst, "cols")
            for params in choice.points():
                plan = choice.plan(params)
                got = shaped.execute(plan, {"a": a, "out": result})
                ok = bool(cp.allclose(got, expected, rtol=1e-5, atol=1e-3)) if dst.startswith("float") else \
                    bool((got == expected).all())
                ms = timed(lambda: shaped.execute(plan, {"a": a, "out": result}), args.repeats)
                predicted = L.run_time_ns(plan, machine) * 1e-6
                row["ways"].append({"kind": kind, "params": params, "ms": ms, "predicted_ms": predicted, "correct": ok})
                print(f"{images}x{h}x{w} {src}->{dst} {kind} {params}: {ms:.4f} ms (model {predicted:.4f}, "
                      f"copy {row['copy_ms']:.4f}) {'ok' if ok else 'WRONG'}", flush=True)
        rows.append(row)
    (out / "column_prefix.json").write_text(json.dumps({"device": device, "repeats": args.repeats, "rows": rows},
                                                       indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

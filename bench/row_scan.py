"""Prefix sums along the last axis: the row scan (each row its own run of look-back tiles of 16-byte loads)
against the segmented scan (rows packed end to end into tiles of scalar loads), for every input and sum type.

    python bench/row_scan.py --out bench/results/h100

At each request, every row-scan block that fits the rows and the segmented scan are timed (CUDA events,
cold L2, medians of ``--repeats``) and checked against CuPy, beside the input's device copy and its
conversion to the sum type (CuPy's elementwise copy into the output: the traffic floor of a scan that
widens). Writes row_scan.json; memtune.shapes routes each pair by it.
"""
from __future__ import annotations

import json

import numpy as np
from common import setup
from shapes import timed

# (rows, length): one long vector, rows of a few tiles each, rows of a few hundred tiles
LAYOUTS = [(1, 1 << 24), (4096, 4097), (3, 4_194_305)]


def pairs() -> list[tuple[str, str]]:
    from memtune.kernels import shaped

    return [(src, dst) for src, sums in shaped.SUMS.items() for dst in sums]


def measure(rows: int, length: int, src: str, dst: str, repeats: int) -> dict:
    import cupy as cp

    from memtune.kernels import shaped

    rng = np.random.default_rng(7)
    a = cp.asarray(rng.integers(0, 100, size=rows * length).astype(src))
    expected = cp.cumsum(a.reshape(rows, length), axis=1, dtype=dst).ravel()
    out = cp.empty(rows * length, dst)
    sizes = (np.dtype(src).itemsize, np.dtype(dst).itemsize)
    ways = {"segmented": shaped.scan_plan(rows * length, length, src, dst, False)}
    for t, v in shaped.row_scan_blocks(length, rows, *sizes):
        ways[f"t{t}_q{v}"] = shaped.row_scan_plan(rows * length, length, src, dst, t, v)
    times = {}
    for name, plan in ways.items():
        got = shaped.execute(plan, {"a": a, "out": out})
        if not bool(cp.allclose(got, expected, rtol=1e-4 if dst == "float32" else 1e-9)):
            raise SystemExit(f"row_scan.py: {name} is wrong at {rows} x {length} {src} -> {dst}")
        times[name] = timed(lambda: shaped.execute(plan, {"a": a, "out": out}), repeats)
    copy, converted = cp.empty_like(a), cp.empty(rows * length, dst)
    rows_ms = {k: v for k, v in times.items() if k != "segmented"}
    best = min(rows_ms, key=rows_ms.get) if rows_ms else None
    return {"rows": rows, "length": length, "src": src, "dst": dst, "ms": times,
            "segmented_ms": times["segmented"], "best_row_scan": best, "best_row_scan_ms": rows_ms.get(best),
            "copy_ms": timed(lambda: cp.copyto(copy, a), repeats),
            "convert_ms": timed(lambda: cp.copyto(converted, a, casting="unsafe"), repeats)}


def main() -> int:
    args, out = setup(__doc__, repeats=15)
    from memtune.kernels.timing import Device

    results = []
    for rows, length in LAYOUTS:
        for src, dst in pairs():
            row = measure(rows, length, src, dst, args.repeats)
            results.append(row)
            print(f"{rows:5d} x {length:<9d} {src:8s} -> {dst:8s} segmented {row['segmented_ms']:.4f}  row scan "
                  f"{row['best_row_scan']} {row['best_row_scan_ms'] or 0:.4f}  copy {row['copy_ms']:.4f}  "
                  f"convert {row['convert_ms']:.4f} ms", flush=True)
    (out / "row_scan.json").write_text(json.dumps({"device": Device.current().name, "repeats": args.repeats,
                                                   "rows": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

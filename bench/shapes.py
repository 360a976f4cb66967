"""Per-element cost of memtune.run at shapes, batches and dtypes off the tables' ladder, against the
nearest ladder shape (by element count) that the tuned tables answer, in the same run.

    python bench/shapes.py --out bench/results/h100

Every call is timed as memtune.run makes it once warm (its plan built, the caller's arrays on the
device): CUDA events, a cold L2 and the GPU held busy before each repeat, medians of ``--repeats``.
Beside each: CuPy's own operation and a device copy of the input, and the physical model's
prediction of the shaped kernels' plan. Writes shapes.json.
"""
from __future__ import annotations

import functools
import json
import math
from pathlib import Path

import numpy as np
from common import setup

import memtune
from memtune import shapes

# (family, shape, input dtype, options) off the ladder; each is compared with the nearest ladder shape
CASES = [
    ("sat", (1080, 1920), "float32", {}), ("sat", (1000, 1000), "float32", {}), ("sat", (3000, 5000), "float32", {}),
    ("sat", (4099, 4097), "float32", {}), ("sat", (16, 512, 512), "float32", {}), ("sat", (2000, 8000), "float32", {}),
    ("sat", (1080, 1920), "uint8", {"dtype": "int32", "layout": "opencv"}), ("sat", (4096, 4096), "uint8", {"dtype": "int32"}),
    ("sat", (1024, 1024), "float32", {"layout": "opencv"}), ("sat", (4096, 4096), "float32", {"layout": "opencv"}),
    ("sat", (16384, 16384), "float32", {"layout": "opencv"}), ("sat", (5000, 3000), "float64", {}),
    ("prefix_sums", (10_000_000,), "int32", {}), ("prefix_sums", (1000, 10007), "float32", {"axis": 1}),
    ("prefix_sums", (10007, 1000), "float32", {"axis": 0}), ("prefix_sums", (3, 4_194_305), "float32", {"axis": -1}),
    ("prefix_sums", (64, 1024, 1024), "float32", {"axis": 1}), ("prefix_sums", (1 << 24,), "float32", {"dtype": "float64"}),
    ("prefix_sums", (1_000_000, 3), "float32", {"axis": 1}), ("prefix_sums", (1 << 26,), "int32", {"dtype": "int32"}),
    ("prefix_sums", (5000, 3001), "int32", {"axis": 1}), ("prefix_sums", (1 << 26,), "float32", {"dtype": "float64"}),
    ("sum", (1000, 10007), "float32", {"axis": 1}), ("sum", (10007, 1000), "float32", {"axis": 0}),
    ("sum", (10_000_000,), "int32", {}), ("sum", (1 << 24,), "float32", {"dtype": "float64"}),
    ("sum", (64, 1024, 1024), "float32", {"axis": 1}), ("sum", (100_000, 300), "int32", {"axis": 1}),
    ("sum", (3, 700_001), "uint8", {"axis": 1}), ("sum", (1_000_000, 3), "float32", {"axis": 1}),
    ("sum", (5000, 3000), "float64", {"axis": 0}),
    ("transpose", (1000, 3000), "float32", {}), ("transpose", (4000, 4100), "float32", {}),
    ("transpose", (8, 1000, 1000), "float32", {}), ("transpose", (1080, 1920), "uint8", {}),
    ("transpose", (4095, 4095), "float32", {}),
]
# (family, shape of a, dtype, shape of f or b): the products on the seeds' kernels at any sides
PRODUCTS = [("conv", (1080, 1920), "float32", (7, 7)), ("conv", (3, 1080, 1920), "float32", (3, 3)),
            ("conv", (3000, 5000), "float32", (5, 5)), ("conv", (4099, 4097), "float32", (7, 7)),
            ("matmul", (3000, 1000), "float32", (1000, 5000)), ("matmul", (4099, 4097), "float32", (4097, 4095)),
            ("matmul", (1000, 1000), "float32", (1000, 1000)), ("matmul", (8192, 512), "float32", (512, 8192)),
            ("matmul", (2000, 3000), "float64", (3000, 1000))]
LADDER_1D = tuple(1 << k for k in range(10, 29, 2))
LADDER_SIDES = tuple(1 << k for k in range(8, 15))


def nearest_ladder(family: str, elements: int) -> tuple:
    """The ladder shape nearest in log(elements)."""
    if family in ("sat", "transpose"):
        side = min(LADDER_SIDES, key=lambda s: abs(math.log(s * s / elements)))
        return (side, side)
    return (min(LADDER_1D, key=lambda n: abs(math.log(n / elements))),)


def timed(fn, repeats: int) -> float:
    from memtune.kernels.timing import time_call

    return float(np.median(time_call(fn, repeats)))


def peer(family: str, a, options: dict):
    import cupy as cp

    dst = options.get("dtype")
    if family == "sat":
        return lambda: cp.cumsum(cp.cumsum(a, axis=-2, dtype=dst), axis=-1, dtype=dst)
    if family == "prefix_sums":
        return lambda: cp.cumsum(a, axis=options.get("axis"), dtype=dst)
    if family == "sum":
        return lambda: cp.sum(a, axis=options.get("axis"), dtype=dst)
    return lambda: cp.ascontiguousarray(cp.swapaxes(a, -1, -2))


def measure_case(family, shape, dtype, options, device, machine, repeats):
    import cupy as cp
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped

    rng = np.random.default_rng(1)
    host = rng.integers(0, 200, size=shape).astype(dtype) if np.dtype(dtype).kind in "iu" else rng.random(shape).astype(dtype)
    a = cp.asarray(host)
    req = shapes.request(family, a, options)
    elements = math.prod(shape)
    row = {"family": family, "shape": list(shape), "dtype": dtype, "options": options, "elements": elements,
           "out_dtype": req.dst, "path": "tuned" if req.tuned else "shaped"}
    if req.tuned:
        row["ms"] = timed(lambda: memtune.run(family, a, **options), repeats)
    else:
        plan = shapes.plan(req, device)
        out = cp.empty(req.out_shape, req.dst)
        row["ms"] = timed(lambda: shaped.execute(plan, {"a": a, "out": out}), repeats)
        row["kernel"] = plan.launches[-1].function
        row["predicted_ms"] = L.run_time_ns(plan, machine) * 1e-6
        row["block"] = plan.launches[-1].block
        if family == "sum":
            row["plans"] = sum_plans(req, device, machine, a, out, repeats)
        if family == "prefix_sums" and shapes._layout(req)[2] == 1:
            row["plans"] = scan_plans(req, machine, a, out, repeats)
    copy = cp.empty_like(a)
    row["copy_ms"] = timed(lambda: cp.copyto(copy, a), repeats)
    row["cupy_ms"] = timed(peer(family, a, options), repeats)
    ladder = nearest_ladder(family, elements)
    big = cp.asarray(rng.random(ladder).astype(np.float32))
    row["ladder_shape"], row["ladder_dtype"] = list(ladder), "float32"
    row["ladder_ms"] = ladder_ms(family, ladder, repeats)
    row["per_element_ratio"] = row["ms"] / elements / (row["ladder_ms"] / math.prod(ladder))
    row["vs_copy"], row["vs_cupy"] = row["ms"] / row["copy_ms"], row["ms"] / row["cupy_ms"]
    if not req.tuned:      # the same kernels at the ladder shape itself: the shape's cost apart from the kernel's
        lreq = shapes.Request(family, ladder, "float32", "float32")
        lplan = shapes.plan(lreq, device)
        lout = cp.empty(lreq.out_shape, "float32")
        row["shaped_at_ladder_ms"] = timed(lambda: shaped.execute(lplan, {"a": big, "out": lout}), repeats)
    return row


@functools.lru_cache(maxsize=None)
def ladder_ms(family: str, shape: tuple, repeats: int) -> float:
    """The tuned kernel memtune.run picks at a ladder shape, timed as the shaped cases are (bound to its arrays,
    as a run once warm) and once a run: every case near it is compared with the same time."""
    import cupy as cp
    from memtune import kernels
    from memtune.kernels.timing import Device
    from memtune.runner import choose

    big = cp.asarray(np.random.default_rng(1).random(shape).astype(np.float32))
    choice = choose(family, big.size, "float32", Device.current().name)
    kernel = kernels.get(choice.algorithm)
    inputs = kernel.bind({"a": big}, "float32")
    return timed(lambda: kernel.run(inputs, **choice.params), repeats)


def sum_plans(req, device, machine, a, out, repeats) -> dict:
    """A sum's two ways, each measured and predicted: the reduction (row or column sums) and the scan's
    totals (or the strips' column totals), whichever of them the model did not pick included."""
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped

    choice = shapes.shape_choice(req)
    ways = {"scan": choice.plan(shapes.shape_answer(choice, device).params) if choice else shapes._scan_plan(req, device),
            "reduction": shapes._reduction_plan(req)}
    return {name: {"kernel": plan.launches[-1].function, "launches": len(plan.launches),
                   "ms": timed(lambda: shaped.execute(plan, {"a": a, "out": out}), repeats),
                   "predicted_ms": L.run_time_ns(plan, machine) * 1e-6}
            for name, plan in ways.items() if plan is not None}


def scan_plans(req, machine, a, out, repeats) -> dict:
    """Prefix sums along the last axis every way, each measured and predicted: the segmented scan, and the row
    scan in every block whose tiles fit the rows (shaped.row_scan_shape's limit on idle lanes)."""
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped

    outer, length, _ = shapes._layout(req)
    n, sizes = outer * length, (np.dtype(req.src).itemsize, np.dtype(req.dst).itemsize)
    ways = {"segmented": shaped.scan_plan(n, length, req.src, req.dst, False)}
    for t, v in shaped.row_scan_blocks(length, outer, *sizes):
        ways[f"row_scan_t{t}_q{v}"] = shaped.row_scan_plan(n, length, req.src, req.dst, t, v)
    return {name: {"ms": timed(lambda: shaped.execute(plan, {"a": a, "out": out}), repeats),
                   "predicted_ms": L.run_time_ns(plan, machine) * 1e-6} for name, plan in ways.items()}


SWEEP = [((1, 1080, 1920), "sat"), ((1, 4096, 4096), "sat"), ((1, 3000, 5000), "sat"), ((16, 512, 512), "sat"),
         ((1, 16384, 16384), "sat"), ((1, 10007, 1000), "cols"), ((64, 1024, 1024), "cols")]


def sweep_strips(machine, repeats: int) -> list:
    """Every strip shape at a few float32 problems, measured beside the physical model's time."""
    import cupy as cp
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped

    rows = []
    for (images, h, w), mode in SWEEP:
        a = cp.random.random((images, h, w), dtype=cp.float32)
        out = cp.empty_like(a)
        for warps, per in shaped.STRIP_SHAPES:
            plan = shaped.strips_plan(images, h, w, "float32", "float32", mode, warps, per)
            ms = timed(lambda: shaped.execute(plan, {"a": a, "out": out}), repeats)
            rows.append({"shape": [images, h, w], "mode": mode, "warps": warps, "rows": per, "ms": ms,
                         "predicted_ms": L.run_time_ns(plan, machine) * 1e-6})
            print(f"strips {mode} {images}x{h}x{w} w{warps} r{per}: {ms:.4f} ms (model {rows[-1]['predicted_ms']:.4f})", flush=True)
    return rows


def measure_product(family, shape, dtype, other, device, machine, repeats):
    """Per output pixel (convolution) or per multiply-add (product) against the nearest ladder square."""
    import cupy as cp
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped

    a, b = (cp.random.default_rng(1).standard_normal(s, dtype=dtype) for s in (shape, other))
    req = shapes.request(family, a, {}, b)
    plan = shapes.plan(req, device)
    arrays = {"a": a, "f" if family == "conv" else "b": b, "out": cp.empty(req.out_shape, dtype)}
    ms = timed(lambda: shaped.execute(plan, arrays), repeats)
    work = math.prod(shape) if family == "conv" else shape[0] * shape[1] * other[1]
    side = min(LADDER_SIDES, key=lambda s: abs(math.log((s * s if family == "conv" else s ** 3) / work)))
    big = cp.random.default_rng(2).standard_normal((side, side), dtype=dtype)
    second = b if family == "conv" else cp.random.default_rng(3).standard_normal((side, side), dtype=dtype)
    ladder_ms = timed(lambda: memtune.run(family, big, second), repeats)
    ladder_work = side * side if family == "conv" else side ** 3
    peer_ms = timed((lambda: cp.matmul(a, b)) if family == "matmul" else peer_conv(a, b), repeats)
    row = {"family": family, "shape": list(shape), "other": list(other), "dtype": dtype, "path": "shaped",
           "kernel": plan.launches[-1].function, "ms": ms, "ladder_shape": [side, side], "ladder_ms": ladder_ms,
           "per_element_ratio": ms / work / (ladder_ms / ladder_work), "peer_ms": peer_ms, "vs_peer": ms / peer_ms,
           "predicted_ms": L.run_time_ns(plan, machine) * 1e-6}
    print(f"{family:8s} {str(shape):18s} x {str(other):14s} {dtype} {ms:.4f} ms  ladder {side}² {ladder_ms:.4f} ms  "
          f"per-work {row['per_element_ratio']:.3f}  peer {row['vs_peer']:.2f}x  model {row['predicted_ms']:.4f}", flush=True)
    return row


def peer_conv(a, f):
    from cupyx.scipy import ndimage

    flipped = f[::-1, ::-1].reshape((1,) * (a.ndim - 2) + f.shape)
    return lambda: ndimage.convolve(a, flipped, mode="constant", cval=0.0)


def merge_family(old: Path, new: Path, family: str, rows: list, device: str, repeats: int) -> None:
    """``old`` with ``family``'s rows replaced by ``rows`` (measured on the same device, as many repeats) at the
    place of its first one, written to ``new``."""
    result = json.loads(old.read_text())
    if (result["device"], result["repeats"]) != (device, repeats):
        raise SystemExit(f"shapes.py: {old} was measured on {result['device']} with {result['repeats']} repeats")
    kept = [r for r in result["rows"] if r["family"] != family]
    at = next((i for i, r in enumerate(result["rows"]) if r["family"] == family), len(kept))
    result["rows"] = kept[:at] + rows + kept[at:]
    new.write_text(json.dumps(result, indent=1) + "\n")


def main() -> int:
    def extra(parser):
        parser.add_argument("--products-only", action="store_true")
        parser.add_argument("--family", help="only this family's cases, written to shapes_<family>.json")
        parser.add_argument("--merge", metavar="JSON", help="with --family: also put its rows in place of the "
                                                             "family's rows of this shapes.json")

    args, out = setup(__doc__, extra=extra)
    from memtune.kernels.timing import Device
    from memtune.tuner import load_model

    device = Device.current().name
    machine = load_model(device).machine
    if args.family:
        rows = [measure_case(*case, device, machine, args.repeats) for case in CASES if case[0] == args.family]
        for row in rows:
            print(json.dumps(row), flush=True)
        (out / f"shapes_{args.family}.json").write_text(json.dumps({"device": device, "repeats": args.repeats,
                                                                     "rows": rows}, indent=1) + "\n")
        if args.merge:
            merge_family(Path(args.merge), out / "shapes.json", args.family, rows, device, args.repeats)
        return 0
    rows = [measure_product(*case, device, machine, args.repeats) for case in PRODUCTS]
    if args.products_only:
        (out / "shapes_products.json").write_text(json.dumps({"device": device, "repeats": args.repeats, "rows": rows},
                                                             indent=1) + "\n")
        return 0
    for family, shape, dtype, options in CASES:
        row = measure_case(family, shape, dtype, options, device, machine, args.repeats)
        rows.append(row)
        print(f"{family:12s} {str(shape):18s} {dtype:8s} {json.dumps(options):34s} {row['path']:6s} "
              f"{row['ms']:.4f} ms  ladder {row['ladder_shape']} {row['ladder_ms']:.4f} ms  per-element "
              f"{row['per_element_ratio']:.3f}  copy {row['vs_copy']:.2f}x  cupy {row['vs_cupy']:.2f}x"
              + (f"  model {row['predicted_ms']:.4f}" if "predicted_ms" in row else ""), flush=True)
    result = {"device": device, "repeats": args.repeats, "rows": rows, "strip_shapes": sweep_strips(machine, args.repeats)}
    (out / "shapes.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

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
    # rows off a 128-byte boundary in the input only, the output only, neither (32-byte rows): where 4095² loses
    ("transpose", (4095, 4096), "float32", {}), ("transpose", (4096, 4095), "float32", {}),
    ("transpose", (4088, 4088), "float32", {}),
    # float64 sums down 3000 columns (1.16 per element against 4096² in 2026-11): the rows' length or their count
    ("sum", (5000, 3072), "float64", {"axis": 0}), ("sum", (4096, 3000), "float64", {"axis": 0}),
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


def rounded(shape: tuple) -> tuple:
    """Every axis at its nearest power of two (in log): the same call on a shape the kernels like."""
    return tuple(1 << max(0, round(math.log2(n))) for n in shape)


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


def data(shape: tuple, dtype: str, seed: int = 1):
    import cupy as cp

    rng = np.random.default_rng(seed)
    host = rng.integers(0, 200, size=shape).astype(dtype) if np.dtype(dtype).kind in "iu" else rng.random(shape).astype(dtype)
    return cp.asarray(host)


def call(family: str, a, options: dict, device: str, b=None):
    """memtune.run's work on ``a`` (and a product's second operand ``b``) once warm, without its host work:
    (the call, its launch plan or None where the tuned tables answer)."""
    import cupy as cp
    from memtune import kernels
    from memtune.kernels import conv_matmul, shaped
    from memtune.runner import choose

    req = shapes.request(family, a, options, b)
    arrays = {"a": a} if b is None else {"a": a, conv_matmul.SECOND[family]: b}
    if not req.tuned:
        plan = shapes.plan(req, device)
        arrays["out"] = cp.empty(req.out_shape, req.dst)
        return (lambda: shaped.execute(plan, arrays)), plan
    choice = choose(family, a.size, req.src, device, (("v", b.shape[0] // 2),) if family == "conv" else ())
    kernel = kernels.get(choice.algorithm)
    inputs = kernel.bind({**arrays, "a": a.ravel() if family in ("prefix_sums", "sum") else a}, req.src)
    return (lambda: kernel.run(inputs, **choice.params)), None


@functools.lru_cache(maxsize=None)
def same_call_ms(family: str, shape: tuple, src: str, options: tuple, device: str, repeats: int) -> float:
    """The time of memtune's answer to the same call (dtypes, layout, axis) on another shape; each shape
    timed once a run, so every case near it is compared with the same time."""
    fn, _ = call(family, data(shape, src, 2), dict(options), device)
    return timed(fn, repeats)


@functools.lru_cache(maxsize=None)
def copy_ms(shape: tuple, dtype: str, repeats: int) -> float:
    """A device copy of an array of this shape and type: below some 16 MB neither it nor the kernels take time in
    proportion to the elements, so a small shape is also compared with its ladder shape copy for copy."""
    import cupy as cp

    a = data(shape, dtype, 3)
    b = cp.empty_like(a)
    return timed(lambda: cp.copyto(b, a), repeats)


def measure_case(family, shape, dtype, options, device, machine, repeats):
    """A call off the ladder against (1) the nearest ladder shape with the same input and output types and
    layout (a 1-D ladder for scans and sums: the tables' own), and (2) the same call with each axis at its
    nearest power of two: the odd shape's own cost, apart from what the call's kind costs."""
    import cupy as cp
    from memtune.costmodel.physical import launch as L

    a = data(shape, dtype)
    req = shapes.request(family, a, options)
    elements = math.prod(shape)
    row = {"family": family, "shape": list(shape), "dtype": dtype, "options": options, "elements": elements,
           "out_dtype": req.dst, "path": "tuned" if req.tuned else "shaped"}
    fn, plan = call(family, a, options, device)
    row["ms"] = timed(fn, repeats)
    if plan is not None:
        row["kernel"] = plan.launches[-1].function
        row["predicted_ms"] = L.run_time_ns(plan, machine) * 1e-6
        row["block"] = plan.launches[-1].block
        out = cp.empty(req.out_shape, req.dst)
        if family == "sum":
            row["plans"] = sum_plans(req, device, machine, a, out, repeats)
        if family == "prefix_sums" and shapes._layout(req)[2] == 1:
            row["plans"] = scan_plans(req, machine, a, out, repeats)
    row["copy_ms"] = copy_ms(tuple(shape), dtype, repeats)
    row["cupy_ms"] = timed(peer(family, a, options), repeats)
    kept = tuple(sorted((k, v) for k, v in options.items() if k != "axis"))     # a ladder vector has no axis
    ladder = nearest_ladder(family, elements)
    row["ladder_shape"], row["ladder_dtype"], row["ladder_out_dtype"] = list(ladder), dtype, req.dst
    row["ladder_ms"] = same_call_ms(family, ladder, dtype, kept, device, repeats)
    row["per_element_ratio"] = row["ms"] / elements / (row["ladder_ms"] / math.prod(ladder))
    row["rounded_shape"] = list(rounded(shape))
    row["rounded_ms"] = same_call_ms(family, rounded(shape), dtype, tuple(sorted(options.items())), device, repeats)
    row["per_element_vs_rounded"] = row["ms"] / elements / (row["rounded_ms"] / math.prod(rounded(shape)))
    row["vs_copy"], row["vs_cupy"] = row["ms"] / row["copy_ms"], row["ms"] / row["cupy_ms"]
    row["ladder_copy_ms"] = copy_ms(ladder, dtype, repeats)
    row["vs_copy_against_ladder"] = row["vs_copy"] / (row["ladder_ms"] / row["ladder_copy_ms"])
    return row


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
         ((1, 16384, 16384), "sat"), ((1, 10007, 1000), "cols"), ((64, 1024, 1024), "cols"),
         # column totals (sums down axis 0); 64 rows (one to four strips walking 1024 chunks); one chunk (4096 strips)
         ((1, 4096, 4096), "coltotal"), ((1, 16384, 16384), "coltotal"), ((1, 2000, 6000), "coltotal"),
         ((1, 64, 131072), "sat"), ((1, 65536, 128), "coltotal"),
         # float64 (two status words a value)
         ((1, 4096, 4096), "coltotal", "float64"), ((1, 1080, 1920), "sat", "float64"), ((1, 10007, 1000), "cols", "float64")]


def sweep_strips(machine, repeats: int) -> list:
    """Every strip shape at a few problems (float32 unless said), measured beside the physical model's time."""
    import cupy as cp
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped

    rows = []
    for (images, h, w), mode, *dtype in SWEEP:
        dtype = dtype[0] if dtype else "float32"
        a = cp.random.random((images, h, w)).astype(dtype)
        out = cp.empty_like(a)
        for warps, per in shaped.STRIP_SHAPES:
            plan = shaped.strips_plan(images, h, w, dtype, dtype, mode, warps, per)
            ms = timed(lambda: shaped.execute(plan, {"a": a, "out": out}), repeats)
            rows.append({"shape": [images, h, w], "mode": mode, "dtype": dtype, "warps": warps, "rows": per, "ms": ms,
                         "predicted_ms": L.run_time_ns(plan, machine) * 1e-6})
            print(f"strips {mode} {images}x{h}x{w} {dtype} w{warps} r{per}: {ms:.4f} ms (model {rows[-1]['predicted_ms']:.4f})",
                  flush=True)
    return rows


def seeds_kernel_ms(family: str, a, b, repeats: int) -> float:
    """The seeds' kernel (conv_hmm, matmul_hmm) on this shape in its default configuration, whatever the
    tables pick: what the kernel itself pays for the shape."""
    import cupy as cp
    from memtune.kernels import conv_matmul, get, shaped

    plan = conv_matmul.product_plan(family, a.shape, b.shape, str(a.dtype), get(f"{family}_hmm").check_params({}))
    out = cp.empty(a.shape if family == "conv" else (a.shape[0], b.shape[1]), a.dtype)
    arrays = {"a": a, conv_matmul.SECOND[family]: b, "out": out}
    return timed(lambda: shaped.execute(plan, arrays), repeats)


def measure_product(family, shape, dtype, other, device, machine, repeats):
    """Per output pixel (convolution) or per multiply-add (product) against the nearest ladder square: memtune's
    answer at each, and the seeds' kernel in one configuration at each."""
    import cupy as cp
    from memtune.costmodel.physical import launch as L

    a, b = (cp.random.default_rng(1).standard_normal(s, dtype=dtype) for s in (shape, other))
    fn, plan = call(family, a, {}, device, b)
    ms = timed(fn, repeats)
    kernel = plan.launches[-1].function if plan else "tuned"      # a square: the tuned tables' kernel
    work = math.prod(shape) if family == "conv" else shape[0] * shape[1] * other[1]
    side = min(LADDER_SIDES, key=lambda s: abs(math.log((s * s if family == "conv" else s ** 3) / work)))
    big = cp.random.default_rng(2).standard_normal((side, side), dtype=dtype)
    second = b if family == "conv" else cp.random.default_rng(3).standard_normal((side, side), dtype=dtype)
    ladder_ms = timed(call(family, big, {}, device, second)[0], repeats)
    ladder_work = side * side if family == "conv" else side ** 3
    peer_ms = timed((lambda: cp.matmul(a, b)) if family == "matmul" else peer_conv(a, b), repeats)
    seeds_ms, seeds_ladder_ms = seeds_kernel_ms(family, a, b, repeats), seeds_kernel_ms(family, big, second, repeats)
    library = plan is None or plan.launches[-1].library
    row = {"family": family, "shape": list(shape), "other": list(other), "dtype": dtype, "path": "shaped",
           "kernel": kernel, "ms": ms, "ladder_shape": [side, side], "ladder_ms": ladder_ms,
           "per_element_ratio": ms / work / (ladder_ms / ladder_work), "peer_ms": peer_ms, "vs_peer": ms / peer_ms,
           "predicted_ms": None if library else L.run_time_ns(plan, machine) * 1e-6,
           "seeds_kernel_ms": seeds_ms, "seeds_kernel_ladder_ms": seeds_ladder_ms,
           "seeds_kernel_per_element_ratio": seeds_ms / work / (seeds_ladder_ms / ladder_work)}
    print(f"{family:8s} {str(shape):18s} x {str(other):14s} {dtype} {kernel} {ms:.4f} ms  ladder {side}² "
          f"{ladder_ms:.4f} ms  per-work {row['per_element_ratio']:.3f}  peer {row['vs_peer']:.2f}x  seeds' kernel "
          f"{seeds_ms:.4f} / {seeds_ladder_ms:.4f} ms ({row['seeds_kernel_per_element_ratio']:.3f})", flush=True)
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
        parser.add_argument("--strips-only", action="store_true", help="only every strip shape at SWEEP's problems, "
                                                                         "written to strip_shapes.json")
        parser.add_argument("--family", help="only this family's cases, written to shapes_<family>.json")
        parser.add_argument("--merge", metavar="JSON", help="with --family: also put its rows in place of the "
                                                             "family's rows of this shapes.json")

    args, out = setup(__doc__, extra=extra)
    from memtune.kernels.timing import Device
    from memtune.tuner import load_model

    device = Device.current().name
    machine = load_model(device).machine
    if args.strips_only:
        (out / "strip_shapes.json").write_text(json.dumps({"device": device, "repeats": args.repeats,
                                                           "strip_shapes": sweep_strips(machine, args.repeats)}, indent=1) + "\n")
        return 0
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
              f"{row['per_element_ratio']:.3f}  rounded {row['rounded_shape']} {row['per_element_vs_rounded']:.3f}  "
              f"over the copy against the ladder's {row['vs_copy_against_ladder']:.3f}  copy {row['vs_copy']:.2f}x  cupy {row['vs_cupy']:.2f}x"
              + (f"  model {row['predicted_ms']:.4f}" if "predicted_ms" in row else ""), flush=True)
    result = {"device": device, "repeats": args.repeats, "rows": rows, "strip_shapes": sweep_strips(machine, args.repeats)}
    (out / "shapes.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

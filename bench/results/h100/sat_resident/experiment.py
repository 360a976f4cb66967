"""#28 experiment: the two-dimensional look-back SAT (shaped.cu's tiles) as shipped (base), the same tile's work in
three tile orders with and without a ticket (ord), and its phases in SM cycles (prof), beside the device copy. One
process, alternating rounds, cold L2, medians of --repeats.
Usage: python experiment.py --out DIR [--repeats 20] [--sizes 1024,4096] [--name experiment]; writes DIR/NAME.json."""
import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from common import setup  # noqa: E402  (bench/common.py)

ROUNDS = 3
CASES = (("float32", 1024, 1024), ("float32", 2048, 2048), ("float32", 4096, 4096), ("float32", 8192, 8192),
         ("float32", 16384, 16384), ("float32", 2160, 3840), ("float64", 4096, 4096), ("float64", 16384, 16384))
PHASES = ("ticket", "load_band", "walk_up", "row_prefix", "walk_left", "store")


def shape_of(name):
    """(warps, rows a warp, vectors) of a kernel name."""
    w, r, v = (int(x) for x in re.search(r"_w(\d+)_r(\d+)_v(\d+)", name).groups())
    return w, r, v


def main():
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--sizes", default=""),
                                                 p.add_argument("--name", default="experiment")))
    import cupy as cp
    from memtune import kernels
    from memtune.kernels.timing import measure, time_call

    code = (HERE / "experiment.cu").read_text()
    mod = cp.RawModule(code=code, options=("-std=c++17", "-DMEMTUNE_ONLY=none",
                                           f"-I{Path(kernels.__file__).parent}"))
    kinds = {}                                                   # kernel name: its dtype's short name
    for kind, body in re.findall(r"\b(BASE|ORD|PROF|ORDERS)\(((?:float|double), f\d\d(?:, \d+)+)\)", code):
        _, s, *n = [x.strip() for x in body.split(",")]
        shape = f"{s}_w{n[0]}_r{n[1]}_v{n[2]}"
        if kind == "BASE":
            kinds[f"base_{shape}"] = s
        elif kind == "ORDERS":
            kinds.update({f"ord_{shape}_o{o}_t0": s for o in range(3)})
        else:
            kinds[f"{kind.lower()}_{shape}_o{n[3]}_t{n[4]}"] = s
    copy = kernels.get("cupy_copy")
    prof = cp.ndarray(8, np.uint64, memptr=mod.get_global("prof"))
    counter = cp.zeros(1, np.uint32)
    epoch = [0]
    sizes = {int(x) for x in args.sizes.split(",") if x}
    rows = []
    for dtype, h, w in CASES:
        if sizes and h not in sizes:
            continue
        s = "f32" if dtype == "float32" else "f64"
        c = measure(copy, copy.make_inputs(h * w, dtype, 1, perm="identical"), repeats=args.repeats)["median_ms"]
        a = cp.random.standard_normal((h, w), dtype=cp.float64).astype(dtype)
        ref = cp.cumsum(cp.cumsum(a.astype(cp.float64), axis=0), axis=1)
        scale = float(cp.abs(ref).max()) + 1
        b = cp.empty_like(a)
        word = 8 if dtype == "float32" else 16
        status = cp.zeros(((h + 1) * w // 4 + (w + 1) * h // 32 + 64) * word // 8 + 64, np.uint64)
        variants = {}
        for name, suffix in kinds.items():
            if suffix != s:
                continue
            fn = mod.get_function(name)
            warps, rpw, v = shape_of(name)
            tx, ty = -(-w // (32 * v)), -(-h // (warps * rpw))
            tiles = tx * ty
            per = np.int32(tiles)

            def run(fn=fn, warps=warps, tx=tx, per=per, tiles=tiles):
                epoch[0] += 1
                fn((tiles,), (32, warps), (a, b, np.int32(h), np.int32(w), np.int32(tx), per, counter, status,
                                           np.uint32(epoch[0])))
            occ = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fn.kernel.ptr, 32 * warps, 0)
            variants[name] = (run, fn.num_regs, occ)
        errs = {}
        for k, (run, _, _) in variants.items():
            b.fill(np.nan)
            run()
            errs[k] = float(cp.abs(b.astype(cp.float64) - ref).max()) / scale
        timed = {k: v for k, v in variants.items() if not k.startswith("prof_")}
        times = {k: [] for k in timed}
        for _ in range(ROUNDS):
            for k, (run, _, _) in timed.items():
                times[k].append(float(np.median(time_call(run, args.repeats))))
        phases = {}
        for k, (run, _, _) in variants.items():
            if k.startswith("prof_"):
                prof.fill(0)
                run()
                cp.cuda.runtime.deviceSynchronize()
                p = prof.get().astype(float)
                total = p[:6].sum()
                phases[k] = {"cycles_per_tile": {n: round(p[i] / p[7], 1) for i, n in enumerate(PHASES)},
                             "share": {n: round(p[i] / total, 3) for i, n in enumerate(PHASES)}}
        row = {"dtype": dtype, "h": h, "w": w, "copy_ms": c,
               "variants": {k: {"ms": float(np.median(times[k])) if k in times else None,
                                "x_copy": float(np.median(times[k])) / c if k in times else None,
                                "rounds": times.get(k), "err": errs[k], "registers": variants[k][1],
                                "blocks_per_sm": variants[k][2]} for k in variants},
               "phases": phases}
        rows.append(row)
        best = sorted(((v["x_copy"], k) for k, v in row["variants"].items() if v["x_copy"]))
        print(f"{dtype} {h}x{w} copy {c:.4f} ms | " + " ".join(f"{k} {x:.3f}x" for x, k in best[:12]), flush=True)
        print("   worst err %.1e; base " % max(errs.values()) + " ".join(
            f"{k} {v['x_copy']:.3f}" for k, v in row["variants"].items() if k.startswith(("base", "same"))), flush=True)
        for k, p in phases.items():
            print(f"   {k}: {p['cycles_per_tile']} {p['share']}", flush=True)
        del a, b, ref, status
    (out / f"{args.name}.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

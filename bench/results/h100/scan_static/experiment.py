"""#28 experiment: the resident look-back scan as shipped (base), the same loop on tiles in a fixed order with no ticket
(static; only grids whose blocks are all resident at once), with a walker warp beside the data warps (spec), and
base's phases timed in SM cycles (--prof), beside the device copy. One process, alternating rounds (base, static,
spec, base, ...), cold L2, medians of --repeats.
Usage: python experiment.py --out DIR [--variants base,static,spec] [--prof] [--repeats 20]; writes DIR/NAME.json."""
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))
from common import setup  # noqa: E402  (bench/common.py)

ROUNDS = 3
SIZES = (("float32", 20), ("float32", 22), ("float32", 24), ("float32", 26), ("float32", 28), ("float64", 22),
         ("float64", 24), ("float64", 26), ("float64", 28))
SHAPES = ((512, 8), (256, 8), (128, 8), (512, 4), (256, 4))     # (threads, vectors)


def main():
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--variants", default="base,static,spec"),
                                                 p.add_argument("--prof", action="store_true"),
                                                 p.add_argument("--name", default="experiment")))
    wanted = args.variants.split(",")
    import cupy as cp
    from memtune import kernels
    from memtune.kernels.timing import measure, time_call

    mod = cp.RawModule(code=(HERE / "experiment.cu").read_text(),
                       options=("-std=c++17", f"-I{Path(kernels.__file__).parent}"))
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    copy = kernels.get("cupy_copy")
    epoch = [0]
    rows = []
    for dtype, bits in SIZES:
        n, s = 1 << bits, "f32" if dtype == "float32" else "f64"
        v = 16 // np.dtype(dtype).itemsize
        c = measure(copy, copy.make_inputs(n, dtype, 1, perm="identical"), repeats=args.repeats)["median_ms"]
        a = cp.random.standard_normal(n, dtype=cp.float64).astype(dtype)
        ref = cp.cumsum(a.astype(cp.float64))
        scale = float(cp.abs(ref).max()) + 1
        b = cp.empty_like(a)
        counter = cp.zeros(1, np.uint32)
        for threads, q in SHAPES:
            tiles = -(-n // (threads * q * v))
            spec_tiles = -(-n // ((threads - 32) * q * v))     # spec: the block's last warp is the walker
            words = 2 * spec_tiles + 64 if dtype == "float32" else 4 * spec_tiles + 64
            status = cp.zeros(words, np.uint64)
            fns = {k: mod.get_function(f"{k}_{s}_q{q}") for k in ("base", "static", "prof")}
            fns["spec"] = mod.get_function(f"spec_{s}_q{q}_t{threads}")
            print(f"spec_{s}_q{q}_t{threads}: {fns['spec'].num_regs} registers, at most "
                  f"{fns['spec'].max_threads_per_block} threads a block", flush=True)
            resident = cp.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(fns["static"].kernel.ptr, threads, 0) * sms

            def runner(fn, d, count=tiles):
                def run():
                    epoch[0] += 1
                    fn((d,), (threads,), (a, b, np.int64(n), np.int64(count), counter, status, np.uint32(epoch[0])))
                return run

            for d in sorted({132, 264, 396, 528, resident}):
                if d > tiles:
                    continue
                variants = {"base": runner(fns["base"], d), "static": runner(fns["static"], d),
                            "spec": runner(fns["spec"], d, spec_tiles)}
                variants = {k: v for k, v in variants.items() if k in wanted and (k != "static" or d <= resident)}
                errs = {}
                for k, run in variants.items():
                    b.fill(np.nan)
                    run()
                    errs[k] = float(cp.abs(b.astype(cp.float64) - ref).max()) / scale
                times = {k: [] for k in variants}
                for _ in range(ROUNDS):
                    for k, run in variants.items():
                        times[k].append(float(np.median(time_call(run, args.repeats))))
                row = {"dtype": dtype, "n": n, "threads": threads, "vectors": q, "d": d, "resident": resident,
                       "copy_ms": c, "counter_after": int(counter.get()[0]),
                       **{f"{k}_ms": float(np.median(t)) for k, t in times.items()},
                       **{f"{k}_rounds": t for k, t in times.items()}, **{f"{k}_err": e for k, e in errs.items()}}
                if args.prof:
                    row["prof"] = profile(mod, runner(fns["prof"], d))
                rows.append(row)
                said = " ".join(f"{k} {row[k + '_ms'] / c:.3f}x (err {errs[k]:.1e})" for k in variants)
                pf = row.get("prof", {})
                print(f"{dtype} 2^{bits} t{threads} q{q} d{d} (resident {resident}): {said}"
                      + (f" | phases {pf['share']} tiles/block {pf['tiles_per_block']}" if pf else ""), flush=True)
            del status
        del a, b, ref
    (out / f"{args.name}.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")


def profile(mod, run):
    """One run of the timed build: each phase's share of the blocks' cycles, and tiles a block."""
    import cupy as cp

    prof = cp.ndarray(8, np.uint64, memptr=mod.get_global("prof"))
    prof.fill(0)
    run()
    cp.cuda.runtime.deviceSynchronize()
    p = prof.get().astype(float)
    names = ("ticket", "load_open", "lookback", "store")
    return {"cycles": dict(zip(names + ("tiles", "block_total", "blocks"), p[:7].tolist())),
            "share": {k: round(float(p[i] / p[5]), 3) for i, k in enumerate(names)},
            "tiles_per_block": round(p[4] / p[6], 1)}


if __name__ == "__main__":
    main()

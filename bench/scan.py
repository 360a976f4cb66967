"""Sum and prefix sums beside cupy.sum, cupy.cumsum and the copy; the chapter's Fig. 8 (GPU).

Goals (H100): prefix sums of 2^28 elements <= 1.05x the copy of the same bytes, float32 and float64;
sum <= 1.0x cupy.sum. Every configuration of the look-back scan's space is timed in the same run.
Fig. 8: the sum, simple and optimal prefix sums in shared memory (n = 32 .. 16384) and in global
memory (n = 2^10 .. 2^27), the seeds' algorithms with a kernel launch per step.
Run: ``python bench/scan.py [--out DIR]``.
"""
from __future__ import annotations

import json

import pandas as pd
from common import setup

from memtune import kernels
from memtune.kernels.timing import measure, scan_error

ALGORITHMS = ("sum", "prefix_sums_simple", "prefix_sums_optimal")


def headline(n, repeats, dtypes=("float32", "float64")):
    rows, out = [], {}
    for dtype in dtypes:
        copy_k = kernels.get("cupy_copy")
        copy = measure(copy_k, copy_k.make_inputs(n, dtype, 1, perm="identical"), repeats=repeats)
        for ours_name, peer_name, grid in (
                ("prefix_sums_lookback", "cupy_cumsum", kernels.get("prefix_sums_lookback").space.points()),
                ("sum_single_pass", "cupy_sum",
                 [{"threads": t, "d": d} for t in (256, 512, 1024) for d in (264, 528, 1056, 2112)])):
            k, peer = kernels.get(ours_name), kernels.get(peer_name)
            inputs = k.make_inputs(n, dtype, 2)
            results = [measure(k, inputs, repeats=repeats, **p) for p in grid]
            best = min(results, key=lambda r: r["median_ms"])
            err = scan_error(k, inputs, **best["params"])
            peer_row = measure(peer, peer.make_inputs(n, dtype, 2), repeats=repeats)
            rows += results + [peer_row]
            out[f"{ours_name}:{dtype}"] = {
                "ms": best["median_ms"], "params": best["params"], "peer": peer_name,
                "peer_ms": peer_row["median_ms"], "copy_ms": copy["median_ms"],
                "over_copy": best["median_ms"] / copy["median_ms"],
                "over_peer": best["median_ms"] / peer_row["median_ms"], "relative_error": err}
            del inputs
        rows.append(copy)
    return out, pd.DataFrame(rows)


def fig8(repeats):
    rows = []
    for alg in ALGORITHMS:
        k = kernels.get(f"{alg}[shared]")
        for e in range(5, 15):
            inputs = k.make_inputs(1 << e, "float32", e)
            rows.append({**measure(k, inputs, repeats=repeats, reps=100), "memory": "shared", "algorithm": alg})
        k = kernels.get(f"{alg}[global]")
        for e in range(10, 28):
            inputs = k.make_inputs(1 << e, "float32", e)
            rows.append({**measure(k, inputs, repeats=max(5, repeats // 4)), "memory": "global", "algorithm": alg})
            del inputs
    return pd.DataFrame(rows)


def main() -> None:
    def extra(parser):
        parser.add_argument("--n", type=int, default=1 << 28)
        parser.add_argument("--headline-only", action="store_true", help="leave out Fig. 8")

    args, out = setup(__doc__, extra=extra)
    summary, rows = headline(args.n, args.repeats)
    rows.to_csv(out / "scan_headline.csv", index=False)
    print(json.dumps(summary, indent=1, default=str))
    (out / "scan_summary.json").write_text(json.dumps(summary, indent=1, default=str))
    if args.headline_only:
        return
    f8 = fig8(args.repeats)
    f8.to_csv(out / "scan_fig8.csv", index=False)
    for memory in ("shared", "global"):
        table = f8[f8.memory == memory].pivot_table(index="size", columns="algorithm", values="median_ms")
        unit, scale = ("ns", 1e6) if memory == "shared" else ("ms", 1.0)
        print(f"\nFig. 8, {memory} memory, float32, time per operation ({unit})")
        print((table * scale).round(3).to_string())


if __name__ == "__main__":
    main()

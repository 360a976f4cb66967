"""Kernel Tuner's own strategies on memtune's recorded grids, in Kernel Tuner's simulation mode.

Needs Kernel Tuner (``pip install kernel_tuner``; measured with 1.5.0), not memtune. For each cache file
(bench/user_kernels.py writes them in Kernel Tuner's format), each strategy runs ``tune_cache`` with 10 seeds
and the whole space as its budget; the count is the number of distinct configurations it evaluated up to
and including the first within 5 % of the cache's best. Writes ``{kernel: {strategy: [counts]}}`` as JSON.
Run: ``python bench/kt_simulate.py bench/results/h100/user_kernels/*.json --out kt.json``.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

WITHIN = 1.05
STRATEGIES = ("random_sample", "genetic_algorithm")


def runs_to_target(path: Path, strategy: str, seed: int) -> int:
    from kernel_tuner.interface import tune_cache

    data = json.loads(path.read_text())
    good = [v["time"] for v in data["cache"].values() if isinstance(v["time"], float)]
    target = min(good) * WITHIN
    results, _ = tune_cache(str(path), strategy=strategy, strategy_options={"max_fevals": len(data["cache"])},
                            quiet=True, seed=seed)
    seen = []
    for r in results:
        key = tuple(r[k] for k in data["tune_params_keys"])
        if key not in seen:
            seen.append(key)
            if isinstance(r.get("time"), float) and r["time"] <= target:
                return len(seen)
    return len(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("caches", nargs="+")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    out = {}
    for path in map(Path, args.caches):
        kernel = json.loads(path.read_text())["kernel_name"]
        out[kernel] = {s: [runs_to_target(path, s, seed) for seed in range(args.seeds)] for s in STRATEGIES}
        print(kernel, {s: sorted(v) for s, v in out[kernel].items()}, flush=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()

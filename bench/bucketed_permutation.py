"""The bucketed permutation (two passes) beside the scheduled one (five passes), CuPy's scatter and gather
and the copy, in one run (GPU).

Goal (#28, H100): a random permutation of 2^26 float32 at <= 5x the copy of the same array. Every
configuration of the bucketed permutation's space is timed and checked against numpy at each size, dtype
and permutation; the scheduled permutation runs its best recorded configuration.
Run: ``python bench/bucketed_permutation.py [--out DIR] [--sizes 20,22,24,26] [--perms random,...]``.
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
from common import setup

from memtune import kernels
from memtune.costmodel.space import Limits
from memtune.kernels.timing import check, measure

SCHEDULED = {"threads": 512, "mode": "designated", "d": 0, "rows": 8, "tile": 64}   # best at 2^26 (permutation.csv)


def _options(parser):
    parser.add_argument("--sizes", default="20,22,24,26", help="log2 of the sizes (squares for the scheduled one)")
    parser.add_argument("--dtypes", default="float32,float64")
    parser.add_argument("--perms", default="random")
    parser.add_argument("--large", type=int, default=28, help="log2 of one more size timed on the biggest spans only")


def bucketed_rows(n, dtype, perm, repeats, points):
    k = kernels.get("hmm_bucketed_permutation")
    inputs = k.make_inputs(n, dtype, 1, perm=perm)
    rows = []
    fits = k.space.points(Limits(itemsize=np.dtype(dtype).itemsize))
    for p in (p for p in points if p in fits):
        assert check(k, inputs, **p) == 0, (n, dtype, perm, p)
        rows.append({**measure(k, inputs, repeats=repeats, **p), "perm": perm})
    del inputs
    return rows


def peers(n, dtype, perm, repeats):
    rows = []
    copy = kernels.get("cupy_copy")
    rows.append({**measure(copy, copy.make_inputs(n, dtype, 1, perm="identical"), repeats=repeats), "perm": perm})
    for name in ("cupy_scatter", "cupy_gather"):
        k = kernels.get(name)
        rows.append({**measure(k, k.make_inputs(n, dtype, 1, perm=perm), repeats=repeats), "perm": perm})
    side = int(round(n ** 0.5))
    if side * side == n:
        k = kernels.get("hmm_scheduled_permutation")
        inputs = k.make_inputs(n, dtype, 1, perm=perm, row_schedules=False)
        rows.append({**measure(k, inputs, repeats=repeats, **SCHEDULED), "perm": perm})
    return rows


def summary(df):
    out = {}
    for (size, dtype, perm), g in df.groupby(["size", "dtype", "perm"]):
        ours = g[g.kernel == "hmm_bucketed_permutation"]
        if ours.empty:
            continue
        best = ours.loc[ours.median_ms.idxmin()]
        ms = {r.kernel: r.median_ms for r in g.itertuples() if r.kernel != "hmm_bucketed_permutation"}
        copy = ms.get("cupy_copy")
        out[f"{dtype} 2^{int(size).bit_length() - 1} {perm}"] = {
            "ms": best.median_ms, "params": best.params, "configurations": len(ours), "copy_ms": copy,
            "over_copy": best.median_ms / copy if copy else None,
            **{f"{k}_ms": v for k, v in ms.items() if k != "cupy_copy"},
            "scheduled_over_ours": ms["hmm_scheduled_permutation"] / best.median_ms
            if "hmm_scheduled_permutation" in ms else None}
    return out


def main():
    args, out = setup(__doc__, repeats=15, extra=_options)
    k = kernels.get("hmm_bucketed_permutation")
    points = k.space.points()
    rows = []
    for e in [int(x) for x in args.sizes.split(",")]:
        for dtype in args.dtypes.split(","):
            for perm in args.perms.split(","):
                rows += bucketed_rows(1 << e, dtype, perm, args.repeats, points)
                rows += peers(1 << e, dtype, perm, args.repeats)
                print(json.dumps(summary(pd.DataFrame(rows)).get(f"{dtype} 2^{e} {perm}"), default=str), flush=True)
    if args.large:
        big = [p for p in points if p["tile"] >= 16384 and p["window"] >= 16384 and p["threads"] >= 512]
        rows += bucketed_rows(1 << args.large, "float32", "random", args.repeats, big)
        rows += peers(1 << args.large, "float32", "random", args.repeats)
    df = pd.DataFrame(rows)
    df.to_csv(out / "bucketed_permutation.csv", index=False)
    (out / "bucketed_permutation.json").write_text(json.dumps(summary(df), indent=1, default=str))
    print(json.dumps(summary(df), indent=1, default=str))


if __name__ == "__main__":
    main()

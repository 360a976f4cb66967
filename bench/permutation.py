"""Permutation and transpose kernels beside CuPy's own operations, ratios from one run (GPU).

Goals (H100): random permutation of 2^26 float32, scheduled >= 3x faster than CuPy's scatter and
>= 1.5x faster than its gather, scheduled time within 5 % across the five permutations; transpose
16384^2 float32 <= 1.15x the copy; DMM (1024 doubles) conflict-free <= 1.6x the copy for every
permutation, in-place <= 1.1x, D-designated transpose >= 5x slower than conflict-free; RAP CRSW
within 1.2x of RAW DRDW. Run: ``python bench/permutation.py [--out DIR] [--quick]``.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import ProcessPoolExecutor

import pandas as pd
from common import setup

from memtune import kernels
from memtune.costmodel import permutations as perms
from memtune.costmodel import schedules
from memtune.kernels.timing import check, measure


def schedule_for(args):
    """Worker: the scheduled permutation's arrays in their narrowest type (computed on the CPU)."""
    name, n, seed = args
    t0 = time.perf_counter()
    sched = schedules.hmm_schedule(perms.named(name, n, seed), 32)
    itype = schedules.narrowest_index_dtype(sched.nbar)
    small = schedules.HMMSchedule(sched.nbar, 32, sched.row1.astype(itype), sched.col.astype(itype),
                                  sched.row2.astype(itype))
    return name, small, time.perf_counter() - t0


def dmm_table(repeats, reps):
    rows = []
    for perm in perms.NAMES:
        for name in kernels.names("dmm_permutation"):
            if name.endswith("_in_place") and perm not in ("transpose", "shuffle", "bit-reversal"):
                continue
            k = kernels.get(name)
            inputs = k.make_inputs(1024, "float64", 1, perm=perm)
            models = ("paper", "hopper") if "conflict_free" in name else ("paper",)
            for model in models:
                assert check(k, inputs, reps=1, bank_model=model) == 0, (name, perm, model)
                row = measure(k, inputs, repeats=repeats, reps=reps, bank_model=model)
                label = name.replace("dmm_permutation_", "") + ("" if model == "paper" else "[hopper]")
                rows.append({**row, "perm": perm, "label": label})
    df = pd.DataFrame(rows)
    df["ns"] = df.median_ms * 1e6
    table = df.pivot_table(index="perm", columns="label", values="ns").reindex(list(perms.NAMES))
    return df, table


def rap_table(repeats, reps):
    rows = []
    for name in kernels.names("rap"):
        k = kernels.get(name)
        inputs = k.make_inputs(1024, "float64", 1)
        assert check(k, inputs, reps=1) == 0, name
        rows.append(measure(k, inputs, repeats=repeats, reps=reps))
    df = pd.DataFrame(rows)
    df["ns"] = df.median_ms * 1e6
    return df


def transpose_table(nbar, repeats):
    rows = []
    for name, grid in (("hmm_transpose", [{"rows": r, "d": d, "tile": t} for t in (32, 64) for r in (4, 8, 16, 32)
                                          for d in (0, 2112)]),
                       ("cupy_transpose", [{}]), ("cupy_copy", [{}])):
        k = kernels.get(name)
        inputs = k.make_inputs(nbar * nbar, "float32", 2)
        assert check(k, inputs, **grid[0]) == 0, name
        for params in grid:
            rows.append(measure(k, inputs, repeats=repeats, **params))
    return pd.DataFrame(rows)


def permutation_table(n, repeats, schedules_by_perm):
    rows = []
    for perm in perms.NAMES:
        for name, grids in (("hmm_scheduled_permutation", [{"threads": t, "mode": m, "rows": r, "tile": tile}
                                                           for m in ("designated", "designated-rap")
                                                           for t in (256, 512, 1024) for r in (8, 16)
                                                           for tile in (32, 64)]),
                            ("hmm_permutation_d_designated", [{"threads": 256, "ept": e} for e in (1, 4)]),
                            ("hmm_permutation_s_designated", [{"threads": 256, "ept": e} for e in (1, 4)]),
                            ("cupy_scatter", [{}]), ("cupy_gather", [{}]), ("cupy_copy", [{}])):
            k = kernels.get(name)
            extra = {"schedule": schedules_by_perm[perm], "row_schedules": False} if "scheduled" in name else {}
            inputs = k.make_inputs(n, "float32", 3, perm=perm, **extra)
            assert check(k, inputs, **grids[0]) == 0, (name, perm)
            for params in grids:
                rows.append({**measure(k, inputs, repeats=repeats, **params), "perm": perm})
            del inputs
    return pd.DataFrame(rows)


def best(df, kernel, **where):
    sel = df[df.kernel == kernel]
    for k, v in where.items():
        sel = sel[sel[k] == v]
    return sel.median_ms.min()


def main() -> None:
    def extra(parser):
        parser.add_argument("--quick", action="store_true", help="smaller sizes (2^22, 4096^2) for a smoke run")
        parser.add_argument("--skip", default="", help="comma list of sections to skip: dmm,rap,transpose,permutation")

    args, out = setup(__doc__, extra=extra)
    skip = set(filter(None, args.skip.split(",")))
    n = 1 << (22 if args.quick else 26)
    nbar_t = 4096 if args.quick else 16384
    pool = ProcessPoolExecutor(max_workers=5) if "permutation" not in skip else None
    jobs = [pool.submit(schedule_for, (p, n, 3)) for p in perms.NAMES] if pool else []
    summary = {}
    if "dmm" not in skip:
        df, table = dmm_table(args.repeats, 20000)
        df.to_csv(out / "dmm.csv", index=False)
        copy = table["dmm_copy"].min()
        print("\nDMM, 1024 doubles, ns per operation; [hopper]: schedules for 8-byte words on 4-byte banks")
        with pd.option_context("display.width", 250):
            print(table.round(1).to_string())
            print("ratio to the copy")
            print((table / copy).round(2).to_string())
        cf = table[["conflict_free", "conflict_free[hopper]"]].min(axis=1)
        inplace = table[["conflict_free_in_place", "conflict_free_in_place[hopper]"]].min(axis=1).dropna()
        dd_t = table.loc["transpose", "d_designated"]
        summary["dmm"] = {"copy_ns": copy, "conflict_free_max_ratio": float((cf / copy).max()),
                          "conflict_free_paper_model_max_ratio": float((table["conflict_free"] / copy).max()),
                          "in_place_max_ratio": float((inplace / copy).max()),
                          "d_designated_transpose_over_conflict_free": float(dd_t / cf["transpose"])}
    if "rap" not in skip:
        rap = rap_table(args.repeats, 20000)
        rap.to_csv(out / "rap.csv", index=False)
        print("\nRAP, 32x32 doubles, ns per transpose")
        print(rap.set_index("kernel").ns.round(1).to_string())
        ns = rap.set_index("kernel").ns
        summary["rap"] = {"crsw_rap_over_drdw_raw": float(ns["transpose_crsw[rap]"] / ns["transpose_drdw[raw]"]),
                          "crsw_rap_hw_over_drdw_raw": float(ns["transpose_crsw[rap-hw]"] / ns["transpose_drdw[raw]"])}
    if "transpose" not in skip:
        tr = transpose_table(nbar_t, args.repeats)
        tr.to_csv(out / "transpose.csv", index=False)
        ours, cupy_t, copy = best(tr, "hmm_transpose"), best(tr, "cupy_transpose"), best(tr, "cupy_copy")
        print(f"\ntranspose {nbar_t}^2 float32: memtune {ours:.3f} ms, CuPy a.T copy {cupy_t:.3f} ms, copy {copy:.3f} ms")
        summary["transpose"] = {"ours_ms": ours, "over_copy": ours / copy, "cupy_over_ours": cupy_t / ours,
                                "best_params": tr[tr.kernel == "hmm_transpose"].sort_values("median_ms").params.iloc[0]}
    if pool:
        schedules_by_perm = {}
        for job in jobs:
            name, sched, seconds = job.result()
            schedules_by_perm[name] = sched
            print(f"schedule for {name} (n = {n}): {seconds:.1f} s on the CPU")
        pool.shutdown()
        pt = permutation_table(n, args.repeats, schedules_by_perm)
        pt.to_csv(out / "permutation.csv", index=False)
        pt["mode"] = pt.params.map(lambda p: p.get("mode", ""))
        by_mode = pt[pt.kernel == "hmm_scheduled_permutation"].groupby(["perm", "mode"]).median_ms.min().unstack()
        print("\nscheduled permutation by shared-memory mode (ms)")
        print(by_mode.round(3).to_string())
        table = pt.groupby(["perm", "kernel"]).median_ms.min().unstack()
        print(f"\npermutation of {n} float32 (ms, best parameters)")
        print(table.round(3).to_string())
        sched_t = table["hmm_scheduled_permutation"]
        r = table.loc["random"]
        summary["permutation"] = {
            "scheduled_random_ms": r["hmm_scheduled_permutation"],
            "scatter_over_scheduled": r["cupy_scatter"] / r["hmm_scheduled_permutation"],
            "gather_over_scheduled": r["cupy_gather"] / r["hmm_scheduled_permutation"],
            "scheduled_over_copy": r["hmm_scheduled_permutation"] / r["cupy_copy"],
            "scheduled_spread": float(sched_t.max() / sched_t.min() - 1)}
    print("\nsummary")
    print(json.dumps(summary, indent=1, default=str))
    (out / "summary.json").write_text(json.dumps(summary, indent=1, default=str))


if __name__ == "__main__":
    main()

"""Record exhaustive grids of measurements for the replay comparison of search strategies (GPU).

Every feasible point of each case's search space is measured once through the tuner's
``measure`` objective (output checked against numpy, first run under a time limit), and the
case's peer and the copy of the same size are measured beside it. The CSV is what
``--objective replay`` and ``bench/replay_compare.py`` read.
Run: ``python bench/record_grids.py [--out DIR] [--repeats R] [--only KERNEL[,KERNEL...]]``.
"""
from __future__ import annotations

import json
import time

import pandas as pd
from common import setup

from memtune import kernels
from memtune.kernels.timing import measure
from memtune.tuner import TrialFailed, problem
from memtune.tuner.objectives import MeasureObjective

CASES = [("sat_1pr1w", 8192 ** 2, {}), ("sat_1pr1w", 16384 ** 2, {}),
         ("hmm_scheduled_permutation", 1 << 22, {"perm": "random"}), ("hmm_transpose", 16384 ** 2, {}),
         ("conv_hmm", 4096 ** 2, {"v": 3}), ("matmul_hmm", 4096 ** 2, {}),
         ("prefix_sums_lookback", 1 << 28, {}), ("sat_1r1w_lookback", 16384 ** 2, {})]
TIME_LIMIT_MS = 200.0


def record(name, size, case, repeats, device):
    prob = problem(name, size, "float32", **case)
    objective = MeasureObjective(prob, repeats=repeats, time_limit_ms=TIME_LIMIT_MS)
    rows = []
    for params in prob.points():
        row = {"device": device, "kernel": name, "size": size, "dtype": "float32", "case": json.dumps(prob.case),
               "params": json.dumps(params, sort_keys=True)}
        try:
            got = objective(params)
            row.update(median_ms=got.time_ms, iqr_ms=got.iqr_ms, status="ok", reason="")
        except TrialFailed as exc:
            row.update(median_ms=float("nan"), iqr_ms=float("nan"), status="fail", reason=str(exc))
        rows.append(row)
    del objective
    for peer in filter(None, (prob.peer, "cupy_copy")):
        k = kernels.get(peer)
        try:
            inputs = k.make_inputs(size, "float32", 0, **(prob.peer_case if peer != "cupy_copy" else {}))
            ms = measure(k, inputs, repeats=repeats)["median_ms"]
            rows.append({"device": device, "kernel": peer, "size": size, "dtype": "float32", "case": json.dumps(prob.case),
                         "params": "{}", "median_ms": ms, "iqr_ms": 0.0, "status": "ok", "reason": ""})
            del inputs
        except Exception as exc:   # a peer that cannot take the size is recorded as failed
            rows.append({"device": device, "kernel": peer, "size": size, "dtype": "float32", "case": json.dumps(prob.case),
                         "params": "{}", "median_ms": float("nan"), "iqr_ms": float("nan"), "status": "fail",
                         "reason": f"{type(exc).__name__}: {exc}"})
    return rows


def main() -> None:
    args, out = setup(__doc__, repeats=10, extra=lambda p: p.add_argument("--only", default=None,
                                                                     help="comma-separated kernels to record"))
    from memtune.kernels.timing import Device

    device = Device.current().name
    rows = []
    for name, size, case in CASES:
        if args.only and name not in args.only.split(","):
            continue
        start = time.perf_counter()
        got = record(name, size, case, args.repeats, device)
        rows += got
        ok = [r for r in got if r["status"] == "ok" and r["kernel"] == name]
        best = min(ok, key=lambda r: r["median_ms"])
        print(f"{name} size {size}: {len(got)} rows, {len(ok)} ok, best {best['median_ms']:.4f} ms {best['params']}"
              f" ({time.perf_counter() - start:.0f} s)", flush=True)
        pd.DataFrame(rows).to_csv(out / "grids.csv", index=False)


if __name__ == "__main__":
    main()

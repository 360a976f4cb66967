"""Model-guided search against Optuna's TPE and random search, replayed on recorded H100 grids (CPU only).

For each recorded (kernel, size) case, every strategy runs as a study on the ``replay`` objective
until a configuration within 5 % of the exhaustive best has run; the count is the number of
configurations run (completed or failed: each would have cost a GPU run) up to and including it.
Pruned proposals (infeasible, duplicates, ruled out by the lower bound) cost nothing and are not
counted. Ten seeds per strategy. Goal: model-guided needs a median of at most 25 % of TPE's trials.
Run: ``python bench/replay_compare.py [--grid tuner/grids/nvidia-h100-80gb-hbm3.csv] [--seeds 10] [--out DIR]``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memtune.tuner import Grid, ReplayObjective, Study, load_model, problem  # noqa: E402
from memtune.tuner.study import counted  # noqa: E402

HERE = Path(__file__).resolve().parent
WITHIN = 1.05


def trials_to_target(prob, grid, cal, strategy, seed, target) -> int:
    study = Study(prob, ReplayObjective(prob, grid), cal, storage=":memory:", strategy=strategy, seed=seed,
                  guide=strategy == "model", name=f"{strategy}-{seed}")
    study.run(len(prob.points()), target_ms=target)
    runs = sorted((t for t in study.study.get_trials(deepcopy=False) if counted(t)), key=lambda t: t.number)
    for i, t in enumerate(runs, 1):
        if t.value is not None and t.value <= target:
            return i
    return len(prob.points())          # never reached: censored at the size of the space


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--grid", default=str(HERE.parent / "tuner" / "grids" / "nvidia-h100-80gb-hbm3.csv"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", default=str(HERE / "results" / "h100"))
    parser.add_argument("--only", nargs="+", metavar="KERNEL",
                        help="replay these kernels' cases and replace their rows of the existing replay_compare.csv")
    args = parser.parse_args()
    grid = Grid.read(args.grid)
    cal = load_model(grid.device())
    cases = grid.frame[~grid.frame.kernel.str.startswith("cupy_")][["kernel", "size", "dtype", "case"]].drop_duplicates()
    if args.only:
        cases = cases[cases.kernel.isin(args.only)]
    rows = []
    for case in cases.itertuples():
        prob = problem(case.kernel, int(case.size), case.dtype, **json.loads(case.case))
        best = grid.best_ms(case.kernel, int(case.size), case.dtype)
        row = {"kernel": case.kernel, "size": int(case.size), "points": len(prob.points()), "best_ms": best}
        for strategy in ("model", "tpe", "random"):
            counts = [trials_to_target(prob, grid, cal, strategy, seed, best * WITHIN) for seed in range(args.seeds)]
            row[f"{strategy} median"] = float(np.median(counts))
            row[f"{strategy} runs"] = " ".join(map(str, counts))
        row["model / tpe"] = row["model median"] / row["tpe median"]
        rows.append(row)
        print(f"{case.kernel} {case.size}: model {row['model median']}, tpe {row['tpe median']}, "
              f"random {row['random median']}", flush=True)
    table = pd.DataFrame(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.only and (out / "replay_compare.csv").exists():
        kept = pd.read_csv(out / "replay_compare.csv")
        order = {kernel: i for i, kernel in enumerate(dict.fromkeys(kept.kernel))}
        table = pd.concat([kept[~kept.kernel.isin(args.only)], table], ignore_index=True)
        table = table.sort_values("kernel", key=lambda k: k.map(order).fillna(len(order)), kind="stable")
    table.to_csv(out / "replay_compare.csv", index=False)
    print(table.drop(columns=[c for c in table.columns if c.endswith(" runs")]).round(3).to_string(index=False))
    print(f"\nmedian over cases of model / TPE: {table['model / tpe'].median():.3f} (goal <= 0.25)")


if __name__ == "__main__":
    main()

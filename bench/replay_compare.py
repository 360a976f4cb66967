"""Model-guided search against Optuna's TPE and random search, replayed on recorded H100 grids (CPU only).

For each recorded (kernel, size) case, every strategy runs as a study on the ``replay`` objective
until a configuration within 5 % of the exhaustive best has run; the count is the number of
configurations run (completed or failed: each would have cost a GPU run) up to and including it.
Pruned proposals (infeasible, duplicates, ruled out by the lower bound) cost nothing and are not
counted. Ten seeds per strategy. Goal: model-guided needs a median of at most 25 % of TPE's trials.
``--heldout`` replays the held-out family grids instead (``bench/offladder.py``'s: every configuration of each
family's algorithms at sizes no study or shipped grid recorded), each algorithm of at least ``MIN_POINTS``
recorded configurations at each size a case, and writes ``replay_heldout.csv``.
Run: ``python bench/replay_compare.py [--grid tuner/grids/nvidia-h100-80gb-hbm3.csv | --heldout GRID.csv ...]
[--seeds 10] [--out DIR]``.
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
from memtune.studies.fidelity import family_problem  # noqa: E402
from memtune.tuner.study import counted  # noqa: E402
from memtune.tuner.trials import config_key  # noqa: E402

HERE = Path(__file__).resolve().parent
WITHIN = 1.05
STRATEGIES = ("model", "tpe", "random")
MIN_POINTS = 20


def trials_to_target(prob, grid, cal, strategy, seed, target) -> int:
    study = Study(prob, ReplayObjective(prob, grid), cal, storage=":memory:", strategy=strategy, seed=seed,
                  guide=strategy == "model", name=f"{strategy}-{seed}")
    study.run(len(prob.points()), target_ms=target)
    runs = sorted((t for t in study.study.get_trials(deepcopy=False) if counted(t)), key=lambda t: t.number)
    for i, t in enumerate(runs, 1):
        if t.value is not None and t.value <= target:
            return i
    return len(prob.points())          # never reached: censored at the size of the space


def grid_cases(grid: Grid, only: list[str] | None) -> list:
    """(problem, grid) of every (kernel, size, dtype, case) the recorded grid holds but the peers', where at least
    MIN_POINTS of its configurations are of the kernel's space today (see :func:`replayable`)."""
    cases = grid.frame[~grid.frame.kernel.str.startswith("cupy_")][["kernel", "size", "dtype", "case"]].drop_duplicates()
    if only:
        cases = cases[cases.kernel.isin(only)]
    out = []
    for c in cases.itertuples():
        prob = problem(c.kernel, int(c.size), c.dtype, **json.loads(c.case))
        if replayable(prob, grid.rows(c.kernel, int(c.size), c.dtype).params):
            out.append((prob, grid))
    return out


def replayable(prob, params) -> bool:
    """Whether at least MIN_POINTS of the recorded configurations (JSON) are of the problem's space today: a
    grid recorded before its kernel took another parameter is not replayed (it would fail every proposal)."""
    space = {config_key(p) for p in prob.points()}
    if sum(config_key(json.loads(p)) in space for p in params) >= min(MIN_POINTS, len(space)):
        return True
    print(f"not replayed: {prob.kernel.name} at {prob.size} {prob.case} (its grid predates its space)", flush=True)
    return False


def heldout_cases(paths: list[str]) -> list:
    """(problem, grid) of each algorithm of a held-out family grid at each size and case it recorded at least
    MIN_POINTS configurations of (and :func:`replayable`), the grid's rows under the algorithm's name (float32)."""
    out = []
    for path in paths:
        frame = pd.read_csv(path, keep_default_na=False)
        frame = frame[~frame.kernel.str.startswith("cupy")].assign(dtype="float32")
        for (family, size, case), recorded in frame.groupby(["family", "size", "case"]):
            candidates = family_problem(family, int(size), "float32", **json.loads(case)).candidates
            for kernel, rows in recorded.groupby("kernel"):
                prob = candidates[kernel]
                if len(rows) >= MIN_POINTS and prob.kernel.name == kernel and replayable(prob, rows.params):
                    out.append((prob, Grid(rows.assign(size=rows["size"].astype("int64")), str(path))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--grid", default=str(HERE.parent / "tuner" / "grids" / "nvidia-h100-80gb-hbm3.csv"))
    parser.add_argument("--heldout", nargs="+", metavar="GRID", help="held-out family grids (bench/offladder.py's)")
    parser.add_argument("--strategies", nargs="+", default=list(STRATEGIES), choices=STRATEGIES)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", default=str(HERE / "results" / "h100"))
    parser.add_argument("--only", nargs="+", metavar="KERNEL",
                        help="replay these kernels' cases and replace their rows of the existing replay_compare.csv")
    args = parser.parse_args()
    cases = heldout_cases(args.heldout) if args.heldout else grid_cases(Grid.read(args.grid), args.only)
    rows = []
    for prob, grid in cases:
        cal = load_model(grid.device())
        best = grid.best_ms(prob.kernel.name, prob.size, prob.dtype)
        row = {"kernel": prob.kernel.name, "size": prob.size, "case": json.dumps(prob.case, sort_keys=True),
               "points": len(prob.points()), "best_ms": best}
        for strategy in args.strategies:
            counts = [trials_to_target(prob, grid, cal, strategy, seed, best * WITHIN) for seed in range(args.seeds)]
            row[f"{strategy} median"] = float(np.median(counts))
            row[f"{strategy} runs"] = " ".join(map(str, counts))
        if {"model", "tpe"} <= set(args.strategies):
            row["model / tpe"] = row["model median"] / row["tpe median"]
        rows.append(row)
        print(f"{prob.kernel.name} {prob.size} {row['case']}: " + ", ".join(
            f"{s} {row[s + ' median']}" for s in args.strategies), flush=True)
    table = pd.DataFrame(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.only and (out / "replay_compare.csv").exists():
        kept = pd.read_csv(out / "replay_compare.csv")
        order = {kernel: i for i, kernel in enumerate(dict.fromkeys(kept.kernel))}
        table = pd.concat([kept[~kept.kernel.isin(args.only)], table], ignore_index=True)
        table = table.sort_values("kernel", key=lambda k: k.map(order).fillna(len(order)), kind="stable")
    table.to_csv(out / ("replay_heldout.csv" if args.heldout else "replay_compare.csv"), index=False)
    print(table.drop(columns=[c for c in table.columns if c.endswith(" runs")]).round(3).to_string(index=False))
    if "model / tpe" in table:
        print(f"\nmedian over cases of model / TPE: {table['model / tpe'].median():.3f} (goal <= 0.25)")


if __name__ == "__main__":
    main()

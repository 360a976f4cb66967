"""Zero-shot transfer report: the committed predictions for a new GPU against its recorded grids (CPU only).

Per kernel case: the model's pick and its predicted time (from ``predictions.csv``, written before the
grids existed), the pick's measured time and its distance from the measured best, the prediction error
at the pick and over the grid, the rank correlation, how many runs the model-guided strategy, TPE and
random need to come within 5 % of the best (replayed on the new grid, ten seeds each), and the old
GPU's best configuration measured on the new one. The two-GPU timing (``bench/two_gpus.py``) is added
when its JSON is there.

    python bench/transfer.py --predictions bench/grids/h200/predictions.csv \\
        --new tuner/grids/nvidia-h200.csv --old tuner/grids/nvidia-h100-80gb-hbm3.csv --two-gpus bench/results/h200/two_gpus.json --out studies/results/h200
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from replay_compare import WITHIN, trials_to_target  # noqa: E402

from memtune.tuner import Grid, load_model, problem  # noqa: E402

GOAL_PICKS, GOAL_ERROR = 4 / 5, 0.20


def measured(grid: pd.DataFrame) -> pd.DataFrame:
    ok = grid[(grid.status == "ok") & ~grid.kernel.str.startswith("cupy_")].copy()
    ok["median_ms"] = ok.median_ms.astype(float)
    return ok


def case_row(key, pred: pd.DataFrame, new: pd.DataFrame, old: pd.DataFrame, grid: Grid, model, seeds: int) -> dict:
    kernel, size, dtype, case = key
    both = pred.merge(new[["params", "median_ms"]], on="params", how="inner")
    best = float(both.median_ms.min())
    pick = pred.sort_values("rank").iloc[0]
    pick_ms = both.loc[both.params == pick.params, "median_ms"]
    pick_ms = float(pick_ms.iloc[0]) if len(pick_ms) else float("nan")   # the pick failed on the device
    errors = (both.predicted_ms - both.median_ms).abs() / both.median_ms
    old_best = old.loc[old.median_ms.idxmin(), "params"] if len(old) else None
    old_on_new = new.loc[new.params == old_best, "median_ms"]
    row = {"kernel": kernel, "size": size, "case": case, "points": len(pred), "measured": len(both),
           "pick": pick.params, "pick predicted ms": float(pick.predicted_ms), "pick measured ms": pick_ms,
           "best ms": best, "pick / best": pick_ms / best, "pick within 5 %": bool(pick_ms <= best * WITHIN),
           "error at pick": abs(pick.predicted_ms - pick_ms) / pick_ms, "median error": float(errors.median()),
           "spearman": float(both.predicted_ms.rank().corr(both.median_ms.rank())),
           "old best": old_best, "old best on new / best": float(old_on_new.iloc[0]) / best if len(old_on_new) else None}
    prob = problem(kernel, size, dtype, **json.loads(case))
    for strategy in ("model", "tpe", "random"):
        runs = [trials_to_target(prob, grid, model, strategy, s, best * WITHIN) for s in range(seeds)]
        row[f"{strategy} runs"] = float(np.median(runs))
    return row


NAMED = ("sat_1pr1w", "hmm_scheduled_permutation", "conv_hmm", "matmul_hmm", "hmm_transpose")   # the five


def report(table: pd.DataFrame, device: str, two_gpus: list[dict]) -> str:
    picks, err = int(table["pick within 5 %"].sum()), float(table["median error"].median())
    named = table[table.kernel.isin(NAMED)].groupby("kernel")["pick within 5 %"].all()
    lines = [f"# Zero-shot transfer to {device}", "",
             "The predictions (`bench/grids/h200/predictions.csv`) were made from the probe's machine file alone "
             "and committed before this grid was recorded; the git history shows the order.", "",
             f"- model's pick within 5 % of the measured best: **{int(named.sum())} of {len(named)}** named kernels "
             f"(every case of the kernel; goal: {GOAL_PICKS * len(NAMED):.0f} of {len(NAMED)}), **{picks} of {len(table)}** cases",
             f"- median over cases of the median prediction error over the grid: **{err:.1%}** (goal ≤ {GOAL_ERROR:.0%})",
             f"- median error over every measured configuration: see each row; Spearman median "
             f"{table.spearman.median():.2f}", "",
             "| kernel | size | pick | predicted | measured | best | pick/best | err at pick | median err | "
             "Spearman | runs model / TPE / random | H100 best here |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for d in table.to_dict("records"):
        lines.append(
            f"| {d['kernel']} | {d['size']} | `{d['pick']}` | {d['pick predicted ms']:.4f} | {d['pick measured ms']:.4f} "
            f"| {d['best ms']:.4f} | {d['pick / best']:.3f} | {d['error at pick']:.1%} | {d['median error']:.1%} "
            f"| {d['spearman']:.2f} | {d['model runs']:g} / {d['tpe runs']:g} / {d['random runs']:g} "
            f"| {_ratio(d['old best on new / best'])} |")
    if two_gpus:
        lines += ["", "## One study on two GPUs", "",
                  "Each row is the whole command on a fresh SQLite storage and a fresh CuPy kernel cache, same seed; "
                  "the command itself is worker 0 on the first GPU and spawns worker 1 on the second.", "",
                  "| command | GPUs | wall (s) | before the first trial (s) | first to last trial (s) | after (s) "
                  "| trials per GPU | run twice | best (ms) | speed-up |",
                  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for two in two_gpus:
            for run in two["runs"]:
                per_gpu = ", ".join(f"{v} on {k.split('PCI ')[-1].rstrip(')')}" for k, v in run["per_gpu"].items())
                lines.append(f"| `{two['command'].replace(' W', ' ' + str(run['gpus']))}` | {run['gpus']} "
                             f"| {run['wall_s']:.1f} | {run['before_first_trial_s']:.1f} | {run['first_to_last_trial_s']:.1f} "
                             f"| {run['after_last_trial_s']:.1f} | {per_gpu} | {run['duplicates']} | {run['best_ms']:.4f} "
                             f"| {two['speedup'] if run['gpus'] == 2 else 1:.2f}× |")
    return "\n".join(lines) + "\n"


def _ratio(x) -> str:
    return "—" if x is None or not np.isfinite(x) else f"{x:.3f}× best"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--predictions", required=True, help="the predictions committed before the new grid")
    parser.add_argument("--new", required=True, help="the new GPU's recorded grid (CSV)")
    parser.add_argument("--old", required=True, help="the tuned GPU's recorded grid (CSV)")
    parser.add_argument("--two-gpus", nargs="*", default=[], help="JSON files written by bench/two_gpus.py")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    grid = Grid.read(args.new)
    model = load_model(grid.device())
    pred = pd.read_csv(args.predictions)
    new, old = measured(grid.frame), measured(pd.read_csv(args.old))
    rows = []
    for key, p in pred.groupby(["kernel", "size", "dtype", "case"], sort=False):
        sel = [(f.kernel == key[0]) & (f["size"] == key[1]) & (f.dtype == key[2]) for f in (new, old)]
        if not sel[0].any():
            continue                                # a case the new GPU's grid did not record
        rows.append(case_row(key, p, new[sel[0]], old[sel[1]], grid, model, args.seeds))
        print(f"{key[0]} {key[1]}: pick/best {rows[-1]['pick / best']:.3f}, median error {rows[-1]['median error']:.1%}",
              flush=True)
    table = pd.DataFrame(rows)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "transfer.csv", index=False)
    two = [json.loads(Path(p).read_text()) for p in args.two_gpus]
    text = report(table, grid.device(), two)
    (out / "transfer.md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

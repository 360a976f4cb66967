"""Zero-shot predictions: the physical model on one machine file, for every point of the recorded grid cases.

Nothing measured on the target device enters but its machine file (``memtune probe``). The output is
written, and committed, before that device's grids are recorded, so the transfer report compares
predictions that could not have seen the measurements.

    python bench/predict_grids.py --machine costmodel/physical/machines/nvidia-h200.toml \\
        --cases tuner/grids/nvidia-h100-80gb-hbm3.csv --out bench/grids/h200

Writes ``predictions.csv`` (every point: kernel, size, dtype, case, params, predicted_ms, rank) and
``predicted_best.md`` (the model's pick and time per case). CPU only.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memtune.costmodel.physical import load as load_machine_file  # noqa: E402
from memtune.costmodel.physical.model import PhysicalModel  # noqa: E402
from memtune.tuner import problem  # noqa: E402


def grid_cases(grid_csv: Path) -> list[tuple[str, int, str, dict]]:
    """The (kernel, size, dtype, case) of every tunable case of a recorded grid, peers left out."""
    frame = pd.read_csv(grid_csv)
    frame = frame[~frame.kernel.str.startswith("cupy_")]
    cases = frame[["kernel", "size", "dtype", "case"]].drop_duplicates()
    return [(r.kernel, int(r.size), r.dtype, json.loads(r.case)) for r in cases.itertuples()]


def predict_case(model: PhysicalModel, kernel: str, size: int, dtype: str, case: dict) -> pd.DataFrame:
    prob = problem(kernel, size, dtype, **case)
    rows = [{"kernel": kernel, "size": size, "dtype": dtype, "case": json.dumps(prob.case),
             "params": json.dumps(p, sort_keys=True), "predicted_ms": prob.predict_ms(model, p)}
            for p in prob.points()]
    frame = pd.DataFrame(rows)
    frame["rank"] = frame.predicted_ms.rank(method="first").astype(int)
    return frame.sort_values("rank")


def main() -> int:
    here = Path(__file__).resolve().parent
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machine", required=True, help="machine file written by `memtune probe` on the target")
    parser.add_argument("--cases", default=str(here.parent / "tuner" / "grids" / "nvidia-h100-80gb-hbm3.csv"), help="grid whose cases to predict")
    parser.add_argument("--out", required=True, help="folder for predictions.csv and predicted_best.md")
    args = parser.parse_args()
    machine = load_machine_file(path=args.machine)
    model = PhysicalModel(machine)
    frames = [predict_case(model, *c) for c in grid_cases(Path(args.cases))]
    table = pd.concat(frames, ignore_index=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "predictions.csv", index=False)
    picks = table[table["rank"] == 1]
    lines = [f"# Zero-shot predictions for {machine.device}", "",
             f"The physical model on `{Path(args.machine).name}` alone (no measurement of this device but its probe); "
             "written before any grid of this device was recorded.", "",
             "| kernel | size | case | model's pick | predicted (ms) | points |", "| --- | --- | --- | --- | --- | --- |"]
    for r in picks.itertuples():
        points = int((table.kernel == r.kernel).mul(table["size"] == r.size).sum())
        lines.append(f"| {r.kernel} | {r.size} | `{r.case}` | `{r.params}` | {r.predicted_ms:.4f} | {points} |")
    (out / "predicted_best.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What every study shares: measuring (GPU), adding the cost model's predictions, the report.

A study measures into one long table, one row per timed configuration:

    study, group, algorithm (a kernel name), variant (permutation, mapping, ...), size, nbar, dtype,
    params (JSON), case (JSON), kind (ours | peer | copy | cpu), measured_ms

and, where the seed printed a number for that row, ``paper`` (in the seed's unit, named in
``paper_unit``). :func:`analyse` adds ``predicted_ms`` from the cost model and the relative
error; :func:`write` puts the CSV, the plots and the Markdown report in one folder. Only measuring
needs a GPU: a recorded CSV goes through everything else anywhere (``--from``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import kernels
from ..kernels.timing import measure

PAPER = Path(__file__).resolve().parent / "paper"
COLUMNS = ["study", "group", "algorithm", "variant", "size", "nbar", "dtype", "params", "case", "kind", "measured_ms"]


def paper_table(name: str) -> pd.DataFrame:
    return pd.read_csv(PAPER / f"{name}.csv")


def timed(name: str, size: int, dtype: str = "float32", params: dict | None = None, case: dict | None = None,
          repeats: int = 10, inputs=None, **row) -> dict:
    """One measurement as a study row (GPU)."""
    k = kernels.get(name)
    inputs = inputs or k.make_inputs(size, dtype, 0, **(case or {}))
    got = measure(k, inputs, repeats=repeats, **(params or {}))
    kind = "copy" if name in ("cupy_copy", "dmm_copy") else ("peer" if k.peer else "ours")
    return {"algorithm": name, "size": size, "dtype": dtype, "params": json.dumps(got["params"], default=str),
            "case": json.dumps(case or {}), "kind": kind, "measured_ms": got["median_ms"], **row}


@dataclass(frozen=True)
class Report:
    title: str
    source: str
    changes: str          # what changed since the paper's GPU, and why (two or three sentences)


class Study:
    name = ""          # the seeds' chapter it re-runs (kernels of that chapter carry it as their chapter)
    report = Report("", "", "")
    compete = ("group", "variant", "size", "dtype")   # rows that solve one problem: the model picks among them

    def measure(self, repeats: int = 10) -> pd.DataFrame:      # GPU
        raise NotImplementedError

    def tables(self, frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
        raise NotImplementedError

    def plots(self, frame: pd.DataFrame, out: Path) -> list[str]:
        return []


def analyse(frame: pd.DataFrame, model) -> pd.DataFrame:
    """Add the cost model's prediction (ms) and its relative error to every row of ours it can predict."""
    frame = frame.copy()
    predicted = []
    for row in frame.itertuples():
        value = np.nan
        if row.kind == "ours" and row.algorithm in kernels.KERNELS:
            try:
                value = model.predict_ms(kernels.get(row.algorithm), int(row.size), row.dtype,
                                               json.loads(row.params), json.loads(row.case))
            except Exception:   # a kernel the model cannot cost at this point: no prediction
                value = np.nan
        predicted.append(value)
    frame["predicted_ms"] = predicted
    frame["relative_error"] = (frame.predicted_ms - frame.measured_ms).abs() / frame.measured_ms
    return frame


def model_picks(frame: pd.DataFrame, by=("group", "variant", "size", "dtype")) -> pd.DataFrame:
    """Per group of competing algorithms: the model's pick, the measured fastest, and whether the pick is within 10 %."""
    ours = frame[(frame.kind == "ours") & frame.predicted_ms.notna()]
    rows = []
    for key, grp in ours.groupby(list(by)):
        best = grp.groupby("algorithm").measured_ms.min()
        pred = grp.groupby("algorithm").predicted_ms.min()
        if len(best) < 2:
            continue
        pick = pred.idxmin()
        rows.append({**dict(zip(by, key)), "model_pick": pick, "fastest": best.idxmin(),
                     "pick_over_fastest": float(best[pick] / best.min()), "right": bool(best[pick] <= 1.1 * best.min())})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame, digits: int = 4) -> str:
    def cell(v):
        if isinstance(v, float):
            return "—" if np.isnan(v) else f"{v:.{digits}g}"
        return str(v)
    head = "| " + " | ".join(map(str, table.columns)) + " |"
    rule = "| " + " | ".join("---" for _ in table.columns) + " |"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([head, rule] + body)


def _model_name(model) -> str:
    return "The physical model (machine file only)" if model.name == "physical" else "The fitted refinement"


def write(study: Study, frame: pd.DataFrame, out: Path, model) -> Path:
    """The CSV, the plots and the Markdown report of one study in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    frame = analyse(frame, model)
    frame.to_csv(out / f"{study.name}.csv", index=False)
    plots = study.plots(frame, out)
    ours = frame[frame.relative_error.notna()]
    picks = model_picks(frame, study.compete)
    lines = [f"# {study.report.title}", "", f"Source: {study.report.source}. Device: "
             f"{', '.join(sorted(set(frame.get('device', pd.Series(['this GPU'])).astype(str))))}; "
             f"model: {_model_name(model).lower()} of {model.device}.", "", study.report.changes, ""]
    if len(ours):
        lines += [f"{_model_name(model)}: median relative error {ours.relative_error.median():.1%} over {len(ours)} "
                  f"measurements; its pick is within 10 % of the fastest in {picks.right.sum() if len(picks) else 0} "
                  f"of {len(picks)} groups.", ""]
    for title, table in study.tables(frame):
        lines += [f"## {title}", "", markdown(table), ""]
    lines += [f"![{p}]({p})" for p in plots]
    path = out / f"{study.name}.md"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def plot_lines(frame: pd.DataFrame, x: str, y: str, series: str, path: Path, title: str, logx=True, logy=True,
               ylabel="time (ms)") -> str:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for key, grp in frame.groupby(series):
        grp = grp.sort_values(x)
        ax.plot(grp[x], grp[y], marker="o", ms=3, label=str(key))
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name

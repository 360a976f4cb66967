"""What every study shares: measuring (GPU), adding the cost model's predictions, the report.

A study measures into one long table, one row per timed configuration:

    study, group, algorithm (a kernel name), variant (permutation, mapping, ...), size, nbar, dtype,
    params (JSON), case (JSON), kind (ours | peer | copy | cpu), measured_ms, seed

(``seed``: the seed of the random inputs, and of a random permutation; a row re-measured because it
contradicted its neighbours keeps its first time in ``first_measured_ms``: :func:`suspects`).

and, where the seed printed a number for that row, ``paper`` (in the seed's unit, named in
``paper_unit``). :func:`analyse` adds ``predicted_ms`` from the cost model and the relative
error; :func:`write` puts the CSV, the plots and the Markdown report in one folder. Only measuring
needs a GPU: a recorded CSV goes through everything else anywhere (``--from``).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import kernels
from ..kernels.timing import measure, round_robin

PAPER = Path(__file__).resolve().parent / "paper"
COLUMNS = ["study", "group", "algorithm", "variant", "size", "nbar", "dtype", "params", "case", "kind", "measured_ms"]


def paper_table(name: str) -> pd.DataFrame:
    return pd.read_csv(PAPER / f"{name}.csv")


def timed(name: str, size: int, dtype: str = "float32", params: dict | None = None, case: dict | None = None,
          repeats: int = 10, inputs=None, seed: int = 0, **row) -> dict:
    """One measurement as a study row (GPU); ``inputs``, where given, were made with ``seed``."""
    k = kernels.get(name)
    inputs = inputs or k.make_inputs(size, dtype, seed, **(case or {}))
    got = measure(k, inputs, repeats=repeats, **(params or {}))
    kind = "copy" if name in ("cupy_copy", "dmm_copy") else ("peer" if k.peer else "ours")
    return {"algorithm": name, "size": size, "dtype": dtype, "params": json.dumps(got["params"], default=str),
            "case": json.dumps(case or {}), "kind": kind, "measured_ms": got["median_ms"], "seed": seed, **row}


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

    def missing(self, frame: pd.DataFrame, repeats: int = 10) -> pd.DataFrame:      # GPU
        """Rows the study measures now that the recorded ``frame`` lacks (what it gained since), measured."""
        return pd.DataFrame()


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
    frame["relative_error"] = relative_error(frame.predicted_ms, frame.measured_ms)
    return frame


def relative_error(predicted, measured):
    """|predicted − measured| / measured, elementwise."""
    return abs(predicted - measured) / measured


CONFIG = ["algorithm", "size", "dtype", "params", "case"]      # what the model sees of a row
# what a re-measured row shows (bench/recheck_studies.py's log, the fidelity report's list)
REMEASURED_COLUMNS = ["algorithm", "size", "dtype", "variant", "seed", "first_measured_ms", "measured_ms", "remeasured"]


def model_picks(frame: pd.DataFrame, by=("group", "variant", "size", "dtype"), once: bool = False) -> pd.DataFrame:
    """Per group of competing algorithms: the model's pick, the measured fastest, and whether the pick is within 10 %.

    ``once``: groups that hold the same configurations are one problem, counted once (:func:`_problems_once`).
    """
    ours = frame[(frame.kind == "ours") & frame.predicted_ms.notna()]
    groups = list(ours.groupby(list(by)))
    if once:
        groups = _problems_once(groups)
    rows = []
    for key, grp in groups:
        best = grp.groupby("algorithm").measured_ms.min()
        pred = grp.groupby("algorithm").predicted_ms.min()
        if len(best) < 2:
            continue
        pick = pred.idxmin()
        rows.append({**dict(zip(by, key)), "model_pick": pick, "fastest": best.idxmin(),
                     "pick_over_fastest": float(best[pick] / best.min()), "right": bool(best[pick] <= 1.1 * best.min())})
    return pd.DataFrame(rows)


def _problems_once(groups: list) -> list:
    """Groups holding the same configurations (Table 5.3's 100 seeds, and Table 5.2's random permutation of that
    size) are one problem to the model: kept once, under the first group's key, each configuration at the median
    of its repeats."""
    merged: dict = {}
    for key, grp in groups:
        signature = frozenset(_config_keys(grp))
        merged.setdefault(signature, (key, []))[1].append(grp)
    return [(key, _once(pd.concat(parts))) for key, parts in merged.values()]


def _once(rows: pd.DataFrame) -> pd.DataFrame:
    """Each configuration once: the median of its repeats' times, the first of everything else, the count."""
    grouped = rows.groupby(_config_keys(rows), sort=False)     # first appearance order, as head(1) keeps
    return grouped.head(1).assign(measured_ms=grouped.measured_ms.median().to_numpy(),
                                  repeats=grouped.size().to_numpy()).reset_index(drop=True)


def _config_keys(rows: pd.DataFrame) -> pd.Series:
    return rows[CONFIG].astype(str).apply(tuple, axis=1)


def distinct(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows the model costs, each configuration once (:data:`CONFIG`: Table 5.3's 100 random permutations of
    one size and dtype are one configuration, since the model prices a large random permutation by its expected
    D_w, from which the seeds' own D_w/n depart by at most 2.5e-5), its error recomputed at the median of its repeats."""
    once = _once(frame[frame.relative_error.notna()])
    return once.assign(relative_error=relative_error(once.predicted_ms, once.measured_ms))


# A row contradicts its neighbours when it is this far off the median of its configuration's repeats, or when a
# larger size of the same series ran this much faster than a smaller one (each step of a series at least doubles
# the data). Below LAUNCH_BOUND_MS a kernel's time is its launch and does not grow with size: the H100's
# re-measured one-launch sums at 1024-16384 elements wander 6.5-8.2 us in either order, so they are not compared.
REPEAT_SPREAD = 1.2
INVERSION = 0.9
LAUNCH_BOUND_MS = 0.010


@dataclass(frozen=True)
class Suspect:
    row: int                        # the frame's index
    reason: str
    neighbours: tuple[int, ...]     # the rows it contradicts, re-measured beside it


def suspects(frame: pd.DataFrame) -> list[Suspect]:
    """Rows that contradict their neighbours: a repeat far above its configuration's median, or a size of a
    series that ran faster than a smaller size (the same algorithm, variant, dtype and case)."""
    out = []
    for _, grp in frame.groupby(_config_keys(frame)):
        if len(grp) >= 3:
            median = grp.measured_ms.median()
            typical = tuple((grp.measured_ms - median).abs().nsmallest(2).index)
            for i in grp.index[grp.measured_ms > REPEAT_SPREAD * median]:
                out.append(Suspect(int(i), f"{grp.measured_ms[i] / median:.2f}x the median of its {len(grp)} "
                                           "repeats", tuple(int(t) for t in typical)))
    series = frame.assign(_variant=frame.get("variant", pd.Series("", index=frame.index)).fillna("").astype(str))
    for _, grp in series.groupby(["group", "algorithm", "_variant", "dtype", "case", "kind"]):
        by_size = grp.groupby("size").measured_ms.median().sort_index()
        for small, large in zip(by_size.index[:-1], by_size.index[1:]):
            if by_size[large] < INVERSION * by_size[small] and by_size[small] > LAUNCH_BOUND_MS:
                i, j = grp.index[grp["size"] == large][0], grp.index[grp["size"] == small][0]
                out.append(Suspect(int(i), f"{by_size[large]:.4g} ms at size {large}, faster than "
                                           f"{by_size[small]:.4g} ms at {small}", (int(j),)))
    return out


def recheck(frame: pd.DataFrame, found: list[Suspect], rounds: int = 5, repeats: int = 10) -> pd.DataFrame:
    """Re-measure each suspect row with the rows it contradicts, round-robin over ``rounds`` (GPU): those rows'
    ``measured_ms`` become the median of the rounds, their first time kept in ``first_measured_ms`` and why in
    ``remeasured`` (the reason, or the CSV line of the row it was re-measured beside)."""
    targets = sorted({i for s in found for i in (s.row, *s.neighbours)})
    made = [_inputs_of(frame.loc[i]) for i in targets]
    times = dict(zip(targets, round_robin([functools.partial(_median_ms, *m, repeats) for m in made], rounds)))
    why = {i: f"beside row {s.row + 2}" for s in found for i in s.neighbours} | {s.row: s.reason for s in found}
    frame = frame.copy()
    for column, empty in (("first_measured_ms", np.nan), ("remeasured", "")):
        if column not in frame:
            frame[column] = empty
    frame["remeasured"] = frame.remeasured.fillna("").astype(str)
    for i in targets:
        if np.isnan(frame.at[i, "first_measured_ms"]):
            frame.at[i, "first_measured_ms"] = frame.at[i, "measured_ms"]
        frame.at[i, "measured_ms"] = float(np.median(times[i]))
        frame.at[i, "remeasured"] = why[i]
    return frame


def _median_ms(kernel, inputs, params, repeats) -> float:
    return measure(kernel, inputs, repeats=repeats, **params)["median_ms"]


def _inputs_of(row: pd.Series):
    """The kernel, the inputs and the parameters a recorded row was measured with (a Series: index by name)."""
    k = kernels.get(row["algorithm"])
    seed = int(row["seed"]) if "seed" in row and not pd.isna(row["seed"]) else 0
    inputs = k.make_inputs(int(row["size"]), str(row["dtype"]), seed, **json.loads(row["case"]))
    return k, inputs, json.loads(row["params"])


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
    frame.attrs["model"] = _model_name(model).lower()        # what the plots' dashed lines are
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
               ylabel="time (ms)", unit: float = 1.0, levels: pd.DataFrame | None = None) -> str:
    """Every series of ``frame`` measured (solid) and, where the model costs it, predicted (dashed, same
    colour); ``levels``: rows measured at one point (a peer, the copy) drawn across the plot, dotted.
    ``unit`` scales the millisecond columns (1e6: ns)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.2, 4.6))
    for key, grp in frame.groupby(frame[series].fillna("").astype(str)):
        grp = grp.sort_values(x)
        line, = ax.plot(grp[x], grp[y] * unit, marker="o", ms=3, label=key)
        if "predicted_ms" in grp and grp.predicted_ms.notna().any():
            ax.plot(grp[x], grp.predicted_ms * unit, ls="--", lw=1, color=line.get_color())
    for row in (levels if levels is not None else frame.iloc[:0]).itertuples():
        ax.axhline(row.measured_ms * unit, ls=":", lw=1.2, color="grey")
        variant = row.variant if isinstance(row.variant, str) and row.variant not in row.algorithm else ""
        ax.annotate(f"{row.algorithm} {variant}".strip(),
                    (0.01, row.measured_ms * unit), xycoords=("axes fraction", "data"), fontsize=6, color="dimgrey")
    if "predicted_ms" in frame and frame.predicted_ms.notna().any():
        ax.plot([], [], ls="--", lw=1, color="black", label=f"dashed: {frame.attrs.get('model', 'the model')}")
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=6, ncol=2)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path.name

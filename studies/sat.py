"""Table 6.2 (000 ch. 6): summed area tables, with the tuner's best r for (1+r)R1W beside the paper's."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd

from .. import tuner
from .base import Report, Study, paper_table, plot_lines, timed

SIZES = (1024, 2048, 4096, 8192, 16384)      # Table 6.2 has 1K ... 18K; a subsample that spans it
ALGS = ("sat_2r2w", "sat_4r4w", "sat_4r1w", "sat_2r1w", "sat_1r1w", "sat_1r1w_lookback", "sat_tiles_lookback")
TRIALS = 8


def best_r(nbar, dtype, repeats):
    """The tuner's best (rows, r) for (1+r)R1W: a model-guided study on the GPU."""
    prob = tuner.problem("sat_1pr1w", nbar * nbar, dtype)
    obj = tuner.MeasureObjective(prob, repeats=repeats, time_limit_ms=2000)
    study = tuner.Study(prob, obj, tuner.load_model(obj.device), storage=":memory:", seed=0)
    return study.run(TRIALS).best_params


class SAT(Study):
    name = "sat"      # the seeds' chapter it re-runs
    compete = ("group", "size", "dtype")
    report = Report(
        "Summed area tables (000 Table 6.2) on the H100",
        "000 ch. 6, GTX 780 Ti, double",
        "A kernel launch on the H100 costs microseconds while a pass over the matrix is 7x faster than on the "
        "GTX 780 Ti, so the 1R1W wave front (2n̄/32 launches) loses to 2R1W everywhere, and (1+r)R1W prefers "
        "large r. The single-launch look-back 1R1W removes the barriers and is the fastest algorithm at every size.")

    def measure(self, repeats=10):
        rows = []
        for nbar in SIZES:
            for dtype in ("float64", "float32"):
                n = nbar * nbar
                rows += [self._algorithm(name, nbar, dtype, repeats) for name in ALGS
                         if not (name == "sat_4r1w" and nbar > 8192)]   # 2n̄ launches of a diagonal each: minutes at 16K
                rows.append(timed("sat_1pr1w", n, dtype, {"r": 0.25}, {}, repeats, study=self.name, group="Table 6.2",
                                  variant="1.25R1W", nbar=nbar))
                best = best_r(nbar, dtype, repeats)
                rows.append(timed("sat_1pr1w", n, dtype, best, {}, repeats, study=self.name, group="Table 6.2",
                                  variant="best r", nbar=nbar))
                rows.append(timed("cupy_double_cumsum", n, dtype, {}, {}, 3, study=self.name, group="Table 6.2",
                                  variant="", nbar=nbar))
                rows.append(timed("cupy_copy", n, dtype, {}, {"perm": "identical"}, repeats, study=self.name,
                                  group="Table 6.2", variant="", nbar=nbar))
        return pd.DataFrame(rows)

    def missing(self, frame, repeats=10):
        """The algorithms added to the study after it was recorded, at every size and dtype of the record."""
        new = [name for name in ALGS if name not in set(frame.algorithm)]
        return pd.DataFrame([self._algorithm(name, nbar, dtype, repeats) for nbar in SIZES
                             for dtype in ("float64", "float32") for name in new])

    def _algorithm(self, name, nbar, dtype, repeats):
        return timed(name, nbar * nbar, dtype, {}, {}, repeats if name != "sat_4r1w" else 2, study=self.name,
                     group="Table 6.2", variant="", nbar=nbar)

    def tables(self, frame):
        f = frame.copy()
        f["name"] = np.where(f.variant == "1.25R1W", "sat_1.25r1w", np.where(f.variant == "best r", "sat_1pr1w_best", f.algorithm))
        paper = paper_table(self.name).rename(columns={"algorithm": "name"})
        joined = f.merge(paper, on=["name", "nbar", "dtype"], how="left")
        table = joined.pivot_table(index=["dtype", "name"], columns="nbar", values="measured_ms")
        model = joined[joined.kind == "ours"].pivot_table(index=["dtype", "name"], columns="nbar", values="predicted_ms")
        pap = paper.pivot_table(index="name", columns="nbar", values="paper_ms")[[s for s in SIZES if s <= 16384]]
        r = f[f.variant == "best r"].copy()
        r["r"] = r.params.map(lambda p: json.loads(p)["r"])
        rt = r.pivot_table(index="dtype", columns="nbar", values="r")
        paper_r = paper[paper.name == "best_r"].set_index("nbar").paper_ms.rename("paper r (780 Ti, double)")
        return [("Measured on the H100 (ms)", table.round(3).reset_index()),
                ("The model (ms)", model.round(3).reset_index()),
                ("Paper, GTX 780 Ti, double (ms; sizes of the subsample)", pap.round(3).reset_index()),
                ("Best r for (1+r)R1W: the tuner on the H100 beside Table 6.2",
                 pd.concat([rt, paper_r.to_frame().T[[s for s in SIZES if s in paper_r.index]]]).reset_index())]

    def plots(self, frame, out):
        f = frame[(frame.dtype == "float64")].copy()
        variant = f.variant.fillna("")          # a recorded CSV reads an empty variant as missing
        f["series"] = np.where(variant != "", f.algorithm + " " + variant, f.algorithm)
        return [plot_lines(f, "nbar", "measured_ms", "series", out / "sat.png", "SAT of n̄ x n̄ doubles, H100")]

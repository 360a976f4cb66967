"""Tables II and III (004): congestion of RAW/RAS/RAP by simulation, and the transposes timed on the GPU."""
from __future__ import annotations

import pandas as pd

from ..costmodel import mappings

from .base import Report, Study, paper_table, plot_lines, timed

ALGORITHMS = ("transpose_crsw", "transpose_srcw", "transpose_drdw")
MAPPINGS = ("raw", "ras", "rap", "rap-hw")


class RAP(Study):
    name = "rap"      # the seeds' chapter it re-runs
    report = Report(
        "Random address permute-shift (004 Tables II and III) on the H100",
        "004 §§V–VI, GTX Titan",
        "Congestion is a property of the mappings and is reproduced exactly by simulation. On the H100, doubles are "
        "served per half-warp by 32 four-byte banks, so the paper's RAP (distinct modulo 32) leaves pairwise "
        "conflicts modulo 16; `rap-hw`, a RAP whose halves are distinct modulo 16, restores the paper's result.")

    def measure(self, repeats=10):
        rows = []
        for alg in ALGORITHMS:
            for m in MAPPINGS:
                rows.append(timed(f"{alg}[{m}]", 1024, "float64", {"reps": 10000}, {}, repeats, study=self.name,
                                  group="Table III", variant=m, nbar=32))
        return pd.DataFrame(rows)

    def tables(self, frame):
        sim = []
        for m in ("raw", "ras", "rap"):
            for pattern in ("contiguous", "stride", "diagonal", "random"):
                for w in (16, 32, 64, 128, 256):
                    sim.append({"mapping": m, "pattern": pattern, "w": w,
                                "simulated": mappings.congestion(m, pattern, w, trials=2000, seed=w).mean})
        t2 = pd.DataFrame(sim).merge(paper_table("rap_table_2"), on=["mapping", "pattern", "w"])
        f = frame.copy()
        f["mapping"], f["algorithm_"] = f.variant, f.algorithm.str.split("[").str[0]
        f["ns"], f["model_ns"] = f.measured_ms * 1e6, f.predicted_ms * 1e6
        t3 = f.merge(paper_table("rap").rename(columns={"algorithm": "algorithm_"}), on=["algorithm_", "mapping"], how="left")
        return [("Table II: congestion (simulated, 2000 trials, against the paper)", t3_fmt(t2)),
                ("Table III: transposes of a 32 x 32 double matrix (ns)",
                 t3[["algorithm_", "mapping", "paper_ns", "model_ns", "ns"]].round(1))]

    def plots(self, frame, out):
        f = frame.copy()
        f["x"] = f.variant.map({m: i + 1 for i, m in enumerate(MAPPINGS)})
        f["series"] = f.algorithm.str.split("[").str[0]      # one line per transpose across the four mappings
        return [plot_lines(f, "x", "measured_ms", "series", out / "rap.png", "x: RAW, RAS, RAP, RAP-hw", logx=False,
                           ylabel="ns per transpose", unit=1e6)]


def t3_fmt(t2):
    return t2.round(3)

"""Figs 3–6 (002): CONV-HMM and MUL-HMM at 1024², swept over d, p, v and m, with the model's knee."""
from __future__ import annotations

import pandas as pd

from .. import kernels
from .base import Report, Study, plot_lines, timed

D_SWEEP = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
N = 1024 * 1024
SEED = 2


class ConvMatmul(Study):
    name = "conv_matmul"      # the seeds' chapter it re-runs
    report = Report(
        "Convolution and matrix multiplication on the HMM (002 Figs 3–6) on the H100",
        "002 §IV, GTX Titan (the figures' values are not printed; the comparison is of shapes and knees)",
        "The curves keep the paper's shape, time falling as 1/d until the throughput-bound regime. The knee moved "
        "from d = 32–64 on the 14-SM GTX Titan to d = 256–512 blocks on the 132-SM H100 (two to four resident "
        "blocks per SM), where the model, which sees d and p through occupancy, puts it at 128–1024 (within a factor "
        "1.5 of the measured knee in 10 of 17 series; the fidelity report has the table). Register tiles (r) "
        "matter far more than the paper's m on this GPU.")

    def measure(self, repeats=5):
        rows = []

        def sweep(name, params, case, label, series):
            inputs = kernels.get(name).make_inputs(N, "float32", SEED, **case)
            for d in D_SWEEP:
                rows.append(timed(name, N, "float32", {**params, "d": d}, case, repeats, inputs=inputs, seed=SEED,
                                  study=self.name, group=label, variant=series, nbar=1024, d_blocks=d))

        for p in (128, 256, 512, 1024):
            sweep("conv_hmm", {"p": p, "tile": 32}, {"v": 3}, "Fig. 3", f"p={p}")
        for v in range(1, 8):
            sweep("conv_hmm", {"p": 1024, "tile": 32}, {"v": v}, "Fig. 4", f"v={v}")
        for r in (1, 2, 4):
            sweep("matmul_hmm", {"m": 32, "r": r}, {}, "Fig. 5", f"r={r}")
        for m in (32, 64, 128):
            sweep("matmul_hmm", {"m": m, "r": m // 32}, {}, "Fig. 6", f"m={m}")
        rows.append(timed("cupy_ndimage_convolve", N, "float32", {}, {"v": 3}, repeats, study=self.name,
                          group="peers", variant="v=3", nbar=1024))
        rows.append(timed("cupy_matmul", N, "float32", {}, {}, repeats, study=self.name, group="peers",
                          variant="", nbar=1024))
        return pd.concat([pd.DataFrame(rows), self.missing(pd.DataFrame(rows), repeats)], ignore_index=True)

    def missing(self, frame, repeats=5):
        """The device copy of the 1024² floats, the figures' bandwidth floor (recorded after the sweeps)."""
        if (frame.kind == "copy").any():
            return pd.DataFrame()
        return pd.DataFrame([timed("cupy_copy", N, "float32", {}, {"perm": "identical"}, repeats, study=self.name,
                                   group="peers", variant="copy", nbar=1024)])

    def tables(self, frame):
        out = []
        for group in FIGURES:
            out.append((f"{group}: the smallest d within 10 % of the best, measured and in the model",
                        knees(frame[frame.group == group]).drop(columns="figure")))
        peers = frame[frame.group == "peers"][["algorithm", "variant", "measured_ms"]]
        out.append(("Peers at 1024² (ms)", peers))
        return out

    def plots(self, frame, out):
        peer = {"Fig. 3": "cupy_ndimage_convolve", "Fig. 4": "cupy_ndimage_convolve", "Fig. 5": "cupy_matmul",
                "Fig. 6": "cupy_matmul"}
        floors = frame[frame.group == "peers"]
        return [plot_lines(frame[frame.group == g], "d_blocks", "measured_ms", "variant", out / f"conv_matmul_{i}.png",
                           f"{g}, 1024², H100",
                           levels=floors[floors.algorithm.isin([peer[g], "cupy_copy"])])
                for i, g in enumerate(FIGURES, 3)]


FIGURES = ("Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6")


def knees(frame: pd.DataFrame) -> pd.DataFrame:
    """Per figure and series of a d sweep: the smallest d within 10 % of the best, measured and predicted."""
    rows = []
    for (group, series), grp in frame[frame.group.isin(FIGURES)].groupby(["group", "variant"]):
        best, model_best = grp.measured_ms.min(), grp.predicted_ms.min()
        measured = int(grp[grp.measured_ms <= 1.1 * best].d_blocks.min())
        model = int(grp[grp.predicted_ms <= 1.1 * model_best].d_blocks.min())
        rows.append({"figure": group, "series": series, "best ms": best, "measured knee d": measured,
                     "model knee d": model, "model / measured": model / measured,
                     "model ms at best": float(grp.loc[grp.measured_ms.idxmin(), "predicted_ms"])})
    return pd.DataFrame(rows)

"""Tables 5.2 and 5.3 (000 ch. 5): D-designated, S-designated and scheduled permutation on the HMM.

Schedules are coloured on the GPU as they are needed (0.1 s each at n = 2^22 on the H100).
"""
from __future__ import annotations

import pandas as pd

from .. import kernels
from ..costmodel import permutations as perms, schedules
from ..kernels.device import cupy
from .base import Report, Study, paper_table, plot_lines, timed

ALGS = ("hmm_permutation_d_designated", "hmm_permutation_s_designated", "hmm_scheduled_permutation")
SCHEDULED = {"mode": "designated", "tile": 64, "rows": 4, "threads": 128, "d": 4224}   # the tuner's best (bench/grids)
SIZES = (256, 512, 1024, 2048, 4096)
TABLE_5_3_PERMS = 100
SIDE = 2048


def _schedule(p):
    """The schedule of permutation ``p``, coloured on the GPU (0.1 s at 2^22: costmodel.colouring's pairing)."""
    cp = cupy()
    return schedules.hmm_schedule(cp.asarray(p), 32, xp=cp)


def _measure_case(name, n, dtype, perm, seed, sched, repeats, **row):
    k = kernels.get(name)
    case = {"perm": perm}
    extra = {"schedule": sched, "row_schedules": False} if name == "hmm_scheduled_permutation" else {}
    inputs = k.make_inputs(n, dtype, seed, **case, **extra)
    params = SCHEDULED if name == "hmm_scheduled_permutation" else {}
    return timed(name, n, dtype, params, case, repeats, inputs=inputs, seed=seed, **row)


class HMMPermutation(Study):
    name = "hmm_permutation"      # the seeds' chapter it re-runs
    report = Report(
        "Offline permutation on the HMM (000 Tables 5.2 and 5.3) on the H100",
        "000 ch. 5, GTX-680",
        "On the GTX-680 the scheduled permutation won from n̄ = 1024 up (2.45x over D-designated on 4M doubles); "
        "on the H100 that ratio is 1.2x, and the gather (S-designated) is the fastest up to n̄ = 2048: a 50 MB L2 "
        "and 32-byte sectors make casual accesses far cheaper than the model's D_w(P) rounds, while the five "
        "passes of the scheduled algorithm cost about 6.5 copies. It wins only where the data outgrow the L2 "
        "(floats at n̄ = 4096), and its time does not depend on the permutation, as the paper found.")

    def measure(self, repeats=10):
        rows = []
        for n in SIZES:
            named = {perm: perms.named(perm, n * n, 0) for perm in perms.NAMES}
            scheds = {perm: _schedule(p) for perm, p in named.items()}   # both dtypes share them
            dws = {perm: perms.distribution(p, 32) / (n * n) for perm, p in named.items()}
            for dtype in ("float32", "float64"):
                for perm in perms.NAMES:
                    sched = scheds[perm]
                    for name in ALGS:
                        rows.append(_measure_case(name, n * n, dtype, perm, 0, sched, repeats, study=self.name,
                                                  group="Table 5.2", variant=perm, nbar=n, dw_over_n=dws[perm]))
                    rows.append(timed("cupy_scatter", n * n, dtype, {}, {"perm": perm}, repeats, study=self.name,
                                      group="Table 5.2", variant=perm, nbar=n))
                rows.append(timed("cupy_copy", n * n, dtype, {}, {"perm": "identical"}, repeats, study=self.name,
                                  group="Table 5.2", variant="copy", nbar=n))
        for s in range(1, TABLE_5_3_PERMS + 1):
            p = perms.named("random", SIDE * SIDE, s)
            sched = _schedule(p)
            dw = perms.distribution(p, 32) / (SIDE * SIDE)
            for name in ALGS:
                rows.append(_measure_case(name, SIDE * SIDE, "float64", "random", s, sched, repeats, study=self.name,
                                          group="Table 5.3", variant=f"random#{s}", nbar=SIDE, dw_over_n=dw))
        return pd.DataFrame(rows)

    def tables(self, frame):
        t52 = frame[frame.group == "Table 5.2"].copy()
        paper = paper_table(self.name)
        t52 = t52.merge(paper, on=["algorithm", "variant", "nbar", "dtype"], how="left")
        wide = t52[t52.kind == "ours"].pivot_table(index=["dtype", "variant", "nbar"], columns="algorithm",
                                                   values="measured_ms").reset_index()
        pred = t52[t52.kind == "ours"].pivot_table(index=["dtype", "variant", "nbar"], columns="algorithm",
                                                   values="predicted_ms").add_suffix(" model").reset_index(drop=True)
        pap = t52[t52.kind == "ours"].pivot_table(index=["dtype", "variant", "nbar"], columns="algorithm",
                                                  values="paper_printed").add_suffix(" paper").reset_index(drop=True)
        peer = t52[t52.kind == "peer"].set_index(["dtype", "variant", "nbar"]).measured_ms.rename("cupy_scatter")
        copy = t52[t52.kind == "copy"].set_index(["dtype", "nbar"]).measured_ms.rename("copy")
        table = pd.concat([wide, pred, pap], axis=1).join(peer, on=["dtype", "variant", "nbar"]).join(copy, on=["dtype", "nbar"])
        t53 = frame[frame.group == "Table 5.3"]
        stats = t53.pivot_table(index="variant", columns="algorithm", values="measured_ms")
        dw = t53.groupby("variant").dw_over_n.first()
        summary = pd.DataFrame({"statistic": ["minimum", "average", "maximum"],
                                **{a: [stats[a].min(), stats[a].mean(), stats[a].max()] for a in stats.columns},
                                "dw_over_n": [dw.min(), dw.mean(), dw.max()]})
        ratio = (stats["hmm_permutation_d_designated"] / stats["hmm_scheduled_permutation"]).mean()
        return [("Table 5.2: ms on the H100, the model's ms and the paper's printed values (GTX-680)", table.round(4)),
                (f"Table 5.3: {len(stats)} random permutations of 4M doubles (ms); D-designated / scheduled = "
                 f"{ratio:.2f} (paper 2.45)", summary.round(5)),
                ("Table 5.3 on the GTX-680 (paper)", paper_table("hmm_permutation_table_5_3"))]

    def plots(self, frame, out):
        f = frame[(frame.group == "Table 5.2") & frame.variant.isin(("random", "copy")) & (frame.dtype == "float32")]
        return [plot_lines(f, "nbar", "measured_ms", "algorithm", out / "hmm_permutation.png",
                           "random permutation of n̄ x n̄ floats, H100")]

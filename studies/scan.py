"""Fig. 8 (001): sum, simple and optimal prefix sums in shared and in global memory, with CuPy's peers."""
from __future__ import annotations

import pandas as pd

from .base import Report, Study, plot_lines, timed

ALGS = ("sum", "prefix_sums_simple", "prefix_sums_optimal")
SHARED = [1 << e for e in range(5, 15)]
GLOBAL = [1 << e for e in range(10, 28, 2)]


def problem(name: str) -> str:
    """What a kernel computes: the sum or the prefix sums (algorithms compete only within one)."""
    return "sum" if "sum" in name and "prefix" not in name and "cumsum" not in name else "prefix sums"


class Scan(Study):
    name = "scan"      # the seeds' chapter it re-runs
    report = Report(
        "Sum and prefix sums (001 Fig. 8) on the H100",
        "001 §8 (Fig. 8; the figure's values are not printed, so the comparison is of shapes)",
        "As in the paper, the optimal prefix sums and the sum track the bandwidth while the simple prefix sums "
        "grow by log n. On the H100 every seed algorithm in global memory is launch-bound up to about 2^22 elements "
        "(one launch per step); the single-pass kernels (a grid-stride sum, a decoupled look-back scan) replace "
        "the steps with one launch and run near the copy.")

    def measure(self, repeats=10):
        rows = []
        for alg in ALGS:
            for n in SHARED:
                rows.append(timed(f"{alg}[shared]", n, "float32", {"reps": 100}, {}, repeats, study=self.name,
                                  group="Fig. 8 shared", variant=problem(alg), nbar=0))
            for n in GLOBAL:
                rows.append(timed(f"{alg}[global]", n, "float32", {}, {}, max(3, repeats // 2), study=self.name,
                                  group="Fig. 8 global", variant=problem(alg), nbar=0))
        for n in GLOBAL + [1 << 28]:
            for name in ("sum_single_pass", "prefix_sums_lookback", "cupy_sum", "cupy_cumsum"):
                rows.append(timed(name, n, "float32", {}, {}, repeats, study=self.name, group="beyond the seeds",
                                  variant=problem(name), nbar=0))
            rows.append(timed("cupy_copy", n, "float32", {}, {"perm": "identical"}, repeats, study=self.name,
                              group="beyond the seeds", variant="copy", nbar=0))
        return pd.DataFrame(rows)

    def tables(self, frame):
        out = []
        for group in ("Fig. 8 shared", "Fig. 8 global", "beyond the seeds"):
            f = frame[frame.group == group]
            t = f.pivot_table(index="size", columns="algorithm", values="measured_ms")
            m = f[f.kind == "ours"].pivot_table(index="size", columns="algorithm", values="predicted_ms").add_suffix(" model")
            out.append((f"{group}: ms per operation (measured, then the model)", t.join(m).round(5).reset_index()))
        return out

    def plots(self, frame, out):
        beside = frame[frame.kind.isin(("peer", "copy"))]      # CuPy's sum and cumsum and the copy, global sizes
        return [plot_lines(pd.concat([frame[(frame.group == g) & (frame.kind == "ours")],
                                      beside if g != "Fig. 8 shared" else beside.iloc[:0]]),
                           "size", "measured_ms", "algorithm", out / f"scan_{i}.png", g)
                for i, g in enumerate(("Fig. 8 shared", "Fig. 8 global", "beyond the seeds"))]

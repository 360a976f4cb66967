"""Tables 4.2 and 4.4 (000 ch. 4): offline permutation of 1024 numbers in one DMM, with Table 4.3's costs."""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..costmodel import permutations as perms
from ..costmodel import schedules

from .base import Report, Study, paper_table, plot_lines, timed

ARRAY = ["dmm_permutation_d_designated", "dmm_permutation_s_designated", "dmm_permutation_conflict_free"]
IN_PLACE = ("transpose", "shuffle", "bit-reversal")
REPS = 10000
COST_KEY = {"dmm_permutation_d_designated": "d-designated", "dmm_permutation_s_designated": "s-designated",
            "dmm_permutation_conflict_free": "conflict-free"}


class DMMPermutation(Study):
    name = "dmm_permutation"      # the seeds' chapter it re-runs
    report = Report(
        "DMM offline permutation (000 Tables 4.2, 4.3, 4.4) on the H100",
        "000 ch. 4, GTX-680 (64-bit and 32-bit bank modes)",
        "The GTX-680 had 32 banks of 64 bits in 64-bit mode; the H100 has 32 four-byte banks and serves a warp's "
        "8-byte accesses half a warp at a time, so the seeds' 32-lane schedules only pair up conflict-free for "
        "doubles: `bank_model=hopper` rebuilds them for 16 lanes. Shared memory is also some 5x faster per access, "
        "so the fitted time per unit of Table 4.3's cost is far below the paper's 50 ns.")

    def measure(self, repeats=10):
        rows = []
        for dtype, table in (("float64", "Table 4.2"), ("float32", "Table 4.4")):
            for perm in perms.NAMES:
                names = ARRAY + [n + "_in_place" for n in ARRAY if perm in IN_PLACE] + \
                    (["dmm_copy"] if perm == "identical" else [])
                for name in names:
                    models = ("paper", "hopper") if name.startswith("dmm_permutation_conflict_free") else ("paper",)
                    for bank in models:
                        rows.append(timed(name, 1024, dtype, {"reps": REPS, "bank_model": bank}, {"perm": perm},
                                          repeats, study=self.name, group=table, variant=perm, nbar=32))
        return pd.DataFrame(rows)          # the timing harness divides by the repetitions

    @staticmethod
    def costs() -> pd.DataFrame:
        """Table 4.3: congestion cost of each algorithm per permutation (64-bit mode, array-use)."""
        rows = []
        for perm in perms.NAMES:
            c = schedules.dmm_access_costs(perms.named(perm, 1024, 0), 32)
            for name, key in COST_KEY.items():
                rows.append({"algorithm": name, "variant": perm, "cost": c[key]["total_array"]})
        return pd.DataFrame(rows)

    def tables(self, frame):
        paper = paper_table(self.name)
        ours = frame[frame.params.str.contains('"paper"')].copy()
        ours["ns"] = ours.measured_ms * 1e6
        joined = ours.merge(paper, on=["algorithm", "variant", "dtype"], how="left")
        joined["model_ns"] = joined.predicted_ms * 1e6
        cols = ["group", "algorithm", "variant", "paper_ns", "model_ns", "ns"]
        out = [("Tables 4.2 / 4.4: ns per permutation (paper GTX-680, model, H100)", joined[cols].round(1))]
        hop = frame[frame.params.str.contains('"hopper"')].copy()
        hop["ns"] = hop.measured_ms * 1e6
        out.append(("Conflict-free with the H100 bank model (16-lane schedules)", hop[["group", "algorithm", "variant", "ns"]]))
        cost = self.costs().merge(ours[ours.group == "Table 4.2"][["algorithm", "variant", "ns"]], on=["algorithm", "variant"])
        unit = float(np.sum(cost.cost * cost.ns) / np.sum(cost.cost ** 2))
        cost["cost x unit (ns)"] = cost.cost * unit
        out.append((f"Table 4.3 cost x time unit: fitted unit {unit:.2f} ns per cost on the H100 (paper: 50 ns on the GTX-680)",
                    cost.round(2)))
        return out

    def plots(self, frame, out):
        f = frame[frame.params.str.contains('"paper"') & (frame.group == "Table 4.2")].copy()
        f["x"] = f.variant.map({p: i for i, p in enumerate(perms.NAMES)}) + 1
        copy = frame[(frame.kind == "copy") & (frame.group == "Table 4.2")]
        return [plot_lines(f, "x", "measured_ms", "algorithm", out / "dmm_permutation.png",
                           "1024 doubles, one block (x: identical, random, transpose, shuffle, bit-reversal)",
                           logx=False, ylabel="ns per permutation", unit=1e6, levels=copy)]

"""How far two builds of one table on one kind of GPU agree (no GPU: this reads their files).

    python bench/build_repeat.py FIRST.csv SECOND.csv [--device H100]

At every family point both tables record, the first build's answer is looked up in the second build's trials
(the same configuration, timed in the second run) and put over the second build's best there: a table whose
answer stays within 5 % when the build is run again is reproducible to the goal the lookups are held to.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from memtune.tuner.family import ALGORITHM, family_problem  # noqa: E402
from memtune.tuner.ladder import LADDER  # noqa: E402
from memtune.tuner.lookup_table import LookupTable, device_matches  # noqa: E402


def agreement(first: LookupTable, second: LookupTable, device: str) -> list[dict]:
    """Per shared family point: the first build's answer timed in the second build, over the second's best."""
    mine = [f[f.kernel.isin(LADDER) & f.device.map(lambda d: device_matches(device, d))]
            for f in (first.frame, second.frame)]
    shared = mine[0].merge(mine[1], on=["kernel", "dtype", "size", "case"], suffixes=("_1", "_2"))
    t = second.trials     # rows and trials both hold parameters as sorted-key JSON: compared as text, read once
    timed = dict(zip(zip(t.kernel, t.dtype, t["size"].astype(int), t["case"], t.params), t.median_ms.astype(float)))
    out = []
    for row in shared.itertuples(index=False):
        own = json.loads(row.params_1)
        kernel = own.pop(ALGORITHM)
        ms = timed.get((kernel, row.dtype, int(row.size), _member_case(row, kernel), json.dumps(own, sort_keys=True)))
        if ms is not None:
            out.append({"family": row.kernel, "dtype": row.dtype, "size": int(row.size), "case": row.case,
                        "same": row.params_1 == row.params_2, "ratio": ms / float(row.median_ms_2),
                        "best_ratio": float(row.median_ms_2) / float(row.median_ms_1)})
    return out


def _member_case(row, kernel: str) -> str:
    """The case a family member's trials are recorded under (its own: a peer's may differ from the family's)."""
    problem = family_problem(row.kernel, int(row.size), row.dtype, **json.loads(row.case))
    return json.dumps(problem.candidates[kernel].case, sort_keys=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--device", default="H100")
    args = parser.parse_args()
    rows = agreement(LookupTable.read(args.first, must_exist=True), LookupTable.read(args.second, must_exist=True),
                     args.device)
    if not rows:
        sys.stderr.write("build_repeat.py: the builds share no family point with trials\n")
        return 2
    ratios = sorted(r["ratio"] for r in rows)
    bests = sorted(r["best_ratio"] for r in rows)
    print(f"{len(rows)} points: the first build's answer within 5 % of the second's best at "
          f"{sum(r <= 1.05 for r in ratios)} (median {ratios[len(ratios) // 2]:.3f}, worst {ratios[-1]:.3f}); "
          f"the same configuration at {sum(r['same'] for r in rows)}; the second's best over the first's "
          f"{bests[0]:.3f} to {bests[-1]:.3f}")
    for r in rows:
        if r["ratio"] > 1.05:
            print(f"  {r['family']} {r['dtype']} n={r['size']} {r['case']}: {r['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Re-measure one kernel of a family at every ladder point of this GPU's shipped table, and rebuild those points'
rows: the kernel's whole space measured (cold L2, medians of ``--repeats``), the family's other kernels as the
table's trials recorded them (their code unchanged), and the family's winner taken over both, as
``memtune tables build`` takes it. For a kernel whose space grew (new compiled instances) without a whole family
rebuild. Writes a copy of the shipped table to ``--out`` (its other rows unchanged); put its rows of the family
and the kernel into the shipped table with bench/merge_rows.py.

    python bench/remeasure_kernel.py --family sat --kernel sat_tiles_lookback --out DIR
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

from common import setup

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--family", required=True),
                                                 p.add_argument("--kernel", required=True),
                                                 p.add_argument("--dtype", action="append")))
    from memtune.costmodel.physical.machine import slug
    from memtune.kernels.timing import Device
    from memtune.tuner import ladder
    from memtune.tuner.lookup_table import LookupTable, trials_path

    device = Device.current().name
    shipped = ROOT / "tuner" / "tables" / f"{slug(device)}.csv"
    path = out / shipped.name
    for src in (shipped, trials_path(shipped)):
        shutil.copyfile(src, out / src.name)
    for point in ladder.points([args.family], dtypes=args.dtype):
        started = time.perf_counter()
        result = remeasured(point, args.kernel, device, LookupTable.read(path), args.repeats)
        table = LookupTable.read(path)                 # the kernel's earlier trials at this point give way
        tr = table.trials
        table.trials = tr[~((tr.kernel == args.kernel) & (tr.device == device) & (tr.dtype == point.dtype)
                            & (tr["size"] == point.size))]
        table.save(path)
        rows = result.rows(f"remeasure {args.kernel} {point.describe()} (the family's other kernels as recorded)")
        mine = [r for r in rows if r["kernel"] in (args.kernel, point.family)]    # the others' rows stay as they are
        LookupTable.update(path, mine, [t for t in result.trials() if t["kernel"] == args.kernel], replace=True)
        best = result.best
        print(f"{point.describe()}: {args.kernel} {len(result.measured[0].runs)} configurations, best "
              f"{result.measured[0].best[1]:.4g} ms; family best {best[1]} {best[0]:.4g} ms; "
              f"{time.perf_counter() - started:.1f} s", flush=True)
    return 0


def remeasured(point, kernel: str, device: str, table, repeats: int):
    """The point's result: ``kernel``'s whole space measured now, every other candidate as ``table`` recorded it."""
    from memtune.tuner import tables as T
    from memtune.tuner.family import family_problem
    from memtune.tuner.model import load_model
    from memtune.tuner.objectives import MeasureObjective
    from memtune.tuner.storage import open_storage
    from memtune.tuner.study import Study

    problem = family_problem(point.family, point.size, point.dtype, **point.case)
    member = problem.candidates[kernel]
    objective = MeasureObjective(member, repeats=repeats)
    space = len(member.points())
    study = Study(member, objective, load_model(objective.device), storage=open_storage(":memory:"),
                  name=f"{kernel}@{point.describe()}", strategy="model", seed=0, prune=False)
    study.run(space)
    measured = [T._measured(kernel, member, study, space)]
    measured += [recorded(table, device, point, name, other) for name, other in problem.candidates.items()
                 if name != kernel]
    return T.PointResult(point, device, [m for m in measured if m.runs], 0.0)


def recorded(table, device: str, point, name: str, member):
    """``name``'s configurations at ``point`` as the table's trials hold them, with its row's IQR and prediction."""
    from memtune.tuner import tables as T
    from memtune.tuner.lookup_table import number

    case = json.dumps(dict(member.case), sort_keys=True)
    f, tr = table.frame, table.trials
    at = lambda d: d[(d.kernel == name) & (d.device == device) & (d.dtype == point.dtype)   # noqa: E731
                     & (d["size"] == point.size) & (d["case"] == case)]
    rows = at(f)
    result = T.Measured(name, dict(member.case), int(rows.iloc[0]["space"]) if len(rows) else 1)
    if not len(rows):
        return result
    row = rows.iloc[0]
    for t in at(tr).itertuples(index=False):
        same = t.params == row["params"]
        result.runs.append((json.loads(t.params), float(t.median_ms), (number(row["iqr_ms"]) or 0.0) if same else 0.0))
    if number(row["predicted_ms"]) is not None:
        result.predicted[json.dumps(json.loads(row["params"]), sort_keys=True)] = number(row["predicted_ms"])
    return result.sort()


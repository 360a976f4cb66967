"""Does a recorded grid's time of a configuration depend on where in the grid it was measured? (GPU, #31)

``bench/offladder.py`` measures a family's configurations one after another, each through the tuner's
``MeasureObjective`` (a first run, the output checked, then ``timing.measure``). Its repeat on the H200
(``results/h200/offladder/repeat_1128``) agreed with the recorded grids within 0.3-3.8 % (medians), yet the sum of
10^6 float32 alternates fast and slow along the grid's order (9.49, 10.06, 8.82, 10.21, ... us) in both runs. This
measures one family's grid in four orders, in one process, and keeps each configuration's time in each:

* ``forward``: the grid's order; ``reverse``: the same configurations the other way round;
* ``shifted``: the grid's order after one extra configuration (the grid's first, measured once more before it);
* ``unchecked``: the grid's order, the output not checked (``verify=False``: no gather of a sample between configs).

Run: ``python bench/grid_order.py [--out DIR] [--case FAMILY SIZE CASE ...]`` (GPU); writes ``grid_order.json``.
"""
from __future__ import annotations

import json

from common import setup
from offladder import configurations

from memtune.tuner.family import family_problem
from memtune.tuner.objectives import MeasureObjective

CASES = (("sum", 1_000_000, {}), ("sum", 1_572_864, {}), ("transpose", 640_000, {}))


def measure_in(problem, order: list[tuple[str, dict]], repeats: int, verify: bool = True) -> list[float]:
    objectives = {}
    times = []
    for name, params in order:
        if name not in objectives:
            like = next(iter(objectives.values()), None)
            objectives[name] = MeasureObjective(problem.candidates[name], repeats=repeats, verify=verify, like=like)
        times.append(objectives[name](params).time_ms)
    return times


def main() -> None:
    args, out = setup(__doc__.splitlines()[0], extra=lambda p: p.add_argument(
        "--case", nargs=3, action="append", metavar=("FAMILY", "SIZE", "CASE")))
    cases = [(f, int(s), json.loads(c)) for f, s, c in args.case] if args.case else CASES
    rows = []
    for family, size, case in cases:
        problem = family_problem(family, size, "float32", **case)
        grid = configurations(problem)
        runs = {"forward": measure_in(problem, grid, args.repeats),
                "reverse": measure_in(problem, grid[::-1], args.repeats)[::-1],
                "shifted": measure_in(problem, grid[:1] + grid, args.repeats)[1:],
                "unchecked": measure_in(problem, grid, args.repeats, verify=False)}
        for i, (name, params) in enumerate(grid):
            rows.append({"family": family, "size": size, "case": case, "position": i, "kernel": name,
                         "params": params, **{f"{k}_ms": v[i] for k, v in runs.items()}})
        print(f"{family} {size}: position, configuration, then us forward / reverse / shifted / unchecked")
        for row in rows[-len(grid):]:
            print(f"  {row['position']:3d} {row['kernel']} {json.dumps(row['params'], sort_keys=True)} "
                  + " / ".join(f"{row[f'{k}_ms'] * 1e3:.2f}" for k in runs))
    (out / "grid_order.json").write_text(json.dumps({"repeats": args.repeats, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()

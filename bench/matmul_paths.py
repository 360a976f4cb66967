"""The matmul's three load paths, side by side (GPU; #31): every m, r, buffers and slice of ``matmul_hmm`` at
d = 0 and d = 132, at sides where each tile takes the unchecked path (1024: 16-byte loads, no bound checked),
where the edge tiles alone are checked (1056 for m 64 and 128; 1016 at slice 8), where every tile is checked but
loads 16-byte vectors (1016 at slices 16 and 32, 1020), and where every load is a checked scalar (1022, 1023: a
row pitch that is not a multiple of 4 elements). The rows are those of ``offladder_grid.csv``, so that
``studies.fidelity.predicted_held_out`` prices them; the measured time over the model's, per side and path, says
what the paths cost that the plan does not count.
Run: ``python bench/matmul_paths.py [--out DIR] [--repeats R]``."""
from __future__ import annotations

import time

import pandas as pd
from common import setup
from offladder import TIME_LIMIT_MS, grid_row

from memtune.kernels.timing import Device
from memtune.tuner.family import family_problem
from memtune.tuner.objectives import MeasureObjective

SIDES = (1024, 1056, 1016, 1020, 1022, 1023)
BLOCKS = (0, 132)


def side_rows(n: int, repeats: int, device: str) -> list[dict]:
    member = family_problem("matmul", n * n, "float32").candidates["matmul_hmm"]
    objective = MeasureObjective(member, repeats=repeats, time_limit_ms=TIME_LIMIT_MS)
    return [grid_row(objective, params, device=device, family="matmul", size=n * n, case="{}", kernel="matmul_hmm")
            for params in member.points() if params["d"] in BLOCKS]


def main() -> None:
    args, out = setup(__doc__, repeats=10)
    device, rows, started = Device.current().name, [], time.perf_counter()
    for n in SIDES:
        rows += side_rows(n, args.repeats, device)
        pd.DataFrame(rows).to_csv(out / "offladder_grid.csv", index=False)
        print(f"matmul {n}^2: {len(rows)} rows, {time.perf_counter() - started:.0f} s", flush=True)


if __name__ == "__main__":
    main()

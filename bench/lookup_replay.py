"""Replay the lookup between recorded sizes on what was measured (no GPU): how often would today's answer have
been within 5 % of the best?

Two sets. **Off-ladder grids**: every configuration measured at a size the tables do not hold
(``offladder/<run>/offladder_grid.csv``), for the runs whose kernels compile to what runs today; the answer is the
lookup's on the shipped table, scored by the grid's time of it over the grid's best. **Ladder points left out**:
each family's ladder point in turn is dropped from the shipped table and its trials, and the lookup answers it from
the points either side (4x apart for the 1-D families, 2x in side for the 2-D ones, so twice the reach of an
off-ladder size), scored by the dropped trials (an answer they did not measure is counted apart, not as a hit).
The shaped kernels' block shapes alike: the shaped off-ladder checks' requests (``offladder/shaped`` and the later
sets of :data:`SHAPED_RUNS`, every shape measured) answered again, and each shaped ladder request left out and
answered from the others.

Run: ``python bench/lookup_replay.py [--out DIR] [--no-ladder]`` (about 8 minutes on two cores; ``--no-ladder``:
the grids alone, under a minute). Writes ``lookup_replay.json``: each case's answer and ratio, and each set's
count within 5 %.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from memtune import tuner  # noqa: E402
from offladder import SHAPED_CASES, answer_ms  # noqa: E402  (bench/offladder.py, importable without a GPU)
from memtune.tuner.family import family_problem  # noqa: E402

TABLES = {"H100": ROOT / "tuner/tables/nvidia-h100-80gb-hbm3.csv", "H200": ROOT / "tuner/tables/nvidia-h200.csv"}
RESULTS = ROOT / "bench/results"
# (device, run, the families it holds whose kernels are today's, the least size whose kernel is today's)
GRIDS = [("H100", "h100/offladder/noticket_after", ("prefix_sums",), 0),
         ("H200", "h200/offladder/noticket_after", ("prefix_sums",), 0),
         ("H100", "h100/offladder/lookback_after", ("sat",), 0),
         ("H200", "h200/offladder/lookback_after", ("sat",), 0),
         # before the vector scan's grid of a block a tile lost its ticket: today's kernel where tiles > d
         ("H100", "h100/offladder/resident_after", ("prefix_sums",), 2_000_000),
         ("H200", "h200/offladder/resident_after", ("prefix_sums",), 2_000_000),
         ("H100", "h100/offladder/residual_lookup", ("prefix_sums", "sum", "sat", "transpose", "permutation"), 0),
         ("H100", "h100/offladder/residual_lookup/conv_matmul", ("conv", "matmul"), 0),
         ("H200", "h200/offladder/residual_lookup", ("prefix_sums", "sum", "sat", "transpose", "permutation"), 0),
         ("H100", "h100/offladder/start_beside", ("prefix_sums", "sum", "sat", "transpose", "permutation"), 0),
         ("H100", "h100/offladder/start_beside/conv_matmul", ("conv", "matmul"), 0),
         # the H200's SATs of start_beside and as_run scored on their repeat, which measured the tile orders
         ("H200", "h200/offladder/start_beside", ("prefix_sums", "sum", "transpose", "permutation"), 0),
         ("H100", "h100/offladder/as_run", ("prefix_sums", "sum", "sat", "transpose", "permutation"), 0),
         ("H200", "h200/offladder/as_run", ("prefix_sums", "sum", "transpose", "permutation"), 0),
         ("H200", "h200/offladder/repeat_1128", ("sat",), 0),
         ("H100", "h100/offladder/rowwise_after", ("permutation",), 0),
         ("H200", "h200/offladder/rowwise_after", ("permutation",), 0),
         ("H100", "h100/offladder/sat_orders", ("sat",), 0),
         ("H200", "h200/offladder/sat_orders", ("sat",), 0),
         ("H200", "h200/offladder/fresh_1128", ("prefix_sums", "sum", "sat", "transpose", "permutation", "conv", "matmul"), 0),
         ("H200", "h200/offladder/ticket_heldout", ("prefix_sums", "sat"), 0),
         ("H200", "h200/offladder/transpose_heldout", ("transpose",), 0),
         ("H200", "h200/offladder/store_heldout", ("sat", "permutation"), 0),
         ("H200", "h200/offladder/fresh_1128b", ("prefix_sums", "sum", "sat", "transpose", "permutation", "conv"), 0),
         ("H200", "h200/offladder/fresh_1128b/matmul", ("matmul",), 0),
         ("H200", "h200/offladder/perm_1129", ("permutation",), 0),
         ("H200", "h200/offladder/fresh_1129/a", ("prefix_sums", "sum", "sat", "transpose"), 0),
         ("H200", "h200/offladder/fresh_1129/b", ("permutation", "conv"), 0),
         ("H200", "h200/offladder/conv_1129", ("conv",), 0),
         ("H200", "h200/offladder/barrier_1129", ("conv", "matmul"), 0)]
SHAPED_RUNS = ("shaped", "shaped_fresh_1128")    # the shaped checks, each a folder of its answers and its shapes
LADDER_FAMILIES = ("prefix_sums", "sum", "sat", "transpose", "permutation")
WITHIN = 1.05


def ratio_of(answer: dict, measured) -> float:
    """The answer's measured time over the best of ``measured``; NaN where the answer was not measured."""
    return answer_ms(answer, measured) / float(measured.median_ms.min())


def off_ladder(device: str, table, model) -> list[dict]:
    out = []
    for dev, run, families, least in GRIDS:
        path = RESULTS / run / "offladder_grid.csv"
        if dev != device or not path.exists():
            continue
        grid = pd.read_csv(path)
        grid = grid[(grid.status == "ok") & grid.family.isin(families) & (grid["size"] >= least)]
        for (family, size, case), measured in grid.groupby(["family", "size", "case"]):
            problem = family_problem(family, int(size), "float32", **json.loads(case))
            answer = tuner.lookup(problem, table, model, device, shipped=False)
            out.append({"set": run, "family": family, "size": int(size), "dtype": "float32", "answer": answer.params,
                        "ratio": ratio_of(answer.params, measured)})
    return out


def left_out(device: str, table, model) -> list[dict]:
    out, rows, trials = [], table.frame, table.trials
    for family in LADDER_FAMILIES:
        for (dtype, size, case), _ in rows[rows.kernel == family].groupby(["dtype", "size", "case"]):
            problem = family_problem(family, int(size), dtype, **json.loads(case))
            kernels = list(problem.candidates)
            measured = trials[_at(trials, size, dtype, kernels + [family])]
            if len(measured) < 10:          # too few configurations measured there to tell a hit
                continue
            rest = tuner.LookupTable(rows[~_at(rows, size, dtype, kernels + [family])],
                                     trials[~_at(trials, size, dtype, kernels + [family])])
            answer = tuner.lookup(problem, rest, model, device, shipped=False)
            out.append({"set": f"{device} ladder", "family": family, "size": int(size), "dtype": dtype,
                        "answer": answer.params, "ratio": ratio_of(answer.params, measured)})
    return out


def shaped_off_ladder(device: str, table, model) -> list[dict]:
    """The shaped off-ladder checks' requests (``offladder/<run>`` of :data:`SHAPED_RUNS`, every block shape
    measured), answered again."""
    from memtune.tuner import shaped_tables

    out = []
    for name in SHAPED_RUNS:
        run = f"{device.lower()}/offladder/{name}"
        if not (RESULTS / run / "shaped_offladder.json").exists():
            continue
        checked = {row["request"]: row["shapes_ms"]
                   for row in json.loads((RESULTS / run / "shaped_offladder.json").read_text())["rows"]}
        for choice in _shaped_requests(RESULTS / run):
            if choice.describe() not in checked:       # a request whose shapes the run did not reach
                continue
            answer = shaped_tables.answer(choice, device, [table], model)
            out.append({"set": run, "request": choice.describe(), "answer": answer.params,
                        "ratio": _shape_ratio(checked[choice.describe()], answer.params)})
    return out


def _shaped_requests(folder: Path) -> list:
    """A shaped check's requests: as its answers file names them, or (written before it did) the built-in cases."""
    from memtune.kernels.shaped import ShapeChoice

    answered = json.loads((folder / "shaped_answers.json").read_text())
    if all("choice" in a for a in answered):
        return [ShapeChoice(*a["choice"]) for a in answered]
    return [ShapeChoice(*case) for case in SHAPED_CASES]


def shaped_left_out(device: str, table, model) -> list[dict]:
    """Each shaped ladder request dropped with its trials and answered from the others, scored by its trials."""
    from memtune.kernels.shaped import ShapeChoice
    from memtune.tuner import shaped_tables

    out, rows, trials = [], table.frame, table.trials
    for r in rows[rows.kernel.isin(["shaped_tiles", "shaped_strips"])].itertuples(index=False):
        choice = ShapeChoice.of_row(r.kernel, r.dtype, r.case)
        at = _request(trials, r)
        measured = {json.dumps(choice.filled(json.loads(p)), sort_keys=True): ms
                    for p, ms in zip(trials[at].params, trials[at].median_ms)}
        rest = tuner.LookupTable(rows[~_request(rows, r)], trials[~at])
        answer = shaped_tables.answer(choice, device, [rest], model)
        out.append({"set": f"{device} shaped ladder", "request": choice.describe(), "answer": answer.params,
                    "source": answer.source, "ratio": _shape_ratio(measured, answer.params)})
    return out


def _shape_ratio(times: dict, params: dict) -> float:
    """The answered shape's time over the fastest shape's, ``times`` keyed by each shape's sorted JSON."""
    return times[json.dumps(params, sort_keys=True)] / min(times.values())


def _request(frame, row):
    """The rows of ``frame`` of the table row's kernel, dtype, size and case."""
    return ((frame.kernel == row.kernel) & (frame.dtype == row.dtype) & (frame["size"] == row.size)
            & (frame["case"] == row.case))


def _at(frame, size: int, dtype: str, kernels: list[str]):
    """The rows of ``frame`` of those kernels at this size and dtype."""
    return (frame["size"] == size) & (frame.dtype == dtype) & frame.kernel.isin(kernels)


def summary(cases: list[dict]) -> dict:
    known = [c["ratio"] for c in cases if not math.isnan(c["ratio"])]
    return {"cases": len(cases), "unmeasured_answers": len(cases) - len(known),
            "within_5pct": sum(r <= WITHIN for r in known), "worst": max(known, default=math.nan)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=".")
    parser.add_argument("--no-ladder", action="store_true", help="the off-ladder grids alone")
    args = parser.parse_args()
    cases = {"off_ladder": [], "ladder_left_out": [], "shaped_off_ladder": [], "shaped_left_out": []}
    for device, path in TABLES.items():
        table, model = tuner.LookupTable.read(path), tuner.load_model(device)
        cases["off_ladder"] += off_ladder(device, table, model)
        cases["shaped_off_ladder"] += shaped_off_ladder(device, table, model)
        cases["shaped_left_out"] += shaped_left_out(device, table, model)
        if not args.no_ladder:
            cases["ladder_left_out"] += left_out(device, table, model)
    scored = cases["off_ladder"] + cases["shaped_off_ladder"]
    result = {"sets": {s: summary([c for c in scored if c["set"] == s]) for s in sorted({c["set"] for c in scored})},
              **{k: summary(v) for k, v in cases.items() if v}, "cases": cases}
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "lookup_replay.json").write_text(json.dumps(result, indent=1))
    for name, s in [*result["sets"].items(), *((k, result[k]) for k in cases if k in result)]:
        print(f"{name:45s} {s['within_5pct']:3d} of {s['cases'] - s['unmeasured_answers']:3d} within 5 % "
              f"({s['unmeasured_answers']} answers unmeasured), worst {s['worst']:.3f}")


if __name__ == "__main__":
    main()

"""The physical model's relative error on the held-out off-ladder grids and on the studies (development),
each distinct configuration counted once (Table 5.3's repeated random rows once). CPU only.
Run: ``python bench/model_error.py [ROOT] [--without PARAMETER ...]`` (ROOT: the tree whose studies/results/h100
are read; default this one; ``--without``: that machine parameter set to 0, to see what its term does).
To compare a model change, run it under an install of each commit.
"""
import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from memtune import tuner
from memtune.studies.base import analyse, distinct, relative_error
from memtune.studies.fidelity import predicted_held_out

HERE = Path(__file__).resolve().parents[1]
parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("root", nargs="?", default=str(HERE))
parser.add_argument("--without", action="append", default=[], metavar="PARAMETER")
args = parser.parse_args()
root = args.root
model = tuner.load_model("NVIDIA H100 80GB HBM3").without(*args.without)
OFFLADDER = HERE / "bench/results/h100/offladder"


def scored(paths, on=None, family: str | None = None) -> pd.DataFrame:
    """The grids at ``paths`` predicted by ``on`` (the H100's model), each configuration once, with its error;
    only ``family``'s rows where given."""
    frame = pd.concat([predicted_held_out(path, on or model) for path in paths])
    if family:
        frame = frame[frame.family == family]
    frame = frame.dropna(subset=["predicted_ms"]).copy()
    frame["error"] = relative_error(frame.predicted_ms, frame.median_ms)
    return frame


def family_of(grid: Path) -> str:
    """The family of an off-ladder case grid, from its folder's name (``<family>_<n>``)."""
    return grid.parent.name.rsplit("_", 1)[0]


def cases(folder: Path) -> pd.DataFrame:
    """Every case grid of an off-ladder folder (``<family>_<n>/offladder_grid.csv``), each scored as its family."""
    return pd.concat([scored([grid], family=family_of(grid)) for grid in sorted(folder.glob("*/offladder_grid.csv"))])


def report(label: str, frame: pd.DataFrame, by: str | None = None) -> None:
    tail = [frame.groupby(by).error.median().round(3).to_dict()] if by else []
    print(f"{label}:", len(frame), "configs; median %.3f, p90 %.3f" % (frame.error.median(), frame.error.quantile(.9)),
          *tail)


# held out: the off-ladder family grids; a family whose kernels changed since was measured again at the same
# sizes (conv_rebuilt: conv_hmm gained r; sat_tiles: the SAT family gained its tiles; matmul_remeasured, 2026-11-26:
# matmul_hmm gained slice), and those grids stand for it
REMEASURED = {"conv": [OFFLADDER / "conv_rebuilt/offladder_grid.csv"], "sat": [OFFLADDER / "sat_tiles/offladder_grid.csv"],
              "matmul": sorted(OFFLADDER.glob("matmul_remeasured/*/offladder_grid.csv"))}
held = scored([OFFLADDER / "offladder_grid.csv"])
held = pd.concat([held[~held.family.isin(REMEASURED)]] + [scored(paths, family=f) for f, paths in REMEASURED.items()])
report("held-out grids", held, "family")
# held out from the convolution's FMA chain (one dependent shared round a filter column, the taps' FMA chain):
# three sizes and filters recorded before that change, every configuration (bench/offladder.py --case)
report("held-out conv (1500^2 v1, 2500^2 v3, 4500^2 v2)", scored([OFFLADDER / "conv_heldout/offladder_grid.csv"]), "size")
# held out from every model change so far: sizes chosen and measured 2026-11-25 (the table's off-ladder check)
report("held-out grids of 2026-11-25 (seven families, sizes never recorded before)",
       scored([OFFLADDER / "fresh/offladder_grid.csv"]), "family")
report("held out from every change of 2026-11-25: matmul 2560^2 (recorded after them)",
       scored([OFFLADDER / "fresh/matmul/offladder_grid.csv"]))
# held out from the warp issue term and the halo's unrolled rounds (commit b4a9161): three convolutions at sizes
# and filters nothing had recorded, measured on the H100 after that commit (bench/offladder.py --case)
report("held out from the warp issue term: conv 1100^2 v3, 1800^2 v1, 2600^2 v2",
       scored([OFFLADDER / f"conv_issue/conv_{s}/offladder_grid.csv" for s in (1210000, 3240000, 6760000)]), "size")
# held out from the unrolled rounds and matmul's slice rounds (commit bab5afe): measured on the H100 after it
for name in ("matmul_3240000", "sum_2500000", "sum_40000000", "prefix_sums_40000000"):
    grid = OFFLADDER / "after_unroll" / name / "offladder_grid.csv"
    report(f"held out from the unrolled rounds: {name}", scored([grid], family=family_of(grid)))
# held out from the walk's round latency (commit 138c852): five problems measured on the H100 after it
report("held out from the walk's round latency: sum, prefix sums 1.2e7, transpose 2176^2, SAT 2800^2, conv 1300^2 v2",
       cases(OFFLADDER / "walk_after"), "family")
# held out from the SAT plans' fix (commit 4233bb3): the SAT family at 3300² and 1100², measured on the H100 after it
report("held out from the SAT plans' fix: SAT 3300^2, 1100^2",
       scored(sorted((OFFLADDER / "sat_after").glob("*/offladder_grid.csv"))), "size")
# held out from the busiest block's critical path (commit 13de217): four problems measured on the H100 after it
report("held out from the busiest block: conv 2900^2 v1, matmul 1216^2, transpose 4032^2 and 1408^2",
       cases(OFFLADDER / "imbalance_after"), "family")
# held out from the scattered sectors' latency (commit 58b95cf): permutations at eight sizes recorded on the H100 at
# bf94f80, before it (perm_fresh); and fourteen problems of seven families recorded after it, each with the lookup's
# answer written first (lookup_after)
report("permutations recorded before the scattered sectors' latency (perm_fresh)",
       scored(sorted((OFFLADDER / "perm_fresh").glob("*/offladder_grid.csv"))), "kernel")
report("held out from the scattered sectors' latency: seven families, 14 problems (lookup_after)",
       cases(OFFLADDER / "lookup_after"), "family")
# the H200 from its probed machine file alone: its off-ladder check of 2026-11-25 (bench/results/h200/offladder/fresh),
# sizes no H200 record had, measured after this model's terms were chosen (its curve measured in the same call)
H200 = HERE / "bench/results/h200/offladder/fresh"
h200 = tuner.load_model("NVIDIA H200").without(*args.without)
report("H200 held-out grids of 2026-11-25 (probe only)",
       scored([H200 / "offladder_grid.csv", H200 / "conv/offladder_grid.csv"], on=h200), "family")
# the H200 zero-shot after the model changes of 2026-11-26 (recorded after them; one family each grid)
ZERO = HERE / "bench/results/h200/offladder/zero_shot_1126"
zero = pd.concat([scored([ZERO / name / "offladder_grid.csv"], on=h200, family=name.rsplit("_", 1)[0])
                  for name in ("conv_1960000", "permutation_2250000", "prefix_sums_7500000", "sat_4000000", "sum_7500000")])
report("H200 zero-shot grids of 2026-11-26 (probe only, recorded after the day's changes)", zero, "family")
# the scattered-access term (commit c3c88fd: the probed scatter_rate and gather_rate curves, a gather's sectors once
# a block): permutations recorded on the H100 before it (scatter_heldout) and after it (scatter_after), and on the
# H200 after it, in the call that probed the H200's curves (scatter_zero_shot); every set at sizes nothing had
# then on the H100 after the reuse footprint (commit 484b650, reuse_after) and the bucketed runs count (082dc35,
# runs_after)
for label, folder, on in (("H100 before the scattered-access term", OFFLADDER / "scatter_heldout", None),
                          ("H100 after the scattered-access term", OFFLADDER / "scatter_after", None),
                          ("H200 zero-shot after the scattered-access term",
                           HERE / "bench/results/h200/offladder/scatter_zero_shot", h200),
                          ("H100 after the reuse footprint", OFFLADDER / "reuse_after", None),
                          ("H100 after the bucketed runs count", OFFLADDER / "runs_after", None)):
    report(f"permutations recorded {label}", scored(sorted(folder.glob("*/offladder_grid.csv")), on=on), "kernel")
# held out from the row-wise pass's rounds (commit 94152e5): four permutations recorded after it, on the H100 and on
# the H200 from its machine file alone
for label, folder, on in (("H100", OFFLADDER / "rowwise_after", None),
                          ("H200 (probe only)", HERE / "bench/results/h200/offladder/rowwise_after", h200)):
    report(f"permutations recorded {label} after the row-wise pass's rounds", scored([folder / "offladder_grid.csv"], on=on),
           "kernel")
# development: the studies' analysed CSVs, each configuration once (studies.base.distinct)
devs = []
for name in ("conv_matmul", "dmm_permutation", "hmm_permutation", "rap", "sat", "scan"):
    f = analyse(pd.read_csv(f"{root}/studies/results/h100/{name}.csv", keep_default_na=False, na_values=[""]), model)
    once = distinct(f).relative_error
    devs.append(once)
    print(f"  {name}: {int(f.relative_error.notna().sum())} rows, {len(once)} distinct, median {once.median():.3f}")
d = pd.concat(devs)
print("development (studies), distinct configurations:", len(d), "median %.3f, p90 %.3f" % (d.median(), d.quantile(.9)))

# the shaped kernels (tiles and strips of shaped.cu): development = bench/sat_tiles.py's run, on which the tile
# shapes and their plan were chosen; held out = the table build's every shape and the off-ladder check, both
# measured after the plans were fixed, and every strip shape at bench/shapes.py's problems. Each (request, shape)
# once. Strips measured before 2026-11-25 ran the look-back that waited on a lane's words one by one (1.37x
# today's time on the H100): what runs now is only in the rebuilt table's trials and strips_lookback.json.
from memtune.kernels.shaped import ShapeChoice  # noqa: E402


def shaped_errors(pairs) -> pd.Series:
    """|model − measured| / measured of (ShapeChoice, params, measured ms) pairs, each (request, shape) once,
    indexed by (kind, src->dst)."""
    once = {}
    for choice, params, ms in pairs:
        key = (choice, json.dumps(params, sort_keys=True))
        once.setdefault(key, abs(choice.predict_ms(model.machine, params) - ms) / ms)
    index = pd.MultiIndex.from_tuples([(c.kind, f"{c.src}->{c.dst}") for c, _ in once], names=["kind", "types"])
    return pd.Series(list(once.values()), index=index, dtype=float)


def developed():
    for r in json.loads((HERE / "bench/results/h100/sat_tiles/sat_tiles.json").read_text())["rows"]:
        choice = ShapeChoice(r["kind"], *r["shape"], r["src"], r["dst"], r["mode"])
        params = dict(zip(choice.names, r["shape_params"]))
        if params in choice.points() and choice.kind != "strips":
            yield choice, params, r["ms"]


def held_out():
    trials = pd.read_csv(HERE / "bench/results/h100/tables_build/shaped/h100_shaped.trials.csv")
    for r in trials.itertuples():
        yield ShapeChoice.of_row(r.kernel, r.dtype, r.case), json.loads(r.params), r.median_ms
    check = json.loads((HERE / "bench/results/h100/offladder/shaped/shaped_offladder.json").read_text())
    for row in check["rows"]:
        kind, mode, layout, types = row["request"].split()
        choice = ShapeChoice(kind, *map(int, layout.split("x")), *types.split("->"), mode)
        for params, ms in row["shapes_ms"].items():
            if kind != "strips":
                yield choice, json.loads(params), ms
    for r in json.loads((HERE / "bench/results/h100/strips_lookback.json").read_text())["peeked"]:
        yield ShapeChoice("strips", *r["shape"], r["dtype"], r["dtype"], r["mode"]), {"warps": r["warps"], "rows": r["rows"]}, r["ms"]


for label, pairs in (("shaped kernels, development (sat_tiles.py)", developed()),
                     ("shaped kernels, held out (table build + off-ladder check)", held_out())):
    e = shaped_errors(pairs)
    print(f"{label}: {len(e)} configs; median {e.median():.3f}, p90 {e.quantile(.9):.3f}",
          {f"{k} {t}": round(float(v), 3) for (k, t), v in e.groupby(level=[0, 1]).median().items()})


def scan_plan_errors() -> pd.Series:
    """Prefix sums along the last axis (bench/shapes.py's ``plans``: the segmented scan and every row-scan block,
    measured after the model was fixed): each way's error, rebuilt on the current model."""
    from memtune import shapes
    from memtune.costmodel.physical import launch as L
    from memtune.kernels import shaped

    errors = {}
    for r in json.loads((HERE / "bench/results/h100/shapes.json").read_text())["rows"]:
        if r["family"] != "prefix_sums" or "plans" not in r:
            continue
        a = np.broadcast_to(np.zeros(1, r["dtype"]), tuple(r["shape"]))     # a shape and a type, no memory
        req = shapes.request("prefix_sums", a, {**r["options"], "dtype": r["out_dtype"]})
        outer, length, _ = shapes._layout(req)
        n, sizes = outer * length, (np.dtype(req.src).itemsize, np.dtype(req.dst).itemsize)
        plans = {"segmented": shaped.scan_plan(n, length, req.src, req.dst, False)}
        plans |= {f"row_scan_t{t}_q{v}": shaped.row_scan_plan(n, length, req.src, req.dst, t, v)
                  for t, v in shaped.row_scan_blocks(length, outer, *sizes)}
        for name, plan in plans.items():
            if name in r["plans"]:
                ms = r["plans"][name]["ms"]
                way = "segmented" if name == "segmented" else "row_scan"
                predicted = L.run_time_ns(plan, model.machine) * 1e-6
                errors[(way, str(r["shape"]), r["dtype"], name)] = abs(predicted - ms) / ms
    return pd.Series(errors, dtype=float)


e = scan_plan_errors()
print(f"scans along the last axis, held out (shapes.json plans): {len(e)} configs; median {e.median():.3f}",
      {k: round(float(v), 3) for k, v in e.groupby(level=0).median().items()})

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
# held out: the off-ladder family grids; a family whose kernels changed since was measured again at the same
# sizes (conv_rebuilt: conv_hmm gained r; sat_tiles: the SAT family gained its tiles), and that grid stands for it
OFFLADDER = HERE / "bench/results/h100/offladder"
REMEASURED = {"conv": OFFLADDER / "conv_rebuilt/offladder_grid.csv", "sat": OFFLADDER / "sat_tiles/offladder_grid.csv"}
held = predicted_held_out(OFFLADDER / "offladder_grid.csv", model)
held = pd.concat([held[~held.family.isin(REMEASURED)]]
                 + [predicted_held_out(path, model).query("family == @family") for family, path in REMEASURED.items()])
held["error"] = relative_error(held.predicted_ms, held.median_ms)
print("held-out grids:", len(held), "configs; median %.3f, p90 %.3f" % (held.error.median(), held.error.quantile(.9)),
      held.groupby("family").error.median().round(3).to_dict())
# held out from the convolution's FMA chain (one dependent shared round a filter column, the taps' FMA chain):
# three sizes and filters recorded before that change, every configuration (bench/offladder.py --case)
conv = predicted_held_out(OFFLADDER / "conv_heldout/offladder_grid.csv", model)
conv["error"] = relative_error(conv.predicted_ms, conv.median_ms)
print("held-out conv (1500^2 v1, 2500^2 v3, 4500^2 v2):", len(conv), "configs; median %.3f, p90 %.3f" % (
    conv.error.median(), conv.error.quantile(.9)), conv.groupby("size").error.median().round(3).to_dict())
# held out from every model change so far: sizes chosen and measured 2026-11-25 (the table's off-ladder check)
fresh = predicted_held_out(OFFLADDER / "fresh/offladder_grid.csv", model)
fresh["error"] = relative_error(fresh.predicted_ms, fresh.median_ms)
print("held-out grids of 2026-11-25 (seven families, sizes never recorded before):", len(fresh),
      "configs; median %.3f, p90 %.3f" % (fresh.error.median(), fresh.error.quantile(.9)),
      fresh.groupby("family").error.median().round(3).to_dict())
late = predicted_held_out(OFFLADDER / "fresh/matmul/offladder_grid.csv", model)
late = relative_error(late.predicted_ms, late.median_ms)
print("held out from every change of 2026-11-25: matmul 2560^2 (recorded after them):", len(late),
      "configs; median %.3f, p90 %.3f" % (late.median(), late.quantile(.9)))
# held out from the warp issue term and the halo's unrolled rounds (commit b4a9161): three convolutions at sizes
# and filters nothing had recorded, measured on the H100 after that commit (bench/offladder.py --case)
after = pd.concat([predicted_held_out(OFFLADDER / f"conv_issue/conv_{s}/offladder_grid.csv", model)
                   for s in (1210000, 3240000, 6760000)])
after["error"] = relative_error(after.predicted_ms, after.median_ms)
print("held out from the warp issue term: conv 1100^2 v3, 1800^2 v1, 2600^2 v2:", len(after),
      "configs; median %.3f, p90 %.3f" % (after.error.median(), after.error.quantile(.9)),
      after.groupby("size").error.median().round(3).to_dict())
# held out from the unrolled rounds and matmul's slice rounds (commit bab5afe): measured on the H100 after it
AFTER = OFFLADDER / "after_unroll"
for name in ("matmul_3240000", "sum_2500000", "sum_40000000", "prefix_sums_40000000"):
    h = predicted_held_out(AFTER / name / "offladder_grid.csv", model)
    h = h[h.family == name.rsplit("_", 1)[0]].dropna(subset=["predicted_ms"])
    e = relative_error(h.predicted_ms, h.median_ms)
    print(f"held out from the unrolled rounds: {name}: {len(e)} configs; median {e.median():.3f}, p90 {e.quantile(.9):.3f}")
# the H200 from its probed machine file alone: its off-ladder check of 2026-11-25 (bench/results/h200/offladder/fresh),
# sizes no H200 record had, measured after this model's terms were chosen (its curve measured in the same call)
h200 = tuner.load_model("NVIDIA H200").without(*args.without)
H200 = HERE / "bench/results/h200/offladder/fresh"
other = pd.concat([predicted_held_out(H200 / "offladder_grid.csv", h200), predicted_held_out(H200 / "conv/offladder_grid.csv", h200)])
other["error"] = relative_error(other.predicted_ms, other.median_ms)
print("H200 held-out grids of 2026-11-25 (probe only):", len(other), "configs; median %.3f, p90 %.3f" % (
    other.error.median(), other.error.quantile(.9)), other.groupby("family").error.median().round(3).to_dict())
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

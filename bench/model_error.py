"""The physical model's relative error on the held-out off-ladder grids and on the studies (development),
each distinct configuration counted once (Table 5.3's repeated random rows once). CPU only.
Run: ``python bench/model_error.py [ROOT]`` (ROOT: the tree whose studies/results/h100 are read; default
this one). To compare a model change, run it under an install of each commit.
"""
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from memtune import tuner
from memtune.tuner.family import family_problem

HERE = Path(__file__).resolve().parents[1]
root = sys.argv[1] if len(sys.argv) > 1 else str(HERE)
model = tuner.load_model("NVIDIA H100 80GB HBM3")
g = pd.read_csv(HERE / "bench/results/h100/offladder/offladder_grid.csv")
g = g[(g.status == "ok") & ~g.kernel.str.startswith("cupy")]
errs = {}
for (fam, size, case), rows in g.groupby(["family", "size", "case"]):
    prob = family_problem(fam, int(size), "float32", **json.loads(case))
    for r in rows.itertuples():
        m = prob.candidates[r.kernel]
        pred = m.predict_ms(model, json.loads(r.params))
        errs.setdefault(fam, []).append(abs(pred - r.median_ms) / r.median_ms)
allv = np.concatenate([np.array(v) for v in errs.values()])
print("held-out grids:", len(allv), "configs; median %.3f, p90 %.3f" % (np.median(allv), np.quantile(allv, .9)),
      {k: round(float(np.median(v)), 3) for k, v in errs.items()})
# development: the studies' analysed CSVs, each (study, algorithm, size, dtype, params, case) once
devs = []
for name in ("conv_matmul", "dmm_permutation", "hmm_permutation", "rap", "sat", "scan"):
    f = pd.read_csv(f"{root}/studies/results/h100/{name}.csv")
    f = f[f.relative_error.notna()]
    keys = [c for c in ("algorithm", "size", "dtype", "params", "case") if c in f]
    once = f.groupby(keys).relative_error.median()
    devs.append(once.rename(name))
    print(f"  {name}: {len(f)} rows, {len(once)} distinct, median {once.median():.3f}")
d = pd.concat(devs)
print("development (studies), distinct configurations:", len(d), "median %.3f, p90 %.3f" % (d.median(), d.quantile(.9)))

"""#28: the resident look-back scan against the device copy at every ladder size from 2^20, float32 and float64, at
the configuration a table build chose (its family row), re-measured beside the copy in one run.
Usage: python ladder.py BUILD.csv OUT.json"""
import json, sys
import pandas as pd
from memtune import kernels
from memtune.kernels.timing import measure

build = pd.read_csv(sys.argv[1])
rows = build[(build.kernel == "prefix_sums_lookback") & (build["size"] >= 1 << 20)]
copy, scan, out = kernels.get("cupy_copy"), kernels.get("prefix_sums_lookback"), {}
for _, r in rows.sort_values(["dtype", "size"]).iterrows():
    n, dt, params = int(r["size"]), r["dtype"], json.loads(r["params"])
    c = measure(copy, copy.make_inputs(n, dt, 1, perm="identical"))["median_ms"]
    s = measure(scan, scan.make_inputs(n, dt, 2), **params)["median_ms"]
    out[f"{dt}:{n}"] = {"params": params, "scan_ms": s, "copy_ms": c, "over_copy": s / c, "built_ms": r["median_ms"]}
    print(f"{dt} 2^{n.bit_length() - 1}: {s:.4f} ms, copy {c:.4f}, {s / c:.3f}x  {params}", flush=True)
json.dump(out, open(sys.argv[2], "w"), indent=1)

"""#28: the resident scan as the package builds it now against the kernel before (its scan.cu and lookback_scan.cuh in
BEFORE), one process, alternating rounds, cold L2, medians of --repeats; the device copy beside each point. Sizes
2^10-2^28 by x4 (and 2^29 float32), float32 and float64, at the defaults and at the table's family-row configuration
of each ladder point. guess/ab.json: with guess/guess.patch applied to kernels/ (the first tile guessed under its
ticket); ab.json: the kept kernel (a block a tile by index, no ticket; otherwise as before).
Usage: python ab.py --before DIR --table TABLE.csv --out OUT"""
import json
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
from common import setup  # noqa: E402  (bench/common.py)
from source_ab import alternate  # noqa: E402

ROUNDS = 3


def main():
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--before", required=True),
                                                 p.add_argument("--table", required=True)))
    from memtune import kernels
    from memtune.kernels.device import register_source
    from memtune.kernels.timing import measure

    before_dir = Path(args.before)
    old = register_source((before_dir / "scan.cu").read_text(), (f"-I{before_dir}", f"-I{Path(kernels.__file__).parent}"))
    table = pd.read_csv(args.table)
    family = table[table.kernel == "prefix_sums"]
    scan, copy = kernels.get("prefix_sums_lookback"), kernels.get("cupy_copy")
    rows = []
    for dtype in ("float32", "float64"):
        for bits in list(range(10, 29, 2)) + ([29] if dtype == "float32" else []):
            n = 1 << bits
            picked = family[(family["size"] == n) & (family.dtype == dtype)]
            configs = [dict(scan.defaults)]
            if len(picked):
                p = json.loads(picked.iloc[0]["params"])
                if p.pop("algorithm") == "prefix_sums_lookback" and p != configs[0]:
                    configs.append(p)
            inputs = scan.make_inputs(n, dtype, 2)
            c = measure(copy, copy.make_inputs(n, dtype, 1, perm="identical"), repeats=args.repeats)["median_ms"]
            for params in configs:
                row = {"dtype": dtype, "size": n, "params": params, "copy_ms": c,
                       **alternate(scan.plan(n, dtype, params, {}), old, inputs, args.repeats, ROUNDS)}
                row["now_over_copy"] = row["now_ms"] / c
                rows.append(row)
                print(f"{dtype} 2^{bits} {json.dumps(params)}: now {row['now_ms'] * 1e3:.2f} us, before "
                      f"{row['before_ms'] * 1e3:.2f}, ratio {row['ratio']:.3f}, copy {c * 1e3:.2f} "
                      f"({row['now_over_copy']:.3f}x)", flush=True)
    (out / "ab.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

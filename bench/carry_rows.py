"""Carry a device's table rows across a source change that leaves what a configuration runs unchanged.

    python bench/carry_rows.py --kernels conv_hmm matmul_hmm --out bench/results/h100

A row whose source hash is stale is left out of every lookup. When a kernel's source changes in a way
that should not change its speed (conv_matmul.cu taking h x w images and M x K x N products, the
square problem passing n̄ for every side), each such row of this device's shipped table is re-measured
with today's source: the same size, dtype, case and parameters, a cold L2, medians of ``--repeats``.
A row whose new median is within ``--tolerance`` (or three recorded IQRs, if larger) of the recorded
one takes today's hash and keeps its search's times (its runner-up was timed beside them); the others
stay stale and are listed, for ``memtune tables build`` at their points. Writes the table to
``--out`` (copy it over the shipped one) and carry.json with every row's old and new medians.
"""
from __future__ import annotations

import csv
import json

from common import setup


def main() -> int:
    args, out = setup(__doc__, extra=lambda p: (p.add_argument("--kernels", nargs="+", required=True),
                                                 p.add_argument("--tolerance", type=float, default=0.05)))
    from memtune import kernels
    from memtune.kernels.timing import Device, measure
    from memtune.tuner import lookup_table as lt
    from memtune.tuner.family import ALGORITHM, FAMILIES

    device = Device.current().name
    path, lines = next((p, rows) for p, rows in ((p, _read(p)) for p in lt.shipped_paths())
                       if lt.device_matches(device, rows[1][0]))
    head = lines[0]
    col = {name: head.index(name) for name in head}
    report = []
    for line in lines[1:]:            # edited as text: every other row stays byte for byte
        row = dict(zip(head, line))
        params = json.loads(row["params"])
        name = params.pop(ALGORITHM, "") if row["kernel"] in FAMILIES else row["kernel"]
        if name not in args.kernels or row["source_hash"] in ("", lt.current_hash(name)):    # "": never checked
            continue
        kernel, size, dtype, case = kernels.get(name), int(row["size"]), row["dtype"], row["case"]
        inputs = kernel.make_inputs(size, dtype, 0, **json.loads(case))
        got = measure(kernel, inputs, repeats=args.repeats, **params)
        old, iqr = float(row["median_ms"]), float(row["iqr_ms"] or 0)
        carried = abs(got["median_ms"] / old - 1) <= max(args.tolerance, 3 * iqr / old)
        if carried:
            line[col["source_hash"]] = lt.current_hash(name)
        report.append({"kernel": row["kernel"], "algorithm": name, "dtype": dtype, "size": size, "case": case,
                       "params": params, "recorded_ms": old, "now_ms": got["median_ms"],
                       "ratio": got["median_ms"] / old, "carried": bool(carried)})
        print(f"{name:12s} {dtype} n={size:<10} {case:10s} {old:.4f} -> {got['median_ms']:.4f} ms "
              f"({got['median_ms'] / old:.3f}) {'carried' if carried else 'LEFT STALE'}", flush=True)
        del inputs
    with open(out / path.name, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(lines)
    (out / "carry.json").write_text(json.dumps({"device": device, "table": path.name, "rows": report}, indent=1) + "\n")
    print(f"{sum(r['carried'] for r in report)} of {len(report)} rows carried")
    return 0


def _read(path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


if __name__ == "__main__":
    raise SystemExit(main())

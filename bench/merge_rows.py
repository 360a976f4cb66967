"""Put a build's rows of some kernels into a shipped table, as text (every other row stays byte for byte).

    python bench/merge_rows.py --build DIR/build.csv --kernels conv conv_hmm cupy_ndimage_convolve \
        --into tuner/tables/nvidia-h100-80gb-hbm3.csv bench/results/h100/tables_build/h100.csv

A table's rows of ``--kernels`` (on the build's device) are replaced by the build's, where the first of them
stood; the same for the ``.trials.csv`` beside each. ``--points``: only the rows and trials at the points the
build holds (its (kernel, dtype, size, case)s: a build of some sizes or one dtype); the rest stay. No GPU: this
only edits files.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from common import read_rows, write_rows


def replace_rows(table: Path, build: Path, kernels: set[str], points: bool = False) -> int:
    new = [row for row in read_rows(build)[1:] if row[1] in kernels]
    devices, keys = {row[0] for row in new}, {tuple(row[:5]) for row in new}    # device, kernel, dtype, size, case
    lines = read_rows(table)
    mine = {i for i, row in enumerate(lines) if i and row[1] in kernels and row[0] in devices
            and (not points or tuple(row[:5]) in keys)}
    kept = [row for i, row in enumerate(lines) if i not in mine]
    at = min(mine) if mine else len(kept)          # no replaced row precedes the first: it stays put
    write_rows(table, kept[:at] + new + kept[at:])
    return len(new)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--kernels", nargs="+", required=True)
    parser.add_argument("--into", type=Path, nargs="+", required=True)
    parser.add_argument("--points", action="store_true", help="replace only the points the build holds")
    args = parser.parse_args()
    from memtune.tuner.lookup_table import trials_path as trials

    for table in args.into:
        rows = replace_rows(table, args.build, set(args.kernels), args.points)
        done = replace_rows(trials(table), trials(args.build), set(args.kernels), args.points) \
            if trials(table).exists() else 0
        print(f"{table}: {rows} rows, {done} trials")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

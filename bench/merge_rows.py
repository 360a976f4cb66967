"""Put a build's rows of some kernels into a shipped table, as text (every other row stays byte for byte).

    python bench/merge_rows.py --build DIR/build.csv --kernels conv conv_hmm cupy_ndimage_convolve \
        --into tuner/tables/nvidia-h100-80gb-hbm3.csv bench/results/h100/tables_build/h100.csv

A table's rows of ``--kernels`` (on the build's device) are replaced by the build's, where the first of them
stood; the same for the ``.trials.csv`` beside each. No GPU: this only edits files.
"""
from __future__ import annotations

import argparse
import csv
from pathlib import Path


def replace_rows(table: Path, build: Path, kernels: set[str]) -> int:
    new = [row for row in _read(build)[1:] if row[1] in kernels]
    devices = {row[0] for row in new}
    lines = _read(table)
    mine = [i for i, row in enumerate(lines) if i and row[1] in kernels and row[0] in devices]
    at = mine[0] if mine else len(lines)
    kept = [row for i, row in enumerate(lines) if i not in set(mine)]
    at -= sum(i < at for i in mine)
    with open(table, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(kept[:at] + new + kept[at:])
    return len(new)


def _read(path: Path) -> list[list[str]]:
    with open(path, newline="") as f:
        return list(csv.reader(f))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build", type=Path, required=True)
    parser.add_argument("--kernels", nargs="+", required=True)
    parser.add_argument("--into", type=Path, nargs="+", required=True)
    args = parser.parse_args()
    trials = lambda p: p.with_name(p.name.removesuffix(".csv") + ".trials.csv")   # noqa: E731
    for table in args.into:
        rows = replace_rows(table, args.build, set(args.kernels))
        done = replace_rows(trials(table), trials(args.build), set(args.kernels)) if trials(table).exists() else 0
        print(f"{table}: {rows} rows, {done} trials")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

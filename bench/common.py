"""What every GPU benchmark script shares: its arguments, its output folder and the device line."""
from __future__ import annotations

import argparse
import csv
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def setup(doc: str, repeats: int = 20, extra=None):
    """Parse ``--out`` (default $OUT or .) and ``--repeats``; print the device; return (args, out folder)."""
    from memtune.kernels.errors import GPUUnavailableError
    from memtune.kernels.timing import Device

    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="folder for the CSV and JSON files")
    parser.add_argument("--repeats", type=int, default=repeats)
    if extra:
        extra(parser)
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        dev = Device.current()
    except GPUUnavailableError as exc:
        sys.stderr.write(f"{Path(sys.argv[0]).name}: {exc}\n")
        raise SystemExit(2) from None
    print(f"device: {dev.name}, driver {dev.driver}, CuPy {dev.cupy}, {dev.sms} SMs, L2 {dev.l2_bytes >> 20} MB")
    return args, out


def read_rows(path) -> list[list[str]]:
    """A table's CSV as text rows (the header first), for edits that leave every other row byte for byte."""
    with open(path, newline="") as f:
        return list(csv.reader(f))


def write_rows(path, rows: list[list[str]]) -> None:
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)

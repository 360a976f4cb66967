"""Ship a table that ``memtune tables build`` wrote: it becomes ``tuner/tables/<device>.csv`` (with its
trials), keeping from the table shipped before only the rows of kernels the build does not tune (the
studies' one-block DMM kernels, which keep their provenance: ``recorded``).
Run: ``python bench/ship_table.py BUILT.csv``.
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pandas as pd  # noqa: E402

from memtune.costmodel.physical.machine import slug  # noqa: E402
from memtune.tuner.lookup_table import LookupTable  # noqa: E402


def main(built: str) -> int:
    new = LookupTable.read(built, must_exist=True)
    devices = sorted(set(new.frame.device))
    if len(devices) != 1:
        raise SystemExit(f"ship_table: {built} holds {len(devices)} devices; one table per device")
    target = ROOT / "tuner" / "tables" / f"{slug(devices[0])}.csv"
    old = LookupTable.read(target) if target.exists() else LookupTable()
    kept = old.frame[~old.frame.kernel.isin(set(new.frame.kernel))]
    frame = pd.concat([new.frame, kept], ignore_index=True).sort_values(["kernel", "dtype", "size", "case"])
    LookupTable(frame.reset_index(drop=True), new.trials).save(target)
    print(f"{target.relative_to(ROOT)}: {len(new.frame)} rows built, {len(kept)} kept from before")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:2]))

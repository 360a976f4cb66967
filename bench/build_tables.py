"""Rebuild the lookup tables that ship with memtune from what the repository has recorded.

    python bench/build_tables.py            # every grid in tuner/grids/, studies/results/, bench/results/

Sources: the shipped grids ``tuner/grids/<device>.csv``, ``studies/results/<dev>/*.raw.csv`` and
``bench/results/<dev>/families.csv`` (family studies measured with ``memtune tune <family>``).
"""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memtune.tuner import tables  # noqa: E402


def sources() -> list[Path]:
    found = list((ROOT / "tuner" / "grids").glob("*.csv"))
    found += list((ROOT / "studies" / "results").glob("*/*.raw.csv"))
    found += list((ROOT / "bench" / "results").glob("*/families.csv"))
    return sorted(found)


def main() -> int:
    paths = sources()
    built = tables.build(tables.read_measurements(p) for p in paths)
    for path in tables.write(built, ROOT / "tuner" / "tables"):
        print(f"{path.relative_to(ROOT)}: {sum(1 for _ in open(path)) - 1} rows from {len(paths)} files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

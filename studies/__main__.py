"""``python -m memtune.studies measure NAME... --out DIR``: the GPU part alone (no plotting libraries needed)."""
import argparse
from pathlib import Path

from . import STUDIES, measure

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("action", choices=["measure"])
parser.add_argument("names", nargs="+", choices=list(STUDIES) + ["all"])
parser.add_argument("--out", required=True)
parser.add_argument("--repeats", type=int, default=10)
args = parser.parse_args()
for name in (list(STUDIES) if "all" in args.names else args.names):
    print(f"study {name}: {measure(name, Path(args.out), args.repeats)}", flush=True)

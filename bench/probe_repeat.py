"""Is ``memtune probe`` fast and reproducible (GPU)? Run it several times, each in a fresh process, and
compare: wall time per probe, and for every parameter its value in each run, the largest relative
difference between runs and the spread each run recorded.
Run: ``python bench/probe_repeat.py [--runs K] [--out DIR]``; writes ``probe_repeat.json``.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time

from common import setup


def main() -> None:
    args, out = setup(__doc__, extra=lambda p: p.add_argument("--runs", type=int, default=3))
    runs = []
    for k in range(args.runs):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "memtune", "probe", "--json", "--out", str(out / f"probe_{k}.toml")],
                              capture_output=True, text=True, check=True)
        runs.append({"seconds": time.perf_counter() - started, "parameters": json.loads(done.stdout)["parameters"]})
        print(f"probe {k}: {runs[-1]['seconds']:.1f} s", flush=True)
    names = list(runs[0]["parameters"])
    table = {}
    for name in names:
        values = [r["parameters"][name]["value"] for r in runs]
        low, high = min(values), max(values)
        table[name] = {"values": values, "unit": runs[0]["parameters"][name]["unit"],
                       "max_difference": (high - low) / low if low else 0.0,
                       "spreads": [r["parameters"][name]["spread"] for r in runs]}
    summary = {"seconds": [r["seconds"] for r in runs], "parameters": table}
    (out / "probe_repeat.json").write_text(json.dumps(summary, indent=1))
    for name, row in table.items():
        print(f"{name:26s} {row['max_difference']:7.1%}  " + "  ".join(f"{v:.4g}" for v in row["values"]))


if __name__ == "__main__":
    main()

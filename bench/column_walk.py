"""What one round of a column walk costs (GPU): sat.cu's column_prefix (a thread a column, load-add-store down
the rows) over an n̄ x n̄ float32 array, out of place and in place, from a flushed L2 and from an L2 that holds
the array, each time divided by the n̄ rounds, beside the probed DRAM and L2 latencies.

The SAT's 4R4W walks its columns twice: first from DRAM, then in place over an array a transpose has just
written (in the L2). The model priced both walks' rounds at the chase's latencies (one thread, `.cg` loads past
the L1), and both ran about 1.3x slower; this measured why, and `memtune probe` now measures the walk's round
itself (probe.cu's walk_columns: ``walk_dram_latency``, ``walk_l2_latency``), which it prints beside.

Run: ``python bench/column_walk.py [--sides 640 1920 4096] [--out F.json]``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memtune import tuner  # noqa: E402
from memtune.kernels.device import cupy, function, launch  # noqa: E402
from memtune.kernels.timing import Device, time_call  # noqa: E402

THREADS = 128


def walk_ns(side: int, in_place: bool, resident: bool, repeats: int) -> float:
    """Median ns a round of one column_prefix launch."""
    cp = cupy()
    fn = function("sat.cu", "column_prefix_f32")
    a = cp.random.random((side, side), dtype=np.float32)
    b = a if in_place else cp.empty_like(a)
    args = (a, b, np.int32(side), np.int32(side))
    grid = (-(-side // THREADS),)
    run = lambda: launch(fn, grid, (THREADS,), args)  # noqa: E731
    # resident: both arrays read back into the L2 after the flush, clean (the flush buffer's lines evicted)
    times = time_call(run, repeats, then=(lambda: (a.sum(), b.sum())) if resident else None)
    return float(np.median(times)) * 1e6 / side


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sides", type=int, nargs="+", default=[640, 1920, 4096])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out")
    args = parser.parse_args()
    machine = tuner.load_model(Device.current().name).machine
    print(f"probed: chase {machine['dram_latency']:.0f} / {machine['l2_latency']:.0f} ns, "
          f"walk {machine['walk_dram_latency']:.0f} / {machine['walk_l2_latency']:.0f} ns (DRAM / L2)")
    rows = []
    for side in args.sides:
        for resident in (False, True):
            for in_place in (False, True):
                ns = walk_ns(side, in_place, resident, args.repeats)
                rows.append({"side": side, "in_place": in_place, "l2_resident": resident, "ns_per_round": ns})
                print(f"side {side:5d} {'in place    ' if in_place else 'out of place'} "
                      f"{'L2-resident' if resident else 'flushed    '}: {ns:6.1f} ns a round", flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps({"device": Device.current().name, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

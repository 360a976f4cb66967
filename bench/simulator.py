"""Simulator throughput: thread requests simulated per second on one core.

Goal (issue: foundation): >= 1e7 requests/s. Run: ``python bench/simulator.py``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from memtune.costmodel import DMM, UMM, simulate


def cases(rng):
    yield "random, 64 rounds x 2^17 threads", rng.integers(0, 1 << 22, size=(64, 1 << 17))
    yield "contiguous, 256 rounds x 2^15 threads", np.arange(256 << 15).reshape(256, 1 << 15)
    yield "stride w, 1024 rounds x 8192 threads", (np.arange(8192)[None, :] * 32 + np.arange(1024)[:, None])
    yield "random, 4096 rounds x 2048 threads", rng.integers(0, 1 << 16, size=(4096, 2048))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    print(f"{'trace':<42}{'machine':>8}{'requests':>12}{'best s':>9}{'Mreq/s':>9}")
    worst = float("inf")
    for label, trace in cases(rng):
        for machine in (DMM(w=32, l=30), UMM(w=32, l=600)):
            best = min(_timed(machine, trace) for _ in range(args.repeat))
            rate = trace.size / best
            worst = min(worst, rate)
            print(f"{label:<42}{machine.kind:>8}{trace.size:>12}{best:>9.3f}{rate / 1e6:>9.1f}")
    print(f"slowest case: {worst / 1e6:.1f} M requests/s (goal >= 10)")


def _timed(machine, trace) -> float:
    t0 = time.perf_counter()
    simulate(machine, trace)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main()

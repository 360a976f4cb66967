"""Latency of symbolic cost queries: cold (first query of an entry) and warm (repeated).

Goals: warm <= 1 ms, cold <= 50 ms, not counting the import of memtune's
packages (sympy, the registry). Run: ``python bench/query.py``.
"""
from __future__ import annotations

import statistics
import time

from memtune import costmodel
from memtune.costmodel import registry
from memtune.costmodel import query

CASES = {
    "hmm_scheduled_permutation": {"n": 1 << 22, "w": 32, "L": 400},
    "sat_1pr1w": {"nbar": 4096, "w": 32, "L": 400, "r": 0.1, "depth": 0},
    "matmul_hmm": {"nbar": 4096, "m": 64, "w": 32, "l": 2, "L": 400, "p": 1024, "d": 132},
    "prefix_sums_simple": {"n": 1 << 20, "w": 32, "l": 2, "p": 1024},
    "transpose_crsw": {"mapping": "rap", "w": 32, "l": 2},
}


def main() -> None:
    t0 = time.perf_counter()
    registry.names()            # part of the import: the families register their entries
    print(f"import of the registry: {1000 * (time.perf_counter() - t0):.1f} ms (costmodel {costmodel.__name__})")
    print(f"{'entry':<28}{'cold ms':>10}{'warm ms (median of 200)':>26}")
    worst_cold = worst_warm = 0.0
    for name, values in CASES.items():
        t = time.perf_counter()
        query.cost(name, values)
        cold = 1000 * (time.perf_counter() - t)
        warm = []
        for _ in range(200):
            t = time.perf_counter()
            query.cost(name, values)
            warm.append(1000 * (time.perf_counter() - t))
        med = statistics.median(warm)
        worst_cold, worst_warm = max(worst_cold, cold), max(worst_warm, med)
        print(f"{name:<28}{cold:>10.2f}{med:>26.3f}")
    print(f"worst cold {worst_cold:.1f} ms (goal <= 50), worst warm {worst_warm:.3f} ms (goal <= 1)")


if __name__ == "__main__":
    main()

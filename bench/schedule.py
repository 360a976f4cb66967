"""Time to compute the conflict-free schedules, on the CPU (walks, numba) or the GPU (pairing, CuPy).

The full HMM schedule is the three steps (row1, col, row2) and the per-row
S_i, D_i of every row-wise pass. Goals: on the 2-core CI-size CPU, n = 2^22
in <= 10 s and n = 2^24 in <= 60 s, the DMM schedule of n = 1024 in <= 10 ms;
on the GPU, n = 2^22 in <= 0.5 s and n = 2^26 in <= 5 s.
Run: ``python bench/schedule.py [--skip-large] [--on gpu] [--json FILE]``.
"""
from __future__ import annotations

import argparse
import json
import time

from memtune.costmodel import permutations as P
from memtune.costmodel import schedules as S

GPU_GOALS = {1 << 22: 0.5, 1 << 26: 5.0}
CPU_GOALS = {1 << 22: 10.0, 1 << 24: 60.0}


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def full_hmm(perm, w, xp=None):
    if xp is not None:
        perm = xp.asarray(perm)
    sched = S.hmm_schedule(perm, w, xp=xp)
    rows = sched.row_schedules()
    if xp is not None:
        xp.cuda.Device().synchronize()
    return sched, rows


def cpu_rows(skip_large: bool) -> list[dict]:
    S.dmm_schedule(P.random(1024, 0), 32)        # numba compiles (or loads its cache) here
    full_hmm(P.random(64 * 64, 0), 32)
    rows = [{"schedule": "DMM", "perm": "random", "n": 1024, "goal_s": 0.010,
             "seconds": min(timed(S.dmm_schedule, P.random(1024, seed), 32)[0] for seed in range(20))}]
    sizes = [1 << 22] + ([] if skip_large else [1 << 24])
    for n in sizes:
        for name in ("random", "bit-reversal") if n == 1 << 22 else ("random",):
            rows.append({"schedule": "HMM full", "perm": name, "n": n, "goal_s": CPU_GOALS[n],
                         "seconds": timed(full_hmm, P.named(name, n, 1), 32)[0]})
    rows.append({"schedule": "HMM full, nbar=2016", "perm": "random", "n": 2016 ** 2, "goal_s": None,
                 "seconds": timed(full_hmm, P.random(2016 * 2016, 1), 32)[0]})
    return rows


def gpu_rows(skip_large: bool) -> list[dict]:
    import cupy

    full_hmm(P.random(64 * 64, 0), 32, cupy)     # CuPy compiles its kernels once
    rows = []
    for n in [1 << 22] + ([] if skip_large else [1 << 26]):
        for name in P.NAMES:
            perm = P.named(name, n, 1)
            best = min(timed(full_hmm, perm, 32, cupy)[0] for _ in range(2))
            rows.append({"schedule": "HMM full", "perm": name, "n": n, "goal_s": GPU_GOALS[n], "seconds": best})
    perm = P.random(2016 * 2016, 1)
    rows.append({"schedule": "HMM full, nbar=2016", "perm": "random", "n": 2016 ** 2, "goal_s": None,
                 "seconds": timed(full_hmm, perm, 32, cupy)[0]})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-large", action="store_true", help="leave out the largest size")
    parser.add_argument("--on", choices=("cpu", "gpu"), default="cpu")
    parser.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    rows = (gpu_rows if args.on == "gpu" else cpu_rows)(args.skip_large)
    print(f"{'schedule':<22}{'perm':<14}{'n':>10}{'seconds':>10}{'goal':>8}")
    for r in rows:
        goal = "-" if r["goal_s"] is None else f"{r['goal_s']:g}"
        print(f"{r['schedule']:<22}{r['perm']:<14}{r['n']:>10}{r['seconds']:>10.3f}{goal:>8}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"on": args.on, "rows": rows}, fh, indent=1)


if __name__ == "__main__":
    main()

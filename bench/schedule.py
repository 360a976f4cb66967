"""Time to compute the conflict-free schedules (issue goals on the 2-core CI-size machine).

Goals: full HMM schedule (three steps and the per-row S_i, D_i of every
row-wise pass) for n = 2^22 in <= 10 s and n = 2^24 in <= 60 s; DMM schedule
for n = 1024 in <= 10 ms. Run: ``python bench/schedule.py [--skip-large]``.
"""
from __future__ import annotations

import argparse
import time

from costmodel import permutations as P
from costmodel import schedules as S


def timed(fn, *args):
    t0 = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - t0, out


def full_hmm(perm, w):
    sched = S.hmm_schedule(perm, w)
    sched.row_schedules()
    return sched


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-large", action="store_true", help="leave out n = 2^24")
    args = parser.parse_args()
    S.dmm_schedule(P.random(1024, 0), 32)        # numba compiles (or loads its cache) here
    full_hmm(P.random(64 * 64, 0), 32)
    print(f"{'schedule':<34}{'n':>10}{'seconds':>10}{'goal':>8}")
    best = min(timed(S.dmm_schedule, P.random(1024, seed), 32)[0] for seed in range(20))
    print(f"{'DMM, random, w=32':<34}{1024:>10}{best:>10.4f}{0.010:>8}")
    for name in ("random", "bit-reversal"):
        t, _ = timed(full_hmm, P.named(name, 1 << 22, 1), 32)
        print(f"{'HMM full, ' + name + ', w=32':<34}{1 << 22:>10}{t:>10.2f}{10:>8}")
    if not args.skip_large:
        t, _ = timed(full_hmm, P.random(1 << 24, 1), 32)
        print(f"{'HMM full, random, w=32':<34}{1 << 24:>10}{t:>10.2f}{60:>8}")
    t, _ = timed(full_hmm, P.random(2016 * 2016, 1), 32)
    print(f"{'HMM full, random, nbar=2016=63*32':<34}{2016 * 2016:>10}{t:>10.2f}{'-':>8}")


if __name__ == "__main__":
    main()

"""What a block barrier waits for its slowest warp while every SM streams (probe.cu's ``barrier_waits``).

Blocks of 1-32 warps copy 256 MiB of float32 through shared memory in chunks as the transpose moves a 32-wide
tile: ``steps`` dependent load rounds of a word a thread (each word into shared memory, so each round waits for
its load), a barrier, the words out (another warp's, so the barrier is needed), a barrier. Every warp times with
clock64 its own rounds and its wait at each barrier; a barrier's mean wait is how much later than a warp's own its
block's slowest warp arrives, which grows with the warps a block holds and the spread of their rounds. Each block
size at one round a chunk and at the transpose's 32 / warps, on a full grid (2048 threads an SM), one block an SM
and one block alone. Medians of five launches, written as JSON.

    python bench/barrier_waits.py OUT.json
"""
import statistics

from common import probe_bench

probe, sms, clock, save = probe_bench(__doc__)
rows = []
for warps in (1, 2, 4, 8, 16, 32):
    for steps in sorted({1, 32 // warps}):
        for per_sm in (min(32, 64 // warps), 1, 0):
            grid, nbytes = (sms * per_sm, 1 << 28) if per_sm else (1, 1 << 26)
            cycles, ms = probe.barrier_waits(warps, steps, grid, nbytes)
            ns = {k: statistics.median(c[k] for c in cycles) / clock for k in probe.BARRIER_INTERVALS}
            row = {"warps": warps, "steps": steps, "grid": grid, "blocks_per_sm": per_sm or 1 / sms, "bytes": nbytes,
                   "ns": ns, "ms": statistics.median(ms), "gbps": 2 * nbytes / statistics.median(ms) / 1e6,
                   "cycles": cycles, "times_ms": ms}
            rows.append(row)
            print(f"{warps:2d} warps, {steps:2d} steps, grid {grid:5d}: {row['gbps']:7.1f} GB/s; "
                  + "; ".join(f"{k} {v:7.1f} ns" for k, v in ns.items()), flush=True)
save(rows)

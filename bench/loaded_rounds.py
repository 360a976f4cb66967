"""What a block waits for one dependent operation while the other SMs stream (probe.cu's ``loaded_rounds``).

Every block of a grid copies 256 MiB in chunks of threads x 4 16-byte vectors, grid-stride; before each chunk its
thread 0 times (clock64) one operation that the block then waits on: a ticket (an atomic on one counter, handed
to the block through shared memory and a barrier, as the look-back kernels draw theirs), a .cg load of a word the
L2 holds, or the two barriers alone. The copy alone is timed beside each grid. Grids from one block to every SM
full show the round trip against the load on the memory system; the same with the chunks read and summed, not
stored, shows what of it the stores before the barrier make. Medians of five launches, written as JSON.

    python bench/loaded_rounds.py OUT.json
"""
import statistics

from common import probe_bench

probe, sms, clock, save = probe_bench(__doc__)
nbytes = 1 << 28
rows = []
for write in (True, False):
    for threads, full in ((128, 16), (512, 4)):
        for per_sm in sorted({1, 2, 4, 8, full} & set(range(1, full + 1))) + [0]:
            grid = sms * per_sm if per_sm else 1
            row = {"write": write, "threads": threads, "grid": grid, "blocks_per_sm": per_sm or 1 / sms}
            for mode in probe.LOADED_MODES:
                cycles, ms = probe.loaded_rounds(mode, threads, grid, nbytes, write)
                row[mode] = {"ns": statistics.median(cycles) / clock, "ms": statistics.median(ms),
                             "gbps": (1 + write) * nbytes / statistics.median(ms) / 1e6, "cycles": cycles,
                             "times_ms": ms}
            rows.append(row)
            print(f"{'copy' if write else 'read'} {threads:4d} threads, grid {grid:5d}: {row['copy']['gbps']:7.1f} GB/s; "
                  + "; ".join(f"{m} {row[m]['ns']:7.1f} ns ({row[m]['gbps']:7.1f} GB/s)" for m in list(probe.LOADED_MODES)[1:]),
                  flush=True)
save(rows, bytes=nbytes)

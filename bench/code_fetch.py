"""What an instruction costs as a kernel's loop outgrows the instruction caches (probe.cu's ``code_loop_<N>``; #31).

A loop of N float FMAs in 8 independent chains, N from 256 (4 KB of code) to 16384 (256 KB), run by one block of
1-32 warps alone on the GPU, by one such block on every SM, by as many an SM as make 16 warps, and by as many blocks
an SM as fit (2048 threads; up to 32 blocks): each warp times its loop with clock64. Below the instruction caches'
size a warp issues an FMA a cycle (its scheduler's share where several warps share it); past it, what fetching the
code from the next level costs, and how much the warps of a block, and the blocks of an SM at other places in the
loop, share of it. The matmul's 64 x 64 tile with 8 x 8 outputs a thread runs a 71 KB slice loop at a slice of 32
and a 35 KB one at 16 (`bench/results/sass/matmul_paths/`), and measures 1.3-1.65x slower at 32
(`bench/results/h200/matmul_paths/`). Medians over the warps of each launch, written as JSON.

    python bench/code_fetch.py OUT.json
"""
import statistics

from common import probe_bench

probe, sms, clock, save = probe_bench(__doc__)
rows = []
for warps in (1, 2, 4, 8, 16, 32):
    for per_sm in sorted({0, 1, max(1, 16 // warps), min(32, 64 // warps)}):
        for n in probe.CODE_LOOPS:
            grid = sms * per_sm if per_sm else 1
            cpi = probe.code_loop_cycles(n, warps, grid)
            row = {"fmas": n, "code_bytes": probe.code_loop_bytes(n), "warps": warps, "grid": grid, "blocks_per_sm": per_sm or 1 / sms,
                   "cycles_per_instruction": statistics.median(cpi), "spread": [min(cpi), max(cpi)]}
            rows.append(row)
            print(f"{warps:2d} warps, grid {grid:5d}, {probe.code_loop_bytes(n) // 1024:4d} KB: {row['cycles_per_instruction']:6.3f} "
                  f"cycles an instruction (warps {min(cpi):.3f}-{max(cpi):.3f})", flush=True)
save(rows)

"""Tune a shared-memory tiled SGEMM (gemm.cu) with memtune: block shapes, outputs per thread in x and y and the
k-slab, about 600 configurations within 48 KiB of shared memory and 64 to 1024 threads."""
from __future__ import annotations

import numpy as np

from memtune.costmodel.physical.launch import Access

if __package__:                          # imported as examples.<name> (the benchmarks)
    from .common import HERE, main
else:                                    # run as a script from this folder
    from common import HERE, main


def describe(small: bool = False) -> dict:
    n = 512 if small else 2048
    rng = np.random.default_rng(0)
    a, b = rng.random((n, n), dtype=np.float32), rng.random((n, n), dtype=np.float32)
    c = np.zeros((n, n), np.float32)
    answer = (a.astype(np.float64) @ b.astype(np.float64)).astype(np.float32)
    tune_params = {"block_size_x": [8, 16, 32], "block_size_y": [4, 8, 16, 32], "tile_size_x": [1, 2, 4, 8],
                   "tile_size_y": [1, 2, 4, 8], "tile_k": [4, 8, 16, 32]}
    restrictions = ["64 <= block_size_x * block_size_y",
                    "(block_size_y * tile_size_y + block_size_x * tile_size_x) * tile_k * 4 <= 49152",
                    "block_size_x * tile_size_x <= 256 and block_size_y * tile_size_y <= 256"]

    def plan(p: dict, launch) -> dict:
        """What the author knows: a block reads BM rows of A and BN columns of B (the L2 serves the re-reads),
        steps n / tile_k slabs with a barrier each, and per k reads tile_size_x + tile_size_y shared words a
        thread for 2 tile_size_x tile_size_y flops."""
        bm, bn = p["block_size_y"] * p["tile_size_y"], p["block_size_x"] * p["tile_size_x"]
        blocks = launch.blocks
        reads = blocks * (bm + bn) * n * 4
        warps = launch.warps
        slabs = n / p["tile_k"]
        staged = slabs * (bm + bn) * p["tile_k"] / 32
        loads = n * warps * (p["tile_size_x"] + p["tile_size_y"])
        return {"accesses": (Access("arg1", a.nbytes), Access("arg2", b.nbytes),
                             Access("arg1", reads - a.nbytes - b.nbytes, cached=True), Access("arg0", c.nbytes, write=True)),
                "rounds": slabs, "shared_wavefronts": staged + loads, "flops": 2.0 * bm * bn * n}

    return dict(kernel_name="sgemm", kernel_source=HERE / "gemm.cu", problem_size=(n, n),
                grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
                arguments=[c, a, b, np.int32(n)], tune_params=tune_params, restrictions=restrictions,
                answer=[answer, None, None, None], atol=0.05 * n / 512, plan=plan)


if __name__ == "__main__":
    main(describe, __doc__)

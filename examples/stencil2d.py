"""Tune a 2-D five-point stencil (stencil2d.cu) with memtune: 5 block widths x 6 heights x 4 x 4 tiles per
thread x shared memory or not, about 600 configurations once the restrictions hold."""
from __future__ import annotations

import numpy as np

from memtune.costmodel.physical.launch import Access

if __package__:                          # imported as examples.<name> (the benchmarks)
    from .common import HERE, main
else:                                    # run as a script from this folder
    from common import HERE, main


def describe(small: bool = False, size: tuple[int, int] | None = None) -> dict:
    """The tuning problem at ``size`` = (width, height) (8192 x 8192; 512 x 512 where ``small``)."""
    width, height = size or ((512, 512) if small else (8192, 8192))
    rng = np.random.default_rng(0)
    grid = np.zeros((height + 2, width + 2), np.float32)
    grid[1:-1, 1:-1] = rng.random((height, width), dtype=np.float32)
    out = np.zeros((height, width), np.float32)
    c = grid[1:-1, 1:-1]
    answer = 0.5 * c + 0.125 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, :-2] + grid[1:-1, 2:])
    tune_params = {"block_size_x": [16, 32, 64, 128, 256], "block_size_y": [1, 2, 4, 8, 16, 32],
                   "tile_size_x": [1, 2, 4, 8], "tile_size_y": [1, 2, 4, 8], "use_shmem": [0, 1]}
    restrictions = ["32 <= block_size_x * block_size_y <= 1024",
                    "use_shmem == 0 or (block_size_y * tile_size_y + 2) * (block_size_x * tile_size_x + 2) * 4 <= 49152"]

    def plan(p: dict, launch) -> dict:
        """What the author knows: each block reads its tile with its halo (the neighbours' halos come from the
        L2), every point costs five loads through L1 or shared memory and six flops. Without staging, a thread's
        points are dependent rounds: ``out`` and ``in`` are not ``__restrict__``, so the compiler keeps each
        point's loads after the previous point's store. (Measured on the H100 at 5000 x 7000, the same
        configurations with ``__restrict__`` pointers: 1.00x at 1-2 points a thread, 1.09x faster at 8, 1.11x
        at 16, 1.15x at 32, bench/results/h100/user_kernels/heldout/stencil2d_restrict.json: the order is
        one cause of the large tiles' slowness, not all of it.) Staged, the copy into shared memory is the
        rounds: its row loop is not unrolled (the SASS, sm_90: the same 31 loads at every tile size, the
        column loop unrolled inside a row loop that runs), and each row's loads are waited out by their shared
        stores before the next row's are issued, so a block waits ceil((rows + 2) / block_size_y) rounds."""
        rows, cols = p["block_size_y"] * p["tile_size_y"], p["block_size_x"] * p["tile_size_x"]
        halo = launch.blocks * (rows + 2) * (cols + 2) * 4 - grid.nbytes
        points = rows * cols
        staged = (rows + 2) * (cols + 2) / 32 if p["use_shmem"] else 0.0
        return {"accesses": (Access("arg1", grid.nbytes), Access("arg1", max(halo, 0), cached=True),
                             Access("arg0", out.nbytes, write=True)),
                "shared_wavefronts": staged + 5 * points / 32, "flops": 6 * points,
                "rounds": float(-(-(rows + 2) // p["block_size_y"])) if p["use_shmem"]
                else float(p["tile_size_x"] * p["tile_size_y"])}

    return dict(kernel_name="stencil2d", kernel_source=HERE / "stencil2d.cu", problem_size=(width, height),
                arguments=[out, grid, np.int32(width), np.int32(height)], tune_params=tune_params,
                grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
                restrictions=restrictions, answer=[answer, None, None, None], atol=1e-5, plan=plan)


if __name__ == "__main__":
    main(describe, __doc__)

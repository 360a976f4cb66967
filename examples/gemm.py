"""Tune a shared-memory tiled SGEMM (gemm.cu) with memtune: block shapes, outputs per thread in x and y and the
k-slab, about 600 configurations within 48 KiB of shared memory and 64 to 1024 threads."""
from __future__ import annotations

import numpy as np

from memtune.costmodel.physical.launch import Access
from memtune.costmodel.physical.shared import SharedAccess
from memtune.kernels.base import unrolled_rounds

if __package__:                          # imported as examples.<name> (the benchmarks)
    from .common import HERE, main
else:                                    # run as a script from this folder
    from common import HERE, main


def staged_store(threads: int, rows: int, cols: int, transposed: bool, step: int) -> np.ndarray:
    """Shared addresses of one step of a slab's staging loop: thread t stores element e = t + step * threads
    of a rows x cols slab read row by row, at [r][c], or at [c][r] where the slab is stored transposed."""
    e = np.arange(threads) + step * threads
    r, c = e // cols, e % cols
    return np.where(e < rows * cols, c * rows + r if transposed else e, -1)


def operand_row(block_size_x: int, threads: int) -> np.ndarray:
    """As[k][threadIdx.y + i * block_size_y] relative to its row: the thread's y."""
    return np.arange(threads) // block_size_x


def operand_column(block_size_x: int, threads: int) -> np.ndarray:
    """Bs[k][threadIdx.x + j * block_size_x] relative to its row: the thread's x."""
    return np.arange(threads) % block_size_x


def describe(small: bool = False, size: int | None = None) -> dict:
    """The tuning problem at n = ``size`` (2048; 512 where ``small``), a multiple of 256."""
    n = size or (512 if small else 2048)
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
        """What the author knows: a block reads BM rows of A and BN columns of B (the L2 serves the re-reads, A's
        in rows of tile_k floats, whole 32-byte sectors however short), steps n / tile_k slabs, and stages each
        slab in shared memory, A's transposed (As[c][r]: the stores of a warp stride BM words, bank conflicts
        the model counts), then per k reads tile_size_y words of As and tile_size_x of Bs a thread for
        2 tile_size_x tile_size_y flops into as many independent accumulators. Each slab is a round for A's
        staging loop and one for B's (nvcc unrolls each by four, a group's loads issued before their shared
        stores, and B's loads wait for A's stores: the SASS, sm_90), ``unrolled_rounds`` each; after the
        first slab the lines come from the L2, where the other blocks of the row (column) brought them."""
        bm, bn, tk = p["block_size_y"] * p["tile_size_y"], p["block_size_x"] * p["tile_size_x"], p["tile_k"]
        threads, slabs = p["block_size_x"] * p["block_size_y"], n // tk
        rereads = launch.blocks * (bm * max(tk * 4, 32) / (tk * 4) + bn) * n * 4 - a.nbytes - b.nbytes
        a_steps, b_steps = -(-bm * tk // threads), -(-tk * bn // threads)    # a thread's staging loop of each slab
        stores = [SharedAccess(staged_store, (threads, bm, tk, True, step), count=slabs) for step in range(a_steps)]
        stores += [SharedAccess(staged_store, (threads, tk, bn, False, step), count=slabs) for step in range(b_steps)]
        operands = [SharedAccess(operand_row, (p["block_size_x"], threads), count=n * p["tile_size_y"]),
                    SharedAccess(operand_column, (p["block_size_x"], threads), count=n * p["tile_size_x"])]
        per_slab = unrolled_rounds(a_steps) + unrolled_rounds(b_steps)
        lines = slabs * (bm + tk * bn / 32 * max(1, 32 / bn))     # L1 passes of the staging loads: a line each
        return {"accesses": (Access("arg1", a.nbytes), Access("arg2", b.nbytes),
                             Access("arg1", max(rereads, 0), cached=True), Access("arg0", c.nbytes, write=True)),
                "rounds": per_slab, "l2_rounds": (slabs - 1) * per_slab,
                "shared_wavefronts": lines, "shared_accesses": tuple(stores + operands),
                "flops": 2.0 * bm * bn * n, "chains": p["tile_size_x"] * p["tile_size_y"]}

    return dict(kernel_name="sgemm", kernel_source=HERE / "gemm.cu", problem_size=(n, n),
                grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
                arguments=[c, a, b, np.int32(n)], tune_params=tune_params, restrictions=restrictions,
                answer=[answer, None, None, None], atol=0.05 * n / 512, plan=plan)


if __name__ == "__main__":
    main(describe, __doc__)

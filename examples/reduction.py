"""Tune a sum (reduction.cu) with memtune: 5 block sizes x 7 grid sizes x 3 vector widths x 4 unroll factors
x warp shuffles or a shared tree, 840 configurations. The grid is a tunable: problem_size names it."""
from __future__ import annotations

import numpy as np

from memtune.costmodel.physical.launch import Access

if __package__:                          # imported as examples.<name> (the benchmarks)
    from .common import HERE, main
else:                                    # run as a script from this folder
    from common import HERE, main


def describe(small: bool = False, size: int | None = None) -> dict:
    """The tuning problem at n = ``size`` floats (2^26; 2^20 where ``small``)."""
    n = size or 1 << (20 if small else 26)
    values = np.random.default_rng(0).random(n, dtype=np.float32)
    result = np.zeros(1, np.float32)
    expected = np.array([values.astype(np.float64).sum()], np.float32)
    tune_params = {"block_size_x": [64, 128, 256, 512, 1024], "num_blocks": [132, 264, 528, 1056, 2112, 4224, 8448],
                   "vector": [1, 2, 4], "loop_unroll_factor_main": [1, 2, 4, 8], "use_shuffle": [0, 1]}

    def plan(p: dict, launch) -> dict:
        """What the author knows: each thread's loads are independent (unrolled), the block's tree costs
        log2(threads) shared rounds, and every block adds once to one address."""
        threads = p["num_blocks"] * p["block_size_x"]
        steps = n / p["vector"] / threads
        tree = 5 + np.log2(p["block_size_x"] / 32) + 5 if p["use_shuffle"] else np.log2(p["block_size_x"])
        return {"accesses": (Access("arg1", values.nbytes), Access("arg0", 4 * p["num_blocks"], write=True,
                                                                   casual=True)),
                "rounds": max(1.0, steps / p["loop_unroll_factor_main"]), "shared_rounds": float(tree),
                "flops": float(n) / p["num_blocks"], "atomics": 1.0}

    return dict(kernel_name="reduce_sum", kernel_source=HERE / "reduction.cu", problem_size="num_blocks",
                grid_div_x=[], arguments=[result, values, np.int32(n)], tune_params=tune_params,
                answer=[expected, None, None], atol=float(expected[0]) * 1e-4, plan=plan)


if __name__ == "__main__":
    main(describe, __doc__)

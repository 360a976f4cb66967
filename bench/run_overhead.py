"""What memtune.run adds to a kernel launch once warm: the lookup (a remembered choice), the checks
and binding the caller's arrays, against running the same kernel on inputs bound beforehand.

    python bench/run_overhead.py --out bench/results/h100

Host time per call (perf_counter over 2000 calls, the device synchronised after each), at a size
small enough that the launch, not the kernel, is most of the call.
"""
from __future__ import annotations

import json
import time

from common import setup

import memtune

CALLS = 2000


def per_call_us(fn, sync) -> float:
    for _ in range(50):
        fn()
    sync()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
        sync()
    return (time.perf_counter() - start) / CALLS * 1e6


def main() -> int:
    args, out = setup(__doc__)
    import cupy as cp
    from memtune import kernels
    from memtune.kernels.timing import Device

    device = Device.current().name
    sync = cp.cuda.Device().synchronize
    rows = []
    for family, arrays in (("sat", (cp.random.standard_normal((256, 256), dtype=cp.float32),)),
                           ("prefix_sums", (cp.random.standard_normal(1 << 16, dtype=cp.float32),)),
                           ("transpose", (cp.random.standard_normal((256, 256), dtype=cp.float32),))):
        choice = memtune.choose(family, int(arrays[0].size), "float32", device)
        kernel = kernels.get(choice.algorithm)
        bound = kernel.bind(dict(zip(memtune.runner.INPUTS[family][0], arrays)), "float32")
        direct = per_call_us(lambda: kernel.run(bound, **choice.params), sync)
        through = per_call_us(lambda: memtune.run(family, *arrays), sync)
        lookup = per_call_us(lambda: memtune.choose(family, int(arrays[0].size), "float32", device), lambda: None)
        rows.append({"family": family, "algorithm": choice.algorithm, "source": choice.source, "direct_us": direct,
                     "memtune_run_us": through, "overhead_us": through - direct, "lookup_us": lookup})
        print(f"{family:12s} {choice.algorithm:28s} direct {direct:7.1f} us  memtune.run {through:7.1f} us  "
              f"overhead {through - direct:6.1f} us  lookup {lookup:5.2f} us", flush=True)
    (out / "run_overhead.json").write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

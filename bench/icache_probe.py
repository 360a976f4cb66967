"""How fast a warp issues a loop body of N independent FMAs as the body outgrows the instruction caches.

    python bench/icache_probe.py --out DIR

A block of 128 w threads on each SM (w warps on each of its four schedulers) runs a loop whose body is N
fused multiply-adds on eight independent accumulators (the FMA latency is hidden: one warp can issue one a
cycle), 16 bytes of code each. Each warp times its loop with clock64; the answer is the cycles a warp takes per
FMA over w (1.0: every scheduler issues every cycle). Where the body no longer fits an instruction cache the
warps wait on instruction fetch and the figure rises; more warps running the same body share what one
fetched. Writes icache_probe.json (N, code bytes, w, cycles per FMA per warp over w).
"""
from __future__ import annotations

import json

import numpy as np
from common import setup

BODIES = (256, 512, 1024, 2048, 4096, 8192, 16384)   # FMAs in the loop body: 4 to 256 KB of code
WARPS = (1, 2, 4)                                     # warps on each scheduler
WORK = 1 << 21                                        # FMAs a warp issues in one launch

SOURCE = r"""
template <int N>
__global__ void fma_body(float* out, int reps, long long* cycles) {
    float a[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) a[j] = threadIdx.x + j;
    __syncthreads();
    const long long t0 = clock64();
    for (int r = 0; r < reps; ++r) {
#pragma unroll
        for (int i = 0; i < N; ++i) a[i % 8] = fmaf(a[i % 8], 1.000001f, 0.5f);
    }
    const long long t1 = clock64();
    float s = 0;
#pragma unroll
    for (int j = 0; j < 8; ++j) s += a[j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;
    if (threadIdx.x % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = t1 - t0;
}
"""


def main() -> int:
    args, out = setup(__doc__, repeats=3)
    import cupy as cp

    names = [f"fma_body<{n}>" for n in BODIES]
    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=names)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rows = []
    for n, name in zip(BODIES, names):
        kernel = module.get_function(name)
        for w in WARPS:
            threads = 128 * w
            result = cp.zeros(sms * threads, dtype=cp.float32)
            cycles = cp.zeros(sms * threads // 32, dtype=cp.int64)
            reps = max(1, WORK // n)
            per = []
            for _ in range(args.repeats + 1):     # the first launch loads the code
                kernel((sms,), (threads,), (result, np.int32(reps), cycles))
                cp.cuda.Device().synchronize()
                per.append(float(np.median(cycles.get())) / (reps * n) / w)
            rows.append({"fmas": n, "code_bytes": 16 * n, "warps_per_scheduler": w,
                         "cycles_per_fma_over_w": float(np.median(per[1:]))})
            print(f"N {n:6d} ({16 * n // 1024:4d} KB)  w {w}  {rows[-1]['cycles_per_fma_over_w']:.3f} cycles/FMA/w",
                  flush=True)
    (out / "icache_probe.json").write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

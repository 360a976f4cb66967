import sys; sys.path.insert(0, '.')
import numpy as np
import kernels
from kernels.base import cupy, next_epoch
from kernels.timing import measure, flush_l2
cp = cupy()
src_scan = open('kernels/scan.cu').read()
src_sat = open('kernels/sat.cu').read()
def mod(src):
    m = cp.RawModule(code=src, options=("-std=c++17", "-Ikernels")); m.compile(); return m
def timeit(fn, reps=10):
    ts = []
    for _ in range(reps + 2):
        flush_l2(); s, e = cp.cuda.Event(), cp.cuda.Event(); s.record(); fn(); e.record(); e.synchronize(); ts.append(cp.cuda.get_elapsed_time(s, e))
    return float(np.median(ts[2:]))
n = 1 << 28
k = kernels.get("prefix_sums_lookback"); inp = k.make_inputs(n, "float32", 1)
variants = {
 "base": src_scan,
 "nolookback": src_scan.replace("T excl = lookback_exclusive<T>(status, tile, __shfl_sync(0xffffffffu, w, (P >> 5) - 1), epoch);", "T excl = 0;"),
 "streaming": src_scan.replace("buf[pad(k * P + tid)] = g < n ? in[g] : T(0);", "buf[pad(k * P + tid)] = g < n ? __ldcs(in + g) : T(0);").replace("if (g < n) out[g] = buf[pad(k * P + tid)];", "if (g < n) __stcs(out + g, buf[pad(k * P + tid)]);"),
}
for name, src in variants.items():
    m = mod(src)
    for threads, items in ((256, 32), (128, 32), (128, 64), (512, 16)):
        fn = m.get_function(f"scan_lookback_f32_i{items}")
        tiles = -(-n // (threads * items)); shared = (threads * items + threads * items // 32 + 1) * 4
        if shared > 48 * 1024: fn.max_dynamic_shared_size_bytes = shared
        arr = inp.arrays
        def go():
            e = next_epoch(inp)
            fn((tiles,), (threads,), (arr["a"], arr["out"], np.int64(n), arr["counter"], arr["status"], e), shared_mem=shared)
        print("scan", name, threads, items, round(timeit(go), 4), flush=True)
del inp
k = kernels.get("sat_1r1w_lookback"); inp = k.make_inputs(n, "float32", 1)
variants = {"base": src_sat, "nolookback": src_sat.replace("strip_lookback<T>(status, agg, excl, strip, nbar, col, epoch);", "for (int k = 0; k < V; ++k) excl[k] = 0;"),
            "cg-load": src_sat.replace("__ldcs(reinterpret_cast", "__ldcg(reinterpret_cast")}
for name, src in variants.items():
    m = mod(src)
    for w, r in ((8, 8), (16, 4), (4, 8)):
        fn = m.get_function(f"sat_strips_f32_w{w}_r{r}")
        arr = inp.arrays
        def go():
            e = next_epoch(inp)
            fn((-(-16384 // (w * r)),), (32, w), (arr["a"], arr["out"], np.int32(16384), arr["counter"], arr["status"], e))
        print("sat", name, w, r, round(timeit(go), 4), flush=True)

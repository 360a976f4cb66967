"""Design choices of the float32 tiled product, measured one at a time beside cuBLAS SGEMM (TF32 off).

    python bench/gemm_variants.py [--sizes 4096 8192] [--out DIR]

Each variant is matmul_hmm's frame (an M x M tile of c a block, R x R outputs a thread in groups of 4 x 4,
k-slices of BK staged through shared memory, double-buffered) with choices changed, in the order they were
tried (bench/results/h100/matmul/gemm_variants.json holds the four rounds):

- ``gemm``: the lanes of a warp laid out as 8 x 4 threads of the tile instead of a row of 16 (``warps``), the
  transposed slice of a padded by 4 words (``pad``), a launch bound asking for two resident blocks an SM
  (``minb`` = 2: at most 128 registers a thread), BK = 8 or 16;
- ``gemm2``: the fetch's addresses computed once, the next step's fragments prefetched (``pf``), a grouped
  tile order (``swz`` rows of tiles a group); then (round 3, as ``gemm3`` then) a's transposed stores free of
  bank conflicts (``cf``) and the slice loop unrolled by two (``u2``);
- ``gemm4``: the next slice's loads issued in ``parts`` pieces between the current slice's steps (BK 32 and 64
  with the registers of BK 8 or 16 in flight): what kernels/conv_matmul.cu adopted.

Square sides that are multiples of M only, back-to-back runs without the harness's L2 flush: a measurement of
the inner loop, not of the shipped kernel (bench/conv_matmul.py --matmul-only times that). Writes
gemm_variants.json: every variant's median, TFLOP/s, fraction of cuBLAS, registers and local (spilled) bytes.
"""
from __future__ import annotations

import itertools
import json
import statistics

from common import setup

SOURCE = r"""
template <int M, int R, int BK, int MINB, bool WARPS, bool PAD>
__global__ void __launch_bounds__((M / R) * (M / R), MINB)
gemm(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    constexpr int SIDE = M / R, THREADS = SIDE * SIDE, G = 4, NG = R / G, SPAN = M / NG;
    constexpr int LDA = M + (PAD ? 4 : 0), VECS = M * BK / 4, PER = (VECS + THREADS - 1) / THREADS;
    __shared__ __align__(16) float as[2][BK][LDA];
    __shared__ __align__(16) float bs[2][BK][M];
    const int tid = threadIdx.x;
    int tx, ty;
    if (WARPS) {
        const int warp = tid / 32, lane = tid % 32;
        tx = (warp % (SIDE / 8)) * 8 + lane % 8;
        ty = (warp / (SIDE / 8)) * 4 + lane / 8;
    } else {
        tx = tid % SIDE;
        ty = tid / SIDE;
    }
    const int across = n / M, r0 = (blockIdx.x / across) * M, c0 = (blockIdx.x % across) * M;
    float4 ra[PER], rb[PER];
    auto fetch = [&](int k0) {
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            const int e = tid + p * THREADS;
            ra[p] = *reinterpret_cast<const float4*>(a + (long long)(r0 + e / (BK / 4)) * n + k0 + (e % (BK / 4)) * 4);
            rb[p] = *reinterpret_cast<const float4*>(b + (long long)(k0 + e / (M / 4)) * n + c0 + (e % (M / 4)) * 4);
        }
    };
    auto stash = [&](int buf) {
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            const int e = tid + p * THREADS, row = e / (BK / 4), ka = (e % (BK / 4)) * 4;
            as[buf][ka][row] = ra[p].x; as[buf][ka + 1][row] = ra[p].y;
            as[buf][ka + 2][row] = ra[p].z; as[buf][ka + 3][row] = ra[p].w;
            *reinterpret_cast<float4*>(&bs[buf][e / (M / 4)][(e % (M / 4)) * 4]) = rb[p];
        }
    };
    float acc[R][R];
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) acc[i][j] = 0.f;
    fetch(0);
    stash(0);
    __syncthreads();
    int buf = 0;
    for (int k0 = 0; k0 < n; k0 += BK, buf ^= 1) {
        const bool more = k0 + BK < n;
        if (more) fetch(k0 + BK);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float fa[R], fb[R];
#pragma unroll
            for (int g = 0; g < NG; ++g) {
                *reinterpret_cast<float4*>(fa + g * G) = *reinterpret_cast<const float4*>(&as[buf][k][g * SPAN + ty * G]);
                *reinterpret_cast<float4*>(fb + g * G) = *reinterpret_cast<const float4*>(&bs[buf][k][g * SPAN + tx * G]);
            }
#pragma unroll
            for (int i = 0; i < R; ++i)
#pragma unroll
                for (int j = 0; j < R; ++j) acc[i][j] += fa[i] * fb[j];
        }
        if (more) stash(buf ^ 1);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int h = 0; h < NG; ++h) {
            float* dst = c + (long long)(r0 + (i / G) * SPAN + ty * G + i % G) * n + c0 + h * SPAN + tx * G;
            *reinterpret_cast<float4*>(dst) = make_float4(acc[i][h * G], acc[i][h * G + 1], acc[i][h * G + 2],
                                                          acc[i][h * G + 3]);
        }
}
// The same frame with the fetch's addresses computed once (pointers advanced a slice at a time), and options:
// a prefetch of the next k's fragments (PF), a grouped tile order (SWZ rows of tiles a group), a's transposed
// stores free of bank conflicts (CF: a warp's lanes cover 16 rows by 2 quads of k, the slice's rows padded by
// 4 words) and the slice loop unrolled by two so that each buffer's shared addresses are constants (U2).
template <int M, int R, int BK, int MINB, bool PF, int SWZ, bool CF, bool U2>
__global__ void __launch_bounds__((M / R) * (M / R), MINB)
gemm2(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    constexpr int SIDE = M / R, THREADS = SIDE * SIDE, G = 4, NG = R / G, SPAN = M / NG;
    constexpr int VECS = M * BK / 4, PER = VECS / THREADS, LDA = M + (CF ? 4 : 0);
    __shared__ __align__(16) float as[2][BK][LDA];
    __shared__ __align__(16) float bs[2][BK][M];
    const int tid = threadIdx.x, tx = tid % SIDE, ty = tid / SIDE, across = n / M;
    int tr, tc;
    if (SWZ > 1) {
        const int per_group = SWZ * across, group = blockIdx.x / per_group, first = group * SWZ;
        const int rows_here = min(SWZ, across - first), in = blockIdx.x % per_group;
        tr = first + in % rows_here;
        tc = in / rows_here;
    } else {
        tr = blockIdx.x / across;
        tc = blockIdx.x % across;
    }
    const int r0 = tr * M, c0 = tc * M;
    const float* pa[PER];
    const float* pb[PER];
    int sa[PER], sb[PER];
#pragma unroll
    for (int p = 0; p < PER; ++p) {
        const int e = tid + p * THREADS;
        const int row = CF ? e % 16 + 16 * ((e / 32) % (M / 16)) : e / (BK / 4);
        const int kq = CF ? (e / 16) % 2 + 2 * (e / (2 * M)) : e % (BK / 4);
        pa[p] = a + (long long)(r0 + row) * n + kq * 4;
        pb[p] = b + (long long)(e / (M / 4)) * n + c0 + (e % (M / 4)) * 4;
        sa[p] = kq * 4 * LDA + row;
        sb[p] = (e / (M / 4)) * M + (e % (M / 4)) * 4;
    }
    float4 ra[PER], rb[PER];
    auto fetch = [&]() {
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            ra[p] = *reinterpret_cast<const float4*>(pa[p]);
            rb[p] = *reinterpret_cast<const float4*>(pb[p]);
            pa[p] += BK;
            pb[p] += (long long)BK * n;
        }
    };
    auto stash = [&](int buf) {
        float* sA = &as[buf][0][0];
        float* sB = &bs[buf][0][0];
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            sA[sa[p]] = ra[p].x; sA[sa[p] + LDA] = ra[p].y; sA[sa[p] + 2 * LDA] = ra[p].z;
            sA[sa[p] + 3 * LDA] = ra[p].w;
            *reinterpret_cast<float4*>(sB + sb[p]) = rb[p];
        }
    };
    float acc[R][R];
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) acc[i][j] = 0.f;
    auto frag = [&](int buf, int k, float* fa, float* fb) {
#pragma unroll
        for (int g = 0; g < NG; ++g) {
            *reinterpret_cast<float4*>(fa + g * G) = *reinterpret_cast<const float4*>(&as[buf][k][g * SPAN + ty * G]);
            *reinterpret_cast<float4*>(fb + g * G) = *reinterpret_cast<const float4*>(&bs[buf][k][g * SPAN + tx * G]);
        }
    };
    auto slice = [&](int buf, bool more) {
        if (more) fetch();
        float fa[2][R], fb[2][R];
        if (PF) frag(buf, 0, fa[0], fb[0]);
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            const int cur = PF ? k % 2 : 0;
            if (PF) { if (k + 1 < BK) frag(buf, k + 1, fa[(k + 1) % 2], fb[(k + 1) % 2]); }
            else frag(buf, k, fa[0], fb[0]);
#pragma unroll
            for (int i = 0; i < R; ++i)
#pragma unroll
                for (int j = 0; j < R; ++j) acc[i][j] += fa[cur][i] * fb[cur][j];
        }
        if (more) stash(buf ^ 1);
        __syncthreads();
    };
    fetch();
    stash(0);
    __syncthreads();
    const int slices = n / BK;
    if (U2) {
        for (int s = 0; s < slices; s += 2) {
            slice(0, true);
            slice(1, s + 2 < slices);
        }
    } else {
        int buf = 0;
        for (int s = 0; s < slices; ++s, buf ^= 1) slice(buf, s + 1 < slices);
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int h = 0; h < NG; ++h) {
            float* dst = c + (long long)(r0 + (i / G) * SPAN + ty * G + i % G) * n + c0 + h * SPAN + tx * G;
            *reinterpret_cast<float4*>(dst) = make_float4(acc[i][h * G], acc[i][h * G + 1], acc[i][h * G + 2],
                                                          acc[i][h * G + 3]);
        }
}

// gemm2's best frame (BK a slice, fetch addresses computed once) with the next slice's global loads issued in
// PARTS pieces, each before BK / PARTS of the current slice's k steps and stored after them: a deep slice
// (fewer barriers) with the registers of a shallow one in flight. Shared memory is dynamic (BK = 32: 64 KB).
template <int M, int R, int BK, int PARTS>
__global__ void __launch_bounds__((M / R) * (M / R), 2)
gemm4(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c, int n) {
    constexpr int SIDE = M / R, THREADS = SIDE * SIDE, G = 4, NG = R / G, SPAN = M / NG;
    constexpr int VECS = M * BK / 4, PER = VECS / THREADS, CHUNK = PER / PARTS, KP = BK / PARTS;
    extern __shared__ __align__(16) float smem[];
    float* as = smem;                   // [2][BK][M]
    float* bs = smem + 2 * BK * M;      // [2][BK][M]
    const int tid = threadIdx.x, tx = tid % SIDE, ty = tid / SIDE, across = n / M;
    const int r0 = (blockIdx.x / across) * M, c0 = (blockIdx.x % across) * M;
    // Vector p of a thread's share lies ROWS_A rows of a (ROWS_B rows of b) below vector 0: one pointer each.
    constexpr int ROWS_A = THREADS / (BK / 4), ROWS_B = THREADS / (M / 4);
    const float* pa = a + (long long)(r0 + tid / (BK / 4)) * n + (tid % (BK / 4)) * 4;
    const float* pb = b + (long long)(tid / (M / 4)) * n + c0 + (tid % (M / 4)) * 4;
    const long long step_a = (long long)ROWS_A * n, step_b = (long long)ROWS_B * n;
    const int sa = (tid % (BK / 4)) * 4 * M + tid / (BK / 4), sb = (tid / (M / 4)) * M + (tid % (M / 4)) * 4;
    float4 ra[CHUNK], rb[CHUNK];
    auto fetch = [&](int part) {
#pragma unroll
        for (int q = 0; q < CHUNK; ++q) {
            const int p = part * CHUNK + q;
            ra[q] = *reinterpret_cast<const float4*>(pa + p * step_a);
            rb[q] = *reinterpret_cast<const float4*>(pb + p * step_b);
        }
        if (part == PARTS - 1) {
            pa += BK;
            pb += (long long)BK * n;
        }
    };
    auto stash = [&](int buf, int part) {
        float* sA = as + buf * BK * M + sa;
        float* sB = bs + buf * BK * M + sb;
#pragma unroll
        for (int q = 0; q < CHUNK; ++q) {
            const int p = part * CHUNK + q;
            sA[p * ROWS_A] = ra[q].x; sA[p * ROWS_A + M] = ra[q].y; sA[p * ROWS_A + 2 * M] = ra[q].z;
            sA[p * ROWS_A + 3 * M] = ra[q].w;
            *reinterpret_cast<float4*>(sB + p * ROWS_B * M) = rb[q];
        }
    };
    float acc[R][R];
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) acc[i][j] = 0.f;
#pragma unroll
    for (int part = 0; part < PARTS; ++part) {
        fetch(part);
        stash(0, part);
    }
    __syncthreads();
    const int slices = n / BK;
    int buf = 0;
    for (int s = 0; s < slices; ++s, buf ^= 1) {
        const bool more = s + 1 < slices;
        const float* sA = as + buf * BK * M;
        const float* sB = bs + buf * BK * M;
#pragma unroll
        for (int part = 0; part < PARTS; ++part) {
            if (more) fetch(part);
#pragma unroll
            for (int k = part * KP; k < (part + 1) * KP; ++k) {
                float fa[R], fb[R];
#pragma unroll
                for (int g = 0; g < NG; ++g) {
                    *reinterpret_cast<float4*>(fa + g * G) = *reinterpret_cast<const float4*>(sA + k * M + g * SPAN + ty * G);
                    *reinterpret_cast<float4*>(fb + g * G) = *reinterpret_cast<const float4*>(sB + k * M + g * SPAN + tx * G);
                }
#pragma unroll
                for (int i = 0; i < R; ++i)
#pragma unroll
                    for (int j = 0; j < R; ++j) acc[i][j] += fa[i] * fb[j];
            }
            if (more) stash(buf ^ 1, part);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int h = 0; h < NG; ++h) {
            float* dst = c + (long long)(r0 + (i / G) * SPAN + ty * G + i % G) * n + c0 + h * SPAN + tx * G;
            *reinterpret_cast<float4*>(dst) = make_float4(acc[i][h * G], acc[i][h * G + 1], acc[i][h * G + 2],
                                                          acc[i][h * G + 3]);
        }
}
"""

VARIANTS = [dict(m=128, r=8, bk=bk, minb=minb, warps=warps, pad=pad)
            for bk, minb, warps, pad in itertools.product((8, 16), (1, 2), (False, True), (False, True))]
VARIANTS2 = [dict(m=128, r=8, bk=bk, minb=2, pf=pf, swz=swz, cf=False, u2=False)
             for bk, pf, swz in itertools.product((8, 16), (False, True), (1, 8))]
VARIANTS3 = [dict(m=128, r=8, bk=16, minb=2, pf=False, swz=1, cf=cf, u2=u2)
             for cf, u2 in itertools.product((False, True), (False, True)) if cf or u2]
VARIANTS4 = [dict(m=128, r=8, bk=bk, parts=parts) for bk, parts in ((16, 1), (16, 2), (32, 2), (32, 4), (64, 8))]


def name(v) -> str:
    if "parts" in v:
        return f"gemm4<{v['m']},{v['r']},{v['bk']},{v['parts']}>"
    if "pf" in v:
        flags = ",".join(str(v[k]).lower() for k in ("pf", "swz", "cf", "u2"))
        return f"gemm2<{v['m']},{v['r']},{v['bk']},{v['minb']},{flags}>"
    return f"gemm<{v['m']},{v['r']},{v['bk']},{v['minb']},{str(v['warps']).lower()},{str(v['pad']).lower()}>"


def median_ms(run, repeats) -> float:
    """The harness's timing of a call (kernels.timing.time_call) without its L2 flush: the product's operands
    are re-read from the L2 many times either way, and the rounds recorded were timed back to back."""
    from memtune.kernels.timing import time_call

    return statistics.median(time_call(run, repeats, flush=False))


def main() -> int:
    args, out = setup(__doc__, extra=lambda p: p.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192]))
    import cupy as cp

    from memtune import kernels
    from memtune.kernels.timing import measure

    module = cp.RawModule(code=SOURCE, options=("-std=c++17",), name_expressions=[name(v) for v in VARIANTS + VARIANTS2 + VARIANTS3 + VARIANTS4])
    results = {}
    for n in args.sizes:
        rng = cp.random.default_rng(n)
        a, b = rng.standard_normal((n, n), dtype=cp.float32), rng.standard_normal((n, n), dtype=cp.float32)
        ref = a @ b
        cublas = median_ms(lambda: a @ b, args.repeats)
        flops = 2.0 * n ** 3
        shipped = measure(kernels.get("matmul_hmm"), kernels.get("matmul_hmm").make_inputs(n * n, "float32", 1),
                          repeats=args.repeats, m=128, r=8, buffers=2, d=0)["median_ms"]
        rows = {"cublas_ms": cublas, "shipped_m128_r8_b2_ms": shipped, "shipped_fraction": cublas / shipped}
        c = cp.empty_like(a)
        for v in VARIANTS + VARIANTS2 + VARIANTS3 + VARIANTS4:
            fn = module.get_function(name(v))
            threads = (v["m"] // v["r"]) ** 2
            shared = 2 * 2 * v["bk"] * v["m"] * 4 if "parts" in v else 0
            if shared:
                fn.max_dynamic_shared_size_bytes = shared
            ms = median_ms(lambda: fn(((n // v["m"]) ** 2,), (threads,), (a, b, c, cp.int32(n)), shared_mem=shared),
                           args.repeats)
            err = float(cp.abs(c - ref).max() / cp.abs(ref).max())
            rows[name(v)] = {**v, "ms": ms, "tflops": flops / ms / 1e9, "fraction_of_cublas": cublas / ms,
                             "registers": fn.num_regs, "local_bytes": fn.local_size_bytes, "max_error": err}
            print(f"n={n} {name(v):32s} {ms:8.3f} ms {cublas / ms:6.3f} of cuBLAS regs {fn.num_regs} "
                  f"local {fn.local_size_bytes} err {err:.1e}", flush=True)
        print(f"n={n} cuBLAS {cublas:.3f} ms; shipped m128 r8 b2 {shipped:.3f} ms ({cublas / shipped:.3f})")
        results[n] = rows
        del a, b, c, ref
    (out / "gemm_variants.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

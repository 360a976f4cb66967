// CONV-HMM and MUL-HMM (002 §§III, V): image convolution and tiled matrix multiplication.
//
// conv_hmm: every h x w image of a batch of `count` (a square image: h = w = n, count = 1) is cut
// into TS x TS tiles (TS = w = 32 in the paper; 64 also offered); a block (a DMM) copies its
// (TS + 2v)^2 input tile and the (2v+1)^2 filter into shared memory, zero outside the image, and
// computes CONV-DMM: every output of the tile is sum_{s,t} a(i+s, j+t) f(v+s, v+t) (a correlation,
// as 002 defines it). d blocks walk the tiles with a grid-stride loop; p threads per block; V is a
// template argument so the taps unroll. A thread computes a column of R outputs (R = 1 is the
// paper's one output per thread): CONV-DMM's 2 (2v+1)^2 shared reads an output become
// ((2v+1)(R+2v) + (2v+1)^2) / R, which is what keeps a 7 x 7 filter off the shared-memory limit.
//
// matmul_hmm: c = a x b for a rows x inner and b inner x cols, row-major (square: all n). A block computes an M x M tile of c
// (the paper's m x m submatrix) from M x BK slices of a and BK x M slices of b staged in shared
// memory; each thread keeps an R x R register tile (R = 1 is the paper's one output per
// thread), and B = 2 double-buffers the slices. p = (M / R)^2 threads. Any sides: loads outside the
// matrices read zero.

#include "select.cuh"

template <typename T, int TS, int V, int R>
__device__ void conv_hmm(const T* __restrict__ a, const T* __restrict__ filt, T* __restrict__ c, int h, int w,
                         int count) {
    constexpr int K = 2 * V + 1;
    constexpr int IN = TS + 2 * V;
    constexpr int WINDOW = R + 2 * V;                       // the input rows a column of R outputs reads
    extern __shared__ __align__(16) unsigned char smem[];   // (TS + 2V)^2 + (2V + 1)^2 elements
    T* in = reinterpret_cast<T*>(smem);
    T* f = in + IN * IN;
    int tid = threadIdx.x, p = blockDim.x;
    for (int i = tid; i < K * K; i += p) f[i] = filt[i];
    const int across = (w + TS - 1) / TS;
    const long long per_image = (long long)((h + TS - 1) / TS) * across, total = per_image * count;
    for (long long tt = blockIdx.x; tt < total; tt += gridDim.x) {
        const long long image = tt / per_image, at = tt % per_image;
        const T* src = a + image * h * w;
        T* dst = c + image * h * w;
        int r0 = (int)(at / across) * TS, c0 = (int)(at % across) * TS;
        for (int i = tid; i < IN * IN; i += p) {
            int y = r0 - V + i / IN, x = c0 - V + i % IN;
            in[i] = (y >= 0 && y < h && x >= 0 && x < w) ? src[(long long)y * w + x] : T(0);
        }
        __syncthreads();
        // volatile: the filter taps are re-read (broadcast) for every column instead of being hoisted into
        // (2v+1)^2 registers. Measured on the H100 (4096^2, best of the space): holding a 7 x 7 float filter
        // (80 registers a thread) took 0.105 ms against 0.093 re-read, 5 x 5 double 0.123 against 0.110.
        const volatile T* taps = f;
        // A thread's unit is a column of R outputs (lanes on consecutive columns: conflict-free); for
        // each filter column t it holds the R + 2v inputs below it in registers and applies the 2v + 1
        // taps of that column to all R outputs, so an input is read once per t, not once per tap.
        for (int o = tid; o < TS * (TS / R); o += p) {
            const int x = o % TS, y0 = (o / TS) * R;
            T acc[R];
#pragma unroll
            for (int i = 0; i < R; ++i) acc[i] = 0;
#pragma unroll
            for (int t = 0; t < K; ++t) {
                T col[WINDOW];
#pragma unroll
                for (int i = 0; i < WINDOW; ++i) col[i] = in[(y0 + i) * IN + x + t];
#pragma unroll
                for (int s = 0; s < K; ++s) {
                    const T tap = taps[s * K + t];
#pragma unroll
                    for (int i = 0; i < R; ++i) acc[i] += col[i + s] * tap;
                }
            }
            if (c0 + x < w)
#pragma unroll
                for (int i = 0; i < R; ++i)
                    if (r0 + y0 + i < h) dst[(long long)(r0 + y0 + i) * w + c0 + x] = acc[i];
        }
        __syncthreads();
    }
}

// One 16-byte access: 4 float or 2 double.
template <typename T> struct alignas(16) Quad16 { T v[16 / sizeof(T)]; };

// G consecutive elements of shared memory into registers, 16 bytes at a time where G allows.
template <typename T, int G>
__device__ __forceinline__ void read_group(const T* src, T* dst) {
    constexpr int E = 16 / sizeof(T);
    if constexpr (G % E == 0) {
#pragma unroll
        for (int q = 0; q < G / E; ++q) {
            Quad16<T> x = reinterpret_cast<const Quad16<T>*>(src)[q];
#pragma unroll
            for (int i = 0; i < E; ++i) dst[q * E + i] = x.v[i];
        }
    } else {
#pragma unroll
        for (int i = 0; i < G; ++i) dst[i] = src[i];
    }
}

// One M x M tile of c at (r0, c0). CHECKED = false: the tile lies inside c, inner is a multiple of BK and every
// row pitch takes 16-byte vectors, so no load or store is checked and each operand's loads advance one pointer
// (vector p of a thread's share of a piece lies ROWS_A rows of a, ROWS_B rows of b, below its vector 0). The
// kernel takes this path for every tile it can. Measured on the H100 (m 128, r 8, slice 32, 4096, the harness's
// cold L2): with the bounds checked in the loop (one uniform branch a piece) 0.82 of cuBLAS; with this path and
// the checked loads' addresses recomputed a piece, 0.88; with one pointer advanced a piece, 0.94.
template <typename T, int M, int R, int STAGES, int BK, bool CHECKED>
__device__ __forceinline__ void matmul_tile(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c,
                                            int rows, int inner, int cols, int r0, int c0, T* as, T* bs) {
    constexpr int PIECE = 8, PIECES = BK / PIECE, E = 16 / sizeof(T);
    constexpr int SIDE = M / R, THREADS = SIDE * SIDE;
    constexpr int G = R < 4 ? R : 4, NG = R / G, SPAN = M / NG;
    constexpr int VECS = M * PIECE / E;                    // 16-byte vectors in a piece of a's slice (and of b's)
    constexpr int PER = (VECS + THREADS - 1) / THREADS;
    constexpr int ROWS_A = THREADS / (PIECE / E), ROWS_B = THREADS / (M / E);
    static_assert(THREADS % (M / E) == 0 && THREADS % (PIECE / E) == 0, "a block's threads cover whole rows of a piece");
    const int tid = threadIdx.x, tx = tid % SIDE, ty = tid / SIDE;
    // thread tid's first vector of a piece: a's row ROW0 at k KA0, b's row KB0 at column CQ0
    const int ROW0 = tid / (PIECE / E), KA0 = (tid % (PIECE / E)) * E, KB0 = tid / (M / E), CQ0 = (tid % (M / E)) * E;
    const bool vec_a = inner % E == 0, vec = cols % E == 0;
    const T* pa = a + (long long)(r0 + ROW0) * inner + KA0;     // advanced a piece at a time (unchecked path)
    const T* pb = b + (long long)KB0 * cols + c0 + CQ0;
    const long long step_a = (long long)ROWS_A * inner, step_b = (long long)ROWS_B * cols, piece_b = (long long)PIECE * cols;
    Quad16<T> ra[PER], rb[PER];
    auto fetch = [&](int k0) {                             // the piece of k0 .. k0 + 7 (the pieces in order)
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            if (VECS % THREADS != 0 && tid + p * THREADS >= VECS) break;
            if (!CHECKED) {
                ra[p] = *reinterpret_cast<const Quad16<T>*>(pa + p * step_a);
                rb[p] = *reinterpret_cast<const Quad16<T>*>(pb + p * step_b);
                continue;
            }
            const int gr = r0 + ROW0 + p * ROWS_A, gka = k0 + KA0, gkb = k0 + KB0 + p * ROWS_B, gc = c0 + CQ0;
            if (vec_a && gr < rows && gka < inner) ra[p] = *reinterpret_cast<const Quad16<T>*>(a + (long long)gr * inner + gka);
            else for (int i = 0; i < E; ++i) ra[p].v[i] = gr < rows && gka + i < inner ? a[(long long)gr * inner + gka + i] : T(0);
            if (vec && gkb < inner && gc < cols) rb[p] = *reinterpret_cast<const Quad16<T>*>(b + (long long)gkb * cols + gc);
            else for (int i = 0; i < E; ++i) rb[p].v[i] = gkb < inner && gc + i < cols ? b[(long long)gkb * cols + gc + i] : T(0);
        }
        if (!CHECKED) {
            pa += PIECE;
            pb += piece_b;
        }
    };
    auto stash = [&](int buf, int piece) {
        T* sa = as + (buf * BK + piece * PIECE) * M + KA0 * M + ROW0;
        T* sb = bs + (buf * BK + piece * PIECE) * M + KB0 * M + CQ0;
#pragma unroll
        for (int p = 0; p < PER; ++p) {
            if (VECS % THREADS != 0 && tid + p * THREADS >= VECS) break;
#pragma unroll
            for (int i = 0; i < E; ++i) sa[i * M + p * ROWS_A] = ra[p].v[i];
            *reinterpret_cast<Quad16<T>*>(sb + p * ROWS_B * M) = rb[p];
        }
    };
    T acc[R][R];
#pragma unroll
    for (int i = 0; i < R; ++i)
#pragma unroll
        for (int j = 0; j < R; ++j) acc[i][j] = 0;
    auto compute = [&](int buf, int piece) {
        const T* sa = as + (buf * BK + piece * PIECE) * M;
        const T* sb = bs + (buf * BK + piece * PIECE) * M;
#pragma unroll
        for (int k = 0; k < PIECE; ++k) {
            T fa[R], fb[R];
#pragma unroll
            for (int g = 0; g < NG; ++g) {
                read_group<T, G>(sa + k * M + g * SPAN + ty * G, fa + g * G);
                read_group<T, G>(sb + k * M + g * SPAN + tx * G, fb + g * G);
            }
#pragma unroll
            for (int i = 0; i < R; ++i)
#pragma unroll
                for (int j = 0; j < R; ++j) acc[i][j] += fa[i] * fb[j];
        }
    };
    if (STAGES == 2) {
#pragma unroll
        for (int piece = 0; piece < PIECES; ++piece) {
            fetch(piece * PIECE);
            stash(0, piece);
        }
        __syncthreads();
        int buf = 0;
        for (int k0 = 0; k0 < inner; k0 += BK, buf ^= 1) {
            const bool more = k0 + BK < inner;
#pragma unroll 1
            for (int piece = 0; piece < PIECES; ++piece) {
                if (more) fetch(k0 + BK + piece * PIECE);
                compute(buf, piece);
                if (more) stash(buf ^ 1, piece);
            }
            __syncthreads();
        }
    } else {
        for (int k0 = 0; k0 < inner; k0 += BK) {
#pragma unroll
            for (int piece = 0; piece < PIECES; ++piece) {
                fetch(k0 + piece * PIECE);
                stash(0, piece);
            }
            __syncthreads();
#pragma unroll 1
            for (int piece = 0; piece < PIECES; ++piece) compute(0, piece);
            __syncthreads();
        }
    }
#pragma unroll
    for (int i = 0; i < R; ++i) {
        const int gr = r0 + (i / G) * SPAN + ty * G + i % G;
        if (CHECKED && gr >= rows) continue;
#pragma unroll
        for (int h = 0; h < NG; ++h) {
            const int gc = c0 + h * SPAN + tx * G;
            T* dst = c + (long long)gr * cols + gc;
            if (G % E == 0 && (!CHECKED || (vec && gc + G <= cols))) {
#pragma unroll
                for (int q = 0; q < G / E; ++q) {
                    Quad16<T> x;
#pragma unroll
                    for (int j = 0; j < E; ++j) x.v[j] = acc[i][h * G + q * E + j];
                    reinterpret_cast<Quad16<T>*>(dst)[q] = x;
                }
            } else {
#pragma unroll
                for (int j = 0; j < G; ++j) if (!CHECKED || gc + j < cols) dst[j] = acc[i][h * G + j];
            }
        }
    }
}

// matmul_hmm: a block computes M x M tiles of c (grid-stride over tiles), k-slices of BK = 8, 16 or 32
// staged through shared memory (a transposed, so both operands are read along a row of shared memory).
// A thread's R x R outputs are NG x NG groups of G x G (G = min(R, 4)), the groups SPAN = M / NG
// apart: a warp then reads a's values as a broadcast and b's as 16-byte vectors over consecutive
// words, both without bank conflicts, and each k step is 2 NG vector loads for R^2 FMAs.
// STAGES = 2: double buffering, one barrier a slice; the next slice's global loads are issued in pieces of
// 8 steps of k, each piece's loads before 8 of the current slice's steps and stored to the other buffer
// after them, so a deep slice (few barriers) keeps only a shallow piece's loads in registers. STAGES = 1:
// load, barrier, compute, barrier. Global loads are 16 bytes where the row pitch (inner for a, cols for b
// and c) is a multiple of 16 / sizeof(T).
// Measured on the H100 (float32, 4096 and 8192, bench/gemm_variants.py): two resident blocks of 256 threads
// (at most 128 registers a thread, the kernels' launch bound) instead of one, 0.78 -> 0.87 of cuBLAS; BK 8 ->
// 16 -> 32 in pieces of 8, 0.87 -> 0.91 -> 0.92-0.93. Tried and slower: warps laid out 8 x 4 over the tile,
// a's stores made conflict-free (padding, lane order), fragments of the next k prefetched, the slice loop
// unrolled by two, a grouped tile order.
template <typename T, int M, int R, int STAGES, int BK>
__device__ void matmul_hmm(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int rows,
                           int inner, int cols) {
    extern __shared__ __align__(16) unsigned char smem[];  // as[STAGES][BK][M] (as[k][row]), bs[STAGES][BK][M]
    T* as = reinterpret_cast<T*>(smem);
    T* bs = as + STAGES * BK * M;
    constexpr int E = 16 / sizeof(T);
    const bool plain = inner % BK == 0 && cols % E == 0;
    const int across = (cols + M - 1) / M;
    const long long total = (long long)((rows + M - 1) / M) * across;
    for (long long tt = blockIdx.x; tt < total; tt += gridDim.x) {
        const int r0 = (int)(tt / across) * M, c0 = (int)(tt % across) * M;
        if (plain && r0 + M <= rows && c0 + M <= cols)
            matmul_tile<T, M, R, STAGES, BK, false>(a, b, c, rows, inner, cols, r0, c0, as, bs);
        else
            matmul_tile<T, M, R, STAGES, BK, true>(a, b, c, rows, inner, cols, r0, c0, as, bs);
    }
}

// WANTED: this kernel is the one being compiled (select.cuh); otherwise its body stays empty and the
// template is not instantiated.
template <bool WANTED, typename T, int TS, int V, int R>
__device__ __forceinline__ void conv_if(const T* a, const T* f, T* c, int h, int w, int count) {
    if constexpr (WANTED) conv_hmm<T, TS, V, R>(a, f, c, h, w, count);
}

template <bool WANTED, typename T, int M, int R, int STAGES, int BK>
__device__ __forceinline__ void matmul_if(const T* a, const T* b, T* c, int rows, int inner, int cols) {
    if constexpr (WANTED) matmul_hmm<T, M, R, STAGES, BK>(a, b, c, rows, inner, cols);
}

// Each kernel twice: the square problem's entry takes n alone (every scalar argument costs host time at
// launch, 0.6 us on the H100's path), the _shaped entry any sides; both run the one template.
// A column of R outputs holds 2R + 2v values in registers: at most 2048 / R threads a block (1024 for R <= 2), so
// that the compiler may give a thread the registers it needs instead of spilling them.
#define CONV_THREADS(R) (2048 / (R) < 1024 ? 2048 / (R) : 1024)
#define CONV(T, S, TS, V, R)                                                                          \
    extern "C" __global__ void __launch_bounds__(CONV_THREADS(R))                                     \
    conv_##S##_t##TS##_v##V##_r##R(const T* a, const T* f, T* c, int n) {                            \
        conv_if<MEMTUNE_WANTS(conv_##S##_t##TS##_v##V##_r##R), T, TS, V, R>(a, f, c, n, n, 1); }        \
    extern "C" __global__ void __launch_bounds__(CONV_THREADS(R))                                     \
    conv_##S##_t##TS##_v##V##_r##R##_shaped(const T* a, const T* f, T* c, int h, int w, int count) {    \
        conv_if<MEMTUNE_WANTS(conv_##S##_t##TS##_v##V##_r##R##_shaped), T, TS, V, R>(a, f, c, h, w, count); }
#define CONV_R(T, S, TS, V) CONV(T, S, TS, V, 1) CONV(T, S, TS, V, 2) CONV(T, S, TS, V, 4) CONV(T, S, TS, V, 8) \
    CONV(T, S, TS, V, 16)
#define CONV_V(T, S, TS) CONV_R(T, S, TS, 1) CONV_R(T, S, TS, 2) CONV_R(T, S, TS, 3) CONV_R(T, S, TS, 4) \
    CONV_R(T, S, TS, 5) CONV_R(T, S, TS, 6) CONV_R(T, S, TS, 7)
// float: 256-thread blocks are bounded to 128 registers a thread, so that two of them
// stay resident on an SM (measured: 0.78 -> 0.87 of cuBLAS at m 128, r 8); double's accumulators need more.
#define MATMUL_BLOCKS(T, M, R) (sizeof(T) == 4 && (M / R) * (M / R) == 256 ? 2 : 1)
#define MATMUL_S(T, S, M, R, B, K)                                                                    \
    extern "C" __global__ void __launch_bounds__((M / R) * (M / R), MATMUL_BLOCKS(T, M, R))           \
    matmul_##S##_m##M##_r##R##_b##B##_k##K(const T* a, const T* b, T* c, int n) {                     \
        matmul_if<MEMTUNE_WANTS(matmul_##S##_m##M##_r##R##_b##B##_k##K), T, M, R, B, K>(a, b, c, n, n, n); } \
    extern "C" __global__ void __launch_bounds__((M / R) * (M / R), MATMUL_BLOCKS(T, M, R))           \
    matmul_##S##_m##M##_r##R##_b##B##_k##K##_shaped(const T* a, const T* b, T* c, int rows, int inner, int cols) { \
        matmul_if<MEMTUNE_WANTS(matmul_##S##_m##M##_r##R##_b##B##_k##K##_shaped), T, M, R, B, K>(a, b, c, rows, inner, cols); }
#define MATMUL_K(T, S, M, R, B) MATMUL_S(T, S, M, R, B, 8) MATMUL_S(T, S, M, R, B, 16) MATMUL_S(T, S, M, R, B, 32)
#define MATMUL(T, S, M, R) MATMUL_K(T, S, M, R, 1) MATMUL_K(T, S, M, R, 2)
#define ALL(T, S) CONV_V(T, S, 32) CONV_V(T, S, 64) \
    MATMUL(T, S, 32, 1) MATMUL(T, S, 32, 2) MATMUL(T, S, 32, 4) MATMUL(T, S, 64, 2) MATMUL(T, S, 64, 4) \
    MATMUL(T, S, 64, 8) MATMUL(T, S, 128, 4) MATMUL(T, S, 128, 8)

ALL(float, f32)
ALL(double, f64)

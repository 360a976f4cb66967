// #28 experiment (2026-11-28): where the two-dimensional look-back SAT (shaped.cu's `tiles`, sat_tiles_lookback)
// loses its time at 4096² (1.6-1.7x the copy on the H100), and whether three changes win it back.
//   base_*  : shaped.cu's tiles as shipped (one block a tile, ticketed), at any (WARPS, RPW, V).
//   prof_*  : base with thread (0, 0) counting SM cycles in each phase, summed over blocks into `prof`.
//   wide_*  : base whose walk up reads U tile rows a warp in each pass after the first (WARPS x U rows a pass).
//   res_*   : resident blocks, two tiles in registers at once (as lookback_scan.cuh's scan_resident): a block
//             loads its next tile and publishes that tile's column aggregate before it walks for the tile it holds.
// Compiled with -DMEMTUNE_ONLY=none so that shaped.cu's own kernels are empty; its device templates are reused.
#include "shaped.cu"

__device__ unsigned long long prof[8];

// ---- the walk up, U tile rows a warp a pass -----------------------------------------------------------------
template <typename OUT, int WARPS, int V, int U>
__device__ void look_back_up_wide(const typename Status<OUT>::Word* status, OUT (&above)[V], long long row_words,
                                  int tile_row, int w, int col, unsigned epoch) {
    __shared__ OUT seen[WARPS * U][32 * V];
    __shared__ bool inclusive[WARPS * U][32 * V];
    const int warp = threadIdx.y;
    bool done[V];
#pragma unroll
    for (int k = 0; k < V; ++k) { above[k] = 0; done[k] = col + k * 32 >= w || tile_row == 0; }
    for (int s = tile_row - 1, pass = 0;; ++pass) {
        bool all = true;
#pragma unroll
        for (int k = 0; k < V; ++k) all = all && done[k];
        if (!__syncthreads_or(!all)) break;
        const int group = pass == 0 ? 1 : WARPS * U;
        const int per = pass == 0 ? 1 : U;
        if (warp * per < group) {
            OUT x[U][V];
            unsigned code[U][V];
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int q = warp * per + u;                  // rows s - q, q < group
                if (u < per && s - q >= 0) {
                    const typename Status<OUT>::Word* words = status + row_words - (long long)(tile_row - s + q) * w + col;
#pragma unroll
                    for (int k = 0; k < V; ++k) if (!done[k]) code[u][k] = Status<OUT>::get(words + k * 32, x[u][k]);
                }
            }
#pragma unroll
            for (int u = 0; u < U; ++u) {
                const int q = warp * per + u;
                if (u < per && s - q >= 0) {
                    const typename Status<OUT>::Word* words = status + row_words - (long long)(tile_row - s + q) * w + col;
#pragma unroll
                    for (int k = 0; k < V; ++k) {
                        if (done[k]) continue;
                        if ((code[u][k] >> 2) != epoch) code[u][k] = (unsigned)wait_status<OUT>(words + k * 32, epoch, x[u][k]);
                        seen[q][k * 32 + threadIdx.x] = x[u][k];
                        inclusive[q][k * 32 + threadIdx.x] = (code[u][k] & 3u) == INCLUSIVE;
                    }
                }
            }
        }
        __syncthreads();
        for (int q = 0; q < group && s - q >= 0; ++q)
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (!done[k]) { above[k] += seen[q][k * 32 + threadIdx.x]; done[k] = inclusive[q][k * 32 + threadIdx.x]; }
        s -= group;
    }
}

// ---- one tile, split in two: open (load, column band, column aggregate) and close (walks, store) ---------------
template <typename OUT, int V> struct Opened { OUT agg[V], off[V]; };

template <typename IN, typename OUT, int WARPS, int RPW, int V>
__device__ __forceinline__ void open_sat_tile(const IN* __restrict__ a, OUT (&v)[RPW][V], Opened<OUT, V>& o,
                                              OUT (&band)[WARPS][32 * V], int h, int w, int tiles_x, int per_image,
                                              long long tile, typename Status<OUT>::Word* status, unsigned epoch,
                                              bool load = true) {
    const int lane = threadIdx.x, warp = threadIdx.y;
    if (load) load_tile<IN, OUT, V, RPW>(a, v, h, w, tile, per_image, tiles_x, warp, lane);
    const long long image = tile / per_image;
    const int local = (int)(tile % per_image), ti = local / tiles_x, tj = local % tiles_x;
    const int col = tj * 32 * V + lane;
    const long long up_words = (image * (per_image / tiles_x) + ti) * w;
    column_band<OUT, WARPS, V, RPW>(v, band, o.agg, o.off);
    if (warp == 0)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w)
                Status<OUT>::put(status + up_words + col + k * 32, o.agg[k], status_code(epoch, ti == 0 ? INCLUSIVE : AGGREGATE));
}

__device__ __forceinline__ void mark(unsigned long long& t, int phase) {
    __syncthreads();
    const unsigned long long now = clock64();
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(&prof[phase], now - t);
    t = now;
}

// PROF: thread (0, 0) adds each phase's SM cycles (after a barrier) to prof: 2 walk up, 3 row prefix, 4 walk left,
// 5 store issue.
template <typename OUT, int WARPS, int RPW, int V, int U, bool PROF = false>
__device__ __forceinline__ void close_sat_tile(OUT* __restrict__ b, OUT (&v)[RPW][V], const Opened<OUT, V>& o, int h,
                                               int w, int tiles_x, int per_image, long long images, long long tile,
                                               typename Status<OUT>::Word* status, unsigned epoch,
                                               unsigned long long* t = nullptr) {
    using Word = typename Status<OUT>::Word;
    const int lane = threadIdx.x, warp = threadIdx.y;
    const long long image = tile / per_image;
    const int local = (int)(tile % per_image), ti = local / tiles_x, tj = local % tiles_x;
    const int row = ti * WARPS * RPW + warp * RPW, col = tj * 32 * V + lane;
    const long long tiles_y = per_image / tiles_x;
    const long long up_words = (image * tiles_y + ti) * w;
    const long long left_words = images * tiles_y * w + image * tiles_x * (long long)h;
    OUT above[V];
    if constexpr (U == 1) look_back_up<OUT, WARPS, V>(status, above, up_words, ti, w, col, epoch);
    else look_back_up_wide<OUT, WARPS, V, U>(status, above, up_words, ti, w, col, epoch);
    if (warp == 0 && ti > 0)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w)
                Status<OUT>::put(status + up_words + col + k * 32, above[k] + o.agg[k], status_code(epoch, INCLUSIVE));
    if constexpr (PROF) mark(*t, 2);
    OUT carry[RPW];
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        carry[r] = 0;
#pragma unroll
        for (int k = 0; k < V; ++k) v[r][k] += o.off[k] + above[k];
    }
    prefix_rows<OUT, V, RPW>(v, carry);
    const int r_lane = lane % RPW;
    OUT mine = 0;
#pragma unroll
    for (int r = 0; r < RPW; ++r) if (r == r_lane) mine = carry[r];
    Word* own = status + left_words + (long long)tj * h + row + r_lane;
    if (lane < RPW && row + r_lane < h) Status<OUT>::put(own, mine, status_code(epoch, tj == 0 ? INCLUSIVE : AGGREGATE));
    if constexpr (PROF) mark(*t, 3);
    const OUT left = look_back_left<OUT, RPW>(status, left_words, tj, h, row, epoch);
    if (lane < RPW && tj > 0 && row + r_lane < h) Status<OUT>::put(own, left + mine, status_code(epoch, INCLUSIVE));
    if constexpr (PROF) mark(*t, 4);
    OUT* dst = b + image * (long long)h * w;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        const OUT lr = __shfl_sync(0xffffffffu, left, r);
        if (row + r >= h) break;
        OUT* line = dst + (long long)(row + r) * w;
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w) line[col + k * 32] = v[r][k] + lr;
    }
    if constexpr (PROF) mark(*t, 5);
}

// ---- one block a tile (wide, prof): shaped.cu's tiles, its tile of blockIdx.x loaded while the ticket travels ----
// PROF phases: 0 ticket (and the guessed tile's loads issued), 1 load (or reload) and column band, then close's.
template <typename IN, typename OUT, int WARPS, int RPW, int V, int U, bool PROF>
__device__ void tile_block(const IN* __restrict__ a, OUT* __restrict__ b, int h, int w, int tiles_x, int per_image,
                           unsigned* ticket, typename Status<OUT>::Word* status, unsigned epoch) {
    __shared__ OUT band[WARPS][32 * V];
    __shared__ long long tile_s;
    unsigned long long t = clock64();
    if (threadIdx.x == 0 && threadIdx.y == 0) tile_s = (long long)draw_ticket(ticket);
    OUT v[RPW][V];
    load_tile<IN, OUT, V, RPW>(a, v, h, w, blockIdx.x, per_image, tiles_x, threadIdx.y, threadIdx.x);
    __syncthreads();
    const long long tile = tile_s, images = gridDim.x / per_image;
    if constexpr (PROF) mark(t, 0);
    Opened<OUT, V> o;
    open_sat_tile<IN, OUT, WARPS, RPW, V>(a, v, o, band, h, w, tiles_x, per_image, tile, status, epoch, tile != blockIdx.x);
    if constexpr (PROF) mark(t, 1);
    close_sat_tile<OUT, WARPS, RPW, V, U, PROF>(b, v, o, h, w, tiles_x, per_image, images, tile, status, epoch, &t);
    if (PROF && threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(&prof[7], 1ull);
}

// ---- resident blocks, two tiles in flight --------------------------------------------------------------------
__device__ __forceinline__ long long sat_ticket(unsigned* counter, long long tiles, long long* slot) {
    if (threadIdx.x == 0 && threadIdx.y == 0) *slot = (long long)atomicInc(counter, (unsigned)(tiles + gridDim.x - 1));
    __syncthreads();
    return *slot;
}

template <typename IN, typename OUT, int WARPS, int RPW, int V>
__device__ void tile_resident(const IN* __restrict__ a, OUT* __restrict__ b, int h, int w, int tiles_x, int per_image,
                              long long images, unsigned* counter, typename Status<OUT>::Word* status, unsigned epoch) {
    __shared__ OUT band[WARPS][32 * V];
    __shared__ long long slot[2];
    const long long tiles = images * per_image;
    OUT va[RPW][V], vb[RPW][V];
    Opened<OUT, V> oa, ob;
    // every barrier of close (the walks) lies between a slot's read and its next write, and between band's reads
    // in one open and its writes in the next
    long long ta = sat_ticket(counter, tiles, &slot[0]);
    if (ta >= tiles) return;
    open_sat_tile<IN, OUT, WARPS, RPW, V>(a, va, oa, band, h, w, tiles_x, per_image, ta, status, epoch);
    for (;;) {
        const long long tb = sat_ticket(counter, tiles, &slot[1]);
        const bool more_b = tb < tiles;
        if (more_b) open_sat_tile<IN, OUT, WARPS, RPW, V>(a, vb, ob, band, h, w, tiles_x, per_image, tb, status, epoch);
        close_sat_tile<OUT, WARPS, RPW, V, 1>(b, va, oa, h, w, tiles_x, per_image, images, ta, status, epoch);
        if (!more_b) return;
        ta = sat_ticket(counter, tiles, &slot[0]);
        const bool more_a = ta < tiles;
        if (more_a) open_sat_tile<IN, OUT, WARPS, RPW, V>(a, va, oa, band, h, w, tiles_x, per_image, ta, status, epoch);
        close_sat_tile<OUT, WARPS, RPW, V, 1>(b, vb, ob, h, w, tiles_x, per_image, images, tb, status, epoch);
        if (!more_a) return;
    }
}

#define ARGS(T) (const T* a, T* b, int h, int w, int tx, int per, unsigned* t, Status<T>::Word* s, unsigned e)
#define BASE(T, S, W, R, V)                                                                                       \
    extern "C" __global__ void __launch_bounds__(32 * W) base_##S##_w##W##_r##R##_v##V ARGS(T) {                 \
        tiles<T, T, W, R, V, 0, true>(a, b, h, w, tx, per, t, s, e); }
#define WIDE(T, S, W, R, V, U)                                                                                    \
    extern "C" __global__ void __launch_bounds__(32 * W) wide_##S##_w##W##_r##R##_v##V##_u##U ARGS(T) {          \
        tile_block<T, T, W, R, V, U, false>(a, b, h, w, tx, per, t, s, e); }
#define PROF(T, S, W, R, V)                                                                                       \
    extern "C" __global__ void __launch_bounds__(32 * W) prof_##S##_w##W##_r##R##_v##V ARGS(T) {                 \
        tile_block<T, T, W, R, V, 1, true>(a, b, h, w, tx, per, t, s, e); }
#define RES(T, S, W, R, V)                                                                                        \
    extern "C" __global__ void __launch_bounds__(32 * W) res_##S##_w##W##_r##R##_v##V(                           \
        const T* a, T* b, int h, int w, int tx, int per, long long images, unsigned* t, Status<T>::Word* s,         \
        unsigned e) { tile_resident<T, T, W, R, V>(a, b, h, w, tx, per, images, t, s, e); }

BASE(float, f32, 4, 8, 4) BASE(float, f32, 8, 8, 4) BASE(float, f32, 8, 8, 2)
BASE(float, f32, 4, 16, 2) BASE(float, f32, 4, 16, 4) BASE(float, f32, 2, 16, 4) BASE(float, f32, 8, 16, 2)

WIDE(float, f32, 4, 8, 4, 4) WIDE(float, f32, 8, 8, 2, 2) WIDE(float, f32, 4, 16, 2, 4)
PROF(float, f32, 4, 8, 4) PROF(float, f32, 8, 8, 2)
RES(float, f32, 4, 8, 4) RES(float, f32, 4, 4, 4) RES(float, f32, 8, 4, 4) RES(float, f32, 8, 8, 2) RES(float, f32, 4, 8, 2)
BASE(double, f64, 8, 8, 2) BASE(double, f64, 4, 8, 4) BASE(double, f64, 4, 16, 2)
WIDE(double, f64, 8, 8, 2, 2)
RES(double, f64, 8, 8, 2) RES(double, f64, 4, 8, 2) RES(double, f64, 8, 4, 2)
#define SAME(T, S, W, R, V)                                                                                       \
    extern "C" __global__ void __launch_bounds__(32 * W) same_##S##_w##W##_r##R##_v##V ARGS(T) {                 \
        tile_block<T, T, W, R, V, 1, false>(a, b, h, w, tx, per, t, s, e); }
SAME(float, f32, 4, 8, 4)

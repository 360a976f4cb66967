// #28 experiment (2026-11-28): where the two-dimensional look-back SAT (shaped.cu's `tiles`, sat_tiles_lookback)
// loses its time at 4096² (1.6-1.7x the copy on the H100), and what wins it back.
//   base_*  : shaped.cu's tiles as shipped (one block a tile, ticketed, tiles in row-major order), any shape.
//   ord_*   : the same tile's work with the tile order o (0 row-major, 1 column-major, 2 anti-diagonals) and t = 1 a
//             ticket (the tile of blockIdx.x loaded while it travels, as base) or t = 0 none (the tile of blockIdx.x:
//             blocks start in index order, and every tile a tile waits on comes earlier in each order).
//   prof_*  : ord with thread (0, 0) counting SM cycles in each phase, summed over blocks into `prof`.
// The first run (first.json) timed also a wider walk up and resident blocks holding two tiles: this file at 877a25b.
// Compiled with -DMEMTUNE_ONLY=none so that shaped.cu's own kernels are empty; its device templates are reused.
#include "shaped.cu"

__device__ unsigned long long prof[8];

// ---- where a tile lies -----------------------------------------------------------------------------------------
struct TilePos { long long image; int ti, tj; };

// The d of the last triangle number <= x (x = d (d + 1) / 2 + k, 0 <= k <= d).
__device__ __forceinline__ long long triangle_root(long long x) {
    long long d = (long long)((sqrt(8.0 * (double)x + 1.0) - 1.0) / 2.0);
    while ((d + 1) * (d + 2) / 2 <= x) ++d;
    while (d * (d + 1) / 2 > x) --d;
    return d;
}

// Tile `t` of a batch of images of tiles_y x tiles_x tiles, in ORDER 0 row-major, 1 column-major or 2 along the
// anti-diagonals ti + tj = 0, 1, ... (ti increasing along each). In every order the tiles above and to the left of a
// tile come before it.
template <int ORDER>
__device__ __forceinline__ TilePos tile_position(long long t, int per_image, int tiles_x) {
    const int tiles_y = per_image / tiles_x;
    const long long image = t / per_image, local = t % per_image;
    if constexpr (ORDER == 0) return {image, (int)(local / tiles_x), (int)(local % tiles_x)};
    if constexpr (ORDER == 1) return {image, (int)(local % tiles_y), (int)(local / tiles_y)};
    const long long lo = min(tiles_x, tiles_y), hi = max(tiles_x, tiles_y);
    const long long first = (lo - 1) * lo / 2, middle = (hi - lo + 1) * lo;   // growing diagonals, full ones
    long long d, k;
    if (local < first) { d = triangle_root(local); k = local - d * (d + 1) / 2; }
    else if (local < first + middle) { d = lo - 1 + (local - first) / lo; k = (local - first) % lo; }
    else {                                                                    // shrinking diagonals, from the end
        const long long r = per_image - 1 - local, e = triangle_root(r);
        d = tiles_x + tiles_y - 2 - e;
        k = e - (r - e * (e + 1) / 2);
    }
    const long long ti = max(0LL, d - (tiles_x - 1)) + k;
    return {image, (int)ti, (int)(d - ti)};
}

// ---- one tile, split in two: open (load, column band, column aggregate) and close (walks, store) ---------------
template <typename OUT, int V> struct Opened { OUT agg[V], off[V]; };

template <typename IN, typename OUT, int WARPS, int RPW, int V>
__device__ __forceinline__ void load_at(const IN* __restrict__ a, OUT (&v)[RPW][V], int h, int w, TilePos p) {
    load_rows<IN, OUT, V, RPW>(a + p.image * (long long)h * w, v, h, w, p.ti * WARPS * RPW + threadIdx.y * RPW,
                               p.tj * 32 * V + threadIdx.x);
}

template <typename OUT, int WARPS, int RPW, int V>
__device__ __forceinline__ void open_sat_tile(OUT (&v)[RPW][V], Opened<OUT, V>& o, OUT (&band)[WARPS][32 * V], int w,
                                              int tiles_y, TilePos p, typename Status<OUT>::Word* status,
                                              unsigned epoch) {
    const int col = p.tj * 32 * V + threadIdx.x;
    const long long up_words = (p.image * tiles_y + p.ti) * w;
    column_band<OUT, WARPS, V, RPW>(v, band, o.agg, o.off);
    if (threadIdx.y == 0)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w)
                Status<OUT>::put(status + up_words + col + k * 32, o.agg[k], status_code(epoch, p.ti == 0 ? INCLUSIVE : AGGREGATE));
}

// shaped.cu's look_back_left, for any RPW up to 32 (a lane a row at 32: one tile a pass).
template <typename OUT, int RPW>
__device__ OUT look_left(const typename Status<OUT>::Word* status, long long first_word, int tile_col, int h, int y,
                         unsigned epoch) {
    if constexpr (RPW < 32) return look_back_left<OUT, RPW>(status, first_word, tile_col, h, y, epoch);
    const int lane = threadIdx.x & 31;
    OUT left = 0;
    bool done = tile_col == 0 || y + lane >= h;
    for (int j = tile_col - 1; !__all_sync(0xffffffffu, done); --j) {
        OUT v = 0;
        if (!done && (unsigned)wait_status<OUT>(status + first_word + (long long)j * h + y + lane, epoch, v) == INCLUSIVE)
            done = true;
        left += v;
        done = done || j == 0;
    }
    return left;
}

__device__ __forceinline__ void mark(unsigned long long& t, int phase) {
    __syncthreads();
    const unsigned long long now = clock64();
    if (threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(&prof[phase], now - t);
    t = now;
}

// PROF: thread (0, 0) adds each phase's SM cycles (after a barrier) to prof: 2 walk up, 3 row prefix, 4 walk left,
// 5 store issue.
template <typename OUT, int WARPS, int RPW, int V, bool PROF>
__device__ __forceinline__ void close_sat_tile(OUT* __restrict__ b, OUT (&v)[RPW][V], const Opened<OUT, V>& o, int h,
                                               int w, int tiles_x, int tiles_y, long long images, TilePos p,
                                               typename Status<OUT>::Word* status, unsigned epoch,
                                               unsigned long long& t) {
    using Word = typename Status<OUT>::Word;
    const int lane = threadIdx.x, warp = threadIdx.y;
    const int row = p.ti * WARPS * RPW + warp * RPW, col = p.tj * 32 * V + lane;
    const long long up_words = (p.image * tiles_y + p.ti) * w;
    const long long left_words = images * tiles_y * w + p.image * tiles_x * (long long)h;
    OUT above[V];
    look_back_up<OUT, WARPS, V>(status, above, up_words, p.ti, w, col, epoch);
    if (warp == 0 && p.ti > 0)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w)
                Status<OUT>::put(status + up_words + col + k * 32, above[k] + o.agg[k], status_code(epoch, INCLUSIVE));
    if constexpr (PROF) mark(t, 2);
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
    Word* own = status + left_words + (long long)p.tj * h + row + r_lane;
    if (lane < RPW && row + r_lane < h) Status<OUT>::put(own, mine, status_code(epoch, p.tj == 0 ? INCLUSIVE : AGGREGATE));
    if constexpr (PROF) mark(t, 3);
    const OUT left = look_left<OUT, RPW>(status, left_words, p.tj, h, row, epoch);
    if (lane < RPW && p.tj > 0 && row + r_lane < h) Status<OUT>::put(own, left + mine, status_code(epoch, INCLUSIVE));
    if constexpr (PROF) mark(t, 4);
    OUT* dst = b + p.image * (long long)h * w;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        const OUT lr = __shfl_sync(0xffffffffu, left, r);
        if (row + r >= h) break;
        OUT* line = dst + (long long)(row + r) * w;
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w) line[col + k * 32] = v[r][k] + lr;
    }
    if constexpr (PROF) mark(t, 5);
}

// ---- one block a tile -------------------------------------------------------------------------------------------
// PROF phases: 0 ticket (with the guessed tile's loads issued; 0 without a ticket), 1 load and column band, then
// close's.
template <typename IN, typename OUT, int WARPS, int RPW, int V, int ORDER, bool TICKET, bool PROF>
__device__ void tile_block(const IN* __restrict__ a, OUT* __restrict__ b, int h, int w, int tiles_x, int per_image,
                           unsigned* ticket, typename Status<OUT>::Word* status, unsigned epoch) {
    __shared__ OUT band[WARPS][32 * V];
    __shared__ long long tile_s;
    unsigned long long t = clock64();
    OUT v[RPW][V];
    const TilePos guess = tile_position<ORDER>(blockIdx.x, per_image, tiles_x);
    load_at<IN, OUT, WARPS, RPW, V>(a, v, h, w, guess);
    long long tile = blockIdx.x;
    if constexpr (TICKET) {
        if (threadIdx.x == 0 && threadIdx.y == 0) tile_s = (long long)draw_ticket(ticket);
        __syncthreads();
        tile = tile_s;
    } else {
        __syncthreads();              // as the ticket's: the loads stay apart from the band (72 registers, not 95)
    }
    if constexpr (PROF) mark(t, 0);
    const TilePos p = tile_position<ORDER>(tile, per_image, tiles_x);
    if (tile != blockIdx.x) load_at<IN, OUT, WARPS, RPW, V>(a, v, h, w, p);
    Opened<OUT, V> o;
    const int tiles_y = per_image / tiles_x;
    open_sat_tile<OUT, WARPS, RPW, V>(v, o, band, w, tiles_y, p, status, epoch);
    if constexpr (PROF) mark(t, 1);
    close_sat_tile<OUT, WARPS, RPW, V, PROF>(b, v, o, h, w, tiles_x, tiles_y, gridDim.x / per_image, p, status, epoch, t);
    if (PROF && threadIdx.x == 0 && threadIdx.y == 0) atomicAdd(&prof[7], 1ull);
}

#define ARGS(T) (const T* a, T* b, int h, int w, int tx, int per, unsigned* t, Status<T>::Word* s, unsigned e)
#define BASE(T, S, W, R, V)                                                                                       \
    extern "C" __global__ void __launch_bounds__(32 * W) base_##S##_w##W##_r##R##_v##V ARGS(T) {                 \
        tiles<T, T, W, R, V, 0, true>(a, b, h, w, tx, per, t, s, e); }
// M: the launch bound's blocks an SM (a register cap of 65536 / (32 W M)); without it the kernels without a ticket
// took 95-168 registers where the ticketed ones take 72-130.
#define ORD(T, S, W, R, V, O, K, M)                                                                               \
    extern "C" __global__ void __launch_bounds__(32 * W, M) ord_##S##_w##W##_r##R##_v##V##_o##O##_t##K ARGS(T) { \
        tile_block<T, T, W, R, V, O, K, false>(a, b, h, w, tx, per, t, s, e); }
#define PROF(T, S, W, R, V, O, K, M)                                                                              \
    extern "C" __global__ void __launch_bounds__(32 * W, M) prof_##S##_w##W##_r##R##_v##V##_o##O##_t##K ARGS(T) { \
        tile_block<T, T, W, R, V, O, K, true>(a, b, h, w, tx, per, t, s, e); }
#define ORDERS(T, S, W, R, V, M) ORD(T, S, W, R, V, 0, 0, M) ORD(T, S, W, R, V, 1, 0, M) ORD(T, S, W, R, V, 2, 0, M)

BASE(float, f32, 4, 8, 4) BASE(float, f32, 4, 16, 2) BASE(float, f32, 4, 16, 4)
ORD(float, f32, 4, 16, 2, 0, 1, 6) ORD(float, f32, 4, 16, 2, 2, 1, 6) ORD(float, f32, 4, 16, 4, 2, 1, 4)
ORDERS(float, f32, 4, 16, 2, 6) ORDERS(float, f32, 4, 16, 4, 4) ORDERS(float, f32, 2, 16, 4, 8) ORDERS(float, f32, 8, 16, 2, 3)
ORDERS(float, f32, 2, 32, 2, 8) ORDERS(float, f32, 4, 32, 2, 4) ORDERS(float, f32, 4, 8, 4, 5)
PROF(float, f32, 4, 16, 2, 0, 1, 6) PROF(float, f32, 4, 16, 2, 2, 0, 6)
BASE(double, f64, 8, 8, 2) BASE(double, f64, 4, 16, 2)
ORD(double, f64, 4, 16, 2, 0, 0, 3) ORD(double, f64, 4, 16, 2, 2, 0, 3) ORD(double, f64, 8, 16, 2, 0, 0, 2)
ORD(double, f64, 8, 16, 2, 2, 0, 2) ORD(double, f64, 2, 32, 2, 0, 0, 4) ORD(double, f64, 2, 32, 2, 2, 0, 4)
ORD(double, f64, 4, 16, 1, 2, 0, 6) ORD(double, f64, 4, 32, 1, 2, 0, 3)

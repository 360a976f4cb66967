// Summed area tables (000 ch. 6) of an nbar x nbar row-major matrix; a barrier is a kernel boundary.
//
// Tiles are 32 x 32 (w = 32). A tile's SAT is computed in shared memory in the diagonal
// arrangement (Lemma 6.1.1: rows and columns both conflict-free) from three carries:
//   colc[j]  the sum of all elements above the tile in its column j,
//   rowc[i]  the sum of all elements left of the tile in its row i,
//   corner   the sum of all elements above and to the left of the tile.
// Where the carries come from makes the algorithms:
//   * 2R1W and the corner triangles of (1+r)R1W: from prefix sums of per-tile column and row sums
//     (`region_*` kernels; a region is all tiles, the top-left triangle ti + tj < K, or the
//     bottom-right triangle ti + tj >= K, whose carries start from the finished SAT above it);
//   * 1R1W: from the finished neighbours (b[r0-1][..] and b[..][c0-1]), one launch per block
//     diagonal (`wave_tiles`).
// Beyond the seeds, `sat_strips` is a single-launch 1R1W with decoupled look-back (below).

#include "lookback.cuh"

#define W 32

__device__ __forceinline__ int dslot(int i, int j) { return i * W + ((i + j) & (W - 1)); }

template <typename T>
__device__ T at_or_zero(const T* b, int nbar, int r, int c) {
    return (r >= 0 && c >= 0) ? b[(long long)r * nbar + c] : T(0);
}

// Tile SAT with carries; blockDim = (32, 8). Writes the finished tile to b.
template <typename T>
__device__ void tile_sat(const T* __restrict__ a, T* __restrict__ b, int nbar, int ti, int tj,
                         const T* colc, const T* rowc, T corner) {
    __shared__ T t[W * W];
    int x = threadIdx.x, r0 = ti * W, c0 = tj * W;
    for (int i = threadIdx.y; i < W; i += blockDim.y) {
        int r = r0 + i, c = c0 + x;
        T v = (r < nbar && c < nbar) ? a[(long long)r * nbar + c] : T(0);
        if (i == 0) v += colc[x];
        if (x == 0) v += rowc[i];
        if (i == 0 && x == 0) v += corner;
        t[dslot(i, x)] = v;
    }
    __syncthreads();
    if (threadIdx.y == 0) {                       // row-wise prefix sums: thread x owns row x
        T s = 0;
        for (int j = 0; j < W; ++j) { s += t[dslot(x, j)]; t[dslot(x, j)] = s; }
    }
    __syncthreads();
    if (threadIdx.y == 0) {                       // column-wise: thread x owns column x
        T s = 0;
        for (int i = 0; i < W; ++i) { s += t[dslot(i, x)]; t[dslot(i, x)] = s; }
    }
    __syncthreads();
    for (int i = threadIdx.y; i < W; i += blockDim.y) {
        int r = r0 + i, c = c0 + x;
        if (r < nbar && c < nbar) b[(long long)r * nbar + c] = t[dslot(i, x)];
    }
    __syncthreads();
}

// ---- 2R2W, 4R4W, 4R1W ------------------------------------------------------------------------

template <typename T>
__device__ void column_prefix(const T* a, T* b, int rows, int cols) {     // thread per column
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    T s = 0;
    for (int r = 0; r < rows; ++r) { s += a[(long long)r * cols + c]; b[(long long)r * cols + c] = s; }
}

template <typename T>
__device__ void row_prefix(T* b, int nbar) {                               // thread per row: stride access
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= nbar) return;
    T s = 0;
    for (int c = 0; c < nbar; ++c) { s += b[(long long)r * nbar + c]; b[(long long)r * nbar + c] = s; }
}

template <typename T>
__device__ void diagonal_step(const T* a, T* b, int nbar, int k) {         // cells with i + j = k
    int lo = k < nbar ? 0 : k - nbar + 1;
    int i = lo + blockIdx.x * blockDim.x + threadIdx.x;
    int j = k - i;
    if (i >= nbar || j < 0) return;
    b[(long long)i * nbar + j] = a[(long long)i * nbar + j] + at_or_zero(b, nbar, i, j - 1)
                                + at_or_zero(b, nbar, i - 1, j) - at_or_zero(b, nbar, i - 1, j - 1);
}

// ---- regions: 2R1W and the triangles of (1+r)R1W ---------------------------------------------
// mode 0: all tiles; 1: ti + tj < K; 2: ti + tj >= K.

__device__ __forceinline__ bool in_region(int ti, int tj, int mode, int K) {
    return mode == 0 || (mode == 1 ? ti + tj < K : ti + tj >= K);
}

// Per-tile sums: colsum[ti][c] (column sums of tile rows), rowsum[tj][r] (row sums), blockDim (32, 8).
template <typename T>
__device__ void region_sums(const T* a, T* colsum, T* rowsum, int nbar, int mode, int K) {
    int tiles = (nbar + W - 1) / W;
    int ti = blockIdx.x / tiles, tj = blockIdx.x % tiles;
    if (!in_region(ti, tj, mode, K)) return;
    __shared__ T t[W * W];
    int x = threadIdx.x, r0 = ti * W, c0 = tj * W;
    for (int i = threadIdx.y; i < W; i += blockDim.y) {
        int r = r0 + i, c = c0 + x;
        t[dslot(i, x)] = (r < nbar && c < nbar) ? a[(long long)r * nbar + c] : T(0);
    }
    __syncthreads();
    if (threadIdx.y == 0) {
        T cs = 0, rs = 0;
        for (int k = 0; k < W; ++k) { cs += t[dslot(k, x)]; rs += t[dslot(x, k)]; }
        if (c0 + x < nbar) colsum[(long long)ti * nbar + c0 + x] = cs;
        if (r0 + x < nbar) rowsum[(long long)tj * nbar + r0 + x] = rs;
    }
}

// Carries along one column (or row, with `rows` = true): exclusive prefix over the region's tiles,
// seeded with the column sum above the region read off the finished SAT b.
template <typename T>
__device__ void region_carry(const T* sums, T* carry, const T* b, int nbar, int mode, int K, bool rows) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;        // the column (or row) index
    if (c >= nbar) return;
    int tiles = (nbar + W - 1) / W, tj = c / W;
    int lo = mode == 2 ? max(0, K - tj) : 0;
    int hi = mode == 1 ? min(tiles, K - tj) : tiles;
    if (lo >= hi) return;                                  // no tile of the region in this column
    T s = 0;
    if (lo > 0) {                                          // column sum above row lo*W of column c
        int r = lo * W - 1;
        s = rows ? at_or_zero(b, nbar, c, r) - at_or_zero(b, nbar, c - 1, r)
                 : at_or_zero(b, nbar, r, c) - at_or_zero(b, nbar, r, c - 1);
    }
    for (int ti = lo; ti < hi; ++ti) {
        carry[(long long)ti * nbar + c] = s;
        s += sums[(long long)ti * nbar + c];
    }
}

// Corners along one tile row: corner(ti, tj+1) = corner(ti, tj) + sum over the tile's columns of colc.
template <typename T>
__device__ void region_corners(const T* colc, T* corner, const T* b, int nbar, int mode, int K) {
    int ti = blockIdx.x * blockDim.x + threadIdx.x;
    int tiles = (nbar + W - 1) / W;
    if (ti >= tiles) return;
    int lo = mode == 2 ? max(0, K - ti) : 0;
    int hi = mode == 1 ? min(tiles, K - ti) : tiles;
    if (lo >= hi) return;
    T s = (lo > 0 && ti > 0) ? at_or_zero(b, nbar, ti * W - 1, lo * W - 1) : T(0);
    for (int tj = lo; tj < hi; ++tj) {
        corner[(long long)ti * tiles + tj] = s;
        T above = 0;
        for (int j = 0; j < W && tj * W + j < nbar; ++j) above += colc[(long long)ti * nbar + tj * W + j];
        s += above;
    }
}

template <typename T>
__device__ void region_tiles(const T* a, T* b, const T* colc, const T* rowc, const T* corner, int nbar,
                             int mode, int K) {
    int tiles = (nbar + W - 1) / W;
    int ti = blockIdx.x / tiles, tj = blockIdx.x % tiles;
    if (!in_region(ti, tj, mode, K)) return;
    tile_sat(a, b, nbar, ti, tj, colc + (long long)ti * nbar + tj * W, rowc + (long long)tj * nbar + ti * W,
             corner[(long long)ti * tiles + tj]);
}

// ---- 1R1W: carries from the finished neighbours ---------------------------------------------

template <typename T>
__device__ void neighbour_carries(const T* b, int nbar, int ti, int tj, T* colc, T* rowc, T& corner) {
    int x = threadIdx.x, r0 = ti * W, c0 = tj * W;
    if (threadIdx.y == 0) {
        T cor = at_or_zero(b, nbar, r0 - 1, c0 - 1);
        colc[x] = c0 + x < nbar ? at_or_zero(b, nbar, r0 - 1, c0 + x) - at_or_zero(b, nbar, r0 - 1, c0 + x - 1) : T(0);
        rowc[x] = r0 + x < nbar ? at_or_zero(b, nbar, r0 + x, c0 - 1) - at_or_zero(b, nbar, r0 + x - 1, c0 - 1) : T(0);
        if (x == 0) corner = cor;
    }
    __syncthreads();
}

template <typename T>
__device__ void wave_tiles(const T* a, T* b, int nbar, int k) {             // tiles with ti + tj = k
    __shared__ T colc[W], rowc[W];
    __shared__ T corner;
    int tiles = (nbar + W - 1) / W;
    int lo = k < tiles ? 0 : k - tiles + 1;
    int ti = lo + blockIdx.x, tj = k - ti;
    if (ti >= tiles || tj < 0) return;
    neighbour_carries(b, nbar, ti, tj, colc, rowc, corner);
    // corner is already inside colc/rowc differences' reference: add it once at (0, 0)
    tile_sat(a, b, nbar, ti, tj, colc, rowc, corner);
}

// Beyond the seeds: 1R1W in one launch (`sat_1r1w_lookback`). A block owns a strip of R = warps x
// RPW rows across the whole matrix and walks it in chunks of C = 32 V columns: the row prefix sums
// carry from chunk to chunk inside the block, so the only dependency between blocks is vertical.
// For each chunk the block publishes its strip's column aggregate (the column sums of its
// row-prefixed values), then looks back over the strips above, column by column, until it meets an
// inclusive value: decoupled look-back (lookback.cuh) with one status word per (strip, column).
// Strips are numbered by an atomic ticket in start order, so every awaited strip is running.
template <typename T, int RPW>
__device__ void load_chunk(const T* a, T (&v)[RPW][Vec<T>::V], int nbar, int row, int col) {
    constexpr int V = Vec<T>::V;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        const long long at = (long long)(row + r) * nbar + col;
        if (row + r < nbar && col + V <= nbar && (nbar % V) == 0) {
            typename Vec<T>::type x = __ldcs(reinterpret_cast<const typename Vec<T>::type*>(a + at));
            const T* e = reinterpret_cast<const T*>(&x);
#pragma unroll
            for (int k = 0; k < V; ++k) v[r][k] = e[k];
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) v[r][k] = (row + r < nbar && col + k < nbar) ? a[at + k] : T(0);
        }
    }
}

template <typename T, int RPW>
__device__ void store_chunk(T* b, const T (&v)[RPW][Vec<T>::V], const T* off, int nbar, int row, int col) {
    constexpr int V = Vec<T>::V;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        if (row + r >= nbar) continue;
        const long long at = (long long)(row + r) * nbar + col;
        if (col + V <= nbar && (nbar % V) == 0) {
            typename Vec<T>::type x;
            T* e = reinterpret_cast<T*>(&x);
#pragma unroll
            for (int k = 0; k < V; ++k) e[k] = v[r][k] + off[k];
            __stcs(reinterpret_cast<typename Vec<T>::type*>(b + at), x);
        } else {
#pragma unroll
            for (int k = 0; k < V; ++k) if (col + k < nbar) b[at + k] = v[r][k] + off[k];
        }
    }
}

// Row prefix sums of the warp's RPW rows across its chunk, continuing each row's carry.
template <typename T, int RPW>
__device__ void row_prefix_chunk(T (&v)[RPW][Vec<T>::V], T (&carry)[RPW]) {
    constexpr int V = Vec<T>::V;
    const int lane = threadIdx.x;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        T run = 0;
#pragma unroll
        for (int k = 0; k < V; ++k) { run += v[r][k]; v[r][k] = run; }
        T x = run;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) { T y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x += y; }
        const T before = x - run + carry[r];
#pragma unroll
        for (int k = 0; k < V; ++k) v[r][k] += before;
        carry[r] += __shfl_sync(0xffffffffu, x, 31);
    }
}

// Warp 0: the sum above this strip in this lane's V columns, walking up one strip at a time until
// each column meets an INCLUSIVE word. The V words of a strip are read together and re-read (after a
// pause) until all belong to this launch. Reading several strips per pass was slower on the H100
// (4 or 8 in registers: 5-70 %; one strip per warp of 2, 4 or 8 warps meeting at a named barrier:
// 1-7 %), and so was a loop with the exit test outside its condition.
template <typename T>
__device__ void walk_back(const typename Status<T>::Word* status, T (&excl)[Vec<T>::V], int strip, int nbar,
                          int col, unsigned epoch) {
    constexpr int V = Vec<T>::V;
    bool done[V], all = true;
#pragma unroll
    for (int k = 0; k < V; ++k) { excl[k] = 0; done[k] = col + k >= nbar || strip == 0; all &= done[k]; }
    for (int s0 = strip - 1; s0 >= 0 && !all; --s0) {
        const typename Status<T>::Word* above = status + (long long)s0 * nbar + col;
        T x[V];
        unsigned code[V];
        for (unsigned pause = 32;; pause = min(pause * 2, 1024u)) {
            bool ready = true;
#pragma unroll
            for (int k = 0; k < V; ++k) {
                code[k] = done[k] ? status_code(epoch, INCLUSIVE) : Status<T>::get(above + k, x[k]);
                ready &= (code[k] >> 2) == epoch;
            }
            if (ready) break;
            __nanosleep(pause);
        }
        all = true;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            if (!done[k]) { excl[k] += x[k]; done[k] = (code[k] & 3u) == INCLUSIVE; }
            all &= done[k];
        }
    }
}

template <typename T>
__device__ __forceinline__ void publish(typename Status<T>::Word* own, const T (&value)[Vec<T>::V], int nbar,
                                        int col, unsigned code) {
#pragma unroll
    for (int k = 0; k < Vec<T>::V; ++k)
        if (col + k < nbar) Status<T>::put(own + col + k, value[k], code);
}

// The look-back of chunk c is deferred by one chunk: at iteration c warp 0 publishes c's aggregate,
// then walks back for c-1 (whose inclusive words the strip above has had a whole chunk to publish)
// and publishes c-1's inclusive prefix; after the barrier the block stores c-1 and parks c in shared
// memory, each thread its own values. On the H100 this runs the 16384² SAT in 0.90 ms, where looking
// back for chunk c before storing it took 0.92 ms; polling once for c as well took 0.93, and a
// single barrier with the walk overlapping the next chunk's scan took 0.93.
template <typename T, int WARPS, int RPW>
__device__ void sat_strips(const T* __restrict__ a, T* __restrict__ b, int nbar, unsigned* ticket,
                           typename Status<T>::Word* status, unsigned epoch) {
    constexpr int V = Vec<T>::V, C = 32 * V;
    __shared__ T band[WARPS][C];                  // each warp's column totals over its RPW rows
    __shared__ T parked[WARPS][RPW][V][32];       // chunk c-1, waiting for its look-back
    __shared__ T above[2][C];                     // the look-back's sums, by chunk parity
    __shared__ int strip_s;
    const int lane = threadIdx.x, warp = threadIdx.y;
    if (lane == 0 && warp == 0) strip_s = (int)draw_ticket(ticket);
    __syncthreads();
    const int strip = strip_s, row = strip * WARPS * RPW + warp * RPW, chunks = (nbar + C - 1) / C;
    typename Status<T>::Word* own = status + (long long)strip * nbar;
    T carry[RPW], v[RPW][V], next[RPW][V], parked_off[V], parked_agg[V];
#pragma unroll
    for (int r = 0; r < RPW; ++r) carry[r] = 0;
    load_chunk<T, RPW>(a, v, nbar, row, lane * V);
    for (int c = 0; c <= chunks; ++c) {           // iteration `chunks` only stores the last chunk
        const bool fresh = c < chunks;
        const int col = c * C + lane * V, parked_col = col - C;
        T agg[V], off[V];
        if (fresh) {
            if (c + 1 < chunks) load_chunk<T, RPW>(a, next, nbar, row, col + C);   // in flight meanwhile
            row_prefix_chunk<T, RPW>(v, carry);
#pragma unroll
            for (int r = 1; r < RPW; ++r)                                        // column prefix down the band
#pragma unroll
                for (int k = 0; k < V; ++k) v[r][k] += v[r - 1][k];
#pragma unroll
            for (int k = 0; k < V; ++k) band[warp][lane * V + k] = v[RPW - 1][k];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < V; ++k) {
            agg[k] = 0; off[k] = 0;
            if (!fresh) continue;
#pragma unroll
            for (int w = 0; w < WARPS; ++w) {
                const T x = band[w][lane * V + k];
                agg[k] += x;
                if (w < warp) off[k] += x;
            }
        }
        if (warp == 0) {
            if (fresh) publish<T>(own, agg, nbar, col, status_code(epoch, strip == 0 ? INCLUSIVE : AGGREGATE));
            if (c > 0) {
                T excl[V];
                walk_back<T>(status, excl, strip, nbar, parked_col, epoch);
#pragma unroll
                for (int k = 0; k < V; ++k) { above[(c - 1) & 1][lane * V + k] = excl[k]; excl[k] += parked_agg[k]; }
                if (strip > 0) publish<T>(own, excl, nbar, parked_col, status_code(epoch, INCLUSIVE));
            }
#pragma unroll
            for (int k = 0; k < V; ++k) parked_agg[k] = agg[k];
            __syncwarp();     // the look-back diverged: bar.sync is aligned, so the warp must arrive whole
        }
        __syncthreads();      // band and `above` are read before the next iteration writes them
        if (c > 0) {
            T o[V];
#pragma unroll
            for (int k = 0; k < V; ++k) o[k] = parked_off[k] + above[(c - 1) & 1][lane * V + k];
#pragma unroll
            for (int r = 0; r < RPW; ++r) {           // a row at a time: the parked chunk never fills registers
                T x[1][V];
#pragma unroll
                for (int k = 0; k < V; ++k) x[0][k] = parked[warp][r][k][lane];
                store_chunk<T, 1>(b, x, o, nbar, row + r, parked_col);
            }
        }
        if (fresh) {
#pragma unroll
            for (int r = 0; r < RPW; ++r)
#pragma unroll
                for (int k = 0; k < V; ++k) { parked[warp][r][k][lane] = v[r][k]; v[r][k] = next[r][k]; }
#pragma unroll
            for (int k = 0; k < V; ++k) parked_off[k] = off[k];
        }
    }
}

// At least 512 threads per SM (at most 128 registers a thread): two 8-warp strips share an SM.
#define STRIPS(T, S, WARPS, RPW)                                                                      \
    extern "C" __global__ void __launch_bounds__(32 * WARPS, 16 / WARPS)                             \
    sat_strips_##S##_w##WARPS##_r##RPW(const T* a, T* b, int nbar, unsigned* t, Status<T>::Word* status, \
                                       unsigned epoch) { sat_strips<T, WARPS, RPW>(a, b, nbar, t, status, epoch); }

#define SAT(T, S)                                                                                     \
    extern "C" __global__ void column_prefix_##S(const T* a, T* b, int rows, int cols) { column_prefix<T>(a, b, rows, cols); } \
    extern "C" __global__ void row_prefix_##S(T* b, int nbar) { row_prefix<T>(b, nbar); }            \
    extern "C" __global__ void diagonal_step_##S(const T* a, T* b, int nbar, int k) { diagonal_step<T>(a, b, nbar, k); } \
    extern "C" __global__ void region_sums_##S(const T* a, T* cs, T* rs, int nbar, int mode, int K) { \
        region_sums<T>(a, cs, rs, nbar, mode, K); }                                                   \
    extern "C" __global__ void region_carry_##S(const T* sums, T* carry, const T* b, int nbar, int mode, int K, int rows) { \
        region_carry<T>(sums, carry, b, nbar, mode, K, rows != 0); }                                  \
    extern "C" __global__ void region_corners_##S(const T* colc, T* corner, const T* b, int nbar, int mode, int K) { \
        region_corners<T>(colc, corner, b, nbar, mode, K); }                                          \
    extern "C" __global__ void region_tiles_##S(const T* a, T* b, const T* colc, const T* rowc, const T* corner, \
        int nbar, int mode, int K) { region_tiles<T>(a, b, colc, rowc, corner, nbar, mode, K); }       \
    extern "C" __global__ void wave_tiles_##S(const T* a, T* b, int nbar, int k) { wave_tiles<T>(a, b, nbar, k); } \
    STRIPS(T, S, 4, 2) STRIPS(T, S, 4, 4) STRIPS(T, S, 4, 8) STRIPS(T, S, 8, 2) STRIPS(T, S, 8, 4)     \
    STRIPS(T, S, 8, 8) STRIPS(T, S, 16, 2) STRIPS(T, S, 16, 4)

SAT(float, f32)
SAT(double, f64)

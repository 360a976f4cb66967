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
//     diagonal (`wave_tiles`), or all in one launch with tiles waiting on their neighbours' flags
//     (`lookback_tiles`, beyond the seeds).

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

// Single pass: tiles numbered along anti-diagonals by an atomic counter; a tile waits until its
// upper and left neighbours have published their results (flag), then proceeds as a wave tile.
template <typename T>
__device__ void lookback_tiles(const T* a, T* b, int nbar, unsigned* counter, volatile int* done) {
    __shared__ T colc[W], rowc[W];
    __shared__ T corner;
    __shared__ int tile_s;
    int tiles = (nbar + W - 1) / W;
    if (threadIdx.x == 0 && threadIdx.y == 0) tile_s = (int)atomicAdd(counter, 1u);
    __syncthreads();
    int id = tile_s, k = 0, start = 0;
    while (true) {                                         // diagonal k holds min(k+1, 2*tiles-1-k, tiles) tiles
        int len = min(min(k + 1, 2 * tiles - 1 - k), tiles);
        if (id < start + len) break;
        start += len;
        ++k;
    }
    int lo = k < tiles ? 0 : k - tiles + 1;
    int ti = lo + (id - start), tj = k - ti;
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        if (ti > 0) while (done[(ti - 1) * tiles + tj] == 0) {}
        if (tj > 0) while (done[ti * tiles + tj - 1] == 0) {}
        if (ti > 0 && tj > 0) while (done[(ti - 1) * tiles + tj - 1] == 0) {}
        __threadfence();
    }
    __syncthreads();
    if (threadIdx.y == 0) {                                // neighbours' values, read past the L1
        int x = threadIdx.x, r0 = ti * W, c0 = tj * W;
        const volatile T* vb = b;
        auto get = [&](int r, int c) -> T { return (r >= 0 && c >= 0) ? vb[(long long)r * nbar + c] : T(0); };
        colc[x] = c0 + x < nbar ? get(r0 - 1, c0 + x) - get(r0 - 1, c0 + x - 1) : T(0);
        rowc[x] = r0 + x < nbar ? get(r0 + x, c0 - 1) - get(r0 + x - 1, c0 - 1) : T(0);
        if (x == 0) corner = get(r0 - 1, c0 - 1);
    }
    __syncthreads();
    tile_sat(a, b, nbar, ti, tj, colc, rowc, corner);
    if (threadIdx.x == 0 && threadIdx.y == 0) {
        __threadfence();
        done[ti * tiles + tj] = 1;
    }
}

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
    extern "C" __global__ void lookback_tiles_##S(const T* a, T* b, int nbar, unsigned* counter, int* done) { \
        lookback_tiles<T>(a, b, nbar, counter, done); }

SAT(float, f32)
SAT(double, f64)

// Kernels for the arrays users have: any length, any h x w, batches, integer and float dtypes.
//
// Every kernel reads its input type IN and accumulates and writes in its output type OUT (a uint8
// image summed in int32, as OpenCV's integral does; an int32 vector scanned in int64, as numpy's
// cumsum promotes). Loads and stores are one element a lane, consecutive lanes on consecutive
// elements, so every access of a warp is coalesced whatever the row length and alignment.
//
// * segmented_scan: prefix sums (or only the totals) of `rows` rows of `len` elements laid end to
//   end: one launch over the flat array in tiles, the rows' starts resetting the running sum. A tile
//   that holds a row's start knows its inclusive prefix at once; the others meet through decoupled
//   look-back. So a 2^28 vector, a million rows of 3 and everything between run with every SM busy.
// * row_scan: prefix sums of rows of `len` elements end to end, each row its own run of tiles of the
//   vector scan (lookback_scan.cuh): 16-byte loads and stores, for rows of a few tiles or more.
// * strips: per image of a batch of h x w images, a block owns a strip of rows and walks it left to
//   right in chunks of 128 columns, carrying the row sums; strips meet through look-back per column.
//   ROWS and COLS select the summed area table (both), or column prefix sums (COLS only); TOTAL
//   writes only the column totals (sums over an axis that is not the last); PAD writes OpenCV's
//   (h+1) x (w+1) layout with a zero first row and column.
// * transpose: the last two axes of a batch, 64 x 64 tiles through shared memory, by element size; output
//   rows that are not whole 32-byte sectors in tiles shifted to start each row's run on a sector.
//
// Status words are lookback.cuh's (a value and its state, epoch << 2 | kind, travelling together);
// integer sums travel in its float and double words bit for bit.
#include "lookback_scan.cuh"
#include "select.cuh"
#include "sum_pairs.cuh"
#include "warp_sum.cuh"

// ---- segmented_scan ---------------------------------------------------------------------------
// A pair (head, value): the running sum since the last row start, and whether a row starts inside.
// Combining an earlier pair with a later one keeps the later value alone when the later one holds a
// start: an associative operator, so warps, blocks and the look-back may group the pairs freely.
template <typename OUT>
__device__ __forceinline__ void warp_segmented_scan(bool& head, OUT& value) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const OUT y = __shfl_up_sync(0xffffffffu, value, o);
        const bool g = __shfl_up_sync(0xffffffffu, (int)head, o) != 0;
        if (lane >= o) { if (!head) value += y; head = head || g; }
    }
}

// The sum before this tile in its row: warp 0 reads 32 predecessors at once, stopping at the
// nearest inclusive word (a tile holding a row start publishes one at once, so the walk never
// leaves the row).
template <typename OUT>
__device__ OUT look_back_tiles(const typename Status<OUT>::Word* status, long long tile, unsigned epoch) {
    const int lane = threadIdx.x & 31;
    OUT before = 0;
    for (long long p = tile - 1; p >= 0; p -= 32) {
        const long long q = p - lane;
        OUT v = 0;
        unsigned kind = INCLUSIVE;            // before the first tile: nothing, and stop
        if (q >= 0) kind = (unsigned)wait_status<OUT>(status + q, epoch, v);
        const unsigned stops = __ballot_sync(0xffffffffu, kind == INCLUSIVE);
        const int stop = stops ? __ffs(stops) - 1 : 31;
        before += warp_sum<OUT>(lane <= stop ? v : OUT(0));
        if (stops) break;
    }
    return before;
}

template <typename IN, typename OUT, int THREADS, int V, bool TOTAL>
__device__ void segmented_scan(const IN* __restrict__ a, OUT* __restrict__ b, long long n, long long len,
                               unsigned* ticket, typename Status<OUT>::Word* status, unsigned epoch) {
    constexpr int WARPS = THREADS / 32, TILE = THREADS * V;
    __shared__ OUT stage[WARPS][32 * V + V];      // the warp's elements, striped <-> blocked
    __shared__ OUT warp_value[WARPS];
    __shared__ int warp_head[WARPS];
    __shared__ OUT carry_in, tile_agg;
    __shared__ bool tile_known;
    __shared__ long long tile_s;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    if (tid == 0) tile_s = (long long)draw_ticket(ticket);
    __syncthreads();
    const long long tile = tile_s, base = tile * TILE, wbase = base + (long long)warp * 32 * V;
    // striped, coalesced loads; then each thread takes V consecutive elements
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const long long i = wbase + k * 32 + lane;
        const int s = k * 32 + lane;
        stage[warp][s + s / 32] = i < n ? (OUT)a[i] : OUT(0);
    }
    __syncwarp();
    OUT x[V];
    bool h[V];
    const long long first = wbase + lane * V;
    long long pos = first % len;                  // position of the first element in its row
    bool head = false;
    OUT run = 0;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        const int s = lane * V + k;
        h[k] = pos == 0;
        run = h[k] ? stage[warp][s + s / 32] : run + stage[warp][s + s / 32];
        x[k] = run;
        head = head || h[k];
        pos = pos + 1 == len ? 0 : pos + 1;
    }
    // exclusive prefix of the threads before this one in the warp
    bool ihead = head;
    OUT ivalue = run;
    warp_segmented_scan<OUT>(ihead, ivalue);
    OUT tprev = __shfl_up_sync(0xffffffffu, ivalue, 1);
    bool hprev = __shfl_up_sync(0xffffffffu, (int)ihead, 1) != 0;
    if (lane == 0) { tprev = 0; hprev = false; }
    if (lane == 31) { warp_value[warp] = ivalue; warp_head[warp] = ihead; }
    __syncthreads();
    // the warps before this one in the block
    OUT wprev = 0;
    bool whead = false;
    for (int w = 0; w < warp; ++w) {
        wprev = warp_head[w] ? warp_value[w] : wprev + warp_value[w];
        whead = whead || warp_head[w];
    }
    // the tile's total; a tile holding a row start knows its inclusive value at once, and needs the
    // look-back only for the elements before that start
    if (tid == 0) {
        OUT agg = 0;
        bool tile_head = false;
        for (int w = 0; w < WARPS; ++w) {
            agg = warp_head[w] ? warp_value[w] : agg + warp_value[w];
            tile_head = tile_head || warp_head[w];
        }
        Status<OUT>::put(status + tile, agg, status_code(epoch, tile_head || tile == 0 ? INCLUSIVE : AGGREGATE));
        tile_agg = agg;
        tile_known = tile_head;
    }
    __syncthreads();
    if (warp == 0) {
        const bool need = tile > 0 && base % len != 0;
        const OUT before = need ? look_back_tiles<OUT>(status, tile, epoch) : OUT(0);
        if (lane == 0) {
            if (need && !tile_known) Status<OUT>::put(status + tile, before + tile_agg, status_code(epoch, INCLUSIVE));
            carry_in = before;
        }
    }
    __syncthreads();
    // what comes before this thread's elements in their row
    const OUT offset = hprev ? tprev : tprev + (whead ? wprev : wprev + carry_in);
    bool started = false;
#pragma unroll
    for (int k = 0; k < V; ++k) {
        started = started || h[k];
        if (!started) x[k] += offset;
    }
    if constexpr (TOTAL) {                        // only each row's last element: its total
        long long p = first % len;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const long long i = first + k;
            if (i < n && p == len - 1) b[i / len] = x[k];
            p = p + 1 == len ? 0 : p + 1;
        }
    } else {
#pragma unroll
        for (int k = 0; k < V; ++k) { const int s = lane * V + k; stage[warp][s + s / 32] = x[k]; }
        __syncwarp();
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const long long i = wbase + k * 32 + lane;
            const int s = k * 32 + lane;
            if (i < n) b[i] = stage[warp][s + s / 32];
        }
    }
}

// ---- strips -----------------------------------------------------------------------------------
// Chunks are 32 x V columns; lane l holds columns l, l + 32, ... of its rows (coalesced).
template <typename IN, typename OUT, int V, int RPW>
__device__ __forceinline__ void load_rows(const IN* a, OUT (&v)[RPW][V], int h, int w, int row, int col) {
#pragma unroll
    for (int r = 0; r < RPW; ++r)
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int c = col + k * 32;
            v[r][k] = (row + r < h && c < w) ? (OUT)a[(long long)(row + r) * w + c] : OUT(0);
        }
}

template <typename OUT, int V, int RPW>
__device__ __forceinline__ void prefix_rows(OUT (&v)[RPW][V], OUT (&carry)[RPW]) {
    const int lane = threadIdx.x;
#pragma unroll
    for (int r = 0; r < RPW; ++r)
#pragma unroll
        for (int k = 0; k < V; ++k) {
            OUT x = v[r][k];
#pragma unroll
            for (int o = 1; o < 32; o <<= 1) { const OUT y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x += y; }
            v[r][k] = x + carry[r];
            carry[r] += __shfl_sync(0xffffffffu, x, 31);
        }
}

// Column prefix sums down the warp's RPW rows, then across the block's warps through `band`: agg[k] is
// the block's sum of column k * 32 + lane, and off[k] the sum of the warps above this one.
template <typename OUT, int WARPS, int V, int RPW>
__device__ __forceinline__ void column_band(OUT (&v)[RPW][V], OUT (&band)[WARPS][32 * V], OUT (&agg)[V], OUT (&off)[V]) {
    const int lane = threadIdx.x, warp = threadIdx.y;
#pragma unroll
    for (int r = 1; r < RPW; ++r)
#pragma unroll
        for (int k = 0; k < V; ++k) v[r][k] += v[r - 1][k];
#pragma unroll
    for (int k = 0; k < V; ++k) band[warp][k * 32 + lane] = v[RPW - 1][k];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < V; ++k) {
        agg[k] = 0;
        off[k] = 0;
#pragma unroll
        for (int q = 0; q < WARPS; ++q) {
            const OUT x = band[q][k * 32 + lane];
            agg[k] += x;
            if (q < warp) off[k] += x;
        }
    }
}

// Warp 0: the column sums above this strip (inside its image), one strip of words at a time. A strip's V
// words are all read (peeked) before any is waited on: one round trip a strip, not V one after another
// (on the H100 that took strips 1.4x their time now, in float32; see strips_plan).
template <typename OUT, int V>
__device__ void look_back_strips(const typename Status<OUT>::Word* status, OUT (&above)[V], long long strip,
                                 int local, int w, int col, unsigned epoch) {
    bool done[V], all = true;
#pragma unroll
    for (int k = 0; k < V; ++k) { above[k] = 0; done[k] = col + k * 32 >= w || local == 0; all = all && done[k]; }
    for (long long s = strip - 1; !all; --s) {
        const typename Status<OUT>::Word* row = status + s * w + col;
        OUT x[V];
        unsigned code[V];
        bool whole[V];
#pragma unroll
        for (int k = 0; k < V; ++k) if (!done[k]) whole[k] = Status<OUT>::peek(row + k * 32, x[k], code[k]);
        all = true;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            if (done[k]) continue;
            const unsigned kind = whole[k] && (code[k] >> 2) == epoch ? code[k] & 3u
                                                                      : (unsigned)wait_status<OUT>(row + k * 32, epoch, x[k]);
            above[k] += x[k];
            done[k] = kind == INCLUSIVE;
            all = all && done[k];
        }
    }
}

template <typename IN, typename OUT, int WARPS, int RPW, bool ROWS, bool COLS, bool TOTAL, int PAD>
__device__ void strips(const IN* __restrict__ a, OUT* __restrict__ b, int h, int w, int per_image,
                       unsigned* ticket, typename Status<OUT>::Word* status, unsigned epoch) {
    constexpr int V = 4, C = 32 * V;
    __shared__ OUT band[WARPS][C];
    __shared__ OUT above_s[C];
    __shared__ long long strip_s;
    const int lane = threadIdx.x, warp = threadIdx.y;
    if (lane == 0 && warp == 0) strip_s = (long long)draw_ticket(ticket);
    __syncthreads();
    const long long strip = strip_s, image = strip / per_image;
    const int local = (int)(strip % per_image), row = local * WARPS * RPW + warp * RPW;
    const IN* src = a + image * (long long)h * w;
    OUT* dst = b + image * (long long)(h + PAD) * (w + PAD);
    typename Status<OUT>::Word* own = status + strip * w;
    if (PAD && !TOTAL) {                           // OpenCV's zero first row and column
        if (local == 0 && warp == 0)
            for (int c = lane; c <= w; c += 32) dst[c] = OUT(0);
        for (int r = lane; r < RPW; r += 32)
            if (row + r < h) dst[(long long)(row + r + 1) * (w + 1)] = OUT(0);
    }
    OUT carry[RPW];
#pragma unroll
    for (int r = 0; r < RPW; ++r) carry[r] = 0;
    const int chunks = (w + C - 1) / C;
    OUT v[RPW][V], next[RPW][V];
    load_rows<IN, OUT, V, RPW>(src, v, h, w, row, lane);
    for (int c = 0; c < chunks; ++c) {
        const int col = c * C + lane;
        if (c + 1 < chunks) load_rows<IN, OUT, V, RPW>(src, next, h, w, row, col + C);   // in flight meanwhile
        if (ROWS) prefix_rows<OUT, V, RPW>(v, carry);
        OUT off[V];
#pragma unroll
        for (int k = 0; k < V; ++k) off[k] = 0;
        if (COLS) {
            OUT agg[V];
            column_band<OUT, WARPS, V, RPW>(v, band, agg, off);
            if (warp == 0) {
#pragma unroll
                for (int k = 0; k < V; ++k)
                    if (col + k * 32 < w)
                        Status<OUT>::put(own + col + k * 32, agg[k], status_code(epoch, local == 0 ? INCLUSIVE : AGGREGATE));
                OUT above[V];
                look_back_strips<OUT, V>(status, above, strip, local, w, col, epoch);
#pragma unroll
                for (int k = 0; k < V; ++k) {
                    above_s[k * 32 + lane] = above[k];
                    if (local > 0 && col + k * 32 < w)
                        Status<OUT>::put(own + col + k * 32, above[k] + agg[k], status_code(epoch, INCLUSIVE));
                    if (TOTAL && local == per_image - 1 && col + k * 32 < w)
                        b[image * (long long)w + col + k * 32] = above[k] + agg[k];
                }
                __syncwarp();
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < V; ++k) off[k] += above_s[k * 32 + lane];
        }
        if constexpr (!TOTAL) {
#pragma unroll
            for (int r = 0; r < RPW; ++r) {
                if (row + r >= h) break;
                OUT* line = dst + (long long)(row + r + PAD) * (w + PAD) + PAD;
#pragma unroll
                for (int k = 0; k < V; ++k)
                    if (col + k * 32 < w) line[col + k * 32] = v[r][k] + off[k];
            }
        }
        if (COLS) __syncthreads();                 // band and above_s are rewritten by the next chunk
#pragma unroll
        for (int r = 0; r < RPW; ++r)
#pragma unroll
            for (int k = 0; k < V; ++k) v[r][k] = next[r][k];
    }
}

// ---- tiles ------------------------------------------------------------------------------------
// Summed area tables in tiles of H = WARPS x RPW rows by C = 32 V columns, one block a tile, so
// an image too small to give every SM a strip still fills the GPU. Tiles take tickets in row-major
// order within each image. A tile first meets the tiles above it through look-back on per-column
// words (the column sums above it: "up"), which turns its values into column prefix sums cp(y, x)
// of the whole image; then it meets the tiles to its left through look-back on per-row words (the
// sums of cp along each of its rows: "left"). As cp already holds everything above, no corner term
// is needed: b(y, x) = left(y) + the sum of cp(y, x') over the tile's columns x' <= x.
//
// The block walks up together: it first reads the tile row just above (in a large image long done),
// then WARPS rows at once, a warp each, every read of a warp issued before any is waited on; so a
// small image, whose tiles all start together and all walk, pays a round trip per WARPS rows. Each warp walks left for its own RPW rows, a lane a (tile, row) pair: 32 / RPW tiles a pass.
//
// Tile order (ORDER): TICKETED, row-major by ticket (the block loads the tile of its index while the ticket
// travels, and reloads where the ticket names another); BY_INDEX, row-major by block index, no ticket (blocks
// start in index order, so every tile a walk waits on has started); DIAGONAL, by ticket along the anti-diagonals
// ti + tj = 0, 1, ... (ti rising along each), so the tiles above and to the left both started a diagonal earlier,
// where in row order the tile to the left started just before. On the H100 (bench/results/h100/sat_resident/,
// 16 rows a warp, one run): 4096² float32 in 4 warps by 64 columns 1.42x the copy BY_INDEX, 1.52x TICKETED, 1.46x
// DIAGONAL (the best, 1.38x, BY_INDEX in 8 warps by 64); 16384² in 4 by 64 1.34x BY_INDEX, 1.37x TICKETED and
// 1.20x DIAGONAL (the best).
enum { TICKETED = 0, BY_INDEX = 1, DIAGONAL = 2 };

// The d of the last triangle number <= x (x = d (d + 1) / 2 + k, 0 <= k <= d).
__device__ __forceinline__ long long triangle_root(long long x) {
    long long d = (long long)((sqrt(8.0 * (double)x + 1.0) - 1.0) / 2.0);
    while ((d + 1) * (d + 2) / 2 <= x) ++d;
    while (d * (d + 1) / 2 > x) --d;
    return d;
}

// Tile `local` of an image of tiles_y x tiles_x tiles in anti-diagonal order: (ti, tj). The diagonals grow to
// min(tiles_x, tiles_y) tiles, stay there, and shrink again (counted from the image's last tile).
__device__ __forceinline__ int2 diagonal_position(long long local, int per_image, int tiles_x) {
    const long long tiles_y = per_image / tiles_x, lo = min((long long)tiles_x, tiles_y), hi = max((long long)tiles_x, tiles_y);
    const long long first = (lo - 1) * lo / 2, middle = (hi - lo + 1) * lo;
    long long d, k;
    if (local < first) { d = triangle_root(local); k = local - d * (d + 1) / 2; }
    else if (local < first + middle) { d = lo - 1 + (local - first) / lo; k = (local - first) % lo; }
    else {
        const long long r = per_image - 1 - local, e = triangle_root(r);
        d = tiles_x + tiles_y - 2 - e;
        k = e - (r - e * (e + 1) / 2);
    }
    const long long ti = max(0LL, d - (tiles_x - 1)) + k;
    return make_int2((int)ti, (int)(d - ti));
}

template <typename OUT, int WARPS, int V>
__device__ void look_back_up(const typename Status<OUT>::Word* status, OUT (&above)[V], long long row_words,
                             int tile_row, int w, int col, unsigned epoch) {
    __shared__ OUT seen[WARPS][32 * V];
    __shared__ bool inclusive[WARPS][32 * V];
    const int warp = threadIdx.y;
    bool done[V];
#pragma unroll
    for (int k = 0; k < V; ++k) { above[k] = 0; done[k] = col + k * 32 >= w || tile_row == 0; }
    for (int s = tile_row - 1, pass = 0;; ++pass) {
        bool all = true;
#pragma unroll
        for (int k = 0; k < V; ++k) all = all && done[k];
        if (!__syncthreads_or(!all)) break;             // lanes finish apart; the block leaves together
        const int group = pass == 0 ? 1 : WARPS;        // the tile above is mostly done: ask it alone first
        const typename Status<OUT>::Word* words = status + row_words - (long long)(tile_row - s + warp) * w + col;
        if (warp < group && s - warp >= 0) {
            OUT x[V];
            unsigned code[V];
#pragma unroll
            for (int k = 0; k < V; ++k) if (!done[k]) code[k] = Status<OUT>::get(words + k * 32, x[k]);
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (done[k]) continue;
                if ((code[k] >> 2) != epoch) code[k] = (unsigned)wait_status<OUT>(words + k * 32, epoch, x[k]);
                seen[warp][k * 32 + threadIdx.x] = x[k];
                inclusive[warp][k * 32 + threadIdx.x] = (code[k] & 3u) == INCLUSIVE;
            }
        }
        __syncthreads();
        for (int q = 0; q < group && s - q >= 0; ++q)
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (!done[k]) { above[k] += seen[q][k * 32 + threadIdx.x]; done[k] = inclusive[q][k * 32 + threadIdx.x]; }
        s -= group;                                     // the barrier above the next reads guards `seen`
    }
}

// The sum left of this tile in row `r` of the warp's rows (in every lane of that row's group).
template <typename OUT, int RPW>
__device__ OUT look_back_left(const typename Status<OUT>::Word* status, long long first_word, int tile_col,
                              int h, int y, unsigned epoch) {
    constexpr unsigned PATTERN = 0xffffffffu / ((1u << RPW) - 1u);     // lanes r, r + RPW, ...
    const int lane = threadIdx.x & 31, p = lane / RPW, r = lane % RPW;
    OUT left = 0;
    bool done = tile_col == 0 || y + r >= h;
    for (int base = tile_col - 1; !__all_sync(0xffffffffu, done); base -= 32 / RPW) {
        const int j = base - p;
        OUT v = 0;
        unsigned kind = INCLUSIVE;                                   // left of the first tile: nothing
        if (!done && j >= 0) kind = (unsigned)wait_status<OUT>(status + first_word + (long long)j * h + y + r, epoch, v);
        const unsigned mine = __ballot_sync(0xffffffffu, kind == INCLUSIVE) & (PATTERN << r);
        const int stop = mine ? __ffs(mine) - 1 : 32;
        OUT add = !done && lane <= stop ? v : OUT(0);
#pragma unroll
        for (int o = RPW; o < 32; o <<= 1) add += __shfl_xor_sync(0xffffffffu, add, o);
        left += add;
        done = done || mine != 0;
    }
    return left;
}

template <typename IN, typename OUT, int V, int RPW, int ORDER>
__device__ __forceinline__ void load_tile(const IN* a, OUT (&v)[RPW][V], int h, int w, long long tile, int per_image,
                                          int tiles_x, int warp, int lane) {
    const long long image = tile / per_image;
    if constexpr (ORDER == DIAGONAL) {
        const int2 p = diagonal_position(tile % per_image, per_image, tiles_x);
        load_rows<IN, OUT, V, RPW>(a + image * (long long)h * w, v, h, w, p.x * blockDim.y * RPW + warp * RPW,
                                   p.y * 32 * V + lane);
        return;
    }
    const int local = (int)(tile % per_image), row = (local / tiles_x) * blockDim.y * RPW + warp * RPW;
    load_rows<IN, OUT, V, RPW>(a + image * (long long)h * w, v, h, w, row, (local % tiles_x) * 32 * V + lane);
}

// ROWS false: column prefix sums only (cumsum down an axis with elements after it): a tile meets the tiles
// above and writes cp; no per-row words, no look-back to the left.
template <typename IN, typename OUT, int WARPS, int RPW, int V, int PAD, bool ROWS, int ORDER>
__device__ void tiles(const IN* __restrict__ a, OUT* __restrict__ b, int h, int w, int tiles_x, int per_image,
                      unsigned* ticket, typename Status<OUT>::Word* status, unsigned epoch) {
    constexpr int C = 32 * V;
    using Word = typename Status<OUT>::Word;
    __shared__ OUT band[WARPS][C];
    __shared__ long long tile_s;
    const int lane = threadIdx.x, warp = threadIdx.y;
    if (lane == 0 && warp == 0 && ORDER != BY_INDEX) tile_s = (long long)draw_ticket(ticket);
    OUT v[RPW][V];
    load_tile<IN, OUT, V, RPW, ORDER>(a, v, h, w, blockIdx.x, per_image, tiles_x, warp, lane);   // while the ticket travels
    __syncthreads();
    const long long tile = ORDER == BY_INDEX ? (long long)blockIdx.x : tile_s, image = tile / per_image;
    if (tile != blockIdx.x) load_tile<IN, OUT, V, RPW, ORDER>(a, v, h, w, tile, per_image, tiles_x, warp, lane);
    int ti, tj;
    if constexpr (ORDER == DIAGONAL) {
        const int2 at = diagonal_position(tile % per_image, per_image, tiles_x);
        ti = at.x;
        tj = at.y;
    } else {
        const int local = (int)(tile % per_image);
        ti = local / tiles_x;
        tj = local % tiles_x;
    }
    const int row = ti * WARPS * RPW + warp * RPW, col = tj * C + lane;
    const long long tiles_y = per_image / tiles_x, images = gridDim.x / per_image;
    const long long up_words = (image * tiles_y + ti) * w;             // this tile row's per-column words
    const long long left_words = images * tiles_y * w + image * tiles_x * (long long)h;   // the image's per-row words
    OUT agg[V], off[V];
    column_band<OUT, WARPS, V, RPW>(v, band, agg, off);
    if (warp == 0)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w)
                Status<OUT>::put(status + up_words + col + k * 32, agg[k], status_code(epoch, ti == 0 ? INCLUSIVE : AGGREGATE));
    OUT above[V];
    look_back_up<OUT, WARPS, V>(status, above, up_words, ti, w, col, epoch);
    if (warp == 0 && ti > 0)
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w)
                Status<OUT>::put(status + up_words + col + k * 32, above[k] + agg[k], status_code(epoch, INCLUSIVE));
    OUT carry[RPW];
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        carry[r] = 0;
#pragma unroll
        for (int k = 0; k < V; ++k) v[r][k] += off[k] + above[k];
    }
    if constexpr (!ROWS) {
#pragma unroll
        for (int r = 0; r < RPW; ++r) {
            if (row + r >= h) break;
            OUT* line = b + image * (long long)h * w + (long long)(row + r) * w;
#pragma unroll
            for (int k = 0; k < V; ++k)
                if (col + k * 32 < w) line[col + k * 32] = v[r][k];
        }
        return;
    }
    prefix_rows<OUT, V, RPW>(v, carry);             // carry: each row's sum of cp across the tile
    // the warp's rows: publish, look left, publish the inclusive sums
    const int r_lane = lane % RPW;
    OUT mine = 0;
#pragma unroll
    for (int r = 0; r < RPW; ++r) if (r == r_lane) mine = carry[r];
    Word* own = status + left_words + (long long)tj * h + row + r_lane;
    if (lane < RPW && row + r_lane < h) Status<OUT>::put(own, mine, status_code(epoch, tj == 0 ? INCLUSIVE : AGGREGATE));
    const OUT left = look_back_left<OUT, RPW>(status, left_words, tj, h, row, epoch);
    if (lane < RPW && tj > 0 && row + r_lane < h) Status<OUT>::put(own, left + mine, status_code(epoch, INCLUSIVE));
    OUT* dst = b + image * (long long)(h + PAD) * (w + PAD);
    if (PAD) {                                      // OpenCV's zero first row and column
        if (ti == 0 && warp == 0) {
#pragma unroll
            for (int k = 0; k < V; ++k) if (col + k * 32 < w) dst[col + k * 32 + 1] = OUT(0);
            if (tj == 0 && lane == 0) dst[0] = OUT(0);
        }
        if (tj == 0 && lane < RPW && row + lane < h) dst[(long long)(row + lane + 1) * (w + 1)] = OUT(0);
    }
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
        const OUT lr = __shfl_sync(0xffffffffu, left, r);
        if (row + r >= h) break;
        OUT* line = dst + (long long)(row + r + PAD) * (w + PAD) + PAD;
#pragma unroll
        for (int k = 0; k < V; ++k)
            if (col + k * 32 < w) line[col + k * 32] = v[r][k] + lr;
    }
}

// ---- transpose --------------------------------------------------------------------------------
// b[i][c][r] = a[i][r][c] for `count` h x w matrices; a block of 32 x 8 threads moves one 64 x 64
// tile (16 elements a thread in flight), blockIdx.z walking the batch in steps of 65535.
// One 64 x 64 tile of one matrix; a WHOLE tile takes no bounds checks (on the H100 a 4096^2 float
// transpose took 0.073 ms checking every element, 0.052 ms without: the copy's time).
template <typename E, int T, bool WHOLE>
__device__ __forceinline__ void transpose_tile(const E* src, E* dst, E (&t)[T][T + 1], int h, int w, int tr, int tc) {
    const int x = threadIdx.x;
#pragma unroll
    for (int y = threadIdx.y; y < T; y += 8)
#pragma unroll
        for (int cx = 0; cx < T; cx += 32)
            if (WHOLE || (tr + y < h && tc + cx + x < w)) t[y][cx + x] = src[(long long)y * w + cx];
    __syncthreads();
#pragma unroll
    for (int y = threadIdx.y; y < T; y += 8)
#pragma unroll
        for (int cx = 0; cx < T; cx += 32)
            if (WHOLE || (tc + y < w && tr + cx + x < h)) dst[(long long)y * h + cx] = t[cx + x][y];
    __syncthreads();
}

template <typename E>
__device__ void transpose(const E* __restrict__ a, E* __restrict__ b, int h, int w, long long count) {
    constexpr int T = 64;
    __shared__ E t[T][T + 1];
    const int tc = blockIdx.x * T, tr = blockIdx.y * T;
    const bool whole = tr + T <= h && tc + T <= w;
    for (long long i = blockIdx.z; i < count; i += gridDim.z) {
        const E* src = a + i * (long long)h * w + (long long)tr * w + tc + threadIdx.x;
        E* dst = b + i * (long long)h * w + (long long)tc * h + tr + threadIdx.x;
        if (whole) transpose_tile<E, T, true>(src, dst, t, h, w, tr, tc);
        else transpose_tile<E, T, false>(src, dst, t, h, w, tr, tc);
    }
}

// Output rows of h elements that are not a whole number of 32-byte sectors start anywhere in a sector: each
// tile's run of 64 elements of a row then begins and ends inside sectors that the tiles beside it write
// too, and on the H100 a 4095^2 float transpose took 1.31x the copy (4096 x 4095, reading such rows and
// writing whole sectors, 1.07x). Here a tile writes each output row's run from the start of the sector
// its first element falls in (64 elements further on, the next tile's run starts there too, as 64 is a
// whole number of sectors), so it holds S more input rows above its own; those are the tile above's rows,
// read again from the L2.
template <typename E, int T, int S, bool WHOLE>
__device__ __forceinline__ void shifted_tile_in(const E* src, E (&t)[T + S][T + 1], int h, int w, int tr, int tc) {
#pragma unroll
    for (int y = threadIdx.y; y < T + S; y += 8) {
        const int r = tr - S + y;
#pragma unroll
        for (int cx = 0; cx < T; cx += 32)
            if (WHOLE || (r >= 0 && r < h && tc + cx + threadIdx.x < w))
                t[y][cx + threadIdx.x] = src[(long long)r * w + tc + cx + threadIdx.x];
    }
}

template <typename E>
__device__ void transpose_shifted(const E* __restrict__ a, E* __restrict__ b, int h, int w, long long count) {
    constexpr int T = 64, S = 32 / (int)sizeof(E);
    __shared__ E t[T + S][T + 1];
    const int tc = blockIdx.x * T, tr = blockIdx.y * T;
    const bool last = tr + T >= h, whole = tr >= S && !last && tc + T <= w;
    for (long long i = blockIdx.z; i < count; i += gridDim.z) {
        const E* src = a + i * (long long)h * w;
        E* dst = b + i * (long long)h * w;
        if (whole) shifted_tile_in<E, T, S, true>(src, t, h, w, tr, tc);
        else shifted_tile_in<E, T, S, false>(src, t, h, w, tr, tc);
        __syncthreads();
        for (int y = threadIdx.y; y < T && tc + y < w; y += 8) {
            E* line = dst + (long long)(tc + y) * h;
            const int s = (int)(((size_t)(line + tr) / sizeof(E)) & (S - 1));   // elements past a sector start
            const int end = last ? h : tr + T - s;
            for (int p = tr - s + (int)threadIdx.x; p < end; p += 32)
                if (p >= 0) line[p] = t[p - tr + S][y];
        }
        __syncthreads();
    }
}

// ---- instances --------------------------------------------------------------------------------
template <bool WANT, typename IN, typename OUT, int THREADS, int V, bool TOTAL>
__device__ __forceinline__ void segmented_scan_if(const IN* a, OUT* b, long long n, long long len, unsigned* t,
                                                  typename Status<OUT>::Word* s, unsigned e) {
    if constexpr (WANT) segmented_scan<IN, OUT, THREADS, V, TOTAL>(a, b, n, len, t, s, e);
}

template <bool WANT, typename IN, typename OUT, int Q>
__device__ __forceinline__ void row_scan_if(const IN* a, OUT* b, long long len, long long tiles_per_row, unsigned* t,
                                            typename Status<OUT>::Word* s, unsigned e) {
    constexpr int LOADS = Q * (int)sizeof(IN) / (int)sizeof(OUT);   // 16-byte loads a thread for Q vectors of sums
    if constexpr (WANT && LOADS >= 1) scan_tiles<IN, OUT, LOADS>(a, b, len, tiles_per_row, t, s, e, 0u);
}

template <bool WANT, typename IN, typename OUT, int WARPS, int RPW, bool ROWS, bool COLS, bool TOTAL, int PAD>
__device__ __forceinline__ void strips_if(const IN* a, OUT* b, int h, int w, int per, unsigned* t,
                                          typename Status<OUT>::Word* s, unsigned e) {
    if constexpr (WANT) strips<IN, OUT, WARPS, RPW, ROWS, COLS, TOTAL, PAD>(a, b, h, w, per, t, s, e);
}

template <bool WANT, typename IN, typename OUT, int WARPS, int RPW, int V, int PAD, bool ROWS, int ORDER>
__device__ __forceinline__ void tiles_if(const IN* a, OUT* b, int h, int w, int tx, int per, unsigned* t,
                                         typename Status<OUT>::Word* s, unsigned e) {
    if constexpr (WANT) tiles<IN, OUT, WARPS, RPW, V, PAD, ROWS, ORDER>(a, b, h, w, tx, per, t, s, e);
}

template <bool WANT, typename E, bool SHIFTED>
__device__ __forceinline__ void transpose_if(const E* a, E* b, int h, int w, long long count) {
    if constexpr (WANT && SHIFTED) transpose_shifted<E>(a, b, h, w, count);
    else if constexpr (WANT) transpose<E>(a, b, h, w, count);
}

// segmented_scan_<in>_<out>_<scan|total>: 16 sums a thread, 512 threads for 4-byte sums and 256 for 8-byte
// ones (on the H100, of 64 to 256 bytes a thread and 128 to 1024 threads, the fastest at 2^24 and 2^26
// floats, 0.078 and 0.281 ms against 0.087 and 0.318 for 256 threads of 16 floats)
#define SCAN_THREADS_OF(OUT) (sizeof(OUT) == 4 ? 512 : 256)
#define SEGSCAN(IN, SI, OUT, SO, MODE, TOTAL)                                                          \
    extern "C" __global__ void __launch_bounds__(SCAN_THREADS_OF(OUT))                                \
    segmented_scan_##SI##_##SO##_##MODE(const IN* a, OUT* b, long long n, long long len, unsigned* t,  \
                                        Status<OUT>::Word* s, unsigned e) {                             \
        segmented_scan_if<MEMTUNE_WANTS(segmented_scan_##SI##_##SO##_##MODE), IN, OUT, SCAN_THREADS_OF(OUT), 16, \
                          TOTAL>(a, b, n, len, t, s, e); }

// row_scan_<in>_<out>_q<Q>: Q vectors of 16 bytes of sums a thread, any number of threads (a sum 8 times the
// input's size, uint8 in uint64, takes 16 elements a load: 8 vectors or more)
#define ROWSCAN(IN, SI, OUT, SO, Q)                                                                    \
    extern "C" __global__ void row_scan_##SI##_##SO##_q##Q(const IN* a, OUT* b, long long len, long long tiles_per_row, \
                                                          unsigned* t, Status<OUT>::Word* s, unsigned e) { \
        row_scan_if<MEMTUNE_WANTS(row_scan_##SI##_##SO##_q##Q), IN, OUT, Q>(a, b, len, tiles_per_row, t, s, e); }

// strips_<in>_<out>_<sat|satpad|cols|coltotal>_w<WARPS>_r<RPW>
#define STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, WARPS, RPW)                              \
    extern "C" __global__ void __launch_bounds__(32 * WARPS)                                          \
    strips_##SI##_##SO##_##MODE##_w##WARPS##_r##RPW(const IN* a, OUT* b, int h, int w, int per,       \
                                                    unsigned* t, Status<OUT>::Word* s, unsigned e) {    \
        strips_if<MEMTUNE_WANTS(strips_##SI##_##SO##_##MODE##_w##WARPS##_r##RPW), IN, OUT, WARPS, RPW,  \
                  ROWS, COLS, TOTAL, PAD>(a, b, h, w, per, t, s, e); }

#define STRIP_SHAPES(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD)                                    \
    STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, 4, 4) STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, 4, 8) \
    STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, 8, 2) STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, 8, 4) \
    STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, 8, 8) STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, 16, 2) \
    STRIP(IN, SI, OUT, SO, MODE, ROWS, COLS, TOTAL, PAD, 16, 4)

// tiles_<in>_<out>_<sat|satpad|cols>_w<WARPS>_r<RPW>_v<V>[_index|_diag]
#define TILE(IN, SI, OUT, SO, MODE, PAD, ROWS, WARPS, RPW, V)                                          \
    extern "C" __global__ void __launch_bounds__(32 * WARPS)                                          \
    tiles_##SI##_##SO##_##MODE##_w##WARPS##_r##RPW##_v##V(const IN* a, OUT* b, int h, int w, int tx,   \
                                                          int per, unsigned* t, Status<OUT>::Word* s, unsigned e) { \
        tiles_if<MEMTUNE_WANTS(tiles_##SI##_##SO##_##MODE##_w##WARPS##_r##RPW##_v##V), IN, OUT, WARPS, RPW, V, \
                 PAD, ROWS, TICKETED>(a, b, h, w, tx, per, t, s, e); }

// An ordered tile's launch bound holds BLOCKS4 blocks an SM (BLOCKS8 for 8-byte sums): left free, the compiler gave
// the 16-row tiles without a ticket 95-168 registers where the ticketed ones took 72-130 (the experiment's
// counts), and the caps (80 registers for 4 or 8 warps by 64 float columns, 128 for 4 by 128) are what was timed.
#define TILE_ORDERED(IN, SI, OUT, SO, MODE, PAD, ROWS, WARPS, RPW, V, ORDER, NAME, BLOCKS4, BLOCKS8)   \
    extern "C" __global__ void __launch_bounds__(32 * WARPS, sizeof(OUT) == 4 ? BLOCKS4 : BLOCKS8)     \
    tiles_##SI##_##SO##_##MODE##_w##WARPS##_r##RPW##_v##V##_##NAME(const IN* a, OUT* b, int h, int w, int tx, \
                                                                   int per, unsigned* t, Status<OUT>::Word* s, unsigned e) { \
        tiles_if<MEMTUNE_WANTS(tiles_##SI##_##SO##_##MODE##_w##WARPS##_r##RPW##_v##V##_##NAME), IN, OUT, WARPS, RPW, \
                 V, PAD, ROWS, ORDER>(a, b, h, w, tx, per, t, s, e); }

#define TILE_SHAPES(IN, SI, OUT, SO, MODE, PAD, ROWS)                                                  \
    TILE(IN, SI, OUT, SO, MODE, PAD, ROWS, 8, 8, 4) TILE(IN, SI, OUT, SO, MODE, PAD, ROWS, 4, 8, 4)      \
    TILE(IN, SI, OUT, SO, MODE, PAD, ROWS, 8, 8, 2) TILE(IN, SI, OUT, SO, MODE, PAD, ROWS, 4, 16, 4)     \
    TILE_ORDERED(IN, SI, OUT, SO, MODE, PAD, ROWS, 8, 16, 2, BY_INDEX, index, 3, 2)                    \
    TILE_ORDERED(IN, SI, OUT, SO, MODE, PAD, ROWS, 4, 16, 2, BY_INDEX, index, 6, 3)                    \
    TILE_ORDERED(IN, SI, OUT, SO, MODE, PAD, ROWS, 4, 16, 2, DIAGONAL, diag, 6, 3)                     \
    TILE_ORDERED(IN, SI, OUT, SO, MODE, PAD, ROWS, 4, 16, 4, DIAGONAL, diag, 4, 2)

#define PAIR(IN, SI, OUT, SO)                                                                         \
    SEGSCAN(IN, SI, OUT, SO, scan, false) SEGSCAN(IN, SI, OUT, SO, total, true)                       \
    ROWSCAN(IN, SI, OUT, SO, 4) ROWSCAN(IN, SI, OUT, SO, 8) ROWSCAN(IN, SI, OUT, SO, 16)               \
    STRIP_SHAPES(IN, SI, OUT, SO, sat, true, true, false, 0)                                          \
    STRIP_SHAPES(IN, SI, OUT, SO, satpad, true, true, false, 1)                                       \
    STRIP_SHAPES(IN, SI, OUT, SO, cols, false, true, false, 0)                                        \
    STRIP_SHAPES(IN, SI, OUT, SO, coltotal, false, true, true, 0)                                     \
    TILE_SHAPES(IN, SI, OUT, SO, sat, 0, true) TILE_SHAPES(IN, SI, OUT, SO, satpad, 1, true)          \
    TILE_SHAPES(IN, SI, OUT, SO, cols, 0, false)

MEMTUNE_SUM_PAIRS(PAIR)

#define TRANSPOSE(E, S)                                                                               \
    extern "C" __global__ void transpose_##S(const E* a, E* b, int h, int w, long long count) {        \
        transpose_if<MEMTUNE_WANTS(transpose_##S), E, false>(a, b, h, w, count); }                    \
    extern "C" __global__ void transpose_##S##_shifted(const E* a, E* b, int h, int w, long long count) { \
        transpose_if<MEMTUNE_WANTS(transpose_##S##_shifted), E, true>(a, b, h, w, count); }
TRANSPOSE(unsigned char, b1) TRANSPOSE(unsigned short, b2) TRANSPOSE(unsigned int, b4) TRANSPOSE(unsigned long long, b8)

// The single-pass prefix sum with decoupled look-back: rows of `len` elements laid end to end, a block a tile
// (scan_tiles, shaped.cu's row_scan), reading IN and summing in OUT; and one vector on resident blocks that take
// tile after tile (scan_resident, scan.cu's scan_lookback).
//
// Rows: a row is its own run of `tiles_per_row` tiles, numbered from an element aligned to a vector
// at or before the row's start, so every load but the row's first and last vectors is one aligned
// 16-byte access whatever the row length (and every store one or more). The row's first tile publishes its inclusive prefix
// at once and the look-back never reads past it. A vector is one row of `len` = n.
#pragma once

#include "lookback.cuh"

// V elements a vector: 16 bytes of IN, loaded in one aligned access, summed and stored as V of OUT.
// (Loads of 16 bytes whatever OUT: an int32 vector summed in int64 moved at half the rate in 8-byte loads.)
template <typename IN> struct LoadVector { static constexpr int V = 16 / sizeof(IN); };
template <typename T, int V> struct alignas(sizeof(T) * V) Pack { T e[V]; };

// The walk back from `tile` (> first), 32 predecessors a round, to the nearest one whose word holds a full
// prefix: the sum of their words, the exclusive prefix of `tile`.
template <typename T>
__device__ __forceinline__ T lookback_walk(typename Status<T>::Word* status, long long tile, long long first,
                                           unsigned epoch) {
    const int lane = threadIdx.x & 31;
    T excl = 0;
    for (long long j = tile - 1;; j -= 32) {
        long long idx = j - lane;
        T v = 0;
        int kind = idx >= first ? wait_status<T>(status + idx, epoch, v) : INCLUSIVE;
        unsigned inclusive = __ballot_sync(0xffffffffu, kind == INCLUSIVE);
        int stop = inclusive ? __ffs(inclusive) - 1 : 32;   // nearest predecessor with a full prefix
        T part = lane <= stop ? v : T(0);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) part += __shfl_down_sync(0xffffffffu, part, o);
        excl += __shfl_sync(0xffffffffu, part, 0);
        if (inclusive) break;
    }
    return excl;
}

// Decoupled look-back: the tile publishes its aggregate, then one warp looks back over 32
// predecessors at a time, summing aggregates until it meets an inclusive prefix, and publishes its
// own inclusive prefix; the row's first tile (`first`) publishes its inclusive prefix at once. Value
// and state share one status word (lookback.cuh), so publishing needs no fence.
template <typename T>
__device__ T lookback_exclusive(typename Status<T>::Word* status, long long tile, long long first, T total,
                                unsigned epoch) {
    const int lane = threadIdx.x & 31;
    if (tile == first) {
        if (lane == 0) Status<T>::put(status + tile, total, status_code(epoch, INCLUSIVE));
        return T(0);
    }
    if (lane == 0) Status<T>::put(status + tile, total, status_code(epoch, AGGREGATE));
    const T excl = lookback_walk<T>(status, tile, first, epoch);
    if (lane == 0) Status<T>::put(status + tile, excl + total, status_code(epoch, INCLUSIVE));
    return excl;
}

// A tile is blockDim / 32 warps, each owning 32 Q consecutive vectors from `seg` (Q 16-byte loads a thread); lane j holds the
// warp's vectors j, j + 32, ...: every load and store is one coalesced warp access, and the tile is
// scanned in registers with shuffles. Elements outside the row [lo, hi) read as 0 and are not
// written; only a warp whose span leaves the row takes that guarded scalar path (`full` false).
template <typename IN, typename OUT, int Q, int V>
__device__ void load_segment(const IN* __restrict__ in, OUT (&v)[Q][V], long long seg, long long lo, long long hi,
                             bool full) {
    const int lane = threadIdx.x & 31;
    const Pack<IN, V>* in_v = reinterpret_cast<const Pack<IN, V>*>(in + seg);
#pragma unroll
    for (int k = 0; k < Q; ++k) {
        if (full) {
            const Pack<IN, V> x = in_v[k * 32 + lane];
#pragma unroll
            for (int i = 0; i < V; ++i) v[k][i] = (OUT)x.e[i];
        } else {
            const long long g = seg + (long long)V * (k * 32 + lane);
#pragma unroll
            for (int i = 0; i < V; ++i) v[k][i] = g + i >= lo && g + i < hi ? (OUT)in[g + i] : OUT(0);
        }
    }
}

// Sums twice the input's size (int32 into int64) make a lane's vector 32 bytes: written at once, a warp's
// store instruction leaves every other 16 bytes of its span. Such sums go through the warp's `stage` in
// shared memory, so each store instruction writes 512 consecutive bytes, 16 a lane.
template <typename IN, typename OUT> struct Staged { static constexpr bool value = sizeof(OUT) == 2 * sizeof(IN); };

template <typename IN, typename OUT, int Q, int V>
__device__ void store_segment(OUT* __restrict__ out, const OUT (&v)[Q][V], OUT off, long long seg, long long lo,
                              long long hi, bool full, OUT* stage) {
    constexpr int SV = V / 2;                                   // a staged 16-byte store's elements
    const int lane = threadIdx.x & 31;
    Pack<OUT, V>* out_v = reinterpret_cast<Pack<OUT, V>*>(out + seg);
#pragma unroll
    for (int k = 0; k < Q; ++k) {
        if (full) {
            Pack<OUT, V> x;
#pragma unroll
            for (int i = 0; i < V; ++i) x.e[i] = v[k][i] + off;
            if constexpr (Staged<IN, OUT>::value) {
                reinterpret_cast<Pack<OUT, V>*>(stage)[lane] = x;
                __syncwarp();
                Pack<OUT, SV>* out_h = reinterpret_cast<Pack<OUT, SV>*>(out + seg) + k * 64;
                out_h[lane] = reinterpret_cast<const Pack<OUT, SV>*>(stage)[lane];
                out_h[32 + lane] = reinterpret_cast<const Pack<OUT, SV>*>(stage)[32 + lane];
                __syncwarp();
            } else {
                out_v[k * 32 + lane] = x;
            }
        } else {
            const long long g = seg + (long long)V * (k * 32 + lane);
#pragma unroll
            for (int i = 0; i < V; ++i) if (g + i >= lo && g + i < hi) out[g + i] = v[k][i] + off;
        }
    }
}

// Inclusive scan of the warp's segment in place; returns the segment's total (in every lane).
template <typename T, int Q, int V>
__device__ T scan_segment(T (&v)[Q][V]) {
    const int lane = threadIdx.x & 31;
    T run = 0;
#pragma unroll
    for (int k = 0; k < Q; ++k) {
#pragma unroll
        for (int i = 1; i < V; ++i) v[k][i] += v[k][i - 1];
        T x = v[k][V - 1];
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) { T y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x += y; }
        const T before = x - v[k][V - 1] + run;
#pragma unroll
        for (int i = 0; i < V; ++i) v[k][i] += before;
        run += __shfl_sync(0xffffffffu, x, 31);
    }
    return run;
}

// Inclusive sum over the warp's lanes of `x` (warp 0's pass over the warps' totals).
template <typename T>
__device__ __forceinline__ T lanes_inclusive(T x) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) { T y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x += y; }
    return x;
}

// Where tile `tile` lies: its row's first tile and elements [lo, hi), and its warp's first element.
struct RowTile {
    long long first, lo, hi, seg;
    __device__ RowTile(long long tile, long long len, long long tiles_per_row, long long tile_elements, int v,
                       long long warp_elements) {
        const long long row = tile / tiles_per_row;
        first = row * tiles_per_row;
        lo = row * len;
        hi = lo + len;
        seg = lo - lo % v + (tile - first) * tile_elements + (threadIdx.x >> 5) * warp_elements;
    }
    __device__ bool full(long long warp_elements) const { return seg >= lo && seg + warp_elements <= hi; }
};

// The ticket's atomic is a round trip to L2 that would hold back the block's first load. So the block
// loads the tile of its own index while the ticket travels, and reloads only where the ticket differs
// (a block that started out of index order); the ticket alone decides the tile, so the look-back still
// waits only on tiles that are running. `skew` != 0 makes the first guess wrong, to take the reload (the row
// scan passes 0: its rows' tests take the reload only where blocks start out of order).
template <typename IN, typename OUT, int Q>
__device__ void scan_tiles(const IN* __restrict__ in, OUT* __restrict__ out, long long len, long long tiles_per_row,
                           unsigned* counter, typename Status<OUT>::Word* status, unsigned epoch, unsigned skew) {
    constexpr int V = LoadVector<IN>::V;
    __shared__ OUT warp_off[32];
    __shared__ unsigned tile_s;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    const long long per_warp = 32LL * Q * V, per_tile = per_warp * warps;
    OUT v[Q][V];
    if (tid == 0) tile_s = draw_ticket(counter);
    const RowTile guess((blockIdx.x + skew) % gridDim.x, len, tiles_per_row, per_tile, V, per_warp);
    load_segment<IN, OUT, Q, V>(in, v, guess.seg, guess.lo, guess.hi, guess.full(per_warp));
    __syncthreads();
    const long long tile = tile_s;
    const RowTile at(tile, len, tiles_per_row, per_tile, V, per_warp);
    const bool full = at.full(per_warp);
    if (tile != (blockIdx.x + skew) % gridDim.x) load_segment<IN, OUT, Q, V>(in, v, at.seg, at.lo, at.hi, full);
    const OUT total = scan_segment<OUT, Q, V>(v);
    if (lane == 0) warp_off[warp] = total;
    __syncthreads();
    if (warp == 0) {                                            // warps' offsets, then the tile's carry
        const OUT mine = lane < warps ? warp_off[lane] : OUT(0);
        const OUT w = lanes_inclusive(mine);
        const OUT carry = lookback_exclusive<OUT>(status, tile, at.first, __shfl_sync(0xffffffffu, w, warps - 1), epoch);
        if (lane < warps) warp_off[lane] = carry + w - mine;
        __syncwarp();     // the look-back diverged: bar.sync is aligned, so the warp must arrive whole
    }
    __syncthreads();
    OUT* stage = nullptr;
    if constexpr (Staged<IN, OUT>::value) {                     // blockDim x 32 bytes of dynamic shared memory
        extern __shared__ __align__(32) unsigned char stage_bytes[];
        stage = reinterpret_cast<OUT*>(stage_bytes) + warp * 32 * V;
    }
    store_segment<IN, OUT, Q, V>(out, v, warp_off[warp], at.seg, at.lo, at.hi, full, stage);
}

// ---- resident blocks, two tiles in flight (scan.cu's vector scan) ------------------------------
// scan_tiles gives a block one tile, so while its warp 0 waits on the look-back the block moves no bytes: on the
// H100 at 2^28 float32 that wait was 0.09 ms of 0.81 (with no look-back the kernel ran 1.02x the copy). Here d
// blocks stay resident and take tile after tile by ticket, two in registers at once: a block loads its next tile
// and publishes that tile's aggregate *before* it looks back for the tile it holds, so its loads are in flight
// during the wait and no tile's aggregate waits on another tile's look-back. (Drawn ahead but published after the
// current look-back, a prefetched tile held up the tiles after it, and the look-backs chained from block to
// block: 1.47 ms at 2^28 float32; bench/results/h100/scan_pipeline/.)

// Scan tile `tile` (loaded in v) and publish its aggregate, or its inclusive prefix where it is the first; warp
// offsets in woff, the tile's total in *total.
template <typename T, int Q>
__device__ void open_tile(T (&v)[Q][LoadVector<T>::V], long long tile, typename Status<T>::Word* status,
                          unsigned epoch, T* woff, T* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
    const T sum = scan_segment<T, Q, LoadVector<T>::V>(v);
    if (lane == 0) woff[warp] = sum;
    __syncthreads();
    if (warp == 0) {
        const T mine = lane < warps ? woff[lane] : T(0);
        const T w = lanes_inclusive(mine);
        const T all = __shfl_sync(0xffffffffu, w, warps - 1);
        if (lane == 0) Status<T>::put(status + tile, all, status_code(epoch, tile == 0 ? INCLUSIVE : AGGREGATE));
        if (lane < warps) woff[lane] = w - mine;
        if (lane == 0) *total = all;
    }
}

// The first element of this thread's warp in tile `tile` of the vector.
__device__ __forceinline__ long long tile_segment(long long tile, long long per_warp) {
    return (tile * (blockDim.x >> 5) + (threadIdx.x >> 5)) * per_warp;
}

template <typename T, int Q>
__device__ __forceinline__ void load_tile(const T* __restrict__ in, long long n, long long tile,
                                          T (&v)[Q][LoadVector<T>::V]) {
    const long long per_warp = 32LL * Q * LoadVector<T>::V, seg = tile_segment(tile, per_warp);
    load_segment<T, T, Q, LoadVector<T>::V>(in, v, seg, 0, n, seg + per_warp <= n);
}

// Look back for opened tile `tile`, publish its inclusive prefix and store it.
template <typename T, int Q>
__device__ void close_tile(T* __restrict__ out, long long n, long long tile, const T (&v)[Q][LoadVector<T>::V],
                           typename Status<T>::Word* status, unsigned epoch, const T* woff, const T* total, T* carry) {
    constexpr int V = LoadVector<T>::V;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long per_warp = 32LL * Q * V, seg = tile_segment(tile, per_warp);
    if (warp == 0 && tile > 0) {
        const T excl = lookback_walk<T>(status, tile, 0, epoch);
        if (lane == 0) {
            Status<T>::put(status + tile, excl + *total, status_code(epoch, INCLUSIVE));
            *carry = excl;
        }
        __syncwarp();     // the look-back diverged: bar.sync is aligned, so the warp must arrive whole
    }
    __syncthreads();
    store_segment<T, T, Q, V>(out, v, (tile > 0 ? *carry : T(0)) + woff[warp], seg, 0, n, seg + per_warp <= n, nullptr);
}

// A block's next ticket: `tiles` tickets hold tiles and each block draws one more, which ends it, so the grid draws
// tiles + gridDim.x and the last draw wraps the counter to 0 for the next launch.
__device__ __forceinline__ long long next_ticket(unsigned* counter, long long tiles, unsigned long long* slot) {
    if (threadIdx.x == 0) *slot = atomicInc(counter, (unsigned)(tiles + gridDim.x - 1));
    __syncthreads();
    return (long long)*slot;
}

// Load tile `tile` into v and open it; false where the ticket holds no tile.
template <typename T, int Q>
__device__ __forceinline__ bool take_tile(const T* __restrict__ in, long long n, long long tile, long long tiles,
                                          T (&v)[Q][LoadVector<T>::V], typename Status<T>::Word* status,
                                          unsigned epoch, T* woff, T* total) {
    if (tile >= tiles) return false;
    load_tile<T, Q>(in, n, tile, v);
    open_tile<T, Q>(v, tile, status, epoch, woff, total);
    return true;
}

// The vector's inclusive prefix sums in `tiles` tiles of blockDim x Q vectors, on however many blocks the grid has
// (the plan's d). The two tiles a block holds alternate between registers a and b (unrolled: registers cannot be
// indexed), each with its warp offsets, total and ticket.
//
// A ticket is a round trip to the L2 before the tile's loads can leave. A grid of a block a tile takes none: each
// block scans the tile of its index (blocks start in index order, so the tiles it looks back on are running or
// done); 0.83-0.94x the ticketed kernel's time at 2^10-2^14 on the H100. Measured and not kept: a block loading the
// tile of its index while its first ticket travels, reloading where the ticket names another (as scan_tiles
// does): 1.02-1.16x slower at 2^22-2^24, the first tickets too often out of index order
// (bench/results/h100/scan_guess/).
template <typename T, int Q>
__device__ void scan_resident(const T* __restrict__ in, T* __restrict__ out, long long n, long long tiles,
                              unsigned* counter, typename Status<T>::Word* status, unsigned epoch) {
    __shared__ T woff[2][32], total[2], carry;
    __shared__ unsigned long long ticket[2];
    T a[Q][LoadVector<T>::V], b[Q][LoadVector<T>::V];
    const long long mine = blockIdx.x;
    if (gridDim.x >= tiles) {
        if (take_tile<T, Q>(in, n, mine, tiles, a, status, epoch, woff[0], &total[0]))
            close_tile<T, Q>(out, n, mine, a, status, epoch, woff[0], &total[0], &carry);
        return;
    }
    long long ta = next_ticket(counter, tiles, &ticket[0]);
    if (!take_tile<T, Q>(in, n, ta, tiles, a, status, epoch, woff[0], &total[0])) return;
    for (;;) {
        const long long tb = next_ticket(counter, tiles, &ticket[1]);
        const bool more_b = take_tile<T, Q>(in, n, tb, tiles, b, status, epoch, woff[1], &total[1]);
        close_tile<T, Q>(out, n, ta, a, status, epoch, woff[0], &total[0], &carry);
        if (!more_b) return;
        ta = next_ticket(counter, tiles, &ticket[0]);
        const bool more_a = take_tile<T, Q>(in, n, ta, tiles, a, status, epoch, woff[0], &total[0]);
        close_tile<T, Q>(out, n, tb, b, status, epoch, woff[1], &total[1], &carry);
        if (!more_a) return;
    }
}

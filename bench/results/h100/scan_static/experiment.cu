// #28 experiment (2026-11-27): where the resident look-back scan (lookback_scan.cuh's scan_resident) loses its ~4 %
// to the copy, and whether a grid of resident blocks that take their tiles in a fixed order (no ticket) keeps it.
//   base_*    : scan_resident as shipped (tickets).
//   static_*  : the same two-tiles-in-flight loop, tile = blockIdx.x + i * gridDim.x (no ticket, no ticket barrier);
//               safe only where every block of the grid is resident at once (the driver checks the occupancy).
//   spec_*    : a walker warp looks back for the tile held while the data warps load the next (below).
//   prof_*    : base with thread 0 counting SM cycles in each phase (ticket, load+open, look-back, store) and the
//               look-back's rounds, summed over blocks into `prof`.
#include "lookback_scan.cuh"

__device__ unsigned long long prof[8];

template <typename T, int Q>
__device__ void scan_static(const T* __restrict__ in, T* __restrict__ out, long long n, long long tiles,
                            typename Status<T>::Word* status, unsigned epoch) {
    __shared__ T woff[2][32], total[2], carry;
    T a[Q][LoadVector<T>::V], b[Q][LoadVector<T>::V];
    long long ta = blockIdx.x;
    // open_tile's barrier orders each reuse of woff / carry, as next_ticket's did
    if (!take_tile<T, Q>(in, n, ta, tiles, a, status, epoch, woff[0], &total[0])) return;
    for (;;) {
        const long long tb = ta + gridDim.x;
        const bool more_b = take_tile<T, Q>(in, n, tb, tiles, b, status, epoch, woff[1], &total[1]);
        close_tile<T, Q>(out, n, ta, a, status, epoch, woff[0], &total[0], &carry);
        if (!more_b) return;
        ta = tb + gridDim.x;
        const bool more_a = take_tile<T, Q>(in, n, ta, tiles, a, status, epoch, woff[0], &total[0]);
        close_tile<T, Q>(out, n, tb, b, status, epoch, woff[1], &total[1], &carry);
        if (!more_a) return;
    }
}

// close_tile split in two for the timers: the look-back (warp 0) up to the barrier, then the store.
template <typename T, int Q>
__device__ void close_timed(T* __restrict__ out, long long n, long long tile, const T (&v)[Q][LoadVector<T>::V],
                            typename Status<T>::Word* status, unsigned epoch, const T* woff, const T* total, T* carry,
                            unsigned long long* t) {
    constexpr int V = LoadVector<T>::V;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long per_warp = 32LL * Q * V, seg = tile_segment(tile, per_warp);
    long long t0 = clock64();
    if (warp == 0 && tile > 0) {
        const T excl = lookback_walk<T>(status, tile, 0, epoch);
        if (lane == 0) {
            Status<T>::put(status + tile, excl + *total, status_code(epoch, INCLUSIVE));
            *carry = excl;
        }
        __syncwarp();
    }
    __syncthreads();
    long long t1 = clock64();
    store_segment<T, T, Q, V>(out, v, (tile > 0 ? *carry : T(0)) + woff[warp], seg, 0, n, seg + per_warp <= n, nullptr);
    long long t2 = clock64();
    t[2] += t1 - t0;
    t[3] += t2 - t1;
}

template <typename T, int Q>
__device__ void scan_prof(const T* __restrict__ in, T* __restrict__ out, long long n, long long tiles,
                          unsigned* counter, typename Status<T>::Word* status, unsigned epoch) {
    __shared__ T woff[2][32], total[2], carry;
    __shared__ unsigned long long ticket[2];
    T a[Q][LoadVector<T>::V], b[Q][LoadVector<T>::V];
    unsigned long long t[5] = {0, 0, 0, 0, 0};
    long long s, start = clock64();
    s = clock64(); long long ta = next_ticket(counter, tiles, &ticket[0]); t[0] += clock64() - s;
    s = clock64(); bool ok = take_tile<T, Q>(in, n, ta, tiles, a, status, epoch, woff[0], &total[0]); t[1] += clock64() - s;
    if (ok) for (;;) {
        s = clock64(); const long long tb = next_ticket(counter, tiles, &ticket[1]); t[0] += clock64() - s;
        s = clock64(); const bool more_b = take_tile<T, Q>(in, n, tb, tiles, b, status, epoch, woff[1], &total[1]);
        t[1] += clock64() - s;
        close_timed<T, Q>(out, n, ta, a, status, epoch, woff[0], &total[0], &carry, t);
        t[4] += 1;
        if (!more_b) break;
        s = clock64(); ta = next_ticket(counter, tiles, &ticket[0]); t[0] += clock64() - s;
        s = clock64(); const bool more_a = take_tile<T, Q>(in, n, ta, tiles, a, status, epoch, woff[0], &total[0]);
        t[1] += clock64() - s;
        close_timed<T, Q>(out, n, tb, b, status, epoch, woff[1], &total[1], &carry, t);
        t[4] += 1;
        if (!more_a) break;
    }
    if (threadIdx.x == 0) {
        for (int i = 0; i < 5; ++i) atomicAdd(&prof[i], t[i]);
        atomicAdd(&prof[5], (unsigned long long)(clock64() - start));
        atomicAdd(&prof[6], 1ull);
    }
}


// ---- spec_*: a walker warp beside the data warps ------------------------------------------------------------
// The block is `warps` data warps and one more, the walker. Data warps hold two tiles: while they load and open tile
// k (publishing its aggregate), the walker looks back for tile k - 1; they store k - 1 once its carry is in. The
// walker draws each ticket as the data warps store, so the tile is claimed just before its loads leave. Named
// barriers, two of each kind by tile parity so an arrival never meets the previous generation: T (ticket in),
// O (tile opened: aggregate and total out), X (carry in); D among the data warps.
__device__ __forceinline__ void bar_sync(int id, int count) { asm volatile("bar.sync %0, %1;" :: "r"(id), "r"(count) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int count) {
    __threadfence_block();
    asm volatile("bar.arrive %0, %1;" :: "r"(id), "r"(count) : "memory");
}
enum { BAR_D = 1, BAR_T = 2, BAR_O = 4, BAR_X = 6 };

template <typename T, int Q>
__device__ void spec_open(const T* __restrict__ in, long long n, long long tile, int warps, T (&v)[Q][LoadVector<T>::V],
                          typename Status<T>::Word* status, unsigned epoch, T* woff, T* total) {
    constexpr int V = LoadVector<T>::V;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const long long per_warp = 32LL * Q * V, seg = (tile * warps + warp) * per_warp;
    load_segment<T, T, Q, V>(in, v, seg, 0, n, seg + per_warp <= n);
    const T sum = scan_segment<T, Q, V>(v);
    if (lane == 0) woff[warp] = sum;
    bar_sync(BAR_D, warps * 32);
    if (warp == 0) {
        const T mine = lane < warps ? woff[lane] : T(0);
        const T w = lanes_inclusive(mine);
        const T all = __shfl_sync(0xffffffffu, w, warps - 1);
        if (lane == 0) Status<T>::put(status + tile, all, status_code(epoch, tile == 0 ? INCLUSIVE : AGGREGATE));
        if (lane < warps) woff[lane] = w - mine;
        if (lane == 0) *total = all;
    }
    __syncwarp();
}

template <typename T, int Q>
__device__ __forceinline__ void spec_store(T* __restrict__ out, long long n, long long tile, int warps,
                                           const T (&v)[Q][LoadVector<T>::V], T off) {
    constexpr int V = LoadVector<T>::V;
    const long long per_warp = 32LL * Q * V, seg = (tile * warps + (threadIdx.x >> 5)) * per_warp;
    store_segment<T, T, Q, V>(out, v, off, seg, 0, n, seg + per_warp <= n, nullptr);
}

template <typename T>
__device__ void spec_walker(long long tiles, int warps, unsigned* counter, typename Status<T>::Word* status,
                            unsigned epoch, unsigned long long* ticket, const T* total, T* carry) {
    const int lane = threadIdx.x & 31, all = (warps + 1) * 32;
    const unsigned limit = (unsigned)(tiles + gridDim.x - 1);
    long long cur = __shfl_sync(0xffffffffu, lane == 0 ? (long long)atomicInc(counter, limit) : 0LL, 0);
    if (lane == 0) ticket[0] = cur;
    bar_arrive(BAR_T, all);
    if (cur >= tiles) return;
    for (int p = 0;; p ^= 1) {
        bar_sync(BAR_O + p, all);                                  // cur opened: its total is in
        const long long next = __shfl_sync(0xffffffffu, lane == 0 ? (long long)atomicInc(counter, limit) : 0LL, 0);
        if (lane == 0) ticket[p ^ 1] = next;
        bar_arrive(BAR_T + (p ^ 1), all);
        T excl = T(0);
        if (cur > 0) excl = lookback_walk<T>(status, cur, 0, epoch);
        if (lane == 0) {
            if (cur > 0) Status<T>::put(status + cur, excl + total[p], status_code(epoch, INCLUSIVE));
            carry[p] = excl;
        }
        __syncwarp();
        bar_arrive(BAR_X + p, all);
        if (next >= tiles) return;
        cur = next;
    }
}

template <typename T, int Q>
__device__ void scan_spec(const T* __restrict__ in, T* __restrict__ out, long long n, long long tiles,
                          unsigned* counter, typename Status<T>::Word* status, unsigned epoch) {
    __shared__ T woff[2][32], total[2], carry[2];
    __shared__ unsigned long long ticket[2];
    const int warps = (blockDim.x >> 5) - 1, warp = threadIdx.x >> 5, all = (warps + 1) * 32;
    if (warp == warps) {
        spec_walker<T>(tiles, warps, counter, status, epoch, ticket, total, carry);
        return;
    }
    T a[Q][LoadVector<T>::V], b[Q][LoadVector<T>::V];
    bar_sync(BAR_T, all);
    long long ta = (long long)ticket[0];
    if (ta >= tiles) return;
    spec_open<T, Q>(in, n, ta, warps, a, status, epoch, woff[0], &total[0]);
    bar_arrive(BAR_O, all);
    for (;;) {
        bar_sync(BAR_T + 1, all);
        const long long tb = (long long)ticket[1];
        const bool more_b = tb < tiles;
        if (more_b) { spec_open<T, Q>(in, n, tb, warps, b, status, epoch, woff[1], &total[1]); bar_arrive(BAR_O + 1, all); }
        bar_sync(BAR_X, all);
        spec_store<T, Q>(out, n, ta, warps, a, carry[0] + woff[0][warp]);
        if (!more_b) return;
        bar_sync(BAR_T, all);
        ta = (long long)ticket[0];
        const bool more_a = ta < tiles;
        if (more_a) { spec_open<T, Q>(in, n, ta, warps, a, status, epoch, woff[0], &total[0]); bar_arrive(BAR_O, all); }
        bar_sync(BAR_X + 1, all);
        spec_store<T, Q>(out, n, tb, warps, b, carry[1] + woff[1][warp]);
        if (!more_a) return;
    }
}

// spec_<S>_q<Q>_t<threads>: THREADS - 32 data threads and the walker's 32, registers capped so BLOCKS of them fit an
// SM. (Blocks of 17 warps, 16 for data, would take 20 warps' registers: they are allocated 4 warps at a time.)
#define SPEC(T, S, Q, THREADS, BLOCKS)                                                                            \
    extern "C" __global__ void __maxnreg__(65536 / THREADS / BLOCKS / 8 * 8) spec_##S##_q##Q##_t##THREADS(       \
        const T* in, T* out, long long n, long long tiles, unsigned* c, Status<T>::Word* status, unsigned epoch) { \
        scan_spec<T, Q>(in, out, n, tiles, c, status, epoch); }

#define EXPERIMENT(T, S, Q)                                                                                       \
    extern "C" __global__ void base_##S##_q##Q(const T* in, T* out, long long n, long long tiles, unsigned* c,    \
                                               Status<T>::Word* status, unsigned epoch) {                          \
        scan_resident<T, Q>(in, out, n, tiles, c, status, epoch); }                                               \
    extern "C" __global__ void static_##S##_q##Q(const T* in, T* out, long long n, long long tiles, unsigned* c,  \
                                                 Status<T>::Word* status, unsigned epoch) {                        \
        scan_static<T, Q>(in, out, n, tiles, status, epoch); }                                                    \
    extern "C" __global__ void __launch_bounds__(512, 1) prof_##S##_q##Q(const T* in, T* out, long long n, long long tiles, unsigned* c,    \
                                               Status<T>::Word* status, unsigned epoch) {                          \
        scan_prof<T, Q>(in, out, n, tiles, c, status, epoch); }                                                   \
    SPEC(T, S, Q, 512, 1) SPEC(T, S, Q, 256, 2) SPEC(T, S, Q, 128, 4)

EXPERIMENT(float, f32, 4) EXPERIMENT(float, f32, 8)
EXPERIMENT(double, f64, 4) EXPERIMENT(double, f64, 8)

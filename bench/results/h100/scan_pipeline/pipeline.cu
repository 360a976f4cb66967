// Experiment (#28): a look-back scan whose blocks stay resident and take tile after tile, with the next
// tile's loads in flight while the current tile waits on its look-back. Tickets are drawn one tile ahead.
#include "lookback_scan.cuh"

// One tile: scan A in registers (already loaded), draw nothing, issue the loads of `next` into B, look back,
// store A. Returns after the store.  MODE 0: look back; MODE 1: carry 0 (the floor, wrong sums).
template <typename T, int Q, int MODE>
__device__ __forceinline__ void pipe_tile(const T* __restrict__ in, T* __restrict__ out, long long n, long long tile,
                                          long long next, long long tiles, T (&a)[Q][LoadVector<T>::V],
                                          T (&b)[Q][LoadVector<T>::V], typename Status<T>::Word* status,
                                          unsigned epoch, T* warp_off) {
    constexpr int V = LoadVector<T>::V;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    const long long per_warp = 32LL * Q * V, per_tile = per_warp * warps;
    const T total = scan_segment<T, Q, V>(a);
    if (lane == 0) warp_off[warp] = total;
    if (next < tiles) {
        const long long seg = next * per_tile + warp * per_warp;
        load_segment<T, T, Q, V>(in, b, seg, 0, n, seg + per_warp <= n);
    }
    __syncthreads();
    if (warp == 0) {
        const T mine = lane < warps ? warp_off[lane] : T(0);
        const T w = lanes_inclusive(mine);
        T carry = 0;
        if (MODE == 0) carry = lookback_exclusive<T>(status, tile, 0, __shfl_sync(0xffffffffu, w, warps - 1), epoch);
        if (lane < warps) warp_off[lane] = carry + w - mine;
        __syncwarp();
    }
    __syncthreads();
    const long long seg = tile * per_tile + warp * per_warp;
    store_segment<T, T, Q, V>(out, a, warp_off[warp], seg, 0, n, seg + per_warp <= n, nullptr);
}

template <typename T, int Q, int MODE>
__device__ void pipe_scan(const T* __restrict__ in, T* __restrict__ out, long long n, long long tiles,
                          unsigned* counter, typename Status<T>::Word* status, unsigned epoch) {
    constexpr int V = LoadVector<T>::V;
    __shared__ T warp_off[32];
    __shared__ unsigned long long tkt[2];
    const int tid = threadIdx.x, warp = tid >> 5, warps = blockDim.x >> 5;
    const long long per_warp = 32LL * Q * V, per_tile = per_warp * warps;
    // tickets: tiles valid ones and one failing one a block, so the grid draws tiles + gridDim.x and the
    // last draw wraps the counter to 0.
    const unsigned wrap = (unsigned)(tiles + gridDim.x - 1);
    if (tid == 0) tkt[0] = atomicInc(counter, wrap);
    __syncthreads();
    long long tile = tkt[0];
    if (tile >= tiles) return;
    T a[Q][V], b[Q][V];
    {
        const long long seg = tile * per_tile + warp * per_warp;
        load_segment<T, T, Q, V>(in, a, seg, 0, n, seg + per_warp <= n);
    }
    for (;;) {
        if (tid == 0) tkt[1] = atomicInc(counter, wrap);
        __syncthreads();   // tkt[1] seen by all (the wait is hidden behind A's loads' use in the scan anyway)
        long long next = tkt[1];
        pipe_tile<T, Q, MODE>(in, out, n, tile, next, tiles, a, b, status, epoch, warp_off);
        if (next >= tiles) return;
        tile = next;
        if (tid == 0) tkt[0] = atomicInc(counter, wrap);
        __syncthreads();
        next = tkt[0];
        pipe_tile<T, Q, MODE>(in, out, n, tile, next, tiles, b, a, status, epoch, warp_off);
        if (next >= tiles) return;
        tile = next;
    }
}

#define PIPE(T, S, Q, M)                                                                                          \
    extern "C" __global__ void pipe_##S##_q##Q##_m##M(const T* in, T* out, long long n, long long tiles,           \
                                                      unsigned* counter, Status<T>::Word* status, unsigned epoch) { \
        pipe_scan<T, Q, M>(in, out, n, tiles, counter, status, epoch);                                             \
    }
PIPE(float, f32, 4, 0) PIPE(float, f32, 8, 0) PIPE(float, f32, 16, 0)
PIPE(float, f32, 8, 1) PIPE(float, f32, 16, 1)
PIPE(double, f64, 4, 0) PIPE(double, f64, 8, 0) PIPE(double, f64, 16, 0)
PIPE(double, f64, 8, 1) PIPE(double, f64, 16, 1)

// Variant 2: the next tile's aggregate is published before the current tile looks back, so no tile's
// aggregate waits on another tile's look-back: load B, scan B, publish B's aggregate, look back A, store A.
// Measured as pipeline_v2.json; landed as lookback_scan.cuh's scan_resident, which these instances now call.
#define PIPE2(T, S, Q)                                                                                            \
    extern "C" __global__ void pipe2_##S##_q##Q(const T* in, T* out, long long n, long long tiles,                 \
                                                unsigned* counter, Status<T>::Word* status, unsigned epoch) {     \
        scan_resident<T, Q>(in, out, n, tiles, counter, status, epoch);                                           \
    }
PIPE2(float, f32, 4) PIPE2(float, f32, 8) PIPE2(float, f32, 16)
PIPE2(double, f64, 4) PIPE2(double, f64, 8) PIPE2(double, f64, 16)

#include "lookback_scan.cuh"

template <typename T>
__device__ T xor_sum(T s) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    return s;
}


// Windowed look-back: each lane peeks W words (window 32 W), no lane waits on a word past the nearest
// inclusive one; returns the exclusive prefix of `tile` (tile > first).
template <typename T, int W>
__device__ T lookback_window(const typename Status<T>::Word* status, long long tile, long long first, unsigned epoch) {
    const int lane = threadIdx.x & 31;
    T excl = 0;
    for (long long j = tile - 1;; j -= 32 * W) {
        T v[W];
        unsigned kind[W];
#pragma unroll
        for (int w = 0; w < W; ++w) { kind[w] = 0; v[w] = T(0); }
        int stop;
        for (unsigned pause = 32;; pause = min(pause * 2, 1024u)) {
#pragma unroll
            for (int w = 0; w < W; ++w) {
                const long long idx = j - lane - 32 * w;
                if (kind[w] != 0) continue;
                if (idx < first) { kind[w] = INCLUSIVE; v[w] = T(0); continue; }
                unsigned code;
                const bool whole = Status<T>::peek(status + idx, v[w], code);
                kind[w] = whole && (code >> 2) == epoch ? (code & 3u) : 0u;
            }
            stop = 32 * W;
#pragma unroll
            for (int w = W - 1; w >= 0; --w) {
                const unsigned b = __ballot_sync(0xffffffffu, kind[w] == INCLUSIVE);
                if (b) stop = 32 * w + __ffs(b) - 1;
            }
            bool ok = true;
#pragma unroll
            for (int w = 0; w < W; ++w) ok = ok && (lane + 32 * w > stop || kind[w] != 0);
            if (__all_sync(0xffffffffu, ok)) break;
            __nanosleep(pause);
        }
        T part = 0;
#pragma unroll
        for (int w = 0; w < W; ++w) if (lane + 32 * w <= stop) part += v[w];
        excl += xor_sum(part);
        if (stop < 32 * W) break;
    }
    return excl;
}

// MODE 0: aggregate from a reduction, published before the scan; warp 0 scans, then looks back.
// MODE 1: same, but warp 0 looks back before its own scan.
// MODE 2: carry forced to 0 (no look-back at all): the floor.
template <typename T, int Q, int MODE, bool RESET, int W = 1>
__device__ void scan_early(const T* __restrict__ in, T* __restrict__ out, long long n, unsigned* counter,
                           typename Status<T>::Word* status, unsigned epoch) {
    constexpr int V = LoadVector<T>::V;
    __shared__ T warp_tot[32];
    __shared__ T carry_s;
    __shared__ unsigned tile_s;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    const long long per_warp = 32LL * Q * V, per_tile = per_warp * warps;
    T v[Q][V];
    if (tid == 0) { tile_s = atomicAdd(counter, 1u); if (RESET && tile_s == gridDim.x - 1) *(volatile unsigned*)counter = 0u; }
    const RowTile guess(blockIdx.x, n, gridDim.x, per_tile, V, per_warp);
    load_segment<T, T, Q, V>(in, v, guess.seg, guess.lo, guess.hi, guess.full(per_warp));
    __syncthreads();
    const long long tile = tile_s;
    const RowTile at(tile, n, gridDim.x, per_tile, V, per_warp);
    const bool full = at.full(per_warp);
    if (tile != blockIdx.x) load_segment<T, T, Q, V>(in, v, at.seg, at.lo, at.hi, full);
    T part[Q];
#pragma unroll
    for (int k = 0; k < Q; ++k) {
        T s = v[k][0];
#pragma unroll
        for (int i = 1; i < V; ++i) s += v[k][i];
        part[k] = s;
    }
#pragma unroll
    for (int w = 1; w < Q; w <<= 1)
#pragma unroll
        for (int k = 0; k + w < Q; k += 2 * w) part[k] += part[k + w];
    const T mine = xor_sum(part[0]);
    if (lane == 0) warp_tot[warp] = mine;
    __syncthreads();
    T total = 0, carry = 0;
    if (warp == 0 && MODE != 2) {
        total = xor_sum(lane < warps ? warp_tot[lane] : T(0));
        if (lane == 0) Status<T>::put(status + tile, total, status_code(epoch, tile == at.first ? INCLUSIVE : AGGREGATE));
    }
    if (MODE == 1 && warp == 0 && tile != at.first) carry = lookback_walk<T>(status, tile, at.first, epoch);
    scan_segment<T, Q, V>(v);
    if (MODE == 0 && warp == 0 && tile != at.first) carry = lookback_walk<T>(status, tile, at.first, epoch);
    if (MODE == 3 && warp == 0 && tile != at.first) carry = lookback_window<T, W>(status, tile, at.first, epoch);
    if (warp == 0) {
        if (lane == 0 && tile != at.first && MODE != 2) Status<T>::put(status + tile, carry + total, status_code(epoch, INCLUSIVE));
        if (lane == 0) carry_s = carry;
        __syncwarp();
    }
    __syncthreads();
    T off = carry_s;
    for (int w = 0; w < warp; ++w) off += warp_tot[w];
    store_segment<T, T, Q, V>(out, v, off, at.seg, at.lo, at.hi, full, nullptr);
}

#define EARLY(T, S, Q, M) extern "C" __global__ void early_##S##_q##Q##_m##M(const T* in, T* out, long long n, \
    unsigned* c, Status<T>::Word* status, unsigned epoch) { scan_early<T, Q, M, false>(in, out, n, c, status, epoch); } \
    extern "C" __global__ void reset_##S##_q##Q##_m##M(const T* in, T* out, long long n, \
    unsigned* c, Status<T>::Word* status, unsigned epoch) { scan_early<T, Q, M, true>(in, out, n, c, status, epoch); }
#define ALLQ(T, S, M) EARLY(T, S, 8, M) EARLY(T, S, 16, M) EARLY(T, S, 32, M)
ALLQ(float, f32, 0) ALLQ(float, f32, 2)
#define WIN(T, S, Q, W) extern "C" __global__ void win##W##_##S##_q##Q##_m3(const T* in, T* out, long long n, \
    unsigned* c, Status<T>::Word* status, unsigned epoch) { scan_early<T, Q, 3, true, W>(in, out, n, c, status, epoch); }
#define ALLW(T, S, W) WIN(T, S, 8, W) WIN(T, S, 16, W) WIN(T, S, 32, W)
ALLW(float, f32, 1) ALLW(float, f32, 2) ALLW(float, f32, 4) ALLW(double, f64, 1) ALLW(double, f64, 2) ALLW(double, f64, 4)
ALLQ(double, f64, 0) ALLQ(double, f64, 2)

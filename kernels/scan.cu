// Sum and prefix sums (001 §§4-8): the seeds' algorithms in one block's shared memory and in global
// memory (a barrier is a kernel boundary), and single-pass global versions that run at the speed of
// memory: a grid-stride reduction and a prefix sum with decoupled look-back.

#include "lookback.cuh"

// ---- one block, shared memory: n <= capacity, p = blockDim threads, `reps` repetitions ----------

template <typename T>
__device__ void sum_shared_body(T* a, int n) {
    for (int h = n >> 1; h >= 1; h >>= 1) {                    // a[i] += a[i + h], h = n/2 ... 1
        for (int i = threadIdx.x; i < h; i += blockDim.x) a[i] += a[i + h];
        __syncthreads();
    }
}

template <typename T>
__device__ T* prefix_simple_shared_body(T* a, T* b, int n) {  // Hillis-Steele, ping-pong buffers
    for (int h = 1; h < n; h <<= 1) {
        for (int i = threadIdx.x; i < n; i += blockDim.x) b[i] = i >= h ? a[i] + a[i - h] : a[i];
        __syncthreads();
        T* t = a; a = b; b = t;
    }
    return a;
}

template <typename T>
__device__ void prefix_optimal_shared_body(T* s, int n) {
    // arrays a_t of 2^t cells at s + 2^t - 1 (t = 0 .. m), a_m = the input at s + n - 1 (001 §7)
    int m = 31 - __clz(n);
    for (int t = m - 1; t >= 0; --t) {                         // interval sums
        T* at = s + (1 << t) - 1;
        T* an = s + (2 << t) - 1;
        for (int i = threadIdx.x; i < (1 << t); i += blockDim.x) at[i] = an[2 * i] + an[2 * i + 1];
        __syncthreads();
    }
    for (int t = 0; t < m; ++t) {                              // sums of interval sums
        T* at = s + (1 << t) - 1;
        T* an = s + (2 << t) - 1;
        for (int i = threadIdx.x; i < (1 << t); i += blockDim.x) {
            T v = at[i];
            if (i + 1 < (1 << t)) an[2 * i + 2] += v;
            an[2 * i + 1] = v;
        }
        __syncthreads();
    }
}

template <typename T>
__device__ void scan_shared(const T* in, T* out, int n, int reps, int which) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* a = reinterpret_cast<T*>(smem);                          // 2n elements
    for (int r = 0; r < reps; ++r) {
        T* buf = which == 2 ? a + n - 1 : a;                    // the optimal algorithm's input is a_m
        for (int i = threadIdx.x; i < n; i += blockDim.x) buf[i] = in[i];
        __syncthreads();
        T* res = buf;
        if (which == 0) sum_shared_body(buf, n);
        else if (which == 1) res = prefix_simple_shared_body(a, a + n, n);
        else prefix_optimal_shared_body(a, n);
        if (r == reps - 1) {
            if (which == 0) { if (threadIdx.x == 0) out[0] = res[0]; }
            else for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = res[i];
        }
        __syncthreads();
    }
}

// ---- global memory, the seeds' algorithms: one launch per step ----------------------------------

template <typename T>
__device__ void pairwise_step(T* a, long long h) {             // a[i] += a[i + h], i < h
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < h; i += (long long)gridDim.x * blockDim.x)
        a[i] += a[i + h];
}

template <typename T>
__device__ void hillis_steele_step(const T* a, T* b, long long n, long long h) {
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        b[i] = i >= h ? a[i] + a[i - h] : a[i];
}

template <typename T>
__device__ void interval_step(const T* an, T* at, long long half) {   // at[i] = an[2i] + an[2i+1]
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < half; i += (long long)gridDim.x * blockDim.x)
        at[i] = an[2 * i] + an[2 * i + 1];
}

template <typename T>
__device__ void spread_step(const T* at, T* an, long long half) {     // an[2i+1] = at[i]; an[2i+2] += at[i]
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < half; i += (long long)gridDim.x * blockDim.x) {
        T v = at[i];
        if (i + 1 < half) an[2 * i + 2] += v;
        an[2 * i + 1] = v;
    }
}

// ---- global memory, single pass ----------------------------------------------------------------

template <typename T>
__device__ T warp_sum(T v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    return v;
}

template <typename T>
__device__ T block_sum(T v) {                                   // result valid in thread 0
    __shared__ T part[32];
    v = warp_sum(v);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;
    __syncthreads();
    v = threadIdx.x < (blockDim.x >> 5) ? part[threadIdx.x] : T(0);
    if (threadIdx.x < 32) v = warp_sum(v);
    __syncthreads();
    return v;
}

template <typename T>
__device__ void reduce_partials(const T* __restrict__ in, T* __restrict__ partial, long long n) {
    T acc = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        acc += in[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

__device__ void reduce_partials_vec4(const float* __restrict__ in, float* __restrict__ partial, long long n) {
    float acc = 0.f;
    long long n4 = n / 4;
    const float4* in4 = reinterpret_cast<const float4*>(in);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += (long long)gridDim.x * blockDim.x) {
        float4 v = in4[i];
        acc += (v.x + v.y) + (v.z + v.w);
    }
    for (long long i = 4 * n4 + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        acc += in[i];
    acc = block_sum(acc);
    if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}

// Decoupled look-back (single pass): tiles are numbered by an atomic counter in start order; a tile
// publishes its aggregate, then one warp looks back over 32 predecessors at a time, summing
// aggregates until it meets an inclusive prefix, and publishes its own inclusive prefix. Value and
// state share one status word (lookback.cuh), so publishing needs no fence.
template <typename T>
__device__ T lookback_exclusive(typename Status<T>::Word* status, long long tile, T total, unsigned epoch) {
    const int lane = threadIdx.x & 31;
    if (tile == 0) {
        if (lane == 0) Status<T>::put(status, total, status_code(epoch, INCLUSIVE));
        return T(0);
    }
    if (lane == 0) Status<T>::put(status + tile, total, status_code(epoch, AGGREGATE));
    T excl = 0;
    for (long long j = tile - 1;; j -= 32) {
        long long idx = j - lane;
        T v = 0;
        int kind = idx >= 0 ? wait_status<T>(status + idx, epoch, v) : INCLUSIVE;
        unsigned inclusive = __ballot_sync(0xffffffffu, kind == INCLUSIVE);
        int stop = inclusive ? __ffs(inclusive) - 1 : 32;   // nearest predecessor with a full prefix
        excl += warp_sum(lane <= stop ? v : T(0));
        excl = __shfl_sync(0xffffffffu, excl, 0);
        if (inclusive) break;
    }
    if (lane == 0) Status<T>::put(status + tile, excl + total, status_code(epoch, INCLUSIVE));
    return excl;
}

// A tile is blockDim / 32 warps, each owning 32 Q consecutive 16-byte vectors; lane j holds the
// warp's vectors j, j + 32, ...: every load and store is one coalesced 512-byte warp access, and the
// tile is scanned in registers with shuffles, with no shared-memory transpose and one barrier before
// and one after the look-back. Only a warp whose segment runs past n takes the guarded scalar path.
template <typename T, int Q>
__device__ void load_segment(const T* __restrict__ in, T (&v)[Q][Vec<T>::V], long long seg, long long n, bool full) {
    constexpr int V = Vec<T>::V;
    const int lane = threadIdx.x & 31;
    const typename Vec<T>::type* in_v = reinterpret_cast<const typename Vec<T>::type*>(in + seg);
#pragma unroll
    for (int k = 0; k < Q; ++k) {
        if (full) {
            typename Vec<T>::type x = in_v[k * 32 + lane];
            const T* e = reinterpret_cast<const T*>(&x);
#pragma unroll
            for (int i = 0; i < V; ++i) v[k][i] = e[i];
        } else {
            const long long g = seg + (long long)V * (k * 32 + lane);
#pragma unroll
            for (int i = 0; i < V; ++i) v[k][i] = g + i < n ? in[g + i] : T(0);
        }
    }
}

template <typename T, int Q>
__device__ void store_segment(T* __restrict__ out, const T (&v)[Q][Vec<T>::V], T off, long long seg, long long n,
                              bool full) {
    constexpr int V = Vec<T>::V;
    const int lane = threadIdx.x & 31;
    typename Vec<T>::type* out_v = reinterpret_cast<typename Vec<T>::type*>(out + seg);
#pragma unroll
    for (int k = 0; k < Q; ++k) {
        if (full) {
            typename Vec<T>::type x;
            T* e = reinterpret_cast<T*>(&x);
#pragma unroll
            for (int i = 0; i < V; ++i) e[i] = v[k][i] + off;
            out_v[k * 32 + lane] = x;
        } else {
            const long long g = seg + (long long)V * (k * 32 + lane);
#pragma unroll
            for (int i = 0; i < V; ++i) if (g + i < n) out[g + i] = v[k][i] + off;
        }
    }
}

// Inclusive scan of the warp's segment in place; returns the segment's total (in every lane).
template <typename T, int Q>
__device__ T scan_segment(T (&v)[Q][Vec<T>::V]) {
    constexpr int V = Vec<T>::V;
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

// The ticket's atomic is a round trip to L2 that would hold back the block's first load. So the block
// loads the tile of its own index while the ticket travels, and reloads only where the ticket differs
// (a block that started out of index order); the ticket alone decides the tile, so the look-back still
// waits only on tiles that are running.
//
// Where the time goes (H100, 2^28, cold L2, medians of 20; copy 0.714 ms float32, 1.420 float64):
// with the carry forced to 0 (no look-back, wrong sums) the same kernel runs 0.731 / 1.454 ms, 1.02x
// the copy; the look-back costs the rest, 0.09 ms. A block holds its tile in registers from its
// loads until its carry arrives, an L2 round trip after its predecessor's aggregate, itself published
// only once that tile's loads are in; larger tiles pay it fewer times (vectors 32: 0.806 / 1.573 ms).
// Loading under the ticket took float32 from 0.860 to 0.821 ms at 16 vectors. Measured and not kept:
// shorter or no back-off between polls (within 0.5 %), streaming cache hints (ld.cs/st.cs, +7 %), and
// a persistent, pipelined scan (d blocks, each issuing its next tile's loads before its current
// tile's look-back): 1.47 ms at best, because a block publishes its prefetched tile's aggregate only
// after its current look-back, and the tiles after it, held by other blocks, wait for that: the
// look-backs chain from block to block.
template <typename T, int Q>
__device__ void scan_lookback(const T* __restrict__ in, T* __restrict__ out, long long n, unsigned* counter,
                              typename Status<T>::Word* status, unsigned epoch, unsigned skew) {
    __shared__ T warp_off[32];
    __shared__ unsigned tile_s;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, warps = blockDim.x >> 5;
    const long long per_warp = 32LL * Q * Vec<T>::V;
    T v[Q][Vec<T>::V];
    if (tid == 0) tile_s = atomicAdd(counter, 1u);
    const long long guess = (blockIdx.x + skew) % gridDim.x;     // skew != 0: tests force the reload
    const long long guess_seg = (guess * warps + warp) * per_warp;
    load_segment<T, Q>(in, v, guess_seg, n, guess_seg + per_warp <= n);
    __syncthreads();
    const long long tile = tile_s;
    const long long seg = (tile * warps + warp) * per_warp;
    const bool full = seg + per_warp <= n;
    if (tile != guess) load_segment<T, Q>(in, v, seg, n, full);
    const T total = scan_segment<T, Q>(v);
    if (lane == 0) warp_off[warp] = total;
    __syncthreads();
    if (warp == 0) {                                            // warps' offsets, then the tile's carry
        const T mine = lane < warps ? warp_off[lane] : T(0);
        T w = mine;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) { T y = __shfl_up_sync(0xffffffffu, w, o); if (lane >= o) w += y; }
        const T carry = lookback_exclusive<T>(status, tile, __shfl_sync(0xffffffffu, w, warps - 1), epoch);
        if (lane < warps) warp_off[lane] = carry + w - mine;
        __syncwarp();     // the look-back diverged: bar.sync is aligned, so the warp must arrive whole
    }
    __syncthreads();
    store_segment<T, Q>(out, v, warp_off[warp], seg, n, full);
}

#define LOOKBACK(T, S, Q)                                                                             \
    extern "C" __global__ void scan_lookback_##S##_q##Q(const T* in, T* out, long long n, unsigned* c, \
        Status<T>::Word* status, unsigned epoch, unsigned skew) {                                      \
        scan_lookback<T, Q>(in, out, n, c, status, epoch, skew); }

#define SCANS(T, S)                                                                                    \
    extern "C" __global__ void scan_shared_##S(const T* in, T* out, int n, int reps, int which) {     \
        scan_shared<T>(in, out, n, reps, which); }                                                     \
    extern "C" __global__ void pairwise_step_##S(T* a, long long h) { pairwise_step<T>(a, h); }       \
    extern "C" __global__ void hillis_steele_step_##S(const T* a, T* b, long long n, long long h) {   \
        hillis_steele_step<T>(a, b, n, h); }                                                           \
    extern "C" __global__ void interval_step_##S(const T* an, T* at, long long half) {                \
        interval_step<T>(an, at, half); }                                                              \
    extern "C" __global__ void spread_step_##S(const T* at, T* an, long long half) {                  \
        spread_step<T>(at, an, half); }                                                                \
    extern "C" __global__ void reduce_partials_##S(const T* in, T* partial, long long n) {            \
        reduce_partials<T>(in, partial, n); }                                                          \
    LOOKBACK(T, S, 2) LOOKBACK(T, S, 4) LOOKBACK(T, S, 8) LOOKBACK(T, S, 16) LOOKBACK(T, S, 32)

SCANS(float, f32)
SCANS(double, f64)

extern "C" __global__ void reduce_partials_f32x4(const float* in, float* partial, long long n) {
    reduce_partials_vec4(in, partial, n);
}

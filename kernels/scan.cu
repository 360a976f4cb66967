// Sum and prefix sums (001 §§4-8): the seeds' algorithms in one block's shared memory and in global
// memory (a barrier is a kernel boundary), and single-pass global versions that run at the speed of
// memory: a grid-stride reduction and a prefix sum with decoupled look-back.

#include "lookback_scan.cuh"

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
// look-backs chain from block to block. Measured on 2026-11-26 and not kept: the tile's total taken as a
// sum and published before its scan, so the tiles after it pass it sooner: float64 1.576 -> 1.544 ms at
// 128 x 32, but float32 0.811 -> 0.869 (ptxas kept 113 registers a thread at 16 vectors, not 96: an
// SM's fifth block lost); a wider look-back, each lane peeking 2 or 4 words a round and waiting only on
// those before the nearest inclusive one: one word a lane within 1.5 % of today's walk, two 0.99 -
// 1.02x it, four 0.99 - 1.07x (2^20 - 2^28, both dtypes). With no look-back at all (carry 0) the
// kernel runs 1.02 - 1.05x the copy from 2^24 up, 1.07 - 1.15x below: the rest is the look-back's wait.
#define LOOKBACK(T, S, Q)                                                                             \
    extern "C" __global__ void scan_lookback_##S##_q##Q(const T* in, T* out, long long n, unsigned* c, \
        Status<T>::Word* status, unsigned epoch, unsigned skew) {                                      \
        scan_tiles<T, T, Q>(in, out, n, gridDim.x, c, status, epoch, skew); }

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

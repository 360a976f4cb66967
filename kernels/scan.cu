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

// Where the time goes (H100, 2^28, cold L2, medians of 20; copy 0.715 ms float32, 1.421 float64): a block a tile
// (lookback_scan.cuh's scan_tiles, as the row scan still runs) took 1.13x the copy at best, 1.02x with its carry
// forced to 0: the rest was the block's wait on its look-back, its registers idle. Measured and not kept, a block
// a tile: shorter or no back-off between polls (within 0.5 %), streaming cache hints (ld.cs/st.cs, +7 %), the
// tile's total published before its scan (float32 0.811 -> 0.869 ms: 113 registers a thread, an SM's fifth block
// lost), a look-back 2 or 4 words a lane wide (0.99 - 1.07x the walk). So d blocks stay resident and hold two
// tiles (scan_resident): 1.047x the copy float32, 1.045x float64 (bench/results/h100/scan_pipeline/).
#define LOOKBACK(T, S, Q)                                                                             \
    extern "C" __global__ void scan_lookback_##S##_q##Q(const T* in, T* out, long long n, long long tiles, \
        unsigned* c, Status<T>::Word* status, unsigned epoch) {                                        \
        scan_resident<T, Q>(in, out, n, tiles, c, status, epoch); }

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
    LOOKBACK(T, S, 2) LOOKBACK(T, S, 4) LOOKBACK(T, S, 8) LOOKBACK(T, S, 16)

SCANS(float, f32)
SCANS(double, f64)

extern "C" __global__ void reduce_partials_f32x4(const float* in, float* partial, long long n) {
    reduce_partials_vec4(in, partial, n);
}

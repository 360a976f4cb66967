// Sum and prefix sums (001 §§4-8): the seeds' algorithms in one block's shared memory and in global
// memory (a barrier is a kernel boundary), and single-pass global versions that run at the speed of
// memory: a grid-stride reduction and a prefix sum with decoupled look-back.

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
// publishes its aggregate (flag 1), looks back over its predecessors a warp at a time, summing
// aggregates until it meets an inclusive prefix (flag 2), then publishes its own inclusive prefix.
template <typename T, int ITEMS>
__device__ void scan_lookback(const T* __restrict__ in, T* __restrict__ out, long long n, unsigned* counter,
                              T* agg, T* incl, volatile int* flags) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* buf = reinterpret_cast<T*>(smem);                        // ITEMS * blockDim elements, padded
    __shared__ T warp_tot[32];
    __shared__ T carry;
    __shared__ unsigned tile_s;
    const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5, P = blockDim.x;
    if (tid == 0) tile_s = atomicAdd(counter, 1u);
    __syncthreads();
    const long long tile = tile_s;
    const long long base = tile * (long long)P * ITEMS;
    auto pad = [](int i) { return i + (i >> 5); };
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {                           // striped, coalesced load
        long long g = base + k * P + tid;
        buf[pad(k * P + tid)] = g < n ? in[g] : T(0);
    }
    __syncthreads();
    T v[ITEMS];
    T run = 0;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) { run += buf[pad(tid * ITEMS + k)]; v[k] = run; }   // blocked: own prefix
    T x = run;                                                  // warp inclusive scan of thread totals
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) { T y = __shfl_up_sync(0xffffffffu, x, o); if (lane >= o) x += y; }
    if (lane == 31) warp_tot[warp] = x;
    __syncthreads();
    if (warp == 0) {
        T w = lane < (P >> 5) ? warp_tot[lane] : T(0);
        for (int o = 1; o < 32; o <<= 1) { T y = __shfl_up_sync(0xffffffffu, w, o); if (lane >= o) w += y; }
        if (lane < (P >> 5)) warp_tot[lane] = w;                // inclusive over warps
    }
    __syncthreads();
    const T block_total = warp_tot[(P >> 5) - 1];
    __shared__ int nearest;
    if (tid == 0) {
        if (tile == 0) incl[0] = block_total; else agg[tile] = block_total;
        __threadfence();
        flags[tile] = tile == 0 ? 2 : 1;
    }
    // Look back with the whole block: thread k watches predecessor j - k, so one round trip to L2
    // covers blockDim predecessors; stop at the nearest one that has published its inclusive prefix.
    T excl = 0;
    for (long long j = tile - 1; j >= 0; j -= P) {
        long long idx = j - tid;
        int f;
        do { f = idx >= 0 ? flags[idx] : 2; } while (__syncthreads_or(f == 0));
        __threadfence();
        T val = idx >= 0 ? (f == 2 ? ((volatile T*)incl)[idx] : ((volatile T*)agg)[idx]) : T(0);
        if (tid == 0) nearest = P;
        __syncthreads();
        if (f == 2) atomicMin(&nearest, tid);
        __syncthreads();
        int stop = nearest;
        T part = block_sum(tid <= stop ? val : T(0));
        if (tid == 0) carry = part;
        __syncthreads();
        excl += carry;
        __syncthreads();
        if (stop < P) break;
    }
    if (tid == 0) {
        if (tile > 0) {
            incl[tile] = excl + block_total;
            __threadfence();
            flags[tile] = 2;
        }
        carry = excl;
    }
    __syncthreads();
    T offset = carry + (warp > 0 ? warp_tot[warp - 1] : T(0)) + (x - run);
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) buf[pad(tid * ITEMS + k)] = v[k] + offset;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {                           // striped, coalesced store
        long long g = base + k * P + tid;
        if (g < n) out[g] = buf[pad(k * P + tid)];
    }
}

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
    extern "C" __global__ void scan_lookback_##S##_i4(const T* in, T* out, long long n, unsigned* c,  \
        T* agg, T* incl, int* flags) { scan_lookback<T, 4>(in, out, n, c, agg, incl, flags); }         \
    extern "C" __global__ void scan_lookback_##S##_i8(const T* in, T* out, long long n, unsigned* c,  \
        T* agg, T* incl, int* flags) { scan_lookback<T, 8>(in, out, n, c, agg, incl, flags); }         \
    extern "C" __global__ void scan_lookback_##S##_i16(const T* in, T* out, long long n, unsigned* c, \
        T* agg, T* incl, int* flags) { scan_lookback<T, 16>(in, out, n, c, agg, incl, flags); }

SCANS(float, f32)
SCANS(double, f64)

extern "C" __global__ void reduce_partials_f32x4(const float* in, float* partial, long long n) {
    reduce_partials_vec4(in, partial, n);
}

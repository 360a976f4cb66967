// The bucketed permutation (beyond the seeds): b[p[i]] = a[i] in two passes through shared memory.
//
// Pass 1 cuts a into tiles of TILE elements; a block loads its tile, puts element i at the slot
// `slot[i]` of shared memory (the tile sorted by destination window, in index order within a window)
// and writes slot j to mid[to[j]]: a tile's elements of one window go out as one run (whose ragged
// ends cost as scattered sector writes: measured, bench/bucketed_permutation.py). mid holds window k's elements in [k W, (k + 1) W), tile by tile. Pass 2 loads window k
// of mid, puts each element at `slot[j]` (its destination within the window) and writes the window
// of b in order. Every global access but pass 1's writes is one coalesced 16-byte vector a lane;
// a block's last, partial tile or window takes the scalar path. Both passes are one template (RUNS:
// pass 1). The slots and `to` come from costmodel.schedules.bucket_schedule.

template <typename T, int N> struct alignas(sizeof(T) * N) Chunk { T e[N]; };

template <typename T, bool RUNS>
__device__ void bucket_pass(const T* __restrict__ src, const unsigned short* __restrict__ slot,
                            const int* __restrict__ to, T* __restrict__ dst, long long n, int tile) {
    constexpr int V = 16 / sizeof(T);
    extern __shared__ __align__(16) unsigned char smem[];
    T* s = reinterpret_cast<T*>(smem);
    const int step = blockDim.x * V;
    for (long long t = blockIdx.x; t * tile < n; t += gridDim.x) {
        const long long base = t * tile;
        const int count = (int)min((long long)tile, n - base);
        if (count == tile) {
#pragma unroll 4
            for (int j = threadIdx.x * V; j < tile; j += step) {
                const Chunk<T, V> x = *reinterpret_cast<const Chunk<T, V>*>(src + base + j);
                const Chunk<unsigned short, V> k = *reinterpret_cast<const Chunk<unsigned short, V>*>(slot + base + j);
#pragma unroll
                for (int i = 0; i < V; ++i) s[k.e[i]] = x.e[i];
            }
        } else {
            for (int j = threadIdx.x; j < count; j += blockDim.x) s[slot[base + j]] = src[base + j];
        }
        __syncthreads();
        if (count == tile) {
#pragma unroll 4
            for (int j = threadIdx.x * V; j < tile; j += step) {
                const Chunk<T, V> x = *reinterpret_cast<const Chunk<T, V>*>(s + j);
                if constexpr (RUNS) {
                    const Chunk<int, V> g = *reinterpret_cast<const Chunk<int, V>*>(to + base + j);
#pragma unroll
                    for (int i = 0; i < V; ++i) dst[g.e[i]] = x.e[i];
                } else {
                    *reinterpret_cast<Chunk<T, V>*>(dst + base + j) = x;
                }
            }
        } else {
            for (int j = threadIdx.x; j < count; j += blockDim.x) dst[RUNS ? (long long)to[base + j] : base + j] = s[j];
        }
        __syncthreads();
    }
}

#define BUCKET(T, S)                                                                                   \
    extern "C" __global__ void bucket_runs_##S(const T* src, const unsigned short* slot, const int* to, T* dst, \
                                               long long n, int tile) {                                 \
        bucket_pass<T, true>(src, slot, to, dst, n, tile); }                                           \
    extern "C" __global__ void bucket_window_##S(const T* src, const unsigned short* slot, T* dst, long long n, \
                                                 int window) {                                          \
        bucket_pass<T, false>(src, slot, nullptr, dst, n, window); }

BUCKET(float, f32)
BUCKET(double, f64)

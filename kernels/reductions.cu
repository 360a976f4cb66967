// Sums of the arrays users have without a scan (memtune.sum along any axis, any dtype): the scan's
// totals (shaped.cu's segmented_scan ... total, strips ... coltotal) pay for a look-back that a sum
// does not need.
//
// * row_sums: rows of `len` elements end to end, a block of 256 threads a chunk of a row (E elements a
//   thread, consecutive lanes on consecutive elements, all E loads in flight), one partial a chunk; the
//   partials are summed by the same kernel over OUT until one a row is left.
// * row_groups: rows shorter than a chunk, a group of 1, 8 or 32 lanes a row.
// * col_sums: down the columns of images (an axis with elements after it), a thread a column and a band of
//   128 rows, eight loads in flight; the bands' partial rows are summed the same way until one is left.
//
// The order of every addition is fixed, so a sum comes out the same on every run. Inputs and outputs
// are sum_pairs.cuh's (shaped.cu's too): every input type with every type it converts to without loss.
#include "select.cuh"
#include "sum_pairs.cuh"
#include "warp_sum.cuh"

template <typename T>
__device__ __forceinline__ T block_sum_256(T x) {                   // valid in thread 0
    __shared__ T part[8];
    x = warp_sum(x);
    if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = x;
    __syncthreads();
    if (threadIdx.x < 32) {
        x = threadIdx.x < 8 ? part[threadIdx.x] : T(0);
        x = warp_sum(x);
    }
    return x;
}

// row_sums: rows of `len` elements end to end; block k sums chunk k % chunks of row k / chunks into b[k]
template <typename IN, typename OUT, int E>
__device__ void row_sums(const IN* __restrict__ a, OUT* __restrict__ b, long long len, long long chunks) {
    const long long k = blockIdx.x, row = k / chunks;
    const long long first = (k - row * chunks) * (256LL * E) + threadIdx.x;
    const long long stop = len - first;                              // elements of the row past `first`
    const IN* p = a + row * len + first;
    IN v[E];
#pragma unroll
    for (int e = 0; e < E; ++e) v[e] = 256LL * e < stop ? p[256LL * e] : IN(0);
    OUT acc = OUT(0);
#pragma unroll
    for (int e = 0; e < E; ++e) acc += OUT(v[e]);
    acc = block_sum_256(acc);
    if (threadIdx.x == 0) b[k] = acc;
}

// row_groups: rows shorter than a chunk, G lanes a row (G divides 32), each lane every G-th element, four
// loads in flight a lane; the group's lanes meet by shuffles and its first lane writes b[row]
template <typename IN, typename OUT, int G>
__device__ void row_groups(const IN* __restrict__ a, OUT* __restrict__ b, long long rows, long long len) {
    const long long row = (blockIdx.x * 256LL + threadIdx.x) / G;
    const int lane = threadIdx.x % G;
    OUT acc[4] = {};
    if (row < rows) {
        const IN* p = a + row * len;
        long long i = lane;
        for (; i + 3 * G < len; i += 4 * G) {
#pragma unroll
            for (int u = 0; u < 4; ++u) acc[u] += OUT(p[i + u * G]);
        }
        for (; i < len; i += G) acc[0] += OUT(p[i]);
    }
    OUT x = (acc[0] + acc[1]) + (acc[2] + acc[3]);
#pragma unroll
    for (int o = G / 2; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    if (row < rows && lane == 0) b[row] = x;
}

// col_sums: `images` images of `len` rows x `inner` columns; block (image, band of R rows, 256 columns)
// writes its columns' sums of the band to b, laid out as images of `bands` rows x `inner` columns
template <typename IN, typename OUT, int R>
__device__ void col_sums(const IN* __restrict__ a, OUT* __restrict__ b, long long len, long long inner,
                         long long bands, long long col_blocks) {
    const long long k = blockIdx.x, cb = k % col_blocks, ib = k / col_blocks;   // ib = image * bands + band
    const long long image = ib / bands, band = ib - image * bands, col = cb * 256 + threadIdx.x;
    if (col >= inner) return;
    const long long row0 = band * R, rows = min((long long)R, len - row0);
    const IN* p = a + (image * len + row0) * inner + col;
    OUT acc[8] = {};
    int r = 0;
    for (; r + 8 <= rows; r += 8) {
#pragma unroll
        for (int u = 0; u < 8; ++u) acc[u] += OUT(p[(long long)(r + u) * inner]);
    }
    for (; r < rows; ++r) acc[0] += OUT(p[(long long)r * inner]);
    OUT total = OUT(0);
#pragma unroll
    for (int u = 0; u < 8; ++u) total += acc[u];
    b[ib * inner + col] = total;
}

template <bool WANT, typename IN, typename OUT, int E>
__device__ __forceinline__ void row_sums_if(const IN* a, OUT* b, long long len, long long chunks) {
    if constexpr (WANT) row_sums<IN, OUT, E>(a, b, len, chunks);
}

template <bool WANT, typename IN, typename OUT, int G>
__device__ __forceinline__ void row_groups_if(const IN* a, OUT* b, long long rows, long long len) {
    if constexpr (WANT) row_groups<IN, OUT, G>(a, b, rows, len);
}

template <bool WANT, typename IN, typename OUT, int R>
__device__ __forceinline__ void col_sums_if(const IN* a, OUT* b, long long len, long long inner, long long bands,
                                            long long col_blocks) {
    if constexpr (WANT) col_sums<IN, OUT, R>(a, b, len, inner, bands, col_blocks);
}

// row_sums_<in>_<out>: 256 threads, 64 bytes of input a thread and at least 16 elements (a chunk of 4096
// or more); col_sums_<in>_<out>: 256 columns a block, 128 rows a band; row_groups_<in>_<out>_g<G>:
// 256 threads, G lanes a row
#define ROW_GROUPS(IN, SI, OUT, SO, G)                                                                \
    extern "C" __global__ void __launch_bounds__(256)                                                 \
    row_groups_##SI##_##SO##_g##G(const IN* a, OUT* b, long long rows, long long len) {                \
        row_groups_if<MEMTUNE_WANTS(row_groups_##SI##_##SO##_g##G), IN, OUT, G>(a, b, rows, len); }

#define PAIR(IN, SI, OUT, SO)                                                                         \
    extern "C" __global__ void __launch_bounds__(256)                                                 \
    row_sums_##SI##_##SO(const IN* a, OUT* b, long long len, long long chunks) {                       \
        row_sums_if<MEMTUNE_WANTS(row_sums_##SI##_##SO), IN, OUT, (64 / sizeof(IN) > 16 ? 64 / sizeof(IN) : 16)>( \
            a, b, len, chunks); }                                                                      \
    extern "C" __global__ void __launch_bounds__(256)                                                 \
    col_sums_##SI##_##SO(const IN* a, OUT* b, long long len, long long inner, long long bands, long long cbs) { \
        col_sums_if<MEMTUNE_WANTS(col_sums_##SI##_##SO), IN, OUT, 128>(a, b, len, inner, bands, cbs); }   \
    ROW_GROUPS(IN, SI, OUT, SO, 1) ROW_GROUPS(IN, SI, OUT, SO, 8) ROW_GROUPS(IN, SI, OUT, SO, 32)

MEMTUNE_SUM_PAIRS(PAIR)
PAIR(unsigned long long, u64, unsigned long long, u64)      // the partials of unsigned sums

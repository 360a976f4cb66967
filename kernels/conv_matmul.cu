// CONV-HMM and MUL-HMM (002 §§III, V): image convolution and tiled matrix multiplication.
//
// conv_hmm: the output is cut into TS x TS tiles (TS = w = 32 in the paper; 64 also offered); a
// block (a DMM) copies its (TS + 2v)^2 input tile and the (2v+1)^2 filter into shared memory,
// zero outside the image, and computes CONV-DMM: every output of the tile is
// sum_{s,t} a(i+s, j+t) f(v+s, v+t) (a correlation, as 002 defines it). d blocks walk the tiles
// with a grid-stride loop; p threads per block; V is a template argument so the taps unroll.
//
// matmul_hmm: c = a x b for n x n row-major matrices. A block computes an M x M tile of c
// (the paper's m x m submatrix) from M x 8 slices of a and 8 x M slices of b staged in shared
// memory; each thread keeps an R x R register tile (R = 1 is the paper's one output per
// thread). p = (M / R)^2 threads. Any n: loads outside the matrices read zero.

template <typename T, int TS, int V>
__device__ void conv_hmm(const T* __restrict__ a, const T* __restrict__ filt, T* __restrict__ c, int n) {
    constexpr int K = 2 * V + 1;
    constexpr int IN = TS + 2 * V;
    extern __shared__ __align__(16) unsigned char smem[];   // (TS + 2V)^2 + (2V + 1)^2 elements
    T* in = reinterpret_cast<T*>(smem);
    T* f = in + IN * IN;
    int tid = threadIdx.x, p = blockDim.x;
    for (int i = tid; i < K * K; i += p) f[i] = filt[i];
    int tiles = (n + TS - 1) / TS;
    long long total = (long long)tiles * tiles;
    for (long long tt = blockIdx.x; tt < total; tt += gridDim.x) {
        int r0 = (int)(tt / tiles) * TS, c0 = (int)(tt % tiles) * TS;
        for (int i = tid; i < IN * IN; i += p) {
            int y = r0 - V + i / IN, x = c0 - V + i % IN;
            in[i] = (y >= 0 && y < n && x >= 0 && x < n) ? a[(long long)y * n + x] : T(0);
        }
        __syncthreads();
        // volatile: the filter taps are re-read (broadcast) for every output instead of being
        // hoisted into (2v+1)^2 registers, which would spill for large v
        const volatile T* taps = f;
        for (int o = tid; o < TS * TS; o += p) {
            int y = o / TS, x = o % TS;
            T acc = 0;
#pragma unroll
            for (int s = 0; s < K; ++s)
#pragma unroll
                for (int t = 0; t < K; ++t) acc += in[(y + s) * IN + x + t] * taps[s * K + t];
            if (r0 + y < n && c0 + x < n) c[(long long)(r0 + y) * n + c0 + x] = acc;
        }
        __syncthreads();
    }
}

template <typename T, int M, int R>
__device__ void matmul_hmm(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int n) {
    constexpr int BK = 8;
    constexpr int SIDE = M / R;                  // threads per side of the block
    constexpr int THREADS = SIDE * SIDE;
    __shared__ T as[BK][M];                      // a slice, transposed: as[k][row]
    __shared__ T bs[BK][M];                      // b slice: bs[k][col]
    int tid = threadIdx.x, tx = tid % SIDE, ty = tid / SIDE;
    int tiles = (n + M - 1) / M;
    long long total = (long long)tiles * tiles;
    for (long long tt = blockIdx.x; tt < total; tt += gridDim.x) {
        int r0 = (int)(tt / tiles) * M, c0 = (int)(tt % tiles) * M;
        T acc[R][R];
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
            for (int j = 0; j < R; ++j) acc[i][j] = 0;
        for (int k0 = 0; k0 < n; k0 += BK) {
            for (int e = tid; e < M * BK; e += THREADS) {      // a rows r0.., columns k0..k0+7
                int row = e / BK, k = e % BK;
                int gr = r0 + row, gk = k0 + k;
                as[k][row] = (gr < n && gk < n) ? a[(long long)gr * n + gk] : T(0);
            }
            for (int e = tid; e < M * BK; e += THREADS) {      // b rows k0..k0+7, columns c0..
                int k = e / M, col = e % M;
                int gk = k0 + k, gc = c0 + col;
                bs[k][col] = (gk < n && gc < n) ? b[(long long)gk * n + gc] : T(0);
            }
            __syncthreads();
#pragma unroll
            for (int k = 0; k < BK; ++k) {
                T fa[R], fb[R];
#pragma unroll
                for (int i = 0; i < R; ++i) fa[i] = as[k][ty * R + i];
#pragma unroll
                for (int j = 0; j < R; ++j) fb[j] = bs[k][tx * R + j];
#pragma unroll
                for (int i = 0; i < R; ++i)
#pragma unroll
                    for (int j = 0; j < R; ++j) acc[i][j] += fa[i] * fb[j];
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < R; ++i)
#pragma unroll
            for (int j = 0; j < R; ++j) {
                int gr = r0 + ty * R + i, gc = c0 + tx * R + j;
                if (gr < n && gc < n) c[(long long)gr * n + gc] = acc[i][j];
            }
    }
}

#define CONV(T, S, TS, V) \
    extern "C" __global__ void __launch_bounds__(1024) conv_##S##_t##TS##_v##V(const T* a, const T* f, T* c, int n) { \
        conv_hmm<T, TS, V>(a, f, c, n); }
#define CONV_V(T, S, TS) CONV(T, S, TS, 1) CONV(T, S, TS, 2) CONV(T, S, TS, 3) CONV(T, S, TS, 4) \
    CONV(T, S, TS, 5) CONV(T, S, TS, 6) CONV(T, S, TS, 7)
#define MATMUL(T, S, M, R)                                                                            \
    extern "C" __global__ void __launch_bounds__((M / R) * (M / R))                                   \
    matmul_##S##_m##M##_r##R(const T* a, const T* b, T* c, int n) { matmul_hmm<T, M, R>(a, b, c, n); }
#define ALL(T, S) CONV_V(T, S, 32) CONV_V(T, S, 64) \
    MATMUL(T, S, 32, 1) MATMUL(T, S, 32, 2) MATMUL(T, S, 32, 4) MATMUL(T, S, 64, 2) MATMUL(T, S, 64, 4) \
    MATMUL(T, S, 64, 8) MATMUL(T, S, 128, 4) MATMUL(T, S, 128, 8)

ALL(float, f32)
ALL(double, f64)

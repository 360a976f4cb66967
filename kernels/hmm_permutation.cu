// Offline permutation in global memory on the HMM (000 ch. 5): the conventional D- and
// S-designated kernels, the transpose through a w x w tile in the diagonal arrangement
// (§5.3), and the row-wise permutation of §5.4, from which the column-wise and the scheduled
// permutations are composed (row-wise, transpose, row-wise, transpose, row-wise).
//
// Tunables: threads per block, elements per thread (EPT, a template argument so the
// per-thread loop unrolls into independent loads), grid size d (every kernel walks its work
// with a grid-stride loop, so any d >= 1 is correct), transpose block rows.


// ---- D-designated b[p[i]] = a[i] and S-designated b[i] = a[q[i]] ----------------------------

template <typename T, int EPT>
__device__ void designated(const T* __restrict__ a, const int* __restrict__ idx, T* __restrict__ b,
                           long long n, bool scatter) {
    long long chunk = (long long)blockDim.x * EPT;
    for (long long base = (long long)blockIdx.x * chunk + threadIdx.x; base < n; base += (long long)gridDim.x * chunk) {
        T v[EPT];
        int k[EPT];
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            long long i = base + (long long)e * blockDim.x;
            if (i < n) {
                k[e] = idx[i];
                v[e] = scatter ? a[i] : a[k[e]];
            }
        }
#pragma unroll
        for (int e = 0; e < EPT; ++e) {
            long long i = base + (long long)e * blockDim.x;
            if (i < n) {
                if (scatter) b[k[e]] = v[e]; else b[i] = v[e];
            }
        }
    }
}

// ---- transpose through a TS x TS tile in the diagonal arrangement (000 Lemma 6.1.1) ---------
// Logical tile element (i, j) is stored at i*TS + ((i + j) mod TS): for TS a multiple of 32, a
// warp reading a row or a column of the tile touches 32 distinct banks. blockDim = (32, rows);
// each thread moves TS/32 columns, so a warp reads and writes TS contiguous elements of a row.

template <typename T, int TS>
__device__ void transpose_diagonal(const T* __restrict__ a, T* __restrict__ b, int nbar) {
    __shared__ T tile[TS * TS];
    int tiles = nbar / TS;
    long long total = (long long)tiles * tiles;
    int x = threadIdx.x;
    for (long long tt = blockIdx.x; tt < total; tt += gridDim.x) {
        int ti = (int)(tt / tiles), tj = (int)(tt % tiles);
        const T* src = a + (long long)(ti * TS) * nbar + tj * TS;
        T* dst = b + (long long)(tj * TS) * nbar + ti * TS;
        for (int i = threadIdx.y; i < TS; i += blockDim.y) {
#pragma unroll
            for (int c = 0; c < TS; c += 32) tile[i * TS + ((i + x + c) % TS)] = src[(long long)i * nbar + x + c];
        }
        __syncthreads();
        for (int i = threadIdx.y; i < TS; i += blockDim.y) {
#pragma unroll
            for (int c = 0; c < TS; c += 32) {
                int j = x + c;      // output row i, column j holds logical tile element (j, i)
                dst[(long long)i * nbar + j] = tile[j * TS + ((j + i) % TS)];
            }
        }
        __syncthreads();
    }
}

// ---- row-wise permutation (000 §5.4): out[i][perm_i(j)] = in[i][j] ---------------------------
// conflict_free: alpha <- row; beta[d[k]] = alpha[s[k]] (S_i, D_i per row, every warp
// conflict-free); row <- beta. designated: beta[p[j]] = row[j] (one index array, shared-memory
// bank conflicts instead of a second index array); designated-rap: the same with beta stored
// under a random address shift per 32-element block (004's RAS, shifts from a multiplicative
// hash of the block number), so its conflicts no longer depend on how regular the permutation is.
// One block per row, grid-stride over rows.

__device__ __forceinline__ int rap_slot(int x) {
    unsigned shift = ((unsigned)(x >> 5) * 2654435761u) >> 27;
    return (x & ~31) | ((x + (int)shift) & 31);
}

template <typename T, typename IDX, bool CONFLICT_FREE, bool SHIFTED = false>
__device__ void rowwise(const T* __restrict__ a, T* __restrict__ b, const IDX* __restrict__ s,
                        const IDX* __restrict__ d, int nbar) {
    extern __shared__ __align__(16) unsigned char smem[];
    T* beta = reinterpret_cast<T*>(smem);
    T* alpha = beta + nbar;
    for (int row = blockIdx.x; row < nbar; row += gridDim.x) {
        long long off = (long long)row * nbar;
        if (CONFLICT_FREE) {
#pragma unroll 4
            for (int j = threadIdx.x; j < nbar; j += blockDim.x) alpha[j] = a[off + j];
            __syncthreads();
#pragma unroll 4
            for (int k = threadIdx.x; k < nbar; k += blockDim.x) beta[d[off + k]] = alpha[s[off + k]];
        } else {
#pragma unroll 4
            for (int j = threadIdx.x; j < nbar; j += blockDim.x) {
                int slot = d[off + j];
                beta[SHIFTED ? rap_slot(slot) : slot] = a[off + j];
            }
        }
        __syncthreads();
#pragma unroll 4
        for (int j = threadIdx.x; j < nbar; j += blockDim.x) b[off + j] = beta[SHIFTED ? rap_slot(j) : j];
        __syncthreads();
    }
}

// ---- exported names ---------------------------------------------------------------------------

#define DESIGNATED(T, S, EPT)                                                                        \
    extern "C" __global__ void scatter_##S##_e##EPT(const T* a, const int* p, T* b, long long n) {   \
        designated<T, EPT>(a, p, b, n, true);                                                        \
    }                                                                                                \
    extern "C" __global__ void gather_##S##_e##EPT(const T* a, const int* q, T* b, long long n) {    \
        designated<T, EPT>(a, q, b, n, false);                                                       \
    }
#define DESIGNATED_ALL(T, S) DESIGNATED(T, S, 1) DESIGNATED(T, S, 2) DESIGNATED(T, S, 4) DESIGNATED(T, S, 8)

#define ROWWISE(T, S, IDX, I)                                                                        \
    extern "C" __global__ void rowwise_cf_##S##_##I(const T* a, T* b, const IDX* s, const IDX* d, int nbar) { \
        rowwise<T, IDX, true>(a, b, s, d, nbar);                                                     \
    }                                                                                                \
    extern "C" __global__ void rowwise_dd_##S##_##I(const T* a, T* b, const IDX* s, const IDX* d, int nbar) { \
        rowwise<T, IDX, false>(a, b, s, d, nbar);                                                    \
    }                                                                                                \
    extern "C" __global__ void rowwise_dr_##S##_##I(const T* a, T* b, const IDX* s, const IDX* d, int nbar) { \
        rowwise<T, IDX, false, true>(a, b, s, d, nbar);                                              \
    }

#define ALL(T, S)                                                                                    \
    DESIGNATED_ALL(T, S)                                                                             \
    extern "C" __global__ void transpose_##S##_t32(const T* a, T* b, int nbar) { transpose_diagonal<T, 32>(a, b, nbar); } \
    extern "C" __global__ void transpose_##S##_t64(const T* a, T* b, int nbar) { transpose_diagonal<T, 64>(a, b, nbar); } \
    ROWWISE(T, S, unsigned char, u8) ROWWISE(T, S, unsigned short, u16) ROWWISE(T, S, unsigned int, u32)

ALL(float, f32)
ALL(double, f64)

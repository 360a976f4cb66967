// C = A B for n x n row-major floats. A block computes a BM x BN tile of C (BM = block_size_y * tile_size_y,
// BN = block_size_x * tile_size_x), stepping through k in slabs of tile_k staged in shared memory (A's slab
// transposed); each thread accumulates tile_size_y x tile_size_x outputs, block_size_y (block_size_x) apart.
// n must be a multiple of BM, BN and tile_k.
#define BM (block_size_y * tile_size_y)
#define BN (block_size_x * tile_size_x)

extern "C" __global__ void sgemm(float *C, const float *A, const float *B, int n) {
    __shared__ float As[tile_k][BM];
    __shared__ float Bs[tile_k][BN];
    const int tid = threadIdx.y * block_size_x + threadIdx.x;
    const int threads = block_size_x * block_size_y;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    float acc[tile_size_y][tile_size_x];
#pragma unroll
    for (int i = 0; i < tile_size_y; i++)
#pragma unroll
        for (int j = 0; j < tile_size_x; j++) acc[i][j] = 0.0f;
    for (int k0 = 0; k0 < n; k0 += tile_k) {
        for (int e = tid; e < BM * tile_k; e += threads) {
            const int r = e / tile_k, c = e % tile_k;
            As[c][r] = A[(row0 + r) * n + k0 + c];
        }
        for (int e = tid; e < tile_k * BN; e += threads) {
            const int r = e / BN, c = e % BN;
            Bs[r][c] = B[(k0 + r) * n + col0 + c];
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < tile_k; k++) {
            float a[tile_size_y], b[tile_size_x];
#pragma unroll
            for (int i = 0; i < tile_size_y; i++) a[i] = As[k][threadIdx.y + i * block_size_y];
#pragma unroll
            for (int j = 0; j < tile_size_x; j++) b[j] = Bs[k][threadIdx.x + j * block_size_x];
#pragma unroll
            for (int i = 0; i < tile_size_y; i++)
#pragma unroll
                for (int j = 0; j < tile_size_x; j++) acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < tile_size_y; i++)
#pragma unroll
        for (int j = 0; j < tile_size_x; j++)
            C[(row0 + threadIdx.y + i * block_size_y) * n + col0 + threadIdx.x + j * block_size_x] = acc[i][j];
}

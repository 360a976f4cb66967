// A 2-D five-point stencil (one Jacobi step of the heat equation) on a height x width grid of floats.
// `in` carries a one-element halo: it is (height + 2) x (width + 2), `out` is height x width.
// Each thread computes tile_size_x x tile_size_y points, block_size_x (block_size_y) apart so that a warp's
// accesses stay contiguous; use_shmem stages the block's tile and its halo in shared memory first.
extern "C" __global__ void stencil2d(float *out, const float *in, int width, int height) {
    const int pitch = width + 2;
    const int bx = blockIdx.x * block_size_x * tile_size_x;
    const int by = blockIdx.y * block_size_y * tile_size_y;
#if use_shmem
    __shared__ float tile[block_size_y * tile_size_y + 2][block_size_x * tile_size_x + 2];
    for (int j = threadIdx.y; j < block_size_y * tile_size_y + 2; j += block_size_y)
        for (int i = threadIdx.x; i < block_size_x * tile_size_x + 2; i += block_size_x) {
            const int gx = bx + i, gy = by + j;
            tile[j][i] = (gx < width + 2 && gy < height + 2) ? in[gy * pitch + gx] : 0.0f;
        }
    __syncthreads();
#endif
#pragma unroll
    for (int ty = 0; ty < tile_size_y; ty++) {
#pragma unroll
        for (int tx = 0; tx < tile_size_x; tx++) {
            const int lx = threadIdx.x + tx * block_size_x, ly = threadIdx.y + ty * block_size_y;
            const int x = bx + lx, y = by + ly;
            if (x < width && y < height) {
#if use_shmem
                const float c = tile[ly + 1][lx + 1], n = tile[ly][lx + 1], s = tile[ly + 2][lx + 1];
                const float w = tile[ly + 1][lx], e = tile[ly + 1][lx + 2];
#else
                const float *p = in + (y + 1) * pitch + (x + 1);
                const float c = p[0], n = p[-pitch], s = p[pitch], w = p[-1], e = p[1];
#endif
                out[y * width + x] = 0.5f * c + 0.125f * (n + s + w + e);
            }
        }
    }
}

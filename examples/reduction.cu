// The sum of n floats into *result: a grid of num_blocks blocks strides over the input (vector loads of
// `vector` floats), each block reduces its threads' partial sums (warp shuffles or a shared-memory tree)
// and adds its sum atomically. n must be a multiple of 4.
extern "C" __global__ void reduce_sum(float *result, const float *in, int n) {
    float acc = 0.0f;
    const int stride = num_blocks * block_size_x;
    const int first = blockIdx.x * block_size_x + threadIdx.x;
#if vector == 4
    const float4 *v = reinterpret_cast<const float4 *>(in);
#pragma unroll loop_unroll_factor_main
    for (int k = first; k < n / 4; k += stride) {
        const float4 q = v[k];
        acc += (q.x + q.y) + (q.z + q.w);
    }
#elif vector == 2
    const float2 *v = reinterpret_cast<const float2 *>(in);
#pragma unroll loop_unroll_factor_main
    for (int k = first; k < n / 2; k += stride) {
        const float2 q = v[k];
        acc += q.x + q.y;
    }
#else
#pragma unroll loop_unroll_factor_main
    for (int k = first; k < n; k += stride) acc += in[k];
#endif
#if use_shuffle
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    __shared__ float warp_sums[block_size_x / 32];
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        acc = threadIdx.x < block_size_x / 32 ? warp_sums[threadIdx.x] : 0.0f;
        for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
        if (threadIdx.x == 0) atomicAdd(result, acc);
    }
#else
    __shared__ float sums[block_size_x];
    sums[threadIdx.x] = acc;
    __syncthreads();
    for (int s = block_size_x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) sums[threadIdx.x] += sums[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(result, sums[0]);
#endif
}

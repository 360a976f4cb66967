// A warp's sum in every lane (butterfly shuffles), for the kernels that sum in registers.
#pragma once

template <typename T>
__device__ __forceinline__ T warp_sum(T x) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    return x;
}

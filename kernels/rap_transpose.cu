// Transposes of a w x w = 32 x 32 matrix in shared memory under RAW, RAS and RAP (004 §§III, VI).
//
// Logical element (x, y) of a matrix lives at physical address x*32 + ((y + r_x) & 31); RAW has
// every r_x = 0 (SHIFTED = false: no shift arithmetic at all), RAS independent random r_x, RAP a
// random permutation r. The 32 shifts come packed six to a 32-bit word (Fig. 7): r_x is
// (r[x / 6] >> (5 * (x % 6))) & 31; the word is picked with compile-time indices so the six
// words stay in registers. Thread t = 32 i + j:
//   CRSW reads a(i, j) and writes b(j, i); SRCW reads a(j, i) and writes b(i, j);
//   DRDW reads a((i+j)&31, j) and writes b(j, (i+j)&31).
// The operation is repeated `reps` times, alternating a -> b and b -> a.

__device__ __forceinline__ int unpack_shift(const unsigned (&r)[6], int x) {
    int word = x / 6;
    unsigned v = r[0];
#pragma unroll
    for (int k = 1; k < 6; ++k) v = (word == k) ? r[k] : v;
    return (v >> (5 * (x % 6))) & 31;
}

template <bool SHIFTED>
__device__ __forceinline__ int address(const unsigned (&r)[6], int x, int y) {
    if (!SHIFTED) return x * 32 + y;
    return x * 32 + ((y + unpack_shift(r, x)) & 31);
}

template <typename T, int ALG, bool SHIFTED>
__device__ void transpose_loop(T* a, T* b, const unsigned (&r)[6], int reps) {
    int t = threadIdx.x, i = t >> 5, j = t & 31;
    int rx, ry, wx, wy;
    if (ALG == 0) { rx = i; ry = j; wx = j; wy = i; }                       // CRSW
    else if (ALG == 1) { rx = j; ry = i; wx = i; wy = j; }                  // SRCW
    else { rx = (i + j) & 31; ry = j; wx = j; wy = (i + j) & 31; }          // DRDW
    int src = address<SHIFTED>(r, rx, ry);
    int dst = address<SHIFTED>(r, wx, wy);
    for (int k = 0; k < reps; ++k) {
        T* s = (k & 1) ? b : a;
        T* d = (k & 1) ? a : b;
        d[dst] = s[src];
        __syncthreads();
    }
}

template <typename T>
__device__ void rap_transpose(const T* in, T* out, unsigned r0, unsigned r1, unsigned r2, unsigned r3,
                              unsigned r4, unsigned r5, int reps, int alg, int shifted) {
    __shared__ T a[1024];
    __shared__ T b[1024];
    const unsigned r[6] = {r0, r1, r2, r3, r4, r5};
    int t = threadIdx.x;
    a[t] = in[t];
    __syncthreads();
    if (shifted) {
        if (alg == 0) transpose_loop<T, 0, true>(a, b, r, reps);
        else if (alg == 1) transpose_loop<T, 1, true>(a, b, r, reps);
        else transpose_loop<T, 2, true>(a, b, r, reps);
    } else {
        if (alg == 0) transpose_loop<T, 0, false>(a, b, r, reps);
        else if (alg == 1) transpose_loop<T, 1, false>(a, b, r, reps);
        else transpose_loop<T, 2, false>(a, b, r, reps);
    }
    out[t] = (reps & 1) ? b[t] : a[t];
}

extern "C" __global__ void __launch_bounds__(1024) rap_transpose_f64(
        const double* in, double* out, unsigned r0, unsigned r1, unsigned r2, unsigned r3, unsigned r4,
        unsigned r5, int reps, int alg, int shifted) {
    rap_transpose<double>(in, out, r0, r1, r2, r3, r4, r5, reps, alg, shifted);
}
extern "C" __global__ void __launch_bounds__(1024) rap_transpose_f32(
        const float* in, float* out, unsigned r0, unsigned r1, unsigned r2, unsigned r3, unsigned r4,
        unsigned r5, int reps, int alg, int shifted) {
    rap_transpose<float>(in, out, r0, r1, r2, r3, r4, r5, reps, alg, shifted);
}

// Offline permutation of n <= 1024 elements in one block's shared memory (000 ch. 4).
//
// One thread per element. The operation is repeated `reps` times inside the
// kernel, alternating a -> b and b -> a, as the seeds did to time a
// sub-microsecond operation; one repetition leaves b[P(i)] = a[i] in `out`.
//
// Modes (the index arrays live in shared memory, as in 000 §4.3):
//   0 copy             b[t]    = a[t]
//   1 d-designated     b[p[t]] = a[t]        idx0 = p
//   2 s-designated     b[t]    = a[q[t]]     idx0 = q
//   3 conflict-free    b[d[t]] = a[s[t]]     idx0 = s, idx1 = d
// In-place modes compute the indices from t for n = w*w = 2^(2*bits) (000 §4.4):
//   4/5/6 d-designated transpose / shuffle / bit-reversal
//   7/8/9 s-designated transpose / shuffle / bit-reversal
//   10/11/12 conflict-free transpose / shuffle / bit-reversal, s = t ^ ((t & (w-1)) << bits)
//   13/14/15 the same for 8-byte elements on 32 four-byte banks (Hopper): a warp's 8-byte accesses
//            are served per half-warp, so the 16 lanes of each half need distinct (address mod 16);
//            s = t ^ ((t & 15) << 5) (transpose), t ^ (((t >> 3) & 1) << 9) (shuffle),
//            t ^ ((t & 15) << 6) (bit-reversal) give that for the reads of a and the writes of b.

#define N_MAX 1024

__device__ __forceinline__ int perm_transpose(int t, int bits) {
    int mask = (1 << bits) - 1;
    return (t >> bits) | ((t & mask) << bits);
}
__device__ __forceinline__ int perm_shuffle(int t, int bits) {       // rotate 2*bits bits left by one
    int top = 2 * bits - 1;
    return (t >> top) | ((t & ((1 << top) - 1)) << 1);
}
__device__ __forceinline__ int perm_unshuffle(int t, int bits) {     // inverse of the shuffle
    int top = 2 * bits - 1;
    return (t >> 1) | ((t & 1) << top);
}
__device__ __forceinline__ int perm_bitrev(int t, int bits) {
    return (int)(__brev((unsigned)t) >> (32 - 2 * bits));
}
__device__ __forceinline__ int in_place(int which, int t, int bits) {
    return which == 0 ? perm_transpose(t, bits) : which == 1 ? perm_shuffle(t, bits) : perm_bitrev(t, bits);
}
__device__ __forceinline__ int in_place_inverse(int which, int t, int bits) {
    return which == 1 ? perm_unshuffle(t, bits) : in_place(which, t, bits);   // transpose, bit-reversal: self-inverse
}

template <typename T, int MODE>
__device__ void permute_loop(T* a, T* b, const int* idx0, const int* idx1, int t, int reps, int bits) {
    for (int r = 0; r < reps; ++r) {
        T* src = (r & 1) ? b : a;
        T* dst = (r & 1) ? a : b;
        int s = t, d = t;
        if (MODE == 1) d = idx0[t];
        if (MODE == 2) s = idx0[t];
        if (MODE == 3) { s = idx0[t]; d = idx1[t]; }
        if (MODE >= 4 && MODE <= 6) d = in_place(MODE - 4, t, bits);
        if (MODE >= 7 && MODE <= 9) s = in_place_inverse(MODE - 7, t, bits);
        if (MODE >= 10 && MODE <= 12) {
            s = t ^ ((t & ((1 << bits) - 1)) << bits);
            d = in_place(MODE - 10, s, bits);
        }
        if (MODE >= 13) {
            s = MODE == 13 ? t ^ ((t & 15) << 5) : MODE == 14 ? t ^ (((t >> 3) & 1) << 9) : t ^ ((t & 15) << 6);
            d = in_place(MODE - 13, s, bits);
        }
        dst[d] = src[s];
        __syncthreads();
    }
}

template <typename T>
__device__ void dmm_permutation(const T* __restrict__ in, T* __restrict__ out, const int* __restrict__ g0,
                                const int* __restrict__ g1, int n, int reps, int mode, int bits) {
    __shared__ T a[N_MAX];
    __shared__ T b[N_MAX];
    __shared__ int idx0[N_MAX];
    __shared__ int idx1[N_MAX];
    int t = threadIdx.x;
    if (t < n) {
        a[t] = in[t];
        if (g0) idx0[t] = g0[t];
        if (g1) idx1[t] = g1[t];
    }
    __syncthreads();
    if (t >= n) return;   // never taken: the launch uses exactly n threads
    switch (mode) {
        case 0: permute_loop<T, 0>(a, b, idx0, idx1, t, reps, bits); break;
        case 1: permute_loop<T, 1>(a, b, idx0, idx1, t, reps, bits); break;
        case 2: permute_loop<T, 2>(a, b, idx0, idx1, t, reps, bits); break;
        case 3: permute_loop<T, 3>(a, b, idx0, idx1, t, reps, bits); break;
        case 4: permute_loop<T, 4>(a, b, idx0, idx1, t, reps, bits); break;
        case 5: permute_loop<T, 5>(a, b, idx0, idx1, t, reps, bits); break;
        case 6: permute_loop<T, 6>(a, b, idx0, idx1, t, reps, bits); break;
        case 7: permute_loop<T, 7>(a, b, idx0, idx1, t, reps, bits); break;
        case 8: permute_loop<T, 8>(a, b, idx0, idx1, t, reps, bits); break;
        case 9: permute_loop<T, 9>(a, b, idx0, idx1, t, reps, bits); break;
        case 10: permute_loop<T, 10>(a, b, idx0, idx1, t, reps, bits); break;
        case 11: permute_loop<T, 11>(a, b, idx0, idx1, t, reps, bits); break;
        case 12: permute_loop<T, 12>(a, b, idx0, idx1, t, reps, bits); break;
        case 13: permute_loop<T, 13>(a, b, idx0, idx1, t, reps, bits); break;
        case 14: permute_loop<T, 14>(a, b, idx0, idx1, t, reps, bits); break;
        default: permute_loop<T, 15>(a, b, idx0, idx1, t, reps, bits); break;
    }
    out[t] = (reps & 1) ? b[t] : a[t];
}

extern "C" __global__ void __launch_bounds__(1024) dmm_permutation_f32(
        const float* in, float* out, const int* g0, const int* g1, int n, int reps, int mode, int bits) {
    dmm_permutation<float>(in, out, g0, g1, n, reps, mode, bits);
}
extern "C" __global__ void __launch_bounds__(1024) dmm_permutation_f64(
        const double* in, double* out, const int* g0, const int* g1, int n, int reps, int mode, int bits) {
    dmm_permutation<double>(in, out, g0, g1, n, reps, mode, bits);
}

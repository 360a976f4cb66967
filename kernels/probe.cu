// Microbenchmarks of `memtune probe`: each measures one physical parameter of the machine model.
//
// chase_global      dependent loads through a cyclic index list: global latency (DRAM or L2 by footprint)
// chase_shared      the same in shared memory, timed in cycles with clock64: shared latency
// read_sum          16-byte loads, grid-stride, repeated passes: read bandwidth of DRAM or of the L2
// shared_stride     every warp reads shared memory at a word stride: bandwidth, and bank count and width
//                   from how the time grows with the stride
// ping_pong         two blocks hand a flag back and forth through global memory: the round trip a
//                   look-back waits
// fma_f32 / fma_f64 independent fused multiply-add chains: arithmetic throughput
// fma_latency_f32 / _f64   one thread's single dependent fused multiply-add chain, in cycles: the latency
// spin / empty      a kernel of known cycles (the clock) and one of no work (launch costs, and the
//                   SM time per block: many waves of empty blocks)
// empty_arrays / empty_scalars   no work, four arguments of one kind: the host cost of an argument
// ticket            a lane of every warp takes tickets from one counter: same-address atomic throughput
// barrier_steps     one block meets at __syncthreads, alone or as a DMM step (store a word, barrier, load a
//                   neighbour's word): a barrier's cycles and how they grow with the block's warps
// scatter_words_4 / _8, gather_words_4 / _8   every word of a power-of-two array written (read) once, in a
//                   scrambled order: a warp's 32 accesses land in 32 sectors, as a random permutation's do;
//                   the rate of scattered sector accesses by footprint
// walk_columns      a thread a column walks down the rows in place, load-add-store (the seeds' round: read,
//                   compute, write): a dependent round of a warp's coalesced load through the L1, from DRAM
//                   or from the L2, as the algorithms' kernels wait on theirs (the chase's .cg load skips the L1)
// loaded_rounds     every block copies chunks of a large array (grid-stride), and before each chunk its thread 0
//                   times one dependent operation: a ticket (an atomic on one counter, its value handed to the
//                   block through shared memory and a barrier, as the look-back kernels draw theirs) or an L2
//                   load; with the grid full, the round trip a ticketed block waits while every SM streams
// barrier_waits     blocks of 1-32 warps copy chunks of a word a thread through shared memory, as the transpose's
//                   tiles move: dependent load rounds, a barrier, the stores, a barrier. Every warp times its
//                   rounds and its wait at each barrier: what a barrier waits for its slowest warp under load
// alu_shf          independent chains of funnel shifts (SHF, an ALU instruction the compiler cannot move to the
//                   FMA pipe as it does adds, IMAD.IADD), full occupancy: the ALU pipe's throughput
// code_loop_<N>     a block's warps each run a loop of N float FMAs in 8 independent chains (N instructions, 16 N
//                   bytes of code: 4 KB to 256 KB), timed by every warp with clock64: the cycles an instruction
//                   costs as the loop outgrows the instruction caches, by the warps a block holds

extern "C" __global__ void chase_global(const unsigned* __restrict__ next, unsigned start, int steps,
                                        unsigned* out) {
    unsigned j = start;
    for (int s = 0; s < steps; ++s) j = __ldcg(next + j);   // .cg: past L1, so the L2 or DRAM answers
    out[0] = j;
}

extern "C" __global__ void chase_shared(const unsigned* __restrict__ next, int count, int steps,
                                        unsigned* out, long long* cycles) {
    extern __shared__ unsigned ring[];
    for (int i = threadIdx.x; i < count; i += blockDim.x) ring[i] = next[i];
    __syncthreads();
    if (threadIdx.x != 0) return;
    unsigned j = 0;
    for (int s = 0; s < 64; ++s) j = ring[j];               // warm
    long long t0 = clock64();
    for (int s = 0; s < steps; ++s) j = ring[j];
    long long t1 = clock64();
    out[0] = j;
    cycles[0] = t1 - t0;
}

extern "C" __global__ void read_sum(const float4* __restrict__ a, long long n4, int passes, float* out) {
    float acc = 0.f;
    long long stride = (long long)gridDim.x * blockDim.x;
    for (int p = 0; p < passes; ++p) {
        for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += 4 * stride) {
            float4 v[4];
#pragma unroll
            for (int u = 0; u < 4; ++u) v[u] = (i + u * stride < n4) ? __ldcg(a + i + u * stride) : make_float4(0, 0, 0, 0);
#pragma unroll
            for (int u = 0; u < 4; ++u) acc += v[u].x + v[u].y + v[u].z + v[u].w;
        }
    }
    if (acc == 12345.678f) out[0] = acc;                     // never true: keeps the loads
}

// WORD = 4 or 8 bytes; each thread reads word (lane * stride) of its warp's window, `iters` times.
template <typename T>
__device__ void shared_stride(int stride, int iters, T* out) {
    extern __shared__ __align__(16) unsigned char smem[];
    volatile T* s = reinterpret_cast<volatile T*>(smem);   // volatile: one load per iteration
    int span = 32 * stride;
    for (int i = threadIdx.x; i < span; i += blockDim.x) s[i] = (T)i;
    __syncthreads();
    int lane = threadIdx.x & 31;
    int idx = lane * stride;
    T acc = 0;
#pragma unroll 8
    for (int it = 0; it < iters; ++it) {
        acc += s[idx];
    }
    if (acc == (T)-1) out[0] = acc;
}
extern "C" __global__ void shared_stride_4(int stride, int iters, unsigned* out) { shared_stride<unsigned>(stride, iters, out); }
extern "C" __global__ void shared_stride_8(int stride, int iters, unsigned long long* out) {
    shared_stride<unsigned long long>(stride, iters, out);
}

extern "C" __global__ void ping_pong(volatile unsigned* flags, int rounds) {
    // flags[0]: block 0 -> block 1, flags[32]: block 1 -> block 0 (different 128-byte lines)
    if (threadIdx.x != 0) return;
    if (blockIdx.x == 0) {
        for (int r = 1; r <= rounds; ++r) {
            flags[0] = r;
            __threadfence();
            while (flags[32] != (unsigned)r) { }
        }
    } else {
        for (int r = 1; r <= rounds; ++r) {
            while (flags[0] != (unsigned)r) { }
            flags[32] = r;
            __threadfence();
        }
    }
}

template <typename T>
__device__ void fma_chains(int iters, T* out) {
    T x[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) x[c] = (T)(threadIdx.x + c);
    const T a = (T)0.999, b = (T)0.001;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < 8; ++c) x[c] = fma(x[c], a, b);
    }
    T acc = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) acc += x[c];
    if (acc == (T)-1) out[0] = acc;
}
// a funnel shift a step, each of another chain's value too, so that nothing folds; the shift comes in as an argument
__device__ void alu_chains(int iters, unsigned shift, unsigned* out) {
    unsigned x[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) x[c] = threadIdx.x * 2654435761u + c;
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < 8; ++c) x[c] = __funnelshift_l(x[c], x[(c + 1) & 7], shift);
    }
    unsigned acc = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) acc ^= x[c];
    if (acc == 1u) out[0] = acc;
}
extern "C" __global__ void alu_shf(int iters, unsigned shift, unsigned* out) { alu_chains(iters, shift, out); }
extern "C" __global__ void fma_f32(int iters, float* out) { fma_chains<float>(iters, out); }
extern "C" __global__ void fma_f64(int iters, double* out) { fma_chains<double>(iters, out); }

// a and b come in as arguments so that nothing of the chain is known when compiling
template <typename T>
__device__ void fma_chain(int iters, T a, T b, T* out, long long* cycles) {
    T x = (T)threadIdx.x;
    const long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int c = 0; c < 16; ++c) x = fma(x, a, b);
    }
    const long long t1 = clock64();
    out[0] = x;
    cycles[0] = t1 - t0;
}
extern "C" __global__ void fma_latency_f32(int iters, float a, float b, float* out, long long* cycles) {
    fma_chain<float>(iters, a, b, out, cycles);
}
extern "C" __global__ void fma_latency_f64(int iters, double a, double b, double* out, long long* cycles) {
    fma_chain<double>(iters, a, b, out, cycles);
}

extern "C" __global__ void spin(long long cycles) {
    long long t0 = clock64();
    while (clock64() - t0 < cycles) { }
}

extern "C" __global__ void empty() { }
extern "C" __global__ void empty_arrays(const float*, const float*, const float*, const float*) { }
extern "C" __global__ void empty_scalars(int, int, int, int) { }

extern "C" __global__ void ticket(unsigned* counter, int count, unsigned* out) {
    if (threadIdx.x % 32 != 0) return;                      // one lane a warp: no warp-aggregated atomics
    unsigned seen = 0;
    for (int i = 0; i < count; ++i) seen ^= atomicAdd(counter, 1u);
    if (seen == 0xffffffffu) out[0] = seen;                 // keeps the atomics' results live
}

// mode 0: the barrier alone; mode 1: a DMM step as the one-block kernels run it (double-buffered, so one
// barrier a step keeps every load after its store and before the buffer is written again).
extern "C" __global__ void barrier_steps(int steps, int mode, long long* cycles, unsigned* out) {
    extern __shared__ unsigned cell[];                       // 2 * blockDim.x words
    const int n = blockDim.x;
    unsigned v = threadIdx.x;
    __syncthreads();
    long long t0 = clock64();
    for (int s = 0; s < steps; ++s) {
        if (mode) {
            unsigned* buf = cell + (s & 1) * n;
            buf[threadIdx.x] = v;
            __syncthreads();
            v = buf[(threadIdx.x + 33) % n] + 1;
        } else {
            __syncthreads();
        }
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) cycles[0] = t1 - t0;
    if (v == 0xffffffffu) out[0] = v;                        // keeps the loads
}

// A bijection of [0, 2^bits): multiplications by odd constants and xor-shifts are each invertible modulo a
// power of two, so every word is touched exactly once and neighbouring threads land far apart.
__device__ __forceinline__ unsigned long long scramble(unsigned long long i, unsigned long long mask, int half) {
    i = (i * 0x9E3779B97F4A7C15ull) & mask;
    i ^= i >> half;
    i = (i * 0xC2B2AE3D27D4EB4Full) & mask;
    return i ^ (i >> half);
}

// Each thread handles SCATTER_WORDS words a block-stride apart, so the block count (and its launch cost) stays small.
#define SCATTER_WORDS 4

template <typename T>
__device__ void scatter_words(T* out, long long n, int half) {
    long long base = (long long)blockIdx.x * blockDim.x * SCATTER_WORDS + threadIdx.x;
#pragma unroll
    for (int u = 0; u < SCATTER_WORDS; ++u) {
        long long i = base + (long long)u * blockDim.x;
        if (i < n) out[scramble(i, n - 1, half)] = (T)i;
    }
}

template <typename T>
__device__ void gather_words(const T* __restrict__ in, long long n, int half, T* sink) {
    long long base = (long long)blockIdx.x * blockDim.x * SCATTER_WORDS + threadIdx.x;
    T acc = 0;
    T v[SCATTER_WORDS];
#pragma unroll
    for (int u = 0; u < SCATTER_WORDS; ++u) {
        long long i = base + (long long)u * blockDim.x;
        v[u] = i < n ? in[scramble(i, n - 1, half)] : (T)0;
    }
#pragma unroll
    for (int u = 0; u < SCATTER_WORDS; ++u) acc += v[u];
    if (acc == (T)-12345) sink[0] = acc;                    // never true (the data are non-negative): keeps the loads
}

extern "C" __global__ void scatter_words_4(float* out, long long n, int half) { scatter_words<float>(out, n, half); }
extern "C" __global__ void scatter_words_8(double* out, long long n, int half) { scatter_words<double>(out, n, half); }
extern "C" __global__ void gather_words_4(const float* in, long long n, int half, float* sink) {
    gather_words<float>(in, n, half, sink);
}
extern "C" __global__ void gather_words_8(const double* in, long long n, int half, double* sink) {
    gather_words<double>(in, n, half, sink);
}

extern "C" __global__ void walk_columns(float* a, int rows, int cols) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float s = 0.f;
    for (int r = 0; r < rows; ++r) { s += a[(long long)r * cols + c]; a[(long long)r * cols + c] = s; }
}

// mode 0: no timed operation (the copy's own pace); 1: a ticket; 2: a .cg load of a word every block reads
// (so the L2 holds it); 3: the two barriers alone. The first barrier lines the block up after its stores
// issue, so thread 0's interval is the operation and the barrier that hands its value over. cycles[0] sums
// thread 0's intervals over the blocks; cycles[1] counts them. write 0: the chunks are read and summed, not
// stored (whether a barrier waits on the stores issued before it).
extern "C" __global__ void loaded_rounds(const float4* __restrict__ a, float4* __restrict__ b, long long chunks,
                                         int mode, int write, unsigned* counter, long long* cycles, unsigned* out) {
    constexpr int PER = 4;                                   // 16-byte vectors a thread a chunk, all in flight
    __shared__ unsigned handed;
    long long spent = 0, ops = 0;
    unsigned seen = 0;
    for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
        if (mode) {
            __syncthreads();
            long long t0 = clock64();
            if (threadIdx.x == 0) handed = mode == 1 ? atomicAdd(counter, 1u) : mode == 2 ? __ldcg(counter + 32) : 0u;
            __syncthreads();
            seen ^= handed;
            spent += clock64() - t0;
            ++ops;
        }
        const long long base = c * blockDim.x * PER + threadIdx.x;
        float4 v[PER];
#pragma unroll
        for (int k = 0; k < PER; ++k) v[k] = a[base + k * blockDim.x];
        if (write) {
#pragma unroll
            for (int k = 0; k < PER; ++k) b[base + k * blockDim.x] = v[k];
        } else {
#pragma unroll
            for (int k = 0; k < PER; ++k) seen += __float_as_uint(v[k].x + v[k].y + v[k].z + v[k].w);
        }
    }
    if (threadIdx.x == 0 && ops) {
        atomicAdd((unsigned long long*)cycles, (unsigned long long)spent);
        atomicAdd((unsigned long long*)cycles + 1, (unsigned long long)ops);
    }
    if (seen == 0xfffffff0u) out[0] = seen;                  // keeps the handed values live
}

// Every warp's lane 0 sums four intervals a chunk (clock64): its own `steps` dependent rounds (a load, its word into
// shared memory: the store waits for the load), its wait at the first barrier (the block's slowest warp's rounds
// against its own), its stores (a word of another warp's, so the barrier is needed), and its wait at the second
// barrier. cycles[0..3] sum those over every warp and chunk; cycles[4] counts the warps' chunks.
extern "C" __global__ void barrier_waits(const float* a, float* b, long long chunks,
                                         int steps, long long* cycles) {
    extern __shared__ float stage[];
    const int t = threadIdx.x, n = blockDim.x, other = (t + 32) % n;
    long long own = 0, first = 0, stores = 0, second = 0, count = 0;
    for (long long c = blockIdx.x; c < chunks; c += gridDim.x) {
        const long long base = c * n * steps;
        const long long t0 = clock64();
#pragma unroll 1
        for (int s = 0; s < steps; ++s) stage[s * n + t] = a[base + s * n + t];
        const long long t1 = clock64();
        __syncthreads();
        const long long t2 = clock64();
#pragma unroll 1
        for (int s = 0; s < steps; ++s) b[base + s * n + t] = stage[s * n + other];
        const long long t3 = clock64();
        __syncthreads();
        const long long t4 = clock64();
        own += t1 - t0; first += t2 - t1; stores += t3 - t2; second += t4 - t3; ++count;
    }
    if ((t & 31) == 0 && count) {
        unsigned long long* sums = (unsigned long long*)cycles;
        atomicAdd(sums, (unsigned long long)own);
        atomicAdd(sums + 1, (unsigned long long)first);
        atomicAdd(sums + 2, (unsigned long long)stores);
        atomicAdd(sums + 3, (unsigned long long)second);
        atomicAdd(sums + 4, (unsigned long long)count);
    }
}

// N unrolled FMAs in 8 chains (a chain's FMA waits for its previous one, 4 cycles: 8 chains keep a lone warp issuing
// one a cycle), a and b arguments so that nothing folds; every warp's lane 0 writes its cycles
template <int N>
__device__ void code_loop(int iters, float a, float b, float* out, long long* cycles) {
    float x[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) x[c] = (float)(threadIdx.x + c);
    __syncthreads();
    const long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
#pragma unroll
        for (int i = 0; i < N / 8; ++i)
#pragma unroll
            for (int c = 0; c < 8; ++c) x[c] = fmaf(x[c], a, b);
    }
    const long long t1 = clock64();
    float acc = 0;
#pragma unroll
    for (int c = 0; c < 8; ++c) acc += x[c];
    if (acc == -1.0f) out[0] = acc;
    if (threadIdx.x % 32 == 0) cycles[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = t1 - t0;
}
#define CODE_LOOP(N) extern "C" __global__ void code_loop_##N(int iters, float a, float b, float* out, \
                                                             long long* cycles) { code_loop<N>(iters, a, b, out, cycles); }
CODE_LOOP(256) CODE_LOOP(512) CODE_LOOP(1024) CODE_LOOP(1536) CODE_LOOP(1792) CODE_LOOP(2048) CODE_LOOP(2304)
CODE_LOOP(2560) CODE_LOOP(3072) CODE_LOOP(3584) CODE_LOOP(4096) CODE_LOOP(8192) CODE_LOOP(16384)

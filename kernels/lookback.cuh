// Status words of decoupled look-back, shared by the single-pass scan and the single-pass SAT.
//
// A block's published value and its state travel together, so no fence has to order a flag after
// its data. The state is epoch << 2 | kind, kind AGGREGATE (the block's own total) or INCLUSIVE (the
// prefix up to and including the block). A word left by an earlier launch carries another epoch and
// reads as not ready, so the status array is never cleared between launches: the host passes a new
// epoch each time. Every access is a volatile (relaxed, single-copy atomic) 64-bit access: weaker
// cache-hinted accesses (ld.cv/st.cg) can be observed torn, a new state beside an old value.
#pragma once

enum { AGGREGATE = 1, INCLUSIVE = 2 };

// The 16-byte vector both single-pass kernels move memory in: V elements of T.
template <typename T> struct Vec;
template <> struct Vec<float> { static constexpr int V = 4; using type = float4; };
template <> struct Vec<double> { static constexpr int V = 2; using type = double2; };

__device__ __forceinline__ unsigned status_code(unsigned epoch, int kind) { return (epoch << 2) | kind; }

template <typename T> struct Status;

// float: state in the high half, value bits in the low half of one 64-bit word.
template <> struct Status<float> {
    using Word = unsigned long long;
    __device__ static void put(Word* p, float v, unsigned code) {
        *(volatile Word*)p = ((Word)code << 32) | __float_as_uint(v);
    }
    __device__ static unsigned get(const Word* p, float& v) {
        Word word = *(const volatile Word*)p;
        v = __uint_as_float((unsigned)word);
        return (unsigned)(word >> 32);
    }
    // One read that never retries, so a caller may put several in flight before it looks at any: false where
    // the word must be read again (never, for one 64-bit word).
    __device__ static bool peek(const Word* p, float& v, unsigned& code) { code = get(p, v); return true; }
};

// double: two 64-bit words, each the state beside one half of the value; a read counts only when
// both halves carry the same state (each state is written once per launch, so they belong together).
template <> struct Status<double> {
    using Word = ulonglong2;
    __device__ static void put(Word* p, double v, unsigned code) {
        unsigned long long bits = (unsigned long long)__double_as_longlong(v);
        volatile unsigned long long* q = reinterpret_cast<volatile unsigned long long*>(p);
        q[0] = ((unsigned long long)code << 32) | (bits >> 32);
        q[1] = ((unsigned long long)code << 32) | (bits & 0xffffffffull);
    }
    __device__ static unsigned get(const Word* p, double& v) {
        const volatile unsigned long long* q = reinterpret_cast<const volatile unsigned long long*>(p);
        unsigned long long hi, lo;
        do { hi = q[0]; lo = q[1]; } while ((hi >> 32) != (lo >> 32));
        v = __longlong_as_double((long long)((hi << 32) | (lo & 0xffffffffull)));
        return (unsigned)(hi >> 32);
    }
    // get's read without its retry: false where the halves carry different states (read again with get).
    __device__ static bool peek(const Word* p, double& v, unsigned& code) {
        const volatile unsigned long long* q = reinterpret_cast<const volatile unsigned long long*>(p);
        const unsigned long long hi = q[0], lo = q[1];
        v = __longlong_as_double((long long)((hi << 32) | (lo & 0xffffffffull)));
        code = (unsigned)(hi >> 32);
        return (hi >> 32) == (lo >> 32);
    }
};

// Integer sums travel in the float and double words bit for bit.
__device__ __forceinline__ float carrier(int v) { return __int_as_float(v); }
__device__ __forceinline__ double carrier(long long v) { return __longlong_as_double(v); }
__device__ __forceinline__ double carrier(unsigned long long v) { return __longlong_as_double((long long)v); }
__device__ __forceinline__ void uncarry(float x, int& v) { v = __float_as_int(x); }
__device__ __forceinline__ void uncarry(double x, long long& v) { v = __double_as_longlong(x); }
__device__ __forceinline__ void uncarry(double x, unsigned long long& v) { v = (unsigned long long)__double_as_longlong(x); }

template <typename I, typename F> struct CarriedStatus {
    using Word = typename Status<F>::Word;
    __device__ static void put(Word* p, I v, unsigned code) { Status<F>::put(p, carrier(v), code); }
    __device__ static unsigned get(const Word* p, I& v) {
        F x;
        const unsigned code = Status<F>::get(p, x);
        uncarry(x, v);
        return code;
    }
    __device__ static bool peek(const Word* p, I& v, unsigned& code) {
        F x;
        const bool whole = Status<F>::peek(p, x, code);
        uncarry(x, v);
        return whole;
    }
};
template <> struct Status<int> : CarriedStatus<int, float> {};
template <> struct Status<long long> : CarriedStatus<long long, double> {};
template <> struct Status<unsigned long long> : CarriedStatus<unsigned long long, double> {};

// A block's ticket: blocks draw them in start order, so a look-back waits only on blocks that run.
// atomicInc wraps the counter to 0 as the grid's last ticket is drawn (every other block has drawn its
// own by then), so the next launch starts from 0 without a memset launch between them.
__device__ __forceinline__ unsigned draw_ticket(unsigned* counter) {
    return atomicInc(counter, gridDim.x * gridDim.y * gridDim.z - 1u);
}

// Spin until the word belongs to this launch; returns its kind and sets v. A waiting thread backs
// off between reads, so spinning warps do not crowd the L2 that the publishing blocks write to.
template <typename T>
__device__ __forceinline__ int wait_status(const typename Status<T>::Word* p, unsigned epoch, T& v) {
    unsigned code = Status<T>::get(p, v);
    for (unsigned pause = 32; (code >> 2) != epoch; pause = min(pause * 2, 1024u)) {
        __nanosleep(pause);
        code = Status<T>::get(p, v);
    }
    return (int)(code & 3u);
}

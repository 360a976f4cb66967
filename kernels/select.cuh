// Compiling one kernel of a file instead of all of them.
//
// A file that includes this header wraps each kernel's body in a template whose first argument is
// MEMTUNE_WANTS(<kernel name>). memtune compiles such a file once per kernel it launches, with
// -DMEMTUNE_ONLY=<kernel name>: every other kernel then keeps its symbol (the module still lists it)
// but an empty body, so its template is never instantiated. conv_matmul.cu takes 16 s to compile
// whole and about a second a kernel, and a study touches a few of its 60 kernels. Without the
// define (nvcc on the whole file, the CPU tests) every kernel is compiled.
#pragma once

__host__ __device__ constexpr bool memtune_same_name(const char* a, const char* b) {
    while (*a != 0 && *a == *b) { ++a; ++b; }
    return *a == *b;
}

#define MEMTUNE_STRING_(x) #x
#define MEMTUNE_STRING(x) MEMTUNE_STRING_(x)
#ifdef MEMTUNE_ONLY
#define MEMTUNE_WANTS(name) memtune_same_name(#name, MEMTUNE_STRING(MEMTUNE_ONLY))
#else
#define MEMTUNE_WANTS(name) true
#endif

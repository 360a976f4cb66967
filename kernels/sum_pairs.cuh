// The sums memtune takes: every input type with every type it converts to without loss (numpy's "safe"
// casts), as numpy lists them. MEMTUNE_SUM_PAIRS(X) calls X(IN, SI, OUT, SO) once a pair (C types and
// their short names), so shaped.cu and reductions.cu instantiate the same pairs.
#pragma once

#define MEMTUNE_FROM_SMALL_UNSIGNED(X, IN, SI) X(IN, SI, int, i32) X(IN, SI, long long, i64)             \
    X(IN, SI, unsigned long long, u64) X(IN, SI, float, f32) X(IN, SI, double, f64)
#define MEMTUNE_SUM_PAIRS(X)                                                                          \
    MEMTUNE_FROM_SMALL_UNSIGNED(X, unsigned char, u8) MEMTUNE_FROM_SMALL_UNSIGNED(X, unsigned short, u16) \
    X(int, i32, int, i32) X(int, i32, long long, i64) X(int, i32, double, f64)                         \
    X(long long, i64, long long, i64)                                                                  \
    X(float, f32, float, f32) X(float, f32, double, f64)                                               \
    X(double, f64, double, f64)

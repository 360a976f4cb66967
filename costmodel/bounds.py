"""The named limitations that lower bounds are built from.

From 001 §5 (DMM and UMM): the *bandwidth* limitation n/w (w words per time
unit), the *latency* limitation n·l/p (each thread has one request in flight
per l units) and the *reduction* limitation l·log n (merging n tokens takes
log n latency steps). From 002 §§IV, VI (HMM): *global bandwidth*, *global
latency* (d·p threads, one global request per L), *shared bandwidth* ((d + 1)·w
words per unit over all memories) and *shared latency*; the 2n³/m global reads
of tiled matrix multiplication. From 000 §5.5: Ω(n/w + L) for permutation.
"""
from __future__ import annotations

import sympy

from .algorithm import Limitation
from .symbol_table import symbols

n, nbar, w, l, L, p, d, m, v = symbols("n", "nbar", "w", "l", "L", "p", "d", "m", "v")
log2 = lambda x: sympy.log(x, 2)  # noqa: E731


def bandwidth(data=n, source="001 §5"):
    return Limitation("bandwidth", data / w, source)


def latency(data=n, source="001 §5"):
    return Limitation("latency", data * l / p, source)


def reduction(source="001 §5, Thm 2"):
    return Limitation("reduction", l * log2(n), source)


def access_latency(source="001 §3"):
    return Limitation("access latency", l, source)


def global_bandwidth(data, source):
    return Limitation("global bandwidth", data / w, source)


def global_latency(data, source, threads=None):
    return Limitation("global latency", data * L / (threads if threads is not None else d * p), source)


def global_access_latency(source="000 §5.5"):
    return Limitation("global latency", L, source)


def shared_bandwidth(ops, source):
    return Limitation("shared bandwidth", ops / (d * w), source)


def shared_latency(ops, source):
    return Limitation("shared latency", ops * l / (d * p), source)


def permutation_bound(data=n, source="000 §5.5"):
    """Ω(n/w + L): every element is read once, w per time unit, and one read takes L."""
    return (global_bandwidth(data, source), global_access_latency(source))

"""Timing harness: CUDA events, warm-up, repeats, median and inter-quartile range.

Every timing first runs the work for 25 ms (:func:`warm_up`), so the clocks are up.
Global-memory kernels start every repeat from a cold L2: a buffer of at least
twice the L2 is written just before the timed region, and the GPU is then held
busy for 0.3 ms so that the host's preparation of the run is not timed as GPU
time (:func:`hold_gpu`). Shared-memory (DMM)
kernels loop inside the kernel; their time per operation is the kernel time
divided by the repetitions. Every result row carries the device, driver and
CuPy version, the dtype, the size and the parameters, so tables from several
runs and devices can be merged.
"""
from __future__ import annotations

import functools
import statistics
from dataclasses import dataclass

import numpy as np

from .base import Inputs, Kernel, cupy
from .errors import KernelLaunchError


@dataclass(frozen=True)
class Device:
    name: str
    driver: str
    cupy: str
    sms: int
    l2_bytes: int

    @classmethod
    def current(cls) -> "Device":
        cp = cupy()
        props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        driver = cp.cuda.runtime.driverGetVersion()
        return cls(name=name, driver=f"{driver // 1000}.{driver % 1000 // 10}", cupy=cp.__version__,
                   sms=props["multiProcessorCount"], l2_bytes=props["l2CacheSize"])


_FLUSH = {}
_HOLD_NS = 300_000
WARMUP_MS = 25.0      # of the timed work itself before the repeats


@functools.lru_cache(maxsize=None)
def _hold_kernel():
    return cupy().RawKernel(r"""
extern "C" __global__ void hold(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { __nanosleep(1000); asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}""", "hold")


def hold_gpu(ns: int | None = None) -> None:
    """Keep the GPU busy for ``ns`` so the host prepares the next run before the start event is reached.

    Without it, the Python work of a run before its first launch (checking parameters, a new
    epoch, argument packing: tens of microseconds) is idle GPU time between the start event and
    the kernel, and is timed as if the kernel had taken it.
    """
    _hold_kernel()((1,), (1,), (np.uint64(_HOLD_NS if ns is None else ns),))


def flush_l2(clean: bool = False) -> None:
    """Write a buffer of twice the L2 so the next kernel finds no input in the cache. That leaves the L2 full
    of the buffer's lines, some dirty, which the next kernel's first new lines write back to DRAM (the
    machine's ``l2_dirty_bytes``); ``clean`` then reads the buffer, so the L2 holds clean lines instead."""
    cp = cupy()
    dev = cp.cuda.Device().id
    if dev not in _FLUSH:
        _FLUSH[dev] = cp.empty(2 * Device.current().l2_bytes // 4 + 1, dtype=np.float32)
    _FLUSH[dev].fill(1.0)
    if clean:
        _FLUSH[dev].sum()


def measure(kernel: Kernel, inputs: Inputs, repeats: int = 20, warmup: int = 3, flush: bool | None = None,
            times_out: list | None = None, **params) -> dict:
    """Median time (ms, per operation) with the inter-quartile range, as one result row; ``times_out``, where
    given, receives every repeat's time."""
    params = kernel.check_params(params)
    flush = kernel.memory == "global" if flush is None else flush
    ops = kernel.ops_per_run(**params)
    try:
        times = [t / ops for t in time_call(lambda: kernel.run(inputs, **params), repeats, warmup, flush)]
    except KernelLaunchError:
        raise
    except Exception as exc:   # out of memory, launch failure: one message the tuner can record
        raise KernelLaunchError(f"{kernel.name}: {type(exc).__name__}: {str(exc).splitlines()[0]}") from None
    q1, med, q3 = np.percentile(times, [25, 50, 75])
    if times_out is not None:
        times_out.extend(times)
    dev = Device.current()
    return {"kernel": kernel.name, "chapter": kernel.chapter, "peer": kernel.peer, "device": dev.name,
            "driver": dev.driver, "cupy": dev.cupy, "dtype": inputs.dtype, "size": inputs.size,
            **{f"case_{k}": v for k, v in inputs.case.items()}, "params": dict(params),
            "median_ms": float(med), "iqr_ms": float(q3 - q1), "min_ms": float(min(times)), "repeats": repeats,
            "flush_l2": flush, "bandwidth_GBps": effective_bandwidth(kernel, inputs, med),
            "spread": float(statistics.pstdev(times) / med) if med else 0.0}


def round_robin(runs, rounds: int, shuffle_seed: int | None = None) -> list[list[float]]:
    """Each of ``runs`` (calls returning one time) once a round, for ``rounds`` rounds: every run's times, so that a
    drift of the GPU's clocks or temperature falls on all of them alike. In turn, or with ``shuffle_seed`` in a
    new random order each round: a short kernel's time can follow where in a sequence it is measured (the sum of
    10^6 float32 on the H200, 8-11 % a configuration between a grid's order and its reverse, results/h200/grid_order),
    and a fixed order gives each run the same place every round."""
    times: list[list[float]] = [[] for _ in runs]
    rng = np.random.default_rng(shuffle_seed) if shuffle_seed is not None else None
    for _ in range(rounds):
        for i in (rng.permutation(len(runs)) if rng is not None else range(len(runs))):
            times[i].append(runs[i]())
    return times


def warm_up(run, runs: int = 3, ms: float = WARMUP_MS) -> int:
    """Run ``run()`` at least ``runs`` times and until it has kept the GPU busy for ``ms``; the runs made.

    Three runs of a short kernel were not enough: on the H100 the first median of 15 of a 2^24 prefix sum in a
    fresh process read 102 µs after three warm-up runs, the next two medians 65 µs (a GPU left idle, by a
    compile or the host's work between cases, is slow to come back to speed). 25 ms is triton's do_bench's.
    The clock starts after the first run: a kernel's first call in a process compiles it on the host, and with
    the start event recorded before it the compile's seconds read as GPU time, so the warm-up ended after the
    runs asked for, with the GPU idle through all of it (H200, 2026-11-29: 3 runs of a 1 ms kernel where 25 ms
    takes 31).
    """
    cp = cupy()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    run()
    start.record()
    done, batch = 1, max(runs - 1, 1)
    while True:
        for _ in range(batch):
            run()
        done += batch
        stop.record()
        stop.synchronize()
        if cp.cuda.get_elapsed_time(start, stop) >= ms:      # done >= runs already: 1 + (runs - 1)
            return done
        batch *= 2


def time_call(run, repeats: int = 20, warmup: int = 3, flush: bool = True, then=None) -> list[float]:
    """Each repeat's time (ms) of ``run()``, timed as every kernel is: after :func:`warm_up` (``warmup`` runs and
    WARMUP_MS of work at least), each repeat from a cold L2 (``flush``) with the GPU held busy while the host
    prepares it, between CUDA events; ``then()``, where given, runs untimed after the flush (a read that brings
    an array back into the L2)."""
    cp = cupy()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    warm_up(run, warmup)
    times = []
    for _ in range(repeats):
        if flush:
            flush_l2()
        if then is not None:
            then()
        hold_gpu()
        start.record()
        run()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    return times


def finished_or_exit(run, name: str, seconds: float = 10.0) -> None:
    """Run once and wait at most ``seconds``: a kernel that never finishes (a look-back waiting on a word no
    block writes) ends the process with its name instead of hanging it; nothing else can stop it."""
    import os
    import sys
    import time

    done = cupy().cuda.Event()
    run()
    done.record()
    deadline = time.monotonic() + seconds
    while not done.done:
        if time.monotonic() > deadline:
            sys.stderr.write(f"HANG: {name} did not finish in {seconds} s\n")
            sys.stderr.flush()
            os._exit(3)
        time.sleep(0.005)


def effective_bandwidth(kernel: Kernel, inputs: Inputs, ms: float) -> float:
    """GB/s of the compulsory bytes (the lower bound's: read the input, write the output) in ``ms``."""
    return kernel.compulsory_bytes(inputs.size, np.dtype(inputs.dtype).itemsize) / (ms * 1e-3) / 1e9


def check(kernel: Kernel, inputs: Inputs, **params) -> float:
    """Largest absolute difference between the kernel's output and the numpy reference (output poisoned first)."""
    cp = cupy()
    inputs.arrays["out"].fill(np.nan)
    out = kernel.run(inputs, **params)
    got = kernel.result(inputs, out) if hasattr(kernel, "result") else cp.asnumpy(out).ravel()
    ref = kernel.reference(inputs)
    got = np.asarray(got).ravel()
    if np.isnan(got).any():
        return float("inf")
    return float(np.max(np.abs(got - np.asarray(ref).ravel())))


def scan_error(kernel: Kernel, inputs: Inputs, **params) -> float:
    """Error of a sum or prefix sum against float64, output poisoned first (NaN gives inf).

    A sum is judged relative to the sum of magnitudes (the sum itself may be near 0); prefix sums
    norm-wise.
    """
    cp = cupy()
    inputs.arrays["out"].fill(np.nan)
    got = cp.asnumpy(kernel.run(inputs, **params)).astype(np.float64)
    ref = kernel.reference(inputs)
    if not np.isfinite(got).all():
        return float("inf")
    if ref.size == 1:
        return float(abs(got[0] - ref[0]) / np.abs(inputs.host["a"].astype(np.float64)).sum())
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))


def relative_error(kernel: Kernel, inputs: Inputs, **params) -> float:
    """‖out − ref‖ / ‖ref‖ against a float64 reference, output poisoned first (NaN gives inf)."""
    cp = cupy()
    inputs.arrays["out"].fill(np.nan)
    got = cp.asnumpy(kernel.run(inputs, **params)).astype(np.float64).ravel()
    ref = np.asarray(kernel.reference(inputs), dtype=np.float64).ravel()
    if not np.isfinite(got).all():
        return float("inf")
    return float(np.linalg.norm(got - ref) / np.linalg.norm(ref))

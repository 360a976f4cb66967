"""``memtune probe``: measure one GPU's machine parameters (microbenchmarks of ``probe.cu``).

Each measurement is repeated; the value is the median and the spread the inter-quartile range over
the median. The whole probe takes well under a minute on an H100. The result is a
:class:`costmodel.physical.MachineFile`, with the compiled resources of every kernel function the
model's launch plans name.
"""
from __future__ import annotations

import os
import statistics
import time

import numpy as np

from ..costmodel.physical.launch import INSTRUCTION_BYTES, harmonic
from ..costmodel.physical.machine import (CURVES, OPTIONAL_PARAMETERS, PARAMETERS, Curve, KernelResources, MachineFile,
                                          Quantity)

from .device import cupy, function, launch
from . import timing
from .timing import Device

SOURCE = "probe.cu"
REPEATS = 7


def _summary(samples, unit, method) -> Quantity:
    samples = sorted(float(s) for s in samples)
    med = statistics.median(samples)
    q = np.percentile(samples, [25, 75])
    return Quantity(med, unit, float((q[1] - q[0]) / abs(med)) if med else 0.0, method)


def _event_ms(run, repeats=REPEATS, warm=True) -> list[float]:
    """Milliseconds of ``run(k)`` for k = 0..repeats-1, timed with events (after one untimed run)."""
    cp = cupy()
    if warm:
        run(0)
    out = []
    for k in range(repeats):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        start.record()
        run(k)
        stop.record()
        stop.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, stop))
    return out


def _ring(count: int, spacing: int, seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """A random cyclic order over ``count`` slots ``spacing`` words apart: next[slot] = following slot.

    Returns the next-array and the order (word index of the i-th slot along the ring).
    """
    order = np.random.default_rng(seed).permutation(count).astype(np.uint64) * spacing
    nxt = np.zeros(count * spacing, np.uint32)
    nxt[order] = np.roll(order, -1).astype(np.uint32)
    return nxt, order


def chase_ns(footprint: int, steps: int = 20000, repeats: int = 5) -> list[float]:
    """Nanoseconds per dependent load over a ring of ``footprint`` bytes (one slot per 128-byte line).

    The whole ring is walked once first; each timed walk then starts where the first walk was
    longest ago (``repeats`` disjoint stretches from the ring's start), so a ring larger than the L2
    misses it and a smaller one hits it.
    """
    cp = cupy()
    spacing, count = 32, max(footprint // 128, 2)
    host, order = _ring(count, spacing)
    nxt, out = cp.asarray(host), cp.zeros(1, np.uint32)
    fn = function(SOURCE, "chase_global")
    launch(fn, (1,), (1,), (nxt, np.uint32(0), np.int32(count), out))
    steps = min(steps, count // repeats)
    times = _event_ms(lambda k: launch(fn, (1,), (1,), (nxt, np.uint32(order[k * steps]), np.int32(steps), out)),
                      repeats, warm=False)
    return [t * 1e6 / steps for t in times]


def global_latencies() -> dict[str, Quantity]:
    dram = chase_ns(256 << 20)
    l2 = chase_ns(4 << 20)
    return {"dram_latency": _summary(dram, "ns", PARAMETERS["dram_latency"][1]),
            "l2_latency": _summary(l2, "ns", PARAMETERS["l2_latency"][1])}


WALK_ROWS, WALK_COLUMNS, WALK_THREADS = 1024, 2048, 128     # 8 MiB in place: the L2 holds it once read


def walk_round_ns(resident: bool, repeats: int = REPEATS) -> list[float]:
    """Nanoseconds per round of probe.cu's walk_columns (16 blocks of 128 threads, each thread a column of 1024
    rows, in place): after a clean flush, from DRAM; ``resident``, after a read of the array, from the L2."""
    cp = cupy()
    a = cp.random.random((WALK_ROWS, WALK_COLUMNS), dtype=np.float32)
    fn = function(SOURCE, "walk_columns")
    run = lambda: launch(fn, (WALK_COLUMNS // WALK_THREADS,), (WALK_THREADS,),  # noqa: E731
                         (a, np.int32(WALK_ROWS), np.int32(WALK_COLUMNS)))
    run()
    return [flushed_ns(run, then=a.sum if resident else None) / WALK_ROWS for _ in range(repeats)]


def walk_latencies() -> dict[str, Quantity]:
    return {name: _summary(walk_round_ns(resident), "ns", PARAMETERS[name][1])
            for name, resident in (("walk_dram_latency", False), ("walk_l2_latency", True))}


def crossing_mib(curve: dict[int, float], half: float) -> float:
    """The footprint (MiB) where the chase latency ``curve`` (footprint -> ns) first reaches ``half``, interpolated
    between the two footprints around the crossing; the largest footprint measured where none reaches it (a lower
    bound: it never extrapolates, which on a noisy curve, latencies read while other work ran, gave a negative
    size: the GPU suite's probe, 2026-11-29, bench/results/h200/gpu_tests_1129e.log)."""
    mib = sorted(curve)
    knee = next((m for m in mib if curve[m] >= half), None)
    if knee is None:
        return float(mib[-1])
    prev = mib[max(0, mib.index(knee) - 1)]
    if knee == prev or curve[prev] >= half:
        return float(knee)
    return prev + (knee - prev) * (half - curve[prev]) / (curve[knee] - curve[prev])


def l2_size(l2_ns: float, dram_ns: float, attribute: int) -> tuple[Quantity, dict, Curve]:
    """The footprint where the chase latency crosses half-way between the L2's and the DRAM's, and the chase
    latency at each footprint measured (the model reads the L2's hit fraction of random accesses off it)."""
    mib = [8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 128]
    curve = {m: statistics.median(chase_ns(m << 20, 4000, 3)) for m in mib}
    knee = crossing_mib(curve, (l2_ns + dram_ns) / 2)
    chase = Curve(tuple(float(m << 20) for m in mib), tuple(curve[m] for m in mib), *CURVES["l2_chase_latency"])
    return Quantity(knee * (1 << 20), "B", 0.0, PARAMETERS["l2_bytes"][1]), {"l2_attribute_bytes": attribute}, chase


def read_bandwidth(nbytes: int, passes: int, grid: int) -> list[float]:
    cp = cupy()
    a = cp.ones(nbytes // 4, np.float32)
    out = cp.zeros(1, np.float32)
    fn = function(SOURCE, "read_sum")
    n4 = np.int64(a.size // 4)
    times = _event_ms(lambda k: launch(fn, (grid,), (512,), (a, n4, np.int32(passes), out)))
    return [nbytes * passes / (t * 1e-3) / 1e9 for t in times]


def sm_read_bandwidth(grid: int = 1, nbytes: int = 1 << 28) -> list[float]:
    """DRAM read bandwidth (GB/s) of ``grid`` blocks of 512 threads, each alone on its SM (``grid`` at most the
    SMs): what that many SMs can pull with 4 independent 16-byte loads a thread in flight (``read_sum``)."""
    return read_bandwidth(nbytes, 1, grid)


def sm_grids(sms: int) -> list[int]:
    """The grids of the bandwidth-by-SMs curve: 1 to 32 by doubling, quarters of the SMs, and 2 and 4 blocks an SM."""
    return sorted({1, 2, 4, 8, 16, 32, sms // 4, sms // 2, (3 * sms) // 4, sms, 2 * sms, 4 * sms} - {0})


def bandwidth_samples(sms: int) -> dict[int, list[float]]:
    """Each grid of :func:`sm_grids`' read bandwidths (GB/s), repeat by repeat."""
    return {g: sm_read_bandwidth(g) for g in sm_grids(sms)}


def bandwidth_by_sms(sms: int, samples: dict[int, list[float]] | None = None, note: str = "") -> Curve:
    """The ``sm_read_bandwidth`` curve: each grid's median (of ``samples`` where given, else measured now)."""
    samples = samples or bandwidth_samples(sms)
    unit, method = CURVES["sm_read_bandwidth"]
    return Curve(tuple(float(g) for g in samples), tuple(statistics.median(v) for v in samples.values()), unit,
                 method + note)


def copy_bandwidth() -> list[float]:
    cp = cupy()
    a = cp.ones(1 << 28, np.float32)
    b = cp.empty_like(a)
    times = _event_ms(lambda k: cp.copyto(b, a))
    return [2 * a.nbytes / (t * 1e-3) / 1e9 for t in times]


def l2_dirty_bytes(copy_gbps: float, pairs: int = 21) -> list[float]:
    """Bytes of dirty lines the harness's flush (:func:`.timing.flush_l2`, a write of twice the L2) leaves in the
    L2: a copy of the L2's size timed after it, less the same copy after the flush and a read of its buffer
    (which writes the dirty lines back untimed), times the copy bandwidth; each pair in turn, after the hold."""
    cp = cupy()
    a = cp.ones(Device.current().l2_bytes // 4, np.float32)
    b = cp.empty_like(a)
    cp.copyto(b, a)
    start, stop = cp.cuda.Event(), cp.cuda.Event()

    def timed(clean: bool) -> float:
        timing.flush_l2(clean)
        timing.hold_gpu()
        start.record()
        cp.copyto(b, a)
        stop.record()
        stop.synchronize()
        return cp.cuda.get_elapsed_time(start, stop)
    return [(timed(False) - timed(True)) * 1e-3 * copy_gbps * 1e9 for _ in range(pairs)]


SCATTER_FOOTPRINTS = tuple(m << 20 for m in (2, 4, 8, 16, 24, 32, 40, 48, 64, 96, 128, 256, 512))
SCATTER_BLOCK, SCATTER_WORDS = 256, 4      # probe.cu: each thread handles SCATTER_WORDS words


def scattered_ns(kind: str, footprint: int, word: int = 4, repeats: int = REPEATS) -> list[float]:
    """Device ns of ``kind`` ("scatter": writes, "gather": reads) over every word of an array of ``footprint``
    bytes, each once in a scrambled order (``probe.cu``: a warp's 32 words land in 32 sectors), each repeat
    after a clean flush of the L2 (so nothing of the array is cached and no other buffer's dirty line is
    written back), less the same launch of no words: the accesses' own time."""
    cp = cupy()
    n = footprint // word
    bits = n.bit_length() - 1
    dtype = np.float32 if word == 4 else np.float64
    data = cp.ones(n, dtype)
    sink = cp.zeros(1, dtype)
    fn = function(SOURCE, f"{kind}_words_{word}")
    grid = -(-n // (SCATTER_BLOCK * SCATTER_WORDS))

    def args(count):
        base = (data, np.int64(count), np.int32(max(1, bits // 2)))
        return base + ((sink,) if kind == "gather" else ())

    def timed(count: int) -> float:
        return flushed_ns(lambda: launch(fn, (grid if count else 1,), (SCATTER_BLOCK,), args(count)))
    timed(n)
    return [timed(n) - timed(0) for _ in range(repeats)]


def flushed_ns(run, then=None) -> float:
    """Device ns of ``run()`` timed with events after a clean flush of the L2 (cold, no dirty line to write back);
    ``then()``, where given, runs untimed between the flush and the run (a read that brings an array back)."""
    cp = cupy()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    timing.flush_l2(clean=True)
    if then is not None:
        then()
    start.record()
    run()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop) * 1e6


def scattered_rate(kind: str, footprints=SCATTER_FOOTPRINTS, word: int = 4, note: str = "") -> Curve:
    """The ``scatter_rate`` or ``gather_rate`` curve: scattered accesses (one sector each) per ns, by footprint."""
    rates = [statistics.median(footprint // word / t for t in scattered_ns(kind, footprint, word))
             for footprint in footprints]
    unit, method = CURVES[f"{kind}_rate"]
    return Curve(tuple(float(f) for f in footprints), tuple(rates), unit, method + note)


def clock_ghz() -> list[float]:
    cycles = 20_000_000
    fn = function(SOURCE, "spin")
    times = _event_ms(lambda k: launch(fn, (1,), (1,), (np.int64(cycles),)), 5)
    return [cycles / (t * 1e6) for t in times]


def shared_latency() -> list[float]:
    cp = cupy()
    count, steps = 4096, 100000
    nxt = cp.asarray(_ring(count, 1)[0])
    out, cyc = cp.zeros(1, np.uint32), cp.zeros(1, np.int64)
    fn = function(SOURCE, "chase_shared")
    samples = []
    for _ in range(5):
        launch(fn, (1,), (256,), (nxt, np.int32(count), np.int32(steps), out, cyc), shared_mem=4 * count)
        samples.append(int(cyc.get()[0]) / steps)
    return samples


def barrier_cycles(warps: int, step: bool, steps: int = 20000) -> list[float]:
    """Cycles (clock64 of thread 0) per barrier of one block of ``warps`` warps: the barrier alone, or with
    ``step`` a DMM step (store a word, barrier, dependent load of a neighbour's word)."""
    cp = cupy()
    cycles, out = cp.zeros(1, np.int64), cp.zeros(1, np.uint32)
    fn = function(SOURCE, "barrier_steps")
    samples = []
    for _ in range(5):
        launch(fn, (1,), (32 * warps,), (np.int32(steps), np.int32(int(step)), cycles, out),
               shared_mem=2 * 4 * 32 * warps)
        samples.append(int(cycles.get()[0]) / steps)
    return samples


def barrier_costs(warps=(1, 2, 4, 8, 16, 32)) -> dict[str, dict]:
    """A block barrier's cycles, alone and as a DMM step, at each block size and as a line in warps
    (intercept: cycles; slope: cycles per warp), each a median over five runs of 20000 barriers."""
    out = {}
    for step in (False, True):
        per = {w: statistics.median(barrier_cycles(w, step)) for w in warps}
        slope, intercept = np.polyfit(list(per), list(per.values()), 1)
        out["dmm_step" if step else "barrier"] = {"cycles_at_warps": per, "intercept_cycles": float(intercept),
                                                  "cycles_per_warp": float(slope)}
    return out


def shared_stride_ms(stride: int, word: int, sms: int, iters: int = 4096) -> float:
    cp = cupy()
    out = cp.zeros(1, np.uint64)
    fn = function(SOURCE, f"shared_stride_{word}")
    grid, threads = sms * 2, 1024
    shared = 32 * stride * word
    return statistics.median(_event_ms(
        lambda k: launch(fn, (grid,), (threads,), (np.int32(stride), np.int32(iters), out), shared_mem=shared), 5))


def shared_banks(sms: int) -> dict[str, Quantity]:
    iters, grid, threads = 4096, sms * 2, 1024
    base = shared_stride_ms(1, 4, sms, iters)
    degrees = {s: shared_stride_ms(s, 4, sms, iters) / base for s in (1, 2, 4, 8, 16, 32, 64, 128)}
    banks = next((s for s in (2, 4, 8, 16, 32, 64) if degrees[2 * s] < 1.5 * degrees[s]), 128)
    wide = shared_stride_ms(1, 8, sms, iters) / base
    bank_bytes = 8 if wide < 1.5 else 4
    per_sm = grid * threads * iters * 4 / (base * 1e6) / sms      # bytes per ns per SM
    return {"banks": Quantity(banks, "1", 0.0, PARAMETERS["banks"][1] + ": time ratios "
                              + ", ".join(f"{s}: {d:.2f}" for s, d in degrees.items())),
            "bank_bytes": Quantity(bank_bytes, "B", 0.0, PARAMETERS["bank_bytes"][1] + f": ratio {wide:.2f}"),
            "shared_bandwidth": Quantity(per_sm, "B/ns/SM", 0.0, PARAMETERS["shared_bandwidth"][1])}


def _host_us(fn, arguments, count: int = 2000) -> float:
    """Host microseconds per launch through memtune's launch path; ``arguments()`` builds each launch's
    arguments, as the kernels do."""
    cp = cupy()
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    for _ in range(count):
        launch(fn, (1,), (32,), arguments())
    elapsed = time.perf_counter() - t0
    cp.cuda.Device().synchronize()
    return elapsed / count * 1e6


def launch_costs() -> dict[str, Quantity]:
    cp = cupy()
    empty, spin = function(SOURCE, "empty"), function(SOURCE, "spin")
    count = 2000
    x = cp.zeros(4, np.float32)
    kinds = {"none": (empty, tuple), "arrays": (function(SOURCE, "empty_arrays"), lambda: (x, x, x, x)),
             "scalars": (function(SOURCE, "empty_scalars"),
                         lambda: (np.int32(1), np.int32(2), np.int32(3), np.int32(4)))}
    for fn, arguments in kinds.values():
        _host_us(fn, arguments, 200)                 # warm: the first launches of a function cost more
    host, arrays, scalars = [], [], []
    for _ in range(REPEATS):                         # interleaved, so drift of the host hits all three alike
        t = {kind: _host_us(fn, arguments, count) for kind, (fn, arguments) in kinds.items()}
        host.append(t["none"])
        arrays.append((t["arrays"] - t["none"]) / 4)
        scalars.append((t["scalars"] - t["none"]) / 4)
    gap = []
    for _ in range(5):
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        # ~80 ms of spinning: the host has queued all the launches (2000 x ~5-9 us) before the GPU reaches them,
        # so the events time the device alone
        spin((1,), (1,), (np.int64(160_000_000),))
        start.record()
        for _ in range(count):
            empty((1,), (32,), ())
        stop.record()
        stop.synchronize()
        gap.append(cp.cuda.get_elapsed_time(start, stop) * 1e3 / count)
    return {"launch_overhead": _summary(host, "us", PARAMETERS["launch_overhead"][1]),
            "launch_per_array": _summary(arrays, "us", PARAMETERS["launch_per_array"][1]),
            "launch_per_scalar": _summary(scalars, "us", PARAMETERS["launch_per_scalar"][1]),
            "launch_gap": _summary(gap, "us", PARAMETERS["launch_gap"][1])}


def timed_empty_runs(counts=(1, 2, 4, 8), fits: int = 5) -> tuple[list[float], list[float]]:
    """Runs of 1 to 8 empty kernels timed by memtune's harness (:func:`.timing.time_call`: flush, hold, events),
    each count's median of 21, fitted as a line in the count ``fits`` times: (intercepts, slopes), in us. The
    slope is a launch's device gap again; the intercept is what the harness's timing adds to every run once
    (its events and the first launch's start)."""
    empty = function(SOURCE, "empty")
    intercepts, slopes = [], []
    for _ in range(fits):
        per = [statistics.median(timing.time_call(lambda k=k: [launch(empty, (1,), (32,), ()) for _ in range(k)], 21))
               for k in counts]
        slope, intercept = np.polyfit(counts, np.array(per) * 1e3, 1)
        intercepts.append(float(intercept))
        slopes.append(float(slope))
    return intercepts, slopes


def timing_intercept(fits: tuple[list[float], list[float]] | None = None, note: str = "") -> Quantity:
    """The ``timing_intercept`` parameter from :func:`timed_empty_runs` (run here unless ``fits`` is given)."""
    intercepts, _ = fits or timed_empty_runs()
    return _summary(intercepts, "us", PARAMETERS["timing_intercept"][1] + note)


def block_costs(sms: int) -> dict[str, Quantity]:
    """SM time per empty block at 1 to 32 warps a block (200 waves at full occupancy), fitted as a line in warps."""
    empty = function(SOURCE, "empty")
    warps = np.array([1, 2, 4, 8, 16, 32])
    samples = []          # per repeat: ns per block per SM at each block size
    per_size = {}
    for w in warps:
        grid = sms * min(32, 64 // w) * 200
        per_size[w] = [t * 1e6 / (grid / sms) for t in _event_ms(lambda k: launch(empty, (grid,), (32 * w,), ()), 5)]
    for r in range(5):
        samples.append(np.polyfit(warps, [per_size[w][r] for w in warps], 1))
    slope, intercept = zip(*samples)
    return {"block_launch": _summary(intercept, "ns", PARAMETERS["block_launch"][1]),
            "warp_launch": _summary(slope, "ns", PARAMETERS["warp_launch"][1])}


def atomic_interval(sms: int) -> list[float]:
    cp = cupy()
    counter, out = cp.zeros(1, np.uint32), cp.zeros(1, np.uint32)
    fn = function(SOURCE, "ticket")
    grid, warps, count = sms * 4, 8, 64
    return [t * 1e6 / (grid * warps * count)
            for t in _event_ms(lambda k: launch(fn, (grid,), (32 * warps,), (counter, np.int32(count), out)), 5)]


LOADED_MODES = {"copy": 0, "ticket": 1, "l2_load": 2, "barriers": 3}
LOADED_VECTORS = 4                    # probe.cu's loaded_rounds: 16-byte vectors a thread a chunk


def loaded_rounds(mode: str, threads: int, grid: int, nbytes: int = 1 << 28, write: bool = True,
                  repeats: int = 5) -> tuple[list[float], list[float]]:
    """(cycles per timed operation, ms per launch) of probe.cu's ``loaded_rounds``: ``grid`` blocks of ``threads``
    copy ``nbytes`` (twice the L2 and more, so from DRAM; ``write`` False: read and sum them) in chunks of
    ``threads`` x 4 16-byte vectors, each chunk after one ``mode`` operation (``LOADED_MODES``) that the block's
    thread 0 times with clock64."""
    if mode not in LOADED_MODES:
        raise ValueError(f"mode must be one of {', '.join(LOADED_MODES)}, got {mode!r}")
    cp = cupy()
    chunk = threads * LOADED_VECTORS * 16
    chunks = nbytes // chunk
    a, b = cp.ones(chunks * chunk // 4, np.float32), cp.empty(chunks * chunk // 4, np.float32)
    # a row of (cycles, operations) a launch, the warm-up's first, read back after the timing
    counter, out, cycles = cp.zeros(64, np.uint32), cp.zeros(1, np.uint32), cp.zeros((repeats + 1, 2), np.int64)
    fn = function(SOURCE, "loaded_rounds")
    launched = []

    def run(k):
        launch(fn, (grid,), (threads,), (a, b, np.int64(chunks), np.int32(LOADED_MODES[mode]), np.int32(write),
                                         counter, cycles[len(launched)], out))
        launched.append(k)
    times = _event_ms(run, repeats)
    return [int(c) / int(n) if n else 0.0 for c, n in cycles.get()[1:]], times


BARRIER_INTERVALS = ("rounds", "first_barrier", "stores", "second_barrier")   # probe.cu's barrier_waits, in order


def barrier_waits(warps: int, steps: int, grid: int, nbytes: int = 1 << 28,
                  repeats: int = 5) -> tuple[list[dict[str, float]], list[float]]:
    """(cycles per warp and chunk of each of ``BARRIER_INTERVALS``, a dict a launch; ms per launch) of probe.cu's
    ``barrier_waits``: ``grid`` blocks of ``warps`` warps copy ``nbytes`` of float32 through shared memory in chunks
    of ``steps`` dependent load rounds of a word a thread, a barrier, the stores, a barrier (the transpose's tile,
    ``steps`` = its rows over the block's warps). A barrier's mean wait is how much later than a warp's own its
    block's slowest warp arrives."""
    if not 1 <= warps <= 32 or steps < 1:
        raise ValueError(f"warps must be 1-32 and steps at least 1, got {warps} and {steps}")
    cp = cupy()
    threads = 32 * warps
    chunks = nbytes // (4 * threads * steps)
    a, b = cp.ones(chunks * threads * steps, np.float32), cp.empty(chunks * threads * steps, np.float32)
    cycles = cp.zeros((repeats + 1, len(BARRIER_INTERVALS) + 1), np.int64)
    fn = function(SOURCE, "barrier_waits")
    launched = []

    def run(k):
        launch(fn, (grid,), (threads,), (a, b, np.int64(chunks), np.int32(steps), cycles[len(launched)]),
               shared_mem=4 * threads * steps)
        launched.append(k)
    times = _event_ms(run, repeats)
    rows = [dict(zip(BARRIER_INTERVALS, (int(x) / int(row[-1]) for x in row[:-1]))) for row in cycles.get()[1:]]
    return rows, times


def store_wait(sms: int, warps=(1, 2, 4, 8, 16, 32), nbytes: int = 1 << 28, repeats: int = 5) -> Quantity:
    """ns a warp's global store waits on average while every SM streams: ``barrier_waits`` at one round a chunk on
    a full grid (2048 threads an SM) for each block size, its store phase (every warp's, from the barrier that ends
    the loads to the warp's stores issued) against the harmonic number of the block's warps, a line whose slope is
    that mean (a block's warps all leave the phase when its slowest store is taken: they meet the next barrier
    together). Cycles are turned into time at the clock the launches ran at, their cycles a chunk over their
    event time a chunk (on the H200 1.43-1.65 GHz against 1.98 spinning: the SMs slow while the memory streams)."""
    per_repeat = [[] for _ in range(repeats)]
    for w in warps:
        grid = sms * min(32, 64 // w)
        cycles, times = barrier_waits(w, 1, grid, nbytes, repeats)
        chunks_per_block = nbytes // (4 * 32 * w) / grid
        for r, (c, ms) in enumerate(zip(cycles, times)):
            ns_per_cycle = ms * 1e6 / chunks_per_block / sum(c.values())
            per_repeat[r].append(c["stores"] * ns_per_cycle)
    slopes = [np.polyfit([harmonic(w) for w in warps], phase, 1)[0] for phase in per_repeat]
    return _summary(slopes, "ns", OPTIONAL_PARAMETERS["store_wait"][1])


def flag_round_trip() -> list[float]:
    cp = cupy()
    flags = cp.zeros(64, np.uint32)
    fn = function(SOURCE, "ping_pong")
    rounds = 20000

    def run(k):
        flags.fill(0)
        launch(fn, (2,), (32,), (flags, np.int32(rounds)))
    return [t * 1e6 / rounds for t in _event_ms(run, 5)]


def chain_rate(name: str, sms: int, iters: int, per_iteration: int, *args) -> list[float]:
    """10^9 operations a second of probe.cu's kernel ``name`` of independent chains (``per_iteration`` operations a
    thread an iteration, ``iters`` iterations; ``args`` after the count), 256-thread blocks, eight an SM: one sample a
    timed launch."""
    fn = function(SOURCE, name)
    grid, threads = sms * 8, 256
    times = _event_ms(lambda k: launch(fn, (grid,), (threads,), (np.int32(iters), *args)), 5)
    return [grid * threads * iters * per_iteration / (t * 1e-3) / 1e9 for t in times]


def fma_rate(dtype: str, sms: int) -> list[float]:
    """GFLOP/s of eight independent FMA chains a thread (two flops an FMA)."""
    return chain_rate(f"fma_{dtype}", sms, 4096 if dtype == "f32" else 512, 8 * 2, cupy().zeros(1, np.float64))


def alu_rate(sms: int) -> list[float]:
    """10^9 funnel shifts a second of probe.cu's ``alu_shf``, eight independent chains a thread: the ALU pipe's
    throughput (the integer adds, logic, selects and comparisons that sass_mix counts there)."""
    return chain_rate("alu_shf", sms, 4096, 8, np.uint32(3), cupy().zeros(1, np.uint32))


def fma_latency(dtype: str, iters: int = 20000) -> list[float]:
    """Cycles (clock64) per fused multiply-add of one thread's single dependent chain of 16 x ``iters``."""
    cp = cupy()
    numpy_type = np.float32 if dtype == "f32" else np.float64
    out, cycles = cp.zeros(1, numpy_type), cp.zeros(1, np.int64)
    fn = function(SOURCE, f"fma_latency_{dtype}")
    samples = []
    for _ in range(5):
        launch(fn, (1,), (1,), (np.int32(iters), numpy_type(0.999), numpy_type(0.001), out, cycles))
        samples.append(int(cycles.get()[0]) / (16 * iters))
    return samples


# FMAs of probe.cu's code_loop_<N>: 4 KB to 256 KB, in steps of 4-8 KB around the instruction cache's 32 KB
CODE_LOOPS = (256, 512, 1024, 1536, 1792, 2048, 2304, 2560, 3072, 3584, 4096, 8192, 16384)


def code_loop_bytes(n: int) -> int:
    """The code of probe.cu's ``code_loop_<n>``: its n FMAs, an instruction each."""
    return INSTRUCTION_BYTES * n


def code_loop_cycles(n: int, warps: int, grid: int = 1, instructions: int = 1 << 21) -> list[float]:
    """Cycles (clock64) per instruction of each warp of ``grid`` blocks of ``warps`` warps, every warp running a loop
    of ``n`` FMAs (probe.cu's ``code_loop_<n>``, 16 ``n`` bytes of code) about ``instructions`` times in all: one
    sample a warp. Several warps of a scheduler share its issue (four schedulers an SM), so the floor is
    warps / 4 per SM's share of them, one cycle where a block's warps are four or fewer."""
    if n not in CODE_LOOPS:
        raise ValueError(f"code loop of {n} FMAs: probe.cu has {CODE_LOOPS}")
    cp = cupy()
    iters = max(4, instructions // n)
    out, cycles = cp.zeros(1, np.float32), cp.zeros(grid * warps, np.int64)
    fn = function(SOURCE, f"code_loop_{n}")
    launch(fn, (grid,), (32 * warps,), (np.int32(1), np.float32(0.999), np.float32(0.001), out, cycles))   # loads it
    launch(fn, (grid,), (32 * warps,), (np.int32(iters), np.float32(0.999), np.float32(0.001), out, cycles))
    return [int(c) / (iters * n) for c in cycles.get()]


def lone_loop_cycles(sms: int) -> Curve:
    """The model's code-fetch curve (CURVES' ``lone_loop_cycles``) over CODE_LOOPS' sizes: a block of one warp on
    every SM, the warps' median."""
    lone = tuple(statistics.median(code_loop_cycles(n, 1, sms)) for n in CODE_LOOPS)
    return Curve(tuple(float(code_loop_bytes(n)) for n in CODE_LOOPS), lone, *CURVES["lone_loop_cycles"])


def attributes() -> dict[str, Quantity]:
    cp = cupy()
    a = cp.cuda.Device().attributes
    pick = {"sms": "MultiProcessorCount", "threads_per_sm": "MaxThreadsPerMultiProcessor",
            "blocks_per_sm": "MaxBlocksPerMultiprocessor", "registers_per_sm": "MaxRegistersPerMultiprocessor",
            "shared_per_sm": "MaxSharedMemoryPerMultiprocessor", "shared_per_block": "MaxSharedMemoryPerBlockOptin",
            "reserved_shared_per_block": "ReservedSharedMemoryPerBlock", "max_threads_per_block": "MaxThreadsPerBlock",
            "ecc": "EccEnabled"}
    out = {}
    for key, attr in pick.items():
        value = a.get(attr, 1024 if key == "reserved_shared_per_block" else 0)
        out[key] = Quantity(float(value), PARAMETERS[key][0], 0.0, f"attribute {attr}")
    return out


def kernel_resources(functions) -> dict[str, KernelResources]:
    """Registers, static shared and local memory of each named kernel function, as CuPy compiled it. The
    compilations (most of a first probe's time) run in threads: NVRTC works without the interpreter's lock."""
    from concurrent.futures import ThreadPoolExecutor

    device = cupy().cuda.Device().id

    def resources(item):
        cupy().cuda.Device(device).use()
        fn = function(*item)
        return item[1], KernelResources(int(fn.num_regs), int(fn.shared_size_bytes), int(fn.local_size_bytes))

    with ThreadPoolExecutor(max_workers=min(16, os.cpu_count() or 1)) as pool:
        return dict(pool.map(resources, sorted(functions)))


def device_name() -> str:
    return Device.current().name


def probe(functions=(), log=lambda message: None) -> MachineFile:
    """Every parameter of the physical model, measured on the current GPU."""
    values = attributes()
    sms = int(values["sms"].value)
    values["copy_bandwidth"] = _summary(copy_bandwidth(), "GB/s", PARAMETERS["copy_bandwidth"][1])
    values["dram_read_bandwidth"] = _summary(read_bandwidth(1 << 30, 1, sms * 4), "GB/s",
                                             PARAMETERS["dram_read_bandwidth"][1])
    curves = {"sm_read_bandwidth": bandwidth_by_sms(sms)}
    log("probe: bandwidth")
    values.update(global_latencies())
    values.update(walk_latencies())
    l2_attr = cupy().cuda.Device().attributes.get("L2CacheSize", 0)
    values["l2_bytes"], notes, curves["l2_chase_latency"] = l2_size(values["l2_latency"].value,
                                                                     values["dram_latency"].value, l2_attr)
    values["l2_bandwidth"] = _summary(read_bandwidth(int(values["l2_bytes"].value) // 4 // 4096 * 4096, 20, sms * 4),
                                      "GB/s", PARAMETERS["l2_bandwidth"][1])
    values["l2_dirty_bytes"] = _summary(l2_dirty_bytes(values["copy_bandwidth"].value), "B",
                                        PARAMETERS["l2_dirty_bytes"][1])
    for kind in ("scatter", "gather"):
        curves[f"{kind}_rate"] = scattered_rate(kind)
    curves["lone_loop_cycles"] = lone_loop_cycles(sms)
    log("probe: latencies and L2")
    values["clock"] = _summary(clock_ghz(), "GHz", PARAMETERS["clock"][1])
    values["shared_latency"] = _summary(shared_latency(), "cycle", PARAMETERS["shared_latency"][1])
    values.update(shared_banks(sms))
    log("probe: shared memory")
    values.update(launch_costs())
    values["timing_intercept"] = timing_intercept()
    values.update(block_costs(sms))
    values["atomic_interval"] = _summary(atomic_interval(sms), "ns", PARAMETERS["atomic_interval"][1])
    values["flag_round_trip"] = _summary(flag_round_trip(), "ns", PARAMETERS["flag_round_trip"][1])
    values["store_wait"] = store_wait(sms)
    values["fma_f32"] = _summary(fma_rate("f32", sms), "GFLOP/s", PARAMETERS["fma_f32"][1])
    values["fma_f64"] = _summary(fma_rate("f64", sms), "GFLOP/s", PARAMETERS["fma_f64"][1])
    for dtype, name in (("f32", "fma_latency"), ("f64", "fma_latency_f64")):
        values[name] = _summary(fma_latency(dtype), "cycle", PARAMETERS[name][1])
    log("probe: launches, flags, arithmetic")
    ordered = {k: values[k] for k in (*PARAMETERS, *OPTIONAL_PARAMETERS)}
    return MachineFile(device_name(), ordered, kernel_resources(functions), "probe", notes, curves)


def nvcc_cubin(filename: str, arch: str, cubin: str, *flags: str):
    """Compile ``kernels/<filename>`` with nvcc for ``arch`` into ``cubin`` (its headers from the same folder), with
    ``flags`` added; the finished process (ptxas's report in its stderr). No GPU; RuntimeError naming the file and
    nvcc's last line where it fails."""
    import subprocess
    from importlib import resources as files

    folder = files.files("memtune.kernels")
    done = subprocess.run(["nvcc", "-std=c++17", f"-arch={arch}", "-cubin", f"-I{folder}", *flags, "-o", cubin,
                           str(folder / filename)], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"nvcc {filename}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'failed'}")
    return done


def ptxas_resources(filename: str, arch: str = "sm_90") -> dict[str, KernelResources]:
    """Registers, static shared and local memory of every kernel function of ``kernels/<filename>`` as ptxas
    reports them compiling the whole file with nvcc for ``arch`` (no GPU). For the kernels no probe reads (the
    shaped kernels: hundreds of functions a probe would spend minutes compiling). Whole-file numbers are close to
    CuPy's one-kernel compilations but not always equal (on sm_90 with nvcc 13.0: 98 registers against 95 for
    tiles_f32_f32_sat_w8_r8_v4, static shared 24 bytes more)."""
    import re
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        done = nvcc_cubin(filename, arch, f"{tmp}/all.cubin", "-Xptxas", "-v")
    out, name, local = {}, None, 0
    for line in done.stderr.splitlines():
        if m := re.search(r"Compiling entry function '([^']+)'", line):
            name, local = m[1], 0
        elif (m := re.search(r"(\d+) bytes stack frame", line)) and name:
            local = int(m[1])
        elif (m := re.search(r"Used (\d+) registers.*?(?:(\d+) bytes smem)?\s*$", line)) and name:
            out[name], name = KernelResources(int(m[1]), int(m[2] or 0), local), None
    return out


def plan_functions(size: int = 1 << 20) -> set[tuple[str, str]]:
    """(source, function) of every compiled launch of every kernel's plan, over its space, both dtypes
    and its cases."""
    from . import KERNELS

    out = set()
    for kernel in KERNELS.values():
        if kernel.peer or kernel.memory == "shared":
            continue
        cases = [{"v": v} for v in range(1, 8)] if "v" in kernel.default_case else [dict(kernel.default_case)]
        for dtype in ("float32", "float64"):
            for case in cases:
                for point in kernel.full_space.points():
                    plan = kernel.plan(size, dtype, point, case)
                    out.update((launch.source, launch.function) for launch in plan.launches if launch.source)
    return out

"""HMM kernels: offline permutation in global memory (000 ch. 5).

``hmm_permutation_d_designated`` (b[p[i]] = a[i]) and ``_s_designated``
(b[i] = a[q[i]]); ``hmm_transpose`` (w x w tiles in the diagonal arrangement);
``hmm_rowwise_permutation``; ``hmm_columnwise_permutation`` (transpose,
row-wise, transpose); ``hmm_scheduled_permutation`` (row-wise, column-wise,
row-wise from :func:`costmodel.schedules.hmm_schedule`). Any n̄ that is a
multiple of 32; float32 and float64. The row-wise kernels take the schedule
arrays in the narrowest unsigned type that holds 0..n̄−1.
"""
from __future__ import annotations

import functools
import math
import re

import numpy as np
from scipy.stats import binom

from ..costmodel import permutations as perms
from ..costmodel import schedules
from ..costmodel.errors import ParameterError
from ..costmodel.physical.launch import Access, Array, Launch, Plan, Scalar
from ..costmodel.physical.model import permutation_stages
from .base import Inputs, Kernel, cdiv, cupy, dtype_of, grid_stride, inverse_on_device, suffix

SOURCE = "hmm_permutation.cu"
GRID = (0, 132, 264, 528, 1056, 2112, 4224)       # 0: one block per piece of work
MODES = ("conflict-free", "designated", "designated-rap")   # how a row is permuted in shared memory
MODE_CODE = {"conflict-free": "cf", "designated": "dd", "designated-rap": "dr"}   # in the kernels' names
INDEX_SUFFIX = {np.dtype(np.uint8): "u8", np.dtype(np.uint16): "u16", np.dtype(np.uint32): "u32"}


def _side(size: int) -> int:
    nbar = perms.square_side(size)
    if nbar % 32:
        raise ParameterError("size", f"n̄ = {nbar} must be a multiple of 32")
    return nbar


def _random_data(size, dtype, seed):
    return np.random.default_rng(seed + 1_000_003).standard_normal(size).astype(dtype_of(dtype))


class _Scatter(Kernel):
    """b[p[i]] = a[i] of random data for a named permutation (or a .npy file), checked against numpy; each
    kernel binds the arrays it reads besides a and p."""

    default_case = {"perm": "random"}
    case_values = {"perm": perms.NAMES}

    def _inputs(self, size, dtype, seed, perm) -> Inputs:
        cp = cupy()
        p = perms.resolve(perm, size, seed)
        a = _random_data(size, dtype, seed)
        return self.bind({"a": cp.asarray(a), "p": cp.asarray(p)}, dtype, perm=perm).with_host(seed, a=a, p=p)

    def reference(self, inputs):
        out = np.empty_like(inputs.host["a"])
        out[inputs.host["p"]] = inputs.host["a"]
        return out


class Designated(_Scatter):
    chapter = "hmm_permutation"
    tunables = {"threads": (128, 256, 512, 1024), "ept": (1, 2, 4, 8), "d": GRID}
    defaults = {"threads": 256, "ept": 4, "d": 0}
    threads = "threads"

    def model_values(self, size, params, case, limits):
        return {"n": size, "Dw": _distribution(case.get("perm", "random"), size, self.scatter)}

    def __init__(self, name: str, scatter: bool):
        self.name, self.scatter = name, scatter

    def launch_plan(self, size, dtype, params, case):
        """One launch; the casual side moves one 32-byte sector per distinct sector a warp writes, or a block
        reads: a block's threads load their ``threads * ept`` consecutive positions together, and the SM's L1
        fetches a sector once for all of its warps (a store goes through to the L2 warp by warp)."""
        e = np.dtype(dtype).itemsize
        threads, ept, d = params["threads"], params["ept"], params["d"]
        grid = d or cdiv(size, threads * ept)
        casual = _distribution(case.get("perm", "random"), size, self.scatter, 32 // e,
                               None if self.scatter else threads * ept) * 32
        reuse = _reuse(case.get("perm", "random"), size, self.scatter, 32 // e) * casual / size
        data = Access("a", casual if not self.scatter else size * e, casual=not self.scatter, reuse=reuse)
        out = Access("out", casual if self.scatter else size * e, write=True, casual=self.scatter, reuse=reuse)
        rounds = cdiv(size, grid * threads * ept) * (1 if self.scatter else 2)   # a gather waits for its index first
        return Plan({"a": size * e, "idx": 4 * size, "out": size * e},
                    (Launch(f"{'scatter' if self.scatter else 'gather'}_{suffix(dtype)}_e{ept}", grid, threads,
                            args=(Array("a"), Array("idx"), Array("out"), Scalar(size, "int64")),
                            accesses=(Access("idx", 4 * size), data, out), rounds=rounds,
                            working=cdiv(size, threads * ept), source=SOURCE),))

    def bind(self, data, dtype, perm="given") -> Inputs:
        cp = cupy()
        n = data["a"].size
        # a scatter writes b[p[i]]; a gather reads a[p^-1[i]]
        idx = data["p"].astype(np.int32) if self.scatter else inverse_on_device(data["p"], np.int32)
        return Inputs(n, dtype, 0, {"a": data["a"], "idx": idx, "out": cp.empty(n, dtype_of(dtype))}, {"perm": perm})


# From this size on, a random permutation is priced by its expected D_w rather than by counting the
# seed's: over 200 seeds at 2^16 the count's relative spread about it is 3.3e-4 (w = 32; 7.7e-5 at w = 8),
# falling as 1/sqrt(n), while counting it at 2^28 takes half a minute and 6 GB.
RANDOM_BY_EXPECTATION = 1 << 16


def _unnamed(perm: str) -> bool:
    """A caller's own permutation on the device (``given``): no name or file to count it from, so priced as a
    random one."""
    return perm not in perms.NAMES and not perm.endswith(".npy")


@functools.lru_cache(maxsize=None)     # a number per (permutation, size, side, group): few, and slow to count
def _distribution(perm: str, size: int, scatter: bool, w: int = 32, group: int | None = None) -> float:
    """D_w of the permutation a designated kernel writes by (scatter) or reads by (gather), or with ``group`` the
    address groups of w words over consecutive groups of that many positions; a caller's own permutation on the
    device (``given``) is priced as a random one, by the expectation, and so is a large random one
    (``RANDOM_BY_EXPECTATION``)."""
    group = group or w
    if _unnamed(perm) or perm == "random" and size >= RANDOM_BY_EXPECTATION:
        return perms.expected_group_distribution(size, group, w)
    p = perms.resolve(perm, size, 0)
    return perms.group_distribution(p if scatter else perms.inverse(p), group, w)


@functools.lru_cache(maxsize=None)
def _reuse(perm: str, size: int, scatter: bool, w: int) -> float:
    """Mean positions between two touches of one sector of w words by the permutation a designated kernel writes
    by (scatter) or reads by (gather): its whole array's worth (size / w) for a random one or a caller's own."""
    if _unnamed(perm) or perm == "random":
        return size / w
    p = perms.resolve(perm, size, 0)
    return perms.sector_reuse(p if scatter else perms.inverse(p), w)


def fitting_tile(nbar: int, tile: int) -> int:
    """The transpose tile actually used: a 64-wide tile needs n̄ to be a multiple of 64."""
    return tile if nbar % tile == 0 else 32


def _tile_as_run(size: int, params: dict) -> dict:
    """A configuration with a transpose ``tile`` as it runs at ``size`` (:func:`fitting_tile`)."""
    tile = params.get("tile")
    return {**params, "tile": fitting_tile(math.isqrt(size), tile)} if tile else params


def transpose_launch(dtype: str, nbar: int, rows: int, d: int, tile: int, src: str, dst: str) -> Launch:
    """One diagonal-arrangement transpose: a tile in one round of loads, through shared memory, out. Each tile ends
    with the block's warps storing it and a barrier: a store phase the block leaves with its slowest warp's store
    (``store_barriers``, priced at the probed store wait), which is what makes 32-warp blocks slower than 4- and
    8-warp ones at the same bytes in flight (bench/results/h200/barrier_waits/: probe.cu's barrier_waits is this
    loop, a word a thread a round)."""
    e = np.dtype(dtype).itemsize
    tile = fitting_tile(nbar, tile)
    tiles = (nbar // tile) ** 2
    grid, per_block = grid_stride(tiles, d)
    wavefronts = 2 * tile * tile // 32 * max(1, e // 4)          # a warp's 8-byte words take two wavefronts
    steps = cdiv(tile, rows)         # the row loop runs blockDim.y apart and is not unrolled: a round each
    return Launch(f"transpose_{suffix(dtype)}_t{tile}", grid, (32, rows),
                  args=(Array(src), Array(dst), Scalar(nbar, "int32")),
                  accesses=(Access(src, nbar * nbar * e), Access(dst, nbar * nbar * e, write=True)),
                  rounds=per_block * steps, shared_wavefronts=per_block * wavefronts,
                  shared_rounds=2 * per_block * steps, store_barriers=per_block, working=tiles, source=SOURCE)


def rowwise_launch(dtype: str, nbar: int, mode: str, threads: int, d: int, src: str, dst: str, index: str,
                   banks: int = 32) -> Launch:
    """One row-wise permutation: a row per block through shared memory. Conflict-free rows read their S_i and D_i
    (``<index>_s``, ``<index>_d``); designated rows the one permutation ``index``, passed twice.

    A thread's load loops wait out each load before the shared store that follows it: ``#pragma unroll 4`` on a
    loop whose trip count nvcc cannot compute (``int j`` stepping by ``blockDim.x``) unrolls it with an exit
    branch between the copies (the PTX: LDG, STS, branch, four times), so no load is issued ahead of the one
    before it, as in the bucketed permutation. A round an iteration: a row of 4096 on 128 threads waits 32 rounds,
    not 8 (on the H100, 2^24 on d = 132 blocks of 128 threads measures 1.57 ms against 0.42 on d = 4224, where the
    four loads a round priced 0.66).

    No ``store_barriers``, though a row ends with the block's stores and a barrier as a transpose's tile does: pricing
    its phase so was tried and not kept. It took the H200's held-out scheduled permutations (three of these and two
    transposes) from measured / predicted 1.00 to 0.92 (5376 configurations), where the transposes alone went from
    9.6 to 6.9 % (2026-11-28). Why a row's phase does not show the wait is not measured: its stores are a loop over
    the whole row (8-32 a thread, four-way unrolled), not the word or two a thread a step of the probe and the
    transposes."""
    e = np.dtype(dtype).itemsize
    index_dtype = np.dtype(schedules.narrowest_index_dtype(nbar))
    ie = index_dtype.itemsize
    (grid, rows), block = grid_stride(nbar, d), min(threads, nbar)
    warps_per_row = cdiv(nbar, 32)
    if mode == "conflict-free":
        names = (index + "_s", index + "_d")
        indices = tuple(Access(name, nbar * nbar * ie) for name in names)
        wavefronts, steps = 4 * warps_per_row, 2
    else:
        stages = permutation_stages(nbar, banks, "rap" if mode == "designated-rap" else "plain")
        names, indices = (index, index), (Access(index, nbar * nbar * ie),)
        wavefronts, steps = (1 + stages) * warps_per_row, 1
    wavefronts *= max(1, e // 4)
    return Launch(f"rowwise_{MODE_CODE[mode]}_{suffix(dtype)}_{INDEX_SUFFIX[index_dtype]}",
                  grid, block, dynamic_shared=nbar * e * (2 if mode == "conflict-free" else 1),
                  args=(Array(src), Array(dst), *(Array(n) for n in names), Scalar(nbar, "int32")),
                  accesses=(Access(src, nbar * nbar * e),) + indices + (Access(dst, nbar * nbar * e, write=True),),
                  rounds=rows * steps * cdiv(nbar, block), shared_wavefronts=rows * wavefronts,
                  shared_rounds=rows * (steps + 1), working=nbar, source=SOURCE)


def _index_arrays(nbar: int, names, mode: str) -> dict:
    ie = np.dtype(schedules.narrowest_index_dtype(nbar)).itemsize
    keys = [f"{n}_{x}" for n in names for x in "sd"] if mode == "conflict-free" else list(names)
    return {k: nbar * nbar * ie for k in keys}


class Transpose(Kernel):
    name = "hmm_transpose"
    chapter = "hmm_permutation"
    square = True
    side_multiple = 32
    tunables = {"rows": (4, 8, 16, 32), "d": GRID, "tile": (32, 64)}
    defaults = {"rows": 8, "d": 0, "tile": 32}
    threads = "32 * rows"
    shared = "tile * (tile + 1) * itemsize"

    def _inputs(self, size, dtype, seed) -> Inputs:
        a = _random_data(size, dtype, seed)
        return self.bind({"a": cupy().asarray(a)}, dtype).with_host(seed, a=a)

    def bind(self, data, dtype, **case) -> Inputs:
        n = data["a"].size
        _side(n)
        return Inputs(n, dtype, 0, {"a": data["a"].ravel(), "out": cupy().empty(n, dtype_of(dtype))}, {})

    def as_run(self, size, params):
        return _tile_as_run(size, params)

    def launch_plan(self, size, dtype, params, case):
        e = np.dtype(dtype).itemsize
        return Plan({"a": size * e, "out": size * e},
                    (transpose_launch(dtype, math.isqrt(size), params["rows"], params["d"], params["tile"], "a", "out"),))

    def reference(self, inputs):
        nbar = inputs.side
        return inputs.host["a"].reshape(nbar, nbar).T.ravel().copy()


class RowWise(Kernel):
    """Row-wise permutation: every row i permuted by its own random permutation (the schedule's steps)."""

    chapter = "hmm_permutation"
    square = True
    side_multiple = 32
    tunables = {"threads": (128, 256, 512, 1024), "mode": MODES, "d": GRID, "rows": (8,)}
    defaults = {"threads": 512, "mode": "designated", "d": 0, "rows": 8}
    searched = ("threads", "mode", "d")
    threads = "threads"

    def __init__(self, name: str, columns: bool):
        self.name, self.columns = name, columns

    def launch_plan(self, size, dtype, params, case):
        nbar, e = math.isqrt(size), np.dtype(dtype).itemsize
        arrays = {"a": size * e, "out": size * e, **_index_arrays(nbar, ["p"], params["mode"])}
        rowwise = functools.partial(rowwise_launch, dtype, nbar, params["mode"], params["threads"], params["d"])
        if not self.columns:
            return Plan(arrays, (rowwise("a", "out", "p"),))
        arrays.update(tmp=size * e, tmp2=size * e)   # column j permuted by dest[j]: transpose, row-wise, transpose
        return Plan(arrays, (transpose_launch(dtype, nbar, params["rows"], 0, 32, "a", "tmp"),
                             rowwise("tmp", "tmp2", "p"),
                             transpose_launch(dtype, nbar, params["rows"], 0, 32, "tmp2", "out")))

    def _inputs(self, size, dtype, seed) -> Inputs:
        cp = cupy()
        nbar = _side(size)
        rng = np.random.default_rng(seed)
        dest = np.argsort(rng.random((nbar, nbar)), axis=1)   # row i: j -> dest[i, j]
        rs = schedules.row_schedule(cp.asarray(dest), 32, xp=cp)
        itype = schedules.narrowest_index_dtype(nbar)
        a = _random_data(size, dtype, seed)
        arrays = {"a": cp.asarray(a), "out": cp.empty(size, dtype_of(dtype)), "tmp": cp.empty(size, dtype_of(dtype)),
                  "tmp2": cp.empty(size, dtype_of(dtype)),
                  "p_s": cp.asarray(rs.s.astype(itype)), "p_d": cp.asarray(rs.d.astype(itype)),
                  "p": rs.perm.astype(itype)}
        return Inputs(size, dtype, seed, arrays, {}, {"a": a, "dest": dest})

    def reference(self, inputs):
        nbar, dest = inputs.side, inputs.host["dest"]
        x = inputs.host["a"].reshape(nbar, nbar)
        if self.columns:
            return schedules.apply_rows(x.T, dest).T.ravel().copy()
        return schedules.apply_rows(x, dest).ravel()


class Scheduled(_Scatter):
    """The scheduled permutation: five kernels (row-wise, transpose, row-wise, transpose, row-wise).

    Measured on the H100 (2^26 float32, cold L2): the five passes take 1.18 ms, 6.5 copies of the data
    (copy 0.181 ms); a row-wise pass alone is about 0.27 ms (1.5 copies: the index read and the
    designated writes into shared memory). A column-wise kernel in place of transpose, row-wise,
    transpose (a block holding 16 bytes' worth of adjacent columns whole in shared memory, each thread
    reading one row's 16 bytes) ran its pass in 0.67 ms, 3.7 copies, so three passes took 1.20 ms: the
    row-strided 16-byte accesses cost more than the two transposes they save. Not kept.
    """

    name = "hmm_scheduled_permutation"
    chapter = "hmm_permutation"
    square = True
    side_multiple = 32
    tunables = {"threads": (128, 256, 512, 1024), "mode": MODES, "d": GRID,
                "rows": (4, 8, 16, 32), "tile": (32, 64)}
    defaults = {"threads": 512, "mode": "designated", "d": 0, "rows": 8, "tile": 32}
    threads = "max(threads, 32 * rows)"
    build_options = ("schedule", "row_schedules")

    def as_run(self, size, params):
        return _tile_as_run(size, params)

    def launch_plan(self, size, dtype, params, case):
        nbar, e = math.isqrt(size), np.dtype(dtype).itemsize
        mode, threads, d = params["mode"], params["threads"], params["d"]
        arrays = {"a": size * e, "out": size * e, "tmp": size * e, **_index_arrays(nbar, ["row1", "col", "row2"], mode)}
        t = (params["rows"], 0, params["tile"])
        return Plan(arrays, (rowwise_launch(dtype, nbar, mode, threads, d, "a", "out", "row1"),
                             transpose_launch(dtype, nbar, *t, "out", "tmp"),
                             rowwise_launch(dtype, nbar, mode, threads, d, "tmp", "out", "col"),
                             transpose_launch(dtype, nbar, *t, "out", "tmp"),
                             rowwise_launch(dtype, nbar, mode, threads, d, "tmp", "out", "row2")))

    def _inputs(self, size, dtype, seed, perm, schedule=None, row_schedules=True) -> Inputs:
        """``schedule``: one coloured already; ``row_schedules``: also each row's conflict-free S_i and D_i (what
        mode conflict-free reads)."""
        cp = cupy()
        nbar = _side(size)
        p = perms.resolve(perm, size, seed)
        sched = schedule or schedules.hmm_schedule(p, 32, xp=cp)      # coloured on the GPU, left there
        itype = schedules.narrowest_index_dtype(nbar)
        arrays = {k: cp.asarray(v) for k, v in sched.arrays(itype).items()}
        arrays["col"] = cp.asarray(sched.col_rows().astype(itype))   # row-wise on the transpose
        if row_schedules:
            for step, rs in sched.row_schedules().items():
                arrays[f"{step}_s"] = cp.asarray(rs.s.astype(itype))
                arrays[f"{step}_d"] = cp.asarray(rs.d.astype(itype))
        a = _random_data(size, dtype, seed)
        arrays.update(a=cp.asarray(a), out=cp.empty(size, dtype_of(dtype)), tmp=cp.empty(size, dtype_of(dtype)))
        return Inputs(size, dtype, seed, arrays, {"perm": perm}, {"a": a, "p": p})


LANE_BYTES = 16     # each lane of the bucketed passes moves one 16-byte chunk of its tile's slots a loop step
LINE_BYTES = 128    # an L2 line: a warp's store goes out as one request for each line it touches


@functools.lru_cache(maxsize=None)
def _run_lengths(perm: str, size: int, tile: int, window: int) -> tuple[np.ndarray, np.ndarray]:
    """(lengths, how many runs of each length) pass 1 writes: a tile's elements bound for one window. A random
    permutation's (or a caller's own) expected: each of a tile's elements falls in one of the windows, a binomial
    count a (tile, window) pair; a named permutation's counted."""
    windows, span = cdiv(size, window), min(tile, size)
    if _unnamed(perm) or perm == "random":
        mean = span / windows
        k = np.arange(1, min(span, int(mean + 12 * math.sqrt(mean) + 12)) + 1)
        runs = cdiv(size, tile) * windows * binom.pmf(k, span, 1 / windows)
        return k[runs > 0], runs[runs > 0]       # one window: every run the whole tile, not span lengths to average
    p = perms.resolve(perm, size, 0)
    _, lengths = np.unique(np.arange(size, dtype=np.int64) // tile * windows + p // window, return_counts=True)
    return tuple(np.unique(lengths, return_counts=True))


def _instructions_touched(lengths: np.ndarray, per_lane: int) -> np.ndarray:
    """Warp store instructions a run of each length takes part in, over the run's start in a warp's chunk of
    32 lanes x ``per_lane`` slots: instruction i stores slot i of each lane's ``per_lane``, so a run's piece in
    one chunk is in min(piece, per_lane) of them."""
    chunk = 32 * per_lane
    k, start = lengths[:, None], np.arange(chunk)[None, :]
    chunks = (start + k - 1) // chunk + 1
    first = np.minimum(k, chunk - start)
    last = np.where(chunks > 1, (start + k - 1) % chunk + 1, 0)
    touched = np.minimum(first, per_lane) + np.minimum(last, per_lane) + np.maximum(chunks - 2, 0) * per_lane
    return touched.mean(axis=1)


@functools.lru_cache(maxsize=None)
def line_requests(perm: str, size: int, tile: int, window: int, itemsize: int) -> float:
    """L2 requests of pass 1's writes to ``mid``. In one store instruction the lanes of one run write 16 bytes apart
    (consecutive slots hold consecutive targets, and a lane's chunk is 16 bytes of slots), so m of them touch
    1 + (m - 1) / 8 lines on average; summed over a run's instructions, (7/8) x instructions + elements / 8. Runs of
    fewer elements than a lane's chunk thus cost a request each element; long runs an eighth of one. (Measured on
    the H200, `bench/results/h200/bucketed_passes/`: pass 1's time follows these requests at the probed L2 scatter
    rate, 66 a ns fitted against 70 probed, where sectors at the rate of their footprint missed by 0.4-1.7x.)"""
    lengths, runs = _run_lengths(perm, size, tile, window)
    per_lane = LANE_BYTES // itemsize
    spread = LANE_BYTES / LINE_BYTES
    return float((1 - spread) * (runs * _instructions_touched(lengths, per_lane)).sum() + spread * size)


def _scattered_wavefronts(span: int, itemsize: int) -> float:
    """Shared wavefronts of one block that writes ``span`` elements at random slots and reads them back in
    order: a warp's scattered writes take the DMM simulator's stages, its 16-byte reads span/32 · e/4."""
    return (span / 32 * permutation_stages(span, 32) + span * itemsize / 128) * max(1, itemsize // 4)


def _schedule_names(tile: int, window: int) -> tuple[str, str, str]:
    """The inputs' names of one (tile, window)'s schedule: pass 1's slots and run targets, pass 2's slots."""
    return f"slot1_t{tile}_w{window}", f"to_t{tile}_w{window}", f"slot2_t{tile}_w{window}"


_SCHEDULE_NAME = re.compile(r"(?:slot1|to|slot2)_t(\d+)_w(\d+)")


class _BucketArrays(dict):
    """The inputs' arrays with the schedule of the (tile, window) a plan names made on the device when first
    named (8 bytes an element). One schedule is held at a time: another configuration's replaces it and
    unbinds the plans bound to it (``programs``, the inputs' bound plans), so that 2^28 elements fit."""

    def __init__(self, arrays: dict, p, programs: dict):
        super().__init__(arrays)
        self.p, self.programs = p, programs

    def __missing__(self, key: str):
        found = _SCHEDULE_NAME.fullmatch(key)
        if not found:
            raise KeyError(key)
        for held in [k for k in self if _SCHEDULE_NAME.fullmatch(k)]:
            del self[held]
        self.programs.clear()
        tile, window = int(found[1]), int(found[2])
        sched = schedules.bucket_schedule(self.p, tile, window, xp=cupy())
        self.update(zip(_schedule_names(tile, window), (sched.slot1, sched.to, sched.slot2)))
        return self[key]


class Bucketed(_Scatter):
    """The bucketed permutation (beyond the seeds; kernels/bucketed_permutation.cu): two passes, each a
    row-wise permutation through shared memory. Pass 1 sorts each tile of ``tile`` elements by destination
    window and writes each window's run to its place in ``mid``; pass 2 permutes each window of ``window``
    elements of ``mid`` into b. The seeds' scheduled permutation needs five passes because each of its
    global writes is whole rows; here pass 1's writes are runs of tile·window/n elements on average.

    Measured on the H100 (random, cold L2, bench/results/h100/bucketed_permutation.json): 2^26 float32 in
    0.773 ms, 4.3 copies (the scheduled permutation 1.18 ms, CuPy's gather 2.26 ms), float64 4.4 copies; the
    runs' ragged ends cost as scattered sector writes, so the largest spans win, and at 2^28 the runs
    shorten to 4 elements: 8.7 copies, 6.2 ms. On the H200: 2^26 float32 5.2 copies (0.668 ms).
    """

    name = "hmm_bucketed_permutation"
    chapter = "hmm_permutation"
    beyond_seeds = True
    sources = ("bucketed_permutation.cu",)
    tunables = {"threads": (256, 512, 1024), "tile": (4096, 8192, 16384, 32768),
                "window": (4096, 8192, 16384, 32768)}
    defaults = {"threads": 512, "tile": 16384, "window": 16384}
    threads = "threads"
    shared = "max(tile, window) * itemsize"

    def model_values(self, size, params, case, limits):
        span = min(params["tile"], size)
        return {"n": size, "T": params["tile"], "W": params["window"], "c": permutation_stages(span, limits.w)}

    def launch_plan(self, size, dtype, params, case):
        """Two launches. Pass 1's writes to ``mid`` are its runs' :func:`line_requests` at the L2's scatter rate:
        a sector at a run's end is finished by the next tile's block, which runs beside it, so the L2 joins the
        runs into whole sectors (reuse: a tile's writes), whose way back to DRAM hides under the requests (pass 1
        measured as its reads plus its requests, whether ``mid`` fits the L2 or not; adding ``mid``'s bytes as
        streamed priced the long runs 1.2-1.5x their time). A warp's writes into shared memory land at random
        slots: the DMM simulator's stages of a random permutation of the tile.

        Until 2026-11-29 each run's ragged ends were priced as partial sectors at the scatter rate of all of
        ``mid``: pass 1 measured 0.4-1.7x that on the H200 (``bench/results/h200/bucketed_passes/``), flat across
        run lengths past the L2 and slower than it below."""
        e, threads, tile, window = np.dtype(dtype).itemsize, params["threads"], params["tile"], params["window"]
        slot1, to, slot2 = _schedule_names(tile, window)
        n = Scalar(size, "int64")
        arrays = {"a": size * e, "mid": size * e, "out": size * e, slot1: 2 * size, to: 4 * size, slot2: 2 * size}
        requests = line_requests(case.get("perm", "random"), size, tile, window, e)
        # a thread's loop waits out each load before the shared store that follows it (the SASS: LDG, then its
        # STS, iteration after iteration, #pragma unroll 4 notwithstanding), and pass 1 again for each `to`; a
        # full tile loads 16 bytes a lane, one smaller than the array takes the scalar path, an element a lane
        tile_loads, window_loads = (cdiv(span, threads * 16 // e) if span <= size else cdiv(size, threads)
                                    for span in (tile, window))
        runs = Launch(f"bucket_runs_{suffix(dtype)}", cdiv(size, tile), threads, dynamic_shared=tile * e,
                      args=(Array("a"), Array(slot1), Array(to), Array("mid"), n,
                            Scalar(tile, "int32")),
                      accesses=(Access("a", size * e), Access(slot1, 2 * size), Access(to, 4 * size),
                                Access("mid", size * e, write=True, casual=True, requests=requests,
                                       reuse=min(tile, size) * e)),
                      rounds=2 * tile_loads, shared_wavefronts=_scattered_wavefronts(min(tile, size), e),
                      shared_rounds=2, source=self.sources[0])
        place = Launch(f"bucket_window_{suffix(dtype)}", cdiv(size, window), threads, dynamic_shared=window * e,
                       args=(Array("mid"), Array(slot2), Array("out"), n, Scalar(window, "int32")),
                       accesses=(Access("mid", size * e), Access(slot2, 2 * size),
                                 Access("out", size * e, write=True)),
                       rounds=window_loads, shared_wavefronts=_scattered_wavefronts(min(window, size), e),
                       shared_rounds=2, source=self.sources[0])
        return Plan(arrays, (runs, place))

    def bind(self, data, dtype, perm="given") -> Inputs:
        cp = cupy()
        n = data["a"].size
        programs: dict = {}
        arrays = _BucketArrays({"a": data["a"], "mid": cp.empty(n, dtype_of(dtype)),
                                "out": cp.empty(n, dtype_of(dtype))}, data["p"], programs)
        return Inputs(n, dtype, 0, arrays, {"perm": perm}, programs=programs)


KERNELS = [Designated("hmm_permutation_d_designated", True), Designated("hmm_permutation_s_designated", False),
           Transpose(), RowWise("hmm_rowwise_permutation", False), RowWise("hmm_columnwise_permutation", True),
           Scheduled(), Bucketed()]
